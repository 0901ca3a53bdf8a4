"""Allocator fragmentation by how regular a step's allocations are (issue 17: sourced defaults):
5 % of the tensors with the same shapes every step, 15 % under ZeRO-3, recomputation or
optimizer offload (GMLake, ASPLOS 2024: 15 % average over eight LLMs)."""

from __future__ import annotations

import pytest

import hardware
from costmodel.training import memory
from costmodel.training.oncluster import iteration

ARGS = dict(micro_batch=2, seq_len=4096, nodes=4)


def _share(breakdown) -> float:
    m = breakdown.memory
    tensors = m.weights_bytes + m.gradients_bytes + m.optimizer_bytes + m.activations_bytes + m.logits_bytes
    return m.fragmentation_bytes / tensors


@pytest.mark.parametrize("options, share", [
    (dict(zero_stage=1), memory.FRAGMENTATION_FRACTION),
    (dict(zero_stage=2), memory.FRAGMENTATION_FRACTION),
    (dict(zero_stage=3), memory.IRREGULAR_FRAGMENTATION_FRACTION),
    (dict(zero_stage=1, recompute=True), memory.IRREGULAR_FRAGMENTATION_FRACTION),
    (dict(zero_stage=2, offload_optimizer=True), memory.IRREGULAR_FRAGMENTATION_FRACTION),
])
def test_the_share_follows_the_techniques(options, share):
    assert _share(iteration("llama2-7b", "dgx-h100", **ARGS, **options)) == pytest.approx(share)


def test_the_sourced_values():
    assert (memory.FRAGMENTATION_FRACTION, memory.IRREGULAR_FRAGMENTATION_FRACTION) == (0.05, 0.15)
    assert memory.irregular_allocations(3) and not memory.irregular_allocations(0, offload=True)
    assert list(memory.irregular_allocations(__import__("numpy").array([0, 1, 2, 3]))) == [False, False, False, True]


@pytest.mark.parametrize("options", [dict(), dict(shard="hybrid"), dict(shard="hpz"), dict(offload_optimizer=True),
                                     dict(recompute=True)])
def test_the_explained_parts_add_up_to_every_rows_memory(options):
    """The explanation's memory parts (explain.memory_parts) are the sweep's memory, part by part,
    for every ZeRO stage and variant — the same model_states and fragmentation share."""
    from dataclasses import replace

    import numpy as np

    from costmodel.planner import grid
    from costmodel.planner.explain import memory_parts
    from costmodel.planner.recommend import build_space, training_setting
    from costmodel.training.workloads import load_model

    system = hardware.load_system("dgx-h100")
    setting = training_setting(load_model("llama2-13b"), system, seq_len=4096, compute_dtype="bf16", mfu=None,
                               optimizer="adamw", jitter_cv=0.0, backend="ideal",
                               recompute=options.pop("recompute", False))
    setting = replace(setting, **options)
    space = build_space(system, nodes=2, global_batch=64, min_gpus=1, max_gpus=16, algorithms=("ring",),
                        bucket_bytes=(25 * 2**20,), grad_dtypes=("bf16",))
    sweep = grid.sweep(setting, system, space)
    checked = 0
    for z in range(len(space.zero_stages)):
        index = (0, z, 0, 0, int(np.argmax(space.gpus)))
        parts = memory_parts(sweep, setting, index)
        assert sum(parts.values()) == pytest.approx(float(sweep.memory_bytes[index]), rel=1e-9), (z, options)
        checked += 1
    assert checked == 4
