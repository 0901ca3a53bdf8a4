"""Direct (one-shot) exchanges: every message posted in one round.

α is paid per message at the busiest endpoint, so posting N−1 messages costs (N−1)α; in this
model direct exchanges cost what pairwise ones do — their real advantage (no per-step
synchronisation, concurrent NVLink stores) is what NCCL mode and calibration capture.
"""

from __future__ import annotations

from typing import Any

from costmodel.collectives.entry import Entry, Terms
from costmodel.names import Algorithm as A
from costmodel.names import Primitive as P

MPICH_A2A = "Thakur et al. 2005 §6 (MPICH alltoall.c: pairwise exchange, isend/irecv)"


def direct_allreduce(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """One-shot: every rank sends its whole buffer to every other rank and reduces locally."""
    return Terms(steps=N - 1, wire=(N - 1) * n, reduce=(N - 1) * n,
                 sent_max=(N - 1) * n, recv_max=(N - 1) * n, total=N * (N - 1) * n)


def two_shot_allreduce(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """Direct reduce-scatter then direct all-gather."""
    share = 2 * (N - 1) * n / N
    return Terms(steps=2 * (N - 1), wire=share, reduce=(N - 1) * n / N,
                 sent_max=share, recv_max=share, total=2 * (N - 1) * n)


def blockwise(reduces: bool) -> Any:
    def terms(N: Any, n: Any, p: Any, o: Any) -> Terms:
        share = (N - 1) * n / N
        return Terms(steps=N - 1, wire=share, reduce=share if reduces else 0,
                     sent_max=share, recv_max=share, total=(N - 1) * n)

    terms.__doc__ = "N−1 messages of n/N per rank" + (", each reduced on arrival" if reduces else "")
    return terms


def send_recv(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """Every rank sends n bytes to its successor and receives n from its predecessor (nccl-tests sendrecv)."""
    return Terms(steps=1, wire=n, reduce=0, sent_max=n, recv_max=n, total=N * n)

ENTRIES: tuple[Entry, ...] = (
    Entry(P.ALL_REDUCE, A.DIRECT, direct_allreduce,
          "one-shot: everyone sends everything to everyone, N(N−1) copies of the buffer: both ways over each of "
          "the N(N−1)/2 pairs of ranks (seed 000's naive exchange counts the pairs)",
          "seed 000 (naive one-to-one exchange); NCCL/TRT-LLM one-shot all-reduce"),
    Entry(P.ALL_REDUCE, A.TWO_SHOT, two_shot_allreduce,
          "direct reduce-scatter + direct all-gather", "TRT-LLM / NCCL two-shot all-reduce; Thakur et al. 2005"),
    Entry(P.ALL_GATHER, A.DIRECT, blockwise(False), "each rank sends its block to all", MPICH_A2A),
    Entry(P.REDUCE_SCATTER, A.DIRECT, blockwise(True), "each rank sends block j to rank j", MPICH_A2A),
    Entry(P.REDUCE_SCATTER, A.PAIRWISE, blockwise(True),
          "N−1 steps; at step j rank i sends block i+j to rank i+j", "Thakur et al. 2005 §4 (MPICH red_scat.c)"),
    Entry(P.ALL_TO_ALL, A.PAIRWISE, blockwise(False),
          "N−1 steps; at step j rank i sends to i+j and receives from i−j", MPICH_A2A),
    Entry(P.ALL_TO_ALL, A.DIRECT, blockwise(False), "all N−1 messages posted at once", MPICH_A2A),
    Entry(P.SEND_RECV, A.DIRECT, send_recv, "one message to the next rank",
          "nccl-tests sendrecv_perf (doc/PERFORMANCE.md: busbw factor 1)"),
)
