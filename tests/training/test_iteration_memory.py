"""Memory per GPU: replication, ZeRO sharding, activations, what fits."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from iteration_support import SmallGpu, ring_comm

from costmodel.training import memory
from costmodel.training.iteration import TrainingConfig, iteration_breakdown
from costmodel.training.workloads import load_model
from dpbase.errors import InputError, UnknownNameError


def test_mixed_precision_adam_is_16_bytes_per_param():
    precision = memory.precision_for("bf16")
    states = memory.optimizer_state_bytes("adam") + precision.master_bytes
    w, g, o = memory.model_state_bytes(1e9, precision, states, 0, 8)
    assert (w, g, o) == (2e9, 2e9, 12e9)  # ZeRO paper: 2Ψ + 2Ψ + 12Ψ


def test_fp32_adam_is_16_bytes_per_param_and_sgd_less():
    precision = memory.precision_for("fp32")
    w, g, o = memory.model_state_bytes(1e9, precision, memory.optimizer_state_bytes("adam"), 0, 8)
    assert w + g + o == 16e9
    _, _, sgd = memory.model_state_bytes(1e9, precision, memory.optimizer_state_bytes("sgd"), 0, 8)
    assert sgd == 4e9


@pytest.mark.parametrize(("stage", "divided"), [(0, (1, 1, 1)), (1, (1, 1, 8)),
                                                (2, (1, 8, 8)), (3, (8, 8, 8))])
def test_zero_stages_shard_the_model_states(stage, divided):
    precision = memory.precision_for("bf16")
    full = memory.model_state_bytes(1e9, precision, 12, 0, 8)
    sharded = memory.model_state_bytes(1e9, precision, 12, stage, 8)
    assert tuple(f / s for f, s in zip(full, sharded)) == divided


def test_activation_estimate_follows_korthikanti():
    # GPT-3 175B, s=2048, b=1: 34·s·b·h·L bytes with FlashAttention, + 5·a·s²·b·L without.
    got = memory.transformer_activation_bytes(96, 12288, 96, 2048, 1, 2)
    assert got == pytest.approx(34 * 2048 * 12288 * 96)
    full = memory.transformer_activation_bytes(96, 12288, 96, 2048, 1, 2, flash_attention=False)
    assert full - got == pytest.approx(5 * 96 * 2048**2 * 96)
    assert memory.transformer_activation_bytes(96, 12288, 96, 2048, 1, 4) == pytest.approx(2 * got)
    batch = memory.transformer_activation_bytes(2, 64, 2, np.array([8, 16]), np.array([1, 2]), 2)
    assert batch[1] == pytest.approx(4 * batch[0] + 2 * 5 * 2 * 64 * 8 * 8 * 0)


def test_cnn_activations_scale_with_batch():
    resnet = load_model("resnet-50")
    one = memory.activation_bytes(resnet, 1, 0, 2)
    assert memory.activation_bytes(resnet, 32, 0, 2) == pytest.approx(32 * one)
    assert one == pytest.approx(11.1e6 * memory.CNN_SAVED_TENSORS_PER_OUTPUT * 2)


@pytest.mark.parametrize("zero", [0, 1, 2, 3])
def test_memory_parts_add_up(zero):
    result = iteration_breakdown(load_model("gpt2-xl"), SmallGpu(), ring_comm(8), 8,
                                 TrainingConfig(micro_batch=4, zero_stage=zero))
    mem = result.memory
    tensors = (mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes + mem.activations_bytes
               + mem.logits_bytes)
    assert mem.logits_bytes > 0 and mem.runtime_bytes > 0 and mem.fragmentation_bytes > 0
    assert mem.total_bytes == pytest.approx(tensors + mem.fragmentation_bytes + mem.runtime_bytes)
    assert mem.fits == (mem.total_bytes + mem.reserve_bytes <= mem.capacity_bytes)
    assert result.zero_totals_bytes[zero] == pytest.approx(mem.total_bytes)


def test_too_big_model_says_what_would_fit():
    result = iteration_breakdown(load_model("llama2-13b"), SmallGpu(), ring_comm(64), 64,
                                 TrainingConfig(micro_batch=1))
    assert not result.memory.fits  # 16 B/param × 13 B params = 208 GB > 80 GB
    assert result.smallest_fitting_zero_stage in (1, 2, 3)
    stage = result.smallest_fitting_zero_stage
    assert result.zero_totals_bytes[stage] <= 80e9 < result.zero_totals_bytes[stage - 1]


def test_nothing_fits_is_reported_as_none():
    result = iteration_breakdown(load_model("llama3-405b"), SmallGpu(), ring_comm(2), 2,
                                 TrainingConfig(micro_batch=1))
    assert result.smallest_fitting_zero_stage is None


def test_bad_names_are_rejected():
    with pytest.raises(UnknownNameError, match="grad_dtype"):
        memory.precision_for("int4")
    with pytest.raises(UnknownNameError, match="optimizer"):
        memory.optimizer_state_bytes("lion")
    with pytest.raises(InputError, match="zero_stage"):
        memory.check_zero_stage(4)


def test_optimizer_traffic_per_param():
    assert memory.optimizer_step_bytes_per_param(memory.precision_for("bf16"), "adam") == 28
    assert memory.optimizer_step_bytes_per_param(memory.precision_for("fp32"), "adam") == 28
    assert memory.optimizer_step_bytes_per_param(memory.precision_for("bf16"), "adamw") == 36


@settings(max_examples=60, deadline=None)
@given(params=st.one_of(st.floats(1e6, 1e11), st.integers(10**6, 10**11)), ranks=st.integers(1, 4096),
       activations=st.floats(0, 1e11), logits=st.floats(0, 1e10),
       states=st.sampled_from((0.0, 4.0, 12.0, 0, 4, 12)), hybrid=st.booleans(),
       secondary=st.booleans(), recompute=st.booleans(), offload=st.booleans(),
       dtype=st.sampled_from(("bf16", "fp32")))
def test_every_stage_total_is_what_its_breakdown_reports(params, ranks, activations, logits, states, hybrid,
                                                         secondary, recompute, offload, dtype):
    """stage_bytes (every stage of one configuration, as iteration_breakdown reports them) gives
    exactly memory_breakdown at each stage, through breakdown_at."""
    precision = memory.precision_for(dtype)
    per_stage = (states, max(1, ranks // 8) if hybrid else None, 8 if secondary else None, recompute, offload)
    stages = memory.stage_bytes(params, precision, ranks, activations, logits, per_stage)
    for stage, at in zip(memory.ZERO_STAGES, stages, strict=True):
        breakdown = memory.memory_breakdown(params=params, precision=precision, ranks=ranks,
                                            activations_bytes=activations, logits=logits, capacity_bytes=80e9,
                                            **memory.stage_inputs(stage, *per_stage))
        assert memory.breakdown_at(at, ranks=ranks, activations_bytes=activations, logits=logits,
                                   capacity_bytes=80e9) == breakdown
        assert at[3] == breakdown.total_bytes
        # and what ZeRO's stages mean, written out independently of memory.py's functions
        shard = per_stage[1] if stage == 3 and hybrid else ranks
        weights = params * precision.weight_bytes / (shard if stage >= 3 else 1)
        if stage == 3 and secondary:  # hpZ keeps its secondary partition (weights / 8)
            weights += params * precision.weight_bytes / 8
        grads = params * precision.grad_bytes / (shard if stage >= 2 else 1)
        optimizer = 0.0 if offload and stage >= 1 else params * states / (shard if stage >= 1 else 1)
        overheads = memory.DEFAULT_OVERHEADS
        # the irregular share on what each technique churns: ZeRO-3 the states, offload (ZeRO 1-2)
        # its streamed shard of gradients and weights, recomputation the activations and logits
        streamed = params * (precision.grad_bytes + precision.weight_bytes) / ranks
        churned = (weights + grads + optimizer if stage == 3 else streamed if offload and stage >= 1 else 0.0) \
            + (activations + logits if recompute else 0.0)
        tensors = weights + grads + optimizer + activations + logits
        expected = tensors * (1 + overheads.fragmentation_fraction) \
            + churned * (overheads.irregular_fragmentation_fraction - overheads.fragmentation_fraction) \
            + overheads.context_bytes + (overheads.comm_buffer_bytes if ranks > 1 else 0.0)
        assert at[3] == pytest.approx(expected, rel=1e-12)
