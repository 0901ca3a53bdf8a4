"""Per-tensor optimizer loops (issue 15): an optimizer that launches its kernels tensor by tensor
adds that launching to the step (iteration.PER_TENSOR_STEP_S, PyTorch PR #45299)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import hardware
from cli import app
from costmodel.planner.recommend import plan
from costmodel.training import iteration as it
from costmodel.training import memory, syncmodes
from costmodel.training.iteration import TrainingConfig, iteration_breakdown
from costmodel.training.oncluster import iteration
from costmodel.training.workloads import load_model
from dpbase.errors import InputError

runner = CliRunner()
A100 = hardware.load_system("dgx-a100").gpu


def _step(model="transformer-xl-base", ranks=1, **fields):
    config = TrainingConfig(micro_batch=fields.pop("micro_batch", 16), compute_dtype="fp16", **fields)
    return iteration_breakdown(load_model(model), A100, lambda p, s: 0.0, ranks, config)


@pytest.mark.parametrize(("optimizer", "single_ms", "multi_ms"), [("adam", 42.69, 10.16), ("adamw", 51.38, 15.63),
                                                                  ("sgd", 6.28, 4.40)])
def test_the_loop_costs_what_the_measured_resnet101_steps_differ_by(optimizer, single_ms, multi_ms):
    """PyTorch PR #45299: optimizer.step() of ResNet-101 (314 tensors), single-tensor against
    multi-tensor. The model's two implementations of that step differ by the same."""
    resnet101 = load_model("resnet-101")
    assert syncmodes.tensor_count(resnet101) == it.RESNET101_TENSORS
    config = dict(micro_batch=32, optimizer=optimizer)
    loop = _step("resnet-101", optimizer_impl="per-tensor", **config)
    fused = _step("resnet-101", **config)
    assert loop.optimizer_s - fused.optimizer_s == pytest.approx((single_ms - multi_ms) * 1e-3)
    assert loop.optimizer_dispatch_s == pytest.approx(loop.optimizer_s - fused.optimizer_s)
    assert fused.optimizer_dispatch_s == 0.0 and loop.compute_s == fused.compute_s
    assert loop.total_s - fused.total_s == pytest.approx(loop.optimizer_s - fused.optimizer_s)


def test_a_zero1_rank_loops_over_its_share_fsdp_over_every_tensor():
    """ZeroRedundancyOptimizer hands a rank whole parameters; FSDP (ZeRO-2/3) a piece of each."""
    tensors = syncmodes.tensor_count(load_model("gpt2-large"))
    for zero, ranks in ((0, 8), (1, 8), (2, 8), (3, 16)):
        loop = _step("gpt2-large", ranks=ranks, micro_batch=4, zero_stage=zero, optimizer_impl="per-tensor")
        share = -(-tensors // ranks) if zero == 1 else tensors
        assert loop.optimizer_dispatch_s == pytest.approx(share * it.PER_TENSOR_STEP_S["adamw"])


def test_refused_where_no_loop_runs_on_the_gpu():
    with pytest.raises(InputError, match="optimizer_impl"):
        _step(optimizer_impl="loop")
    with pytest.raises(InputError, match="offload"):
        iteration("gpt2", "dgx-h100", micro_batch=8, zero_stage=1, offload_optimizer=True, optimizer_impl="per-tensor")
    with pytest.raises(InputError, match="asynchronous"):
        plan("resnet-50", hardware.load_system("dgx-a100"), global_batch=2048, asynchronous=True,
             optimizer_impl="per-tensor", top=1)
    with pytest.raises(InputError, match="asynchronous"):
        iteration("resnet-50", "dgx-a100", micro_batch=64, algorithm="parameter-server", asynchronous=True,
                  optimizer_impl="per-tensor")
    with pytest.raises(InputError, match="offload"):
        plan("gpt2-xl", hardware.load_system("dgx-h100"), global_batch=64, offload_optimizer=True,
             optimizer_impl="per-tensor", top=1)
    for args in (["--async", "--algorithm", "parameter-server"], ["--zero", "1", "--offload-optimizer"]):
        out = runner.invoke(app, ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "8",
                                  "--optimizer-impl", "per-tensor", *args])
        assert out.exit_code == 2 and "optimizer_impl" in out.output and "Traceback" not in out.output
    bad = runner.invoke(app, ["iteration", "--model", "gpt2", "--cluster", "dgx-a100", "--micro-batch", "8",
                              "--optimizer-impl", "foreach"])
    assert bad.exit_code == 2 and "optimizer_impl" in bad.output and "Traceback" not in bad.output


def test_every_optimizer_has_a_per_tensor_figure():
    assert set(it.PER_TENSOR_STEP_S) == set(memory.OPTIMIZER_STATE_BYTES)


