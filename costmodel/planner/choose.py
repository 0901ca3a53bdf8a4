"""Choosing among plans the model cannot tell apart: ties and the tie-break rules.

Plans whose scores lie within ``tie_band`` (relative) of the best score are *tied*: the model's
own uncertainty is larger than their difference. ``TIE_BAND`` = 2 %: an MFU error shifts every
plan of a sweep alike, so what separates plans is mostly their exposed communication, whose
predictions err by 7-70 % (median absolute error per cluster class, docs/validation.md); at the
usual 2-5 % exposed share of a step that is 1-3 % of the step, so the old 0.1 % band decided on
noise. Where the fastest plan's 10-90 % step interval is wider than that (a communication-bound
plan, :func:`interval_band`), ties also hold in the scenarios of that uncertainty
(:func:`scenario_tied`): every collective at the low end of its interval, at its prediction, or
at the high end, for all plans at once, since the errors come from the links and the library
they share; a plan within 2 % of the best is tied only when it stays within 2 % of each
scenario's best. A band as wide as the interval itself (up to 25 %, before 2026-11-28) tied
plans that no shared error brings together, and a limit the chosen plan met could change the
choice. ``plan(tie_band=...)`` / ``--tie-band`` sets a band outright.

Among tied plans an expert prefers, in this order (:data:`RULES`):

1. more memory headroom, up to ``COMFORTABLE_HEADROOM_FRACTION`` of the GPU's memory (beyond
   that every plan is equally safe; below it, the roomier plan survives allocator spikes);
2. fewer bytes sent per GPU per step (:func:`bytes_sent`): less exposure to congestion and to
   slower-than-profiled links;
3. the lower ZeRO stage: fewer moving parts, cheaper checkpoints;
4. fewer GPUs: the same step on less hardware;
5. the better score itself (to 1 ppb: scores equal but for floating-point rounding are equal);
6. fewer accumulation steps: where the model times the splits of a batch alike (a transformer
   whose micro-batches all fill the GPU), the larger micro-batch runs fewer, bigger kernels, which
   the model does not time. Before this rule the last bit of a sum decided.

The tied plans are ordered by these keys (lexicographically); the rest follow by score. The
rule that decided is the first key on which the chosen plan beats the fastest one, the plan
``tie_band=0`` chooses (:func:`fastest`).
"""

from __future__ import annotations

import numpy as np

from costmodel.names import busbw_factor, primitive_named
from costmodel.training import memory

TIE_BAND = 0.02
# The fastest plan's relative half-width is read up to this (where it passes the floor, ties are
# checked in the scenarios as well; a 25 % step difference is never comm noise alone).
MAX_INTERVAL_BAND = 0.25
COMFORTABLE_HEADROOM_FRACTION = 0.10
# Relative resolution of a score: below it two plans' scores differ only by floating-point
# rounding (the same step summed in another order), so they are equal (score_key) and tied.
SCORE_RESOLUTION = 1e-9
RULES = ("more memory headroom", "fewer bytes sent per GPU", "lower ZeRO stage", "fewer GPUs",
         "better score", "fewer accumulation steps")


# Bytes one rank sends per byte of a collective's nccl-tests size, times (N-1)/N of its group,
# with bandwidth-optimal algorithms: an all-reduce sends its buffer twice (reduce-scatter, then
# all-gather), the others once.
def _volume(group):
    """A ``comm(primitive, size)`` for :func:`gradsync.sync_plan` that answers the bytes a rank
    of a ``group``-rank collective sends (elementwise) instead of seconds: nccl-tests' bus
    factor (:func:`costmodel.names.busbw_factor`) × size, what a bandwidth-optimal algorithm sends."""
    return lambda primitive, size: busbw_factor(primitive_named(primitive), group) * size


