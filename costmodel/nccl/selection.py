"""NCCL's per-call choice: time every enabled (algorithm, protocol) cell, take the argmin.

``ncclTopoGetAlgoTime``: ``time_us = lat * latCount + nBytes / (1000 * bw)`` with the tree
correction factor and the multi-node ring "plateau" latency factor (reference §1.4); a lone
call has ``latCount = 1``. ``nBytes`` is nccl-tests' size (the full buffer for all-gather and
reduce-scatter). Ties go to the first cell in NCCL's index order.

    >>> from costmodel.nccl.topology import NcclGraph, NcclTopology
    >>> from costmodel.nccl.tables import load_tables
    >>> g = NcclGraph(n_channels=12, bw_intra_GBps=20.0, bw_inter_GBps=20.0)
    >>> topo = NcclTopology(n_ranks=8, n_nodes=1, compute_capability=80, ring=g, tree=g)
    >>> choose("all-reduce", 2**30, topo, load_tables())[:2]
    ('ring', 'Simple')
"""

from __future__ import annotations

import math

from costmodel.nccl.tables import NcclTables
from costmodel.nccl.topology import NcclTopology
from costmodel.nccl.tuning import CostCell, tune_collective
from dpbase.errors import NotApplicableError


def _tree_factors(cell: CostCell, topo: NcclTopology, t: NcclTables) -> tuple[float, ...] | None:
    """The ``treeCorrectionFactor`` row a cell's bandwidth is scaled by: Tree, and NVLSTree on
    Blackwell with an x86 CPU; None for every other cell."""
    blackwell_x86 = topo.arch == "blackwell" and topo.cpu_vendor in ("intel", "amd")
    if cell.algorithm == "tree" or (cell.algorithm == "nvls_tree" and blackwell_x86):
        return t.tree_correction(cell.protocol)
    return None


def size_index(size_bytes: float) -> int:
    """``log2(nBytes >> 6)``, the correction tables' index (-1 below 64 bytes: no correction).
    Integer arithmetic (``bit_length``), exact where a float ``log2`` rounds up just below a
    power of two; RCCL's ``log2i`` is the same with 0 for 0 (:func:`costmodel.nccl.rccl.correction`)."""
    return (int(size_bytes) >> 6).bit_length() - 1


def _corrected(factors: tuple[float, ...] | None, index: int) -> float:
    return factors[index] if factors is not None and 0 <= index < len(factors) else 1.0


def tree_correction(cell: CostCell, size_bytes: float, topo: NcclTopology, t: NcclTables) -> float:
    """``treeCorrectionFactor[proto][log2(nBytes>>6)]`` for Tree (and NVLSTree on Blackwell+x86)."""
    return _corrected(_tree_factors(cell, topo, t), size_index(size_bytes))


def _plateau_rule(collective: str, cell: CostCell, topo: NcclTopology, t: NcclTables) -> tuple[float, float] | None:
    """(smallest bytes per channel and rank that plateau, latency factor) of the multi-node
    Ring/Simple all-reduce; None for every other cell."""
    if not (cell.algorithm == "ring" and cell.protocol == "Simple" and collective == "all-reduce") or topo.n_nodes == 1:
        return None
    r = t.refinement
    factor = r("ring_plateau_latency_factor_sm80") if topo.compute_capability >= 80 else r(
        "ring_plateau_latency_factor_older")
    return r("ring_plateau_min_bytes_per_channel_rank"), factor


def _plateaued(rule: tuple[float, float] | None, size_bytes: float, topo: NcclTopology) -> float:
    if rule is None or size_bytes / (topo.n_channels * topo.n_ranks) < rule[0]:
        return 1.0
    return rule[1]


def plateau_factor(collective: str, cell: CostCell, size_bytes: float, topo: NcclTopology, t: NcclTables) -> float:
    """Multi-node Ring/Simple all-reduce latency factor (1.4 on sm80+, 1.9 before)."""
    return _plateaued(_plateau_rule(collective, cell, topo, t), size_bytes, topo)


