"""A run that names no gradient dtype communicates the width of the compute dtype that runs: an
FP32 or TF32 run's gradients are FP32 (4 bytes, not bf16's 2), a 16-bit run's its 16-bit dtype."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli import app
from costmodel.training import oncluster
from costmodel.training.iteration import TrainingConfig, default_grad_dtype, iteration_breakdown
from costmodel.training.workloads import load_model
from dpbase.errors import InputError

runner = CliRunner()


def comm(_primitive: str, size_bytes: float) -> float:
    return 20e-6 + size_bytes / 50e9


@pytest.mark.parametrize(("gpu", "compute", "runs", "grads"), [
    ("a100-sxm4-80gb", "bf16", "bf16", "bf16"), ("a100-sxm4-80gb", "tf32", "tf32", "fp32"),
    ("a100-sxm4-80gb", "fp32", "fp32", "fp32"), ("a100-sxm4-80gb", "fp16", "fp16", "fp16"),
    ("h100-sxm", "fp8", "fp8", "bf16"),  # fp8 inside the GEMMs, bf16 gradient buffers
    ("v100-sxm2-16gb", "bf16", "fp16", "fp16"),  # Volta runs a bf16 request in fp16
    ("k80", "bf16", "fp32", "fp32"),  # no 16-bit math: an fp32 run, fp32 gradients
])
def test_the_default_gradients_are_the_width_of_the_dtype_that_runs(gpu, compute, runs, grads):
    config = TrainingConfig(micro_batch=8, compute_dtype=compute)
    step = iteration_breakdown(load_model("bert-large"), gpu, comm, 8, config)
    assert (step.compute_dtype, step.grad_dtype) == (runs, grads)
    assert default_grad_dtype(compute, gpu) == grads
    width = {"fp32": 4, "bf16": 2, "fp16": 2}[grads]
    assert step.sync_payload_bytes == pytest.approx(width * step.params, rel=1e-9)


def test_a_named_gradient_dtype_is_kept_and_costs_what_its_width_costs():
    def step(grads):
        config = TrainingConfig(micro_batch=8, compute_dtype="tf32", grad_dtype=grads)
        return iteration_breakdown(load_model("bert-large"), "a100-sxm4-80gb", comm, 64, config)

    default, fp32, bf16 = step(None), step("fp32"), step("bf16")
    assert default == fp32 and bf16.grad_dtype == "bf16"
    assert fp32.comm_s > 1.9 * bf16.comm_s and fp32.scaling_efficiency < bf16.scaling_efficiency


def test_the_python_api_and_the_cli_default_alike_on_the_real_comm_model():
    api = oncluster.iteration("bert-large", "dgx-a100", nodes=4, micro_batch=8, compute_dtype="fp32")
    result = runner.invoke(app, ["iteration", "--model", "bert-large", "--cluster", "dgx-a100", "--nodes", "4",
                                 "--micro-batch", "8", "--compute-dtype", "fp32", "--json"])
    assert result.exit_code == 0, result.output
    cli = json.loads(result.stdout)
    assert api.grad_dtype == cli["grad_dtype"] == "fp32"
    assert cli["samples_per_s"] == pytest.approx(api.samples_per_s, rel=1e-9)
    text = runner.invoke(app, ["iteration", "--model", "bert-large", "--cluster", "dgx-a100", "--micro-batch", "8",
                               "--compute-dtype", "tf32"])
    assert "grads fp32, compute tf32" in text.stdout


def test_an_unknown_compute_dtype_is_refused_naming_it():
    with pytest.raises(InputError, match="compute_dtype"):
        default_grad_dtype("int8")


@pytest.mark.parametrize(("gpu", "compute", "swept"), [
    ("h100-sxm", "bf16", ("bf16", "fp32")), ("v100-sxm2", "bf16", ("fp16", "fp32")),
    ("a100-sxm4-80gb", "tf32", ("fp32",)), ("k80", "bf16", ("fp32",)),
])
def test_a_plan_sweeps_the_compute_dtypes_gradients_and_fp32_by_default(gpu, compute, swept):
    from costmodel.planner.recommend import default_grad_dtypes

    assert default_grad_dtypes(compute, gpu) == swept


def test_an_fp32_plan_recommends_fp32_gradients_unless_others_are_asked_for():
    args = ["plan", "--model", "bert-large", "--cluster", "dgx-a100", "--global-batch", "256",
            "--compute-dtype", "tf32", "--json"]
    default = json.loads(runner.invoke(app, args).stdout)
    asked = json.loads(runner.invoke(app, [*args, "--grad-dtypes", "bf16,fp32"]).stdout)
    assert default["best"]["grad_dtype"] == "fp32"
    assert {row["grad_dtype"] for row in default["candidates"]} == {"fp32"}
    assert asked["configurations"] == 2 * default["configurations"]  # bf16 gradients swept only when asked
