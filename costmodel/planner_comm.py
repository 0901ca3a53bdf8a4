"""Collective-time functions the planner's sweep precomputes from, one per (layout, algorithm).

Each is ``comm(primitive, size_bytes) -> seconds`` with the semantics of
:class:`costmodel.cluster.CommModel` for a named algorithm (the all-reduce algorithm, and the
same name for reduce-scatter/all-gather where the registry has it, else their fastest),
memoised per call so the thousands of bucket sizes the sweep asks for cost one prediction
each. Under the NCCL backend the algorithm is NCCL's (``auto`` = NCCL's own choice) and
the NCCL constants are loaded once per planning run instead of once per call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from costmodel import cluster
from costmodel.registry import algorithms_for, get

CommFn = Callable[[str, float], float]
# CommModel's names for NCCL's algorithms (costmodel/cluster.py, CommModel._nccl).
NCCL_ALGORITHMS = ("auto", "ring", "double-binary-tree", "in-network")
_NCCL_NAME = {"double-binary-tree": "tree", "in-network": "nvls"}


def all_reduce_algorithms(system: Any, nodes: int, backend: str) -> tuple[str, ...]:
    """All-reduce algorithms to sweep: every registered one runnable on 1 or ``nodes`` nodes."""
    if backend == "nccl":
        return NCCL_ALGORITHMS
    layouts = [cluster.layout(system, 1), cluster.layout(system, max(nodes, 1))]
    return tuple(a.value for a in algorithms_for("all-reduce")
                 if any(cluster.applicable(get("all-reduce", a), lay) for lay in layouts))


def zero_algorithm_ok(algorithm: str, zero_stage: int, backend: str) -> bool:
    """ZeRO ≥ 1 runs reduce-scatter/all-gather: keep only algorithms that name one of them."""
    if zero_stage == 0:
        return True
    if backend == "nccl":
        return algorithm == "auto"
    names = {a.value for p in ("reduce-scatter", "all-gather") for a in algorithms_for(p)}
    return algorithm in names


def _memoised(function: CommFn) -> CommFn:
    cache: dict[tuple[str, float], float] = {}

    def comm(primitive: str, size_bytes: float) -> float:
        key = (primitive, float(size_bytes))
        if key not in cache:
            cache[key] = function(primitive, float(size_bytes))
        return cache[key]

    return comm


def _nccl_function(system: Any, nodes: int, per_node: int, algorithm: str, tables: Any) -> CommFn:
    from costmodel.nccl import nccl_time, topology_for

    topo = topology_for(system, nodes, per_node)
    forced = _NCCL_NAME.get(algorithm, algorithm)

    def comm(primitive: str, size_bytes: float) -> float:
        chosen = forced if primitive == "all-reduce" else "auto"
        return nccl_time(primitive, size_bytes, topo, tables=tables, algorithm=chosen).time_s

    return comm


def backend_tables(backend: str) -> Any:
    """NCCL's constants for the nccl backend (load once per run), else None."""
    if backend != "nccl":
        return None
    from costmodel.nccl import load_tables

    return load_tables()


def comm_function(system: Any, nodes: int, per_node: int, algorithm: str, backend: str,
                  nccl_tables: Any = None) -> CommFn | None:
    """The memoised collective-time function, or None when the algorithm cannot run here.

    ``nccl_tables`` (from :func:`backend_tables`) is required with the nccl backend.
    """
    lay = cluster.layout(system, nodes, per_node)
    if backend == "nccl":
        return _memoised(_nccl_function(system, nodes, per_node, algorithm, nccl_tables))
    if not cluster.applicable(get("all-reduce", algorithm), lay):
        return None
    return _memoised(cluster.CommModel(lay, algorithm, "ideal").time_s)
