"""Linear (flat) scatter and gather: the root talks to every rank in turn."""

from __future__ import annotations

from typing import Any

from costmodel.collectives.entry import Entry, Terms
from costmodel.names import Algorithm as A
from costmodel.names import Primitive as P

SOURCE = "Chan et al. 2007 §3 (simple/linear algorithms); MPICH scatter.c/gather.c"


def linear_scatter(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """N−1 messages of n/N from the root, one after another."""
    block = n / N
    return Terms(steps=N - 1, wire=(N - 1) * block, reduce=0, sent_max=(N - 1) * block,
                 recv_max=block, total=(N - 1) * block)


def linear_gather(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """N−1 messages of n/N into the root, one after another."""
    block = n / N
    return Terms(steps=N - 1, wire=(N - 1) * block, reduce=0, sent_max=block,
                 recv_max=(N - 1) * block, total=(N - 1) * block)

ENTRIES: tuple[Entry, ...] = (
    Entry(P.SCATTER, A.LINEAR, linear_scatter, "root sends each rank its block", SOURCE),
    Entry(P.GATHER, A.LINEAR, linear_gather, "root receives each rank's block", SOURCE),
)
