"""NCCL's per-call latency model (µs): base latency plus per-step hardware latencies.

Reference ``nccl-model.md`` §4 (NCCL 2.30.7 ``ncclTopoTuneModel``). ``hw`` is the link class
of a step: ``nvlink`` or ``pci`` inside a node (from the graph's intra path), ``net`` across.

    >>> from costmodel.nccl.topology import NcclGraph, NcclTopology
    >>> from costmodel.nccl.tables import load_tables
    >>> g = NcclGraph(n_channels=12, bw_intra_GBps=20.0, bw_inter_GBps=20.0)
    >>> topo = NcclTopology(n_ranks=8, n_nodes=1, compute_capability=80, ring=g, tree=g)
    >>> round(cell_latency_us("all-reduce", "ring", "Simple", topo, load_tables()), 1)
    56.0
"""

from __future__ import annotations

import math

from costmodel.nccl.names import n_steps
from costmodel.nccl.tables import NcclTables
from costmodel.nccl.topology import NcclTopology

_AG_RS = ("all-gather", "reduce-scatter")


def _log2_floor(value: int) -> int:
    return int(math.floor(math.log2(value))) if value >= 1 else 0


def intra_hw(topo: NcclTopology) -> str:
    """Link class of an intra-node step: nvlink or pci."""
    return "nvlink" if topo.intra_path == "NVLINK" else "pci"


def inter_latency_us(algorithm: str, proto: str, topo: NcclTopology, t: NcclTables) -> float:
    """One network step: NET hw latency (Tree's row when ppn == 1, since 2.22) plus the plugin latency."""
    row = "tree" if topo.ppn == 1 and t.refinement("inter_latency_tree_row_one_rank_per_node") else algorithm
    lat = t.hw_latency_us("net", row, proto) + topo.latency_inter_us
    return lat + (topo.latency_inter_us if proto == "Simple" else 0.0)


def _net_overhead_us(proto: str, topo: NcclTopology, t: NcclTables) -> float:
    factor = t.section("net_overhead_us")["simple_multiplier"] if proto == "Simple" else 1.0
    return t.net_overhead_us(topo.cpu_vendor) * factor


def _ring_latency_us(collective: str, proto: str, topo: NcclTopology, t: NcclTables) -> float:
    steps = n_steps(collective, topo.n_ranks)
    hw = intra_hw(topo) if topo.n_nodes == 1 else "net"
    if collective in ("broadcast", "reduce"):
        if topo.same_channels:
            return t.hw_latency_us(hw, "ring", proto)
        row = "tree" if proto == "Simple" else "ring"
        return steps * t.hw_latency_us(hw, row, proto)
    intra = t.hw_latency_us(intra_hw(topo), "ring", proto)
    inter_steps = 0
    if topo.n_nodes > 1:
        intra = max(intra, _net_overhead_us(proto, topo, t))
        offset = t.refinement("allreduce_inter_steps_offset") if collective == "all-reduce" else 1
        inter_steps = (2 if collective == "all-reduce" else 1) * (topo.n_nodes - offset)
    inter = inter_latency_us("ring", proto, topo, t)
    return (steps - inter_steps) * intra + inter_steps * inter


def cell_latency_us(collective: str, algorithm: str, proto: str, topo: NcclTopology, t: NcclTables) -> float:
    """``comm->latencies[coll][algo][proto]`` for this topology, in µs."""
    base = t.base_latency_us(algorithm, proto)
    intra = t.hw_latency_us(intra_hw(topo), algorithm, proto)
    inter = inter_latency_us(algorithm, proto, topo, t)
    log_nodes = _log2_floor(topo.n_nodes)
    r = t.refinement
    if algorithm == "ring":
        return base + _ring_latency_us(collective, proto, topo, t)
    if algorithm == "tree":
        return base + 2 * ((topo.ppn - 1) * intra + log_nodes * inter)
    if algorithm == "collnet_direct":
        per_rank = r("collnet_direct_per_rank_latency_us")
        return base + 2 * (min(1, topo.ppn - 1) * intra + (topo.ppn - 1) * per_rank) + inter
    if algorithm == "collnet_chain":
        return base + 2 * (topo.ppn - 1) * intra + inter
    if algorithm == "nvls":
        return intra + (inter if topo.n_nodes > 1 else 0.0)
    if algorithm == "nvls_tree":
        return base + intra + 2 * log_nodes * inter
    # PAT
    return base + log_nodes * inter / r("pat_inter_latency_divisor") + r("pat_per_rank_latency_us") * topo.n_ranks
