"""The seeds' worked numbers (MISSION §6), reproduced through `dpcost collective … --json`."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import costmodel
from cli import app

runner = CliRunner()


def query(*args: str) -> dict:
    result = runner.invoke(app, ["collective", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_parameter_server_1b_fp32_each_worker_sends_and_receives_4gb():
    """seed 000: 1B fp32 parameters → 4 GB out and 4 GB back per worker per iteration (8 GB)."""
    p = query("all-reduce", "--algorithm", "parameter-server", "--ranks", "8", "--size", "4GB",
              "--alpha", "0s", "--bandwidth", "10GB/s")
    assert p["bytes_sent_max"] == 4e9 and p["bytes_received_max"] == 4e9
    assert p["bytes_sent_max"] + p["bytes_received_max"] == 8e9
    assert p["bytes_aux_max"] == 8 * 4e9  # the single server carries N-fold traffic


def test_ring_allreduce_8_gpus_4gb_sends_7gb_each():
    """seed 004: 2·7/8·4 GB = 7 GB per GPU, in 2(N−1) = 14 steps."""
    p = query("all-reduce", "--algorithm", "ring", "--ranks", "8", "--size", "4GB", "--alpha", "1us",
              "--bandwidth", "25GB/s")
    assert p["bytes_sent_max"] == pytest.approx(7e9) and p["bytes_received_max"] == pytest.approx(7e9)
    assert p["steps"] == 14


def test_allgather_8_gpus_1gb_each_receives_7gb_56gb_total():
    """seed 004: each GPU receives 7 GB; 8·7 = 56 GB cross the links (n = the 8 GB gathered buffer)."""
    p = query("all-gather", "--algorithm", "ring", "--ranks", "8", "--size", "8GB", "--alpha", "0s",
              "--bandwidth", "25GB/s")
    assert p["bytes_received_max"] == pytest.approx(7e9)
    assert p["bytes_total"] == pytest.approx(56e9)


@pytest.mark.parametrize(("ranks", "seconds"), [(2, 1.2), (10, 10.8)])
def test_one_reducer_over_1gbps_adds_1_2s_and_10_8s(ranks, seconds):
    """seed 002: 300M fp32 params (1.2 GB), one rank reducing for all, 1 GB/s network."""
    p = query("all-reduce", "--algorithm", "parameter-server", "--colocated", "--servers", "1",
              "--ranks", str(ranks), "--size", "1.2GB", "--alpha", "0s", "--bandwidth", "1GB/s")
    assert p["time_s"] == pytest.approx(seconds, rel=1e-6)


def test_naive_all_to_all_exchange_moves_n_times_n_minus_1_buffers():
    """seed 000: one-to-one exchange of full gradients is N(N−1) transfers of the whole buffer."""
    p = query("all-reduce", "--algorithm", "direct", "--ranks", "8", "--size", "4GB", "--alpha", "0s",
              "--bandwidth", "10GB/s")
    assert p["bytes_total"] == pytest.approx(8 * 7 * 4e9)
    pairs = 8 * 7 // 2  # the note's N(N−1)/2: pairs of GPUs, each exchanging both ways
    assert p["bytes_total"] == pytest.approx(pairs * 2 * 4e9)
    assert p["bytes_sent_max"] == p["bytes_received_max"] == pytest.approx(7 * 4e9)


def test_a_dedicated_reducer_receives_all_n_gradients():
    """seed 002's reducer is a CPU: on a machine of its own it receives all N gradients (N·1.2 s:
    2.4 s and 12 s), where the note's (N−1)·1.2 s counts it among the N ranks (--colocated)."""
    for ranks, seconds in ((2, 2.4), (10, 12.0)):
        p = query("all-reduce", "--algorithm", "parameter-server", "--servers", "1", "--ranks", str(ranks),
                  "--size", "1.2GB", "--alpha", "0s", "--bandwidth", "1GB/s")
        assert p["time_s"] == pytest.approx(seconds, rel=1e-6)


