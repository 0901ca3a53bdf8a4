"""Prediction intervals of the realistic backends, measured out of sample.

For each class of system (multi-node, single-node NVSwitch / PCIe / other, RCCL on one node or
several) and size
regime (below / from 1 MiB), the 10th and 90th percentile of measured ÷ predicted over every
row of the validation logs, each log predicted with constants fitted *without* it
(leave-one-log-out; ``benchmarks/accuracy.py --write`` computes them into
``costmodel/data/intervals.toml``). A prediction t gets the interval (p10·t, p90·t).
"""

from __future__ import annotations

import os
from functools import cache
from typing import TYPE_CHECKING

from dpbase.bundled import load_bundled

if TYPE_CHECKING:
    from hardware import System

DATA_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "data", "intervals.toml")
REGIME_SPLIT_BYTES = 2**20
CLASSES = ("multi-node", "single-node nvswitch", "single-node pcie", "single-node other", "rccl single-node",
           "rccl multi-node")


def system_class(system: System, nodes: int) -> str:
    """The accuracy class of ``nodes`` nodes of ``system`` (docs/validation.md's classes). RCCL's
    split by node count as NVIDIA's are: pooled, one MI300X node's 13.1-13.8 µs calls carried the
    two-node logs' 7.7x upper end (a 14.3 µs prediction, 10.3-110.6 µs; review, 2026-11-30)."""
    across = nodes > 1 and system.gpus_per_node * nodes > system.domain_gpus
    if system.gpu.vendor.lower() == "amd":
        return "rccl multi-node" if across else "rccl single-node"
    if across:
        return "multi-node"
    fabric = system.intra_fabric
    return f"single-node {fabric}" if fabric in ("nvswitch", "pcie") else "single-node other"


def regime(size_bytes: float) -> str:
    return "large" if size_bytes >= REGIME_SPLIT_BYTES else "small"


@cache
def interval_tables(path: str = DATA_FILE) -> dict[str, dict[str, list[float]]]:
    """The ``[interval."<class>"]`` tables of a bundled intervals file ({} when it is missing):
    this file's, and the training step's (costmodel.training.residuals)."""
    if not os.path.exists(path):
        return {}
    return load_bundled(path).get("interval", {})


IDEAL_CLASS = "ideal "  # the ideal backend's classes: this prefix and the system's class


def ratio_interval(system: System, nodes: int, size_bytes: float, ideal: bool = False) -> tuple[float, float] | None:
    """(p10, p90) of measured/predicted for this class and size regime, or None if unmeasured;
    ``ideal``: the textbook model's (which fits nothing to the logs)."""
    cls = (IDEAL_CLASS if ideal else "") + system_class(system, nodes)
    found = interval_tables().get(cls, {}).get(regime(size_bytes))
    return (float(found[0]), float(found[1])) if found else None


def interval_s(system: System, nodes: int, size_bytes: float, time_s: float,
               ideal: bool = False) -> tuple[float, float] | None:
    """The interval of a predicted time, in seconds (None where no class data exists)."""
    ratios = ratio_interval(system, nodes, size_bytes, ideal)
    if ratios is None or time_s <= 0:
        return None
    return (ratios[0] * time_s, ratios[1] * time_s)
