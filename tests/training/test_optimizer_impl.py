"""Per-tensor optimizer loops (issue 15): an optimizer that launches its kernels tensor by tensor
is bound by those launches, not by HBM (iteration.PER_TENSOR_STEP_S, PyTorch PR #45299)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import hardware
from cli import app
from costmodel.planner.recommend import plan
from costmodel.training import iteration as it
from costmodel.training import syncmodes
from costmodel.training.iteration import TrainingConfig, iteration_breakdown
from costmodel.training.oncluster import iteration
from costmodel.training.workloads import load_model
from dpbase.errors import InputError

runner = CliRunner()
A100 = hardware.load_system("dgx-a100").gpu


def _step(model="transformer-xl-base", **fields):
    config = TrainingConfig(micro_batch=fields.pop("micro_batch", 16), compute_dtype="fp16", **fields)
    return iteration_breakdown(load_model(model), A100, lambda p, s: 0.0, 1, config)


def test_the_per_tensor_figures_are_the_measured_resnet101_steps():
    # PyTorch PR #45299: optimizer.step() of ResNet-101 (314 tensors) with the single-tensor optimizers
    assert 314 * it.PER_TENSOR_STEP_S["adam"] == pytest.approx(42.69e-3)
    assert 314 * it.PER_TENSOR_STEP_S["adamw"] == pytest.approx(51.38e-3)
    assert 314 * it.PER_TENSOR_STEP_S["sgd"] == pytest.approx(6.28e-3)
    # and those steps were launch-bound: ResNet-101's 44.5 M parameters move through HBM in ~1.4 ms
    assert it.optimizer_dispatch_seconds(314, "adam", "per-tensor") > 20 * 44.5e6 * 28 / 900e9


@pytest.mark.parametrize("optimizer", ["adam", "adamw", "sgd"])
def test_a_loop_bounds_the_step_by_its_launches(optimizer):
    fused = _step(optimizer=optimizer)
    loop = _step(optimizer=optimizer, optimizer_impl="per-tensor")
    tensors = syncmodes.tensor_count(load_model("transformer-xl-base"))
    launches = tensors * it.PER_TENSOR_STEP_S[optimizer]
    assert loop.optimizer_dispatch_s == pytest.approx(launches) and fused.optimizer_dispatch_s == 0.0
    assert loop.optimizer_s == pytest.approx(max(fused.optimizer_s, launches))
    assert loop.total_s - fused.total_s == pytest.approx(loop.optimizer_s - fused.optimizer_s)
    assert loop.compute_s == fused.compute_s


def test_hbm_still_bounds_a_big_model():
    big = _step("llama2-7b", micro_batch=1, optimizer_impl="per-tensor")
    assert big.optimizer_dispatch_s < big.optimizer_s  # 291 launches take less than 7 B parameters' traffic
    assert big.optimizer_s == pytest.approx(_step("llama2-7b", micro_batch=1).optimizer_s)


def test_refused_where_no_loop_runs():
    with pytest.raises(InputError, match="optimizer_impl"):
        _step(optimizer_impl="loop")
    with pytest.raises(InputError, match="ZeRO >= 1"):
        iteration("gpt2", "dgx-a100", micro_batch=8, zero_stage=1, optimizer_impl="per-tensor")
    with pytest.raises(InputError, match="asynchronous"):
        plan("resnet-50", hardware.load_system("dgx-a100"), global_batch=2048, asynchronous=True,
             optimizer_impl="per-tensor", top=1)
    bad = runner.invoke(app, ["iteration", "--model", "gpt2", "--cluster", "dgx-a100", "--micro-batch", "8",
                              "--optimizer-impl", "foreach"])
    assert bad.exit_code == 2 and "optimizer_impl" in bad.output and "Traceback" not in bad.output


def test_plan_rows_are_what_iteration_gives():
    system = hardware.load_system("dgx-a100")
    result = plan("transformer-xl-base", system, global_batch=256, compute_dtype="fp16", optimizer_impl="per-tensor",
                  top=10)
    seen_zero = set()
    for row in result.candidates[:6]:
        seen_zero.add(row.zero_stage)
        alone = iteration("transformer-xl-base", system, micro_batch=row.micro_batch,
                          accumulation_steps=row.accumulation_steps, nodes=row.nodes,
                          gpus_per_node=row.gpus_per_node, algorithm=row.algorithm, bucket_bytes=row.bucket_bytes,
                          grad_dtype=row.grad_dtype, compute_dtype="fp16", zero_stage=row.zero_stage,
                          recompute=row.recompute, optimizer_impl=it.optimizer_impl_at("per-tensor", row.zero_stage))
        assert row.total_s == pytest.approx(alone.total_s, rel=1e-6)
    looped = result.best
    plain = plan("transformer-xl-base", system, global_batch=256, compute_dtype="fp16", top=1).best
    assert looped.samples_per_s < plain.samples_per_s
    assert 0 in seen_zero


def test_the_cli_reports_the_launches():
    args = ["iteration", "--model", "transformer-xl-base", "--cluster", "dgx-a100", "--micro-batch", "16",
            "--optimizer-impl", "per-tensor"]
    data = json.loads(runner.invoke(app, [*args, "--json"]).output)
    assert data["optimizer_impl"] == "per-tensor" and data["optimizer_dispatch_s"] > 0.02
    assert "a per-tensor loop" in runner.invoke(app, args).output
    plan_out = runner.invoke(app, ["plan", "--model", "transformer-xl-base", "--cluster", "dgx-a100",
                                   "--global-batch", "256", "--optimizer-impl", "per-tensor", "--json"])
    assert plan_out.exit_code == 0, plan_out.output


def test_rate_keeps_the_loop_in_the_measured_run():
    """--rate's measured run is the same training script: its loop takes part of the measured step,
    so the matmuls run faster than a multi-tensor reading of the same rate says."""
    base = ["iteration", "--model", "transformer-xl-base", "--cluster", "dgx-a100", "--gpus", "1", "--micro-batch", "16",
            "--compute-dtype", "fp16", "--rate", "40000tok/s", "--json"]
    loop = json.loads(runner.invoke(app, [*base, "--optimizer-impl", "per-tensor"]).output)
    fused = json.loads(runner.invoke(app, base).output)
    assert loop["mfu"] > fused["mfu"]
    # one GPU at the measured micro-batch: the rate comes back
    assert loop["tokens_per_s"] == pytest.approx(40000, rel=1e-6)
    assert fused["tokens_per_s"] == pytest.approx(40000, rel=1e-6)
