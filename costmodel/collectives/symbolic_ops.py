"""The sympy namespace of :mod:`costmodel.collectives.ops` (imported only when symbols are wanted)."""

from __future__ import annotations

import functools
from typing import Any

import sympy as sp

from costmodel.collectives.ops import _minsum_int, _popsum_int


class PopSum(sp.Function):
    r"""Σ_{b<N} popcount(b): block-hops of a binomial scatter, blocks of a Bruck all-to-all.

    Equals (N/2)·log2 N when N is a power of two.
    """

    is_integer = True
    is_nonnegative = True

    @classmethod
    def eval(cls, x: Any) -> Any:
        if x.is_Integer:
            return sp.Integer(_popsum_int(int(x)))
        return None

    def _latex(self, printer: Any) -> str:
        return r"\sum_{b<%s}\operatorname{popcount}(b)" % printer._print(self.args[0])


class MinSum(sp.Function):
    r"""Σ_{j<L} min(2^j, r): extra blocks carried in recursive doubling/halving with r folded ranks."""

    is_integer = True
    is_nonnegative = True

    @classmethod
    def eval(cls, r: Any, levels: Any) -> Any:
        if r.is_Integer and levels.is_Integer:
            return sp.Integer(_minsum_int(int(r), int(levels)))
        if r == 0:
            return sp.Integer(0)
        return None

    def _latex(self, printer: Any) -> str:
        r, levels = (printer._print(a) for a in self.args)
        return r"\sum_{j<%s}\min(2^{j}, %s)" % (levels, r)


class SymbolicOps:
    """sympy expressions; integer helpers stay exact when symbols are replaced by integers."""

    name = "symbolic"

    @staticmethod
    def flog2(x: Any) -> Any:
        return sp.floor(sp.log(x, 2))

    @staticmethod
    def clog2(x: Any) -> Any:
        return sp.ceiling(sp.log(x, 2))

    def notpow2(self, x: Any) -> Any:
        return self.clog2(x) - self.flog2(x)

    popsum = staticmethod(PopSum)
    minsum = staticmethod(MinSum)
    max = staticmethod(sp.Max)
    min = staticmethod(sp.Min)
    sqrt = staticmethod(sp.sqrt)
    floor = staticmethod(sp.floor)

    @staticmethod
    def pow2(x: Any) -> Any:
        return sp.Integer(2) ** x

    @staticmethod
    def where(cond: Any, a: Any, b: Any) -> Any:
        return sp.Piecewise((a, cond), (b, True))


@functools.cache
def symbolic_ops() -> SymbolicOps:
    """The sympy namespace (one instance per process)."""
    return SymbolicOps()


# The functions a printed formula may hold beyond sympy's own, with what each stands for: the
# `formula` output defines them, so its text reads (and evaluates) without dpcost at hand.
HELPERS = {PopSum: "PopSum(N) = Σ_{b<N} popcount(b)", MinSum: "MinSum(r, L) = Σ_{j<L} min(2^j, r)"}


def helpers_in(expression: Any) -> list[str]:
    """The definitions of :data:`HELPERS` that ``expression`` uses."""
    return [text for function, text in HELPERS.items() if expression.has(function)]
