"""`dpcost sweep` answers a mixed sweep in JSON and refuses a range it would cut short.

Found by a QA pass (2026-11-28): a sweep mixing backends (or algorithms NCCL's model and the
ideal model answer) failed in JSON with a non-finite launch overhead blamed on the inputs, while
its table and CSV printed; and a size range stopped silently at 4,096 sizes, short of --max-size."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from cli import app

runner = CliRunner()


def test_a_mixed_sweep_prints_json_with_nulls():
    for axes in (["--backend", "ideal,nccl"], ["-a", "ring,rabenseifner"]):
        result = runner.invoke(app, ["sweep", "all-reduce", "--cluster", "dgx-h100", "--nodes", "2", "--sizes", "1GiB",
                                     *axes, "--json"])
        assert result.exit_code == 0, result.output
        rows = json.loads(result.stdout)
        assert len(rows) == 2 and all(row["time_s"] > 0 for row in rows)
        assert any(value is None for row in rows for value in row.values())  # a field the other leaves empty


def test_a_range_too_long_is_refused_not_cut():
    base = ["sweep", "all-reduce", "-N", "8", "--alpha", "5us", "--bandwidth", "25GB/s", "--min-size", "1KiB",
            "--max-size", "1MiB", "--format", "csv"]
    result = runner.invoke(app, [*base, "--factor", "1.0001"])
    assert result.exit_code == 2 and result.stderr.startswith("error: factor: got 1.0001;")
    full = runner.invoke(app, [*base, "--factor", "2"])
    assert full.exit_code == 0 and full.stdout.strip().splitlines()[-1].split(",")[
        full.stdout.splitlines()[0].split(",").index("size_bytes")] == "1048576.0"


def test_a_left_out_combination_is_said():
    """`sweep broadcast,all-reduce -a ring` printed one row and nothing about the other (QA pass,
    2026-11-28): the rows stay what the model answers, and a note says what was left out and why."""
    result = runner.invoke(app, ["sweep", "broadcast,all-reduce", "-N", "8", "--alpha", "5us", "--bandwidth", "25GB/s",
                                 "-a", "ring", "--sizes", "1MB", "--json"])
    assert result.exit_code == 0, result.output
    assert [row["primitive"] for row in json.loads(result.stdout)] == ["all-reduce"]
    assert result.stderr.startswith("note: 1 combination(s) the model cannot answer left out (first: algorithm: "
                                    "got 'ring'; allowed: for broadcast")
