"""Collective-time functions the planner's sweep precomputes from, one per (layout, algorithm).

Each is ``comm(primitive, size_bytes) -> seconds`` with the semantics of
:class:`costmodel.cluster.CommModel` for a named algorithm (the all-reduce algorithm, and the
same name for reduce-scatter/all-gather where the registry has it, else their fastest;
NCCL's forced algorithm for all-reduce and its own choice otherwise under the nccl backend),
memoised in a :class:`CommCache` so the thousands of bucket sizes a sweep asks for cost one
prediction each, and the NCCL constants are loaded once per cache instead of once per call.
The tests check these functions against ``CommModel.time_s`` itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from costmodel import cluster
from costmodel.errors import DpcostError
from costmodel.evaluate import evaluate_grid
from costmodel.names import Algorithm, Primitive
from costmodel.registry import algorithms_for, get

CommFn = Callable[[str, float], float]
# CommModel's names for NCCL's algorithms (costmodel/cluster.py, CommModel._nccl).
NCCL_ALGORITHMS = ("auto", "ring", "double-binary-tree", "in-network")
_NCCL_NAME = {"double-binary-tree": "tree", "in-network": "nvls"}
# The collectives a synchronisation issues (costmodel/gradsync.py), filled in by prefill().
PREFILLED_PRIMITIVES = ("all-reduce", "reduce-scatter", "all-gather")


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


def backend_tables(backend: str) -> Any:
    """NCCL's constants for the nccl backend (loaded once per cache), else None."""
    if backend != "nccl":
        return None
    from costmodel.nccl import load_tables

    return load_tables()


class CommCache:
    """Memoised collective times on one system and backend, shared by every algorithm.

    A call is keyed by (layout, primitive, the algorithm that really runs, size): an
    algorithm that does not implement reduce-scatter falls back to the fastest one, so all
    such algorithms share those entries, as they share NCCL's own choice.
    """

    def __init__(self, system: Any, backend: str) -> None:
        self.system, self.backend = system, backend
        self.nccl_tables = backend_tables(backend)
        self._times: dict[tuple, float] = {}
        self._names: dict[tuple, list[str]] = {}
        self._topologies: dict[tuple[int, int], Any] = {}

    def _candidates(self, lay: cluster.Layout, primitive: str) -> list[str]:
        key = (lay.nodes, lay.gpus_per_node, primitive)
        if key not in self._names:
            self._names[key] = [e.algorithm.value for e in cluster.cluster_candidates(primitive, lay)]
        return self._names[key]

    def _ideal(self, lay: cluster.Layout, primitive: str, algorithm: str, size_bytes: float) -> float:
        names = self._candidates(lay, primitive)
        runs = [algorithm] if algorithm in names else names
        key = (lay.nodes, lay.gpus_per_node, primitive, tuple(runs), size_bytes)
        if key not in self._times:
            self._times[key] = min(cluster.predict_on_cluster(primitive, name, lay, size_bytes=size_bytes)
                                   ["time_s"] for name in runs)
        return self._times[key]

    def _vector(self, lay: cluster.Layout, primitive: str, name: str, sizes: np.ndarray) -> np.ndarray:
        """Times at many sizes: one numpy evaluation where the cluster mapping is a flat α/β."""
        entry = get(primitive, name)
        probe = cluster.predict_on_cluster(primitive, name, lay, size_bytes=float(sizes[0]))
        tree_over_nodes = (entry.algorithm is Algorithm.DOUBLE_BINARY_TREE and lay.nodes > 1
                           and entry.primitive is Primitive.ALL_REDUCE)
        if tree_over_nodes:
            return np.array([cluster.predict_on_cluster(primitive, name, lay, size_bytes=float(s))
                             ["time_s"] for s in sizes])
        if entry.hierarchical:  # intra link for the node phases, network for the inter phase
            return evaluate_grid(primitive, name, lay.ranks, sizes, lay.intra_alpha_s, lay.intra_Bps,
                                 0.0, lay.inter_alpha_s, lay.inter_Bps,
                                 gpus_per_node=lay.gpus_per_node)["time_s"]
        return evaluate_grid(primitive, name, lay.ranks, sizes, probe["alpha_s"],
                             probe["bandwidth_Bps"])["time_s"]

    def prefill(self, nodes: int, per_node: int, algorithm: str, sizes) -> None:
        """Compute the ideal times of every primitive at ``sizes`` at once (a speed-up only)."""
        lay = cluster.layout(self.system, nodes, per_node)
        if self.backend == "nccl" or lay.ranks == 1:
            return
        sizes = np.unique(np.asarray([s for s in sizes if s > 0], dtype=float))
        for primitive in PREFILLED_PRIMITIVES:
            names = self._candidates(lay, primitive)
            runs = [algorithm] if algorithm in names else names
            if (lay.nodes, lay.gpus_per_node, primitive, tuple(runs), sizes[0]) in self._times:
                continue
            try:
                times = np.min([self._vector(lay, primitive, name, sizes) for name in runs], axis=0)
            except DpcostError:
                continue
            for size, time_s in zip(sizes.tolist(), times.tolist()):
                self._times[lay.nodes, lay.gpus_per_node, primitive, tuple(runs), size] = time_s

    def _nccl(self, lay: cluster.Layout, primitive: str, algorithm: str, size_bytes: float) -> float:
        from costmodel.nccl import nccl_time, topology_for

        forced = _NCCL_NAME.get(algorithm, algorithm) if primitive == "all-reduce" else "auto"
        where = (lay.nodes, lay.gpus_per_node)
        key = (*where, primitive, forced, size_bytes)
        if key not in self._times:
            if where not in self._topologies:
                self._topologies[where] = topology_for(self.system, *where)
            self._times[key] = nccl_time(primitive, size_bytes, self._topologies[where],
                                         tables=self.nccl_tables, algorithm=forced).time_s
        return self._times[key]

    def function(self, nodes: int, per_node: int, algorithm: str) -> CommFn | None:
        """``comm(primitive, size_bytes)`` for one layout and algorithm; None if it cannot run."""
        lay = cluster.layout(self.system, nodes, per_node)
        if self.backend != "nccl" and not cluster.applicable(get("all-reduce", algorithm), lay):
            return None
        timer = self._nccl if self.backend == "nccl" else self._ideal
        seen: dict[tuple[str, float], float] = {}

        def comm(primitive: str, size_bytes: float) -> float:
            key = (primitive, size_bytes)
            if key not in seen:
                seen[key] = 0.0 if lay.ranks == 1 else timer(lay, primitive, algorithm,
                                                             float(size_bytes))
            return seen[key]

        return comm
