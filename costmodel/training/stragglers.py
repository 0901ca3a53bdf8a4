"""Stragglers of synchronous steps and staleness of asynchronous ones.

Synchronous data parallelism waits at every gradient synchronisation for the slowest of the
``N`` ranks. A rank's compute time between two synchronisations is ``μ·(1 + S + J)``, ``μ`` the
fastest GPU's:

* ``J`` the **jitter**, normal with mean 0 and coefficient of variation ``σ_j`` per micro-batch.
  When ``k`` micro-batches run between two synchronisations (gradient accumulation with
  ``no_sync``) and their jitters are independent, the sum has ``σ_j / √k``, so accumulation
  shrinks this wait. Alone, the expected slowest is ``μ·(1 + σ_j/√k · e_N)``,
  ``e_N = E[max of N standard normals] = ∫ x · d(Φ(x)^N)`` (e_2 = 1/√π ≈ 0.564, e_8 ≈ 1.424,
  e_1000 ≈ 3.241).
* ``S`` the **persistent speed spread** of identical GPUs, which accumulation does not average.
  It is one-sided: a GPU runs at most at its clock ceiling, and power management slows each by
  its own amount below it (Sinha et al. 2022, SC'22: same-SKU GPUs vary through power
  management, with outliers up to 1.5× slower than the median and none as far faster). ``S`` is
  half-normal, ``S = c·|Z|`` with standard deviation ``σ_s = c·√(1 − 2/π)``; alone, the slowest
  of N is ``μ·(1 + c·h_N)``, ``h_N = E[max of N |Z|] = ∫₀^∞ 1 − (2Φ(x) − 1)^N dx``
  (h_1 = √(2/π) ≈ 0.798, h_2 = 2/√π ≈ 1.128, h_8 ≈ 1.783, h_1024 ≈ 3.442). Against one GPU
  the slowest of 1,024 loses 2.7× what the slowest of 8 does (h_N − h_1); a symmetric (normal)
  spread said 2.3× (e_1024 / e_8), charging a node too much against the large runs
  (docs/validation.md, 2026-12-01).

``S + J`` is skew-normal (``c|Z₁| + j·Z₂``: scale ``ω = √(c² + j²)``, shape ``α = c/j``; CDF
``Φ(z) − 2·T(z, α)``, ``T`` Owen's function), and the expected slowest of N is
``∫ x · d(F(x)^N)`` on a fine grid. The step is timed against the average GPU (a published
single-GPU speed is one GPU's, any of them), so the factor the compute is stretched by is

    E[slowest] / E[one] = (1 + E[max of N (S + J)]) / (1 + c·√(2/π))

which is 1 for one rank. The normal model is meant for small jitter (σ ≲ 0.3).

One persistently slow rank (compute × ``f``, the same spread): the step waits for
``max(A, B)``, ``A = f·(1 + S + J)`` that rank and ``B = 1 + max of the other N − 1``:
``E[max(A, B)] = t₁ − ∫ F_A(t)·F_B(t) dt`` over the support, integrated on a fine grid. A slow
rank inside the spread of the others (``f`` = 1.05 among 128 GPUs at σ_s = 2.5 %) still raises
the wait a little, and ``f`` = 1 gives the plain slowest of N.

Asynchronous parameter-server training never waits; a gradient is instead computed on stale
weights. With ``N`` workers of equal speed pushing to the server, each worker's cycle (pull,
compute, push) takes the same time ``τ`` and every other worker lands one update per ``τ`` on
average, so ``N − 1`` other updates are applied between a worker's pull and its push: the
expected staleness is ``N − 1`` updates. This is the round-robin argument of Zhang, Gupta,
Lian & Liu 2016 ("Staleness-aware Async-SGD for Distributed Deep Learning", IJCAI), who
report an average staleness close to the number of learners in their measurements.
"""

from __future__ import annotations

import functools
import math
import sys

from dpbase import elementwise as ew
from dpbase.bundled import derived
from dpbase.errors import InputError
from dpbase.lazynp import is_scalar, np

# E[max of N] = ∫₀ 1 − F^N − ∫⁰ F^N by Simpson's rule on [−12, 12] (Φ(−12) < 1e-32) in units of
# the variable's scale; the step 0.01 keeps the error below 1e-8 for N up to 10^6 (F^N's rise is
# ≥ 0.2 wide).
_GRID_LIMIT = 12.0
_GRID_POINTS = 2_401  # odd: Simpson pairs
MAX_JITTER_CV = 1.0
# |Z|'s mean and standard deviation: the speed spread S = c·|Z| has σ_s = c·√(1 − 2/π).
HALF_NORMAL_MEAN = math.sqrt(2.0 / math.pi)
HALF_NORMAL_SD = math.sqrt(1.0 - 2.0 / math.pi)
# Owen's T by Simpson's rule over θ in [0, atan(a)], a ≤ 1 (the integrand is at most 1 and
# smooth; a > 1 goes through Owen's identity to a = 1/α): 64 intervals keep the skew-normal CDF
# within ~1e-9 of an arbitrary-precision one at every shape.
_OWEN_INTERVALS = 64
# The slow rank's integral over t: Simpson on this many intervals of its support.
_SLOW_RANK_INTERVALS = 2_000


