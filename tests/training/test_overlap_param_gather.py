"""ZeRO-1/2 with the parameter all-gather overlapped with the next forward (Megatron-LM's
distributed optimizer, ``--overlap-param-gather``) in iteration and plan (issue 17)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import hardware
from cli import app
from costmodel.planner.recommend import plan
from costmodel.training import syncmodes
from costmodel.training.iteration import TrainingConfig, iteration_breakdown
from costmodel.training.memory import precision_for
from costmodel.training.oncluster import iteration
from costmodel.training.workloads import load_model
from dpbase.errors import InputError

runner = CliRunner()
MIB = 2**20
RATE_Bps = 1e12  # a toy comm model: every collective moves its size at 1 TB/s, no latency


def _toy(primitive, size):
    return size / RATE_Bps


def _step(zero, overlapped, micro_batch=8):
    gpu = hardware.load_system("dgx-h100").gpu
    config = TrainingConfig(micro_batch=micro_batch, zero_stage=zero, overlap_param_gather=overlapped)
    return iteration_breakdown(load_model("gpt2-xl"), gpu, _toy, 16, config)


@pytest.mark.parametrize("zero", [1, 2])
def test_only_the_buckets_forward_needs_first_outlast_a_long_forward(zero):
    """At 1 TB/s the gather of 25 MiB buckets (25 µs) is far faster than the forward needs them,
    so of the whole gather only the buckets holding the input embedding (5.2 % of GPT-2 XL's
    weights: forward needs them first, so they cannot be prefetched behind it; in reversed time,
    ready only as the phase ends) are exposed; the collective time itself is unchanged."""
    off, on = _step(zero, False), _step(zero, True)
    workload = load_model("gpt2-xl")
    precision = precision_for("bf16")
    grads = workload.params * precision.grad_bytes
    # DDP's buckets of whole tensors (syncmodes.call_layout): the first, the middle ones at their mean, the last
    layout = syncmodes.call_layout(syncmodes.sync_setup("ddp", workload, grads), workload, grads)
    sizes = [layout.first_bytes] + [layout.bucket_bytes] * int(layout.full_count) + [layout.last_bytes]
    weights_per_grad = precision.weight_bytes / precision.grad_bytes
    producing, done, late = grads * (1 - workload.late_fraction), 0.0, 0.0
    for size in sizes:
        done += size
        if done >= producing:  # ready only when the phase ends
            late += size
    whole = grads * weights_per_grad / RATE_Bps
    assert on.comm_s == pytest.approx(off.comm_s)
    assert off.exposed_comm_s - on.exposed_comm_s == pytest.approx(whole - late * weights_per_grad / RATE_Bps,
                                                                  rel=1e-9)
    assert on.total_s < off.total_s and on.overlap_param_gather and not off.overlap_param_gather


def test_a_gather_slower_than_the_forward_stays_partly_exposed():
    """A tiny micro-batch's forward hides less of the gather than a large one's."""
    small = _step(1, False, micro_batch=1), _step(1, True, micro_batch=1)
    assert 0 < small[1].exposed_comm_s < small[0].exposed_comm_s


def test_on_the_real_comm_model_the_zero1_gather_leaves_the_critical_path():
    args = dict(micro_batch=2, seq_len=4096, accumulation_steps=4, zero_stage=1, nodes=4)
    off = iteration("llama2-7b", "dgx-h100", **args)
    on = iteration("llama2-7b", "dgx-h100", overlap_param_gather=True, **args)
    assert on.comm_s == pytest.approx(off.comm_s)
    assert on.exposed_comm_s < 0.1 * off.exposed_comm_s and on.total_s < off.total_s


@pytest.mark.parametrize("zero", [0, 3])
def test_refused_where_there_is_no_gather_after_the_optimizer(zero):
    with pytest.raises(InputError, match="overlap_param_gather"):
        iteration("gpt2", "dgx-h100", micro_batch=1, zero_stage=zero, overlap_param_gather=True)
    bad = runner.invoke(app, ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "1",
                              "--zero", str(zero), "--overlap-param-gather"])
    assert bad.exit_code == 2 and "overlap_param_gather" in bad.output


def test_plan_sweeps_it_for_its_zero12_rows_and_matches_iteration():
    system = hardware.load_system("dgx-h100")
    args = dict(nodes=4, global_batch=256, seq_len=4096, memory_reserve_fraction=0.0)
    on = plan("llama2-7b", system, overlap_param_gather=True, top=200, **args)
    rows = [c for c in on.candidates if c.zero_stage in (1, 2)]
    assert rows and all(c.overlap_param_gather for c in rows)
    assert not any(c.overlap_param_gather for c in on.candidates if c.zero_stage in (0, 3))
    row = rows[0]
    alone = iteration("llama2-7b", system, micro_batch=row.micro_batch, seq_len=4096,
                      accumulation_steps=row.accumulation_steps, zero_stage=row.zero_stage,
                      nodes=row.nodes, algorithm=row.algorithm, bucket_bytes=row.bucket_bytes,
                      grad_dtype=row.grad_dtype, overlap_param_gather=True)
    assert row.total_s == pytest.approx(alone.total_s, rel=1e-3)


def test_cli_plan_and_iteration_report_it():
    out = runner.invoke(app, ["iteration", "--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "4",
                              "--micro-batch", "2", "--seq-len", "4096", "--zero", "1",
                              "--overlap-param-gather", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["overlap_param_gather"] is True
    text = runner.invoke(app, ["iteration", "--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "4",
                               "--micro-batch", "2", "--seq-len", "4096", "--zero", "1", "--overlap-param-gather"])
    assert "parameter all-gather overlapped with the next forward" in text.output
    planned = runner.invoke(app, ["plan", "--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "2",
                                  "--global-batch", "64", "--seq-len", "4096", "--overlap-param-gather"])
    assert planned.exit_code == 0, planned.output


def test_the_torch_snippet_says_how_to_run_it():
    from costmodel.planner import emit

    rows = plan("llama2-7b", hardware.load_system("dgx-h100"), nodes=4, global_batch=256, seq_len=4096,
                overlap_param_gather=True, explain=False, top=50).candidates
    row = next(c for c in rows if c.overlap_param_gather)
    assert "--overlap-param-gather" in emit.render(row, "torch")


def _cli_json(*args: str) -> dict:
    out = runner.invoke(app, ["iteration", *args, "--json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def test_no_overlap_keeps_only_the_gather_the_user_overlaps():
    """--no-overlap runs the gradients' collectives after backward. An explicit
    --overlap-param-gather still hides the gather behind the next forward, so compute runs beside
    it and its slowdown can be set (it was refused, yet charged); FSDP SHARD_GRAD_OP's own forward
    gather is exposed under --no-overlap, as FULL_SHARD's is (it stayed hidden)."""
    base = ["--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "4", "--micro-batch", "2", "--accum", "4",
            "--seq-len", "4096", "--zero", "1", "--no-overlap", "--overlap-param-gather"]
    charged, free = _cli_json(*base), _cli_json(*base, "--overlap-slowdown", "0")
    assert charged["hidden_comm_s"] > 0 and charged["interference_s"] > 0 and free["interference_s"] == 0
    assert charged["total_s"] - free["total_s"] == pytest.approx(charged["interference_s"], rel=1e-9)
    refused = runner.invoke(app, ["iteration", *[a for a in base if a != "--overlap-param-gather"],
                                  "--overlap-slowdown", "0"])
    assert refused.exit_code == 2 and "left out with --no-overlap" in refused.output
    fsdp = ["--model", "gpt2-xl", "--cluster", "dgx-a100", "--nodes", "2", "--micro-batch", "4", "--sync", "fsdp"]
    for zero in ("2", "3"):
        serial = _cli_json(*fsdp, "--zero", zero, "--no-overlap")
        assert serial["hidden_comm_s"] == 0 and serial["interference_s"] == 0 and not serial["overlap_param_gather"]
        assert _cli_json(*fsdp, "--zero", zero)["hidden_comm_s"] > 0
