"""NCCL's ``ncclTopoTuneModel``: latency (µs) and algorithm bandwidth (GB/s) per (algo, proto).

One pure function per formula family; :func:`tune_collective` assembles the cost table of a
collective the way NCCL fills ``comm->latencies`` / ``comm->bandwidths`` once per communicator
(NCCL 2.30.7, reference ``nccl-model.md`` §3-§4). A cell with bandwidth 0 is "not applicable"
(NCCL's sentinel), e.g. LL128 on PCIe or NVLS without NVSwitch.

    >>> from costmodel.nccl.topology import NcclGraph, NcclTopology
    >>> from costmodel.nccl.tables import load_tables
    >>> g = NcclGraph(n_channels=12, bw_intra_GBps=20.0, bw_inter_GBps=20.0)
    >>> topo = NcclTopology(n_ranks=8, n_nodes=1, compute_capability=80, ring=g, tree=g)
    >>> cell = tune_collective("all-reduce", topo, load_tables())[("ring", "LL")]
    >>> round(cell.latency_us, 1), round(cell.algbw_GBps, 1)
    (15.0, 50.1)
"""

from __future__ import annotations

import math

from costmodel.nccl.latency import cell_latency_us
from costmodel.nccl.names import ALGORITHMS, PROTOCOLS, algorithms_for, n_steps
from costmodel.nccl.tables import NcclTables
from costmodel.nccl.topology import NcclGraph, NcclTopology
from dpbase.values import frozen

_AG_RS = ("all-gather", "reduce-scatter")
# The compute capabilities NCCL 2.21 and older enable LL128 on (tuning.cc: "only on Volta/Ampere/Hopper")
LL128_TESTED_CC = (70, 80, 90)
_INF = math.inf


@frozen
class CostCell:
    """One (algorithm, protocol) cell: NCCL's latency and algorithm bandwidth (0 = n/a)."""

    algorithm: str
    protocol: str
    latency_us: float
    algbw_GBps: float

    @property
    def applicable(self) -> bool:
        """NCCL skips cells whose bandwidth is 0."""
        return self.algbw_GBps > 0


def graph_for(algorithm: str, topo: NcclTopology) -> NcclGraph | None:
    """The searched graph an algorithm runs on (PAT reuses the ring graph)."""
    if algorithm in ("nvls", "nvls_tree"):
        return topo.nvls
    if algorithm.startswith("collnet"):
        return topo.collnet
    return topo.tree if algorithm == "tree" else topo.ring


def _cap(tables: NcclTables, table: str, topo: NcclTopology) -> float:
    return tables.arch_cap_GBps(table, topo.arch, topo.n_nodes)


def ll_max_bw_GBps(topo: NcclTopology, tables: NcclTables) -> float:
    """``llMaxBw``: GPU-arch row on one node; Intel (row 0) / AMD (row 1) CPU row otherwise."""
    if topo.n_nodes == 1:
        return _cap(tables, "ll_max", topo)
    row = "ampere" if topo.cpu_vendor == "amd" else "volta"
    return tables.arch_cap_GBps("ll_max", row, topo.n_nodes)


def _nvls_bw(collective: str, algorithm: str, graph: NcclGraph, topo: NcclTopology, t: NcclTables,
             inter_cap: bool = True) -> float:
    """One NVLS channel's speed in NCCL's model; ``inter_cap=False`` drops the graph's bwInter
    (:func:`costmodel.nccl.terms.nvls_one_node_gain`)."""
    r = t.refinement
    tree = algorithm == "nvls_tree"
    if r("nvls_legacy_bandwidth"):
        if collective in _AG_RS and not r("nvls_legacy_ag_rs_as_all_reduce"):
            inter = r("nvls_legacy_ag_rs_inter_factor") * graph.bw_inter_GBps
            return min(graph.bw_intra_GBps * (topo.ppn - 1) / topo.ppn, inter if inter_cap else _INF)
        inter = graph.bw_inter_GBps if (not tree or topo.n_nodes <= 2) else graph.bw_inter_GBps / 2
        return min(graph.bw_intra_GBps, inter if inter_cap else _INF)
    n_ch = graph.n_channels
    intra = graph.bw_intra_GBps * t.nvls_efficiency(topo.arch) * (n_ch - 1) / n_ch
    intra *= r("nvls_allreduce_pipelining") if collective == "all-reduce" else (topo.ppn - 1) / topo.ppn
    inter = graph.bw_inter_GBps * (r("nvls_tree_two_nodes_inter_factor") if tree and topo.n_nodes <= 2 else 1.0)
    cap = _cap(t, "per_channel_nvls_tree", topo) if tree else _INF
    return min(intra, inter if inter_cap else _INF, cap)


