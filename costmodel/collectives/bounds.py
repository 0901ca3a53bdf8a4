"""Lower bounds per primitive (Chan, Heimlich, Purkayastha & van de Geijn 2007, Table 1).

In the model's single-port, full-duplex setting any algorithm needs at least ⌈log2 N⌉
message steps, the bandwidth term below and the reduction term below; their sum bounds the
time. Aggregation outside the ranks (dedicated parameter servers, a reducing switch) changes
the machine, so those entries are bounded by what every rank must still do: send its n bytes
and receive n bytes, in at least two steps, with no reduction on the ranks.
"""

from __future__ import annotations

import collections
from typing import Any

from costmodel.names import REDUCING_PRIMITIVES
from costmodel.names import Primitive as P

# A plain namedtuple: ``typing.NamedTuple`` compiles a ForwardRef per field at import (start-up).
Bound = collections.namedtuple("Bound", "steps wire reduce")


def primitive_bound(primitive: P, N: Any, n: Any, o: Any) -> Bound:
    """Chan et al.'s bound for the primitive (n with nccl-tests' meaning of size)."""
    share = (N - 1) * n / N
    steps = 1 if primitive is P.SEND_RECV else o.clog2(N)
    wire = {
        P.BROADCAST: n, P.REDUCE: n, P.SEND_RECV: n,
        P.ALL_REDUCE: 2 * share,
    }.get(primitive, share)
    reduce = share if primitive in REDUCING_PRIMITIVES else 0
    return Bound(steps, wire, reduce)


def aggregator_bound(N: Any, n: Any, o: Any) -> Bound:
    """All-reduce with the reduction done off the ranks: send n, receive n, two steps."""
    return Bound(2, n, 0)


def dedicated_servers(entry: Any, params: dict[str, Any] | None) -> bool:
    """A parameter server on machines of its own (``colocated`` false), not on the ranks."""
    return entry.algorithm.value == "parameter-server" and not (params or {}).get("colocated")


def off_rank(entry: Any, params: dict[str, Any]) -> bool:
    """The reduction runs off the ranks: in the network's switches, or on dedicated servers."""
    return entry.in_network or dedicated_servers(entry, params)


def entry_bound(entry: Any, N: Any, n: Any, params: dict[str, Any], o: Any) -> Bound:
    """The bound that applies to one registry entry with its parameters."""
    if off_rank(entry, params):
        return aggregator_bound(N, n, o)
    return primitive_bound(entry.primitive, N, n, o)
