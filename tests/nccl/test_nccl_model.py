"""NCCL mode reproduces the reference's worked tables (nccl-model.md §5) and NCCL's choices."""

import math

import pytest

from costmodel.nccl import NcclGraph, NcclTopology, cost_table, load_tables, nccl_time
from dpbase.errors import NotApplicableError, UnknownNameError


def _topo(cc: int, bw: float, nvls: NcclGraph | None = None, n_nodes: int = 1, ranks: int = 8) -> NcclTopology:
    ring = NcclGraph(n_channels=12, bw_intra_GBps=bw, bw_inter_GBps=bw)
    tree = NcclGraph(n_channels=12, bw_intra_GBps=bw, bw_inter_GBps=bw, pattern="balanced_tree")
    return NcclTopology(n_ranks=ranks, n_nodes=n_nodes, compute_capability=cc, ring=ring, tree=tree, nvls=nvls)


A100 = _topo(80, 20.0)
H100 = _topo(90, 30.0, nvls=NcclGraph(n_channels=8, bw_intra_GBps=40.0, bw_inter_GBps=60.0, pattern="nvls"))

# (collective, algorithm) -> [(lat, algbw)] for LL, LL128, Simple; reference §5.
A100_TABLE = {
    ("all-reduce", "ring"): [(15.0, 50.1), (40.6, 126.2), (56.0, 137.1)],
    ("all-reduce", "tree"): [(15.2, 29.1), (31.5, 85.9), (64.4, 110.4)],
    ("all-gather", "ring"): [(10.8, 100.2), (27.3, 252.3), (32.2, 274.3)],
    ("reduce-scatter", "ring"): [(10.8, 100.2), (27.3, 252.3), (32.2, 274.3)],
    ("broadcast", "ring"): [(7.2, 87.7), (15.9, 220.8), (11.8, 240.0)],
    ("reduce", "ring"): [(7.2, 87.7), (15.9, 220.8), (11.8, 240.0)],
}
H100_TABLE = {
    ("all-reduce", "ring"): [(15.0, 80.6), (40.6, 189.3), (56.0, 205.7)],
    ("all-reduce", "tree"): [(15.2, 43.6), (31.5, 128.8), (64.4, 165.6)],
    ("all-gather", "ring"): [(10.8, 161.1), (27.3, 378.5), (32.2, 411.4)],
    ("broadcast", "ring"): [(7.2, 141.0), (15.9, 331.2), (11.8, 360.0)],
}


def _cells(collective, topo):
    return {(c.algorithm, c.protocol): c for c in cost_table(collective, topo)}


@pytest.mark.parametrize(("topo", "table"), [(A100, A100_TABLE), (H100, H100_TABLE)], ids=["a100", "h100"])
def test_worked_tables(topo, table):
    for (collective, algorithm), expected in table.items():
        cells = _cells(collective, topo)
        for proto, (lat, bw) in zip(("LL", "LL128", "Simple"), expected):
            cell = cells[(algorithm, proto)]
            assert cell.latency_us == pytest.approx(lat, abs=0.05), (collective, algorithm, proto)
            assert cell.algbw_GBps == pytest.approx(bw, abs=0.05), (collective, algorithm, proto)


def test_h100_nvls_cells():
    assert _cells("all-reduce", H100)[("nvls", "Simple")].algbw_GBps == pytest.approx(272.0, abs=0.05)
    assert _cells("all-reduce", H100)[("nvls", "Simple")].latency_us == pytest.approx(25.0)
    assert _cells("all-gather", H100)[("nvls", "Simple")].algbw_GBps == pytest.approx(208.2, abs=0.06)
    assert not _cells("all-reduce", A100)[("nvls", "Simple")].applicable


def test_selection_and_nccl_own_estimates():
    """Reference §5: A100 Ring/LL to 1 MiB, LL128 4-16 MiB, Simple >= 64 MiB; 1 GiB 7.9 ms."""
    assert [nccl_time("all-reduce", s, A100).protocol for s in (2**20, 4 * 2**20, 16 * 2**20, 64 * 2**20)] == \
        ["LL", "LL128", "LL128", "Simple"]
    big = nccl_time("all-reduce", 2**30, A100)
    assert big.model_time_s == pytest.approx(7.885e-3, rel=1e-3)
    h100 = nccl_time("all-reduce", 2**30, H100)
    assert (h100.algorithm, h100.protocol) == ("nvls", "Simple")
    assert h100.model_time_s == pytest.approx(3.97e-3, rel=2e-3)
    assert nccl_time("all-reduce", 2**20, H100).algorithm == "ring"
    assert nccl_time("all-gather", 2**30, H100).algorithm == "ring"


def test_forced_algorithm_and_protocol():
    forced = nccl_time("all-reduce", 2**30, A100, algorithm="tree", protocol="LL128")
    assert (forced.algorithm, forced.protocol) == ("tree", "LL128")
    with pytest.raises(NotApplicableError):
        nccl_time("all-reduce", 2**30, A100, algorithm="nvls")
    with pytest.raises(UnknownNameError):
        nccl_time("all-reduce", 2**30, A100, algorithm="bogus")


