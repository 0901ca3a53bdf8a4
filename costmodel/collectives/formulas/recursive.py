"""Recursive doubling/halving, Rabenseifner and Bruck (Thakur et al. 2005; Bruck et al. 1997).

Non-power-of-two N: the r = N − 2^⌊log2 N⌋ highest ranks first fold their data into
ranks 0..r−1, the 2^⌊log2 N⌋ remaining ranks run the power-of-two algorithm, and the
result is sent back to the folded ranks (MPICH's scheme): never a rejection.
"""

from __future__ import annotations

from typing import Any

from costmodel.collectives.entry import Entry, Terms
from costmodel.collectives.formulas.common import fold
from costmodel.names import Algorithm as A
from costmodel.names import Primitive as P

MPICH_AR = "Thakur et al. 2005 §5 (MPICH allreduce.c: fold r = p − 2^⌊lg p⌋ ranks with full-vector send/recv)"
FOLD_NOTE = "any N; non-power-of-two N folds r = N − 2^⌊log2 N⌋ ranks first and unfolds last"


def rd_allreduce(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """log2 N exchanges of the whole vector (+2 fold steps when N is not a power of two)."""
    L, p2, r, f = fold(N, o)
    return Terms(steps=L + 2 * f, wire=(L + 2 * f) * n, reduce=(L + f) * n,
                 sent_max=(L + f) * n, recv_max=(L + f) * n, total=(p2 * L + 2 * r) * n)


def rabenseifner_allreduce(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """Recursive-halving reduce-scatter + recursive-doubling all-gather on 2^⌊log2 N⌋ ranks."""
    L, p2, r, f = fold(N, o)
    halves = 2 * (p2 - 1) * n / p2
    return Terms(steps=2 * L + 2 * f, wire=halves + 2 * f * n, reduce=(p2 - 1) * n / p2 + f * n,
                 sent_max=halves + f * n, recv_max=halves + f * n, total=(2 * r + 2 * (p2 - 1)) * n)


def rd_allgather(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """Exchange everything held with partner 2^j away; folded ranks' blocks ride with their partner."""
    L, p2, r, f = fold(N, o)
    block = n / N
    extra = o.minsum(r, L)
    heaviest = (p2 - 1 + extra + f * (N - 1)) * block
    return Terms(steps=L + 2 * f, wire=heaviest + f * block, reduce=0, sent_max=heaviest,
                 recv_max=(N - 1) * block, total=(N - 1) * n)


def rh_reduce_scatter(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """Send the half you will not own to partner 2^(L−1−j) away, keep and reduce the other half."""
    L, p2, r, f = fold(N, o)
    block = n / N
    heaviest = (N * f + p2 - 1 + o.minsum(r, L)) * block
    return Terms(steps=L + 2 * f, wire=heaviest + f * block, reduce=heaviest,
                 sent_max=(N - 1 + f) * block, recv_max=heaviest, total=(N - 1) * n + r * block)


def rabenseifner_reduce(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """Recursive-halving reduce-scatter, then a binomial gather of the reduced blocks to rank 0."""
    L, p2, r, f = fold(N, o)
    piece = n / p2
    return Terms(steps=2 * L + f, wire=f * n + 2 * (p2 - 1) * piece, reduce=f * n + (p2 - 1) * piece,
                 sent_max=(p2 - 1) * piece + n / 2, recv_max=f * n + 2 * (p2 - 1) * piece,
                 total=r * n + (p2 - 1) * n + L * n / 2)


def bruck_allgather(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """⌈log2 N⌉ steps sending 2^j blocks to rank i−2^j (the last step the remainder), then a local rotation."""
    block = n / N
    return Terms(steps=o.clog2(N), wire=(N - 1) * block, reduce=0,
                 sent_max=(N - 1) * block, recv_max=(N - 1) * block, total=(N - 1) * n)


def bruck_alltoall(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """⌈log2 N⌉ steps; step j sends every block whose (rotated) index has bit j set."""
    moved = o.popsum(N) * n / N
    return Terms(steps=o.clog2(N), wire=moved, reduce=0, sent_max=moved, recv_max=moved, total=N * moved)

ENTRIES: tuple[Entry, ...] = (
    Entry(P.ALL_REDUCE, A.RECURSIVE_DOUBLING, rd_allreduce,
          "log2 N full-vector exchanges; latency-optimal for power-of-two N", MPICH_AR, (FOLD_NOTE,)),
    Entry(P.ALL_REDUCE, A.RABENSEIFNER, rabenseifner_allreduce,
          "recursive-halving reduce-scatter + recursive-doubling all-gather",
          "Rabenseifner 2004; Thakur et al. 2005 §5 (MPICH allreduce.c)", (FOLD_NOTE,)),
    Entry(P.ALL_GATHER, A.RECURSIVE_DOUBLING, rd_allgather,
          "log2 N exchanges of doubling size", "Thakur et al. 2005 §4 (MPICH allgather.c)", (FOLD_NOTE,)),
    Entry(P.REDUCE_SCATTER, A.RECURSIVE_HALVING, rh_reduce_scatter,
          "log2 N exchanges of halving size", "Thakur et al. 2005 §4 (MPICH red_scat.c)", (FOLD_NOTE,)),
    Entry(P.REDUCE, A.RABENSEIFNER, rabenseifner_reduce,
          "recursive-halving reduce-scatter + binomial gather to the root",
          "Rabenseifner 2004; Thakur et al. 2005 §5 (MPICH reduce.c)", (FOLD_NOTE,)),
    Entry(P.ALL_GATHER, A.BRUCK, bruck_allgather,
          "⌈log2 N⌉ steps for any N; bandwidth-optimal", "Bruck et al. 1997, IEEE TPDS 8(11); MPICH allgather.c"),
    Entry(P.ALL_TO_ALL, A.BRUCK, bruck_alltoall,
          "⌈log2 N⌉ steps, (popcount-sum/N)·n bytes: wins for small messages",
          "Bruck et al. 1997; Thakur et al. 2005 §6 (MPICH alltoall.c)"),
)
