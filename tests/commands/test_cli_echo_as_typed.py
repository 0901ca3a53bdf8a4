"""Refusals quote what the user typed, and keep the line readable (2026-11-30, the last session's
"left" list): click's own usage errors quoted a 5,000-character value in full; the bucket and
memory-reserve refusals quoted bytes ("got 0.0", "got 500000000000.0") for '0MB' and '500GB'."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import cli
from cli import app

ITERATION = ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "8"]
PLAN = ["plan", "--model", "gpt2", "--cluster", "dgx-h100", "--global-batch", "512"]


def _line(args: list[str]) -> str:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.output
    return lines[0]


@pytest.mark.parametrize(("args", "expected"), [
    ([*ITERATION, "--bucket", "0MB"],
     "error: bucket: got '0MB'; allowed: a size from 4 bytes (one fp32 gradient element) to 1 ZiB"),
    ([*ITERATION, "--first-bucket", "0.5B"],
     "error: first_bucket: got '0.5B'; allowed: a size from 4 bytes (one fp32 gradient element) to 1 ZiB"),
    ([*PLAN, "--buckets", "25MB,2B"],
     "error: buckets: got '2B'; allowed: a size from 4 bytes (one fp32 gradient element) to 1 ZiB"),
    ([*ITERATION, "--memory-reserve", "500GB"],
     "error: memory_reserve: got '500GB'; allowed: a size below the GPU's 85 GB, or a share from 0% to below 100% (10%)"),
    ([*PLAN, "--memory-reserve", "500GB"],
     "error: memory_reserve: got '500GB'; allowed: bytes >= 0 and below the GPU's 85 GB"),
])
def test_size_refusals_quote_the_text_typed(args, expected):
    assert _line(args) == expected


def test_a_deadline_no_plan_meets_quotes_it_as_typed():
    """It said 'deadline: got 1.0' for --deadline 1h (MISSION audit, 2026-11-30)."""
    line = _line(["plan", "--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "2", "--global-batch", "512",
                  "--seq-len", "4096", "--tokens", "1T", "--deadline", "1h"])
    assert line.startswith("error: deadline: got '1h'; allowed: a constraint some plan meets")


def test_a_reserve_the_gpu_holds_still_runs():
    assert CliRunner().invoke(app, [*ITERATION, "--memory-reserve", "10GB"]).exit_code == 0


def test_the_api_still_quotes_the_bytes_it_was_given():
    from costmodel.planner.recommend import plan
    from dpbase.errors import InputError

    with pytest.raises(InputError, match=r"^memory_reserve: got 500000000000\.0;"):
        plan("gpt2", "dgx-h100", global_batch=512, memory_reserve=500e9)


@pytest.mark.parametrize("args", [
    ["plan", "--model", "gpt2", "--cluster", "dgx-h100", "--global-batch", "512", "--objective", "x" * 5000],
    ["hardware", "list", "y" * 5000],
    ["plan", "--model", "gpt2", "--cluster", "dgx-h100", "--global-batch", "512", "--objective", "ab," * 1666 + "ab"],
])
def test_clicks_usage_errors_cut_a_long_value(args, capsys):
    assert cli._answer_with_typer(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert len(err) < 600 and "…(5000 characters)" in err


def test_a_json_usage_error_cuts_it_too(capsys):
    args = ["plan", "--model", "gpt2", "--cluster", "dgx-h100", "--global-batch", "512", "--json",
            "--objective", "x" * 5000]
    assert cli._answer_with_typer(args) == 2
    shown = json.loads(capsys.readouterr().out)["error"]["message"]
    assert "…(5000 characters)" in shown and len(shown) < 500
