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
from costmodel.nccl.names import normalize_algorithm, normalize_collective, normalize_protocol
from costmodel.nccl.selection import allowed, choose_terms
from costmodel.nccl.tables import NcclTables, tables_or_default
from costmodel.nccl.terms import cell_terms, corrected, estimate_us, measured_latency_us, measured_us, size_index, stack
from costmodel.nccl.topology import NcclTopology
from costmodel.nccl.tuning import CostCell
from dpbase.errors import InputError, NotApplicableError, is_real
from dpbase.lazynp import np
from dpbase.limits import MAX_SIZE_BYTES
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
    latency_s: float  # NCCL's latency cell with the plateau factor, scaled as nccl-tests measures it (hop_latency_scale)
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


def measured_time_us(collective: str, cell: CostCell, size_bytes: float, topo: NcclTopology,
                     t: NcclTables) -> float:
    """nccl-tests' time of one given cell (µs): :func:`costmodel.nccl.terms.measured_us` on its terms
    (for calibration, which scores a cell under refitted ``[nccl_tests]`` constants)."""
    return measured_us(cell_terms(collective, cell, topo, t), size_bytes, t.section("nccl_tests"))


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
    t = tables_or_default(tables)
    coll = normalize_collective(collective)
    # text, inf, 1e30 refused; numpy's float16/float32 or a 0-d array computed and answered in
    # Python floats (review, 2026-11-29)
    if not is_real(size_bytes) or not 0 <= float(size_bytes) <= MAX_SIZE_BYTES:
        raise InputError("size_bytes", size_bytes, "a number of bytes from 0 to 2**70")
    size_bytes = float(size_bytes)
    if not isinstance(topo, NcclTopology):  # None was an AttributeError
        raise InputError("topo", type(topo).__name__, "an NcclTopology (costmodel.nccl.topology_for(system, nodes))")
    if topo.n_ranks == 1:  # one rank: nothing crosses a link (the same convention as the ideal model)
        return NcclPrediction(collective=coll, size_bytes=float(size_bytes), n_ranks=1, algorithm="none",
                              protocol="none", time_s=0.0, model_time_s=0.0, latency_s=0.0, bandwidth_Bps=math.inf,
                              launch_overhead_s=0.0, nccl_version=t.version)
    algo, proto, model_us, chosen, terms = choose_terms(coll, size_bytes, topo, t, normalize_algorithm(algorithm),
                                                        normalize_protocol(protocol))
    index = size_index(size_bytes)
    bandwidth_Bps = chosen.algbw_GBps * corrected(terms.tree_factors, index) * 1e9
    if size_bytes == 0:  # NCCL discards an empty collective before it launches a kernel (src/enqueue.cc,
        # "Empty collectives can be discarded"); a forced algorithm NCCL does not enable is refused above
        return NcclPrediction(collective=coll, size_bytes=0.0, n_ranks=topo.n_ranks, algorithm=algo,
                              protocol=proto, time_s=0.0, model_time_s=0.0, latency_s=0.0, bandwidth_Bps=bandwidth_Bps,
                              launch_overhead_s=0.0, nccl_version=t.version)
    time_us = measured_us(terms, size_bytes, t.section("nccl_tests"))
    return NcclPrediction(
        collective=coll, size_bytes=float(size_bytes), n_ranks=topo.n_ranks, algorithm=algo, protocol=proto,
        time_s=time_us * 1e-6, model_time_s=model_us * 1e-6,
        # the latency part of the nccl-tests time (the rest is bytes / bandwidth, store-and-forward
        # and the launch): a 0-byte call is latency and launch alone
        latency_s=measured_latency_us(terms, size_bytes, t.section("nccl_tests")) * 1e-6,
        bandwidth_Bps=bandwidth_Bps,
        launch_overhead_s=t.section("nccl_tests")["launch_overhead_us"] * 1e-6, nccl_version=t.version,
    )


def nccl_table_s(collective: str, size_bytes, topologies: list[NcclTopology], tables: NcclTables | None = None,
                 algorithm: str = "auto", protocol: str = "auto"):
    """:func:`nccl_time`'s ``time_s`` for every topology (rows) at every size (columns), in one
    pass: each distinct allowed cell's terms once as numpy columns, NCCL's estimate and the
    nccl-tests time of :mod:`costmodel.nccl.terms` over all sizes at once, then each row's argmin
    (the first minimum, as NCCL's strict ``<``). Equal to :func:`nccl_time` cell by cell; NaN
    for a row where NCCL enables no allowed cell (a forced algorithm), 0 for one rank or 0 bytes."""
    return nccl_tables_s([(collective, algorithm)], size_bytes, topologies, tables, protocol)[0]


