"""Collective times the planner's sweep precomputes, per (GPU layout, algorithm).

Two views of the same numbers, memoised in a :class:`CommCache` (NCCL's constants and each
layout's NCCL topology are loaded once per cache):

* :meth:`CommCache.function` — ``comm(primitive, size_bytes) -> seconds`` for one layout and
  algorithm, one call at a time, with the semantics of :class:`costmodel.cluster.comm.CommModel`
  for a named algorithm (the all-reduce algorithm, and the same name for
  reduce-scatter/all-gather where the registry has it, else their fastest; NCCL's forced
  algorithm for all-reduce and its own choice otherwise under the nccl backend);
* :meth:`CommCache.batch` — the same ``comm`` over many layouts at once: given an array of
  sizes it returns one row per layout. Under the ideal backend a whole table (layouts ×
  every size the sweep asks for) is one numpy evaluation per algorithm
  (:func:`costmodel.cluster.mapping.times_on_cluster`, the scalar path's mapping and formulas);
  under the nccl backend a table is one :func:`costmodel.nccl.model.nccl_tables_s` pass, and
  :meth:`CommCache.prepare` builds the tables of several (primitive, algorithm) calls in one.

The tests check both against ``CommModel.time_s`` itself.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from costmodel.cluster import mapping as cluster
from costmodel.cluster.comm import NCCL_FORCEABLE
from costmodel.cluster.rccl_choice import rccl_call
from costmodel.cluster.stacks import default_stack
from costmodel.cluster.stacks import runs as stack_runs
from costmodel.collectives.registry import algorithms_for, get
from costmodel.nccl.names import to_nccl_algorithm
from dpbase.errors import DpcostError, NotApplicableError

CommFn = Callable[[str, float], float]
# The all-reduce algorithms a plan may force in NCCL mode (CommModel's, in registry names).
NCCL_ALGORITHMS = ("auto", *NCCL_FORCEABLE)


def all_reduce_algorithms(system: Any, nodes: int, backend: str) -> tuple[str, ...]:
    """All-reduce algorithms to sweep: NCCL's under its model, else every registered one the
    system's stack runs (NCCL, RCCL: ring/tree/in-network) on 1 or ``nodes`` nodes, with
    "auto" (the stack's own choice) under rccl and on calibrated clusters."""
    if backend == "nccl":
        return NCCL_ALGORITHMS
    stack = default_stack(system)
    layouts = [cluster.layout(system, 1), cluster.layout(system, max(nodes, 1))]
    named = tuple(a.value for a in algorithms_for("all-reduce") if stack_runs(stack, "all-reduce", a)
                  and any(cluster.applicable(get("all-reduce", a), lay) for lay in layouts))
    # the stack's own choice: RCCL's tuning model under rccl, or the curve a calibrated cluster
    # measured with the stack choosing (RCCL's, NCCL's): sweep it beside the forced algorithms
    measured_auto = any(c.collective == "all-reduce" and c.algorithm == "auto" for c in getattr(system, "measured", ()))
    return ("auto", *named) if measured_auto or backend == "rccl" else named


def zero_algorithm_ok(algorithm: str, zero_stage: int, backend: str) -> bool:
    """ZeRO ≥ 1 runs reduce-scatter/all-gather: keep only algorithms that name one of them. Under
    the nccl backend that is ``auto`` alone: a forced algorithm forces the all-reduce only
    (:class:`costmodel.cluster.comm.CommModel`), so its ZeRO rows would be ``auto``'s
    collectives under another name, and its emitted ``NCCL_ALGO`` would force reduce-scatter and
    all-gather onto an algorithm they were not timed with."""
    if zero_stage == 0:
        return True
    if backend == "nccl":
        return algorithm == "auto"
    return algorithm == "auto" or algorithm in _sharding_algorithms()


@functools.cache
def _sharding_algorithms() -> frozenset[str]:
    """Algorithms the registry has a reduce-scatter or an all-gather for."""
    return frozenset(a.value for p in ("reduce-scatter", "all-gather") for a in algorithms_for(p))


@functools.lru_cache(maxsize=256)
def _nccl_answers(algorithm: str, primitive: str) -> bool:
    """Whether NCCL's model has the collective and an algorithm of that name."""
    from costmodel.nccl.names import COLLECTIVES

    if primitive not in COLLECTIVES:
        return False
    try:
        to_nccl_algorithm(algorithm)
    except DpcostError:
        return False
    return True


def outside_backend(algorithms, backend: str) -> str | None:
    """The plan's note that named algorithms NCCL does not run are timed on the α-β mapping (the
    step model's rule, :meth:`costmodel.cluster.comm.CommModel._backend_for`), or None: the header
    says "nccl backend", and their rows are not NCCL's model."""
    if backend == "nccl":
        library, own_algorithms = "NCCL", "ring, tree or NVLS"
        outside = [a for a in algorithms if a != "auto" and not _nccl_answers(a, "all-reduce")]
    elif backend == "rccl":  # the same rule under RCCL's model (rccl_choice.runs_as_named)
        from costmodel.cluster.rccl_choice import MSCCL_ALGORITHM, runs_as_named
        from costmodel.nccl.rccl import msccl_size_range
        from dpbase.units import format_size

        library, own_algorithms = "RCCL", "ring or tree"
        # two-shot is RCCL's only where MSCCL's schedule takes the call (one MI300-class node, some
        # sizes): said apart, as the rows on other layouts and sizes are the textbook's
        outside = [a for a in algorithms if a not in ("auto", MSCCL_ALGORITHM) and not runs_as_named("all-reduce", a)]
        if MSCCL_ALGORITHM in algorithms:
            low, high = (format_size(size) for size in msccl_size_range())
            two_shot = (f"{MSCCL_ALGORITHM} is RCCL's only where MSCCL's all-pairs schedule takes the call (one node "
                        f"of 8 MI300-class GPUs, {low}-{high}); its other rows are timed on the textbook α-β-γ model")
            rest = outside_backend([a for a in algorithms if a != MSCCL_ALGORITHM], backend)
            return two_shot if rest is None else f"{rest}; {two_shot}"
    else:
        return None
    if not outside:
        return None
    names = ", ".join(outside)
    what, own = (f"is not an {library} algorithm", "its") if len(outside) == 1 else (f"are not {library} algorithms",
                                                                                      "their")
    # parameter servers have no library counterpart; a collective algorithm has the library's own instead
    instead = "" if set(outside) == {"parameter-server"} else f"; {library} itself would run {own_algorithms}"
    return (f"{names} {what}: {own} rows are timed on the textbook α-β-γ model "
            f"(ideal backend), not {library}'s{instead}")


def backend_tables(backend: str) -> Any:
    """NCCL's constants for the nccl backend (loaded once per cache), else None."""
    if backend != "nccl":
        return None
    from costmodel.nccl import load_tables

    return load_tables()


class CommCache:
    """Memoised collective times on one system and backend, shared by every algorithm.

    A call is keyed by (layout, primitive, the algorithm(s) that really run, size): an
    algorithm that does not implement reduce-scatter falls back to the fastest one, so all
    such algorithms share those entries, as they share NCCL's own choice. Where an algorithm
    cannot run on a layout the batch tables hold NaN (the scalar functions raise).
    """

    def __init__(self, system: Any, backend: str, params: tuple[tuple[str, Any], ...] = ()) -> None:
        self.system, self.backend = system, backend
        self.params = params  # the named algorithm's parameters, e.g. parameter servers (("servers", 4),)
        self.nccl_tables = backend_tables(backend)
        self._times: dict[tuple, float] = {}
        self._tables: dict[tuple, np.ndarray] = {}
        self._names: dict[tuple, list[str]] = {}
        self._row_groups: dict[tuple, dict[tuple[str, ...], list[int]]] = {}
        self._layouts: dict[tuple[int, int], cluster.Layout] = {}
        self._topologies: dict[tuple[int, int], Any] = {}
        # Whether any time came from a path that reads the links' latency (the α-β formulas, RCCL's
        # model over them, a calibrated cluster's scaled model); NCCL's model reads its own tables.
        self.link_latency_used = False
        if backend == "nccl":  # a system NCCL's model cannot describe (AMD: RCCL) is the user's error,
            self._topology(self.layout(1, system.gpus_per_node))  # not "every layout unrunnable"

    def layout(self, nodes: int, per_node: int) -> cluster.Layout:
        """The (memoised) layout of ``nodes`` × ``per_node`` GPUs."""
        if (nodes, per_node) not in self._layouts:
            self._layouts[nodes, per_node] = cluster.layout(self.system, nodes, per_node)
        return self._layouts[nodes, per_node]

    def _candidates(self, lay: cluster.Layout, primitive: str) -> tuple[list[str], list[str]]:
        """(every algorithm the layout runs, those the system's stack lets ``auto`` pick)."""
        key = (lay.nodes, lay.gpus_per_node, primitive)
        if key not in self._names:
            stack = default_stack(self.system)  # auto picks only what the system's stack runs (as CommModel)
            every = cluster.cluster_candidates(primitive, lay)
            self._names[key] = ([e.algorithm.value for e in every],
                                [e.algorithm.value for e in every if stack_runs(stack, e.primitive, e.algorithm)])
        return self._names[key]

    def _runs(self, lay: cluster.Layout, primitive: str, algorithm: str) -> tuple[str, ...]:
        every, auto = self._candidates(lay, primitive)
        return (algorithm,) if algorithm in every else tuple(auto)

    def _accepted(self, primitive: str, algorithm: str) -> dict[str, Any]:
        """The cache's parameters the (primitive, algorithm) entry takes (none for most)."""
        if not self.params:
            return {}
        return get(primitive, algorithm).taken(self.params)

    def _ideal(self, lay: cluster.Layout, primitive: str, algorithm: str, size_bytes: float) -> float:
        runs = self._runs(lay, primitive, algorithm)
        key = (lay.nodes, lay.gpus_per_node, primitive, runs, size_bytes)
        if key not in self._times:
            def alpha_beta_s(name: str) -> float:
                return cluster.predict_on_cluster(primitive, name, lay, size_bytes=size_bytes,
                                                  **self._accepted(primitive, name)).time_s

            found = self._rccl(lay, primitive, algorithm, size_bytes, alpha_beta_s)
            self._times[key] = found if found is not None else min(alpha_beta_s(name) for name in runs)
        return self._times[key]

    def _rccl(self, lay: cluster.Layout, primitive: str, algorithm: str, size_bytes: float,
              alpha_beta_s: Callable[[str], float]) -> float | None:
        """The rccl backend's time where RCCL's tuning model decides (as ``predict_collective``),
        else None."""
        if self.backend != "rccl":
            return None
        named = self._runs(lay, primitive, algorithm) == (algorithm,)  # else it falls back to auto
        found = rccl_call(primitive, size_bytes, lay, algorithm if named else "auto", alpha_beta_s)
        return None if found is None else found[0]

    def _nccl_runs(self, algorithm: str, primitive: str = "all-reduce") -> bool:
        """Whether NCCL's model answers this algorithm and collective (else, e.g. parameter servers
        or ZeRO++'s all-to-all, the α-β path)."""
        return self.backend == "nccl" and _nccl_answers(algorithm, primitive)

    def _topology(self, lay: cluster.Layout) -> Any:
        """NCCL's graph search for the layout, shared by every cache and call on an equal system
        (:func:`costmodel.cluster.backends.nccl_topology`: NCCL searches once per communicator;
        the cost tables built on a topology are kept by its identity, so they are shared too)."""
        from costmodel.cluster.backends import nccl_topology

        where = (lay.nodes, lay.gpus_per_node)
        if where not in self._topologies:
            self._topologies[where] = nccl_topology(lay, self.nccl_tables)
        return self._topologies[where]

    def _nccl(self, lay: cluster.Layout, primitive: str, algorithm: str, size_bytes: float) -> float:
        from costmodel.nccl import nccl_time

        forced = to_nccl_algorithm(algorithm) if primitive == "all-reduce" else "auto"
        key = (lay.nodes, lay.gpus_per_node, primitive, forced, size_bytes)
        if key not in self._times:
            self._times[key] = nccl_time(primitive, size_bytes, self._topology(lay),
                                         tables=self.nccl_tables, algorithm=forced).time_s
        return self._times[key]

    def function(self, nodes: int, per_node: int, algorithm: str) -> CommFn | None:
        """``comm(primitive, size_bytes)`` for one layout and algorithm; None if it cannot run."""
        lay = self.layout(nodes, per_node)
        if not self.runnable(lay, algorithm):
            return None
        measured = bool(getattr(self.system, "measured", ()))
        seen: dict[tuple[str, float], float] = {}

        def comm(primitive: str, size_bytes: float) -> float:
            key = (primitive, size_bytes)
            if key not in seen:
                timer = self._nccl if self._by_nccl(algorithm, primitive) else (
                    self._measured if measured else self._ideal)
                seen[key] = 0.0 if lay.ranks == 1 else timer(lay, primitive, algorithm,
                                                             float(size_bytes))
            return seen[key]

        return comm

    def runnable(self, lay: cluster.Layout, algorithm: str) -> bool:
        """Whether the hardware can run the all-reduce algorithm on the layout at all."""
        return algorithm == "auto" or self._nccl_runs(algorithm) or cluster.applicable(get("all-reduce", algorithm), lay)

    def _groups(self, lays: list[cluster.Layout], primitive: str, algorithm: str) -> dict[tuple[str, ...], list[int]]:
        """The layouts' row numbers by the algorithms they run (memoised: a sweep asks for the
        same layouts once per bucket size and dtype)."""
        key = (tuple((lay.nodes, lay.gpus_per_node) for lay in lays), primitive, algorithm)
        if key not in self._row_groups:
            groups: dict[tuple[str, ...], list[int]] = {}
            for i, lay in enumerate(lays):
                groups.setdefault(self._runs(lay, primitive, algorithm), []).append(i)
            self._row_groups[key] = groups
        return self._row_groups[key]

    def _ideal_table(self, lays: list[cluster.Layout], primitive: str, algorithm: str,
                     sizes: np.ndarray) -> np.ndarray:
        out = np.full((len(lays), sizes.size), np.nan)
        for runs, rows in self._groups(lays, primitive, algorithm).items():
            if not runs:
                continue
            members = [lays[i] for i in rows]
            key = (tuple((lay.nodes, lay.gpus_per_node) for lay in members), primitive, runs,
                   sizes.tobytes())
            if key not in self._tables:  # NaN-propagating min: like the scalar path, which raises
                per_name = {name: cluster.times_on_cluster(primitive, name, members, sizes,
                                                           **self._accepted(primitive, name)) for name in runs}
                table = np.min(list(per_name.values()), axis=0)
                if self.backend == "rccl":
                    table = self._rccl_rows(members, primitive, algorithm, sizes, per_name, table)
                self._tables[key] = table
            out[rows] = self._tables[key]
        return out

    def _rccl_rows(self, members: list[cluster.Layout], primitive: str, algorithm: str, sizes: np.ndarray,
                   per_name: dict[str, np.ndarray], table: np.ndarray) -> np.ndarray:
        """The table's cells where RCCL's tuning model decides, as the scalar path answers them."""
        table = np.array(table, dtype=float, copy=True)
        for i, lay in enumerate(members):
            for j, size in enumerate(sizes.tolist()):
                def alpha_beta_s(name: str, i: int = i, j: int = j, size: float = size, lay=lay) -> float:
                    if name in per_name:
                        return float(per_name[name][i, j])
                    return float(cluster.times_on_cluster(primitive, name, [lay], np.array([size]),
                                                          **self._accepted(primitive, name))[0, 0])

                found = self._rccl(lay, primitive, algorithm, float(size), alpha_beta_s)
                if found is not None and lay.ranks > 1:
                    table[i, j] = found
        return table

    def _nccl_table(self, lays: list[cluster.Layout], primitive: str, algorithm: str,
                    sizes: np.ndarray) -> np.ndarray:
        """Every layout at every size in one pass (:func:`costmodel.nccl.model.nccl_tables_s`, or
        the table :meth:`prepare` built with others; equal to the scalar :meth:`_nccl` cell by
        cell); NaN rows where NCCL does not enable a forced algorithm."""
        key = self._nccl_key(lays, primitive, algorithm, sizes)
        if key not in self._tables:
            self._nccl_tables(lays, [(primitive, algorithm)], sizes)
        return self._tables[key]

    def _nccl_key(self, lays: list[cluster.Layout], primitive: str, algorithm: str, sizes: np.ndarray) -> tuple:
        forced = to_nccl_algorithm(algorithm) if primitive == "all-reduce" else "auto"
        return ("nccl", tuple((lay.nodes, lay.gpus_per_node) for lay in lays), primitive, forced, sizes.tobytes())

    def _nccl_tables(self, lays: list[cluster.Layout], calls: list[tuple[str, str]], sizes: np.ndarray) -> None:
        """The tables of several (primitive, algorithm) calls in one pass
        (:func:`costmodel.nccl.model.nccl_tables_s`), kept as :meth:`_nccl_table` keeps each."""
        from costmodel.nccl.model import nccl_tables_s

        keys = list(dict.fromkeys(self._nccl_key(lays, primitive, algorithm, sizes) for primitive, algorithm in calls))
        found = nccl_tables_s([key[2:4] for key in keys], sizes, [self._topology(lay) for lay in lays],
                              tables=self.nccl_tables)  # key[2:4]: (primitive, NCCL's forced algorithm)
        self._tables.update(zip(keys, found))

    def prepare(self, layouts, calls, sizes=()) -> None:
        """Compute at once the tables :meth:`batch` would build one (primitive, algorithm) at a
        time over ``layouts`` at ``sizes``, for the ``calls`` NCCL's model answers (one pass over
        all their cells: :meth:`_nccl_tables`); the others are left to their own path."""
        lays = [self.layout(n, g) for n, g in layouts]
        grid = distinct(sizes)
        calls = [(primitive, algorithm) for primitive, algorithm in calls
                 if self.nccl_answers(algorithm, primitive)
                 and self._nccl_key(lays, primitive, algorithm, grid) not in self._tables]
        if calls and grid.size:
            self._nccl_tables(lays, calls, grid)

    def _measured(self, lay: cluster.Layout, primitive: str, algorithm: str, size_bytes: float) -> float:
        return float(self._calibrated_table([lay], primitive, algorithm, np.asarray([size_bytes]))[0, 0])

    def _calibrated_table(self, lays: list[cluster.Layout], primitive: str, algorithm: str,
                          sizes: np.ndarray) -> np.ndarray:
        """A calibrated cluster (measured curves): each call as the CommModel answers it, so the
        plan uses the measured curve where one covers it and the scaled model elsewhere."""
        from costmodel.cluster.comm import CommModel


        out = np.full((len(lays), sizes.size), np.nan)
        for i, lay in enumerate(lays):
            model = CommModel(lay, algorithm, self.backend, params=self.params)
            for j, size in enumerate(sizes.tolist()):
                key = ("measured", lay.nodes, lay.gpus_per_node, primitive, algorithm, size)
                if key not in self._times:
                    try:
                        self._times[key] = model.time_s(primitive, size)
                    except NotApplicableError:
                        self._times[key] = math.nan
                out[i, j] = self._times[key]
        return out

    def times(self, lays: list[cluster.Layout], primitive: str, algorithm: str,
              sizes: np.ndarray) -> np.ndarray:
        """Seconds of ``primitive`` for each layout (rows) at each size (columns); NaN where
        the algorithm cannot run. Layouts must have more than one rank."""
        if self._by_nccl(algorithm, primitive):
            table = self._nccl_table
        else:
            table = self._calibrated_table if getattr(self.system, "measured", ()) else self._ideal_table
        return table(lays, primitive, algorithm, np.asarray(sizes, dtype=float).ravel())

    def nccl_answers(self, algorithm: str, primitive: str) -> bool:
        """Whether NCCL's model answers this call (not on a calibrated cluster, whose measured
        curves answer): then a batch's table equals the scalar calls cell by cell."""
        return not getattr(self.system, "measured", ()) and self._nccl_runs(algorithm, primitive)

    def _by_nccl(self, algorithm: str, primitive: str) -> bool:
        """:meth:`nccl_answers`; every other path reads the links' latency: ``link_latency_used``."""
        nccl = self.nccl_answers(algorithm, primitive)
        if not nccl:
            self.link_latency_used = True
        return nccl

    def batch(self, layouts, algorithm: str, sizes=()) -> LayoutBatch:
        """``comm(primitive, sizes)`` over several (nodes, GPUs per node) layouts at once.

        ``sizes`` are the sizes the caller will ask for: under the ideal backend each
        primitive is evaluated at all of them in one go (other sizes still work).
        """
        lays = [self.layout(n, g) for n, g in layouts]
        return LayoutBatch(self, lays, algorithm, distinct(sizes))


def distinct(values) -> np.ndarray:
    """The distinct values, sorted (``np.unique`` without its lazy import of numpy.ma)."""
    ordered = np.sort(np.asarray(values, dtype=float).ravel())
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))] if ordered.size else ordered


