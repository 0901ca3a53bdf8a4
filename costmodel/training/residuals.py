"""How far published data-parallel runs fell from the training-step model, out of sample.

``benchmarks/dp_scaling.py`` predicts every published scaling table dpcost carries (the
development set, each source with the host overhead fitted without it; the held-out tables,
with the shipped defaults) and keeps, for every row, published ÷ predicted step time:

* **default** compute speed (the MFU defaults): the job's predicted throughput ÷ its published
  one, i.e. the baseline's speed error times the error of the scaling relative to it;
* **measured** speed (``--mfu`` from a measured run): the scaling error alone, predicted ÷
  published efficiency relative to the table's baseline.

Per class of step (one GPU, one node, several nodes) and mode, the 10th and 90th percentile of
those ratios are in ``costmodel/data/step_residuals.toml`` (written by ``dp_scaling.py
--write``). A predicted step of ``t`` seconds gets ``(p10·t, p90·t)``: where the published runs
predicted the same way landed. Its scaling efficiency ``e`` gets ``(e / p90, min(1, e / p10))``
from the measured-speed ratios of its class, since an efficiency does not depend on the
absolute speed. docs/validation.md reports how often the intervals hold on publications left
out of them.

These are the model's errors on real jobs (frameworks, input pipelines, stragglers the terms do
not capture), not the spread of the collectives alone (``total_interval_s``).
"""

from __future__ import annotations

import os
from functools import cache

from dpbase.bundled import load_bundled

DATA_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "data",
                         "step_residuals.toml")
STEP_CLASSES = ("one-gpu", "single-node", "multi-node")
MODES = ("default", "measured")
CLASS_TEXT = {"one-gpu": "one-GPU", "single-node": "single-node", "multi-node": "multi-node"}
MODE_TEXT = {"default": "predicted (default MFU)", "measured": "from a measured run (--mfu)"}
MIN_ROWS = 5  # a class and mode with fewer out-of-sample rows gets no interval


def step_class(ranks: int, nodes: int) -> str:
    """``one-gpu``, ``single-node`` (several GPUs of one node) or ``multi-node``."""
    if ranks <= 1:
        return "one-gpu"
    return "single-node" if nodes <= 1 else "multi-node"


@cache
def _table() -> dict:
    if not os.path.exists(DATA_FILE):
        return {}
    return load_bundled(DATA_FILE).get("interval", {})


def ratio_interval(cls: str, mode: str) -> tuple[float, float, int] | None:
    """(p10, p90, rows) of published ÷ predicted step time, or None where too few rows exist."""
    found = _table().get(cls, {}).get(mode)
    return (float(found[0]), float(found[1]), int(found[2])) if found else None


def published_interval(total_s: float, efficiency: float, ranks: int, nodes: int, measured_speed: bool):
    """(step interval in seconds, scaling-efficiency interval or None, class) for a predicted
    step, or None where the class has no out-of-sample rows (a one-GPU step whose speed the user
    measured)."""
    cls = step_class(ranks, nodes)
    step = ratio_interval(cls, "measured" if measured_speed else "default")
    if step is None or total_s <= 0:
        return None
    relative = ratio_interval(cls, "measured") if ranks > 1 else None
    efficiency_range = None if relative is None else (efficiency / relative[1], min(1.0, efficiency / relative[0]))
    return (step[0] * total_s, step[1] * total_s), efficiency_range, cls
