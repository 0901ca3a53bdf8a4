"""NCCL-faithful prediction: NCCL's own choice and estimate, plus what nccl-tests measures.

:func:`nccl_time` runs NCCL's tuning model (:mod:`costmodel.nccl.tuning`), takes NCCL's argmin
(or the forced ``algorithm``/``protocol``, like ``NCCL_ALGO``/``NCCL_PROTO``), and predicts the
time nccl-tests would report for that choice with the ``[nccl_tests]`` table: a per-call launch
floor, the measured per-step latency scale, effective link efficiencies and a store-and-forward
term. ``model_time_s`` keeps NCCL's own estimate. ``size_bytes`` follows nccl-tests' "size".

    >>> from costmodel.nccl.topology import NcclGraph, NcclTopology
    >>> g = NcclGraph(n_channels=12, bw_intra_GBps=20.0, bw_inter_GBps=20.0)
    >>> topo = NcclTopology(n_ranks=8, n_nodes=1, compute_capability=80, ring=g, tree=g)
    >>> p = nccl_time("all-reduce", 2**30, topo)
    >>> p.algorithm, p.protocol, round(p.model_time_s * 1e3, 2)
    ('ring', 'Simple', 7.89)
"""

from __future__ import annotations

import math

from costmodel.names import busbw_factor, primitive_named
from costmodel.nccl import hostmem
from costmodel.nccl.names import n_steps, normalize_algorithm, normalize_collective, normalize_protocol
from costmodel.nccl.selection import choose, plateau_factor, tree_correction
from costmodel.nccl.tables import NcclTables, load_tables
from costmodel.nccl.topology import NcclTopology
from costmodel.nccl.tuning import CostCell, alg_bw_GBps, graph_for
from dpbase.errors import InputError
from dpbase.values import frozen


@frozen(kw_only=True)
class NcclPrediction:
    """One collective call in NCCL mode; times in s, bandwidths in B/s (nccl-tests' GB = 1e9 B)."""

    collective: str
    size_bytes: float
    n_ranks: int
    algorithm: str
    protocol: str
    time_s: float  # predicted nccl-tests time
    model_time_s: float  # NCCL's own estimate for its choice
    latency_s: float  # NCCL's latency cell (with the plateau factor)
    bandwidth_Bps: float  # NCCL's algorithm bandwidth (with the tree correction)
    launch_overhead_s: float
    nccl_version: str

    @property
    def algbw_Bps(self) -> float:
        """nccl-tests' algbw of the predicted time: size / time (inf for a one-rank no-op)."""
        return self.size_bytes / self.time_s if self.time_s > 0 else math.inf

    @property
    def busbw_Bps(self) -> float:
        """nccl-tests' busbw: algbw × the collective's bus factor."""
        return self.algbw_Bps * busbw_factor(primitive_named(self.collective), self.n_ranks)

    def as_dict(self) -> dict[str, object]:
        """Plain values for JSON (units in the keys)."""
        return {"collective": self.collective, "size_bytes": self.size_bytes, "n_ranks": self.n_ranks,
                "algorithm": self.algorithm, "protocol": self.protocol, "time_s": self.time_s,
                "model_time_s": self.model_time_s, "latency_s": self.latency_s,
                "bandwidth_Bps": self.bandwidth_Bps, "algbw_Bps": self.algbw_Bps,
                "busbw_Bps": self.busbw_Bps, "launch_overhead_s": self.launch_overhead_s,
                "nccl_version": self.nccl_version}


def link_class(topo: NcclTopology) -> str:
    """The bottleneck link class for the efficiency: net across nodes, else the intra path."""
    if topo.n_nodes > 1:
        return "net"
    return "nvlink" if topo.intra_path == "NVLINK" else "pci"


def link_factor(collective: str, cell: CostCell, topo: NcclTopology, t: NcclTables) -> float:
    """What nccl-tests achieves per unit of NCCL's graph speed on this cell's links.

    Through host memory (one node, SHM) the links' own rate replaces NCCL's graph speed
    (:mod:`costmodel.nccl.hostmem`); elsewhere NCCL's graph is the hardware's rate, scaled by the
    measured efficiency of the bottleneck link class.
    """
    m = t.section("nccl_tests")
    if topo.n_nodes > 1 and topo.net_efficiency is not None:  # not RDMA: the transport's own rate
        return topo.net_efficiency
    if topo.shm is None or topo.n_nodes > 1:
        return m[f"efficiency_{link_class(topo)}"]
    graph = graph_for(cell.algorithm, topo) or topo.ring
    scale = hostmem.bus_bw_GBps(collective, topo) / (graph.n_channels * graph.bw_intra_GBps)
    efficiency = m["efficiency_shm"] if hostmem.duplex(collective, topo.n_ranks) else m["efficiency_pci"]
    return scale * efficiency


def achieved_bw_GBps(collective: str, cell: CostCell, size_bytes: float, topo: NcclTopology, t: NcclTables,
                     algbw_GBps: float | None = None) -> float:
    """Algorithm bandwidth nccl-tests sees: NCCL's cell × the efficiency of its links.

    NCCL's tree converts bus to algorithm bandwidth with ×0.5 because an inner rank of the tree
    forwards every byte twice (reduce up, broadcast down); a 2-rank tree has no inner rank, each
    link carries the data once per direction, as in a ring. ``algbw_GBps`` replaces the cell's
    own bandwidth (e.g. without LL's communicator-wide cap).
    """
    bw_GBps = (cell.algbw_GBps if algbw_GBps is None else algbw_GBps) * tree_correction(cell, size_bytes, topo, t)
    if cell.algorithm == "tree" and topo.n_ranks == 2:
        bw_GBps *= 2.0
    return bw_GBps * link_factor(collective, cell, topo, t)