class LayoutBatch:
    """``comm(primitive, size)`` over many layouts: an array of shape (layouts, *size.shape)."""

    def __init__(self, cache: CommCache, lays: list[cluster.Layout], algorithm: str,
                 sizes: np.ndarray) -> None:
        self.cache, self.lays, self.algorithm = cache, lays, algorithm
        # The announced sizes: one table per layout, where the backend's table is vectorised (all
        # but a calibrated system's measured curves, which are looked up call by call).
        vectorised = cache.backend != "nccl" or not getattr(cache.system, "measured", ())
        self.sizes = sizes if vectorised and sizes.size else None
        self._announced: dict[str, np.ndarray] = {}  # per primitive: the table at the announced sizes

    @property
    def runnable(self) -> np.ndarray:
        """Per layout: whether the all-reduce algorithm can run there at all."""
        return np.array([self.cache.runnable(lay, self.algorithm) for lay in self.lays])

    def __call__(self, primitive: str, size) -> np.ndarray:
        wanted = np.asarray(size, dtype=float)
        if self.sizes is not None:
            index = np.minimum(np.searchsorted(self.sizes, wanted), self.sizes.size - 1)
            if (self.sizes[index] == wanted).all():
                if primitive not in self._announced:
                    self._announced[primitive] = self.cache.times(self.lays, primitive, self.algorithm, self.sizes)
                return self._announced[primitive][:, index]
        grid = distinct(wanted)  # sizes outside the announced ones
        return self.cache.times(self.lays, primitive, self.algorithm, grid)[:, np.searchsorted(grid, wanted)]
