"""Sub-expressions shared by the formula families."""

from __future__ import annotations

from typing import Any


def fold(N: Any, o: Any) -> tuple[Any, Any, Any, Any]:
    """(L, p2, r, f): L = ⌊log2 N⌋, p2 = 2^L, r = N − p2 folded ranks, f = [r > 0]."""
    levels = o.flog2(N)
    p2 = o.pow2(levels)
    return levels, p2, N - p2, o.notpow2(N)


def scatter_recv_max_blocks(N: Any, o: Any) -> Any:
    """Blocks received by the busiest non-root rank of a binomial scatter: max(⌊2^{C−2}⌋, N − 2^{C−1})."""
    c = o.clog2(N)
    return o.max(o.floor(o.pow2(c) / 4), N - o.pow2(c) / 2)
