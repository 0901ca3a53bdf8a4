"""Symbolic formulas: the registry's functions called with sympy symbols.

>>> from costmodel.collectives.symbols import N, alpha, beta, gamma, n
>>> f = formula("all-reduce", "ring")
>>> (f.time - (2 * (N - 1) * alpha + 2 * (N - 1) / N * n * beta + (N - 1) / N * n * gamma)).simplify()
0
"""

from __future__ import annotations

import re
from typing import Any

from costmodel.collectives.bounds import entry_bound
from costmodel.collectives.entry import Entry, ParamsView
from costmodel.collectives.registry import get
from costmodel.collectives.symbolic_ops import helpers_in, symbolic_ops
from costmodel.names import Primitive
from dpbase.values import frozen

_LOG2 = re.compile(r"\\frac\{\\log\{\\left\((.+?) \\right\)\}\}\{\\log\{\\left\(2 \\right\)\}\}")


def latex(expr: Any) -> str:
    """LaTeX of an expression with log(x)/log(2) written as log2 x."""
    import sympy as sp

    return _LOG2.sub(r"\\log_2 (\1)", sp.latex(expr))


@frozen(slots=False)
class Formula:
    """One registry entry as sympy expressions (render as LaTeX in Jupyter)."""

    entry: Entry
    terms: dict[str, Any]
    time: Any
    lower_bound: Any
    params: dict[str, Any]

    @property
    def latency(self) -> Any:
        from costmodel.collectives import symbols as s

        return s.alpha * self.terms["steps"] + s.alpha_inter * self.terms["steps_inter"]

    @property
    def bandwidth(self) -> Any:
        from costmodel.collectives import symbols as s

        return s.beta * self.terms["wire"] + s.beta_inter * self.terms["wire_inter"]

    @property
    def reduction(self) -> Any:
        from costmodel.collectives import symbols as s

        return s.gamma * self.terms["reduce"]

    def latex(self) -> str:
        return latex(self.time)

    def _repr_latex_(self) -> str:
        return f"$T = {self.latex()}$"

    def __repr__(self) -> str:
        return f"Formula({self.entry.primitive.value} / {self.entry.algorithm.value}: T = {self.time})"

    def to_dict(self) -> dict[str, Any]:

        e = self.entry
        return {
            "primitive": e.primitive.value, "algorithm": e.algorithm.value, "summary": e.summary,
            "time": str(self.time), "time_latex": latex(self.time),
            "alpha_term": str(self.latency), "beta_term": str(self.bandwidth),
            "gamma_term": str(self.reduction),
            "terms": {name: str(value) for name, value in self.terms.items()},
            "lower_bound": str(self.lower_bound), "lower_bound_latex": latex(self.lower_bound),
            "conditions": list(e.conditions), "parameters": {p.name: p.description for p in e.params},
            "where": helpers_in(self.time) + [h for h in helpers_in(self.lower_bound) if h not in helpers_in(self.time)],
            "fixed": {k: v for k, v in self.params.items() if isinstance(v, bool)},
            "source": e.source,
        }


def formula(primitive: str | Primitive, algorithm: str, **fixed: Any) -> Formula:
    """The entry's terms, time and lower bound as sympy expressions.

    Numeric parameters stay symbols (k, S, G) unless given; boolean ones (``colocated``,
    ``pipelined``) take their defaults unless given, since they select a different formula.
    """
    import sympy as sp

    from costmodel.collectives import symbols as s

    entry = get(primitive, algorithm)
    entry.check_params(fixed)  # leaders=True for ring: refused, not ring's own formula
    params: dict[str, Any] = {}
    for p in entry.params:
        if p.name in fixed:
            params[p.name] = fixed[p.name]
        elif p.kind == "bool":
            params[p.name] = p.default
        else:
            params[p.name] = s.PARAM_SYMBOLS[p.symbol]
    o = symbolic_ops()
    raw = entry.terms(s.N, s.n, ParamsView(params), o)
    terms = {name: sp.simplify(sp.sympify(value)) for name, value in raw._asdict().items()}
    time = (s.alpha * terms["steps"] + s.beta * terms["wire"] + s.alpha_inter * terms["steps_inter"]
            + s.beta_inter * terms["wire_inter"] + s.gamma * terms["reduce"])
    b = entry_bound(entry, s.N, s.n, params, o)
    bound = s.alpha * b.steps + s.beta * b.wire + s.gamma * b.reduce
    return Formula(entry, terms, sp.expand(time) if entry.hierarchical else time, bound, params)
