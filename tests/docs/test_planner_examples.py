"""docs/planner.md's worked examples are what the planner and `iteration` give today.

Nothing checked them until 2026-11-28, when they were found stale by a constant's change; the
step times here are computed and looked up in the page (line breaks read as spaces), and the
claims the page makes about them are asserted."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cli import app
from costmodel.planner.recommend import plan
from costmodel.planner.text import step_time

PAGE = " ".join((Path(__file__).resolve().parents[2] / "docs" / "planner.md").read_text(encoding="utf-8").split())
runner = CliRunner()


def test_the_sync_preset_examples():
    fsdp, ddp = (plan("llama2-13b", "dgx-h100", nodes=2, global_batch=64, seq_len=4096, sync=sync)
                 for sync in ("fsdp", "ddp"))
    assert fsdp.best.total_s < ddp.best.total_s and fsdp.best.zero_stage == 2 and ddp.best.zero_stage == 3
    assert f"recommends `SHARD_GRAD_OP` at {step_time(fsdp.best.total_s)} a step" in PAGE
    assert f"recommends ZeRO-3 in 400 MiB buckets at {step_time(ddp.best.total_s)}" in PAGE
    zero2 = min(row.total_s for row in ddp.candidates if row.zero_stage == 2)
    assert zero2 > 1.02 * ddp.best.total_s  # outside the tie band
    assert f"{step_time(zero2)} at best, {100 * (zero2 / ddp.best.total_s - 1):.1f} % slower" in PAGE
    steps = {sync: plan("gpt2", "dgx-h100", nodes=4, global_batch=256, sync=sync).best
             for sync in ("ddp", "horovod", "flat", "per-tensor")}
    for sync, best in steps.items():
        assert f"{step_time(best.total_s)} (`{sync}`" in PAGE, sync
    assert steps["per-tensor"].gpus == 32 and max(s.total_s for s in steps.values()) == steps["per-tensor"].total_s
    held = plan("gpt2", "dgx-h100", nodes=4, global_batch=256, sync="per-tensor", max_gpus=16, explain=False,
                top=400)
    assert held.best.algorithm == "auto" and held.best.gpus == 16
    page = " ".join(PAGE.split())
    assert f"Held to 16 GPUs, `per-tensor` is {step_time(held.best.total_s)} (`auto`)" in page
    # NVLS tree on two nodes (was refused before 2026-11-28)
    in_network = min(row.total_s for row in held.candidates if row.algorithm == "in-network" and row.gpus == 16)
    assert f"the 16-GPU plan with NCCL's in-network all-reduce ({step_time(in_network)})" in page
    exposed = steps["per-tensor"].exposed_comm_s / steps["per-tensor"].total_s
    assert f"leave it {100 * exposed:.1f} % exposed communication" in page


def test_the_tie_band_example_is_the_readme_plan():
    readme = plan("llama2-7b", "dgx-h100", nodes=4, global_batch=512, seq_len=4096)
    low, high = readme.findings["step_interval_s"]
    assert readme.findings["tie_band"] == 0.02 and readme.findings["tie_band_source"] == "floor"
    expected = f"interval {step_time(low).removesuffix(' s')}–{step_time(high)} on {step_time(readme.best.total_s)}"
    assert expected in PAGE


def test_the_fsdp_and_deepspeed_schedules_example():
    def step(zero: int, *sync: str) -> str:
        result = runner.invoke(app, ["iteration", "--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "4",
                                     "--micro-batch", "1", "--accum", "16", "--seq-len", "4096",
                                     "--zero", str(zero), *sync, "--json"])
        assert result.exit_code == 0, result.output
        return step_time(json.loads(result.stdout)["total_s"])

    for zero in (3, 2):
        buckets, units = step(zero, "--sync", "ddp", "--bucket", "400MiB"), step(zero, "--sync", "fsdp")
        assert f"ZeRO-{zero}: {buckets} in 400 MiB buckets, {units} per unit" in PAGE or \
            f"ZeRO-{zero}: {buckets} and {units}" in PAGE, (zero, buckets, units)


def test_the_deadline_tie_band_and_sweep_size_examples():
    """The deadline example (issue's 1 GPU for 221 days), the communication-bound ties and the
    sweep size of a huge global batch, as docs/planner.md quotes them."""
    common = dict(nodes=16, global_batch=1024, objective="gpu-hours", tokens=300e9)
    slow, bounded = plan("1.3B", "dgx-a100", **common), plan("1.3B", "dgx-a100", deadline_hours=14 * 24, **common)
    assert slow.best.gpus == 1 and f"1 GPU, for {slow.best.hours_to_train / 24:.0f} days" in PAGE
    assert bounded.best.gpus == 16 and bounded.best.hours_to_train <= 14 * 24
    extra = bounded.best.gpu_hours / slow.best.gpu_hours - 1
    assert f"chooses {bounded.best.gpus} GPUs, {bounded.best.hours_to_train:.0f} hours, {100 * extra:.1f} % more GPU-hours" in PAGE
    vit = plan("vit-l-16", "dgx-1", nodes=8, global_batch=64)  # communication-bound: ties from scenarios
    assert vit.findings["tie_band_source"] == "scenarios" and vit.tie_band == 0.02
    assert vit.best.gpus == 64 and f"now 64 ({1e3 * vit.best.total_s:.2f} ms with today's compute model)" in PAGE
    swept = {backend: plan("gpt2", "dgx-h100", nodes=1, global_batch=134217728, backend=backend).configurations
             for backend in ("auto", "ideal")}
    assert f"sweeps {swept['auto']:,} configurations (NCCL backend; {swept['ideal']:,} with `--backend ideal`)" in PAGE


def test_the_recompute_tie_break_and_old_readme_memory_examples():
    """Figures a docs review found stale on 2026-11-30 (mpt-30b 70.34 s / 24.21 s, the 2.7B tie-break
    805.4 / 798.0 ms, the old README plan's 95.5 GB): computed here and looked up in the page."""
    without, with_it = (plan("mpt-30b", "h100-pcie-2x-nvlink-bridge", nodes=8, global_batch=64, recompute=flag).best
                        for flag in (False, True))
    assert (without.zero_stage, without.micro_batch, without.accumulation_steps) == (3, 1, 4)
    assert (with_it.micro_batch, with_it.accumulation_steps) == (4, 1) and with_it.total_s < without.total_s
    assert (f"ZeRO-3 at micro-batch 1 × 4 without it ({step_time(without.total_s)} a step, "
            f"{100 * without.exposed_comm_s / without.total_s:.0f} % of it exposed communication), 4 × 1 with it "
            f"({step_time(with_it.total_s)})") in PAGE
    tied = plan("2.7B", "dgx-h100", nodes=2, global_batch=128)
    rule = tied.findings["tie_break"]
    assert rule["rule"] == "fewer bytes sent per GPU"
    assert (f"recommends a {step_time(tied.best.total_s)} step over the fastest "
            f"{step_time(rule['fastest_step_s'])} one") in PAGE
    old = runner.invoke(app, ["iteration", "--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "4",
                              "--micro-batch", "4", "--accum", "4", "--seq-len", "4096", "--zero", "3", "--json"])
    assert old.exit_code == 0, old.output
    memory = json.loads(old.stdout)["memory"]
    assert memory["total_bytes"] > memory["capacity_bytes"]
    assert (f"(micro-batch 4 × 4 accumulation steps) needs {memory['total_bytes'] / 1e9:.1f} GB of the H100's "
            f"{memory['capacity_bytes'] / 1e9:.1f} GB") in PAGE