def test_ring_linear_steps_versus_tree_log_steps_same_bandwidth_term():
    """seed 000: ring needs 2(N−1) steps; the double binary tree's latency grows with log2 N at
    (about) the same bandwidth term."""
    ring = [query("all-reduce", "--algorithm", "ring", "--ranks", str(N), "--size", "1GB", "--alpha", "1us",
                  "--bandwidth", "25GB/s") for N in (16, 256)]
    tree = [query("all-reduce", "--algorithm", "double-binary-tree", "--ranks", str(N), "--size", "1GB",
                  "--alpha", "1us", "--bandwidth", "25GB/s", "--chunks", "1") for N in (16, 256)]
    assert [p["steps"] for p in ring] == [30, 510]
    assert tree[1]["steps"] - tree[0]["steps"] == 4 * 4  # log2: 16 → 256 adds 4 levels (2 msgs × up+down)
    pipelined = query("all-reduce", "--algorithm", "double-binary-tree", "--ranks", "256", "--size", "1GB",
                      "--alpha", "0s", "--bandwidth", "25GB/s")
    assert pipelined["bandwidth_s"] == pytest.approx(ring[1]["bandwidth_s"], rel=0.01)


def test_accumulation_divides_sync_cost_per_sample():
    """seed 003: k accumulation steps → one all-reduce per k micro-batches: sync cost per sample / k.

    Checked on the iteration model's own output (not on arithmetic done in the test)."""
    def iteration(accum: int) -> dict:
        result = runner.invoke(app, ["iteration", "--model", "gpt2-xl", "--cluster", "dgx-a100", "--nodes", "2",
                                     "--micro-batch", "4", "--seq-len", "1024", "--accum", str(accum), "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    one, four, sixteen = iteration(1), iteration(4), iteration(16)
    assert one["comm_s"] == pytest.approx(four["comm_s"]) == pytest.approx(sixteen["comm_s"])  # one sync per step
    assert four["sync_s_per_sample"] == pytest.approx(one["sync_s_per_sample"] / 4)
    assert sixteen["sync_s_per_sample"] == pytest.approx(one["sync_s_per_sample"] / 16)
    assert sixteen["exposed_comm_s"] / sixteen["total_s"] < one["exposed_comm_s"] / one["total_s"] + 1e-12


def test_seed_000_hierarchy_reduces_inside_the_machine_then_rings_across():
    """seed 000: "reduce inside the machine, then ring all-reduce between machines" (--leaders):
    16 ranks as 2 nodes of 8, NVLink-like 100 GB/s inside, 10 GB/s across, α = 0. The leaders
    form moves 4·7/8 GB inside (a reduce and a broadcast, 35 ms) and the whole 1 GB twice·½
    across (100 ms); the rails form 2·7/8 GB inside (17.5 ms) and 1/8 of it across (12.5 ms)."""
    base = ("all-reduce", "--algorithm", "hierarchical", "--ranks", "16", "--gpus-per-node", "8", "--size", "1GB",
            "--alpha", "0s", "--bandwidth", "100GB/s", "--alpha-inter", "0s", "--bandwidth-inter", "10GB/s")
    leaders, rails = query(*base, "--leaders"), query(*base)
    assert leaders["time_s"] == pytest.approx(0.035 + 0.100)
    assert rails["time_s"] == pytest.approx(0.0175 + 0.0125)
    assert leaders["steps"] == 4 * 7 + 2 and rails["steps"] == 2 * 7 + 2  # inside, then 2(M−1) across


def test_leaders_drive_the_nics_one_gpu_reaches():
    """On a cluster the leader's inter-node ring runs over the NICs one GPU reaches: on DGX H100
    (a NIC per GPU) the same rate as each rail, with 8 times the bytes; so the leaders form is
    slower, and with one GPU per node the two forms are the same ring."""
    import costmodel

    rails = costmodel.predict("all-reduce", "1GB", "hierarchical", cluster="dgx-h100", nodes=2, backend="ideal")
    leaders = costmodel.predict("all-reduce", "1GB", "hierarchical", cluster="dgx-h100", nodes=2, backend="ideal",
                                leaders=True)
    assert leaders.time_s > 3 * rails.time_s
    one = [costmodel.predict("all-reduce", "1GB", "hierarchical", cluster="l40s-tcp-1x", nodes=4, backend="ideal",
                             leaders=flag).time_s for flag in (False, True)]
    assert one[0] == pytest.approx(one[1])


@pytest.mark.parametrize("N", [2, 4, 5, 6, 7, 8, 16, 33, 64])
def test_double_binary_tree_each_rank_is_a_leaf_in_one_tree(N):
    """seed 000: with two trees "each card is a leaf in one tree or the other", so across both it
    has (at most) two neighbours below and each tree carries half the data. The schedule's
    trees (the second mirrors the first): for even N every rank is a leaf in exactly one; for
    odd N each tree has (N + 1)/2 leaves, N + 1 in all, so exactly one rank is a leaf in both
    (no pair of N-node binary trees does better), and none is inside both."""
    from costmodel.collectives.schedules.trees import heap_tree

    trees = [heap_tree(list(range(N)))[0], heap_tree(list(range(N - 1, -1, -1)))[0]]
    inner = [set(parent.values()) for parent in trees]
    leaves = [set(range(N)) - ranks for ranks in inner]
    assert not inner[0] & inner[1]
    assert len(leaves[0] & leaves[1]) == N % 2
    assert leaves[0] | leaves[1] == set(range(N))
    children = [sum(1 for parent in trees for child, up in parent.items() if up == r) for r in range(N)]
    assert max(children) <= 2


@pytest.mark.parametrize("system", ["dgx-1", "dgx-h100", "rtx4090-8x-pcie"])
def test_the_leader_drives_the_nics_one_gpu_reaches(system):
    """With fewer NICs than GPUs (DGX-1: 4 for 8) the leader still reaches one whole NIC, where
    each rail gets half of one; a node with one NIC gives the leader all of it."""
    import costmodel
    from costmodel.cluster.mapping import layout
    lay = layout(system, 2)
    leader_Bps = lay.leader_Bps
    nic_Bps = lay.system.achievable_node_network_Bps / lay.system.nics_per_node
    assert leader_Bps == pytest.approx(nic_Bps)  # one NIC, whatever the node's count
    p = costmodel.predict("all-reduce", "1GB", "hierarchical", cluster=system, nodes=2, backend="ideal", leaders=True)
    rails = costmodel.predict("all-reduce", "1GB", "hierarchical", cluster=system, nodes=2, backend="ideal")
    inter_s = 2 * (2 - 1) / 2 * 1e9 / leader_Bps  # the leaders' ring over 2 nodes on all 1 GB
    assert p.bandwidth_s == pytest.approx(inter_s + 4 * (lay.gpus_per_node - 1) / lay.gpus_per_node * 1e9 / lay.intra_Bps)
    assert p.time_s > rails.time_s


def test_formula_prints_the_form_a_flag_selects(cli_error):
    """`dpcost formula` takes the flags that select another form of a formula, as `collective`
    does: the leaders' hierarchy moves all n bytes across nodes (2·beta_inter·n leading)."""
    result = runner.invoke(app, ["formula", "all-reduce", "hierarchical", "--leaders", "--json"])
    assert result.exit_code == 0, result.output
    leaders = json.loads(result.stdout)
    rails = json.loads(runner.invoke(app, ["formula", "all-reduce", "hierarchical", "--json"]).stdout)
    assert "2*beta_inter*n" in leaders["time"].replace(" ", "") and leaders["time"] != rails["time"]
    assert "a parameter of ring all-reduce" in cli_error(["formula", "all-reduce", "ring", "--leaders"])
    assert "with a named algorithm" in cli_error(["formula", "all-reduce", "--leaders"])
    assert "algorithm: got ''" in cli_error(["formula", "all-reduce", ""])


def test_the_python_formula_refuses_a_form_the_algorithm_lacks():
    """costmodel.formula('all-reduce', 'ring', leaders=True) printed ring's own formula."""
    import costmodel
    from dpbase.errors import InputError

    with pytest.raises(InputError, match=r"^leaders: got True; allowed: a parameter of ring all-reduce"):
        costmodel.formula("all-reduce", "ring", leaders=True)


@pytest.mark.parametrize("ranks", [2, 5, 8, 13])
def test_seed_002_all_gather_is_a_gather_then_a_broadcast(ranks):
    """Seed 002: "All Gather相当于一个Gather操作之后跟着一个Bcast操作" — the gather-broadcast
    all-gather costs exactly a binomial gather of the n-byte buffer plus a binomial broadcast of it,
    term by term, and moves every block to every rank (its executed schedule checks the values)."""
    from costmodel.collectives.schedules import execute
    from costmodel.names import Algorithm, Primitive

    link = {"alpha_s": 5e-6, "bandwidth_Bps": 25e9}
    both = costmodel.predict("all-gather", 4e9, "gather-broadcast", ranks=ranks, **link)
    gather = costmodel.predict("gather", 4e9, "binomial", ranks=ranks, **link)
    broadcast = costmodel.predict("broadcast", 4e9, "binomial", ranks=ranks, **link)
    assert both.time_s == pytest.approx(gather.time_s + broadcast.time_s, rel=1e-12)
    assert both.steps == gather.steps + broadcast.steps
    assert both.bytes_total == pytest.approx(gather.bytes_total + broadcast.bytes_total)
    assert execute(Primitive.ALL_GATHER, Algorithm.GATHER_BROADCAST, ranks, ranks * 8, {}).correct


def test_seed_002_reduce_scatter_worked_example_with_its_values():
    """Four cards each holding the 4x1 tensor [0, 1, 2, 3]: the sum is [0, 4, 8, 12], card 0 gets
    [0.0] and card 1 [4.0] (seed 002), on every reduce-scatter algorithm."""
    for algorithm in costmodel.algorithms_for("reduce-scatter"):
        out = costmodel.run_schedule("reduce-scatter", algorithm, [[0, 1, 2, 3]] * 4)
        assert out.correct and out.outputs == ((0.0,), (4.0,), (8.0,), (12.0,)), algorithm


@pytest.mark.parametrize("ranks", [2, 3, 5, 8])
def test_every_schedule_runs_on_a_users_numbers(ranks):
    from costmodel.collectives.registry import entries
    from costmodel.collectives.schedules import whole_blocks

    for entry in entries():
        params = {"gpus_per_node": 1} if entry.hierarchical else {}
        length = 2 * whole_blocks(ranks, params)  # the buffer; a gather's input is one rank's block of it
        per_rank = length // ranks if entry.primitive.value in ("gather", "all-gather") else length
        inputs = [[float(10 * r + i) for i in range(per_rank)] for r in range(ranks)]
        out = costmodel.run_schedule(entry.primitive.value, entry.algorithm.value, inputs, **params)
        assert out.correct and out.outputs == out.expected, (entry.primitive.value, entry.algorithm.value)


def test_seed_001_ring_runs_block_for_block_as_its_figures_draw():
    """Seed 001, five GPUs and blocks a-e: GPU0 first sends a and receives e; at the end of the
    reduce-scatter GPU4 holds the whole a and GPU0 the whole b. The schedule chart draws this run."""
    from costmodel.plots.trace import record

    trace = record("all-reduce", "ring", 5, {})
    block = trace.cells // 5
    first = {(m.src, m.dst): m.cells[0] // block for m in trace.steps[0].messages}
    assert first[(0, 1)] == 0 and first[(4, 0)] == 4  # a out of GPU0, e into it
    last_scatter = {(m.src, m.dst): m.cells[0] // block for m in trace.steps[3].messages}
    assert last_scatter[(3, 4)] == 0 and last_scatter[(4, 0)] == 1  # GPU4 completes a, GPU0 completes b
