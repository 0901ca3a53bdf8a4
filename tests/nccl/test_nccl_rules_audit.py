"""NCCL 2.30.7's rules that an audit against its source (tag v2.30.7-1, 2026-11-30) found applied
differently or missing: each test fails on the code before it."""

from __future__ import annotations

import pytest

import hardware
from costmodel.nccl import load_tables, nccl_time, topology_for
from costmodel.nccl.terms import cell_terms, comm_channels, tree_factors
from costmodel.nccl.tuning import alg_bw_GBps, tune_collective

T = load_tables()


def _cell(collective, topo, algorithm, protocol):
    return tune_collective(collective, topo, T)[(algorithm, protocol)]


def test_tree_is_corrected_below_bin_23_only_and_nvls_tree_below_24():
    """ncclTopoGetAlgoTime: ``logSize < 23`` for Tree, ``< 24`` for NVLSTree (Blackwell, x86):
    a Tree all-reduce of 512 MiB-1 GiB takes its full bandwidth (it took bin 23's 0.9)."""
    h100 = topology_for(hardware.load_system("dgx-h100"), 2)
    tree = tree_factors(_cell("all-reduce", h100, "tree", "Simple"), h100, T)
    assert len(tree) == 23 and tuple(tree) == tuple(T.tree_correction("Simple")[:23])
    b200 = topology_for(hardware.load_system("dgx-b200"), 2)
    nvls_tree = tree_factors(_cell("all-reduce", b200, "nvls_tree", "Simple"), b200, T)
    assert len(nvls_tree) == 24 == len(T.tree_correction("Simple"))
    # NCCL's own estimate of a forced Tree/Simple all-reduce of 768 MiB: bin 23, no correction
    size = 768 * 2**20
    found = nccl_time("all-reduce", size, h100, T, algorithm="tree")
    cell = _cell("all-reduce", h100, "tree", found.protocol)
    assert found.model_time_s == pytest.approx((cell.latency_us + size / (1000 * cell.algbw_GBps)) * 1e-6)
    assert found.bandwidth_Bps == pytest.approx(cell.algbw_GBps * 1e9)


def test_nvls_beyond_32_local_ranks_runs_all_reduce_only():
    """enqueue.cc: NVLS and NVLSTree skip every collective but all-reduce when localRanks >
    NCCL_MAX_NVLS_ARITY (32): 18 trays of an NVL72 rack are one NVLink domain of 72 GPUs."""
    system = hardware.load_system("gb200-nvl72-tray")
    rack = topology_for(system, 18)
    assert rack.ppn == 72
    for collective in ("all-gather", "reduce-scatter"):
        assert alg_bw_GBps(collective, "nvls", "Simple", rack, T) == 0.0
        for size in (2**10, 2**20, 64 * 2**20, 2**30):
            assert nccl_time(collective, size, rack, T).algorithm not in ("nvls", "nvls_tree")
    assert alg_bw_GBps("all-reduce", "nvls", "Simple", rack, T) > 0.0
    assert alg_bw_GBps("all-gather", "nvls", "Simple", topology_for(system, 8), T) > 0.0  # 32 GPUs: still NVLS


