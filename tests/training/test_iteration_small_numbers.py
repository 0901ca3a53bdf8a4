"""``dpcost iteration`` text: a nonzero throughput or efficiency never prints as 0 (the planner's
shared helpers, so ``iteration`` and ``plan`` print the same figures)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from cli import app

runner = CliRunner()


def _line(text: str, start: str) -> str:
    return next(line for line in text.splitlines() if line.strip().startswith(start))


def test_tiny_throughput_prints_significant_figures():
    args = ["iteration", "--model", "llama2-7b", "--cluster", "dgx-h100", "--micro-batch", "1",
            "--seq-len", "10000000"]
    text = runner.invoke(app, args)
    assert text.exit_code == 0, text.output
    data = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    line = _line(text.stdout, "throughput")
    assert "0.0 samples/s" not in line
    assert f"{data['samples_per_s']:.2g} samples/s" in line  # 0.0077


def test_tiny_scaling_efficiency_prints_significant_figures():
    # a one-parameter model without its attention matmuls: (almost) nothing to compute (a bare `1` is
    # refused as a missing unit: 1e-6M is one parameter, typed on purpose)
    args = ["iteration", "--model", "1e-6M", "--cluster", "dgx-h100", "--micro-batch", "1", "--no-attention"]
    text = runner.invoke(app, args)
    assert text.exit_code == 0, text.output
    data = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    line = _line(text.stdout, "scaling efficiency")
    assert "efficiency   0.0%" not in line
    assert f"{data['scaling_efficiency'] * 100:.2g}%" in line  # 1.7e-06%


def test_normal_values_keep_their_format():
    # (--algorithm ring here named auto's step: at ZeRO-1 NCCL forces ring on no collective)
    text = runner.invoke(app, ["iteration", "--model", "llama2-7b", "--cluster", "dgx-h100", "--micro-batch", "1",
                               "--zero", "1"])
    assert text.exit_code == 0, text.output
    assert "throughput           17.0 samples/s, 69,504 tokens/s" in text.stdout
    assert "scaling efficiency   83.1%   (exposed comm share 9.5%)" in text.stdout
