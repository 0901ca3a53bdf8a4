"""Fit a piecewise latency-bandwidth curve to measured collective times (numpy only).

Per regime the time of a message of ``n`` bytes (nccl-tests "size") is ``A + C·n``: ``A`` the
latency floor in seconds, ``C`` seconds per byte.  A collective library's curve is a chain of
such regimes: NCCL switches protocol (LL → LL128 → Simple) and algorithm (tree ↔ ring) with
size, and within one protocol it first adds channels (the time stays flat while the channel
count grows with the size) and then saturates them (a ramp).  So the fit tries 1 to
``MAX_REGIMES`` contiguous regimes over the sorted sizes and keeps the best by a Laplace BIC:

    score(k) = 2s · ln(max(S_k / m, NOISE_FLOOR_REL)) + (3k − 1) · ln(s)

where ``s`` is the number of distinct sizes (repeated runs of a size measure noise, not the
curve: counting them would let noise buy regimes), ``m`` the number of points, ``S_k`` the least sum of absolute relative errors
``|pred/measured − 1|`` over all placements of the k−1 crossovers (found exactly by dynamic
programming), and ``3k − 1`` counts the parameters (A and C per regime plus the crossovers).  The search is
bounded so its cost does not grow with the log: a log of more than ``MAX_FIT_POINTS`` points
is fitted on weighted representatives (medians of slices of each size's times), and the
crossovers are searched at up to ``MAX_CUTS`` size boundaries, evenly spread (a note says so).
An extra regime must therefore cut the mean error by a factor ``m^(−3/m)``-ish, and no
improvement below the measurement noise floor counts: the criterion, not the cap, decides.

Each regime is fitted by robust least squares on relative error: iteratively reweighted least
squares converging to the least *absolute* relative error, with ``A ≥ 0`` and ``C ≥ 0``.
Every regime but the largest is either flat (``C = 0``, a channel ramp: the time holds while
channels are added) or no faster than the measured plateau (``C ≥ 1 / max(size/time)``): a
per-hop bandwidth above anything the link delivered is noise, not a protocol.
A 40 µs floor and a 230 GB/s plateau weigh the same because every error is relative.

Between two regimes (no measured size between the last size ``a`` of one and the first size
``b`` of the next) the hand-over is:

- where the two lines meet, if that lies in ``[a, b]`` (the library switches where the new
  protocol becomes faster: the curve is continuous and concave there);
- else a *transition* regime, the line from the first regime's time at ``a`` to the second's
  at ``b``: the switch happens somewhere in between, and channel count and chunk size change
  gradually with size, so the time is spread over the gap rather than jumping at a guessed
  size.  It is itself an α-β line (A ≥ 0 and C ≥ 0 exactly when the time does not fall and
  does not grow faster than the size across the gap).  If that line would be faster than the
  measured plateau, the time instead holds (flat, a channel ramp) until the second line
  reaches it;
- else, if the time falls across the gap, it holds the second regime's time at ``b`` from ``a``
  on (the fall is somewhere in the gap, so no size in it is predicted above either measured
  neighbour);
- else (the time more than scales with size across the gap) a jump at the geometric mean of
  ``a`` and ``b``.

Prediction: the regime whose size range contains ``n``.

A log whose time *falls* with size by more than ``NONMONOTONIC_FALL_REL`` cannot be followed by
any latency-bandwidth curve (time never decreases with size): the fit says so in a note, and
sizes around the fall are ambiguous by about its depth.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpbase.errors import InputError
from dpbase.values import frozen

# Bounds the search only: NCCL's 3 protocols, each with a channel ramp and a plateau, plus a
# tree/ring switch.  The criterion picks fewer on all but one of the validation logs.
MAX_REGIMES = 8
# A 2-parameter line needs a third size to show any error: repeated runs of one size (in-place
# and out-of-place) measure noise, not the curve's shape.
MIN_SIZES_PER_REGIME = 2
# Bounds on the work of the segment search, so calibrate is linear in the log: at most this
# many (weighted) points are fitted, and a regime may start at most at this many sizes. The
# validation logs (at most 32 sizes, 64 points) are far below both, so they are fitted exactly.
MAX_FIT_POINTS = 512
MAX_CUTS = 40  # a full -f 2 sweep from 8 B to 4 TiB has 39 size boundaries
# Median |in-place / out-of-place − 1| over the 734 rows of the validation logs
# (tests/data/calibration/raw, from /work/shared/validation): run-to-run noise of nccl-tests.
NOISE_FLOOR_REL = 0.0065
IRLS_ITERATIONS = 60
IRLS_MIN_WEIGHT_RESIDUAL = 1e-6  # residuals below this get the same (largest) weight
IRLS_RIDGE = 1e-10  # relative ridge keeping collinear segments (one size) solvable
# The latency floor counts as measured when A is at least this share of the smallest time.
MEASURED_FLOOR_SHARE = 0.5
# Two regime counts whose scores differ by less than this are reported as ambiguous
# (a BIC difference below 2 is "not worth more than a bare mention", Kass & Raftery 1995).
AMBIGUOUS_SCORE_GAP = 2.0
# A fall of the (fastest) time with size deeper than this is reported as non-monotonic.  The
# 22 monotonic validation logs with 12 or more sizes fall by at most 3.6 % (noise at the
# smallest sizes); the 3 that are not fall by 14 to 42 %.
NONMONOTONIC_FALL_REL = 0.05


@frozen(kw_only=True)
class Regime:
    """``time = latency_s + seconds_per_byte · n`` for ``n`` up to ``max_size_bytes``."""

    latency_s: float
    seconds_per_byte: float
    min_size_bytes: float  # smallest measured size fitted in it (a transition: where it starts)
    max_size_bytes: float  # crossover to the next regime; math.inf for the last
    points: int
    transition: bool = False  # a line bridging two fitted regimes across a gap (points = 0)

    def time_s(self, size_bytes: float) -> float:
        return self.latency_s + self.seconds_per_byte * size_bytes


@frozen(kw_only=True)
class Fall:
    """The time falls with size: ``to_time_s`` at the larger ``to_size_bytes`` is below
    ``from_time_s`` at ``from_size_bytes`` (fastest measurement of each size)."""

    from_size_bytes: float
    from_time_s: float
    to_size_bytes: float
    to_time_s: float

    @property
    def relative(self) -> float:
        """to / from − 1 (negative)."""
        return self.to_time_s / self.from_time_s - 1


@frozen(kw_only=True)
class Fit:
    """A fitted piecewise curve, the points it was fitted on and its residuals."""

    regimes: tuple[Regime, ...]
    sizes_bytes: tuple[float, ...]
    times_s: tuple[float, ...]
    relative_errors: tuple[float, ...]  # pred/measured − 1 per point
    scores: tuple[float, ...]  # score(k) for k = 1, 2, … (inf where too few points)
    falls: tuple[Fall, ...] = ()  # where the log is non-monotonic (deeper than the threshold)
    notes: tuple[str, ...] = ()

    @property
    def fitted_regimes(self) -> tuple[Regime, ...]:
        """The regimes fitted to points (without the transitions between them)."""
        return tuple(r for r in self.regimes if not r.transition)

    @property
    def bandwidth_share(self) -> float:
        """The share of the largest message's time its per-byte term takes (0 where the time does
        not grow with the size there): how much the log says about a bandwidth."""
        last, largest = self.regimes[-1], max(self.sizes_bytes)
        time_s = last.time_s(largest)
        return last.seconds_per_byte * largest / time_s if time_s > 0 else 0.0

    @property
    def crossovers_bytes(self) -> tuple[float, ...]:
        return tuple(r.max_size_bytes for r in self.regimes[:-1])

    @property
    def median_abs_pct_error(self) -> float:
        return 100 * float(np.median(np.abs(self.relative_errors)))

    @property
    def worst_abs_pct_error(self) -> float:
        return 100 * float(np.max(np.abs(self.relative_errors)))

    def predict_s(self, sizes_bytes: Sequence[float] | np.ndarray | float) -> np.ndarray:
        """Predicted time (s) of each size."""
        return predict_s(self.regimes, sizes_bytes)


def predict_s(regimes: Sequence[Regime], sizes_bytes: Sequence[float] | np.ndarray | float) -> np.ndarray:
    """Time (s) of each size with the regime whose range contains it."""
    sizes = np.asarray(sizes_bytes, dtype=float)
    bounds = np.array([r.max_size_bytes for r in regimes[:-1]])
    index = np.searchsorted(bounds, sizes, side="left")  # n <= max_size stays in the regime
    latency = np.array([r.latency_s for r in regimes])[index]
    slope = np.array([r.seconds_per_byte for r in regimes])[index]
    return latency + slope * sizes


def _irls(design: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per batch row b, θ_b minimising Σ_i mask[b,i]·|design[i]·θ_b − 1| (IRLS, batched).

    ``design`` is (points, p) and already scaled to order 1; ``mask`` (batch, points) holds
    each point's weight in the row (0 where it is not in the segment).
    """
    weights = mask.astype(float)
    p = design.shape[1]
    identity = np.eye(p)
    products = (design[:, :, None] * design[:, None, :]).reshape(len(design), p * p)  # (points, p²)
    theta = np.zeros((len(mask), p))
    for _ in range(IRLS_ITERATIONS):
        gram = (weights @ products).reshape(len(mask), p, p)  # Σ_m w·dᵢdⱼ per batch row (one BLAS call)
        diagonal = np.einsum("bii->bi", gram)
        gram = gram + identity * (IRLS_RIDGE * diagonal + np.finfo(float).tiny)[:, None, :]
        theta = np.linalg.solve(gram, (weights @ design)[:, :, None])[:, :, 0]
        fitted = theta[:, :1] * design[:, 0]  # θ·dᵀ column by column: cheaper than a k = p matmul
        for column in range(1, p):
            fitted += theta[:, column:column + 1] * design[:, column]
        residual = np.abs(fitted - 1)
        weights = mask / np.maximum(residual, IRLS_MIN_WEIGHT_RESIDUAL)
    return theta


