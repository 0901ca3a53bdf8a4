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
