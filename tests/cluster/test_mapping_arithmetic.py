"""The ideal cluster mapping reproduces the traffic arithmetic of issue 13, item 2."""

from __future__ import annotations

import pytest

from costmodel.cluster.mapping import all_to_all_rates_Bps, layout, predict_on_cluster, ring_rates_Bps
from hardware import load_system

GB = 1e9


def test_a_two_node_dgx_h100_ring_is_limited_by_the_nics_not_nvlink():
    lay = layout("dgx-h100", 2)
    g = lay.gpus_per_node
    nvlink_per_gpu = lay.intra_Bps                      # 450 GB/s x 0.824 = 370.8 GB/s
    nic_per_gpu = lay.node_network_Bps / g              # 50 GB/s x 0.97 = 48.5 GB/s
    assert nvlink_per_gpu == pytest.approx(370.8 * GB) and nic_per_gpu == pytest.approx(48.5 * GB)
    # per GPU, NVLink carries (G-1)/G of the ring bytes, the NIC 1/G
    seconds_per_byte = {"nvlink": (g - 1) / g / nvlink_per_gpu, "nic": 1 / g / nic_per_gpu}
    assert seconds_per_byte["nic"] > seconds_per_byte["nvlink"]  # 2.58e-12 > 2.36e-12
    intra, network = ring_rates_Bps(lay)
    assert 1 / intra == pytest.approx(seconds_per_byte["nvlink"]) and 1 / network == pytest.approx(seconds_per_byte["nic"])
    p = predict_on_cluster("all-reduce", "ring", lay, size_bytes=1e9)
    assert p.bottleneck == "ib-ndr"
    n = lay.ranks
    expected_bw_s = 2 * (n - 1) / n * 1e9 * seconds_per_byte["nic"]
    assert p.bandwidth_s == pytest.approx(expected_bw_s)


def test_on_a_pcie_node_a_second_node_never_speeds_a_ring_up():
    """A GPU reaches its NIC through the x16 link it reaches its neighbour by, so that link carries
    all of its ring bytes: the ring over two PCIe nodes was credited G/(G-1) of the link (28.7 GB/s
    busbw on 25.2 GB/s links, faster than one node; review, 2026-11-30)."""
    from pathlib import Path

    path = str(Path(__file__).resolve().parents[1] / "data" / "hardware" / "l40s_8x_pcie_4nic.toml")
    one, two = (predict_on_cluster("all-reduce", "ring", layout(path, nodes), size_bytes=2**28) for nodes in (1, 2))
    assert layout(path, 2).system.intra_fabric == "pcie"
    assert ring_rates_Bps(layout(path, 2))[0] == pytest.approx(layout(path, 2).intra_Bps)
    assert two.time_s >= one.time_s and two.busbw_Bps <= layout(path, 1).intra_Bps * 1.0001


def test_one_gpu_per_node_puts_the_whole_ring_on_the_nic():
    lay = layout("dgx-h100", 4, 1)
    intra, network = ring_rates_Bps(lay)
    assert intra == float("inf") and network == pytest.approx(lay.node_network_Bps)


def test_all_to_all_at_two_nodes_sends_half_its_bytes_across():
    lay = layout("dgx-h100", 2)
    n, g = lay.ranks, lay.gpus_per_node
    size = 1e9
    intra_bytes, inter_bytes = (g - 1) / n * size, (n - g) / n * size
    assert inter_bytes / (intra_bytes + inter_bytes) == pytest.approx(8 / 15)  # half the other ranks are remote
    expected_s = max(intra_bytes / lay.intra_Bps, inter_bytes / lay.inter_Bps)
    p = predict_on_cluster("all-to-all", "direct", lay, size_bytes=size)
    assert p.bandwidth_s == pytest.approx(expected_s) and p.bottleneck == "ib-ndr"
    intra, network = all_to_all_rates_Bps(lay)
    assert (n - 1) / n * size / network == pytest.approx(inter_bytes / lay.inter_Bps)
    # charging every byte at the NIC (the old mapping) would be (N-1)/N over N-G)/N slower
    naive = (n - 1) / n * size / lay.inter_Bps
    assert naive / p.bandwidth_s == pytest.approx((n - 1) / (n - g))


def test_nvl72_trays_talk_over_nvlink_not_the_nics():
    lay = layout("gb200-nvl72-tray", 18)  # 72 GPUs, one NVLink domain
    assert lay.one_domain
    for algorithm in ("ring", "double-binary-tree", "in-network"):
        p = predict_on_cluster("all-reduce", algorithm, lay, size_bytes=1e9)
        assert p.bottleneck == lay.system.intra_link.name
    beyond = layout("gb200-nvl72-tray", 36)  # 144 GPUs: two racks, the NICs join them
    assert not beyond.one_domain
    # each rack is one node of 72 GPUs with its 72 NICs (domain_layout, as NCCL mode's MNNVL): a
    # ring's 1 in 72 hops over a NIC leaves the NVLink the bound; a hierarchy's leaders cross the
    # NICs. Until 2026-11-30 the trays met over their own 4 NICs alone, the ring NIC-bound.
    ring = predict_on_cluster("all-reduce", "ring", beyond, size_bytes=1e9)
    assert ring.bottleneck == beyond.system.intra_link.name and (ring.nodes, ring.gpus_per_node) == (36, 4)
    assert ring.time_s >= predict_on_cluster("all-reduce", "ring", lay, size_bytes=1e9).time_s
    hierarchy = predict_on_cluster("all-reduce", "hierarchical", beyond, size_bytes=1e9)
    assert hierarchy.bottleneck == beyond.system.nic_link.name