def fit_lines(sizes_bytes: np.ndarray, times_s: np.ndarray, mask: np.ndarray,
              min_slope: float = 0.0) -> np.ndarray:
    """For each row of ``mask`` (which points belong to the segment), the best ``A + C·n``
    with ``A ≥ 0`` and ``C ≥ min_slope`` by least absolute relative error: an array of
    (A, C, Σ|relative error|).

    The problem is convex, so its optimum is the free one where that is feasible, else on the
    boundary: ``A = 0`` (slope only, at least ``min_slope``) or ``C = min_slope`` with the
    latency fitted to what the slope leaves: ``|A/t − (1 − C·n/t)|`` = ``s·|A/(t·s) − 1|`` with
    ``s = 1 − C·n/t``, a weighted fit of the design ``1/(t·s)``."""
    sizes, times = np.asarray(sizes_bytes, float), np.asarray(times_s, float)
    scale = np.array([times.min(), times.min() / sizes.max()])  # makes both columns order 1
    design = np.column_stack([1 / times, sizes / times]) * scale
    floor = min_slope / scale[1]
    free = _irls(design, mask)
    share = np.clip(1 - min_slope * sizes / times, 1e-12, None)  # what the floor slope leaves
    at_floor = np.column_stack([_irls(design[:, :1] / share[:, None], mask * share)[:, 0],
                                np.full(len(mask), floor)])
    slope_only = np.column_stack([np.zeros(len(mask)), np.maximum(_irls(design[:, 1:], mask)[:, 0], floor)])
    flat = np.column_stack([_irls(design[:, :1], mask)[:, 0], np.zeros(len(mask))])
    candidates = np.stack([free, at_floor, slope_only, flat])  # (4, batch, 2)
    candidates = np.where(candidates >= 0, candidates, 0.0)
    candidates[0][(free[:, 0] < 0) | (free[:, 1] < floor)] = np.inf  # a clipped free fit is not a candidate
    with np.errstate(invalid="ignore"):
        costs = (np.abs(candidates @ design.T - 1) * mask).sum(axis=2)
    costs = np.where(np.isfinite(costs), costs, np.inf)
    best = costs.argmin(axis=0)
    chosen = candidates[best, np.arange(len(mask))] * scale
    return np.column_stack([chosen, costs[best, np.arange(len(mask))]])


