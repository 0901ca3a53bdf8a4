"""Prediction intervals carried from the collectives into the step and the plan (issue 13, item 5)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from cli import app
from costmodel.planner.recommend import plan
from costmodel.training.oncluster import iteration

runner = CliRunner()


def test_realistic_step_has_intervals_that_bracket_it():
    b = iteration("llama2-7b", "dgx-h100", micro_batch=1, seq_len=4096, accumulation_steps=4, zero_stage=1, nodes=4)
    assert b.comm_interval_s is not None and b.total_interval_s is not None
    low, high = b.comm_interval_s
    assert low < b.comm_s < high
    low, high = b.total_interval_s
    assert low <= b.total_s <= high and high > low
    # overlap absorbs part of the comm uncertainty: the step moves less than the comm does
    assert high - low < b.comm_interval_s[1] - b.comm_interval_s[0]


def test_ideal_backend_has_no_interval():
    b = iteration("gpt2", "dgx-h100", micro_batch=8, nodes=2, backend="ideal")
    assert b.comm_interval_s is None and b.total_interval_s is None


def test_iteration_json_and_text_carry_the_interval():
    args = ["iteration", "--model", "gpt2", "--cluster", "dgx-a100", "--nodes", "2", "--micro-batch", "8"]
    data = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    low, high = data["total_interval_s"]
    assert low <= data["total_s"] <= high
    text = runner.invoke(app, args).stdout
    assert "10-90 %" in text


def test_plan_headline_carries_the_step_interval():
    p = plan("llama2-7b", "dgx-h100", nodes=2, global_batch=64, seq_len=2048)
    low, high = p.best_interval_s
    assert low <= p.best.total_s <= high
    assert "10-90 %" in p.reason.splitlines()[0]
    assert plan("llama2-7b", "dgx-h100", nodes=2, global_batch=64, seq_len=2048, backend="ideal").best_interval_s is None
