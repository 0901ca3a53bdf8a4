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
from dpbase.errors import InputError
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

    def check_params(self, given: dict[str, Any]) -> None:
        """Refuse a parameter the algorithm does not have (a form it lacks is not silently its
        default one), naming the ones it has."""
        known = [p.name for p in self.params]
        for name in given:
            if name not in known:
                raise InputError(name, given[name], f"a parameter of {self.algorithm.value} "
                                 f"{self.primitive.value}: {', '.join(known) or 'it has none'}")

    def resolve_params(self, given: dict[str, Any]) -> dict[str, Any]:
        """Defaults filled in; unknown parameter names rejected (:meth:`check_params`)."""
        self.check_params(given)
        return {p.name: given.get(p.name, p.default) for p in self.params}


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
