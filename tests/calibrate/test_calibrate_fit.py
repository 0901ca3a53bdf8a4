"""The piecewise latency-bandwidth fit: recovery of known α/β, regimes, robustness, CV."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import numpy as np
import pytest

from costmodel.calibrate.fit import cross_validate, fit_times, predict_s
from costmodel.calibrate.link import calibrate, coefficients_for, points, resolve_log
from costmodel.calibrate.parse import parse_file, parse_text
from dpbase.errors import InputError, NotApplicableError

DATA = Path(__file__).parents[1] / "data" / "calibration"
SIZES = [8 * 4**k for k in range(14)]  # 8 B … 512 MiB


def _nccl_number(value: float) -> str:
    """Width-limited like nccl-tests' getFloatStr: %.2f, then %.1f, then %.0f."""
    for digits in (2, 1, 0):
        text = f"{value:.{digits}f}"
        if len(text) <= 7:
            return text
    return f"{value:.1e}"


def synthetic_log(latency_s: float, bandwidth_Bps: float, ranks: int = 8) -> str:
    """A current-layout all_reduce_perf log whose times are latency + n / bandwidth."""
    factor = 2 * (ranks - 1) / ranks
    lines = ["# Collective test concluded: all_reduce_perf"]
    for size in SIZES:
        time_us = (latency_s + size / bandwidth_Bps) * 1e6
        algbw = size / (time_us * 1e-6) / 1e9
        block = f"{_nccl_number(time_us):>7}  {algbw:6.2f}  {algbw * factor:6.2f}       0"
        lines.append(f"{size:12d}  {size // 4:12d}     float     sum      -1  {block}  {block}")
    return "\n".join(lines) + "\n"


def test_known_alpha_beta_recovered_within_one_percent():
    log = parse_text(synthetic_log(40e-6, 230e9), "synthetic.txt")
    fit = fit_times(*points([log]))
    assert len(fit.regimes) == 1
    assert fit.regimes[0].latency_s == pytest.approx(40e-6, rel=0.01)
    assert 1 / fit.regimes[0].seconds_per_byte == pytest.approx(230e9, rel=0.01)


def test_link_parameters_from_the_busbw_factor():
    log = resolve_log(parse_text(synthetic_log(28e-6, 100e9), "synthetic.txt"), ranks=8)
    result = calibrate([log], algorithm="ring")
    assert result.collective == "all-reduce" and result.ranks == 8
    link = result.link_regimes[-1]
    assert link.latency_s * result.steps == pytest.approx(28e-6, rel=0.01)
    # ring all-reduce: per-link bandwidth = busbw plateau = algbw · 2(N-1)/N
    assert link.bandwidth_Bps == pytest.approx(100e9 * 1.75, rel=0.01)
    assert result.busbw_plateau_Bps == pytest.approx(175e9, rel=0.01)


def test_protocol_regimes_and_continuous_crossovers():
    sizes = np.geomspace(64, 2**30, 25)
    small, large = (5e-6, 1 / 5e9), (30e-6, 1 / 200e9)
    times = np.minimum(small[0] + small[1] * sizes, large[0] + large[1] * sizes)
    fit = fit_times(sizes, times)
    assert len(fit.regimes) == 2
    assert fit.regimes[0].latency_s == pytest.approx(small[0], rel=0.01)
    assert fit.regimes[-1].seconds_per_byte == pytest.approx(large[1], rel=0.01)
    crossover = (large[0] - small[0]) / (small[1] - large[1])
    assert fit.crossovers_bytes[0] == pytest.approx(crossover, rel=0.01)
    assert fit.worst_abs_pct_error < 0.1


def test_relative_error_respects_floor_and_plateau():
    """A 40 µs floor and a 230 GB/s plateau are both fitted well at once."""
    sizes = np.array([2.0**k for k in range(3, 34)])
    times = 40e-6 + sizes / 230e9
    fit = fit_times(sizes, times)
    assert np.allclose(fit.predict_s(sizes), times, rtol=1e-3)


