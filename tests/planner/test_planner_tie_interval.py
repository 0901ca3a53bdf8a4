"""The tie band from the model's own uncertainty (issue 17): half the relative width of the
fastest plan's 10-90 % step interval, at least 2 %, unless the user sets it."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import hardware
from cli import app
from costmodel.planner import choose
from costmodel.planner.recommend import plan, step_interval

runner = CliRunner()
COMM_BOUND = dict(nodes=4, global_batch=64)  # gpt2 on 4 x p4d (4 x 100G EFA): a comm-bound sweep


def test_interval_band_arithmetic():
    assert choose.interval_band((0.9, 1.3), 1.0) == pytest.approx(0.2)
    assert choose.interval_band((0.99, 1.01), 1.0) == choose.TIE_BAND  # narrower than the floor
    assert choose.interval_band((0.5, 2.5), 1.0) == choose.MAX_INTERVAL_BAND
    assert choose.interval_band(None, 1.0) == choose.TIE_BAND  # ideal backend, one GPU


def test_a_comm_bound_plan_ties_what_its_interval_cannot_separate():
    system = hardware.load_system("aws-p4d")
    auto = plan("gpt2", system, **COMM_BOUND)
    exact = plan("gpt2", system, tie_band=0.0, **COMM_BOUND)
    fastest = exact.best
    band = choose.interval_band(step_interval(fastest, *_setting_of(auto, system)), fastest.total_s)
    assert band > choose.TIE_BAND and auto.tie_band == pytest.approx(band)
    assert auto.findings["tie_band_source"] == "interval"
    # the band is on the objective's score (throughput here), relative to the best score
    assert auto.best.samples_per_s >= fastest.samples_per_s * (1 - band)
    assert "half the width of the fastest plan's 10-90 % step interval" in auto.reason


def _setting_of(result, system):
    """What step_interval needs besides the row: the plan's setting and backend."""
    from costmodel.planner.recommend import training_setting
    from costmodel.training.workloads import load_model

    setting = training_setting(load_model("gpt2"), system, seq_len=None, compute_dtype="bf16", mfu=None,
                               optimizer="adamw", jitter_cv=0.0, backend=result.backend, recompute=False,
                               memory_reserve=None)
    return setting, system, result.backend


def test_a_compute_bound_plan_keeps_the_floor_and_a_given_band_wins():
    system = hardware.load_system("dgx-h100")
    readme = plan("llama2-7b", system, nodes=4, global_batch=512, seq_len=4096)
    assert readme.tie_band == choose.TIE_BAND and readme.findings["tie_band_source"] == "floor"
    given = plan("gpt2", hardware.load_system("aws-p4d"), tie_band=0.05, **COMM_BOUND)
    assert given.tie_band == 0.05 and given.findings["tie_band_source"] == "given"


def test_cli_default_and_override():
    base = ["plan", "--model", "gpt2", "--cluster", "aws-p4d", "--nodes", "4", "--global-batch", "64"]
    auto = runner.invoke(app, base)
    assert auto.exit_code == 0 and "step interval" in auto.output
    fixed = runner.invoke(app, [*base, "--tie-band", "0.02"])
    assert fixed.exit_code == 0 and "step interval" not in fixed.output
    data = __import__("json").loads(runner.invoke(app, [*base, "--tie-band", "0.02", "--json"]).output)
    assert data["tie_band"] == 0.02
