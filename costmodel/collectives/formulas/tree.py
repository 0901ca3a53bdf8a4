"""Binomial trees (Chan et al. 2007; MPICH) and NCCL's double binary tree (Sanders et al. 2009).

Double binary tree: two complementary heap-ordered binary trees (tree 1 over ranks 0..N−1,
tree 2 over the same ranks in reverse order) so that every rank is an inner node in at most
one tree; each tree carries half the data in k pipelined chunks. Height ⌊log2 N⌋, so the
latency grows with log2 N while each rank sends and receives at most 2n in all.
"""

from __future__ import annotations

from typing import Any

from costmodel.collectives.entry import CHUNKS, Entry, Terms
from costmodel.collectives.formulas.common import scatter_recv_max_blocks
from costmodel.names import Algorithm as A
from costmodel.names import Primitive as P

CHAN = "Chan, Heimlich, Purkayastha & van de Geijn 2007, CCPE 19(13) (MST algorithms); MPICH bcast.c/reduce.c"
DBT = "Sanders, Speck & Träff 2009, Parallel Computing 35(12); Jeaugey, NVIDIA blog 'NCCL 2.4' (2019)"


def binomial_broadcast(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """⌈log2 N⌉ rounds; every holder forwards the whole buffer."""
    c = o.clog2(N)
    return Terms(steps=c, wire=c * n, reduce=0, sent_max=c * n, recv_max=n, total=(N - 1) * n)


def binomial_reduce(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """⌈log2 N⌉ rounds toward rank 0; the root receives and adds ⌈log2 N⌉ buffers."""
    c = o.clog2(N)
    return Terms(steps=c, wire=c * n, reduce=c * n, sent_max=n, recv_max=c * n, total=(N - 1) * n)


def binomial_allreduce(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """Binomial reduce to rank 0 then binomial broadcast."""
    c = o.clog2(N)
    return Terms(steps=2 * c, wire=2 * c * n, reduce=c * n, sent_max=c * n, recv_max=c * n,
                 total=2 * (N - 1) * n)


def binomial_scatter(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """Halving ranges down a binomial tree: ⌈log2 N⌉ rounds, (N−1)/N·n through the root."""
    block = n / N
    return Terms(steps=o.clog2(N), wire=(N - 1) * block, reduce=0, sent_max=(N - 1) * block,
                 recv_max=scatter_recv_max_blocks(N, o) * block, total=o.popsum(N) * block)


def binomial_gather(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """The binomial scatter run backwards."""
    block = n / N
    return Terms(steps=o.clog2(N), wire=(N - 1) * block, reduce=0,
                 sent_max=scatter_recv_max_blocks(N, o) * block, recv_max=(N - 1) * block,
                 total=o.popsum(N) * block)


def scatter_allgather_broadcast(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """van de Geijn: binomial scatter of N blocks, then a ring all-gather."""
    block = n / N
    return Terms(steps=o.clog2(N) + N - 1, wire=2 * (N - 1) * block, reduce=0,
                 sent_max=2 * (N - 1) * block,
                 recv_max=(scatter_recv_max_blocks(N, o) + N - 1) * block,
                 total=o.popsum(N) * block + (N - 1) * n)


def gather_broadcast_allgather(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """Binomial gather of the N blocks to rank 0, then a binomial broadcast of the whole buffer.

    The root sends the most (⌈log2 N⌉ whole buffers in the broadcast, nothing in the gather); the
    busiest receiver is the non-root rank with the largest gather subtree: its children's blocks
    and then the whole buffer."""
    c, block = o.clog2(N), n / N
    return Terms(steps=2 * c, wire=(N - 1) * block + c * n, reduce=0, sent_max=c * n,
                 recv_max=(N + scatter_recv_max_blocks(N, o) - 1) * block,
                 total=o.popsum(N) * block + (N - 1) * n)


def dbt_allreduce(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """Reduce up both trees, then broadcast down, each phase ⌊log2 N⌋+k−1 pipelined rounds."""
    k, height = p.chunks, o.flog2(N)
    wide = o.min(1, N - 2)  # 1 when some rank has two children in one tree (N ≥ 3)
    period = (1 + wide) * n / (2 * k)
    rounds = height + k - 1
    ends = (N - o.min(1, o.max(0, N - 3))) * n / 2  # parent + child links of the busiest rank, n/2 each
    return Terms(steps=2 * rounds * (1 + wide), wire=2 * rounds * period, reduce=rounds * period,
                 sent_max=o.min(2 * n, ends), recv_max=o.min(2 * n, ends), total=2 * (N - 1) * n)


def dbt_broadcast(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """The root feeds one half to each of two complementary trees over ranks 1..N−1."""
    k = p.chunks
    rounds = 1 + o.flog2(N - 1) + k - 1
    return Terms(steps=2 * rounds, wire=rounds * n / k, reduce=0, sent_max=n, recv_max=n, total=(N - 1) * n)

ENTRIES: tuple[Entry, ...] = (
    Entry(P.BROADCAST, A.BINOMIAL, binomial_broadcast, "minimum spanning tree broadcast", CHAN),
    Entry(P.REDUCE, A.BINOMIAL, binomial_reduce, "minimum spanning tree reduce", CHAN),
    Entry(P.ALL_REDUCE, A.BINOMIAL, binomial_allreduce, "binomial reduce + binomial broadcast",
          "Thakur et al. 2005 (MPICH-1 allreduce); " + CHAN),
    Entry(P.SCATTER, A.BINOMIAL, binomial_scatter, "minimum spanning tree scatter", CHAN),
    Entry(P.GATHER, A.BINOMIAL, binomial_gather, "minimum spanning tree gather", CHAN),
    Entry(P.BROADCAST, A.SCATTER_ALLGATHER, scatter_allgather_broadcast,
          "binomial scatter + ring all-gather (long messages)",
          "van de Geijn (Barnett et al. 1994); MPICH bcast.c '(lgp+p−1)α + 2n(p−1)/p β'"),
    Entry(P.ALL_GATHER, A.GATHER_BROADCAST, gather_broadcast_allgather,
          "binomial gather to one rank, then binomial broadcast of the whole buffer",
          "Open MPI coll/basic mca_coll_basic_allgather_intra ('Gather and broadcast'); seed 002 (All "
          "Gather = Gather then Bcast); " + CHAN),
    Entry(P.ALL_REDUCE, A.DOUBLE_BINARY_TREE, dbt_allreduce,
          "two complementary pipelined binary trees, each with half the data: log N latency",
          DBT, ("chunks k ≥ 1",), (CHUNKS,)),
    Entry(P.BROADCAST, A.DOUBLE_BINARY_TREE, dbt_broadcast,
          "two-tree broadcast: each half down one of two complementary trees", DBT,
          ("chunks k ≥ 1",), (CHUNKS,)),
)