def nccl_tables_s(requests, size_bytes, topologies: list[NcclTopology], tables: NcclTables | None = None,
                  protocol: str = "auto") -> list:
    """:func:`nccl_table_s` of each (collective, algorithm) of ``requests`` on the same topologies
    and sizes, all in one pass (the cells of every request and topology stacked as one table's)."""
    t = tables_or_default(tables)
    requests = [(normalize_collective(c), normalize_algorithm(a)) for c, a in requests]  # names first
    protocol = normalize_protocol(protocol)
    sizes = np.asarray(size_bytes, dtype=float).reshape(1, -1)
    if sizes.size and not np.all(sizes >= 0):
        raise InputError("size_bytes", float(sizes[~(sizes >= 0)][0]), "a size >= 0 bytes")
    out = np.full((len(requests) * len(topologies), sizes.shape[1]), np.nan)  # row: request × topology
    rows, owner, slot = [], [], []  # each (row of out, its allowed cell): that cell's terms
    for r, (coll, algorithm) in enumerate(requests):
        for i, topo in enumerate(topologies, r * len(topologies)):
            if topo.n_ranks == 1:
                out[i] = 0.0
                continue
            try:
                found = allowed(coll, topo, t, algorithm, protocol)
            except NotApplicableError:  # a forced algorithm NCCL does not enable here: the row stays NaN
                continue
            rows += [row[3] for row in found]
            owner += [i] * len(found)
            slot += range(len(found))
    if rows:
        answered, seconds = _choose_rows(len(out), rows, owner, slot, sizes, t)
        out[answered] = seconds
    empty = sizes[0] == 0  # discarded before a kernel, as nccl_time answers it (NaN stays: not enabled)
    out[:, empty] = np.where(np.isnan(out[:, empty]), np.nan, 0.0)
    return list(out.reshape(len(requests), len(topologies), sizes.shape[1]))


def _choose_rows(n_rows: int, rows: list, owner: list[int], slot: list[int], sizes, t: NcclTables):
    """(the rows that own cells, their seconds at each size): the nccl-tests time of the row's
    cell with NCCL's lowest estimate at each size (the first minimum), NaN where no estimate is
    finite. ``rows[j]`` is the terms of cell ``slot[j]`` of row ``owner[j]`` (of ``n_rows``)."""
    # each distinct cell stacked once (a forced algorithm's are auto's too): by identity, as
    # allowed() hands out the topology's cached cell terms (were it to copy them, every cell
    # would still be right, only stacked once per row)
    cells, position, which = [], {}, []
    for terms in rows:
        at = position.get(id(terms))
        if at is None:
            at = position[id(terms)] = len(cells)
            cells.append(terms)
        which.append(at)
    stacked = stack(cells)
    index = size_index(sizes)
    estimate = estimate_us(stacked, sizes, index)
    measured = measured_us(stacked, sizes, t.section("nccl_tests"))
    owner_ix, slot_ix = np.asarray(owner), np.asarray(slot)
    grid = np.full((n_rows, int(slot_ix.max()) + 1, sizes.shape[1]), np.inf)
    grid[owner_ix, slot_ix] = np.where(np.isfinite(estimate), estimate, np.inf)[which]  # the pairs' estimates
    pair = np.full(grid.shape[:2], -1)
    pair[owner_ix, slot_ix] = which  # the pair's cell in the stack
    answered = np.asarray(sorted(set(owner)))[:, None]  # not np.unique: it imports numpy.ma (20 ms) the first time
    best = np.argmin(grid[answered[:, 0]], axis=1)  # (answered rows, sizes)
    columns = np.arange(sizes.shape[1])
    chosen = measured[pair[answered, best], columns] * 1e-6
    return answered[:, 0], np.where(np.isfinite(grid[answered, best, columns]), chosen, np.nan)


def cost_table(collective: str, topo: NcclTopology, tables: NcclTables | None = None) -> list[CostCell]:
    """NCCL's (algorithm, protocol) latency/bandwidth cells for a collective (n/a cells included)."""
    from costmodel.nccl.tuning import tune_collective

    return list(tune_collective(normalize_collective(collective), topo, tables_or_default(tables)).values())
