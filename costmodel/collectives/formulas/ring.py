"""Ring algorithms (Patarasuk & Yuan 2009; Thakur et al. 2005 §4–5; NCCL ring) and the pipelined chain."""

from __future__ import annotations

from typing import Any

from costmodel.collectives.entry import CHUNKS, Entry, Terms
from costmodel.names import Algorithm as A
from costmodel.names import Primitive as P

THAKUR = "Thakur, Rabenseifner & Gropp 2005, Int. J. HPC Appl. 19(1) (MPICH allgather.c, red_scat.c)"


def ring_allreduce(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """Reduce-scatter then all-gather around the ring: 2(N−1) steps of n/N."""
    share = 2 * (N - 1) * n / N
    return Terms(steps=2 * (N - 1), wire=share, reduce=(N - 1) * n / N,
                 sent_max=share, recv_max=share, total=2 * (N - 1) * n)


def ring_allgather(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """N−1 steps; each rank forwards the block it received last."""
    share = (N - 1) * n / N
    return Terms(steps=N - 1, wire=share, reduce=0, sent_max=share, recv_max=share, total=(N - 1) * n)


def ring_reduce_scatter(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """N−1 steps; each rank adds its block to the partial sum it received and forwards it."""
    share = (N - 1) * n / N
    return Terms(steps=N - 1, wire=share, reduce=share, sent_max=share, recv_max=share, total=(N - 1) * n)


def chain_broadcast(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """Chain 0→1→…→N−1 in k chunks: N+k−2 rounds of n/k."""
    k = p.chunks
    rounds = N + k - 2
    return Terms(steps=rounds, wire=rounds * n / k, reduce=0, sent_max=n, recv_max=n, total=(N - 1) * n)


def chain_reduce(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """Chain N−1→…→0 in k chunks, each rank adding its chunk on the way: N+k−2 rounds of n/k."""
    k = p.chunks
    rounds = N + k - 2
    return Terms(steps=rounds, wire=rounds * n / k, reduce=rounds * n / k,
                 sent_max=n, recv_max=n, total=(N - 1) * n)

ENTRIES: tuple[Entry, ...] = (
    Entry(P.ALL_REDUCE, A.RING, ring_allreduce,
          "reduce-scatter + all-gather around a ring; bandwidth-optimal for any N",
          "Patarasuk & Yuan 2009, JPDC 69(2); Thakur et al. 2005 §5.3; NCCL tuning.cc nsteps = 2(nRanks−1)"),
    Entry(P.ALL_GATHER, A.RING, ring_allgather, "N−1 neighbour steps", THAKUR),
    Entry(P.REDUCE_SCATTER, A.RING, ring_reduce_scatter, "N−1 neighbour steps with reduction", THAKUR),
    Entry(P.BROADCAST, A.PIPELINED_CHAIN, chain_broadcast,
          "chunks flow down a chain; bandwidth-optimal as k grows, latency linear in N",
          "Chan et al. 2007 (pipelined broadcast); NCCL ring broadcast",
          conditions=("chunks k ≥ 1",), params=(CHUNKS,)),
    Entry(P.REDUCE, A.PIPELINED_CHAIN, chain_reduce,
          "chunks flow up a chain, reduced on the way", "Chan et al. 2007; NCCL ring reduce",
          conditions=("chunks k ≥ 1",), params=(CHUNKS,)),
)