def test_the_vector_path_follows_the_same_mapping():
    from costmodel.cluster.mapping import times_on_cluster

    lays = [layout("dgx-h100", 2), layout("gb200-nvl72-tray", 18), layout("dgx-a100", 4)]
    for primitive, algorithm in (("all-reduce", "ring"), ("all-to-all", "direct"), ("all-to-all", "pairwise")):
        grid = times_on_cluster(primitive, algorithm, lays, [1e6, 1e9])
        for i, lay in enumerate(lays):
            for j, size in enumerate((1e6, 1e9)):
                assert grid[i, j] == pytest.approx(predict_on_cluster(primitive, algorithm, lay, size_bytes=size).time_s)


def test_sharp_across_nodes_runs_the_node_phases_around_the_switches():
    """In-network reduction by the network's switches (SHARP) in NCCL's CollNet layout: a ring
    reduce-scatter and all-gather inside each DGX A100 over NVLink, and each GPU's n/G reduced by
    the switches over its own NIC. A byte takes the node's 2(G−1) NVLink steps too: more nodes
    never beat one node's fastest (the flat mapping gave 3 µs on two nodes against 22.8 µs on one)."""
    from costmodel.cluster.mapping import times_on_cluster
    from costmodel.collectives.api import predict

    lay = layout("dgx-a100", 2)
    g = lay.gpus_per_node
    p = predict_on_cluster("all-reduce", "in-network", lay, size_bytes=1e9)
    inside = predict("all-reduce", "ring", ranks=g, size_bytes=1e9, alpha_s=lay.intra_alpha_s,
                     bandwidth_Bps=lay.intra_Bps)
    across = predict("all-reduce", "in-network", ranks=lay.ranks, size_bytes=1e9 / g, alpha_s=lay.inter_alpha_s,
                     bandwidth_Bps=min(lay.inter_Bps, lay.intra_Bps))
    # NCCL pipelines the phases chunk by chunk: the latencies add, the slower phase sets the pace
    assert p.time_s == pytest.approx(inside.latency_s + across.latency_s + max(inside.bandwidth_s, across.bandwidth_s))
    assert max(inside.time_s, across.time_s) < p.time_s < inside.time_s + across.time_s
    assert p.steps == inside.steps + across.steps and p.lower_bound_s <= p.time_s
    one_node = min(predict_on_cluster("all-reduce", a, layout("dgx-a100", 1), size_bytes=1).time_s
                   for a in ("ring", "double-binary-tree"))
    for nodes in (2, 4, 16):
        assert predict_on_cluster("all-reduce", "in-network", layout("dgx-a100", nodes), size_bytes=1).time_s >= one_node
    lays = [layout("dgx-a100", n) for n in (2, 4)] + [layout("dgx-a100", 2, 4)]
    grid = times_on_cluster("all-reduce", "in-network", lays, [1.0, 1e6, 1e9])
    for i, each in enumerate(lays):
        for j, size in enumerate((1.0, 1e6, 1e9)):
            assert grid[i, j] == pytest.approx(predict_on_cluster("all-reduce", "in-network", each, size_bytes=size).time_s)


@pytest.mark.parametrize("trays", [19, 27, 37, 40, 54, 73])
def test_nvl72_racks_beyond_one_domain_run_as_domains(trays):
    """An audit (2026-11-30): above 72 GPUs the ideal backend ran the trays as nodes joined by
    their own 4 NICs, about 4x NCCL mode's time for a 1 GiB all-reduce on 19-54 trays. Each NVLink
    domain now runs as one node of its GPUs and NICs (System.nvlink_domains, NCCL mode's rule), the
    vector path too, and the answer names the trays asked for."""
    from costmodel.cluster.mapping import domain_layout, times_on_cluster

    system = load_system("gb200-nvl72-tray")
    lay = layout(system, trays)
    domains, per_domain = system.nvlink_domains(trays)
    seen = domain_layout(lay)
    assert (seen.nodes, seen.gpus_per_node) == (domains, per_domain)
    assert lay.ranks <= seen.ranks < lay.ranks + domains  # even domains: a few ranks more at most
    assert seen.node_network_Bps == pytest.approx(lay.node_network_Bps * per_domain / system.gpus_per_node)
    ring = predict_on_cluster("all-reduce", "ring", lay, size_bytes=2**30)
    one_rack = predict_on_cluster("all-reduce", "ring", layout(system, 18), size_bytes=2**30)
    one_less = predict_on_cluster("all-reduce", "ring", layout(system, trays - 1), size_bytes=2**30)
    assert (ring.ranks, ring.nodes, ring.gpus_per_node) == (trays * 4, trays, 4)
    # NVLink-bound as in one rack, but for the 1 in per_domain hops a NIC carries (a ring may then
    # run a little faster than inside one rack, as two H800 nodes do), plus its latency steps;
    # one tray more moves it a little
    assert (1 - 1 / per_domain) * one_rack.time_s <= ring.time_s <= 1.3 * one_rack.time_s
    assert abs(ring.time_s / one_less.time_s - 1) < 0.1
    assert times_on_cluster("all-reduce", "ring", [lay], [2**30])[0, 0] == pytest.approx(ring.time_s)