def bytes_sent(sweep, params: int) -> np.ndarray:
    """Bytes each GPU sends per optimizer step with bandwidth-optimal collectives.

    The collectives are :func:`gradsync.sync_plan`'s, the ones the sweep times (one bucket
    holding the whole gradient: bytes do not depend on the bucketing), each counted as
    the bus factor of its group (:func:`costmodel.names.busbw_factor`: 2 (N-1)/N for an
    all-reduce, (N-1)/N for the others). Per synchronisation (gradient bytes
    ``G``, weight bytes ``W``): all-reduce ``2 f G``; ZeRO-1/2 reduce-scatter ``f G`` +
    all-gather ``f W``; ZeRO-3 two all-gathers and a reduce-scatter ``f (2 W + G)``. ZeRO-2
    reduce-scatters and ZeRO-3 does everything on every micro-batch (``k`` times). Hybrid
    sharding (M nodes of G): ``k ((G-1)/G (2 W + G) + 2 (M-1)/M G / G)``; ZeRO++ hpZ:
    ``k (f (W + G) + (G-1)/G W)``. ZeRO++ (``sweep.quantize``, ZeRO-3 rows) sends the
    weights as int8 (qwZ) and the gradients as int4/int8 by all-to-all (qgZ), as the sweep
    times them.
    """
    from costmodel.training import gradsync, overlap

    space = sweep.space
    ranks = space.gpus
    k = space.accumulation
    p = [memory.precision_for(d) for d in space.grad_dtypes]
    precision = memory.Precision(weight_bytes=np.array([[x.weight_bytes] for x in p], dtype=float),
                                 grad_bytes=np.array([[x.grad_bytes] for x in p], dtype=float),
                                 master_bytes=0)  # shaped (D, 1): against the cells' (C,)
    whole = overlap.BucketLayout(first_bytes=params * precision.grad_bytes, full_count=0.0,
                                 bucket_bytes=0.0, last_bytes=0.0)
    layouts = np.array(space.layouts, dtype=float)[space.cell_layout]
    nodes, per_node = layouts[..., 0], layouts[..., 1]
    weight_bits, grad_bits = sweep.quantize  # sync_plan reads them at ZeRO-3 only
    stages = []
    for stage in space.zero_stages:
        hybrid, hpz = stage == 3 and sweep.shard == "hybrid", stage == 3 and sweep.shard == "hpz"
        plan = gradsync.sync_plan(_volume(per_node if hybrid else ranks), per_node if hybrid else ranks, whole,
                                  precision, zero_stage=stage, weight_bits=weight_bits, grad_bits=grad_bits,
                                  replicas=_volume(nodes) if hybrid else None,
                                  replica_share=1.0 / per_node, replica_ranks=nodes if hybrid else None,
                                  secondary=_volume(per_node) if hpz else None)
        per_sync = plan.backward.first_s + plan.forward.first_s  # one bucket: its first is the whole
        stages.append(np.broadcast_to((k if plan.every_micro_batch else 1.0) * per_sync + plan.post_step_s,
                                      (len(p), len(k))))
    sent = np.stack(stages)[None, :, :, None, :]
    return np.broadcast_to(sent, space.shape)


def rule_keys(sweep, params: int, scores: np.ndarray, sent_max: float | None = None,
              sent: np.ndarray | None = None) -> list[np.ndarray]:
    """Lower-is-better keys, one per rule in :data:`RULES`, shaped like the sweep.
    ``sent_max``: the most bytes sent in the whole space when ``sweep`` covers part of it (the
    bytes key is relative to it); None: this sweep's own. ``sent``: :func:`bytes_sent` of
    ``sweep``, where the caller has it."""
    space = sweep.space
    comfortable = COMFORTABLE_HEADROOM_FRACTION * sweep.capacity_bytes
    headroom = np.minimum(sweep.capacity_bytes - sweep.memory_bytes, comfortable)
    zero = np.array(space.zero_stages, dtype=float).reshape(1, -1, 1, 1, 1)
    shape = space.shape
    # bytes rounded to 1 ppm so that floating-point noise between equal volumes is no preference
    sent = bytes_sent(sweep, params) if sent is None else sent
    sent = np.round(sent / max(float(sent.max()) if sent_max is None else sent_max, 1.0), 6)
    return [np.broadcast_to(k, shape) for k in
            (-headroom, sent, zero, space.gpus, score_key(scores), space.accumulation)]


def resolution(best: float) -> float:
    """The smallest score difference that counts near ``best``: :data:`SCORE_RESOLUTION` × |best|
    (at least one denormal, so a best of 0 still has a step). :func:`score_key` and
    :func:`within` both read it."""
    return max(SCORE_RESOLUTION * abs(best), 1e-300)


def score_key(scores: np.ndarray) -> np.ndarray:
    """The scores in steps of :data:`SCORE_RESOLUTION` × |best| above the best finite one (a score
    is lower-is-better: a negative throughput, a positive time or cost): every plan within that
    of the best has key 0, the best's, so splits the model times alike (their scores differ only
    by floating-point rounding) are equal on the score rule and the next rule decides, not the
    last bit of a sum. Non-finite scores (infeasible plans) keep an infinite key."""
    finite = np.isfinite(scores)
    if not finite.any():
        return np.full(scores.shape, np.inf)
    best = float(np.min(scores[finite]))
    step = resolution(best)
    with np.errstate(invalid="ignore"):
        return np.where(finite, np.floor((scores - best) / step), np.inf)


def fastest(scores: np.ndarray, keys: list[np.ndarray]) -> int:
    """Flat index of the fastest plan: the best score, and among scores equal to 1 ppb the one
    the rules order first (what ``tie_band=0`` chooses)."""
    return order(scores, keys, 0.0, 1)[0]


