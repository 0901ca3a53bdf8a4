"""The registry of (primitive, algorithm) cost formulas: one table, built once from the families.

Families of algorithms live in :mod:`costmodel.collectives.formulas`, each module exporting
its ``ENTRIES``; the table is assembled on first use (so importing this module stays cheap).
"""

from __future__ import annotations

from functools import cache

from costmodel.collectives.entry import Entry
from costmodel.errors import NotApplicableError
from costmodel.names import Algorithm, Primitive, algorithm_named, primitive_named


@cache
def _table() -> dict[tuple[Primitive, Algorithm], Entry]:
    from costmodel.collectives.formulas import ENTRIES

    table: dict[tuple[Primitive, Algorithm], Entry] = {}
    for entry in ENTRIES:
        if entry.key in table:
            raise ValueError(f"duplicate registry entry {entry.key}")
        table[entry.key] = entry
    return table


@cache
def entries() -> tuple[Entry, ...]:
    """Every registered entry, in primitive then algorithm order (sorted once per process)."""
    order = {p: i for i, p in enumerate(Primitive)}
    return tuple(sorted(_table().values(), key=lambda e: (order[e.primitive], e.algorithm.value)))


def algorithms_for(primitive: str | Primitive) -> list[Algorithm]:
    prim = primitive_named(primitive)
    return [e.algorithm for e in entries() if e.primitive is prim]


def param_names(primitive: str | Primitive, name: str | None = None) -> dict[str, frozenset[str]]:
    """The algorithms of ``primitive`` and the parameter names each takes, or only those that take
    ``name``: what a query, a sweep or ``compare`` passes on and refuses from."""
    prim = primitive_named(primitive)
    return {e.algorithm.value: e.param_names for e in entries()
            if e.primitive is prim and (name is None or name in e.param_names)}


def get(primitive: str | Primitive, algorithm: str | Algorithm) -> Entry:
    """The entry for a pair; a clear error if the algorithm does not implement the primitive."""
    prim, alg = primitive_named(primitive), algorithm_named(algorithm)
    entry = _table().get((prim, alg))
    if entry is None:
        names = [a.value for a in algorithms_for(prim)]
        raise NotApplicableError("algorithm", alg.value,
                                 f"for {prim.value}: one of {', '.join(sorted(names))}")
    return entry
