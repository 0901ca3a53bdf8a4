"""The primitive's lower bound on a cluster: one bound per (primitive, layout), whatever the algorithm.

Chan et al.'s bound (:mod:`costmodel.collectives.bounds`) holds for one link per rank. On a
cluster each algorithm is mapped onto its own link rates (:mod:`costmodel.cluster.mapping`), and
the bound of those rates is the algorithm's, not the primitive's: a recursive halving whose
every rank crosses the network at once was "bounded" at 8x the time the ring takes on the same
nodes. The bound here relaxes the machine instead, so that no mapped algorithm can beat it:

- every rank sends its share (Chan et al.'s wire bytes) through the fastest egress it has: its
  intra-node link, plus on several nodes the NICs one GPU reaches (``Layout.leader_Bps``);
- on several nodes (NVLink domains) every node also sends across the cut around it what must
  leave it, over its whole network (``Layout.node_network_Bps``):

  | primitive | bytes across a node's cut (M nodes, G ranks per node) |
  |---|---|
  | all-reduce | 2(M-1)/M n (reduce-scatter and all-gather across the cut); n where the reduction is off the ranks |
  | reduce-scatter, all-gather, gather, scatter | (M-1)/M n |
  | broadcast, reduce | n (the root's node) |
  | all-to-all | G (M-1)/M n |
  | send/recv | 0 (the peers may share a node) |

- ⌈log2 N⌉ steps at the smaller latency, and Chan et al.'s reduction on the ranks.

The wire time is the larger of the two cuts (each is a bound; links run at once). Aggregation
off the ranks (dedicated parameter servers, in-network reduction) keeps its own machine's bound
(:func:`costmodel.collectives.bounds.entry_bound`): every rank still sends and receives n; inside
one node, dedicated servers are its CPUs, and a rank reaches them over its host link alone
(:mod:`costmodel.cluster.hostlink`). A call of 0 bytes, or on one rank, is bounded at 0, as it costs.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from costmodel.cluster.hostlink import host_link
from costmodel.collectives.bounds import dedicated_servers, entry_bound, off_rank
from costmodel.collectives.ops import SCALAR
from costmodel.names import Primitive as P

if TYPE_CHECKING:
    from costmodel.collectives.entry import Entry


def node_cut_bytes(primitive: P, nodes: int, gpus_per_node: int, n: float, off_rank: bool) -> float:
    """Bytes that must cross the cut around one node (the table of the module docstring)."""
    M = nodes
    if M <= 1:
        return 0.0
    share = (M - 1) / M * n
    if primitive is P.ALL_REDUCE:
        return n if off_rank else 2 * share
    if primitive in (P.BROADCAST, P.REDUCE):
        return n
    if primitive is P.ALL_TO_ALL:
        return gpus_per_node * share
    if primitive is P.SEND_RECV:
        return 0.0
    return share


def cluster_bound_s(entry: Entry, lay: Any, size_bytes: float, gamma_s_per_byte: float,
                    params: dict[str, Any]) -> float:
    """The lower bound of ``entry``'s primitive on ``lay`` (module docstring), in seconds."""
    N, n = lay.ranks, float(size_bytes)
    if N <= 1 or n == 0:  # nothing moves: every algorithm answers 0 (costmodel.collectives.evaluate)
        return 0.0
    bound = entry_bound(entry, N, n, params, SCALAR)
    across = not lay.one_domain and lay.nodes > 1
    alpha_s = min(lay.intra_alpha_s, lay.inter_alpha_s) if across else lay.intra_alpha_s
    egress_Bps = lay.intra_Bps + (lay.leader_Bps if across else 0.0)
    if not across and dedicated_servers(entry, params):  # the servers are the host, reached over its link alone
        alpha_s, egress_Bps = host_link(lay)[:2]
    wire_s = bound.wire / egress_Bps
    if across:
        cut = node_cut_bytes(entry.primitive, lay.nodes, lay.gpus_per_node, n, off_rank(entry, params))
        wire_s = max(wire_s, cut / lay.node_network_Bps if lay.node_network_Bps > 0 else math.inf)
    return alpha_s * bound.steps + wire_s + gamma_s_per_byte * bound.reduce
