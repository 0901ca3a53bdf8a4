"""The gradient's copies into the sync mode's communication buffers and back
(syncmodes.buffer_copy_seconds): PyTorch DDP copies every gradient into its bucket and back
(reducer.cpp, gradient_as_bucket_view=False by default) and NVIDIA's BERT into one flat buffer and
back, on the compute stream; a per-tensor all-reduce and FSDP reduce in place, and Horovod copies
on its own stream (not counted).
Four passes over the gradient at the GPU's HBM bandwidth, on the compute stream: a sourced term,
not fitted. The effect tests run on the real comm model, as the other loss terms'."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import costmodel
import hardware
from cli import app
from costmodel.training import syncmodes
from costmodel.training.losses import StepLosses


def _step(**fields):
    return costmodel.iteration("bert-large", "dgx-1", micro_batch=8, **fields)


@pytest.mark.parametrize("sync", ["ddp", "flat"])
def test_a_buffered_mode_pays_four_passes_of_its_gradient(sync):
    b = _step(sync=sync)
    gpu = hardware.load_system("dgx-1").gpu
    grad_bytes = b.params * {"fp16": 2, "bf16": 2, "fp32": 4}[b.grad_dtype]
    assert b.buffer_copy_s == pytest.approx(4 * grad_bytes / gpu.hbm_bandwidth_Bps, rel=1e-12)
    off = _step(sync=sync, losses=StepLosses(buffer_copies=False))
    assert off.buffer_copy_s == 0.0
    # the copies add to the step, serially: nothing hides them
    assert b.total_s - off.total_s == pytest.approx(b.buffer_copy_s, rel=1e-6)


@pytest.mark.parametrize("sync", ["per-tensor", "fsdp", "horovod"])
def test_an_in_place_mode_copies_nothing_on_the_compute_stream(sync):
    """Horovod copies fused tensors on its own stream, beside backward, and a tensor reduced alone
    not at all (horovod/common/ops: MemcpyInFusionBuffer on the op's stream; the fusion copies
    only when a response holds more than one tensor): charged serially, VGG-16's 411 MB fc6 was
    (review, 2026-11-30)."""
    assert _step(sync=sync).buffer_copy_s == 0.0


def test_one_rank_and_parameter_servers_copy_nothing():
    assert costmodel.iteration("bert-large", "dgx-1", gpus_per_node=1, micro_batch=8).buffer_copy_s == 0.0
    assert costmodel.iteration("gpt2", "dgx-h100", nodes=2, micro_batch=8, asynchronous=True).buffer_copy_s == 0.0


def test_zero_copies_the_whole_gradient_in_and_its_shard_out_on_every_synchronisation():
    gpu = hardware.load_system("dgx-h100").gpu
    for stage, syncs in ((1, 1), (2, 4)):  # ZeRO-2 reduce-scatters on every micro-batch
        b = costmodel.iteration("gpt2", "dgx-h100", nodes=2, micro_batch=4, accumulation_steps=4, zero_stage=stage)
        grad_bytes = b.params * 2
        assert b.buffer_copy_s == pytest.approx(syncs * (2 + 2 / 16) * grad_bytes / gpu.hbm_bandwidth_Bps, rel=1e-12)


def test_the_function_is_elementwise_and_the_same_rule_per_mode():
    import numpy as np

    out = syncmodes.buffer_copy_seconds(*syncmodes.buffer_copy_passes("ddp"), np.array([1e9, 2e9]), 2e12, np.array([1, 8]))
    assert out.tolist() == [0.0, 0.004]
    assert set(syncmodes.BUFFER_COPY_PASSES) == set(syncmodes.SYNC_MODES)


def test_the_breakdown_shows_it_and_the_option_turns_it_off():
    base = ["iteration", "--model", "bert-large", "--cluster", "dgx-1", "--micro-batch", "8"]
    shown = CliRunner().invoke(app, base).output
    assert "buffer copies" in shown and "(the gradient into the ddp buffers and back, in HBM)" in shown
    off = CliRunner().invoke(app, [*base, "--no-buffer-copies"]).output
    assert "buffer copies" not in off
    import json

    data = json.loads(CliRunner().invoke(app, [*base, "--json"]).output)
    assert data["buffer_copy_s"] > 0


def test_a_plan_row_carries_the_same_copies_as_iteration():
    plan = costmodel.plan("gpt2", "dgx-h100", nodes=2, global_batch=256)
    best = plan.best
    b = costmodel.iteration("gpt2", "dgx-h100", nodes=best.nodes, micro_batch=best.micro_batch,
                            accumulation_steps=best.accumulation_steps, zero_stage=best.zero_stage,
                            grad_dtype=best.grad_dtype, bucket_bytes=best.bucket_bytes)
    assert b.buffer_copy_s > 0 and best.total_s == pytest.approx(b.total_s, rel=1e-12)


def test_a_bad_switch_is_refused():
    from dpbase.errors import InputError

    with pytest.raises(InputError, match="^buffer_copies: got 'no'"):
        _step(losses=StepLosses(buffer_copies="no"))


def test_the_option_says_so_where_there_is_nothing_to_drop():
    base = ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--nodes", "2", "--micro-batch", "8",
            "--no-buffer-copies"]
    for extra, why in ((["--sync", "per-tensor"], "--sync per-tensor"), (["--sync", "horovod"], "--sync horovod"),
                       (["--async"], "parameter servers")):
        shown = CliRunner().invoke(app, [*base, *extra]).output
        assert ("--no-buffer-copies changes nothing here: this step copies no gradient into buffers on the compute "
                f"stream ({why})") in shown
    assert "changes nothing" not in CliRunner().invoke(app, base).output


def test_zero_offload_copies_the_gradient_in_but_sends_the_reduced_shard_to_the_host():
    """With the optimizer on the host, DeepSpeed sends the reduced shard to the CPU (the offload
    term's transfer), so the copy back on the GPU was counted twice (review, 2026-11-30)."""
    gpu = hardware.load_system("dgx-h100").gpu
    args = dict(nodes=2, micro_batch=2, seq_len=4096, zero_stage=2)
    plain = costmodel.iteration("llama2-7b", "dgx-h100", **args)
    offloaded = costmodel.iteration("llama2-7b", "dgx-h100", offload_optimizer=True, **args)
    grad_bytes = plain.params * 2
    assert plain.buffer_copy_s == pytest.approx((2 + 2 / 16) * grad_bytes / gpu.hbm_bandwidth_Bps, rel=1e-12)
    assert offloaded.buffer_copy_s == pytest.approx(2 * grad_bytes / gpu.hbm_bandwidth_Bps, rel=1e-12)
    found = costmodel.plan("llama2-7b", "dgx-h100", nodes=2, global_batch=64, seq_len=4096, offload_optimizer=True)
    best = found.best
    again = costmodel.iteration("llama2-7b", "dgx-h100", nodes=best.nodes, micro_batch=best.micro_batch,
                                accumulation_steps=best.accumulation_steps, zero_stage=best.zero_stage,
                                grad_dtype=best.grad_dtype, bucket_bytes=best.bucket_bytes, seq_len=4096,
                                offload_optimizer=True)
    assert best.total_s == pytest.approx(again.total_s, rel=1e-12)
