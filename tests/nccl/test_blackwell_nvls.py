"""NVLS on NVLink domains: NCCL's own search rule for bwIntra/bwInter (search.cc), and the
one-node rule of the nccl-tests layer, checked on Blackwell measurements outside the validation
set (nothing in the model was fitted to them)."""

from __future__ import annotations

import pytest

import hardware
from costmodel.nccl import load_tables, nccl_time, topology_for
from costmodel.nccl.search import intra_gpu_bandwidth, ladder, nvls_speeds
from costmodel.nccl.terms import nvls_one_node_gain
from costmodel.nccl.tuning import CostCell

T = load_tables()
SIZE = 8 * 2**30


def _speeds(system: str, nodes: int = 1, gpus_per_node: int | None = None) -> tuple[float, float]:
    """The NVLS graph's speeds as the topology builds them (its heads: the GPUs, at most NCCL's
    channel limit)."""
    graph = topology_for(hardware.load_system(system), nodes, gpus_per_node, tables=T).nvls
    return graph.bw_intra_GBps, graph.bw_inter_GBps


def test_the_search_rule_gives_nccl_s_own_h100_graph_and_blackwell_s():
    """(heads + 1) × bwIntra within one GPU's NVLink total, bwInter raised to at most 2 × bwIntra:
    H100 × 8 (370.8 GB/s) is NCCL's dumped 40 / 60 (NVIDIA/nccl#1197); NVLink5 (18 × 40.1 =
    721.8 GB/s, NVIDIA/nccl#1807's maxBw) 80 / 90 with 8 heads, 40 / 80 with 16 and 20 / 40 with
    NCCL_MAX_NVLS_ARITY's 32 (an NVL72 domain: 33 × 20 = 660 fits, 33 × 24 does not); H100 × 4
    60 / 60 (the ladder's top)."""
    assert _speeds("dgx-h100") == (40.0, 60.0)
    assert _speeds("dgx-h100", gpus_per_node=4) == (60.0, 60.0)
    assert _speeds("dgx-b200") == (80.0, 90.0)
    assert _speeds("gb200-nvl72-tray", nodes=18) == (20.0, 40.0)  # one NVLink domain of 72: 32 heads
    gb200 = hardware.load_system("gb200-nvl72-tray")
    _, total, _ = intra_gpu_bandwidth(gb200, T)  # the rule itself, on the GPU's own total and ladder
    assert nvls_speeds(total, 16, ladder(gb200.gpu.compute_capability, "intra", T)) == (40.0, 80.0)
    assert nvls_speeds(total, 32, ladder(gb200.gpu.compute_capability, "intra", T)) == (20.0, 40.0)
    assert nvls_speeds(721.8, 8, (90.0, 80.0, 70.0)) == (80.0, 90.0)
    assert nvls_speeds(100.0, 8, (60.0, 50.0)) is None  # nothing fits: NCCL has no NVLS graph


@pytest.mark.parametrize(("system", "nodes", "expected"), [
    ("dgx-h100", 2, (40.0, 48.0)),  # 400G NICs: the inter ladder's 48; 9 x 48 > 370.8, so 40 inside
    ("dgx-b200", 2, (48.0, 48.0)),  # NVLink5 carries 9 x 48: the NIC path's speed for both
    ("gb200-nvl72-tray", 36, (20.0, 40.0)),  # 2 racks: 32 heads (one a NIC), 33 x 20 = 660 <= 721.8
    ("oci-bm-gpu-h100-8", 2, (24.0, 24.0)),  # 200G RoCE NICs
])
def test_across_nodes_nvls_searches_the_inter_ladder_up_to_the_nic(system, nodes, expected):
    """Across nodes NCCL's NVLS search runs on the inter ladder from the GPU's NIC path (search.cc:
    the speed starts at the path's maxBw), so bwIntra is the fastest such speed the NVSwitch takes
    for every head."""
    graph = topology_for(hardware.load_system(system), nodes, tables=T).nvls
    assert (graph.bw_intra_GBps, graph.bw_inter_GBps) == expected


def _time_s(system: str, nodes: int) -> tuple[float, str]:
    found = nccl_time("all-reduce", SIZE, topology_for(hardware.load_system(system), nodes), T)
    return found.time_s, found.algorithm


