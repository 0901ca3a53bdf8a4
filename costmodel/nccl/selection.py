"""NCCL's per-call choice: time every enabled (algorithm, protocol) cell, take the argmin.

``ncclTopoGetAlgoTime``: ``time_us = lat * latCount + nBytes / (1000 * bw)`` with the tree
correction factor and the multi-node ring "plateau" latency factor (reference §1.4); a lone
call has ``latCount = 1``. ``nBytes`` is nccl-tests' size (the full buffer for all-gather and
reduce-scatter). Ties go to the first cell in NCCL's index order. The formula is
:func:`costmodel.nccl.terms.estimate_us`.

    >>> from costmodel.nccl.topology import NcclGraph, NcclTopology
    >>> from costmodel.nccl.tables import load_tables
    >>> g = NcclGraph(n_channels=12, bw_intra_GBps=20.0, bw_inter_GBps=20.0)
    >>> topo = NcclTopology(n_ranks=8, n_nodes=1, compute_capability=80, ring=g, tree=g)
    >>> choose("all-reduce", 2**30, topo, load_tables())[:2]
    ('ring', 'Simple')
"""

from __future__ import annotations

import math

from costmodel.nccl.names import FAMILIES
from costmodel.nccl.tables import NcclTables
from costmodel.nccl.terms import (
    CellTerms,
    cell_terms,
    comm_channels,
    corrected,
    estimate_us,
    plateau_rule,
    size_index,
    tree_factors,
)
from costmodel.nccl.topology import NcclTopology
from costmodel.nccl.tuning import CostCell, tune_collective
from dpbase.bounded import evict_oldest
from dpbase.errors import NotApplicableError

__all__ = ["allowed", "candidates", "cell_time_us", "choose", "choose_terms", "cost_table", "plateau_factor", "size_index",
           "tree_correction"]


def tree_correction(cell: CostCell, size_bytes: float, topo: NcclTopology, t: NcclTables) -> float:
    """``treeCorrectionFactor[proto][log2(nBytes>>6)]`` for Tree (and NVLSTree on Blackwell+x86)."""
    return corrected(tree_factors(cell, topo, t), size_index(size_bytes))


def plateau_factor(collective: str, cell: CostCell, size_bytes: float, topo: NcclTopology, t: NcclTables) -> float:
    """Multi-node Ring/Simple all-reduce latency factor (1.4 on sm80+, 1.9 before)."""
    rule = plateau_rule(collective, cell, topo, t)
    if rule is None or size_bytes / (comm_channels(topo, t) * topo.n_ranks) < rule[0]:
        return 1.0
    return rule[1]


def cell_time_us(collective: str, cell: CostCell, size_bytes: float, topo: NcclTopology, t: NcclTables) -> float:
    """NCCL's estimated time of one cell for ``size_bytes`` (math.inf when not applicable)."""
    if not cell.applicable:
        return math.inf
    return estimate_us(cell_terms(collective, cell, topo, t), size_bytes, size_index(size_bytes))


_COST_TABLES: dict[tuple[str, NcclTopology, int], tuple[NcclTables, dict]] = {}
_COST_TABLES_SIZE = 4096


def cost_table(collective: str, topo: NcclTopology, tables: NcclTables) -> dict:
    """NCCL's cost table for a communicator, built once per (collective, topology, tables) as NCCL
    fills it once per communicator: it does not depend on the message size. Keyed by the topology's
    value and the tables object (kept in the entry, so its id cannot be reused while cached)."""
    key = (collective, topo, id(tables))
    found = _COST_TABLES.get(key)
    if found is None or found[0] is not tables:
        evict_oldest(_COST_TABLES, _COST_TABLES_SIZE)
        found = _COST_TABLES[key] = (tables, tune_collective(collective, topo, tables))
    return found[1]


_CANDIDATES: dict[tuple[str, int, int], tuple[NcclTopology, NcclTables, list]] = {}


def candidates(collective: str, topo: NcclTopology, tables: NcclTables) -> list[tuple[str, str, CostCell, CellTerms]]:
    """The enabled cells in NCCL's index order, each with its size-independent terms
    (:func:`costmodel.nccl.terms.cell_terms`), built once per communicator like :func:`cost_table`.
    Keyed by the objects' identity (hashing a topology's value costs more than a small choice):
    the entry keeps both objects, so their ids cannot be reused while cached, and an equal
    topology rebuilt elsewhere gets its own."""
    key = (collective, id(topo), id(tables))
    found = _CANDIDATES.get(key)
    if found is None or found[0] is not topo or found[1] is not tables:
        evict_oldest(_CANDIDATES, _COST_TABLES_SIZE)
        rows = [(algo, proto, cell, cell_terms(collective, cell, topo, tables))
                for (algo, proto), cell in cost_table(collective, topo, tables).items() if cell.applicable]
        found = _CANDIDATES[key] = (topo, tables, rows)
    return found[2]


def allowed(collective: str, topo: NcclTopology, tables: NcclTables, algorithm: str = "auto",
            protocol: str = "auto") -> list[tuple[str, str, CostCell, CellTerms]]:
    """The candidates ``NCCL_ALGO``/``NCCL_PROTO`` leave; NotApplicableError when none."""
    algorithms = FAMILIES.get(algorithm, (algorithm,))
    rows = [row for row in candidates(collective, topo, tables)
            if (algorithm == "auto" or row[0] in algorithms) and protocol in ("auto", row[1])]
    if not rows:
        raise _not_enabled(collective, algorithm, protocol)
    return rows


def _not_enabled(collective: str, algorithm: str, protocol: str) -> NotApplicableError:
    return NotApplicableError("algorithm/protocol", f"{algorithm}/{protocol}",
                              f"a combination NCCL enables for {collective} on this topology (see `dpcost nccl-table`)")


def choose_terms(collective: str, size_bytes: float, topo: NcclTopology, tables: NcclTables,
                 algorithm: str = "auto", protocol: str = "auto") -> tuple[str, str, float, CostCell, CellTerms]:
    """:func:`choose` with the chosen cell's terms."""
    best = None
    index = size_index(size_bytes)
    for algo, proto, cell, terms in allowed(collective, topo, tables, algorithm, protocol):
        time_us = estimate_us(terms, size_bytes, index)
        if math.isfinite(time_us) and (best is None or time_us < best[2]):
            best = (algo, proto, time_us, cell, terms)
    if best is None:
        raise _not_enabled(collective, algorithm, protocol)
    return best


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
    :func:`costmodel.nccl.terms.estimate_us` on the cell's terms.
    """
    return choose_terms(collective, size_bytes, topo, tables, algorithm, protocol)[:4]

