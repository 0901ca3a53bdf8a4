"""Binomial-tree and double-binary-tree schedules."""

from __future__ import annotations

import numpy as np

from costmodel.collectives.schedules.flat import blocks, ring_allgather_phase
from costmodel.collectives.schedules.machine import Machine


def _clog2(N: int) -> int:
    return (N - 1).bit_length() if N > 1 else 0


def binomial_reduce_phase(m: Machine, bufs: list[np.ndarray]) -> None:
    N, d = m.ranks, 1
    while d < N:
        with m.round() as r:
            for i in range(N):
                if i % (2 * d) == d:
                    r.send(i, i - d, bufs[i], bufs[i - d], slice(None), reduce=True)
        d *= 2


def binomial_broadcast_phase(m: Machine, bufs: list[np.ndarray]) -> None:
    N = m.ranks
    d = 1 << _clog2(N) >> 1
    while d >= 1:
        with m.round() as r:
            for i in range(0, N, 2 * d):
                if i + d < N:
                    r.send(i, i + d, bufs[i], bufs[i + d], slice(None))
        d //= 2


def binomial_broadcast(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    bufs = [x[0].copy()] + [np.zeros_like(x[0]) for _ in range(m.ranks - 1)]
    binomial_broadcast_phase(m, bufs)
    return bufs


def binomial_reduce(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    bufs = [a.copy() for a in x]
    binomial_reduce_phase(m, bufs)
    return bufs


def binomial_allreduce(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    bufs = [a.copy() for a in x]
    binomial_reduce_phase(m, bufs)
    binomial_broadcast_phase(m, bufs)
    return bufs


def binomial_scatter_phase(m: Machine, full: list[np.ndarray], sl: list[slice]) -> None:
    N = m.ranks
    d = 1 << _clog2(N) >> 1
    while d >= 1:
        with m.round() as r:
            for i in range(0, N, 2 * d):
                if i + d < N:
                    idx = np.r_[sl[i + d].start:sl[min(i + 2 * d, N) - 1].stop]
                    r.send(i, i + d, full[i][idx], full[i + d], idx)
        d //= 2


def binomial_scatter(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    N = m.ranks
    full = [x[0].copy()] + [np.zeros_like(x[0]) for _ in range(N - 1)]
    sl = blocks(len(x[0]), N)
    binomial_scatter_phase(m, full, sl)
    return [full[i][sl[i]] for i in range(N)]


def binomial_gather_phase(m: Machine, x: list[np.ndarray]) -> list[np.ndarray]:
    """Every rank's block gathered into rank 0's buffer (each rank's full-size buffer returned)."""
    N = m.ranks
    full = [np.zeros(len(x[0]) * N) for _ in range(N)]
    sl = blocks(len(full[0]), N)
    for i in range(N):
        full[i][sl[i]] = x[i]
    d = 1
    while d < N:
        with m.round() as r:
            for i in range(N):
                if i % (2 * d) == d:
                    idx = np.r_[sl[i].start:sl[min(i + d, N) - 1].stop]
                    r.send(i, i - d, full[i][idx], full[i - d], idx)
        d *= 2
    return full


def binomial_gather(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    return [binomial_gather_phase(m, x)[0]]


def gather_broadcast_allgather(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    """Seed 002's all-gather: a gather to rank 0, then its whole buffer broadcast."""
    full = binomial_gather_phase(m, x)
    bufs = [full[0]] + [np.zeros_like(full[0]) for _ in range(m.ranks - 1)]
    binomial_broadcast_phase(m, bufs)
    return bufs


def scatter_allgather_broadcast(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    N = m.ranks
    full = [x[0].copy()] + [np.zeros_like(x[0]) for _ in range(N - 1)]
    sl = blocks(len(x[0]), N)
    binomial_scatter_phase(m, full, sl)
    out = [np.zeros_like(x[0]) for _ in range(N)]
    for i in range(N):
        out[i][sl[i]] = full[i][sl[i]]
    ring_allgather_phase(m, out, [list(range(N))])
    return out


def heap_tree(order: list[int]) -> tuple[dict[int, int], dict[int, int]]:
    """(parent, depth) of a heap-ordered binary tree whose position p holds rank order[p]."""
    parent, depth = {}, {order[0]: 0}
    for pos in range(1, len(order)):
        parent[order[pos]] = order[(pos - 1) // 2]
        depth[order[pos]] = depth[parent[order[pos]]] + 1
    return parent, depth


def dbt_allreduce(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    N, k = m.ranks, p["chunks"]
    bufs = [a.copy() for a in x]
    if N == 1:
        return bufs
    halves = blocks(len(x[0]), 2)
    trees = [heap_tree(list(range(N))), heap_tree(list(range(N - 1, -1, -1)))]
    height = N.bit_length() - 1
    chunks = [[slice(h.start + c.start, h.start + c.stop) for c in blocks(h.stop - h.start, k)] for h in halves]
    with m.pipeline(k):
        for t in range(height + k - 1):
            with m.round() as r:
                for tree, (parent, depth) in enumerate(trees):
                    for v, up in parent.items():
                        c = t - (height - depth[v])
                        if 0 <= c < k:
                            r.send(v, up, bufs[v][chunks[tree][c]], bufs[up], chunks[tree][c], reduce=True)
    with m.pipeline(k):
        for t in range(height + k - 1):
            with m.round() as r:
                for tree, (parent, depth) in enumerate(trees):
                    for v, up in parent.items():
                        c = t - (depth[v] - 1)
                        if 0 <= c < k:
                            r.send(up, v, bufs[up][chunks[tree][c]], bufs[v], chunks[tree][c])
    return bufs


def dbt_broadcast(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    N, k = m.ranks, p["chunks"]
    bufs = [x[0].copy()] + [np.zeros_like(x[0]) for _ in range(N - 1)]
    if N == 1:
        return bufs
    halves = blocks(len(x[0]), 2)
    trees = []
    for order in (list(range(1, N)), list(range(N - 1, 0, -1))):
        parent, depth = heap_tree(order)
        parent[order[0]] = 0
        trees.append((parent, {v: d + 1 for v, d in depth.items()}))
    rounds = 1 + (N - 1).bit_length() - 1 + k - 1
    chunks = [[slice(h.start + c.start, h.start + c.stop) for c in blocks(h.stop - h.start, k)] for h in halves]
    with m.pipeline(k):
        for t in range(rounds):
            with m.round() as r:
                for tree, (parent, depth) in enumerate(trees):
                    for v, up in parent.items():
                        c = t - (depth[v] - 1)
                        if 0 <= c < k:
                            r.send(up, v, bufs[up][chunks[tree][c]], bufs[v], chunks[tree][c])
    return bufs
