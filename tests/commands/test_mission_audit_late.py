"""What a read-only audit against MISSION.md found (2026-11-30): answers that were right but read
wrong. Each now says what it is."""

from __future__ import annotations

from typer.testing import CliRunner

from cli import app

LINK = ["--alpha", "5us", "--bandwidth", "25GB/s"]


def _rows(*args: str) -> dict[str, str]:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    rows = {}
    for line in result.output.splitlines():
        key, _, value = line.partition("  ")
        if value.strip():
            rows.setdefault(key.strip(), value.strip())
    return rows


def test_hierarchical_on_one_node_says_it_is_its_intra_node_level_alone():
    """8 ranks at the default 8 per node printed ring's 280.1 ms labelled hierarchical, unsaid."""
    one = _rows("collective", "all-reduce", "--size", "4GB", "--ranks", "8", *LINK, "--algorithm", "hierarchical")
    ring = _rows("collective", "all-reduce", "--size", "4GB", "--ranks", "8", *LINK, "--algorithm", "ring")
    assert one["time"] == ring["time"]
    assert one["note"].startswith("8 ranks are one node of --gpus-per-node 8 (its default): hierarchical has no "
                                  "inter-node level here")
    two = _rows("collective", "all-reduce", "--size", "4GB", "--ranks", "16", *LINK, "--algorithm", "hierarchical")
    assert "one node" not in two.get("note", "")


def test_the_textbook_model_on_a_cluster_is_named():
    rows = _rows("collective", "all-reduce", "--cluster", "dgx-h100", "--nodes", "2", "--size", "1GiB",
                 "--backend", "ideal")
    assert rows["backend"] == "ideal (the textbook α-β-γ model on the cluster's links)"
    assert "backend" not in _rows("collective", "all-reduce", "--cluster", "dgx-h100", "--size", "1GiB")


def test_a_point_outside_its_band_says_the_band_is_measured_runs():
    """'30.61 µs (41.24 µs–238.2 µs)' read as a band that missed its own point."""
    rows = _rows("collective", "all-reduce", "--cluster", "mi300x-8x", "--nodes", "2", "--size", "1KiB")
    assert rows["time"].startswith("30.61 µs (measured runs: ") and rows["time"].endswith("; this model runs fast here)")
    inside = _rows("collective", "all-reduce", "--cluster", "dgx-h100", "--size", "1GiB")["time"]
    assert "measured runs" not in inside and inside.endswith(")")
