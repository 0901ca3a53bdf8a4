"""Deciding activation recomputation by speed: the gain rule, and the floor that skips a sweep.

Where a model's recomputation is modelled and plans fit without it, the planner sweeps both and
takes recomputation only where its best plan scores better than the best without it by more than
the tie band (:func:`gain`). A sweep with recomputation is skipped where no configuration could
win it (:func:`may_win`): its floor is each cell's step without communication, the forward run
again (:func:`costmodel.planner.grid.recomputed_floor_s`), which no link changes. The planner
decides so (:func:`costmodel.planner.recommend.plan`), and its what-if re-decides so on the
scaled links (:func:`costmodel.planner.explain.what_if`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from costmodel.planner import grid
from dpbase.values import replace


def gain(without: np.ndarray, recomputing: np.ndarray) -> float | None:
    """How much better (relative, > 0) the best score with recomputation is than the best
    without it (scores lower-is-better, ``inf`` where a plan is not feasible): ``inf`` where
    only recomputation has a feasible plan, None where it has none."""
    best_with = float(np.min(recomputing))
    if not np.isfinite(best_with):
        return None
    best_without = float(np.min(without))
    if not np.isfinite(best_without):
        return math.inf
    return (best_without - best_with) / abs(best_without) if best_without else None


def best_configuration(sweep, scores: np.ndarray) -> dict[str, int] | None:
    """Micro-batch and ZeRO stage of the best-scoring plan of ``sweep`` (None where none is
    feasible): what the reason sets against the plan with recomputation, since its gain may be
    the larger micro-batch the memory runs, or a lower ZeRO stage that now fits."""
    if not np.isfinite(scores).any():
        return None
    at = np.unravel_index(int(np.argmin(scores)), scores.shape)
    micro = np.broadcast_to(sweep.space.micro_batch, scores.shape)[at]
    return {"micro_batch": int(micro), "zero_stage": int(sweep.space.zero_stages[at[1]])}


def taken(without: np.ndarray, recomputing: np.ndarray, band: float) -> bool:
    """Whether recomputation is taken: its best scores better than the best without it by more
    than ``band``."""
    found = gain(without, recomputing)
    return found is not None and found > band


def may_win(without_sweep, recomputing, best: float, score_of: Callable, band: float,
            memo: dict | None = None) -> bool:
    """Whether a plan with recomputation (setting ``recomputing``) could score better than
    ``band`` ahead of ``best``, the best score without it: some configuration's
    :func:`grid.recomputed_floor_s` (of ``without_sweep``, the sweep without recomputation, on
    any links), scored by ``score_of(sweep, setting)`` as a plan that fits, beats that. A
    compute-bound plan (the README's) cannot pay for a third more compute. ``memo``: a dict kept
    across calls on the same sweep, setting and scoring (a what-if's factors): the floor, which no
    link changes, is scored once."""
    if not np.isfinite(best):
        return True  # nothing scores without it (a deadline, a budget): only recomputation may
    if memo is None or "floor" not in memo:
        floor = replace(without_sweep,
                        samples_per_s=grid.samples_per_s(without_sweep.space, grid.recomputed_floor_s(without_sweep)),
                        feasible=np.ones(without_sweep.space.shape, dtype=bool))
        lowest = float(np.min(score_of(floor, recomputing)))
        if memo is None:
            return lowest < best - band * abs(best)
        memo["floor"] = lowest
    return memo["floor"] < best - band * abs(best)
