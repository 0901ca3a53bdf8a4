"""Issue goals on the project's copy of the logs: cross-validated median error ≤ 5 % over all
sizes (the calibrated-cluster issue; ≤ 10 % before it) and ≤ 5 % for sizes ≥ 64 KiB, fitting
every other size of a log with ≥ 12 sizes and predicting the rest.  One log misses the second
goal because it is non-monotonic, and the fit must say so; two miss it by what the
overfitting guard costs them (no sloped regime faster than the measured plateau)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest

from costmodel.calibrate.fit import cross_validate, fit_times
from costmodel.calibrate.link import points
from costmodel.calibrate.parse import parse_file

DATA = Path(__file__).parents[1] / "data" / "calibration"
MIN_SIZES, LARGE_BYTES = 12, 64 * 1024
GOAL_ALL, GOAL_LARGE = 0.05, 0.05
# Logs whose time falls with size at sizes >= 64 KiB by far more than the goal: no monotone
# latency-bandwidth curve (nor log-log interpolation, 19 %) predicts their held-out sizes.
NON_MONOTONIC_MISSES = {"raw/abci_v_32n.txt"}
# Logs whose mid sizes ramp faster than their plateau without holding flat (NCCL adding
# channels: abci_a_8n goes 128 KiB → 256 KiB at 12 GB/s marginal on an 8.3 GB/s link): the
# guard fits that stretch with the plateau's slope, and one CV fold (half the sizes) cannot
# place the ramp.  Measured with the guard: 5.63 % and 5.07 % at >= 64 KiB (2.87 % and 3.56 %
# without it); bounded here so a further loss fails.
GUARD_COSTS = {"raw/abci_a_8n.txt": 0.06, "raw/rtx4090_8x_pcie4_p2poff.txt": 0.055}


def _logs() -> list[str]:
    manifest = tomllib.loads((DATA / "manifest.toml").read_text(encoding="utf-8"))["log"]
    return [e["file"] for e in manifest if len({r.size_bytes for r in parse_file(DATA / e["file"]).rows}) >= MIN_SIZES]


LOGS = _logs()


def _points(name: str) -> tuple[np.ndarray, np.ndarray]:
    sizes, times = points([parse_file(DATA / name)])
    return np.asarray(sizes, float), np.asarray(times, float)


def test_the_goals_apply_to_25_logs():
    assert len(LOGS) == 25 and NON_MONOTONIC_MISSES <= set(LOGS)


@pytest.mark.parametrize("name", LOGS)
def test_cross_validated_error_meets_the_goals(name):
    sizes, times = _points(name)
    _, errors = cross_validate(sizes, times)
    assert np.median(np.abs(errors)) <= GOAL_ALL
    large = np.median(np.abs(errors[sizes >= LARGE_BYTES]))
    if name in NON_MONOTONIC_MISSES:
        assert large > GOAL_LARGE  # if this log now meets the goal, drop it from the set
    elif name in GUARD_COSTS:
        assert GOAL_LARGE < large <= GUARD_COSTS[name]  # meets the goal again: drop it from the set
    else:
        assert large <= GOAL_LARGE


@pytest.mark.parametrize("name", sorted(NON_MONOTONIC_MISSES))
def test_a_log_missing_the_goal_is_reported_non_monotonic(name):
    sizes, times = _points(name)
    fit = fit_times(sizes, times)
    deepest = fit.falls[0]
    assert deepest.from_size_bytes >= LARGE_BYTES and deepest.relative < -2 * GOAL_LARGE
    assert (deepest.from_size_bytes, deepest.to_size_bytes) == (512 * 1024, 1024 * 1024)
    note = next(n for n in fit.notes if n.startswith("non-monotonic log"))
    assert "512 KiB" in note and "1 MiB" in note and "-30 %" in note and "ambiguous" in note


def test_monotonic_logs_get_no_fall_note():
    for name in ("raw/abci_a_8n.txt", "raw/mi355x_2x8_pollara400_aac14.txt", "raw/v100_8x_sxm2_hcm.txt"):
        fit = fit_times(*_points(name))
        assert fit.falls == () and not any("non-monotonic" in n for n in fit.notes), name


@pytest.mark.parametrize("name", LOGS)
def test_no_sloped_regime_is_faster_than_the_measured_plateau(name):
    """The overfitting guard: below the largest regime every regime (transitions included) is
    flat or at most as fast as the fastest size/time the log measured."""
    sizes, times = _points(name)
    fit = fit_times(sizes, times)
    plateau_slope = float(np.min(times / sizes))
    for regime in fit.regimes[:-1]:
        assert regime.seconds_per_byte == 0 or regime.seconds_per_byte >= plateau_slope * (1 - 1e-9), regime


def test_the_readme_log_no_longer_buys_regimes_with_noise():
    """abci_a_2n (the README's calibration example, 24 sizes × in/out-of-place) used to get 6
    fitted regimes and 3 transitions, one transition at 36 GB/s algbw on a 17.8 GB/s link."""
    sizes, times = _points("raw/abci_a_2n.txt")
    fit = fit_times(sizes, times)
    assert len(fit.fitted_regimes) <= 5 and len(fit.regimes) <= 7
    assert max(1 / r.seconds_per_byte for r in fit.regimes if r.seconds_per_byte) <= 1.1 * float(np.max(sizes / times))


def test_repeated_runs_of_a_size_do_not_count_as_evidence():
    """Duplicating every point (as in-place + out-of-place runs do) must not change the fit."""
    sizes, times = _points("raw/abci_a_2n.txt")
    once = sorted({(s, t) for s, t in zip(sizes, times)})
    s1, t1 = np.array([p[0] for p in once]), np.array([p[1] for p in once])
    fit_once = fit_times(s1, t1)
    fit_twice = fit_times(np.repeat(s1, 2), np.repeat(t1, 2))
    assert len(fit_once.regimes) == len(fit_twice.regimes)
    assert np.allclose(fit_once.predict_s(s1), fit_twice.predict_s(s1), rtol=1e-6)