def test_prediction_layer_adds_launch_floor_and_busbw():
    p = nccl_time("all-reduce", 8, A100)
    assert p.time_s > p.model_time_s
    assert p.launch_overhead_s == pytest.approx(1.5e-6)
    big = nccl_time("all-reduce", 2**32, A100)
    assert big.busbw_Bps == pytest.approx(big.algbw_Bps * 2 * 7 / 8)
    assert 200e9 < big.busbw_Bps < 240e9


def test_nccl_own_estimate_when_layer_neutral():
    neutral = load_tables(overrides={"nccl_tests": {"launch_overhead_us": 0.0, "hop_latency_scale": 1.0,
                                                     "efficiency_nvlink": 1.0, "store_and_forward_bytes": 0.0}})
    p = nccl_time("all-reduce", 2**24, A100, neutral)
    assert p.time_s == pytest.approx(p.model_time_s)


def test_multi_node_latency_and_plateau():
    topo = _topo(80, 24.0, n_nodes=2, ranks=16)
    cells = _cells("all-reduce", topo)
    # Ring LL, 2 nodes, Intel CPU: 6.6 + (30 - 2) * max(0.6, net overhead 1.0) + 2 * 2.7
    assert cells[("ring", "LL")].latency_us == pytest.approx(6.6 + 28 * 1.0 + 2 * 2.7)
    small = nccl_time("all-reduce", 64, topo, algorithm="ring", protocol="Simple")
    large = nccl_time("all-reduce", 2**26, topo, algorithm="ring", protocol="Simple")
    assert large.latency_s == pytest.approx(small.latency_s * 1.4)


def test_tree_correction_applies_by_size():
    p = nccl_time("all-reduce", 64 * 2**11, A100, algorithm="tree", protocol="Simple")
    cell = _cells("all-reduce", A100)[("tree", "Simple")]
    assert p.bandwidth_Bps == pytest.approx(cell.algbw_GBps * 1e9 * 0.5)
    assert math.isfinite(p.time_s)


@pytest.mark.parametrize("system,nodes", [("dgx-h100", 1), ("dgx-h100", 4), ("dgx-a100", 2), ("dgx-1", 1),
                                          ("l40s-4x-pcie", 1), ("gb300-nvl72-tray", 2)])
def test_choice_is_the_first_argmin_of_cell_time_us(system, nodes):
    """``choose`` looks each cell's size rules up once per communicator; its answer must stay the
    first minimum of :func:`cell_time_us` over NCCL's cells in index order, at every size."""
    import math

    import hardware
    from costmodel.nccl import load_tables, topology_for
    from costmodel.nccl.selection import cell_time_us, choose, cost_table

    topo, tables = topology_for(hardware.load_system(system), nodes), load_tables()
    sizes = [0.0, 0.5, 63.9, 64.0, 1000.0, 3.3e6] + [2.0**k for k in range(4, 37, 3)] + [2.0**k - 1 for k in range(7, 37, 5)]
    for collective in ("all-reduce", "all-gather", "reduce-scatter", "broadcast"):
        cells = list(cost_table(collective, topo, tables).values())
        for size in sizes:
            times = [cell_time_us(collective, c, size, topo, tables) for c in cells]
            best = min(t for t in times if math.isfinite(t))
            algo, proto, time_us, cell = choose(collective, size, topo, tables)
            assert time_us == best and cell is cells[times.index(best)], (collective, size)
            assert (algo, proto) == (cell.algorithm, cell.protocol)


@pytest.mark.parametrize("cluster", ["dgx-h100", "dgx-a100", "dgx-1"])
def test_a_tiny_call_is_latency_and_launch_alone(cluster):
    """The time's latency part is NCCL's latency as nccl-tests measures it (× hop_latency_scale):
    a 0-byte all-reduce on a DGX H100 showed a 2.25 µs 'bandwidth (β)' part, the scale's share.
    A call of 0 bytes is answered 0 on every path, as NCCL discards an empty collective (the comm
    model's own choice answered its latency: API review, 2026-11-30); one of 8 bytes is latency and
    launch, its bytes' share below a part in a thousand."""
    import costmodel
    from costmodel.nccl import load_tables

    empty = costmodel.comm_model(cluster).choose("all-reduce", 0)
    assert costmodel.predict("all-reduce", 0, cluster=cluster).time_s == 0.0
    assert empty.time_s == empty.latency_s == empty.nccl_model_time_s == costmodel.comm_model(cluster).time_s(
        "all-reduce", 0) == 0.0
    tiny = costmodel.comm_model(cluster).choose("all-reduce", 8)
    # NCCL's own estimate of a tiny call is its latency; nccl-tests measures it scaled
    scale = load_tables().section("nccl_tests")["hop_latency_scale"]
    assert scale != 1.0 and tiny.latency_s == pytest.approx(scale * tiny.nccl_model_time_s, rel=1e-3)
    assert tiny.time_s == pytest.approx(tiny.latency_s + tiny.launch_overhead_s, rel=1e-3)
    big = costmodel.predict("all-reduce", 2**30, cluster=cluster)
    assert big.latency_s + big.bandwidth_s + big.launch_overhead_s == pytest.approx(big.time_s, rel=1e-9)