def _tree_bus_bw(collective: str, proto: str, bus: float, n_ch: int, topo: NcclTopology, t: NcclTables,
                 ll_cap: bool = True) -> float:
    r = t.refinement
    if collective == "all-reduce" or r("tree_factor_all_collectives"):
        bus = min(r("tree_factor") * bus, n_ch * _cap(t, "per_channel_tree", topo))
    if proto == "LL":
        bus = min(bus / r("tree_ll_divisor"), ll_max_bw_GBps(topo, t) if ll_cap else _INF)
    elif proto == "LL128":
        factor = r("tree_ll128_factor_one_node") if topo.n_nodes == 1 else r("tree_ll128_factor_multi_node")
        bus = min(bus * factor, n_ch * _cap(t, "per_channel_tree_ll128", topo))
    if topo.tree.pattern == "tree":
        bus *= r("tree_pattern_factor")
    return bus


def _collnet_bus_bw(collective: str, algorithm: str, bus: float, graph: NcclGraph, topo: NcclTopology, t: NcclTables) -> float:
    r = t.refinement
    if algorithm != "collnet_direct":
        return bus
    if collective in _AG_RS:
        return topo.ppn * min(graph.bw_intra_GBps, r("collnet_direct_inter_factor") * graph.bw_inter_GBps)
    f = topo.ppn / graph.n_channels
    bus /= f - (f - 1) / 2
    return bus * (r("collnet_direct_hopper_factor") if topo.compute_capability >= 90 else 1.0)


def channel_bw_GBps(collective: str, algorithm: str, topo: NcclTopology, t: NcclTables,
                    inter_cap: bool = True) -> float:
    """One channel's link speed in NCCL's graph, before protocol factors and caps (0 = no graph).

    NCCL takes the graph's ``bwIntra`` on up to two nodes (and for CollNet), ``bwInter`` beyond;
    NVLS has its own rule (:func:`_nvls_bw`; ``inter_cap=False`` drops its graph's bwInter).
    """
    graph = graph_for(algorithm, topo)
    if graph is None:
        return 0.0
    if algorithm in ("nvls", "nvls_tree"):
        return _nvls_bw(collective, algorithm, graph, topo, t, inter_cap)
    use_intra = topo.n_nodes <= 2 or algorithm.startswith("collnet")
    return graph.bw_intra_GBps if use_intra else graph.bw_inter_GBps


def bus_bw_GBps(collective: str, algorithm: str, proto: str, topo: NcclTopology, t: NcclTables,
                ll_cap: bool = True, inter_cap: bool = True) -> float:
    """NCCL's per-communicator bus bandwidth for one cell, before the bus->alg conversion.

    ``ll_cap=False`` drops LL's communicator-wide ``llMaxBw`` cap (every other cap scales with
    the channel count): what the channels together would carry, for per-channel rates.
    ``inter_cap=False`` drops an NVLS graph's bwInter (:func:`channel_bw_GBps`).
    """
    graph = graph_for(algorithm, topo)
    if graph is None:
        return 0.0
    r = t.refinement
    bw = channel_bw_GBps(collective, algorithm, topo, t, inter_cap)
    n_ch = graph.n_channels
    bus = n_ch * bw
    if algorithm == "ring" and proto == "LL":
        bus = min(ll_max_bw_GBps(topo, t) if ll_cap else _INF, r("ring_ll_factor") * bus)
    elif algorithm == "ring" and proto == "LL128":
        factor = r("ring_ll128_factor_one_rank_per_node") if topo.ppn < 2 else r("ring_ll128_factor")
        bus = min(factor * bus, n_ch * _cap(t, "per_channel_ring_ll128", topo))
    elif algorithm == "tree":
        bus = _tree_bus_bw(collective, proto, bus, n_ch, topo, t, ll_cap)
    elif algorithm == "pat":
        bus *= r("pat_factor")
    elif algorithm.startswith("collnet"):
        bus = _collnet_bus_bw(collective, algorithm, bus, graph, topo, t)
    return bus


