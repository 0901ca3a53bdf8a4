"""Cost formulas, one module per family of algorithms; ``ENTRIES`` holds every family's entries.

Conventions (docs/conventions.md): N ranks, n bytes with nccl-tests' meaning of size, a
rank sends and receives at full bandwidth at once (full duplex), α is paid per message at
the busiest endpoint of a round, β per byte at the busiest endpoint, γ per byte reduced.
A pipelined phase of R rounds over k chunks advances at the pace of its busiest rank:
each round costs that rank's per-chunk messages and bytes.
"""

from costmodel.collectives.entry import Entry
from costmodel.collectives.formulas import direct, hierarchical, linear, recursive, ring, server, tree

ENTRIES: tuple[Entry, ...] = tuple(
    entry for family in (direct, hierarchical, linear, recursive, ring, server, tree) for entry in family.ENTRIES
)
