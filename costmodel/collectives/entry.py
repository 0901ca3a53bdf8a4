"""The registry of (primitive, algorithm) cost formulas.

Each :class:`Entry` holds one formula function ``terms(N, n, p, o) -> Terms`` written once
for floats, numpy arrays and sympy symbols (see :mod:`costmodel.collectives.ops`), its parameters, its
validity conditions and its source. Families of algorithms live in
:mod:`costmodel.collectives.formulas`; importing them fills the registry.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

from costmodel.names import Algorithm, Primitive
from dpbase.errors import InputError, check_switch, whole_count
from dpbase.values import field, frozen

# A plain namedtuple: ``typing.NamedTuple`` compiles a ForwardRef per field at import (start-up).
Terms = collections.namedtuple("Terms", "steps wire reduce sent_max recv_max total aux_max steps_inter wire_inter",
                               defaults=(0, 0, 0))
Terms.__doc__ = """Cost terms of one collective, each an expression of N, n and the parameters.

``steps``/``wire``: α count and β bytes on the (intra-node, or only) level;
``steps_inter``/``wire_inter``: the same on the inter-node level (hierarchical only);
``reduce``: γ bytes on the critical path; ``sent_max``/``recv_max``: bytes sent/received
by the busiest rank; ``total``: bytes put on all links; ``aux_max``: bytes through the
busiest auxiliary endpoint that is not a rank (a dedicated server, a switch port).
"""


@frozen
class Param:
    """A parameter of an algorithm: ``name`` (Python/CLI), its ``symbol`` and default."""

    name: str
    symbol: str
    default: Any
    description: str
    kind: str = "int"  # int | bool | chunks (int or "auto")


@frozen
class Entry:
    primitive: Primitive
    algorithm: Algorithm
    terms: Callable[..., Terms]
    summary: str
    source: str
    conditions: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()
    validate: Callable[[int, dict[str, Any]], None] | None = None
    in_network: bool = False
    hierarchical: bool = False

    @property
    def key(self) -> tuple[Primitive, Algorithm]:
        return (self.primitive, self.algorithm)

    @property
    def pipelined(self) -> bool:
        return any(p.kind == "chunks" for p in self.params)

    @property
    def param_names(self) -> frozenset[str]:
        """The names of the parameters this algorithm takes."""
        return frozenset(p.name for p in self.params)

    def taken(self, given: Any) -> dict[str, Any]:
        """The share of ``given`` (a mapping or (name, value) pairs) this algorithm takes: what a
        query, a comm model or a sweep passes on to it, the rest left to the algorithms that take it."""
        pairs = given.items() if hasattr(given, "items") else given
        return {name: value for name, value in pairs if name in self.param_names}

    def check_params(self, given: dict[str, Any]) -> None:
        """Refuse a parameter the algorithm does not have (a form it lacks is not silently its
        default one), naming the ones it has, and a value its kind does not take
        (:func:`check_param_value`)."""
        known = {p.name: p for p in self.params}
        for name, value in given.items():
            if name not in known:
                raise InputError(name, value, f"a parameter of {self.algorithm.value} "
                                 f"{self.primitive.value}: {', '.join(known) or 'it has none'}")
            check_param_value(known[name], value)

    def resolve_params(self, given: dict[str, Any]) -> dict[str, Any]:
        """Defaults filled in; unknown parameter names rejected (:meth:`check_params`)."""
        self.check_params(given)
        return {p.name: given.get(p.name, p.default) for p in self.params}


def check_param_value(param: Param, value: Any) -> None:
    """A given parameter value of its kind: a switch (True or False: text such as "no" would read
    as true), or a whole number >= 1 (chunks: or "auto"). A sympy expression passes (a formula
    may keep a parameter symbolic)."""
    if param.kind == "bool":  # a switch selects a formula: never a symbol
        check_switch(param.name, value)  # numpy's 0-d booleans too
        return
    if getattr(value, "free_symbols", None):  # a formula may keep a number symbolic
        return
    if getattr(value, "ndim", 0):  # the planner's vectorised paths: an array of values, each checked
        _check_param_array(param, value)
        return
    if param.kind == "chunks" and value == "auto":
        return
    try:  # an integer, as the ranks of a prediction (4.0 is not one: dpbase.errors.whole_count)
        whole = whole_count(param.name, value) >= 1
    except InputError:
        whole = False
    if not whole:
        raise InputError(param.name, value, "an integer >= 1 or 'auto'" if param.kind == "chunks" else "an integer >= 1")


def _check_param_array(param: Param, values: Any) -> None:
    import numpy as np

    values = np.asarray(values)  # numbers only: a switch never reaches here (check_param_value)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(values) | (values < 1) | (values != np.floor(values)) if values.dtype.kind in "fiu" else None
    if bad is None or bad.any():
        shown = values.flat[0] if bad is None else values[bad].flat[0]
        raise InputError(param.name, shown.item() if hasattr(shown, "item") else shown, "an integer >= 1")


CHUNKS = Param("chunks", "k", "auto", "pipeline chunks per rank buffer ('auto' = optimal)", "chunks")


@frozen
class ParamsView:
    """Attribute access to resolved parameter values (numbers or sympy symbols)."""

    values: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.values[name]
        except KeyError:
            raise AttributeError(name) from None
