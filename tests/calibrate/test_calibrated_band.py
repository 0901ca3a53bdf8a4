"""A calibrated link carries its own held-out band (mission §7: every prediction says how sure it
is; a `collective --link my.toml` answer had none, while the calibration had just measured it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from costmodel.calibrate.fit import cross_validate
from costmodel.calibrate.link import calibrate, held_out_band
from costmodel.calibrate.parse import parse_file

RAW = Path(__file__).resolve().parents[1] / "data" / "calibration" / "raw"


def test_the_band_is_the_cross_validated_ratios_percentiles():
    import numpy as np

    result = calibrate([parse_file(RAW / "abci_a_1n.txt")])
    sizes, errors = cross_validate(result.fit.sizes_bytes, result.fit.times_s)
    ratios = 1 / (1 + errors)
    low, high = result.held_out_band
    assert low == pytest.approx(np.percentile(ratios, 10), abs=1e-4) and high == pytest.approx(
        np.percentile(ratios, 90), abs=1e-4)
    assert low < 1 < high
    assert held_out_band([1e3, 1e6, 1e9], [1e-5, 1e-4, 1e-3]) is None  # fewer than 4 sizes: no band


def test_the_fitted_collective_on_the_fitted_ranks_carries_the_band(tmp_path):
    out = tmp_path / "link.toml"
    written = CliRunner().invoke(app, ["calibrate", str(RAW / "abci_a_1n.txt"), "-o", str(out)])
    assert written.exit_code == 0 and "held out (each size predicted by a fit without it)" in written.stdout
    assert "held_out_ratio_p10" in out.read_text()

    def ask(*extra: str) -> dict:
        result = CliRunner().invoke(app, ["collective", "all-reduce", "--link", str(out), "--size", "256MB",
                                          "--json", *extra])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    fitted = ask("--ranks", "8", "--algorithm", "ring")
    low, high = fitted["interval_s"]
    assert low < fitted["time_s"] < high
    assert ask("--ranks", "16", "--algorithm", "ring")["interval_s"] is None  # not the ranks it measured
    assert ask("--ranks", "8", "--algorithm", "recursive-doubling")["interval_s"] is None  # not the algorithm


def test_a_damaged_band_is_refused_naming_the_key(tmp_path):
    out = tmp_path / "link.toml"
    assert CliRunner().invoke(app, ["calibrate", str(RAW / "abci_a_1n.txt"), "-o", str(out)]).exit_code == 0
    text = out.read_text()
    start = text.index("held_out_ratio_p10 = ")
    bad = text[:start] + "held_out_ratio_p10 = -1.0" + text[text.index("\n", start):]
    out.write_text(bad)
    refused = CliRunner().invoke(app, ["collective", "all-reduce", "--link", str(out), "--size", "1MB",
                                       "--ranks", "8"])
    assert refused.exit_code == 2 and "held_out_ratio_p10: got -1.0; allowed: a number > 0" in refused.stderr