def _time_us(cell: CostCell, size_bytes: float, index: int, factors, rule, topo: NcclTopology) -> float:
    """``ncclTopoGetAlgoTime`` for one lone call: the cell's latency (× the plateau factor) plus
    the bytes over its bandwidth (× the tree correction), given the size's index and the cell's
    rules (:func:`_tree_factors`, :func:`_plateau_rule`)."""
    return (cell.latency_us * _plateaued(rule, size_bytes, topo)
            + size_bytes / (1000.0 * (cell.algbw_GBps * _corrected(factors, index))))


def cell_time_us(collective: str, cell: CostCell, size_bytes: float, topo: NcclTopology, t: NcclTables) -> float:
    """NCCL's estimated time of one cell for ``size_bytes`` (math.inf when not applicable)."""
    if not cell.applicable:
        return math.inf
    return _time_us(cell, size_bytes, size_index(size_bytes), _tree_factors(cell, topo, t),
                    _plateau_rule(collective, cell, topo, t), topo)


_COST_TABLES: dict[tuple[str, NcclTopology, int], tuple[NcclTables, dict]] = {}
_COST_TABLES_SIZE = 4096


def cost_table(collective: str, topo: NcclTopology, tables: NcclTables) -> dict:
    """NCCL's cost table for a communicator, built once per (collective, topology, tables) as NCCL
    fills it once per communicator: it does not depend on the message size. Keyed by the topology's
    value and the tables object (kept in the entry, so its id cannot be reused while cached)."""
    key = (collective, topo, id(tables))
    found = _COST_TABLES.get(key)
    if found is None or found[0] is not tables:
        if len(_COST_TABLES) >= _COST_TABLES_SIZE:
            _COST_TABLES.pop(next(iter(_COST_TABLES)))
        found = _COST_TABLES[key] = (tables, tune_collective(collective, topo, tables))
    return found[1]


_CANDIDATES: dict[tuple[str, int, int], tuple[NcclTopology, NcclTables, list]] = {}


def _candidates(collective: str, topo: NcclTopology, tables: NcclTables) -> list[tuple]:
    """The enabled cells in NCCL's index order, each with its size rules (tree factors, plateau),
    built once per communicator like :func:`cost_table`. Keyed by the objects' identity (hashing
    a topology's value costs more than a small choice): the entry keeps both objects, so their
    ids cannot be reused while cached, and an equal topology rebuilt elsewhere gets its own."""
    key = (collective, id(topo), id(tables))
    found = _CANDIDATES.get(key)
    if found is None or found[0] is not topo or found[1] is not tables:
        if len(_CANDIDATES) >= _COST_TABLES_SIZE:
            _CANDIDATES.pop(next(iter(_CANDIDATES)))
        rows = [(algo, proto, cell, _tree_factors(cell, topo, tables), _plateau_rule(collective, cell, topo, tables))
                for (algo, proto), cell in cost_table(collective, topo, tables).items() if cell.applicable]
        found = _CANDIDATES[key] = (topo, tables, rows)
    return found[2]


def choose(
    collective: str,
    size_bytes: float,
    topo: NcclTopology,
    tables: NcclTables,
    algorithm: str = "auto",
    protocol: str = "auto",
) -> tuple[str, str, float, CostCell]:
    """NCCL's argmin over the enabled cells, restricted like ``NCCL_ALGO``/``NCCL_PROTO``.

    Returns (algorithm, protocol, time_us, cell); raises NotApplicableError when the forced
    algorithm/protocol has no enabled cell on this topology. Each cell's time is
    :func:`cell_time_us`, with the size's index and the cell's rules looked up once.
    """
    best: tuple[str, str, float, CostCell] | None = None
    index = size_index(size_bytes)
    for algo, proto, cell, factors, rule in _candidates(collective, topo, tables):
        if algorithm not in ("auto", algo) or protocol not in ("auto", proto):
            continue
        time_us = _time_us(cell, size_bytes, index, factors, rule, topo)
        if math.isfinite(time_us) and (best is None or time_us < best[2]):
            best = (algo, proto, time_us, cell)
    if best is None:
        raise NotApplicableError(
            "algorithm/protocol", f"{algorithm}/{protocol}",
            f"a combination NCCL enables for {collective} on this topology (see `dpcost nccl-table`)",
        )
    return best
