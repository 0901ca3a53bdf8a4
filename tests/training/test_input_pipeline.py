"""The input-pipeline term (issue 15): a data loader that sustains fewer samples per second
than the step consumes makes the step wait for it (losses.input_rate)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import hardware
from cli import app
from costmodel.planner.recommend import plan
from costmodel.training.iteration import TrainingConfig, iteration_breakdown
from costmodel.training.losses import StepLosses
from costmodel.training.oncluster import iteration
from costmodel.training.workloads import load_model
from dpbase.errors import InputError

runner = CliRunner()


def _step(rate, ranks=8, k=2):
    gpu = hardware.load_system("dgx-a100").gpu
    config = TrainingConfig(micro_batch=256, accumulation_steps=k, losses=StepLosses(input_rate=rate))
    return iteration_breakdown(load_model("resnet-50"), gpu, lambda p, s: s / 100e9, ranks, config)


@pytest.mark.parametrize("ranks", [1, 8])
def test_a_slow_loader_sets_the_step(ranks):
    free = _step(None, ranks)
    needed = 2 * 256 / free.total_s  # the rate at which the loader exactly keeps up
    slow = _step(needed / 2, ranks)  # half that: the step takes the loader's time
    assert slow.total_s == pytest.approx(2 * 256 / (needed / 2))
    assert slow.input_wait_s == pytest.approx(slow.total_s - free.total_s)
    # a lone GPU waits for the same loader: the wait is no scaling loss, and the loader-bound step
    # (its collectives hidden under the wait) scales perfectly; one GPU is its own reference
    assert slow.scaling_efficiency == pytest.approx(1.0)
    assert slow.rank_alone_samples_per_s == pytest.approx(slow.samples_per_s / ranks)
    assert free.scaling_efficiency == 1.0 if ranks == 1 else free.scaling_efficiency < 1.0
    fast = _step(needed * 2, ranks)  # prefetching hides a loader faster than the step
    assert fast.total_s == pytest.approx(free.total_s) and fast.input_wait_s == 0.0


def test_refused_when_not_a_rate():
    with pytest.raises(InputError, match="input_rate"):
        _step(0.0)
    bad = runner.invoke(app, ["iteration", "--model", "resnet-50", "--cluster", "dgx-a100", "--micro-batch", "64",
                              "--input-rate", "-1"])
    assert bad.exit_code == 2 and "input_rate" in bad.output


def test_plan_counts_it_as_iteration_does():
    system = hardware.load_system("dgx-a100")
    result = plan("resnet-50", system, global_batch=2048, input_rate=1500.0, top=10)
    for row in result.candidates[:3]:
        alone = iteration("resnet-50", system, micro_batch=row.micro_batch, accumulation_steps=row.accumulation_steps,
                          nodes=row.nodes, gpus_per_node=row.gpus_per_node, algorithm=row.algorithm,
                          bucket_bytes=row.bucket_bytes, grad_dtype=row.grad_dtype,
                          losses=StepLosses(input_rate=1500.0))
        assert row.total_s == pytest.approx(alone.total_s, rel=1e-6)
    free = plan("resnet-50", system, global_batch=2048, top=1)
    assert result.best.samples_per_s < free.best.samples_per_s
    assert result.best.samples_per_s <= 1500.0 * result.best.gpus * (1 + 1e-9)


def test_the_breakdown_shows_the_wait():
    out = runner.invoke(app, ["iteration", "--model", "resnet-50", "--cluster", "dgx-a100", "--micro-batch", "256",
                              "--input-rate", "1000", "--json"])
    data = json.loads(out.output)
    assert data["input_rate"] == 1000 and data["input_wait_s"] > 0
    text = runner.invoke(app, ["iteration", "--model", "resnet-50", "--cluster", "dgx-a100", "--micro-batch", "256",
                               "--input-rate", "1000"]).output
    assert "input pipeline wait" in text


def test_the_intervals_keep_the_loader_floor():
    """A loader-bound step cannot run faster than its loader feeds it: the published-runs interval
    (iteration and plan) starts at the loader's time, and the plan's 10-90 % interval, recomputed
    with the sweep's loss terms, is the loader's time alone (it had been the comm model's spread
    of a step without the loader)."""
    args = ["--model", "gpt2", "--cluster", "dgx-a100", "--nodes", "2", "--input-rate", "50"]
    step = json.loads(runner.invoke(app, ["iteration", *args, "--micro-batch", "16", "--json"]).stdout)
    floor = 16 / 50
    assert step["total_s"] == pytest.approx(floor) and step["scaling_efficiency"] == pytest.approx(1.0)
    assert step["published_interval_s"][0] == pytest.approx(floor)
    assert step["published_interval_s"][1] > floor
    out = runner.invoke(app, ["plan", *args, "--global-batch", "256", "--json"])
    assert out.exit_code == 0, out.output
    best = json.loads(out.stdout)
    assert best["best"]["total_s"] == pytest.approx(floor)
    assert best["best"]["scaling_efficiency"] == pytest.approx(1.0)
    assert best["findings"]["step_interval_s"] == pytest.approx([floor, floor])
    assert best["findings"]["published_interval_s"][0] == pytest.approx(floor)