@functools.cache
def _normal_grid() -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(x, Φ(x)) on the grid: 2,401 ``erf`` in plain Python (no numpy), computed once per
    installation and kept beside the parsed data files (:func:`dpbase.bundled.derived`, again
    whenever this module changes)."""
    return derived(__file__, "normal-grid", _compute_normal_grid)


def _compute_normal_grid() -> tuple[tuple[float, ...], tuple[float, ...]]:
    step = 2 * _GRID_LIMIT / (_GRID_POINTS - 1)
    xs = tuple(-_GRID_LIMIT + i * step for i in range(_GRID_POINTS))
    return xs, tuple(_cdf(x) for x in xs)


def _cdf(z: float) -> float:
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


def _simpson(values: list[float], step: float) -> float:
    """Simpson's rule over an odd number of equally spaced ``values``."""
    last = len(values) - 1
    inner = sum((4.0 if i % 2 else 2.0) * v for i, v in enumerate(values[1:last], start=1))
    return (values[0] + inner + values[last]) * step / 3.0


@functools.cache
def _owen_nodes(shape: float) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Simpson weights (÷ 2π) and 1/(2cos²θ) on θ ∈ [0, atan a] for Owen's T(h, a), a ≤ 1."""
    top = math.atan(shape)
    step = top / _OWEN_INTERVALS
    weights, rates = [], []
    for i in range(_OWEN_INTERVALS + 1):
        w = 1.0 if i in (0, _OWEN_INTERVALS) else (4.0 if i % 2 else 2.0)
        weights.append(w * step / 3.0 / (2.0 * math.pi))
        rates.append(0.5 / math.cos(i * step) ** 2)
    return tuple(weights), tuple(rates)


def _owen_t(hs, shape: float) -> list[float]:
    """Owen's T(h, a) = (1/2π) ∫₀^atan(a) exp(−h²/(2cos²θ)) dθ at every one of ``hs`` (even in h);
    for a > 1 by Owen's (1956) identity T(h, a) = ½Φ(h) + ½Φ(ah) − Φ(h)Φ(ah) − T(ah, 1/a) (h ≥ 0),
    whose θ-range is at most π/4 (the quadrature over [0, atan a] loses accuracy as a grows: 3e-4
    at a = 100). The quadrature's sums are one numpy product where numpy is loaded already (the
    planner's path; equal to ~1e-16), Python floats for one answer (numpy stays unloaded)."""
    if shape > 1.0:
        near = [abs(h) for h in hs]
        far = [shape * h for h in near]
        rest = _owen_t(far, 1.0 / shape)
        return [0.5 * _cdf(n) + 0.5 * _cdf(f) - _cdf(n) * _cdf(f) - r for n, f, r in zip(near, far, rest)]
    weights, rates = _owen_nodes(shape)
    if "numpy" in sys.modules:
        squares = np.asarray(hs, dtype=float) ** 2
        return (np.exp(-np.outer(squares, rates)) @ np.asarray(weights)).tolist()
    return [sum(w * math.exp(-h * h * r) for w, r in zip(weights, rates)) for h in hs]


def _cdf_values(points, alpha: float, phis=None) -> list[float]:
    """The CDF of the standardised spread plus jitter at every one of ``points`` (``phis``: their
    Φ, if known): the normal (α = 0), the half-normal (α = inf), else the skew-normal
    ``Φ(z) − 2·T(z, α)``."""
    phis = [_cdf(z) for z in points] if phis is None else phis
    if alpha == 0.0:
        return list(phis)
    if math.isinf(alpha):
        return [max(0.0, 2.0 * phi - 1.0) for phi in phis]
    return [min(1.0, max(0.0, phi - 2.0 * t)) for phi, t in zip(phis, _owen_t(points, alpha))]


@functools.cache
def _cdf_table(alpha: float) -> tuple[float, ...]:
    """The standardised CDF of shape α on the grid (one table per shape: a plan with --jitter
    meets one shape per accumulation count)."""
    xs, phis = _normal_grid()
    return tuple(_cdf_values(xs, alpha, phis))


@functools.cache
def _expected_max_standard(ranks: int, alpha: float) -> float:
    """E[max of N] of the standardised variable of shape α: ∫₀ 1 − F^N − ∫⁰ F^N on the grid."""
    if ranks < 1:
        return 0.0
    xs, _ = _normal_grid()
    half, step = _GRID_POINTS // 2, xs[1] - xs[0]
    cdf = _cdf_table(alpha)
    return (_simpson([1.0 - c**ranks for c in cdf[half:]], step)
            - _simpson([c**ranks for c in cdf[:half + 1]], step))


