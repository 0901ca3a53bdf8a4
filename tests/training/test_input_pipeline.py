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
    assert slow.scaling_efficiency < free.scaling_efficiency
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
