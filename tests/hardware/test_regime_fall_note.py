"""`hardware validate` notes a regime boundary where every algorithm's time falls by more than
half (a latency in ms for µs, a bandwidth in Gbps for GBps): the file stays valid (exit 0), and no
link calibrated from a shipped log gets the note."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from hardware.notes import REGIME_FALL_NOTE

runner = CliRunner()
DATA = Path(__file__).resolve().parents[1] / "data" / "calibration"

LINK = """[[link]]
name = "my-ib"
description = "typed by hand"
source = "me"
category = "infiniband"
bandwidth = "25GBps"
efficiency = 0.9
latency = "5us"

[[link.regimes]]
max_size = "1MiB"
latency = "{first_latency}"
bandwidth = "{first_bandwidth}"

[[link.regimes]]
latency = "5us"
bandwidth = "20GBps"
"""


def _validate(tmp_path, **regime):
    path = tmp_path / "link.toml"
    path.write_text(LINK.format(**regime), encoding="utf-8")
    return runner.invoke(app, ["hardware", "validate", str(path)])


def test_a_table_whose_every_algorithm_falls_at_a_boundary_is_noted(tmp_path):
    result = _validate(tmp_path, first_latency="300us", first_bandwidth="1GBps")
    assert result.exit_code == 0 and result.stdout.startswith("ok\n")
    note = next(line for line in result.stdout.splitlines() if line.startswith("note: link my-ib"))
    assert "at 1 MiB" in note and "falls by 95% or more" in note and "300 µs → 5 µs" in note


@pytest.mark.parametrize("latency,bandwidth", [("300us", "15GBps"),  # only the latency falls
                                               ("6us", "1GBps"),  # only the bandwidth time falls
                                               ("9us", "10.5GBps")])  # both, by less than half
def test_a_fall_some_algorithm_does_not_share_is_not_noted(tmp_path, latency, bandwidth):
    result = _validate(tmp_path, first_latency=latency, first_bandwidth=bandwidth)
    assert result.exit_code == 0 and "note" not in result.stdout
    assert REGIME_FALL_NOTE == 0.5


@pytest.mark.parametrize("log,ranks", [("abci_v_32n.txt", 128), ("abci_a_16n.txt", 128), ("abci_v_8n.txt", 32)])
def test_links_calibrated_from_real_logs_are_not_noted(tmp_path, log, ranks):
    """These logs' fitted per-hop curves fall by up to 96 % at a boundary, but not in both terms."""
    out = tmp_path / "cal.toml"
    made = runner.invoke(app, ["calibrate", str(DATA / "raw" / log), "--ranks", str(ranks), "-o", str(out)])
    assert made.exit_code == 0, made.output
    result = runner.invoke(app, ["hardware", "validate", str(out)])
    assert result.exit_code == 0 and "every algorithm's time falls" not in result.stdout
