"""Graph search from hardware profiles: NCCL's observed channel counts and bandwidths."""

import pytest

from costmodel.nccl import NcclGraph, NcclTopology, load_tables, topology_for
from costmodel.nccl.search import dup_channels, ladder_search
from dpbase.errors import InputError, NotApplicableError
from hardware import load_system


@pytest.mark.parametrize(("system", "channels", "bw", "path"), [
    ("dgx-a100", 12, 20.0, "NVLINK"),   # reference §2.5: A100 ring 12 ch x 20
    ("dgx-h100", 12, 30.0, "NVLINK"),   # H100 6 x 60, duplicated to 12 x 30
    ("dgx-1", 6, 20.0, "NVLINK"),
    ("l40s-4x-pcie", 1, 20.0, "PCI"),          # SHM through an Intel host bridge: 24 / 1.2
    ("rtx2080ti-2x-pcie", 1, 5.0, "PCI"),      # SHM, both GPUs behind one Gen3 switch: 12 / (2 x 1.2)
    ("rtx4090-8x-pcie", 2, 12.0, "PCI"),       # SHM on an AMD host: no host-bridge charge
])
def test_single_node_graphs(system, channels, bw, path):
    topo = topology_for(load_system(system))
    assert (topo.n_channels, topo.bw_intra_GBps, topo.intra_path) == (channels, bw, path)


def test_h100_nvls_graph_and_a100_none():
    h100 = topology_for(load_system("dgx-h100"))
    assert (h100.nvls.n_channels, h100.nvls.bw_intra_GBps, h100.nvls.bw_inter_GBps) == (8, pytest.approx(40.0), 60.0)
    assert h100.nvls_capable and not topology_for(load_system("dgx-a100")).nvls_capable


def test_multi_node_ring_uses_nics():
    topo = topology_for(load_system("dgx-a100"), nodes=2)
    assert (topo.n_nodes, topo.n_ranks, topo.n_channels, topo.bw_inter_GBps) == (2, 16, 8, 24.0)  # 8 x 24 = 192


def test_ladder_and_dup_rules():
    t = load_tables()
    assert ladder_search(370.8, 370.8, (60.0, 50.0, 40.0, 30.0), 16, t) == (6, 60.0)
    assert dup_channels(6, 60.0, 90, t) == (12, 30.0)
    assert dup_channels(8, 48.0, 90, t) == (8, 48.0)   # sm>80, bw<50, >4 channels: no dup
    assert dup_channels(2, 20.0, 80, t) == (2, 20.0)   # bw < 25


def test_dup_stops_at_the_ring_graph_s_maximum():
    """search.cc ncclTopoDupChannels: min(2n, maxChannels) channels at bw / DIVUP(new, n); the ring
    graph's maximum is MAXCHANNELS / 2 (init.cc): 32 since 2.25, 16 in 2.21.5 (MAXCHANNELS 32)."""
    t, old = load_tables(), load_tables(version="2.21.5")
    assert t.section("search_speeds_GBps")["max_channels"] == 32
    assert old.section("search_speeds_GBps")["max_channels"] == 16
    assert dup_channels(16, 30.0, 80, t) == (32, 15.0)
    assert dup_channels(20, 30.0, 80, t) == (32, 15.0)  # 32 channels at half speed (before NCCL's pass 2)
    assert dup_channels(32, 30.0, 80, t) == (32, 30.0)  # at the maximum: nothing to duplicate
    assert dup_channels(16, 30.0, 80, old) == (16, 30.0)
    assert dup_channels(12, 30.0, 80, old) == (16, 15.0)


def test_bad_layout_and_amd():
    with pytest.raises(InputError, match="gpus_per_node"):
        topology_for(load_system("dgx-a100"), 1, 9)
    with pytest.raises(NotApplicableError, match="RCCL"):
        topology_for(load_system("mi300x-8x"))


def test_topology_validation():
    ring = NcclGraph(n_channels=2, bw_intra_GBps=12.0, bw_inter_GBps=12.0)
    with pytest.raises(InputError, match="intra_path"):
        NcclTopology(n_ranks=4, n_nodes=1, compute_capability=80, ring=ring, tree=ring, intra_path="XGMI")
    with pytest.raises(InputError, match="n_nodes"):
        NcclTopology(n_ranks=6, n_nodes=4, compute_capability=80, ring=ring, tree=ring)
    with pytest.raises(InputError, match="n_channels"):
        NcclGraph(n_channels=0, bw_intra_GBps=1.0, bw_inter_GBps=1.0)
    pci = NcclTopology(n_ranks=4, n_nodes=1, compute_capability=89, ring=ring, tree=ring, intra_path="PCI")
    assert not pci.ll128_enabled


@pytest.mark.parametrize("rail_optimized", [False, True])
def test_the_fabrics_oversubscription_slows_nccl_across_nodes_as_it_does_alpha_beta(rail_optimized):
    """A field the NCCL backend ignored: an oversubscribed spine halves what crosses it (the
    alpha-beta model divided by it already); rail-optimised NICs stay under their leaf (both
    ignore it), and one node never crosses the network."""
    import dataclasses

    from costmodel.cluster.comm import comm_model

    base = dataclasses.replace(load_system("dgx-h100"), rail_optimized=rail_optimized)
    spine = dataclasses.replace(base, oversubscription=2.0)
    for backend in ("nccl", "ideal"):
        times = [comm_model(system, 4, backend=backend).time_s("all-reduce", 2**30) for system in (base, spine)]
        if rail_optimized:
            assert times[1] == times[0], backend
        elif backend == "ideal":
            assert times[1] / times[0] == pytest.approx(2.0, rel=0.03)
        else:  # NCCL's channels push 48 of the NICs' 50 GB/s; the spine carries 25: x1.92 on the bandwidth part
            assert 1.8 <= times[1] / times[0] <= 2.0
        one = [comm_model(system, 1, backend=backend).time_s("all-reduce", 2**30) for system in (base, spine)]
        assert one[0] == one[1]
    assert spine.spine_oversubscription == (1.0 if rail_optimized else 2.0)


def test_the_spine_slows_only_the_rate_the_ring_pushes_beyond_it():
    """The share is the spine's capacity over what the ring's channels push through the NICs, at
    most 1: a ring that pushes less than the oversubscribed fabric carries is not slowed."""
    import dataclasses

    from costmodel.nccl.search import _spine_share

    spine = dataclasses.replace(load_system("dgx-h100"), rail_optimized=False, oversubscription=2.0)
    nccl_ring = NcclGraph(n_channels=8, bw_intra_GBps=48.0, bw_inter_GBps=48.0)  # its NICs' 8 x 48 GB/s
    assert _spine_share(spine, 4, 8, nccl_ring) == pytest.approx(8 * 50 / 2 / (8 * 48))
    slow_ring = NcclGraph(n_channels=2, bw_intra_GBps=10.0, bw_inter_GBps=10.0)  # 20 of the spine's 200 GB/s
    assert _spine_share(spine, 4, 8, slow_ring) == 1.0
    assert _spine_share(spine, 1, 8, nccl_ring) == 1.0  # one node crosses no spine
