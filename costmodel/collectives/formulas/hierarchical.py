"""Hierarchical all-reduce: inside the nodes first, then across them, then inside again.

Ranks are M = N/G nodes of G GPUs. By default (rails): intra-node reduce-scatter, inter-node
all-reduce of 1/G, intra-node all-gather. The intra-node phases are rings over G ranks (level
'intra', α/β of the node's fabric); the inter-node phase is G parallel rings (one per local
rank, 'rails') over M nodes on n/G bytes (level 'inter', α/β of the network).

``leaders``: seed 000's form, "reduce inside the machine, then ring all-reduce between the
machines": each node reduces the whole buffer to one leader GPU (a ring reduce-scatter, then
the G − 1 reduced blocks gathered to the leader: Rabenseifner's reduce), the M leaders ring
all-reduce all n bytes, and each leader broadcasts the sum inside its node (the blocks
scattered, then a ring all-gather: van de Geijn's broadcast). One GPU per node carries the
network traffic, n bytes where each rail carries n/G.
"""

from __future__ import annotations

from typing import Any

from costmodel.collectives.entry import Entry, Param, Terms
from costmodel.names import Algorithm as A
from costmodel.names import Primitive as P
from dpbase.errors import NotApplicableError

GPUS_PER_NODE = Param("gpus_per_node", "G", 8, "ranks per node (N must be a multiple of G)")
LEADERS = Param("leaders", "leaders", False, "one leader per node reduces, the leaders all-reduce n, "
                "the leader broadcasts (seed 000); else every rank's 1/G on its own rail", "bool")


def hierarchical_allreduce(N: Any, n: Any, p: Any, o: Any) -> Terms:
    """2(G−1) intra steps of n/G and 2(M−1) inter steps of n/N; with ``leaders`` 4(G−1) intra
    steps of n/G and 2(M−1) inter steps of n/M (one GPU per node on the network)."""
    G = p.gpus_per_node
    M = N / G
    if p.leaders:
        blocks = (G - 1) * n / G
        inter = 2 * (M - 1) * n / M
        return Terms(steps=4 * (G - 1), wire=4 * blocks, reduce=blocks + (M - 1) * n / M,
                     sent_max=3 * blocks + inter, recv_max=3 * blocks + inter,
                     total=M * (2 * (G - 1) * n + 2 * blocks) + 2 * (M - 1) * n,
                     steps_inter=2 * (M - 1), wire_inter=inter)
    intra = 2 * (G - 1) * n / G
    inter = 2 * (M - 1) * n / N
    return Terms(steps=2 * (G - 1), wire=intra, reduce=(G - 1) * n / G + (M - 1) * n / N,
                 sent_max=intra + inter, recv_max=intra + inter,
                 total=2 * M * (G - 1) * n + 2 * (M - 1) * n,
                 steps_inter=2 * (M - 1), wire_inter=inter)


def validate_hierarchical(N: int, params: dict[str, Any]) -> None:
    G = params["gpus_per_node"]  # a whole number >= 1 (Entry.check_params): here, whether it fits N
    if N % int(G) != 0:  # a node size these ranks cannot fill: this combination, not the input, is out (a sweep leaves it out)
        raise NotApplicableError("gpus_per_node", G, f"an integer >= 1 that divides ranks ({N})")

ENTRIES: tuple[Entry, ...] = (
    Entry(P.ALL_REDUCE, A.HIERARCHICAL, hierarchical_allreduce,
          "reduce-scatter inside nodes, all-reduce 1/G across nodes, all-gather inside nodes; with leaders, "
          "reduce to one GPU per node, all-reduce n across the leaders, broadcast inside nodes",
          "Horovod hierarchical all-reduce (PR #411); Jia et al. 2018 (arXiv:1807.11205); seed 000 (leaders)",
          ("N = M·G nodes × GPUs per node", "separate α/β per level",
           "leaders: the leader's network link carries the inter-node phase"),
          (GPUS_PER_NODE, LEADERS), validate=validate_hierarchical, hierarchical=True),
)
