"""Recursive doubling / halving, Rabenseifner and Bruck schedules, with MPICH's fold for non-powers of two."""

from __future__ import annotations

import numpy as np

from costmodel.collectives.schedules.flat import blocks
from costmodel.collectives.schedules.machine import Machine


def _fold_sizes(N: int) -> tuple[int, int, int]:
    L = N.bit_length() - 1
    return L, 1 << L, N - (1 << L)


def _fold_in(m: Machine, bufs: list[np.ndarray], p2: int, r: int) -> None:
    if r:
        with m.round() as rd:
            for i in range(r):
                rd.send(p2 + i, i, bufs[p2 + i], bufs[i], slice(None), reduce=True)


def _fold_out(m: Machine, bufs: list[np.ndarray], p2: int, r: int) -> None:
    if r:
        with m.round() as rd:
            for i in range(r):
                rd.send(i, p2 + i, bufs[i], bufs[p2 + i], slice(None))


def rd_allreduce(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    L, p2, r = _fold_sizes(m.ranks)
    bufs = [a.copy() for a in x]
    _fold_in(m, bufs, p2, r)
    for j in range(L):
        with m.round() as rd:
            for i in range(p2):
                rd.send(i, i ^ (1 << j), bufs[i], bufs[i ^ (1 << j)], slice(None), reduce=True)
    _fold_out(m, bufs, p2, r)
    return bufs


def halving(m: Machine, bufs: list[np.ndarray], p2: int, owned: list[list[int]], sl: list[slice]) -> None:
    """Recursive halving over p2 ranks; ``owned[s]`` are the block ids of super-block s."""
    region = {i: (0, p2) for i in range(p2)}
    d = p2 // 2
    while d >= 1:
        with m.round() as rd:
            for i in range(p2):
                lo, hi = region[i]
                mid = (lo + hi) // 2
                give = range(mid, hi) if i & d == 0 else range(lo, mid)
                idx = np.concatenate([np.r_[sl[b]] for s in give for b in owned[s]])
                rd.send(i, i ^ d, bufs[i][idx], bufs[i ^ d], idx, reduce=True)
        for i in range(p2):
            lo, hi = region[i]
            mid = (lo + hi) // 2
            region[i] = (lo, mid) if i & d == 0 else (mid, hi)
        d //= 2


def doubling_gather(m: Machine, bufs: list[np.ndarray], p2: int, sl: list[slice]) -> None:
    """Recursive-doubling all-gather over p2 ranks where rank i starts with block i."""
    d = 1
    while d < p2:
        with m.round() as rd:
            for i in range(p2):
                base = i & ~(d - 1)
                idx = np.r_[sl[base].start:sl[base + d - 1].stop]
                rd.send(i, i ^ d, bufs[i][idx], bufs[i ^ d], idx)
        d *= 2


def rabenseifner_allreduce(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    L, p2, r = _fold_sizes(m.ranks)
    bufs = [a.copy() for a in x]
    sl = blocks(len(x[0]), p2)
    _fold_in(m, bufs, p2, r)
    halving(m, bufs, p2, [[s] for s in range(p2)], sl)
    doubling_gather(m, bufs, p2, sl)
    _fold_out(m, bufs, p2, r)
    return bufs


def rd_allgather(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    N = m.ranks
    L, p2, r = _fold_sizes(N)
    out = [np.zeros(len(x[0]) * N) for _ in range(N)]
    sl = blocks(len(out[0]), N)
    held = [{i} for i in range(N)]
    for i in range(N):
        out[i][sl[i]] = x[i]
    if r:
        with m.round() as rd:
            for i in range(r):
                rd.send(p2 + i, i, out[p2 + i][sl[p2 + i]], out[i], sl[p2 + i])
                held[i].add(p2 + i)
    for j in range(L):
        snapshot = [set(h) for h in held]
        with m.round() as rd:
            for i in range(p2):
                idx = np.concatenate([np.r_[sl[b]] for b in sorted(snapshot[i])])
                rd.send(i, i ^ (1 << j), out[i][idx], out[i ^ (1 << j)], idx)
                held[i ^ (1 << j)] |= snapshot[i]
    if r:
        with m.round() as rd:
            for i in range(r):
                idx = np.concatenate([np.r_[sl[b]] for b in range(N) if b != p2 + i])
                rd.send(i, p2 + i, out[i][idx], out[p2 + i], idx)
    return out


def rh_reduce_scatter(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    N = m.ranks
    L, p2, r = _fold_sizes(N)
    bufs = [a.copy() for a in x]
    sl = blocks(len(x[0]), N)
    _fold_in(m, bufs, p2, r)
    owned = [[s] + ([p2 + s] if s < r else []) for s in range(p2)]
    halving(m, bufs, p2, owned, sl)
    if r:
        with m.round() as rd:
            for i in range(r):
                rd.send(i, p2 + i, bufs[i][sl[p2 + i]], bufs[p2 + i], sl[p2 + i])
    return [bufs[i][sl[i]] for i in range(N)]


def rabenseifner_reduce(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    L, p2, r = _fold_sizes(m.ranks)
    bufs = [a.copy() for a in x]
    sl = blocks(len(x[0]), p2)
    _fold_in(m, bufs, p2, r)
    halving(m, bufs, p2, [[s] for s in range(p2)], sl)
    d = 1
    while d < p2:
        with m.round() as rd:
            for i in range(p2):
                if i % (2 * d) == d:
                    idx = np.r_[sl[i].start:sl[i + d - 1].stop]
                    rd.send(i, i - d, bufs[i][idx], bufs[i - d], idx)
        d *= 2
    return bufs


def bruck_allgather(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    N = m.ranks
    out = [np.zeros(len(x[0]) * N) for _ in range(N)]
    sl = blocks(len(out[0]), N)
    for i in range(N):
        out[i][sl[i]] = x[i]
    d = 1
    while d < N:
        move = min(d, N - d)
        with m.round() as rd:
            for i in range(N):
                idx = np.concatenate([np.r_[sl[(i + t) % N]] for t in range(move)])
                rd.send(i, (i - d) % N, out[i][idx], out[(i - d) % N], idx)
        d *= 2
    return out


def bruck_alltoall(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    N = m.ranks
    sl = blocks(len(x[0]), N)
    pos = [np.concatenate([x[i][sl[(i + t) % N]] for t in range(N)]) for i in range(N)]
    j = 0
    while (1 << j) < N:
        idx = [t for t in range(N) if t >> j & 1]
        cols = np.concatenate([np.r_[sl[t]] for t in idx])
        with m.round() as rd:
            for i in range(N):
                rd.send(i, (i + (1 << j)) % N, pos[i][cols], pos[(i + (1 << j)) % N], cols)
        j += 1
    out = [np.zeros_like(x[0]) for _ in range(N)]
    for i in range(N):
        for t in range(N):
            out[i][sl[(i - t) % N]] = pos[i][sl[t]]
    return out
