"""A node layout's counts, checked: the one rule of every command's --nodes and --gpus-per-node.

Kept apart from :mod:`costmodel.cluster.mapping` (which imports the formula registry) so that a
command that needs only the check, ``nccl-table`` on NVIDIA, does not load it."""

from __future__ import annotations

from typing import Any

from dpbase.errors import InputError, whole_count


def layout_counts(profile: Any, nodes: Any = 1, gpus_per_node: Any = None) -> tuple[int, int]:
    """(nodes, GPUs per node) of ``profile`` (a System), as Python ints, or one InputError naming
    the count the user gave.

        >>> from hardware import load_system
        >>> layout_counts(load_system("dgx-h100"), 2)
        (2, 8)
    """
    from dpbase.limits import MAX_RANKS

    # whole numbers as Python's ints ("2" was a TypeError; numpy's integers count as ints)
    nodes = whole_count("nodes", nodes)
    gpus_per_node = None if gpus_per_node is None else whole_count("gpus_per_node", gpus_per_node)
    if nodes < 1:
        raise InputError("nodes", nodes, "an integer >= 1")
    gpn = profile.gpus_per_node if gpus_per_node is None else gpus_per_node
    if gpn < 1 or gpn > profile.gpus_per_node:
        raise InputError("gpus_per_node", gpn, f"1 to {profile.gpus_per_node} for {profile.name}")
    if nodes * gpn > MAX_RANKS:  # named by the count the user gave, not the ranks it makes
        raise InputError("nodes", nodes, f"at most {MAX_RANKS // gpn:,} nodes of {gpn} GPUs ({MAX_RANKS:,} ranks)")
    return nodes, gpn
