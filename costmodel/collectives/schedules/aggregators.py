"""Parameter-server and in-network-reduction schedules (servers and switches are auxiliary nodes)."""

from __future__ import annotations

import numpy as np

from costmodel.collectives.schedules.flat import blocks, ring_allgather_phase, ring_reduce_scatter_phase
from costmodel.collectives.schedules.machine import Machine


def _chunked(length: int, shards: int, k: int) -> list[list[slice]]:
    """shard s, chunk c -> slice of the buffer."""
    return [[slice(s.start + c.start, s.start + c.stop) for c in blocks(s.stop - s.start, k)]
            for s in blocks(length, shards)]


def ps_allreduce(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    N, S = m.ranks, p["servers"]
    k = p["chunks"] if p["pipelined"] else 1
    if N == 1:
        return [x[0].copy()]
    parts = _chunked(len(x[0]), S, k)
    out = [np.zeros_like(x[0]) for _ in range(N)]
    if p["colocated"]:
        acc = [a.copy() for a in x]  # server s accumulates into its own buffer
        server = list(range(S))
    else:
        acc = [np.zeros_like(x[0]) for _ in range(S)]
        server = [N + s for s in range(S)]
    for t in range(k + 1):
        with m.round() as r:
            for s in range(S):
                if t < k:
                    for w in range(N):
                        if server[s] != w:
                            first = not p["colocated"] and w == 0
                            r.send(w, server[s], x[w][parts[s][t]], acc[s], parts[s][t], reduce=not first)
                if t >= 1:
                    for w in range(N):
                        if server[s] != w:
                            r.send(server[s], w, acc[s][parts[s][t - 1]], out[w], parts[s][t - 1])
    if p["colocated"]:
        for s in range(S):
            for c in parts[s]:
                out[s][c] = acc[s][c]
    return out


def in_network_allreduce(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    N, k = m.ranks, p["chunks"]
    if N == 1:
        return [x[0].copy()]
    parts = blocks(len(x[0]), k)
    switch, acc = N, np.zeros_like(x[0])
    out = [np.zeros_like(x[0]) for _ in range(N)]
    for t in range(k + 1):
        with m.round() as r:
            for w in range(N):
                if t < k:
                    r.send(w, switch, x[w][parts[t]], acc, parts[t], reduce=w > 0)
                if t >= 1:
                    r.send(switch, w, acc[parts[t - 1]], out[w], parts[t - 1])
    return out


def hierarchical_allreduce(m: Machine, x: list[np.ndarray], p: dict) -> list[np.ndarray]:
    N, G = m.ranks, p["gpus_per_node"]
    M = N // G
    bufs = [a.copy() for a in x]
    nodes = [list(range(node * G, (node + 1) * G)) for node in range(M)]
    if p.get("leaders"):
        return _leaders_allreduce(m, bufs, nodes)
    ring_reduce_scatter_phase(m, bufs, nodes)
    sl = blocks(len(x[0]), G)
    shard = {rank: bufs[rank][sl[rank % G]].copy() for rank in range(N)}
    rails = [[node * G + g for node in range(M)] for g in range(G)]
    ring_reduce_scatter_phase(m, shard, rails, level="inter")
    ring_allgather_phase(m, shard, rails, level="inter")
    for rank in range(N):
        bufs[rank][sl[rank % G]] = shard[rank]
    ring_allgather_phase(m, bufs, nodes)
    return bufs


def _leaders_allreduce(m: Machine, bufs: list[np.ndarray], nodes: list[list[int]]) -> list[np.ndarray]:
    """Seed 000's hierarchy: each node reduces to its leader (local rank 0) by a ring
    reduce-scatter and a gather of the blocks, the leaders ring all-reduce the whole buffer
    across nodes, and each leader scatters the blocks for a ring all-gather inside its node."""
    G = len(nodes[0])
    sl = blocks(len(bufs[0]), G)
    ring_reduce_scatter_phase(m, bufs, nodes)  # member j holds the node's reduced block j
    with m.round() as r:
        for ranks in nodes:
            for j in range(1, G):
                r.send(ranks[j], ranks[0], bufs[ranks[j]][sl[j]], bufs[ranks[0]], sl[j])
    leaders = [[ranks[0] for ranks in nodes]]
    ring_reduce_scatter_phase(m, bufs, leaders, level="inter")
    ring_allgather_phase(m, bufs, leaders, level="inter")
    with m.round() as r:
        for ranks in nodes:
            for j in range(1, G):
                r.send(ranks[0], ranks[j], bufs[ranks[0]][sl[j]], bufs[ranks[j]], sl[j])
    ring_allgather_phase(m, bufs, nodes)
    return bufs