def test_plan_rows_and_interval_are_what_iteration_gives():
    """gpt2-large on a DGX A100 at global batch 512: the listed rows hold ZeRO-0, 1 and 2."""
    system = hardware.load_system("dgx-a100")
    result = plan("gpt2-large", system, global_batch=512, grad_dtypes=("bf16",), optimizer_impl="per-tensor", top=40)
    stages = set()
    for row in result.candidates:
        stages.add(row.zero_stage)
        alone = iteration("gpt2-large", system, micro_batch=row.micro_batch, accumulation_steps=row.accumulation_steps,
                          nodes=row.nodes, gpus_per_node=row.gpus_per_node, algorithm=row.algorithm,
                          bucket_bytes=row.bucket_bytes, grad_dtype=row.grad_dtype, zero_stage=row.zero_stage,
                          recompute=row.recompute, optimizer_impl="per-tensor")
        assert row.total_s == pytest.approx(alone.total_s, rel=1e-6)
    assert {0, 1, 2} <= stages
    best = result.best
    from costmodel.cluster.comm import comm_model
    from costmodel.training.oncluster import with_interval

    comm = comm_model(system, best.nodes, best.gpus_per_node, algorithm=best.algorithm)
    config = TrainingConfig(micro_batch=best.micro_batch, accumulation_steps=best.accumulation_steps,
                            grad_dtype=best.grad_dtype, bucket_bytes=best.bucket_bytes, zero_stage=best.zero_stage,
                            recompute=best.recompute, optimizer_impl="per-tensor", transport="rdma")
    ranged = with_interval(iteration_breakdown(load_model("gpt2-large"), system.gpu, comm, config=config),
                           load_model("gpt2-large"), system.gpu, comm, config)
    low, high = result.best_interval_s
    assert low / best.total_s == pytest.approx(ranged.total_interval_s[0] / ranged.total_s, rel=1e-6)
    assert high / best.total_s == pytest.approx(ranged.total_interval_s[1] / ranged.total_s, rel=1e-6)
    plain = plan("gpt2-large", system, global_batch=512, grad_dtypes=("bf16",), top=1).best
    assert best.samples_per_s < plain.samples_per_s


def test_the_cli_reports_the_loop():
    args = ["iteration", "--model", "transformer-xl-base", "--cluster", "dgx-a100", "--micro-batch", "16",
            "--optimizer-impl", "per-tensor"]
    data = json.loads(runner.invoke(app, [*args, "--json"]).output)
    assert data["optimizer_impl"] == "per-tensor" and data["optimizer_dispatch_s"] > 0.02
    assert "a per-tensor loop" in runner.invoke(app, args).output
    plan_args = ["plan", "--model", "transformer-xl-base", "--cluster", "dgx-a100", "--global-batch", "256",
                 "--optimizer-impl", "per-tensor"]
    assert "--optimizer-impl per-tensor" in runner.invoke(app, plan_args).output.splitlines()[0]
    planned = json.loads(runner.invoke(app, [*plan_args, "--json"]).output)
    assert (planned["optimizer_impl"], planned["flash_attention"]) == ("per-tensor", True)


def test_rate_keeps_the_loop_in_the_measured_run():
    """--rate's measured run is the same training script: its loop takes part of the measured step,
    so the matmuls run faster than a multi-tensor reading of the same rate says."""
    base = ["iteration", "--model", "transformer-xl-base", "--cluster", "dgx-a100", "--gpus", "1", "--micro-batch", "16",
            "--compute-dtype", "fp16", "--rate", "40000tok/s", "--json"]
    loop = json.loads(runner.invoke(app, [*base, "--optimizer-impl", "per-tensor"]).output)
    fused = json.loads(runner.invoke(app, base).output)
    assert loop["mfu"] > fused["mfu"]
    assert loop["tokens_per_s"] == pytest.approx(40000, rel=1e-6)  # one GPU at the measured micro-batch
    assert fused["tokens_per_s"] == pytest.approx(40000, rel=1e-6)


@pytest.mark.parametrize("shard", ["hybrid", "hpz"])
def test_plan_zero3_rows_with_sharding_groups_are_what_iteration_gives(shard):
    system = hardware.load_system("dgx-a100")
    result = plan("gpt2-xl", system, nodes=2, global_batch=256, grad_dtypes=("bf16",), optimizer_impl="per-tensor",
                  shard=shard, top=40)
    rows = [row for row in result.candidates if row.zero_stage == 3][:4]
    assert rows
    for row in rows:
        alone = iteration("gpt2-xl", system, micro_batch=row.micro_batch, accumulation_steps=row.accumulation_steps,
                          nodes=row.nodes, gpus_per_node=row.gpus_per_node, algorithm=row.algorithm,
                          bucket_bytes=row.bucket_bytes, grad_dtype=row.grad_dtype, zero_stage=3,
                          recompute=row.recompute, shard=row.shard, optimizer_impl="per-tensor")
        assert alone.optimizer_dispatch_s > 0
        assert row.total_s == pytest.approx(alone.total_s, rel=1e-6)
