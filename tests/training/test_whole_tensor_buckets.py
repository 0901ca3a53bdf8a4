"""DDP's buckets and Horovod's fusion buffers hold whole tensors (costmodel.training.tensors).

DDP closes a bucket once it holds its cap or more (PyTorch reducer.cpp,
compute_bucket_assignment_by_size); Horovod fuses while the buffer holds the tensors and reduces
a larger one alone. A transformer's tensors follow from its shape; a CNN's buckets stay cut by
bytes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from costmodel.training import overlap, syncmodes
from costmodel.training.memory import precision_for
from costmodel.training.oncluster import iteration
from costmodel.training.tensors import backward_tensors
from costmodel.training.workloads import load_model, model_names

MIB = 2**20


def test_ddp_closes_a_bucket_past_its_cap_and_horovod_before_it():
    tensors = [3.0, 3.0, 3.0, 12.0, 1.0, 1.0]
    # DDP: the first cap 2, then 5: [3] [3+3] [12] [1+1]
    assert overlap.packed_sizes(tensors, 5.0, 2.0) == (3.0, 6.0, 12.0, 2.0)
    assert overlap.packed_sizes([2.0, 4.0, 1.0], 5.0, 1.0) == (2.0, 5.0)  # [2] [4+1]: closed at its cap
    # Horovod (first buffer = buffer = 5): [3] [3] [3] [12] [1+1]: no fusion beyond the buffer
    assert overlap.packed_sizes(tensors, 5.0, 5.0, within=True) == (3.0, 3.0, 3.0, 12.0, 2.0)
    assert overlap.packed_sizes([1.0] * 10, 5.0, 5.0, within=True) == (5.0, 5.0)


@given(st.lists(st.floats(1.0, 1e9), min_size=1, max_size=60), st.floats(1.0, 2e9), st.floats(1.0, 2e9),
       st.booleans())
def test_packing_keeps_every_byte_and_each_rule(tensors, bucket, first, within):
    sizes = overlap.packed_sizes(tensors, bucket, first, within=within)
    assert sum(sizes) == pytest.approx(sum(tensors), rel=1e-12)
    assert len(sizes) <= len(tensors)
    caps = [first] + [bucket] * len(sizes)
    for i, size in enumerate(sizes[:-1]):
        if not within:  # every bucket but the last reached its cap
            assert size >= caps[i] * (1 - 1e-12)
        else:  # a buffer over its size holds one tensor
            assert size <= caps[i] * (1 + 1e-12) or any(size == pytest.approx(t, rel=1e-12) for t in tensors)


def test_every_transformer_presets_tensors_are_its_parameters():
    for name in model_names():
        workload = load_model(name)
        tensors = backward_tensors(workload)
        if workload.kind == "cnn":
            assert tensors == ()
            continue
        assert sum(tensors) == pytest.approx(workload.params, rel=1e-12), name
        assert min(tensors) > 0, name


def test_llama2_7b_is_its_matrices():
    """Untied head first (32,000 × 4096), per layer gate/up/down (3 × 45.1 M) then o, v, k, q
    (16.8 M each), the input embedding last."""
    workload = load_model("llama2-7b")
    tensors = backward_tensors(workload)
    assert len(tensors) == 1 + 7 * 32 + 1
    assert tensors[0] == tensors[-1] == 32_000 * 4096
    assert tensors[4:8] == (4096**2,) * 4
    assert tensors[1] == pytest.approx((workload.params - 2 * 32_000 * 4096) / 32 / 3 - 4096**2 * 4 / 3, rel=1e-12)


def test_llama2_7b_25mib_buckets_are_226_calls_not_516():
    """Every tensor of llama2-7b holds at least 33.5 MB of bf16 gradient, above DDP's 25 MiB: each
    is one bucket (the README example read "516 buckets of 25 MiB")."""
    b = iteration("llama2-7b", "dgx-h100", nodes=4, micro_batch=1, seq_len=4096, accumulation_steps=4, zero_stage=1)
    assert b.bucket_count == 226 and b.bucket_bytes == 25 * MIB
    grad = b.params * precision_for("bf16").grad_bytes
    setup = syncmodes.sync_setup("ddp", load_model("llama2-7b"), grad)
    layout = syncmodes.call_layout(setup, load_model("llama2-7b"), grad)
    assert layout.count == 226
    assert float(layout.first_bytes) == 32_000 * 4096 * 2  # the head, alone
    total = layout.first_bytes + layout.full_count * layout.bucket_bytes + layout.last_bytes
    assert total == pytest.approx(grad, rel=1e-12)


def test_a_smaller_bucket_than_a_tensor_no_longer_multiplies_the_calls():
    """--bucket 1KB cut gpt2's gradient into 247,833 calls; DDP makes one per tensor at most."""
    b = iteration("gpt2", "dgx-h100", micro_batch=4, bucket_bytes=1000)
    assert b.bucket_count == len(backward_tensors(load_model("gpt2"))) == 49
    assert iteration("gpt2", "dgx-h100", micro_batch=4).bucket_count == 7  # ~27 MB, and the 77 MB embedding


def test_a_cnn_keeps_its_byte_cut_and_the_modes_their_own_size():
    """ResNet-50's tensors (at most 9.4 MB in fp32) are not known one by one: its 25 MiB buckets
    are the byte cut; flat, per-tensor and FSDP calls are their own size."""
    resnet = load_model("resnet-50")
    grad = resnet.params * 4.0
    setup = syncmodes.sync_setup("ddp", resnet, grad)
    assert syncmodes.call_layout(setup, resnet, grad) == overlap.bucket_layout(grad, 25 * MIB, overlap.DDP_FIRST_BUCKET_BYTES)
    gpt2 = load_model("gpt2")
    grad = gpt2.params * 2.0
    for mode in ("flat", "per-tensor", "fsdp"):
        own = syncmodes.sync_setup(mode, gpt2, grad)
        assert syncmodes.call_layout(own, gpt2, grad) == overlap.bucket_layout(grad, own.bucket_bytes,
                                                                               own.first_bucket_bytes), mode


def test_the_planner_cuts_as_iteration_does():
    """Every DDP and Horovod row of a plan equals iteration's step with the same bucket (the rule
    is syncmodes.call_layout in both); gpt2-xl's tensors (10-41 MB in fp32) straddle the swept
    buckets."""
    from costmodel.planner.recommend import plan

    for sync in ("ddp", "horovod"):
        result = plan("gpt2-xl", "dgx-h100", nodes=2, global_batch=64, sync=sync, top=6,
                      tie_band=0.0, explain=False)
        for row in result.candidates:
            alone = iteration("gpt2-xl", "dgx-h100", nodes=row.nodes, gpus_per_node=row.gpus_per_node,
                              micro_batch=row.micro_batch, accumulation_steps=row.accumulation_steps,
                              algorithm=row.algorithm, bucket_bytes=row.bucket_bytes, grad_dtype=row.grad_dtype,
                              zero_stage=row.zero_stage, sync=row.sync, recompute=row.recompute)
            assert row.total_s == pytest.approx(alone.total_s, rel=1e-9), (sync, row)
