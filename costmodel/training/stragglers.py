"""Stragglers of synchronous steps and staleness of asynchronous ones.

Synchronous data parallelism waits at every gradient synchronisation for the slowest of the
``N`` ranks. Each rank's compute time between two synchronisations is modelled as normal with
mean ``μ`` and coefficient of variation ``σ`` (the "jitter"); the expected slowest is

    E[max] = μ · (1 + σ · e_N),   e_N = E[max of N standard normals]
           = ∫ x · d(Φ(x)^N)     (computed by numerical integration on a fine grid).

When ``k`` micro-batches run between two synchronisations (gradient accumulation with
``no_sync``) and their jitters are independent, the sum has coefficient of variation
``σ / √k``, so accumulation also shrinks the straggler wait. The normal model is meant for
small jitter (σ ≲ 0.3); e_2 = 1/√π ≈ 0.564, e_8 ≈ 1.424, e_1000 ≈ 3.241.

One persistently slow rank (compute × ``f``, the same relative spread) among ``N``: the step
waits for ``max(A, B)``, ``A ~ N(f, (fσ)²)`` that rank and ``B = 1 + σ·M`` the slowest of the
other ``N − 1`` (``M`` the maximum of ``N − 1`` standard normals). Since ``A`` is normal,
``E[max(A, B)] = E[B] + E[(A − B)⁺]`` with ``E[(A − b)⁺] = d·Φ(d/fσ) + fσ·φ(d/fσ)``,
``d = f − b``, integrated over ``M``'s density on the same grid: exact to the grid's error, so a
slow rank inside the spread of the others (``f`` = 1.05 among 128 GPUs at σ = 2.5 %, whose
slowest is ≈ 1.065 anyway) still raises the wait a little, and ``f`` = 1 gives ``1 + σ·e_N``.

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

# e_N = ∫ x · N φ(x) Φ(x)^(N−1) dx by Simpson's rule on [−12, 12] (Φ(−12) < 1e-32); the step
# 0.01 keeps the error below 1e-8 for N up to 10^6 (the integrand's peak is ≥ 0.2 wide).
_GRID_LIMIT = 12.0
_GRID_POINTS = 2_401  # odd: Simpson pairs
MAX_JITTER_CV = 1.0


@functools.cache
def _normal_grid() -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...], tuple[float, ...]]:
    """(x, Simpson weight × φ(x) × x, Φ(x), Simpson weight × φ(x)) on the grid: 4,802
    ``exp``/``erf`` in plain Python (no numpy), ~10 M instructions, so computed once per
    installation and kept beside the parsed data files (:func:`dpbase.bundled.derived`, again
    whenever this module changes)."""
    return derived(__file__, "normal-grid", _compute_normal_grid)


def _compute_normal_grid() -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...], tuple[float, ...]]:
    step = 2 * _GRID_LIMIT / (_GRID_POINTS - 1)
    xs = tuple(-_GRID_LIMIT + i * step for i in range(_GRID_POINTS))
    weights = [1.0] + [4.0 if i % 2 else 2.0 for i in range(1, _GRID_POINTS - 1)] + [1.0]
    scale = step / 3.0 / math.sqrt(2.0 * math.pi)
    density = tuple(w * scale * math.exp(-0.5 * x * x) for w, x in zip(weights, xs))
    weighted = tuple(d * x for d, x in zip(density, xs))
    return xs, weighted, tuple(_cdf(x) for x in xs), density


def _cdf(z: float) -> float:
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


@functools.cache
def _expected_max_scalar(ranks: int) -> float:
    if ranks <= 1:
        return 0.0
    _, weighted, cdf, _ = _normal_grid()
    power = ranks - 1
    if "numpy" in sys.modules:  # the planner's path: the same products, computed by numpy
        terms = (np.asarray(weighted) * np.asarray(cdf) ** power).tolist()
    else:  # one answer on Python floats: numpy stays unloaded
        terms = [w * c**power for w, c in zip(weighted, cdf)]
    # A plain left-to-right sum, the same float on either path. Its rounding error (2401 terms of
    # at most ~0.01) is ~1e-14, far inside the grid's 1e-8; math.fsum was 10x the cost, because the
    # terms span 300 decades.
    return ranks * sum(terms)


def expected_max_standard_normal(ranks):
    """e_N, the expected maximum of ``ranks`` independent standard normals (arrays allowed)."""
    if is_scalar(ranks):
        return _expected_max_scalar(int(ranks))
    values = np.asarray(ranks, dtype=int)
    if values.ndim == 0:
        return _expected_max_scalar(int(values))
    unique, inverse = np.unique(values, return_inverse=True)
    table = np.array([_expected_max_scalar(int(n)) for n in unique])
    return table[inverse].reshape(values.shape)


def check_jitter(jitter_cv: float) -> float:
    """The jitter coefficient of variation, validated."""
    if not 0.0 <= jitter_cv <= MAX_JITTER_CV:
        raise InputError("jitter", jitter_cv, f"a coefficient of variation in [0, {MAX_JITTER_CV}]")
    return float(jitter_cv)


def straggler_factor(jitter_cv, ranks, micro_batches_per_sync=1):
    """E[slowest of N] / mean compute time between synchronisations; elementwise."""
    return 1.0 + jitter_cv / ew.sqrt(micro_batches_per_sync) * expected_max_standard_normal(ranks)


def slowest_rank_factor(jitter_cv, ranks, micro_batches_per_sync=1, speed_cv=0.0,
                        slow_node_factor=1.0):
    """E[slowest of N] / mean compute between synchronisations, with every straggler source.

    Per-micro-batch jitter ``σ_j`` averages over the ``k`` micro-batches between two
    synchronisations (``σ_j/√k``); the persistent GPU speed spread ``σ_s`` does not. The two
    are independent, so one rank's deviation has ``√(σ_j²/k + σ_s²)`` and the slowest of N is
    ``1 + √(σ_j²/k + σ_s²) · e_N``. One persistently slow rank (compute × ``slow_node_factor``,
    a scalar) is the slowest of it and the other N − 1 (the module docstring). One rank never
    waits. Elementwise.
    """
    spread = ew.sqrt(ew.operand(jitter_cv) ** 2 / ew.operand(micro_batches_per_sync) + ew.operand(speed_cv) ** 2)
    if slow_node_factor == 1.0:
        factor = 1.0 + spread * expected_max_standard_normal(ranks)
    elif is_scalar(ranks) and is_scalar(spread):
        factor = _with_slow_rank(int(ranks), float(spread), float(slow_node_factor))
    else:  # the planner's arrays: one integral per distinct (ranks, spread)
        shape = np.broadcast(np.asarray(ranks), np.asarray(spread)).shape
        pairs = np.stack([np.broadcast_to(ranks, shape).ravel(), np.broadcast_to(spread, shape).ravel()], axis=1)
        unique, inverse = np.unique(pairs, axis=0, return_inverse=True)
        table = np.array([_with_slow_rank(int(n), float(cv), float(slow_node_factor)) for n, cv in unique])
        factor = table[np.asarray(inverse).ravel()].reshape(shape)
    return ew.where(ew.greater(ranks, 1), factor, 1.0)


@functools.cache
def _with_slow_rank(ranks: int, spread: float, slow: float) -> float:
    """E[max(A, B)]: one rank ``A ~ N(slow, (slow·spread)²)``, the slowest of the other
    ``ranks − 1`` ``B = 1 + spread·M`` (the module docstring)."""
    if ranks <= 1:
        return 1.0
    if spread <= 0.0:
        return max(slow, 1.0)
    xs, _, cdf, density = _normal_grid()
    others, width = ranks - 1, slow * spread
    excess = 0.0
    for x, c, d in zip(xs, cdf, density):
        if d == 0.0:
            continue
        gap = slow - 1.0 - spread * x  # A's mean over this value of B
        z = gap / width
        excess += (gap * _cdf(z) + width * math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)) * d * c ** (others - 1)
    return 1.0 + spread * _expected_max_scalar(others) + others * excess


def async_staleness_updates(ranks):
    """Expected number of other workers' updates a gradient is late by (N − 1)."""
    return ew.maximum(ew.operand(ranks) - 1, 0)