_UNCAPPED: dict[tuple, tuple[CostCell, NcclTopology, NcclTables, float]] = {}
_UNCAPPED_SIZE = 4096


def _uncapped_GBps(collective: str, cell: CostCell, topo: NcclTopology, t: NcclTables) -> float:
    """The cell's bandwidth without LL's communicator-wide cap (per communicator, memoised by the
    objects' identity; the entry keeps them, so their ids cannot be reused while cached)."""
    key = (collective, id(cell), id(topo), id(t))
    found = _UNCAPPED.get(key)
    if found is None or found[0] is not cell or found[1] is not topo or found[2] is not t:
        if len(_UNCAPPED) >= _UNCAPPED_SIZE:
            _UNCAPPED.pop(next(iter(_UNCAPPED)))
        found = _UNCAPPED[key] = (cell, topo, t, alg_bw_GBps(collective, cell.algorithm, cell.protocol, topo, t,
                                                             ll_cap=False))
    return found[3]


def forward_us(collective: str, cell: CostCell, size_bytes: float, topo: NcclTopology, t: NcclTables) -> float:
    """Store-and-forward: at every step a chunk must land before it is forwarded.

    Each channel holds at most ``store_and_forward_bytes`` per step, and that chunk moves at one
    channel's own rate: the channels' bandwidth before LL's communicator-wide ``llMaxBw`` cap,
    divided by the channel count. With the total cap instead, a faster NIC (NCCL then searches
    more channels at the same per-channel speed) would lengthen this term; per channel it cannot.
    """
    m = t.section("nccl_tests")
    graph = graph_for(cell.algorithm, topo) or topo.ring
    rooted = collective in ("broadcast", "reduce")
    step_bytes = size_bytes / (graph.n_channels * (1 if rooted else topo.n_ranks))
    held_bytes = min(step_bytes, m["store_and_forward_bytes"])
    uncapped = _uncapped_GBps(collective, cell, topo, t)
    channel_GBps = achieved_bw_GBps(collective, cell, size_bytes, topo, t, uncapped) / graph.n_channels
    if held_bytes <= 0 or channel_GBps <= 0:
        return 0.0
    return n_steps(collective, topo.n_ranks) * held_bytes / (1000.0 * channel_GBps)


def measured_time_us(collective: str, cell: CostCell, size_bytes: float, topo: NcclTopology, t: NcclTables) -> float:
    """nccl-tests time of one cell: launch + scaled latency + bytes/(eff × bw) + store-and-forward."""
    m = t.section("nccl_tests")
    bw_GBps = achieved_bw_GBps(collective, cell, size_bytes, topo, t)
    lat_us = cell.latency_us * plateau_factor(collective, cell, size_bytes, topo, t)
    return (m["launch_overhead_us"] + m["hop_latency_scale"] * lat_us + size_bytes / (1000.0 * bw_GBps)
            + forward_us(collective, cell, size_bytes, topo, t))


def nccl_time(
    collective: str,
    size_bytes: float,
    topo: NcclTopology,
    tables: NcclTables | None = None,
    algorithm: str = "auto",
    protocol: str = "auto",
) -> NcclPrediction:
    """Predict one call in NCCL mode: NCCL's (algorithm, protocol) choice and the time.

    Raises InputError for a negative size or unknown names, NotApplicableError when the forced
    algorithm/protocol is not enabled on this topology.
    """
    t = tables or load_tables()
    coll = normalize_collective(collective)
    if not size_bytes >= 0:
        raise InputError("size_bytes", size_bytes, "a size >= 0 bytes")
    if topo.n_ranks == 1:  # one rank: nothing crosses a link (the same convention as the ideal model)
        return NcclPrediction(collective=coll, size_bytes=float(size_bytes), n_ranks=1, algorithm="none",
                              protocol="none", time_s=0.0, model_time_s=0.0, latency_s=0.0, bandwidth_Bps=math.inf,
                              launch_overhead_s=0.0, nccl_version=t.version)
    algo, proto, model_us, cell = choose(coll, size_bytes, topo, t, normalize_algorithm(algorithm),
                                         normalize_protocol(protocol))
    time_us = measured_time_us(coll, cell, size_bytes, topo, t)
    return NcclPrediction(
        collective=coll, size_bytes=float(size_bytes), n_ranks=topo.n_ranks, algorithm=algo, protocol=proto,
        time_s=time_us * 1e-6, model_time_s=model_us * 1e-6,
        latency_s=cell.latency_us * plateau_factor(coll, cell, size_bytes, topo, t) * 1e-6,
        bandwidth_Bps=cell.algbw_GBps * tree_correction(cell, size_bytes, topo, t) * 1e9,
        launch_overhead_s=t.section("nccl_tests")["launch_overhead_us"] * 1e-6, nccl_version=t.version,
    )


def cost_table(collective: str, topo: NcclTopology, tables: NcclTables | None = None) -> list[CostCell]:
    """NCCL's (algorithm, protocol) latency/bandwidth cells for a collective (n/a cells included)."""
    from costmodel.nccl.tuning import tune_collective

    return list(tune_collective(normalize_collective(collective), topo, tables or load_tables()).values())
