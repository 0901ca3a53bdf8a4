"""Hand-over between fitted regimes (meeting point, transition line, jump) and falls in time."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costmodel.calibrate.fit import NONMONOTONIC_FALL_REL, falls, fit_times

KIB = 1024.0
SMALL = np.array([2.0**k for k in range(3, 17)])  # 8 B … 64 KiB
LARGE = np.array([2.0**k for k in range(18, 28)])  # 256 KiB … 128 MiB (no size in between)


def _two_regimes(large_latency_s: float) -> tuple[np.ndarray, np.ndarray]:
    """10 µs + n / 20 GB/s up to 64 KiB, then ``large_latency_s`` + n / 50 GB/s from 256 KiB."""
    times = np.concatenate([10e-6 + SMALL / 20e9, large_latency_s + LARGE / 50e9])
    return np.concatenate([SMALL, LARGE]), times


def test_a_jump_across_a_gap_becomes_a_transition_line():
    sizes, times = _two_regimes(40e-6)  # the lines meet at ~1 MB: not in the gap
    fit = fit_times(sizes, times)
    assert [r.transition for r in fit.regimes] == [False, True, False]
    small, bridge, large = fit.regimes
    assert (bridge.min_size_bytes, bridge.max_size_bytes, bridge.points) == (64 * KIB, 256 * KIB, 0)
    assert bridge.latency_s >= 0 and bridge.seconds_per_byte >= 0
    # continuous: it starts on the small regime and ends on the large one
    assert bridge.time_s(64 * KIB) == pytest.approx(small.time_s(64 * KIB), rel=1e-9)
    assert bridge.time_s(256 * KIB) == pytest.approx(large.time_s(256 * KIB), rel=1e-9)
    start, end = small.time_s(64 * KIB), large.time_s(256 * KIB)
    assert fit.predict_s([128 * KIB])[0] == pytest.approx(start + (end - start) / 3, rel=1e-9)
    assert fit.fitted_regimes == (small, large) and not fit.falls


def test_lines_meeting_in_the_gap_hand_over_where_they_meet():
    sizes = np.array([2.0**k for k in range(6, 31)])
    small, large = (5e-6, 1 / 5e9), (30e-6, 1 / 200e9)
    kept = (sizes < 64 * KIB) | (sizes > 256 * KIB)  # the lines meet at ~129 KiB, in the gap
    times = np.minimum(small[0] + small[1] * sizes, large[0] + large[1] * sizes)
    fit = fit_times(sizes[kept], times[kept])
    assert not any(r.transition for r in fit.regimes) and len(fit.regimes) == 2
    assert fit.crossovers_bytes[0] == pytest.approx((large[0] - small[0]) / (small[1] - large[1]), rel=0.01)
    assert np.allclose(fit.predict_s(sizes), times, rtol=1e-3)  # the missing sizes too


def test_a_fall_across_a_gap_is_a_jump_and_a_note():
    sizes, times = _two_regimes(-5e-6)  # 256 KiB is faster than 64 KiB: time falls
    fit = fit_times(sizes, times)
    assert not any(r.transition for r in fit.regimes)
    assert fit.crossovers_bytes[0] == pytest.approx(128 * KIB)  # geometric mean of 64 and 256 KiB
    assert [(f.from_size_bytes, f.to_size_bytes) for f in fit.falls] == [(64 * KIB, 256 * KIB)]
    note = next(n for n in fit.notes if n.startswith("non-monotonic log"))
    assert "64 KiB" in note and "256 KiB" in note and "ambiguous" in note


def test_falls_ignore_noise_and_use_each_sizes_fastest_time():
    sizes = np.repeat([2.0**k for k in range(3, 20)], 2)
    times = 20e-6 + sizes / 10e9
    wobble = times * (1 - (NONMONOTONIC_FALL_REL / 2) * (np.arange(len(sizes)) % 4 == 0))
    assert falls(sizes, wobble) == ()
    slow_once = times.copy()
    slow_once[7] *= 3  # one slow run of 128 B: its other run is fine, so no fall
    assert falls(sizes, slow_once) == ()
    dip = times.copy()
    dip[(sizes == 1024) | (sizes == 2048)] *= 0.6  # both runs of 1 and 2 KiB are fast
    (found,) = falls(sizes, dip)
    assert (found.from_size_bytes, found.to_size_bytes) == (512, 1024)
    assert found.relative == pytest.approx(0.6 * times[sizes == 1024][0] / times[sizes == 512][0] - 1)


@st.composite
def monotone_logs(draw):
    """A physically possible log: time never falls with size, never more than scales with it."""
    count = draw(st.integers(min_value=5, max_value=24))
    sizes = 2.0 ** np.arange(2, 2 + count)
    log_time = [math.log(draw(st.floats(1e-6, 1e-3)))]
    for _ in range(count - 1):  # each doubling multiplies the time by 1 … 2
        log_time.append(log_time[-1] + math.log(2) * draw(st.floats(0, 1)))
    return sizes, np.exp(log_time)


@settings(max_examples=40, deadline=None)
@given(monotone_logs())
def test_fitted_curves_stay_physical(log):
    sizes, times = log
    fit = fit_times(sizes, times)
    assert all(r.latency_s >= 0 and r.seconds_per_byte >= 0 for r in fit.regimes)
    assert list(fit.crossovers_bytes) == sorted(set(fit.crossovers_bytes))
    assert fit.falls == ()
    for left, right in zip(fit.regimes, fit.regimes[1:]):
        if right.transition or left.transition:  # a transition joins its neighbours
            bound = left.max_size_bytes
            assert left.time_s(bound) == pytest.approx(right.time_s(bound), rel=1e-6)


def test_a_gradual_hand_over_is_predicted_between_measured_sizes():
    """A switch spread over 64 … 256 KiB (the time triples): 128 KiB, not measured, is predicted
    within 10 % by the transition; a jump at a guessed size is off by about half the step."""
    sizes, times = _two_regimes(40e-6)
    start, end = 10e-6 + 64 * KIB / 20e9, 40e-6 + 256 * KIB / 50e9
    middle = math.sqrt(start * end)  # log-linear between the two ends
    predicted = fit_times(sizes, times).predict_s([128 * KIB])[0]
    assert abs(predicted / middle - 1) < 0.10 < min(abs(start / middle - 1), abs(end / middle - 1))


def test_the_plot_marks_crossovers_transitions_and_a_fall():
    from pathlib import Path

    from costmodel.calibrate.link import calibrate
    from costmodel.calibrate.parse import parse_file
    from costmodel.plots.calibration import figure

    logs = [parse_file(Path(__file__).parents[1] / "data" / "calibration" / "raw" / "abci_v_32n.txt")]
    result = calibrate(logs, ranks=128)
    fig = figure(result, logs)
    lines = sorted({shape.x0 for shape in fig.layout.shapes if shape.type == "line"})
    assert lines == sorted(result.fit.crossovers_bytes)  # in bytes: the axes are log but shapes use data units
    bands = {(shape.x0, shape.x1) for shape in fig.layout.shapes if shape.type == "rect"}
    assert bands == {(r.min_size_bytes, r.max_size_bytes) for r in result.fit.regimes if r.transition} != set()
    assert "non-monotonic: time falls -30 % from 512 KiB to 1 MiB" in fig.layout.title.text
