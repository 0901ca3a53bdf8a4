"""The planner turns activation recomputation on only when nothing fits without it."""

from __future__ import annotations

import itertools
import json

import pytest
from test_planner_bruteforce import _brute_force

import hardware
from costmodel.planner.recommend import plan
from dpbase.errors import NotApplicableError

MIB = 2**20


def test_llama2_70b_at_4096_tokens_fits_only_with_recomputation():
    result = plan("llama2-70b", "dgx-h100", nodes=64, global_batch=1024, seq_len=4096, backend="ideal")
    best = result.best
    assert best.recompute and all(row.recompute for row in result.candidates)
    assert best.memory_bytes <= best.memory_bytes + best.memory_headroom_bytes
    assert result.findings["recompute"]["chosen"] and not result.findings["recompute"]["requested"]
    leanest = result.findings["recompute"]["leanest_without_bytes"]
    assert leanest > 80e9
    assert "Activation recomputation on (no plan fits without it" in result.reason
    assert f"{leanest / 1e9:.1f} GB" in result.reason
    data = json.loads(json.dumps(result.to_dict()))
    assert data["best"]["recompute"] is True and data["candidates"][0]["recompute"] is True
    with pytest.raises(NotApplicableError, match="activations and logits alone exceed"):
        plan("llama2-70b", "dgx-h100", nodes=64, global_batch=1024, seq_len=4096,
             recompute=False, explain=False)


def test_recomputation_stays_off_when_plans_fit_and_on_when_asked():
    auto = plan("gpt2", "dgx-h100", global_batch=32, seq_len=512, explain=False)
    assert not auto.best.recompute
    assert "recomputation" not in plan("gpt2", "dgx-h100", global_batch=32, seq_len=512).reason
    forced = plan("gpt2", "dgx-h100", global_batch=32, seq_len=512, recompute=True)
    assert forced.best.recompute and "(requested)" in forced.reason
    assert forced.best.samples_per_s < auto.best.samples_per_s
    with pytest.raises(NotApplicableError, match="recompute"):
        plan("resnet-50", "dgx-h100", global_batch=32, recompute=True, explain=False)


def test_recomputing_plan_equals_brute_force_argmin():
    """llama2-7b at 32768 tokens on 2 nodes needs recomputation: the choice is the scalar argmin."""
    system = hardware.load_system("dgx-h100")
    algorithms, buckets, dtypes = ("ring", "recursive-doubling"), (5 * MIB, 25 * MIB), ("bf16",)
    with pytest.raises(NotApplicableError):
        plan("llama2-7b", system, nodes=2, global_batch=16, seq_len=32768, algorithms=algorithms,
             bucket_bytes=buckets, grad_dtypes=dtypes, recompute=False, explain=False, backend="ideal")
    result = plan("llama2-7b", system, nodes=2, global_batch=16, seq_len=32768,
                  algorithms=algorithms, bucket_bytes=buckets, grad_dtypes=dtypes,
                  tie_band=0.0, explain=False, backend="ideal")
    brute = _brute_force("llama2-7b", system, 2, 16, 32768, algorithms, buckets, dtypes,
                         recompute=True)
    best = result.best
    assert best.recompute and brute.recompute
    assert best.total_s == pytest.approx(brute.total_s, rel=1e-12)
    assert (best.gpus, best.micro_batch, best.zero_stage) == (
        brute.ranks, brute.micro_batch, brute.zero_stage)
    assert best.memory_bytes == pytest.approx(brute.memory.total_bytes)
    assert best.scaling_efficiency == pytest.approx(brute.scaling_efficiency, rel=1e-12)


@pytest.mark.parametrize("recompute", [False, True])
def test_fits_is_the_sweeps_memory_and_feasibility(recompute):
    """grid.fits (what decides whether the sweep with recomputation runs) holds the sweep's own
    memory and feasibility, and a sweep given it equals one that computes them."""
    import numpy as np

    from costmodel.planner import grid
    from costmodel.planner.recommend import build_space, training_setting
    from costmodel.training.workloads import load_model

    system = hardware.load_system("dgx-h100")
    setting = training_setting(load_model("llama2-7b"), system, seq_len=8192, compute_dtype="bf16", mfu=None,
                               optimizer="adamw", jitter_cv=0.0, backend="nccl", recompute=recompute)
    space = build_space(system, nodes=4, global_batch=64, min_gpus=1, max_gpus=32,
                        algorithms=("auto", "ring"), bucket_bytes=(25 * MIB,), grad_dtypes=("bf16", "fp32"))
    tables = grid.setting_tables(setting, system, space)
    fitted = grid.fits(setting, system, space, tables)
    alone, given = grid.sweep(setting, system, space, tables), grid.sweep(setting, system, space, tables, fitted)
    for sweep in (alone, given):
        assert np.array_equal(np.broadcast_to(fitted.memory_bytes, space.shape), sweep.memory_bytes)
        assert np.array_equal(np.broadcast_to(fitted.feasible, space.shape), sweep.feasible)
        assert np.array_equal(np.broadcast_to(fitted.plain_dp_fits, space.shape), sweep.plain_dp_fits)
        assert sweep.reserve_bytes == sweep.capacity_bytes - fitted.usable_bytes
    assert fitted.feasible.any() and not fitted.feasible.all()
    assert np.array_equal(alone.total_s, given.total_s)
    other = training_setting(load_model("llama2-7b"), system, seq_len=8192, compute_dtype="bf16", mfu=None,
                             optimizer="adamw", jitter_cv=0.0, backend="nccl", recompute=not recompute)
    with pytest.raises(ValueError, match="another setting"):  # memory from one setting, times from another
        grid.sweep(other, system, space, tables, fitted)
    # against the scalar memory model, configuration by configuration (independent of sweep)
    from costmodel.training.iteration import TrainingConfig, iteration_breakdown

    workload, checked = load_model("llama2-7b"), 0
    for z, d, c in itertools.product(range(len(space.zero_stages)), range(len(space.grad_dtypes)),
                                     range(space.micro_batch.size)):
        ranks, micro = int(space.gpus.ravel()[c]), int(space.micro_batch.ravel()[c])
        config = TrainingConfig(micro_batch=micro, accumulation_steps=int(space.accumulation.ravel()[c]),
                                seq_len=8192, grad_dtype=space.grad_dtypes[d], zero_stage=space.zero_stages[z],
                                recompute=recompute)
        b = iteration_breakdown(workload, system.gpu, lambda _p, size: 0.0 * size, ranks, config)
        assert fitted.memory_bytes[0, z, d, 0, c] == pytest.approx(b.memory.total_bytes, rel=1e-12)
        checked += 1
    assert checked >= 40