def test_one_node_nvls_is_not_held_to_the_search_s_bw_inter():
    """The intra term binds on a full H100 node (40 × 0.85 × 7/8 × 2 = 59.5 against bwInter 60):
    no change there; on an 8-GPU NVLink5 node bwInter (90) would cap NVLS below its intra term.
    Not across nodes, where bwInter is the network's, nor under NCCL's legacy NVLS formula."""
    nvls, ring = (CostCell(algorithm=name, protocol="Simple", latency_us=0.0, algbw_GBps=0.0) for name in ("nvls", "ring"))
    h100 = topology_for(hardware.load_system("dgx-h100"), 1)
    b200 = topology_for(hardware.load_system("dgx-b200"), 1)
    assert nvls_one_node_gain("all-reduce", nvls, h100, T) == 1.0
    assert nvls_one_node_gain("all-reduce", nvls, b200, T) > 1.1
    assert nvls_one_node_gain("all-reduce", ring, b200, T) == 1.0
    two_nodes = topology_for(hardware.load_system("dgx-b200"), 2)
    assert nvls_one_node_gain("all-reduce", nvls, two_nodes, T) == 1.0
    # NCCL's legacy formula (2.27.5) takes min(bwIntra, bwInter) raw, and pass 2 never leaves bwInter
    # below bwIntra: no gain there on any node this search builds (the cap applies, and does not bind)
    legacy = load_tables(version="2.27.5")
    for system in ("dgx-b200", "dgx-h100", "gb200-nvl72-tray"):
        topo = topology_for(hardware.load_system(system), 1, tables=legacy)
        assert topo.nvls.bw_inter_GBps >= topo.nvls.bw_intra_GBps
        assert nvls_one_node_gain("all-reduce", nvls, topo, legacy) == 1.0


@pytest.mark.parametrize(("system", "nodes", "measured_us", "tolerance", "algorithm"), [
    # NVIDIA/nccl#1807 (NCCL 2.27.1): 8 × B200 all-reduce "830+" GB/s busbw -> <= 18,112 µs at 8 GiB
    ("dgx-b200", 1, SIZE * 2 * 7 / 8 / 830e9 * 1e6, 0.10, "nvls"),
    # coreweave/nccl-tests README "GB200 Single Rack" (NCCL 2.26.2): 72 GPUs, 8 GiB, 20,299 µs (834.57 GB/s)
    ("gb200-nvl72-tray", 18, 20299.0, 0.10, "nvls"),
    # the same README, "2 Racks": 144 GPUs, 8 GiB, 21,493 µs (793.06 GB/s); the NVLS tree across racks
    # is still 10 % too fast (its network side)
    ("gb200-nvl72-tray", 36, 21493.0, 0.15, "nvls_tree"),
])
def test_blackwell_all_reduce_against_published_runs(system, nodes, measured_us, tolerance, algorithm):
    predicted_s, chosen = _time_s(system, nodes)
    assert chosen == algorithm
    assert predicted_s * 1e6 == pytest.approx(measured_us, rel=tolerance)


@pytest.mark.parametrize("trays", [19, 27, 37, 40, 73, 79, 97, 149])
def test_nvl72_trays_group_into_domains_at_any_count(trays):
    """MNNVL: NCCL sees one node per NVLink domain. The trays were grouped only where they split
    into equal whole domains; 19, 27, 37 or 40 trays fell back to one node per tray, their NICs
    alone, and a 1 GiB all-reduce on 40 trays took 4.4x 36 trays' time (audit, 2026-11-30); the
    first fix still did for prime counts from 73 (review). As few domains as hold the trays, spread
    evenly, the largest standing for all (a few ranks more), and the answers report the job's."""
    from costmodel import predict
    from costmodel.nccl.search import derive_topology

    system = hardware.load_system("gb200-nvl72-tray")
    topo = derive_topology(system, trays)
    per_domain = system.scaleup_domain_gpus
    assert topo.n_nodes == -(-trays * 4 // per_domain)
    assert trays * 4 <= topo.n_ranks < trays * 4 + topo.n_nodes and topo.n_ranks // topo.n_nodes <= per_domain
    # one tray more moves the time a little (it moved 4.4x at 40 trays, 3.7x at 73); most where it
    # adds a domain to two (37 trays: NCCL's NVLS tree doubles its inter-node rate on 2 nodes alone)
    before, now = (nccl_time("all-reduce", 2**30, derive_topology(system, n)).time_s for n in (trays - 1, trays))
    assert abs(now / before - 1) < 0.25
    answer = predict("all-reduce", 2**30, cluster="gb200-nvl72-tray", nodes=trays)
    assert (answer.ranks, answer.nodes, answer.gpus_per_node) == (trays * 4, trays, 4)