def _by_distinct(scalar, *arrays):
    """``scalar`` of the numbers in ``arrays`` (broadcast together), computed once per distinct
    tuple; plain numbers give a plain number."""
    if all(is_scalar(a) for a in arrays):
        return scalar(*arrays)
    shape = np.broadcast(*(np.asarray(a) for a in arrays)).shape
    keys = np.stack([np.broadcast_to(np.asarray(a, dtype=float), shape).ravel() for a in arrays], axis=1)
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    table = np.array([scalar(*key.tolist()) for key in unique])
    return table[np.asarray(inverse).ravel()].reshape(shape)


def expected_max_standard_normal(ranks):
    """e_N, the expected maximum of ``ranks`` independent standard normals (arrays allowed)."""
    return _by_distinct(lambda n: _expected_max_standard(int(n), 0.0), ranks)


def expected_max_half_normal(ranks):
    """h_N, the expected maximum of ``ranks`` independent |standard normal|s (arrays allowed)."""
    return _by_distinct(lambda n: _expected_max_standard(int(n), math.inf), ranks)


def check_jitter(jitter_cv: float) -> float:
    """The jitter coefficient of variation, validated."""
    if not 0.0 <= jitter_cv <= MAX_JITTER_CV:
        raise InputError("jitter", jitter_cv, f"a coefficient of variation in [0, {MAX_JITTER_CV}]")
    return float(jitter_cv)


def straggler_factor(jitter_cv, ranks, micro_batches_per_sync=1):
    """E[slowest of N] / mean compute time between synchronisations, jitter alone; elementwise."""
    return 1.0 + jitter_cv / ew.sqrt(micro_batches_per_sync) * expected_max_standard_normal(ranks)


def _spread_max(ranks: int, scale: float, jitter: float) -> float:
    """E[max of N (c·|Z₁| + j·Z₂)] for the spread's scale ``c`` and the jitter ``j``: the
    standardised maximum of shape c/j, times the scale √(c² + j²)."""
    width = math.hypot(scale, jitter)
    return 0.0 if width == 0.0 else width * _expected_max_standard(ranks, _shape(scale, jitter))


def _shape(scale: float, jitter: float) -> float:
    return math.inf if jitter <= 0.0 else scale / jitter


def slowest_rank_factor(jitter_cv, ranks, micro_batches_per_sync=1, speed_cv=0.0,
                        slow_node_factor=1.0):
    """E[slowest of N] / E[one rank]'s compute between synchronisations, every straggler source.

    Per-micro-batch jitter ``σ_j`` averages over the ``k`` micro-batches between two
    synchronisations (``σ_j/√k``); the persistent GPU speed spread ``σ_s`` (half-normal, one-sided)
    does not. One persistently slow rank (compute × ``slow_node_factor``) is the slowest of it and
    the other N − 1 (the module docstring). One rank never waits. ``jitter_cv``, ``speed_cv`` and
    ``slow_node_factor`` are scalars; ``ranks`` and ``micro_batches_per_sync`` may be arrays (one
    value per distinct pair; without jitter the result has ranks' shape, the count not entering).
    """
    scale = float(speed_cv) / HALF_NORMAL_SD
    jitter, slow = float(jitter_cv), float(slow_node_factor)
    if jitter == 0.0:  # the default: the accumulation count does not enter (ranks' shape)
        return _by_distinct(lambda n: _factor(int(n), scale, 0.0, slow), ranks)
    return _by_distinct(lambda n, k: _factor(int(n), scale, jitter / math.sqrt(k), slow), ranks,
                        micro_batches_per_sync)


@functools.cache
def _factor(ranks: int, scale: float, jitter: float, slow: float) -> float:
    if ranks <= 1:
        return 1.0
    slowest = 1.0 + _spread_max(ranks, scale, jitter) if slow == 1.0 else _with_slow_rank(ranks, scale, jitter, slow)
    return slowest / (1.0 + scale * HALF_NORMAL_MEAN)


@functools.cache
def _with_slow_rank(ranks: int, scale: float, jitter: float, slow: float) -> float:
    """E[max(A, B)]: one rank ``A = slow·(1 + X)``, the slowest of the other ``ranks − 1``
    ``B = 1 + max X`` (X the spread plus jitter), as ``t₁ − ∫ F_A(t)·F_B(t) dt`` over the support."""
    width = math.hypot(scale, jitter)
    if width <= 0.0:
        return max(slow, 1.0)
    alpha = _shape(scale, jitter)
    low, high = 1.0 - _GRID_LIMIT * width, max(slow, 1.0) * (1.0 + _GRID_LIMIT * width)
    step = (high - low) / _SLOW_RANK_INTERVALS
    ts = [low + i * step for i in range(_SLOW_RANK_INTERVALS + 1)]
    slow_rank = _cdf_values([(t / slow - 1.0) / width for t in ts], alpha)
    others = _cdf_values([(t - 1.0) / width for t in ts], alpha)
    return high - _simpson([a * b ** (ranks - 1) for a, b in zip(slow_rank, others)], step)


def async_staleness_updates(ranks):
    """Expected number of other workers' updates a gradient is late by (N − 1)."""
    return ew.maximum(ew.operand(ranks) - 1, 0)
