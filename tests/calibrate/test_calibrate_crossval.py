"""Issue goals on the project's copy of the logs: cross-validated median error ≤ 10 % over all
sizes and ≤ 5 % for sizes ≥ 64 KiB, fitting every other size of a log with ≥ 12 sizes and
predicting the rest.  The one log that misses the second goal is non-monotonic, and the fit
must say so."""

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
GOAL_ALL, GOAL_LARGE = 0.10, 0.05
# Logs whose time falls with size at sizes >= 64 KiB by far more than the goal: no monotone
# latency-bandwidth curve (nor log-log interpolation, 19 %) predicts their held-out sizes.
NON_MONOTONIC_MISSES = {"raw/abci_v_32n.txt"}


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
