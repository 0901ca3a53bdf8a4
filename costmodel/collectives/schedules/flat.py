"""Ring, chain, direct, pairwise, linear and send/recv schedules."""

from __future__ import annotations

import numpy as np

from costmodel.collectives.schedules.machine import Machine


def blocks(length: int, parts: int) -> list[slice]:
    size = length // parts
    return [slice(i * size, (i + 1) * size) for i in range(parts)]


def ring_reduce_scatter_phase(m: Machine, bufs, groups: list[list[int]], level: str = "intra",
                              shift: int = 0) -> None:
    """In place, all groups in the same rounds: member j of a group ends with its reduced block
    j + ``shift`` (0: its own block, as a reduce-scatter leaves it)."""
    G = len(groups[0])
    sl = blocks(len(bufs[groups[0][0]]), G)
    for s in range(G - 1):
        with m.round(level) as r:
            for ranks in groups:
                for j in range(G):
                    b = (j - 1 - s + shift) % G
                    src, dst = ranks[j], ranks[(j + 1) % G]
                    r.send(src, dst, bufs[src][sl[b]], bufs[dst], sl[b], reduce=True)


def ring_allgather_phase(m: Machine, bufs, groups: list[list[int]], level: str = "intra",
                         shift: int = 0) -> None:
    """In place, all groups in the same rounds: member j's block j + ``shift`` is copied around its ring."""
    G = len(groups[0])
    sl = blocks(len(bufs[groups[0][0]]), G)
    for s in range(G - 1):
        with m.round(level) as r:
            for ranks in groups:
                for j in range(G):
                    b = (j - s + shift) % G
                    src, dst = ranks[j], ranks[(j + 1) % G]
                    r.send(src, dst, bufs[src][sl[b]], bufs[dst], sl[b])