def interval_band(interval: tuple[float, float] | None, step_s: float) -> float:
    """Half the relative width of a step's 10-90 % interval, at least :data:`TIE_BAND` (that
    alone where there is no interval: the ideal backend, one GPU)."""
    if interval is None or not step_s > 0:
        return TIE_BAND
    low, high = interval
    return max(TIE_BAND, min((high - low) / (2 * step_s), MAX_INTERVAL_BAND))


def within(scores, best: float, tie_band: float):
    """Whether scores lie within ``tie_band`` of ``best``, or share its :func:`score_key` (less
    than :data:`SCORE_RESOLUTION` × |best| above it): tied with it even with no band."""
    return (scores <= best + tie_band * abs(best)) | (scores - best < resolution(best))


def tied(scores: np.ndarray, tie_band: float) -> np.ndarray:
    """Flat indices of the plans tied with the best finite score (:func:`within`)."""
    flat = scores.ravel()
    finite = np.isfinite(flat)
    if not finite.any():
        return np.flatnonzero(finite)
    return np.flatnonzero(finite & within(flat, float(np.min(flat[finite])), tie_band))


def scenario_tied(indices, scores, steps_s, lows_s, highs_s, throughput: bool, floor: float,
                  fastest: int) -> np.ndarray:
    """The flat ``indices`` (candidates: the plans within ``floor`` of the best, ``fastest``'s
    among them: :func:`fastest`) of the plans tied with the fastest in every scenario, and the
    fastest itself.

    A scenario is the model's uncertainty taken whole: every collective at the low end of its
    10-90 % interval, at its prediction, or at the high end. The errors behind an interval come
    from the links, the library and the cluster class that every plan of a sweep shares, so a
    scenario holds for all plans at once (as :func:`costmodel.training.oncluster.with_interval`
    takes the calls of one step together). A plan is tied when its score lies within ``floor`` of
    that scenario's best in each of the three (:func:`within`): never further behind, whichever
    way the collectives err. A plan tied at its prediction alone, but more than ``floor`` behind
    where the collectives run faster or slower, is told apart. "Within in any one scenario" tied
    plans 50 % slower, even one GPU, whose certain step wins the pessimistic scenario (planner
    review, 2026-11-28). Each plan's steps in the scenarios (``lows_s``, ``steps_s``, ``highs_s``)
    rescale its score: throughput scales with 1 / step, the totals (hours, GPU-hours, cost,
    energy) with the step."""
    indices, scores, steps = np.asarray(indices), np.asarray(scores, dtype=float), np.asarray(steps_s, dtype=float)
    found = np.ones(indices.size, dtype=bool)
    for end in (np.asarray(lows_s, dtype=float), steps, np.asarray(highs_s, dtype=float)):
        at = scores * (steps / end if throughput else end / steps)
        found &= within(at, float(np.min(at)), floor)
    found |= indices == fastest  # what the others are tied with
    return indices[found]


def order(scores: np.ndarray, keys: list[np.ndarray], tie_band: float, count: int,
          near: np.ndarray | None = None) -> list[int]:
    """Flat indices of the ``count`` first plans: the tied ones by the rules, then by score.
    ``near``: the tied plans' flat indices where they were found otherwise (:func:`scenario_tied`),
    else those within ``tie_band`` of the best (:func:`tied`)."""
    flat = scores.ravel()
    near = tied(scores, tie_band) if near is None else np.asarray(near, dtype=np.intp)
    flat_keys = [k.ravel()[near] for k in keys]
    first = near[np.lexsort((near, *reversed(flat_keys)))]
    rest_count = max(0, min(count, int(np.isfinite(flat).sum())) - first.size)
    if rest_count:
        others = np.where(np.isin(np.arange(flat.size), near), np.inf, flat)
        part = np.argpartition(others, rest_count - 1)[:rest_count] \
            if rest_count < others.size else np.arange(others.size)
        # by score, and plans of one score (to SCORE_RESOLUTION) by the rules, as the tied ones: exact
        # twins outside the tie set were listed by index (a planner audit, 2026-11-30)
        rule_keys = [k.ravel()[part] for k in keys]
        rest = part[np.lexsort((part, *reversed(rule_keys), score_key(others)[part]))]
        first = np.concatenate([first, rest[np.isfinite(others[rest])]])
    return [int(i) for i in first[:count]]


def deciding_rule(keys: list[np.ndarray], chosen: int, fastest: int) -> str | None:
    """The first rule on which ``chosen`` beats ``fastest`` (None when they are the same plan)."""
    if chosen == fastest:
        return None
    for name, key in zip(RULES, keys):
        a, b = float(key.ravel()[chosen]), float(key.ravel()[fastest])
        if a != b:
            return name
    # not reached: plans equal on every key are tied at no band, where the fastest is the rules'
    # first, so the chosen plan would be the fastest itself
    return "better score"
