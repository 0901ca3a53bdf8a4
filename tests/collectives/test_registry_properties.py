"""Property tests (hypothesis) over every registry entry."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costmodel.collectives.evaluate import evaluate_grid, predict_entry
from costmodel.collectives.registry import entries

ENTRIES = list(entries())
ids = lambda e: f"{e.primitive.value}-{e.algorithm.value}"  # noqa: E731

ranks = st.integers(min_value=1, max_value=300)
sizes = st.one_of(st.just(0.0), st.floats(min_value=1, max_value=1e11, allow_nan=False))
alphas = st.one_of(st.just(0.0), st.floats(min_value=1e-9, max_value=1e-3, allow_nan=False))
bandwidths = st.floats(min_value=1e6, max_value=1e12, allow_nan=False)
gammas = st.floats(min_value=0, max_value=1e-9, allow_nan=False)


def params_for(entry, N):
    if entry.hierarchical:  # both forms: the rails and seed 000's leaders
        return {"gpus_per_node": next(g for g in (8, 4, 2, 1) if N % g == 0), "leaders": N % 3 == 0}
    return {}


@pytest.mark.parametrize("entry", ENTRIES, ids=ids)
@settings(max_examples=60, deadline=None)
@given(N=ranks, size=sizes, alpha=alphas, bw=bandwidths, gamma=gammas)
def test_nonnegative_and_never_below_lower_bound(entry, N, size, alpha, bw, gamma):
    p = predict_entry(entry, N, size, alpha, bw, gamma, **params_for(entry, N))
    for key in ("time_s", "latency_s", "bandwidth_s", "reduction_s", "steps", "bytes_sent_max", "bytes_total"):
        assert getattr(p, key) >= 0
    assert p.time_s >= p.lower_bound_s * (1 - 1e-9)
    if N == 1:
        assert p.time_s == 0 and p.bytes_total == 0


# Monotonicity in size holds for messages of whole 4-byte elements: pipelined algorithms cut a
# message into whole elements (evaluate.MIN_CHUNK_BYTES), so a message of a fractional element
# (6 B) may pipeline worse than the next whole one (8 B) when α = 0. Checked exhaustively for
# 4 B … 4 KiB in test_monotone_in_whole_elements_exhaustively below.
elements = st.one_of(st.just(0), st.integers(min_value=1, max_value=25_000_000_000))


@pytest.mark.parametrize("entry", ENTRIES, ids=ids)
@settings(max_examples=40, deadline=None)
@given(N=ranks, count=elements, factor=st.integers(1, 100), alpha=alphas, bw=bandwidths, gamma=gammas)
def test_monotone_in_size_and_beta(entry, N, count, factor, alpha, bw, gamma):
    extra = params_for(entry, N)
    size = 4.0 * count
    base = predict_entry(entry, N, size, alpha, bw, gamma, **extra).time_s
    bigger = predict_entry(entry, N, size * factor, alpha, bw, gamma, **extra).time_s
    slower = predict_entry(entry, N, size, alpha, bw / factor, gamma, **extra).time_s
    assert bigger >= base * (1 - 1e-9)
    assert slower >= base * (1 - 1e-9)


@pytest.mark.parametrize("entry", [e for e in ENTRIES if any(p.name == "chunks" for p in e.params)], ids=ids)
def test_monotone_in_whole_elements_exhaustively(entry):
    N = np.array([2, 3, 5, 8, 17, 64])[:, None, None, None]
    size = (4.0 * np.arange(1, 1025))[None, :, None, None]
    alpha = np.array([0.0, 1e-6, 1e-5])[None, None, :, None]
    bw = np.array([1e6, 1e9, 1e11])[None, None, None, :]
    extra = {"gpus_per_node": 1} if entry.hierarchical else {}
    times = evaluate_grid(entry.primitive, entry.algorithm, N, size, alpha, bw, 0.0, **extra)["time_s"]
    assert np.all(np.diff(times, axis=1) >= -1e-9 * times[:, 1:])


@pytest.mark.parametrize("entry", ENTRIES, ids=ids)
def test_vector_grid_equals_scalar_predictions(entry):
    N = np.array([1, 2, 5, 8, 16, 24, 64])
    size = np.array([[8.0], [1e6], [3e9]])
    extra = {"gpus_per_node": 1} if entry.hierarchical else {}
    grid = evaluate_grid(entry.primitive, entry.algorithm, N, size, 3e-6, 2e10, 1e-11, **extra)
    for i, s in enumerate(size[:, 0]):
        for j, r in enumerate(N):
            scalar = predict_entry(entry, int(r), float(s), 3e-6, 2e10, 1e-11, **extra)
            assert grid["time_s"][i, j] == pytest.approx(scalar.time_s, rel=1e-9, abs=1e-15)
            assert grid["sent_max"][i, j] == pytest.approx(scalar.bytes_sent_max, rel=1e-9, abs=1e-9)
