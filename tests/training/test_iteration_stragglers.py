"""Slowest of N (synchronous) and staleness (asynchronous)."""

from __future__ import annotations

import numpy as np
import pytest

from costmodel.training import stragglers
from dpbase.errors import InputError


@pytest.mark.parametrize(("ranks", "expected"), [
    (1, 0.0), (2, 1 / np.sqrt(np.pi)), (3, 1.5 / np.sqrt(np.pi)),
    # Tabulated expected maxima of N standard normals (Harter 1961; Teichroew 1956).
    (4, 1.029375), (8, 1.423600), (16, 1.765991), (100, 2.507594),
])
def test_expected_max_of_standard_normals(ranks, expected):
    assert stragglers.expected_max_standard_normal(ranks) == pytest.approx(expected, abs=2e-5)


def test_expected_max_against_monte_carlo():
    rng = np.random.default_rng(7)
    sample = rng.standard_normal((20_000, 64)).max(axis=1).mean()
    assert stragglers.expected_max_standard_normal(64) == pytest.approx(sample, abs=0.02)


def test_expected_max_grows_with_ranks_and_is_vectorised():
    values = stragglers.expected_max_standard_normal(np.array([2, 8, 64, 1024, 8]))
    assert np.all(np.diff(values[:4]) > 0)
    assert values[1] == values[4]


def test_accumulation_shrinks_straggler_factor():
    one = stragglers.straggler_factor(0.1, 64, 1)
    four = stragglers.straggler_factor(0.1, 64, 4)
    assert float(four - 1) == pytest.approx(float(one - 1) / 2)


def test_async_staleness_is_n_minus_one():
    assert stragglers.async_staleness_updates(1) == 0
    assert stragglers.async_staleness_updates(16) == 15


def test_jitter_is_validated():
    with pytest.raises(InputError, match="jitter"):
        stragglers.check_jitter(-0.1)


def _spread_sample(rng, shape, spread, jitter=0.0):
    """Draws of S + J: the half-normal speed spread of standard deviation ``spread`` and the jitter."""
    scale = spread / stragglers.HALF_NORMAL_SD
    return scale * np.abs(rng.standard_normal(shape)) + jitter * rng.standard_normal(shape)


@pytest.mark.parametrize(("ranks", "expected"), [
    (1, np.sqrt(2 / np.pi)), (2, 2 / np.sqrt(np.pi)),
    # P(max of N |Z| ≤ x) = (2Φ(x) − 1)^N: h_1 = E|Z| = √(2/π), h_2 = 2/√π
])
def test_expected_max_of_half_normals_in_closed_form(ranks, expected):
    assert stragglers.expected_max_half_normal(ranks) == pytest.approx(expected, abs=1e-8)


@pytest.mark.parametrize("ranks", [8, 64, 1024])
def test_expected_max_of_half_normals_against_monte_carlo(ranks):
    rng = np.random.default_rng(5)
    sample = np.abs(rng.standard_normal((4_000, ranks))).max(axis=1).mean()
    assert stragglers.expected_max_half_normal(ranks) == pytest.approx(sample, abs=0.02)
    values = stragglers.expected_max_half_normal(np.array([2, ranks, 2]))
    assert values[1] == stragglers.expected_max_half_normal(ranks) and values[0] == values[2]


@pytest.mark.parametrize(("ranks", "spread", "jitter", "k"), [
    (8, 0.025, 0.0, 1), (128, 0.025, 0.0, 1), (8, 0.0, 0.05, 1), (16, 0.025, 0.05, 1),
    (64, 0.04, 0.02, 4), (2, 0.01, 0.08, 2)])
def test_the_factor_is_the_expected_slowest_over_the_average_gpu(ranks, spread, jitter, k):
    """Monte Carlo of the module's model: one rank's compute 1 + S + J (S half-normal, J normal of
    σ_j/√k), the step waiting for the slowest of N, against the average GPU's 1 + E[S]; the
    skew-normal (both at once) and each alone."""
    rng = np.random.default_rng(13)
    draws = _spread_sample(rng, (200_000, ranks), spread, jitter / np.sqrt(k))
    mean_one = 1.0 + spread / stragglers.HALF_NORMAL_SD * stragglers.HALF_NORMAL_MEAN
    sample = (1.0 + draws.max(axis=1)).mean() / mean_one
    assert stragglers.slowest_rank_factor(jitter, ranks, k, spread) == pytest.approx(sample, abs=3e-4)


def test_the_one_sided_spread_charges_large_runs_more_than_a_node():
    """From 8 to 1,024 GPUs the spread's loss grows (h_1024 − h_1)/(h_8 − h_1) = 2.7×, where a
    symmetric spread grew it e_1024/e_8 = 2.3× (docs/iteration-model.md)."""
    eight, large = (stragglers.slowest_rank_factor(0.0, n, 1, 0.0225) - 1.0 for n in (8, 1024))
    assert large / eight == pytest.approx(2.68, abs=0.01)
    assert (stragglers.expected_max_standard_normal(1024) / stragglers.expected_max_standard_normal(8)
            == pytest.approx(2.28, abs=0.01))
    # jitter alone keeps the normal model: 1 + σ_j/√k · e_N
    assert stragglers.slowest_rank_factor(0.05, 64, 4) == pytest.approx(
        1.0 + 0.025 * stragglers.expected_max_standard_normal(64), rel=1e-12)