def alg_bw_GBps(collective: str, algorithm: str, proto: str, topo: NcclTopology, t: NcclTables,
               ll_cap: bool = True, inter_cap: bool = True) -> float:
    """Bus bandwidth converted to algorithm bandwidth (0 when the cell is not applicable)."""
    if not _enabled(collective, algorithm, proto, topo, t):
        return 0.0
    bus = bus_bw_GBps(collective, algorithm, proto, topo, t, ll_cap, inter_cap)
    legacy = algorithm in ("nvls", "nvls_tree") and t.refinement("nvls_legacy_bandwidth")
    as_all_reduce = legacy and t.refinement("nvls_legacy_ag_rs_as_all_reduce")
    if collective in _AG_RS and algorithm != "ring" and not as_all_reduce:
        return bus
    if algorithm in ("tree", "collnet_direct", "collnet_chain"):
        return bus * 0.5
    if algorithm in ("nvls", "nvls_tree") and t.refinement("nvls_legacy_bandwidth"):
        return bus * t.refinement("nvls_legacy_bus_to_alg_ratio")
    return bus * topo.n_ranks / n_steps(collective, topo.n_ranks)


def _enabled(collective: str, algorithm: str, proto: str, topo: NcclTopology, t: NcclTables) -> bool:
    """NCCL's default algorithm/protocol enables (tuning.cc end) for this topology."""
    if algorithm not in algorithms_for(collective) or topo.n_ranks < 2:  # one rank: no communication
        return False
    if algorithm in ("nvls", "nvls_tree", "pat") or algorithm.startswith("collnet"):
        if proto != "Simple":
            return False
    if proto == "LL128" and not topo.ll128_enabled:
        return False
    r = t.refinement
    if proto == "LL128" and r("ll128_tested_architectures_only") and topo.compute_capability not in LL128_TESTED_CC:
        return False  # 2.21 and older: "only on Volta/Ampere/Hopper" (compute capability 7.0, 8.0, 9.0 exactly)
    if algorithm in ("nvls", "nvls_tree") and collective != "all-reduce" and topo.ppn > r("nvls_max_arity"):
        return False  # enqueue.cc: NVLS beyond NCCL_MAX_NVLS_ARITY local ranks runs all-reduce only
    if algorithm == "nvls":
        return topo.nvls_capable and (topo.n_nodes == 1 or topo.collnet_capable)
    if algorithm == "nvls_tree":
        return topo.nvls_capable and topo.n_nodes > 1
    if algorithm.startswith("collnet"):
        # enqueue.cc: both up to 8 GPUs a node; tuning.cc: Direct only on an NVSwitch system
        limited = algorithm == "collnet_direct" or r("collnet_chain_local_ranks_limit")
        return (topo.collnet_capable and (topo.ppn <= r("collnet_max_local_ranks") or not limited)
                and (algorithm != "collnet_direct" or topo.nvswitch))
    if algorithm == "pat":
        return topo.pat_capable and r("pat_available")
    return True


def tune_collective(collective: str, topo: NcclTopology, tables: NcclTables) -> dict[tuple[str, str], CostCell]:
    """The full (algorithm, protocol) cost table of one collective, NCCL's index order."""
    table: dict[tuple[str, str], CostCell] = {}
    for algorithm in ALGORITHMS:
        for proto in PROTOCOLS:
            bw = alg_bw_GBps(collective, algorithm, proto, topo, tables)
            lat = cell_latency_us(collective, algorithm, proto, topo, tables) if bw > 0 else 0.0
            table[(algorithm, proto)] = CostCell(algorithm, proto, lat, bw)
    return table
