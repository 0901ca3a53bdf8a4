"""How far published data-parallel runs fell from the training-step model, out of sample.

``benchmarks/dp_scaling.py`` predicts every published scaling table dpcost carries (the
development set and the two later sets, each publication with the host overhead and speed
spread fitted without it) and keeps, for every row, published ÷ predicted step time (the job's
predicted throughput ÷ its published one; for a one-GPU baseline, its own speed error), in two
compute modes: **default** (the MFU defaults predict the speed, so the ratio carries the speed
error too) and **measured** (``--rate`` or ``--mfu`` from a measured run: the scaling error alone).

Per class of step (one GPU, one node, several nodes) and mode, an 80 % interval of these ratios
is in ``costmodel/data/step_residuals.toml`` (written by ``dp_scaling.py --write``, which
records the nominal coverage and each mode's width in its ``[calibration]`` table): two
percentiles as far apart as it takes for intervals built without each publication in turn to
hold on the nominal share of the left-out rows, pooled (the pooled p10–p90 held on fewer: a new
publication's errors are more alike among themselves than the pool's). A predicted step of ``t`` seconds gets ``(low·t, high·t)``:
where published runs predicted the same way landed. docs/validation.md reports how often the
intervals hold on publications left out of them (the width chosen without them too, pooled and
by publication), and why the scaling efficiency gets no interval of its own.

These are the model's errors on real jobs (frameworks, input pipelines, stragglers the terms do
not capture), not the spread of the collectives alone (``total_interval_s``). The published
runs are synchronous, NVIDIA, 2017–2023 (docs/iteration-model.md, "Outputs", says what they
cover).
"""

from __future__ import annotations

import os
from functools import cache

from costmodel.cluster.intervals import interval_tables
from costmodel.names import REALISTIC_BACKENDS
from dpbase.bundled import load_bundled

DATA_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "data",
                         "step_residuals.toml")
STEP_CLASSES = ("one-gpu", "single-node", "multi-node")
MODES = ("default", "measured")
CLASS_TEXT = {"one-gpu": "one-GPU", "single-node": "single-node", "multi-node": "multi-node"}
MODE_TEXT = {"default": "predicted (default MFU)", "measured": "from a measured run (--rate, --mfu)"}
MIN_ROWS = 5  # a cell with fewer out-of-sample rows gets no interval


def step_class(ranks: int, nodes: int) -> str:
    """``one-gpu``, ``single-node`` (several GPUs of one node) or ``multi-node``."""
    if ranks <= 1:
        return "one-gpu"
    return "single-node" if nodes <= 1 else "multi-node"


@cache
def nominal() -> float:
    """The intervals' nominal coverage (``[calibration]`` of the data file)."""
    return float(load_bundled(DATA_FILE)["calibration"]["nominal"])


def interval_name() -> str:
    """``80 % interval``: what the text calls a published-run interval."""
    return f"{100 * nominal():.0f} % interval"


def ratio_interval(cls: str, mode: str) -> tuple[float, float, int] | None:
    """(low, high, rows): the :func:`nominal` interval of published ÷ predicted step time, or
    None where too few rows exist."""
    found = interval_tables(DATA_FILE).get(cls, {}).get(mode)
    return (float(found[0]), float(found[1]), int(found[2])) if found else None


# The published runs were predicted with the realistic backends; the ideal backend's collectives
# are a textbook bound, and every published run was synchronous.
BACKENDS = REALISTIC_BACKENDS


def published_interval(total_s: float, ranks: int, nodes: int, measured_speed: bool, *,
                       backend: str = "nccl", synchronous: bool = True, floor_s: float = 0.0):
    """(step interval in seconds, class) for a predicted step, or None where no published run
    speaks for it: another backend than :data:`BACKENDS`, asynchronous updates, or a class
    without out-of-sample rows (a one-GPU step whose speed the user measured is the prediction
    itself). ``floor_s``: a time the step cannot beat whatever the model missed (what the user's
    data loader needs for the step's samples); neither end goes below it."""
    if backend not in BACKENDS or not synchronous:
        return None
    cls = step_class(ranks, nodes)
    step = ratio_interval(cls, "measured" if measured_speed else "default")
    if step is None or total_s <= 0:
        return None
    return (max(step[0] * total_s, floor_s), max(step[1] * total_s, floor_s)), cls