@pytest.mark.parametrize(("ranks", "spread", "jitter", "slow"), [
    (2, 0.025, 0.0, 1.05), (8, 0.025, 0.0, 1.05), (128, 0.025, 0.0, 1.05), (16, 0.05, 0.0, 1.02),
    (64, 0.1, 0.0, 1.3), (32, 0.025, 0.04, 1.05)])
def test_a_slow_rank_is_the_slowest_of_it_and_the_others(ranks, spread, jitter, slow):
    """One rank at ``slow`` × its own 1 + S + J among N: the expected slowest over the average GPU,
    as a Monte Carlo of the same model gives it; a slow rank inside the others' spread still adds
    (a 5 % slow rank among 128 GPUs at 2.5 % had no effect: the maximum of the two expectations)."""
    rng = np.random.default_rng(11)
    draws = _spread_sample(rng, (100_000, ranks), spread, jitter)
    mean_one = 1.0 + spread / stragglers.HALF_NORMAL_SD * stragglers.HALF_NORMAL_MEAN
    sample = np.maximum(slow * (1.0 + draws[:, 0]), 1.0 + draws[:, 1:].max(axis=1)).mean() / mean_one
    factor = stragglers.slowest_rank_factor(jitter, ranks, 1, spread, slow)
    assert factor == pytest.approx(sample, abs=5e-4)
    plain = stragglers.slowest_rank_factor(jitter, ranks, 1, spread)
    assert factor > max(plain, slow)  # E[max(A, B)] ≥ E[A] = slow × the average GPU


def test_the_slow_rank_integral_is_continuous_and_vectorised():
    """Just above 1 it is the plain slowest of N (to the grid's error); no spread, the larger
    factor; one rank never waits; the planner's arrays give each cell's scalar value."""
    for ranks in (2, 8, 1024):
        plain = stragglers.slowest_rank_factor(0.0, ranks, 1, 0.025)
        assert stragglers.slowest_rank_factor(0.0, ranks, 1, 0.025, 1.0 + 1e-9) == pytest.approx(plain, abs=1e-7)
    assert stragglers.slowest_rank_factor(0.0, 8, 1, 0.0, 1.2) == 1.2
    assert stragglers.slowest_rank_factor(0.0, 1, 1, 0.025, 1.2) == 1.0
    ranks, k = np.array([[1, 2, 8], [8, 128, 2]]), np.array([[1, 4, 4], [1, 1, 4]])
    arrays = stragglers.slowest_rank_factor(0.05, ranks, k, 0.025, 1.05)
    assert arrays.shape == ranks.shape
    for index in np.ndindex(ranks.shape):
        assert arrays[index] == stragglers.slowest_rank_factor(0.05, int(ranks[index]), int(k[index]), 0.025, 1.05)


@pytest.mark.parametrize("shape", [0.3, 1.0, 2.0, 37.0, 1e5])
@pytest.mark.parametrize("h", [-2.0, -0.01, 0.0, 0.5, 3.0])
def test_owens_t_against_arbitrary_precision(h, shape):
    """The skew-normal CDF's T(h, a), by quadrature for a ≤ 1 and Owen's identity above (the
    quadrature over [0, atan a] alone was 3e-4 off at a = 100): within 1e-9 of mpmath's integral
    of its definition, and the closed forms T(0, a) = atan(a)/2π, T(h, 1) = ½Φ(h)(1 − Φ(h))."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    exact = mpmath.quad(lambda x: mpmath.exp(-h * h * (1 + x * x) / 2) / (1 + x * x), [0, shape]) / (2 * mpmath.pi)
    assert stragglers._owen_t([h], shape)[0] == pytest.approx(float(exact), abs=1e-9)
    assert stragglers._owen_t([0.0], shape)[0] == pytest.approx(np.arctan(shape) / (2 * np.pi), abs=1e-12)
    phi = 0.5 * (1 + mpmath.erf(h / mpmath.sqrt(2)))
    assert stragglers._owen_t([h], 1.0)[0] == pytest.approx(float(phi * (1 - phi) / 2), abs=1e-9)


def test_a_vanishing_jitter_or_slow_rank_joins_the_plain_spread():
    """Jitter → 0 beside the spread (the skew-normal's shape → ∞) is the half-normal alone, and a
    slow rank → 1 with jitter is the plain slowest of N, to the grids' errors."""
    for ranks in (2, 64, 1024):
        alone = stragglers.slowest_rank_factor(0.0, ranks, 1, 0.0225)
        assert stragglers.slowest_rank_factor(1e-5, ranks, 1, 0.0225) == pytest.approx(alone, abs=1e-8)
        plain = stragglers.slowest_rank_factor(0.03, ranks, 2, 0.0225)
        assert stragglers.slowest_rank_factor(0.03, ranks, 2, 0.0225, 1.0 + 1e-9) == pytest.approx(plain, abs=1e-8)


def test_the_planner_path_and_one_answer_agree():
    """With numpy loaded (the planner) the skew-normal CDF's exponentials are one array; on one
    answer they are Python floats: the same table to rounding."""
    import sys

    numpy = sys.modules.pop("numpy")
    try:
        stragglers._cdf_table.cache_clear()
        floats = stragglers._cdf_table(2.5)
    finally:
        sys.modules["numpy"] = numpy
        stragglers._cdf_table.cache_clear()
    assert np.allclose(stragglers._cdf_table(2.5), floats, rtol=0, atol=1e-14)