def ring_allreduce(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    """Seed 001's ring, block for block: GPU j first sends its own block j (GPU0 sends a and
    receives e on five GPUs), ends the reduce-scatter with block j + 1 reduced (GPU4 holds the
    whole a, GPU0 the whole b), and the all-gather passes those on."""
    bufs = [a.copy() for a in x]
    groups = [list(range(m.ranks))]
    ring_reduce_scatter_phase(m, bufs, groups, shift=1)
    ring_allgather_phase(m, bufs, groups, shift=1)
    return bufs


def ring_allgather(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    N = m.ranks
    out = [np.zeros(len(x[0]) * N) for _ in range(N)]
    sl = blocks(len(out[0]), N)
    for i in range(N):
        out[i][sl[i]] = x[i]
    ring_allgather_phase(m, out, [list(range(N))])
    return out


def ring_reduce_scatter(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    bufs = [a.copy() for a in x]
    ring_reduce_scatter_phase(m, bufs, [list(range(m.ranks))])
    sl = blocks(len(x[0]), m.ranks)
    return [bufs[i][sl[i]] for i in range(m.ranks)]


def chain_broadcast(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    N, k = m.ranks, p["chunks"]
    bufs = [x[0].copy()] + [np.zeros_like(x[0]) for _ in range(N - 1)]
    sl = blocks(len(x[0]), k)
    if N > 1:
        with m.pipeline(k):
            for t in range(N + k - 2):
                with m.round() as r:
                    for j in range(N - 1):
                        c = t - j
                        if 0 <= c < k:
                            r.send(j, j + 1, bufs[j][sl[c]], bufs[j + 1], sl[c])
    return bufs


def chain_reduce(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    N, k = m.ranks, p["chunks"]
    bufs = [a.copy() for a in x]
    sl = blocks(len(x[0]), k)
    if N > 1:
        with m.pipeline(k):
            for t in range(N + k - 2):
                with m.round() as r:
                    for j in range(1, N):
                        c = t - (N - 1 - j)
                        if 0 <= c < k:
                            r.send(j, j - 1, bufs[j][sl[c]], bufs[j - 1], sl[c], reduce=True)
    return bufs


def direct_allreduce(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    N = m.ranks
    acc = [a.copy() for a in x]
    with m.round() as r:
        for i in range(N):
            for j in range(N):
                if i != j:
                    r.send(i, j, x[i], acc[j], slice(None), reduce=True)
    return acc


def direct_reduce_scatter_phase(m: Machine, bufs: list[np.ndarray]) -> None:
    N = m.ranks
    sl = blocks(len(bufs[0]), N)
    snapshot = [b.copy() for b in bufs]
    with m.round() as r:
        for i in range(N):
            for j in range(N):
                if i != j:
                    r.send(i, j, snapshot[i][sl[j]], bufs[j], sl[j], reduce=True)


def direct_allgather_phase(m: Machine, bufs: list[np.ndarray]) -> None:
    N = m.ranks
    sl = blocks(len(bufs[0]), N)
    with m.round() as r:
        for i in range(N):
            for j in range(N):
                if i != j:
                    r.send(i, j, bufs[i][sl[i]], bufs[j], sl[i])


def two_shot_allreduce(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    bufs = [a.copy() for a in x]
    direct_reduce_scatter_phase(m, bufs)
    direct_allgather_phase(m, bufs)
    return bufs


def direct_allgather(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    N = m.ranks
    out = [np.zeros(len(x[0]) * N) for _ in range(N)]
    sl = blocks(len(out[0]), N)
    for i in range(N):
        out[i][sl[i]] = x[i]
    direct_allgather_phase(m, out)
    return out


def direct_reduce_scatter(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    bufs = [a.copy() for a in x]
    direct_reduce_scatter_phase(m, bufs)
    sl = blocks(len(x[0]), m.ranks)
    return [bufs[i][sl[i]] for i in range(m.ranks)]


def pairwise_reduce_scatter(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    N = m.ranks
    sl = blocks(len(x[0]), N)
    own = [x[i][sl[i]].copy() for i in range(N)]
    for s in range(1, N):
        with m.round() as r:
            for i in range(N):
                j = (i + s) % N
                r.send(i, j, x[i][sl[j]], own[j], slice(None), reduce=True)
    return own


def alltoall_exchange(m: Machine, x: list[np.ndarray], one_round: bool) -> list[np.ndarray]:
    N = m.ranks
    sl = blocks(len(x[0]), N)
    out = [np.zeros_like(x[0]) for _ in range(N)]
    for i in range(N):
        out[i][sl[i]] = x[i][sl[i]]
    shifts = [list(range(1, N))] if one_round else [[s] for s in range(1, N)]
    for group in shifts:
        with m.round() as r:
            for s in group:
                for i in range(N):
                    j = (i + s) % N
                    r.send(i, j, x[i][sl[j]], out[j], sl[i])
    return out


def pairwise_alltoall(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    return alltoall_exchange(m, x, one_round=False)


def direct_alltoall(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    return alltoall_exchange(m, x, one_round=True)


def linear_scatter(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    N = m.ranks
    sl = blocks(len(x[0]), N)
    out = [x[0][sl[0]].copy()] + [np.zeros(len(x[0]) // N) for _ in range(N - 1)]
    for j in range(1, N):
        with m.round() as r:
            r.send(0, j, x[0][sl[j]], out[j], slice(None))
    return out


def linear_gather(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    N = m.ranks
    out = np.zeros(len(x[0]) * N)
    sl = blocks(len(out), N)
    out[sl[0]] = x[0]
    for j in range(1, N):
        with m.round() as r:
            r.send(j, 0, x[j], out, sl[j])
    return [out]


def send_recv(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    N = m.ranks
    out = [np.zeros_like(a) for a in x]
    if N > 1:
        with m.round() as r:
            for i in range(N):
                r.send(i, (i + 1) % N, x[i], out[(i + 1) % N], slice(None))
    return out
