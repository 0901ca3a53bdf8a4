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


@pytest.mark.parametrize(("ranks", "spread", "slow"), [(2, 0.025, 1.05), (8, 0.025, 1.05), (128, 0.025, 1.05),
                                                        (16, 0.05, 1.02), (64, 0.1, 1.3)])
def test_a_slow_rank_is_the_slowest_of_it_and_the_others(ranks, spread, slow):
    """One rank at ``slow`` × the mean (same relative spread) among N: the expected slowest, as a
    Monte Carlo of the same model gives it; a slow rank inside the others' spread still adds (a
    5 % slow rank among 128 GPUs at 2.5 % had no effect: the maximum of the two expectations)."""
    rng = np.random.default_rng(11)
    others = 1.0 + spread * rng.standard_normal((100_000, ranks - 1)).max(axis=1)
    one = slow * (1.0 + spread * rng.standard_normal(100_000))
    sample = np.maximum(one, others).mean()
    factor = stragglers.slowest_rank_factor(0.0, ranks, 1, spread, slow)
    assert factor == pytest.approx(sample, abs=4e-4)
    plain = 1.0 + spread * stragglers.expected_max_standard_normal(ranks)
    assert factor > max(plain, slow)


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
