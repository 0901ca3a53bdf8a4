"""Aggregation outside the ring of ranks: parameter servers and in-network reduction.

Parameter server (Li et al., OSDI'14; BytePS, Jiang et al., OSDI'20 §4): S servers each own
1/S of the buffer. Workers push their gradient shards, servers reduce, workers pull the
sums. Dedicated servers are extra machines; colocated servers are ranks 0..S−1, which also
work. Push and pull are pipelined in k chunks over full-duplex links (round j pushes chunk
j while pulling chunk j−1); ``pipelined=False`` is k = 1 (push everything, then pull).
With α = 0 and k → ∞ a colocated single server costs (N−1)·n·β, a dedicated one N·n·β,
and S = N colocated servers 2(N−1)/N·n·β — exactly ring all-reduce.

In-network reduction (NVLink SHARP / NVLS, InfiniBand SHARP): each rank sends its n bytes
to the switch once and receives the n-byte sum once, pipelined in k chunks.
"""

from __future__ import annotations

from typing import Any

from costmodel.collectives.entry import CHUNKS, Entry, Param, Terms
from costmodel.names import Algorithm as A
from costmodel.names import Primitive as P
from dpbase.errors import InputError, NotApplicableError
from dpbase.limits import MAX_RANKS

SERVERS = Param("servers", "S", 1, "parameter servers (shards)")
COLOCATED = Param("colocated", "colocated", False, "servers are ranks 0..S−1 (else dedicated machines)", "bool")
PIPELINED = Param("pipelined", "pipelined", True, "pipeline push and pull in chunks", "bool")


def ps_allreduce(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """Push shards to S servers, reduce there, pull the sums (see the module docstring)."""
    k = p.chunks if p.pipelined else 1
    S = p.servers
    if p.colocated:
        busy = (N + S - 2) * n / S  # a server rank's own push share plus its pull duty
        rounds_bytes = (2 * (N - 1) + (k - 1) * (N + S - 2)) * n / (S * k)
        return Terms(steps=2 * (N - 1) + (k - 1) * (N + S - 2), wire=rounds_bytes,
                     reduce=(N - 1) * n / S, sent_max=busy, recv_max=busy, total=2 * (N - 1) * n)
    load = o.max(N / S, 1)
    return Terms(steps=(k + 1) * o.max(N, S), wire=(k + 1) * load * n / k, reduce=(N - 1) * n / S,
                 sent_max=n, recv_max=n, total=2 * N * n, aux_max=N * n / S)


def validate_ps(N: int, params: dict[str, Any]) -> None:
    servers = params["servers"]  # a whole number >= 1 (Entry.check_params): here, whether it fits N
    if not getattr(servers, "free_symbols", None) and servers > MAX_RANKS:
        raise InputError("servers", servers, f"at most {MAX_RANKS} machines")
    if params["colocated"] and servers > N:
        # NotApplicable: these ranks cannot hold them (a sweep or chart leaves this rank count out)
        raise NotApplicableError("servers", servers, f"at most ranks ({N}) when servers are colocated")


def in_network_allreduce(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """Send n to the switch, receive the n-byte sum: k+1 rounds of n/k; the switch reduces."""
    k = p.chunks
    return Terms(steps=k + 1, wire=(k + 1) * n / k, reduce=0, sent_max=n, recv_max=n,
                 total=2 * N * n, aux_max=N * n)

ENTRIES: tuple[Entry, ...] = (
    Entry(P.ALL_REDUCE, A.PARAMETER_SERVER, ps_allreduce,
          "workers push to S servers and pull the sum; N-fold traffic at a single server",
          "Li et al. 2014 (OSDI, parameter server); Jiang et al. 2020 (OSDI, BytePS §4); seeds 000, 002",
          ("servers S ≥ 1 (S ≤ N when colocated)", "chunks k ≥ 1"),
          (SERVERS, COLOCATED, PIPELINED, CHUNKS), validate=validate_ps),
    Entry(P.ALL_REDUCE, A.IN_NETWORK, in_network_allreduce,
          "the switch reduces (NVLS / SHARP): each rank sends n and receives n once",
          "Graham et al. 2016 (SHARP, COMHPC); NVIDIA NVLink SHARP (NCCL NVLS); nccl-tests PERFORMANCE.md",
          ("needs a switch that reduces (NVSwitch gen3+ or SHARP InfiniBand)", "chunks k ≥ 1"),
          (CHUNKS,), in_network=True),
)
