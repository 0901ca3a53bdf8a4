"""Memory that does not lie: logits/loss, CUDA context, NCCL buffers, fragmentation, reserve."""

from __future__ import annotations

import pytest

import hardware
from costmodel.planner.recommend import plan
from costmodel.training import memory
from costmodel.training.workloads import load_model
from dpbase.errors import DpcostError, InputError

README = dict(nodes=4, global_batch=512, seq_len=4096)
H100_BYTES = hardware.load_gpu("h100-sxm").memory_bytes  # what CUDA gives the process: 79.19 GiB


def test_the_h100_capacity_the_reserve_tests_use_is_cudas():
    assert H100_BYTES == 81090 * 2**20  # PyTorch's total_memory, 81,090 MiB


def test_logits_and_their_fp32_gradient_are_counted():
    llama = load_model("llama2-7b")
    # 16k tokens x 32k vocab: 2.1 GB per fp32 copy (the figure), two of them + bf16 logits
    got = memory.logits_bytes(llama, 4, 4096, 2)
    assert got == 4 * 4096 * llama.vocab * (2 + 4 + 4)
    assert 4 * 4096 * llama.vocab * 4 == pytest.approx(2.1e9, rel=0.01)
    assert memory.logits_bytes(load_model("resnet-50"), 32, 0, 2) == 0


def test_runtime_overheads_need_more_than_one_rank_for_nccl_buffers():
    assert memory.runtime_bytes(1) == memory.CUDA_CONTEXT_BYTES
    assert memory.runtime_bytes(8) == memory.CUDA_CONTEXT_BYTES + memory.COMM_BUFFER_BYTES
    assert memory.COMM_BUFFER_BYTES == 4 * 2**20 * 32 * 5


def test_readme_plan_keeps_the_reserve_free():
    result = plan("llama2-7b", "dgx-h100", **README)
    reserve = result.memory_reserve_bytes
    assert reserve == pytest.approx(0.05 * H100_BYTES)
    assert all(row.memory_headroom_bytes >= reserve for row in result.candidates)
    # the old recommendation (ZeRO-3, micro-batch 4, 3.6 GB headroom) no longer fits
    assert all(row.micro_batch < 4 for row in result.candidates)


def test_a_bigger_reserve_removes_the_plans_inside_it():
    base = plan("llama2-7b", "dgx-h100", explain=False, top=200, **README)
    tight = plan("llama2-7b", "dgx-h100", explain=False, top=200, memory_reserve=30e9, **README)
    assert tight.feasible_configurations < base.feasible_configurations
    assert all(row.memory_headroom_bytes >= 30e9 for row in tight.candidates)
    assert any(row.memory_headroom_bytes < 30e9 for row in base.candidates)
    share = plan("llama2-7b", "dgx-h100", explain=False, memory_reserve_fraction=30e9 / H100_BYTES, **README)
    assert share.memory_reserve_bytes == pytest.approx(30e9)


def test_a_reserve_nothing_fits_in_says_so():
    with pytest.raises(DpcostError, match="kept free"):
        plan("llama2-7b", "dgx-h100", explain=False, memory_reserve=H100_BYTES - 4e9, **README)
    with pytest.raises(InputError, match="memory_reserve"):
        plan("llama2-7b", "dgx-h100", explain=False, memory_reserve=90e9, **README)


def test_reason_says_what_is_counted_and_what_would_fit():
    result = plan("llama2-7b", "dgx-h100", **README)
    assert "kept free as the reserve" in result.reason
    assert "logits and loss" in result.reason
    nxt = result.findings["next_micro_batch"]
    verdict = "fits" if nxt["fits"] else "does not fit within the reserve"
    assert f"micro-batch {nxt['micro_batch']} would need" in result.reason and verdict in result.reason
    assert nxt["fits"] == (nxt["memory_bytes"] + result.memory_reserve_bytes <= H100_BYTES)


def test_memory_parts_in_the_findings_add_up_to_the_plan_memory():
    result = plan("llama2-7b", "dgx-h100", **README)
    parts = result.findings["memory_parts"]
    assert sum(parts.values()) == pytest.approx(result.best.memory_bytes, rel=1e-9)
