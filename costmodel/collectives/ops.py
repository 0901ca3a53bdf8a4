"""Arithmetic namespaces: one formula, three kinds of numbers.

Every cost formula in :mod:`costmodel.collectives.formulas` is written once, as a function of
``(N, n, params, o)`` where ``o`` is one of the namespaces below. Called with
:data:`SCALAR` it evaluates Python floats (the fast CLI path: no numpy, no sympy);
with :data:`VECTOR` it evaluates numpy arrays elementwise (the planner's grids); with
:func:`symbolic_ops` it builds the sympy expression that the docs print and the tests
check. The formula is therefore the single source of truth for all three.

Integer helpers used by the formulas (all exact on integers):

``flog2(x)``   ⌊log2 x⌋          ``clog2(x)``   ⌈log2 x⌉ (0 for x = 1)
``notpow2(x)`` 1 if x is not a power of two, else 0  (= ⌈log2 x⌉ − ⌊log2 x⌋)
``popsum(x)``  Σ_{b<x} popcount(b): blocks moved by a binomial scatter / Bruck all-to-all
``minsum(r, L)`` Σ_{j<L} min(2^j, r): extra blocks carried when r folded ranks ride along
"""

from __future__ import annotations

import functools
import math
from typing import Any


def _popsum_int(x: int) -> int:
    total, bit = 0, 0
    while (1 << bit) < x:
        period = 1 << (bit + 1)
        total += (x // period) * (1 << bit) + max(0, x % period - (1 << bit))
        bit += 1
    return total


def _minsum_int(r: int, levels: int) -> int:
    return sum(min(1 << j, r) for j in range(levels))


class ScalarOps:
    """Python ints/floats; integer helpers exact via int arithmetic."""

    name = "scalar"

    @staticmethod
    def flog2(x: Any) -> int:
        return int(x).bit_length() - 1

    @staticmethod
    def clog2(x: Any) -> int:
        return (int(x) - 1).bit_length() if x > 1 else 0

    def notpow2(self, x: Any) -> int:
        return self.clog2(x) - self.flog2(x)

    @staticmethod
    def popsum(x: Any) -> int:
        return _popsum_int(int(x))

    @staticmethod
    def minsum(r: Any, levels: Any) -> int:
        return _minsum_int(int(r), int(levels))

    max = staticmethod(max)
    min = staticmethod(min)
    sqrt = staticmethod(math.sqrt)

    @staticmethod
    def floor(x: Any) -> int:
        return math.floor(x)

    @staticmethod
    def pow2(x: Any) -> int:
        return 1 << int(x)

    @staticmethod
    def where(cond: Any, a: Any, b: Any) -> Any:
        return a if cond else b


class VectorOps:
    """numpy arrays, elementwise; integer helpers exact for N < 2**52."""

    name = "vector"

    def __init__(self) -> None:
        import numpy

        self.np = numpy

    def flog2(self, x: Any) -> Any:
        np = self.np
        x = np.asarray(x, dtype=float)
        _, exponent = np.frexp(x)
        return (exponent - 1).astype(float)

    def clog2(self, x: Any) -> Any:
        np = self.np
        x = np.asarray(x, dtype=float)
        return np.where(x > 1, self.flog2(np.maximum(x - 1, 1)) + 1, 0.0)

    def notpow2(self, x: Any) -> Any:
        return self.clog2(x) - self.flog2(x)

    def popsum(self, x: Any) -> Any:
        np = self.np
        x = np.asarray(x, dtype=np.int64)
        total = np.zeros_like(x)
        for bit in range(int(x.max()).bit_length() if x.size else 0):
            period = 1 << (bit + 1)
            total += (x // period) * (1 << bit) + np.maximum(0, x % period - (1 << bit))
        return total.astype(float)

    def minsum(self, r: Any, levels: Any) -> Any:
        np = self.np
        r = np.asarray(r, dtype=float)
        levels = np.asarray(levels, dtype=float)
        top = int(levels.max()) if levels.size else 0
        total = np.zeros(np.broadcast(r, levels).shape)
        for j in range(top):
            total += np.where(j < levels, np.minimum(float(1 << j), r), 0.0)
        return total

    def max(self, *args: Any) -> Any:
        result = args[0]
        for value in args[1:]:
            result = self.np.maximum(result, value)
        return result

    def min(self, *args: Any) -> Any:
        result = args[0]
        for value in args[1:]:
            result = self.np.minimum(result, value)
        return result

    def sqrt(self, x: Any) -> Any:
        return self.np.sqrt(x)

    def floor(self, x: Any) -> Any:
        return self.np.floor(x)

    def pow2(self, x: Any) -> Any:
        return self.np.exp2(x)

    def where(self, cond: Any, a: Any, b: Any) -> Any:
        return self.np.where(cond, a, b)


SCALAR = ScalarOps()


@functools.cache
def vector_ops() -> VectorOps:
    """The numpy namespace (numpy imported on first use, one instance per process)."""
    return VectorOps()
