"""RCCL 2.21.5's rules that an audit against its source (0cbce2a7, 2026-11-30) found applied
differently: rooted rings on a node of one of RCCL's topology models, and LL's bytes on the wire."""

from __future__ import annotations

import pytest

from costmodel.cluster import mapping as cluster
from costmodel.cluster.backends import predict_collective
from costmodel.cluster.rccl_choice import msccl, on_the_wire, pick, rccl_topology, wire_excess_s
from costmodel.nccl.rccl import latency_us, n_steps, rccl_tables

MIB = 2**20


@pytest.mark.parametrize("nodes", [1, 2])
@pytest.mark.parametrize("collective", ["broadcast", "reduce"])
def test_rooted_rings_charge_one_hop_where_the_channels_are_the_same(collective, nodes):
    """tuning.cc: broadcast and reduce rings add one hop latency where ``graph->sameChannels``
    (set by search.cc before a topology-model match, which never clears it), else one per step
    (Simple at the tree's): an MI300X node matches rome_model_79/81, an MI355X node none."""
    mi300x = rccl_topology(cluster.layout("mi300x-8x", nodes))
    assert mi300x.same_channels
    model = rccl_tables()["models"][str(mi300x.tuning)]
    hw = "nvlink" if nodes == 1 else "net"  # RCCL files xGMI links under NCCL_HW_NVLINK
    for index, proto in enumerate(("LL", "LL128", "Simple")):
        base = rccl_tables()["base_latency_us"]["ring"][index]
        assert latency_us(collective, "ring", proto, mi300x) == pytest.approx(
            base + model["hw_latency_us"][hw]["ring"][index])
    assert rccl_topology(cluster.layout("mi300x-8x", 2, 8)).same_channels
    from costmodel.nccl.rccl import topology_rule

    assert topology_rule("mi300x", 8, 4)["matched"] and topology_rule("mi300x", 8, 4)["tuning"] == 0  # rome_model_87
    mi355x = rccl_topology(cluster.layout("mi355x-8x", nodes))
    assert not mi355x.same_channels
    model = rccl_tables()["models"][str(mi355x.tuning)]
    steps = n_steps(collective, mi355x.n_ranks)
    assert latency_us(collective, "ring", "Simple", mi355x) == pytest.approx(
        rccl_tables()["base_latency_us"]["ring"][2] + steps * model["hw_latency_us"][hw]["tree"][2])


def test_one_mi300x_node_broadcasts_half_a_mebibyte_with_simple():
    """With one hop, not seven, Simple's latency stops hiding its bandwidth: RCCL's choice for a
    512 KiB broadcast on one MI300X node is ring/Simple (it was LL, as every size below 4 MiB)."""
    lay = cluster.layout("mi300x-8x", 1)
    assert pick("broadcast", 512 * 1024, lay).protocol == "Simple"
    assert pick("broadcast", 1024, lay).protocol == "LL"


def test_an_ll_pick_moves_twice_its_bytes():
    """RCCL's LL lines carry 8 data bytes in 16 (device.h): the α-β bandwidth term doubles, as
    MSCCL's LL schedules were already timed; the planner's path answers the same."""
    lay = cluster.layout("mi300x-8x", 2)
    size = 1 * MIB
    choice = pick("all-reduce", size, lay)
    assert choice.protocol == "LL" and msccl("all-reduce", size, lay) is None
    p = predict_collective("all-reduce", size, lay)[0]
    ab = cluster.predict_on_cluster("all-reduce", p.algorithm, lay, size_bytes=size)
    assert p.time_s == pytest.approx(ab.time_s + ab.bandwidth_s)
    assert p.bandwidth_s == pytest.approx(2 * ab.bandwidth_s)
    assert p.algbw_Bps == pytest.approx(size / p.time_s)
    assert p.busbw_Bps == pytest.approx(ab.busbw_Bps * ab.time_s / p.time_s)
    assert wire_excess_s(1.0, "Simple") == 0.0 and on_the_wire(ab, "Simple") is ab
    # RCCL's LL128 line is 64 bytes, 7 of its 8 words data (device.h NCCL_LL128_LINESIZE 64,
    # NCCL_LL128_DATAELEMS = LINEELEMS - 1): NCCL's 128/120 would be 1/15 more, not 1/7
    assert wire_excess_s(1.0, "LL128") == pytest.approx(1 / 7)
    ll128 = on_the_wire(ab, "LL128")
    assert ll128.time_s == pytest.approx(ab.time_s + ab.bandwidth_s / 7) and ll128.bandwidth_s == pytest.approx(
        8 / 7 * ab.bandwidth_s)
    from costmodel.planner.comm import CommCache

    cache = CommCache(lay.system, "rccl")
    assert cache.function(2, 8, "auto")("all-reduce", size) == pytest.approx(p.time_s, rel=1e-12)
    batch = cache.batch([(2, 8)], "auto")  # the planner's table path answers the same
    assert batch("all-reduce", [[float(size)]])[0, 0, 0] == pytest.approx(p.time_s, rel=1e-12)