def test_one_outlier_does_not_move_a_robust_fit():
    sizes = np.array([2.0**k for k in range(10, 30)])
    times = 10e-6 + sizes / 50e9
    times[12] *= 3
    fit = fit_times(sizes, times, max_regimes=1)
    assert fit.regimes[0].latency_s == pytest.approx(10e-6, rel=0.01)
    assert fit.median_abs_pct_error < 0.1 and fit.worst_abs_pct_error > 60


def test_predict_uses_the_regime_containing_the_size():
    fit = fit_times(*points([parse_file(DATA / "raw" / "rtx4090_8x_pcie4_p2pon.txt")]))
    bounds = fit.crossovers_bytes
    assert len(bounds) == len(fit.regimes) - 1 and list(bounds) == sorted(bounds)
    below, above = predict_s(fit.regimes, [bounds[0]]), predict_s(fit.regimes, [bounds[0] * 1.0001])
    assert below[0] == pytest.approx(fit.regimes[0].time_s(bounds[0]))
    assert above[0] == pytest.approx(fit.regimes[1].time_s(bounds[0] * 1.0001))


def test_single_size_log_is_fitted_with_a_note():
    log = parse_file(DATA / "raw" / "a100_oci_1x8_nccl2265.txt")
    result = calibrate([log], ranks=8)
    assert result.fit.regimes[0].latency_s == 0
    assert any("one message size" in note for note in result.notes)
    assert result.busbw_plateau_Bps == pytest.approx(232.2e9, rel=0.001)


def test_columns_reveal_collective_and_ranks_with_a_note():
    manifest = tomllib.loads((DATA / "manifest.toml").read_text(encoding="utf-8"))["log"]
    for entry in manifest:
        log = resolve_log(parse_file(DATA / entry["file"]))
        assert log.collective == entry["collective"], entry["file"]
        if log.ranks is not None:
            assert log.ranks == entry["ranks"], entry["file"]


def test_ambiguous_columns_are_reported():
    text = "        1024   128  float  none  -1  10.0  0.10  0.05  0  10.0  0.10  0.05  0\n" * 1
    log = resolve_log(parse_text(text, "run.txt"))
    assert log.collective == "all-gather"
    assert any("all-gather or all-to-all" in note for note in log.notes)


def test_cross_validation_on_a_clean_log_is_tight():
    sizes = np.array([2.0**k for k in range(3, 31)])
    _, errors = cross_validate(sizes, 12e-6 + sizes / 20e9)
    assert np.median(np.abs(errors)) < 0.001


@pytest.mark.parametrize("sizes, times", [([], []), ([1024.0], [-1.0])])
def test_bad_points_are_rejected(sizes, times):
    with pytest.raises(InputError):
        fit_times(sizes, times)


def test_unknown_ranks_is_an_error():
    log = parse_text("        1024   256  float  none  0  10.0  0.10  0.10  0  10.0  0.10  0.10  0\n", "b.txt")
    with pytest.raises(InputError, match="ranks"):
        calibrate([log])
    assert math.isfinite(calibrate([log], ranks=2).busbw_plateau_Bps)


@pytest.mark.parametrize("collective, ranks, algorithm, steps, beta", [
    ("all-reduce", 8, "ring", 14, 1.75),
    ("broadcast", 8, "pipelined-chain", 7, 1.0),  # NCCL ring broadcast: algBw = busBw
    ("reduce", 4, "pipelined-chain", 3, 1.0),
    ("all-to-all", 8, "pairwise", 7, 0.875),
    ("send-recv", 2, "direct", 1, 1.0),
])
def test_each_collective_uses_the_algorithm_nccl_runs(collective, ranks, algorithm, steps, beta):
    chosen, found_steps, found_beta, origin = coefficients_for(collective, None, ranks)
    assert (chosen, found_steps) == (algorithm, steps)
    assert found_beta == pytest.approx(beta)
    assert origin.startswith("costmodel.coefficients")


def test_a_named_algorithm_that_does_not_fit_the_collective_is_an_error():
    with pytest.raises(NotApplicableError, match="broadcast"):
        coefficients_for("broadcast", "ring", 8)