@frozen
class _Points:
    """The points the segments are fitted on: sorted sizes and times, each with a weight (how
    many measured points it stands for; 1 unless the log is larger than ``MAX_FIT_POINTS``)."""

    sizes: np.ndarray
    times: np.ndarray
    weights: np.ndarray

    @property
    def total(self) -> int:
        return int(round(float(self.weights.sum())))


def _representatives(sizes: np.ndarray, times: np.ndarray) -> _Points:
    """All points if there are at most ``MAX_FIT_POINTS``; else at most that many weighted ones:
    per distinct size the medians of up to q equal-count slices of its sorted times (weight =
    slice count), and if there are more distinct sizes than the cap, every j-th distinct size
    (first and last kept) standing for the sizes up to the next one kept.  Linear in the log
    after the sort, and what the segment search costs no longer grows with the log."""
    if len(sizes) <= MAX_FIT_POINTS:
        return _Points(sizes, times, np.ones(len(sizes)))
    distinct, starts, counts = np.unique(sizes, return_index=True, return_counts=True)
    if len(distinct) > MAX_FIT_POINTS:
        kept = np.unique(np.linspace(0, len(distinct) - 1, MAX_FIT_POINTS).round().astype(int))
        group_counts = np.add.reduceat(counts, kept)
        ordered = [np.sort(times[starts[i]:starts[i] + counts[i]]) for i in kept]
        return _Points(distinct[kept], np.array([float(np.median(t)) for t in ordered]),
                       group_counts.astype(float))
    per_size = max(1, MAX_FIT_POINTS // len(distinct))
    out_sizes, out_times, out_weights = [], [], []
    for size, start, count in zip(distinct, starts, counts):
        ordered = np.sort(times[start:start + count])
        for part in np.array_split(ordered, min(per_size, count)):
            out_sizes.append(size)
            out_times.append(float(np.median(part)))
            out_weights.append(float(len(part)))
    return _Points(np.array(out_sizes), np.array(out_times), np.array(out_weights))


def _candidate_cuts(sizes: np.ndarray) -> list[int]:
    """Where a regime may start: between two distinct sizes; at most ``MAX_CUTS`` of them,
    evenly spread over the distinct sizes, so the segments are at most ~MAX_CUTS²/2."""
    m = len(sizes)
    inner = [i for i in range(1, m) if sizes[i] > sizes[i - 1]]
    if len(inner) > MAX_CUTS:
        inner = [inner[int(j)] for j in np.unique(np.linspace(0, len(inner) - 1, MAX_CUTS).round().astype(int))]
    return [0] + inner + [m]


def plateau_slope(points: "_Points") -> float:
    """Seconds per byte at the measured plateau: 1 / the fastest measured size/time.  A sloped
    regime below the largest (and a transition) may not be faster than that: a per-hop
    bandwidth above what the link ever delivered is the fit bending to noise, not a protocol
    (a flat regime, ``C = 0``, is a channel ramp and stays allowed)."""
    return float(np.min(points.times / points.sizes))


def _segment_table(points: _Points) -> dict[tuple[int, int], tuple[float, float, float]]:
    """Fit of every contiguous range [i, j) between candidate cuts with enough points; every
    range but the last no faster than the measured plateau (:func:`plateau_slope`)."""
    m = len(points.sizes)
    cuts = _candidate_cuts(points.sizes)
    new_size = np.concatenate([[True], np.diff(points.sizes) > 0])
    cumulative = np.concatenate([[0], np.cumsum(new_size)])  # distinct sizes before each index
    segments = [(start, stop) for a, start in enumerate(cuts) for stop in cuts[a + 1:]
                if cumulative[stop] - cumulative[start] >= MIN_SIZES_PER_REGIME or (start == 0 and stop == m)]
    index = np.arange(m)
    table = {}
    for last, floor in ((False, plateau_slope(points)), (True, 0.0)):
        chosen = [s for s in segments if (s[1] == m) == last]
        if not chosen:
            continue
        mask = np.array([((index >= start) & (index < stop)) * points.weights for start, stop in chosen])
        fits = fit_lines(points.sizes, points.times, mask, floor)
        table.update({segment: (float(a), float(c), float(cost)) for segment, (a, c, cost) in zip(chosen, fits)})
    return table


def _best_partition(table, m: int, k: int) -> tuple[float, list[tuple[int, int]]] | None:
    """Least total cost of k contiguous segments covering [0, m) (dynamic programming)."""
    best: dict[tuple[int, int], tuple[float, list]] = {(0, 0): (0.0, [])}
    for used in range(1, k + 1):
        for (start, stop), (_, _, cost) in table.items():
            previous = best.get((used - 1, start))
            if previous is None:
                continue
            total = previous[0] + cost
            if (used, stop) not in best or total < best[(used, stop)][0]:
                best[(used, stop)] = (total, previous[1] + [(start, stop)])
    return best.get((k, m))


def _score(total_cost: float, m: int, sizes: int, k: int) -> float:
    """Laplace BIC over the ``sizes`` distinct sizes (repeated runs of a size are one
    observation of the curve: counting them would let noise buy regimes)."""
    return 2 * sizes * math.log(max(total_cost / m, NOISE_FLOOR_REL)) + (3 * k - 1) * math.log(sizes)


def _handover(left: tuple[float, float], right: tuple[float, float], last: float, first: float,
              min_slope: float = 0.0) -> tuple[float, tuple[float, float, float] | None]:
    """(crossover, transition (A, C, end size) or None) between the line ``left`` whose last
    measured size is ``last`` and the line ``right`` whose first is ``first`` (module docstring)."""
    (a1, c1), (a2, c2) = left, right
    if c1 != c2:
        meet = (a2 - a1) / (c1 - c2)
        if last <= meet <= first:
            return meet, None
    start, end = a1 + c1 * last, a2 + c2 * first
    slope = (end - start) / (first - last)
    latency = (start * first - end * last) / (first - last)  # >= 0 iff end/first <= start/last
    if slope >= min_slope and latency >= 0:
        return last, (latency, slope, first)
    if 0 <= slope < min_slope and c2 > slope:
        # The time grows slower across the gap than the link allows: the time holds (a
        # channel ramp, flat) until the next line reaches it, then follows that line.
        return last, (start, 0.0, (start - a2) / c2)
    if end < start:
        # The time falls across the gap: hold the later time. The fall happens somewhere in the
        # gap; extending the first line into it could exceed both measured neighbours (ABCI V100
        # 4 GPUs: 122.8 µs at 2.8 MiB by the line, 101.8 and 101.3 µs measured at 2 and 4 MiB).
        return last, (end, 0.0, first)
    return math.sqrt(last * first), None


def _regimes(table, segments, sizes: np.ndarray, weights: np.ndarray,
             min_slope: float = 0.0) -> tuple[Regime, ...]:
    """The fitted lines in size order, each followed by its hand-over (a transition regime
    when the next line does not meet it across the gap)."""
    lines = [table[s][:2] for s in segments]
    regimes = []
    for i, ((a, c), (start, stop)) in enumerate(zip(lines, segments)):
        bound, bridge = math.inf, None
        if i + 1 < len(segments):
            last, first = float(sizes[stop - 1]), float(sizes[segments[i + 1][0]])
            bound, bridge = _handover((a, c), lines[i + 1], last, first, min_slope)
        regimes.append(Regime(latency_s=a, seconds_per_byte=c, min_size_bytes=float(sizes[start]),
                              max_size_bytes=float(bound), points=int(round(float(weights[start:stop].sum())))))
        if bridge is not None:
            regimes.append(Regime(latency_s=bridge[0], seconds_per_byte=bridge[1], min_size_bytes=last,
                                  max_size_bytes=bridge[2], points=0, transition=True))
    return tuple(regimes)


def falls(sizes_bytes: Sequence[float], times_s: Sequence[float],
          threshold_rel: float = NONMONOTONIC_FALL_REL) -> tuple[Fall, ...]:
    """Where the fastest time of a size is below that of a smaller size by more than
    ``threshold_rel``: one :class:`Fall` per peak (the slowest time so far), from it to the
    lowest time below it before a new peak, deepest first.  The fastest of a size's
    measurements is used because interference only ever slows a run down."""
    sizes, times = np.asarray(sizes_bytes, float), np.asarray(times_s, float)
    order = np.argsort(sizes, kind="stable")
    sizes, times = sizes[order], times[order]
    distinct, starts = np.unique(sizes, return_index=True)
    fastest = np.minimum.reduceat(times, starts) if len(times) else np.array([])
    found: dict[int, int] = {}  # peak index -> index of the lowest time below it
    peak = 0  # the first index of the largest fastest time so far (a running argmax)
    for i in range(1, len(distinct)):
        if fastest[i - 1] > fastest[peak]:
            peak = i - 1
        if fastest[i] < (1 - threshold_rel) * fastest[peak]:
            if peak not in found or fastest[i] < fastest[found[peak]]:
                found[peak] = i
    result = [Fall(from_size_bytes=float(distinct[p]), from_time_s=float(fastest[p]),
                   to_size_bytes=float(distinct[i]), to_time_s=float(fastest[i])) for p, i in found.items()]
    return tuple(sorted(result, key=lambda fall: fall.relative))


# the worst |relative error| under which a fit of a falling log is said to follow its points
FALL_FOLLOWED = 0.25


def _fall_note(found: Sequence[Fall], worst_error: float = 0.0) -> str:
    """What a falling log means for the fit: the fit follows the measured points where its worst
    error stays small (FALL_FOLLOWED), else it says how far it is off (a log falling 99 % was said
    to be followed while the fit missed it by 99 %)."""
    from dpbase.units import format_size, format_time

    shown = "; ".join(f"{format_time(f.from_time_s)} at {format_size(f.from_size_bytes)} → "
                      f"{format_time(f.to_time_s)} at {format_size(f.to_size_bytes)} ({100 * f.relative:+.0f} %)"
                      for f in found)
    head = f"non-monotonic log: the time falls as the size grows ({shown}); no latency-bandwidth curve follows that"
    if worst_error > FALL_FOLLOWED:
        return f"{head}: the fit misses measured points by up to {100 * worst_error:.0f} %"
    return (f"{head}, so sizes there are ambiguous: the fit follows the measured points, but a size between "
            "them may be off by about the fall")


def _notes(regimes: Sequence[Regime], sizes: np.ndarray, times: np.ndarray, scores: list[float],
           found: Sequence[Fall] = (), worst_error: float = 0.0) -> list[str]:
    notes, distinct = [], len(np.unique(sizes))
    if distinct == 1:
        notes.append("one message size: latency and bandwidth cannot be separated; "
                     "latency set to 0 and all the time put on bandwidth")
    elif distinct == 2:
        notes.append("two message sizes: the line passes through both, so its error is unknown")
    elif regimes[0].latency_s < MEASURED_FLOOR_SHARE * times[0]:
        notes.append(f"no size is latency-bound (smallest size {sizes[0]:.0f} B): "
                     "the latency is extrapolated, not measured")
    finite = sorted((s, k + 1) for k, s in enumerate(scores) if math.isfinite(s))
    if len(finite) > 1 and finite[1][0] - finite[0][0] < AMBIGUOUS_SCORE_GAP:
        notes.append(f"{finite[0][1]} and {finite[1][1]} regimes fit about equally well "
                     f"(scores {finite[0][0]:.1f} and {finite[1][0]:.1f}); the crossovers are uncertain")
    if found:
        notes.append(_fall_note(found, worst_error))
    return notes


def _points(sizes_bytes: Any, times_s: Any) -> tuple[np.ndarray, np.ndarray]:
    """The measured sizes and times as float arrays of one length, each a list of numbers (text,
    None or a ragged pair is refused in one line, not an IndexError or a TypeError)."""
    try:
        sizes, times = np.asarray(sizes_bytes, dtype=float).ravel(), np.asarray(times_s, dtype=float).ravel()
    except (TypeError, ValueError):
        raise InputError("measurements", "sizes and times", "two lists of numbers (bytes and seconds)") from None
    if np.asarray(sizes_bytes).ndim != 1 or np.asarray(times_s).ndim != 1:
        raise InputError("measurements", "sizes and times", "two lists of numbers (bytes and seconds)")
    if len(sizes) != len(times):
        raise InputError("measurements", f"{len(sizes)} sizes and {len(times)} times",
                         "two lists of numbers of equal length (bytes and seconds)")
    return sizes, times


def _check_points(sizes: np.ndarray, times: np.ndarray) -> None:
    if len(sizes) == 0:
        raise InputError("measurements", "no rows with a positive size and time", "at least one row")
    if len(sizes) != len(times) or not (np.all(times > 0) and np.all(sizes > 0)) \
            or not (np.all(np.isfinite(times)) and np.all(np.isfinite(sizes))):
        raise InputError("measurements", "sizes and times", "finite positive sizes and times of equal length")


def _bandwidth_only(sizes: np.ndarray, times: np.ndarray) -> Fit:
    """One message size: all the time is put on bandwidth (C = median time / size)."""
    slope = float(np.median(times / sizes))
    regime = Regime(latency_s=0.0, seconds_per_byte=slope, min_size_bytes=float(sizes[0]),
                    max_size_bytes=math.inf, points=len(sizes))
    errors = slope * sizes / times - 1
    return Fit(regimes=(regime,), sizes_bytes=tuple(map(float, sizes)), times_s=tuple(map(float, times)),
               relative_errors=tuple(float(e) for e in errors), scores=(math.inf,) * MAX_REGIMES,
               notes=tuple(_notes((regime,), sizes, times, [])))


def fit_times(sizes_bytes: Sequence[float], times_s: Sequence[float], max_regimes: int = MAX_REGIMES) -> Fit:
    """Fit 1 to ``max_regimes`` regimes to measured (size, time) points (see module docstring)."""
    sizes, times = _points(sizes_bytes, times_s)
    order = np.argsort(sizes, kind="stable")
    sizes, times = sizes[order], times[order]
    _check_points(sizes, times)
    if isinstance(max_regimes, bool) or not isinstance(max_regimes, (int, np.integer)) \
            or not 1 <= max_regimes <= MAX_REGIMES:
        raise InputError("max_regimes", max_regimes, f"an integer from 1 to {MAX_REGIMES}")
    if len(np.unique(sizes)) == 1:
        return _bandwidth_only(sizes, times)
    points = _representatives(sizes, times)
    table, m = _segment_table(points), len(sizes)
    options = [_best_partition(table, len(points.sizes), k) for k in range(1, max_regimes + 1)]
    distinct = len(np.unique(sizes))
    scores = [_score(o[0], m, distinct, k) if o else math.inf for k, o in enumerate(options, start=1)]
    chosen = options[int(np.argmin(scores))]
    regimes = _regimes(table, chosen[1], points.sizes, points.weights, plateau_slope(points))
    errors = predict_s(regimes, sizes) / times - 1
    found = falls(sizes, times)
    notes = _notes(regimes, sizes, times, scores, found, float(np.max(np.abs(errors))) if len(errors) else 0.0)
    boundaries = int(np.count_nonzero(np.diff(points.sizes) > 0))
    if len(points.sizes) < m or boundaries > MAX_CUTS:
        notes.append(f"large log ({m} points, {boundaries + 1} sizes): fitted on {len(points.sizes)} weighted "
                     f"representative points, crossovers searched at {min(boundaries, MAX_CUTS)} of "
                     f"{boundaries} size boundaries; residuals are over every point")
    return Fit(regimes=regimes, sizes_bytes=tuple(map(float, sizes)), times_s=tuple(map(float, times)),
               relative_errors=tuple(float(e) for e in errors), scores=tuple(scores), falls=found,
               notes=tuple(notes))


def cross_validate(sizes_bytes: Sequence[float], times_s: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Two-fold cross-validation over message sizes: fit on every other distinct size and
    predict the others, then swap.  Returns (size, relative error) for every point, each
    predicted by a fit that never saw its size.  Needs at least 4 distinct sizes."""
    sizes, times = _points(sizes_bytes, times_s)
    distinct = np.unique(sizes)
    if len(distinct) < 4:
        raise InputError("sizes", len(distinct), "at least 4 distinct message sizes to cross-validate")
    fold = np.searchsorted(distinct, sizes) % 2
    errors = np.empty(len(sizes))
    for held_out in (0, 1):
        train = fold != held_out
        fit = fit_times(sizes[train], times[train])
        errors[~train] = fit.predict_s(sizes[~train]) / times[~train] - 1
    return sizes, errors