def test_the_plateau_rule_divides_by_the_communicators_channels():
    """tuning.cc's Ring/Simple plateau (``nBytes / (comm->nChannels · nRanks) >= 64``) counts the
    communicator's channels: the ring graph's doubled (connect.cc), doubled again on sm90+ across
    nodes below 16 where the ring's bwIntra exceeds 45 GB/s; the graph's own count was used."""
    topo = topology_for(hardware.load_system("dgx-h100"), 4)
    graph = topo.ring.n_channels
    expected = min(64, 2 * graph)
    if expected < 16 and topo.ring.bw_intra_GBps > 45:
        expected *= 2
    assert comm_channels(topo, T) == expected > graph
    terms = cell_terms("all-reduce", _cell("all-reduce", topo, "ring", "Simple"), topo, T)
    assert terms.plateau_divisor == expected * topo.n_ranks
    v100 = topology_for(hardware.load_system("dgx-1"), 2)  # sm70: no second doubling
    assert comm_channels(v100, T) == min(64, 2 * v100.ring.n_channels)
    # sm90 across nodes below 16 with a fast ring: doubled again (5 of an H20 node's 8 GPUs)
    h20 = topology_for(hardware.load_system("hgx-h20-8x"), 2, 5)
    assert 2 * h20.ring.n_channels < 16 and h20.ring.bw_intra_GBps > 45
    assert comm_channels(h20, T) == 4 * h20.ring.n_channels
    one_node = topology_for(hardware.load_system("hgx-h20-8x"), 1, 5)  # one node: no second doubling
    assert comm_channels(one_node, T) == min(64, 2 * one_node.ring.n_channels)
    # CollNet: half as many again where the chain graph (the tree graph here) is faster inside the node
    sharp = topology_for(hardware.load_system("dgx-a100"), 2, collnet=True)
    assert sharp.tree.bw_intra_GBps > sharp.tree.bw_inter_GBps
    doubled = min(64, 2 * sharp.ring.n_channels)
    assert comm_channels(sharp, T) == min(64, doubled + doubled // 2)
    assert comm_channels(topology_for(hardware.load_system("dgx-a100"), 2), T) == doubled
    # the public plateau factor reads the same count
    from costmodel.nccl.selection import plateau_factor

    cell = _cell("all-reduce", h20, "ring", "Simple")
    size = 64 * h20.n_ranks * (2 * h20.ring.n_channels)  # at the graph's doubled count, below the comm's
    assert plateau_factor("all-reduce", cell, size, h20, T) == 1.0
    assert plateau_factor("all-reduce", cell, 2 * size, h20, T) == T.refinement("ring_plateau_latency_factor_sm80")


@pytest.mark.parametrize("name", ["h200-1x-roce", "dgx-spark", "l40s-tcp-1x"])
def test_one_gpu_a_node_searches_pattern_tree(name):
    """search.cc: a node of one GPU searches pattern TREE, which tuning.cc derates by 0.85."""
    system = hardware.load_system(name)
    topo = topology_for(system, 2)
    assert topo.tree.pattern == "tree"
    assert topology_for(hardware.load_system("dgx-h100"), 2).tree.pattern == "balanced_tree"


def test_one_gpu_a_node_keeps_ll128_on_a_pcie_gpu():
    """tuning.cc enables LL128 where the graph's intra path is at most NVB; a node of one GPU has
    PATH_LOC whatever its GPU's links (it was refused on GB10's PCIe-attached GPU)."""
    spark = topology_for(hardware.load_system("dgx-spark"), 2)
    assert spark.intra_path == "PCI" and spark.ll128_enabled
    assert alg_bw_GBps("all-reduce", "ring", "LL128", spark, T) > 0.0
    assert not topology_for(hardware.load_system("l40s-4x-pcie"), 1).ll128_enabled  # 4 GPUs over PCIe
    assert not topology_for(hardware.load_system("l40s-tcp-1x"), 2).ll128_enabled  # sockets: the NIC is PHB away


@pytest.mark.parametrize("name, direct", [("juwels-booster", False), ("marenostrum5-acc", False), ("dgx-a100", True)])
def test_collnet_direct_needs_an_nvswitch(name, direct):
    """tuning.cc: CollNet Direct is disabled without an NVSwitch; CollNet Chain is not."""
    topo = topology_for(hardware.load_system(name), 2, collnet=True)
    assert (alg_bw_GBps("all-reduce", "collnet_direct", "Simple", topo, T) > 0) is direct
    assert alg_bw_GBps("all-reduce", "collnet_chain", "Simple", topo, T) > 0


def test_collnet_runs_on_at_most_8_gpus_a_node():
    """enqueue.cc (2.30.7): CollNet Direct and Chain skip nodes of more than NCCL_MAX_DIRECT_ARITY + 1
    = 8 GPUs; 2.27.5 held the limit for Direct alone."""
    import dataclasses

    topo = topology_for(hardware.load_system("dgx-a100"), 2, collnet=True)
    sixteen = dataclasses.replace(topo, n_ranks=32)  # 16 GPUs a node, the same graphs
    assert sixteen.ppn == 16 and sixteen.collnet_capable
    for algorithm in ("collnet_direct", "collnet_chain"):
        assert alg_bw_GBps("all-reduce", algorithm, "Simple", topo, T) > 0
        assert alg_bw_GBps("all-reduce", algorithm, "Simple", sixteen, T) == 0.0
    old = load_tables(version="2.27.5")
    assert alg_bw_GBps("all-reduce", "collnet_direct", "Simple", sixteen, old) == 0.0
    assert alg_bw_GBps("all-reduce", "collnet_chain", "Simple", sixteen, old) > 0


# --- the older releases' tables (tags v2.27.5-1, v2.21.5-1) ---------------------------------------
OLD = {version: load_tables(version=version) for version in ("2.27.5", "2.21.5")}


def test_pat_on_2_27_5_starts_at_its_hand_written_8_us_and_2_21_5_has_none():
    """2.27.5's tuning.cc sets PAT's latency to ``8 + log2(nNodes)·interLat/3.5 + nRanks·2.8`` (the
    8 written by hand, zeroed here before); 2.21.5 has no PAT algorithm at all."""
    topo = topology_for(hardware.load_system("h200-1x-roce"), 4)
    new = tune_collective("all-gather", topo, T)[("pat", "Simple")]
    old = tune_collective("all-gather", topo, OLD["2.27.5"])[("pat", "Simple")]
    assert new.algbw_GBps > 0 and old.latency_us == pytest.approx(new.latency_us)
    assert old.latency_us == pytest.approx(8.0 + 2 * OLD["2.27.5"].hw_latency_us("net", "pat", "Simple") / 3.5 + 4 * 2.8)
    assert alg_bw_GBps("all-gather", "pat", "Simple", topo, OLD["2.21.5"]) == 0.0
    assert nccl_time("all-gather", 2**20, topo, OLD["2.21.5"]).algorithm != "pat"


def test_2_27_5_blackwell_caps_are_twice_hoppers_and_it_has_no_nvls_tree_correction():
    t = OLD["2.27.5"]
    for table, hopper in (("per_channel_tree", (38.7, 41.4, 36.0)), ("per_channel_tree_ll128", (36.7, 36.7, 29.0)),
                          ("per_channel_ring_ll128", (36.7, 36.7, 36.7))):
        assert tuple(t.arch_cap_GBps(table, "blackwell", n) for n in (1, 2, 4)) == pytest.approx(
            tuple(2 * x for x in hopper))
    b200 = topology_for(hardware.load_system("dgx-b200"), 2)
    cell = tune_collective("all-reduce", b200, T)[("nvls_tree", "Simple")]
    assert tree_factors(cell, b200, T) is not None
    for old in OLD.values():
        assert tree_factors(cell, b200, old) is None


def test_2_21_5_latencies():
    """2.21.5: Tree/Simple's base latency is 0, and with one GPU a node each algorithm crosses the
    network at its own NET row (2.22+ reads Tree's)."""
    t = OLD["2.21.5"]
    assert t.base_latency_us("tree", "Simple") == 0.0 and t.base_latency_us("tree", "LL") == 6.8
    from costmodel.nccl.latency import inter_latency_us

    topo = topology_for(hardware.load_system("h200-1x-roce"), 2)
    assert inter_latency_us("ring", "Simple", topo, t) == pytest.approx(t.hw_latency_us("net", "ring", "Simple"))
    assert inter_latency_us("ring", "Simple", topo, T) == pytest.approx(T.hw_latency_us("net", "tree", "Simple"))


def test_2_21_5_has_no_blackwell_row():
    """2.21.5's compCapIndex is ``minCompCap >= 90 ? HOPPER``: an sm100 GPU takes Hopper's caps."""
    t = OLD["2.21.5"]
    for table in ("ll_max", "per_channel_ring_ll128", "per_channel_tree_ll128", "per_channel_tree"):
        for nodes in (1, 2, 4):
            assert t.arch_cap_GBps(table, "blackwell", nodes) == t.arch_cap_GBps(table, "hopper", nodes)


def test_2_21_5_enables_ll128_on_sm70_80_90_only():
    b200 = topology_for(hardware.load_system("dgx-b200"), 1)
    assert alg_bw_GBps("all-reduce", "ring", "LL128", b200, T) > 0
    assert alg_bw_GBps("all-reduce", "ring", "LL128", b200, OLD["2.21.5"]) == 0.0
    a100 = topology_for(hardware.load_system("dgx-a100"), 1)
    assert alg_bw_GBps("all-reduce", "ring", "LL128", a100, OLD["2.21.5"]) > 0


def test_2_21_5_nvls_all_gather_is_timed_as_its_all_reduce():
    """2.21.5: NVLS bandwidth is min(bwIntra, bwInter) for every collective, × 5/6 to algorithm
    bandwidth (2.27.3+ gave all-gather and reduce-scatter their own formula)."""
    topo = topology_for(hardware.load_system("dgx-h100"), 1)
    t = OLD["2.21.5"]
    graph = topo.nvls
    expected = graph.n_channels * min(graph.bw_intra_GBps, graph.bw_inter_GBps) * 5 / 6
    for collective in ("all-gather", "reduce-scatter", "all-reduce"):
        assert alg_bw_GBps(collective, "nvls", "Simple", topo, t) == pytest.approx(expected)
    assert alg_bw_GBps("all-gather", "nvls", "Simple", topo, OLD["2.27.5"]) != pytest.approx(expected)
