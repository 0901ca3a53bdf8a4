"""Accumulation without DDP's no_sync (--sync-each-micro-batch): every micro-batch all-reduces."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli import app
from costmodel.training import losses, stragglers
from costmodel.training.iteration import TrainingConfig, iteration_breakdown
from costmodel.training.workloads import load_model
from dpbase.errors import InputError
from dpbase.values import replace

runner = CliRunner()
GPU = "a100-sxm4-80gb"


def comm(_primitive: str, size_bytes: float) -> float:
    return 20e-6 + size_bytes / 100e9  # 20 µs + 100 GB/s, per collective


def _step(k: int, each: bool, **extra):
    config = TrainingConfig(micro_batch=64, accumulation_steps=k, grad_dtype="fp32", compute_dtype="tf32",
                            optimizer="sgd", sync_each_micro_batch=each, **extra)
    return iteration_breakdown(load_model("resnext101-32x4d"), GPU, comm, 8, config)


@pytest.mark.parametrize("k", [2, 4, 16])
def test_each_micro_batch_pays_the_whole_synchronisation(k):
    once, each = _step(k, False), _step(k, True)
    assert each.comm_s == pytest.approx(k * once.comm_s, rel=1e-9)
    assert each.exposed_comm_s == pytest.approx(k * once.exposed_comm_s, rel=1e-9)
    assert each.compute_s == pytest.approx(once.compute_s, rel=1e-9)  # the same work
    assert each.total_s > once.total_s and each.scaling_efficiency < once.scaling_efficiency
    assert each.sync_each_micro_batch and not once.sync_each_micro_batch


def test_every_micro_batch_waits_for_the_slowest_so_jitter_no_longer_averages():
    """Per-micro-batch jitter averages over k micro-batches synchronised once (σ/√k); synchronised
    every micro-batch, each one waits for the slowest rank."""
    once, each = _step(16, False, jitter_cv=0.05), _step(16, True, jitter_cv=0.05)
    # beside the default one-sided spread: the jitter of one micro-batch (5 %) against that of 16
    # summed (5/4 %), the slowest of the 8 ranks waited for once per step either way
    alone, averaged = (stragglers.slowest_rank_factor(0.05, 8, k, losses.SPEED_CV) - 1.0 for k in (1, 16))
    assert each.straggler_wait_s == pytest.approx(alone * each.compute_s, rel=1e-9)
    assert once.straggler_wait_s == pytest.approx(averaged * once.compute_s, rel=1e-9)
    assert each.straggler_wait_s > 1.9 * once.straggler_wait_s


def test_at_one_micro_batch_it_changes_nothing():
    assert _step(1, True).total_s == pytest.approx(_step(1, False).total_s, rel=1e-12)


@pytest.mark.parametrize(("extra", "allowed"), [
    ({"sync": "flat"}, "off with --sync flat"),
    ({"zero_stage": 2}, "ZeRO-0 or 1 (ZeRO-2 reduces every micro-batch's gradients already)"),
    ({"zero_stage": 3}, "ZeRO-0 or 1 (ZeRO-3"),
    ({"asynchronous": True}, "off with asynchronous updates"),
])
def test_refused_where_it_cannot_apply_or_already_does(extra, allowed):
    with pytest.raises(InputError) as refused:
        _step(4, True, **extra)
    assert str(refused.value).startswith(f"sync_each_micro_batch: got True; allowed: {allowed}")


def test_the_cli_says_so_in_text_and_json():
    args = ["iteration", "--model", "resnext101-32x4d", "--cluster", "dgx-a100", "--gpus", "8", "--micro-batch", "64",
            "--accum", "4", "--optimizer", "sgd"]
    text = runner.invoke(app, [*args, "--sync-each-micro-batch"])
    assert text.exit_code == 0, text.output
    assert "gradients synchronised after each of the 4 micro-batches (no no_sync)" in text.output
    plain, each = (json.loads(runner.invoke(app, [*args, *extra, "--json"]).stdout)
                   for extra in ([], ["--sync-each-micro-batch"]))
    assert each["sync_each_micro_batch"] is True and plain["sync_each_micro_batch"] is False
    assert each["comm_s"] == pytest.approx(4 * plain["comm_s"], rel=1e-6)
    flat = runner.invoke(app, [*args, "--sync", "flat", "--sync-each-micro-batch"])
    assert flat.exit_code == 2 and flat.output.strip().startswith("error: sync_each_micro_batch: got True")


def test_horovod_and_per_tensor_take_it_too():
    for sync in ("horovod", "per-tensor"):
        once, each = _step(4, False, sync=sync), _step(4, True, sync=sync)
        assert each.comm_s == pytest.approx(4 * once.comm_s, rel=1e-9), sync


def test_a_measured_run_is_taken_with_the_same_training_loop():
    """--rate from a run of the same loop: one that accumulates without no_sync did in the measured
    run too, so the calibration counts its per-micro-batch all-reduces (a 16-GPU run, 4 micro-batches)."""
    from costmodel.commands.rate_run import MeasuredRun, measured_config

    config = TrainingConfig(micro_batch=64, accumulation_steps=4, optimizer="sgd", sync_each_micro_batch=True)
    run = MeasuredRun.from_options(rate_gpus=16, rate_accum=4)
    assert measured_config(config, run).sync_each_micro_batch
    assert not measured_config(replace(config, sync_each_micro_batch=False), run).sync_each_micro_batch
    assert not measured_config(config, MeasuredRun.from_options(rate_gpus=16, rate_accum=4, rate_zero=2)).sync_each_micro_batch


def test_the_bucket_text_reads_the_gradients_size_not_a_steps_bytes():
    """A 1 GiB bucket holds ResNeXt-101's 177 MB fp32 gradient whole; synchronised 8 times a step,
    the step moves 1.4 GB, which read as "2 buckets of 1 GiB". (Its tensors are listed: the first
    bucket is its classifier, 8.2 MB, then the rest.)"""
    args = ["iteration", "--model", "resnext101-32x4d", "--cluster", "dgx-a100", "--micro-batch", "64", "--accum", "8",
            "--grad-dtype", "fp32", "--optimizer", "sgd", "--bucket", "1GiB"]
    for extra in ([], ["--sync-each-micro-batch"]):
        result = runner.invoke(app, [*args, *extra])
        assert result.exit_code == 0 and "2 buckets of whole tensors: the first of 8.196 MB, then the rest" in \
            result.output, (extra, result.output)
