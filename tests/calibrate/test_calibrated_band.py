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
    assert refused.exit_code == 2 and "held_out_ratio_p10: got -1.0; allowed: a finite number > 0" in refused.stderr


def test_a_link_calibrated_under_an_alias_gets_its_band(tmp_path):
    """`calibrate --algorithm tree` wrote "tree", the prediction said double-binary-tree: no band."""
    out = tmp_path / "tree.toml"
    assert CliRunner().invoke(app, ["calibrate", str(RAW / "l40s_4x_pcie_tree.txt"), "--algorithm", "tree",
                                    "-o", str(out)]).exit_code == 0
    found = CliRunner().invoke(app, ["collective", "all-reduce", "--link", str(out), "--ranks", "4", "--size", "1MB",
                                     "-a", "tree", "--json"])
    assert json.loads(found.stdout)["interval_s"] is not None


def test_the_band_is_the_fitted_runs_alone_and_comes_in_json_too(tmp_path):
    out = tmp_path / "ring.toml"
    written = CliRunner().invoke(app, ["calibrate", str(RAW / "abci_a_1n.txt"), "-o", str(out), "--json"])
    assert json.loads(written.stdout)["held_out_ratio_band"] == [0.94, 1.0698]
    base = ["collective", "all-reduce", "--link", str(out), "--ranks", "8", "--size", "256MB", "-a", "ring", "--json"]
    # a reduction cost the log could not show: not the measured run
    assert json.loads(CliRunner().invoke(app, [*base, "--gamma", "1ns"]).stdout)["interval_s"] is None


def test_an_inverted_or_half_band_is_refused(tmp_path):
    out = tmp_path / "ring.toml"
    assert CliRunner().invoke(app, ["calibrate", str(RAW / "abci_a_1n.txt"), "-o", str(out)]).exit_code == 0
    text = out.read_text()
    for edit, message in ((lambda t: t.replace("held_out_ratio_p90 = 1.0698", "held_out_ratio_p90 = 0.5"),
                           "p10 <= p90"),
                          (lambda t: t.replace("held_out_ratio_p90 = 1.0698\n", ""), "both ends of the band")):
        out.write_text(edit(text))
        refused = CliRunner().invoke(app, ["hardware", "validate", str(out)])
        assert refused.exit_code == 2 and message in refused.stderr, refused.stderr
