"""docs/iteration-model.md's worked figures are what `dpcost iteration` gives today.

Hand-written figures in the page went stale when constants changed (found by a review on
2026-11-28: the parameter-gather overlap, the hybrid/hpZ memory, the CNN check table); each is
computed here and looked up in the page (line breaks read as spaces)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app

PAGE_TEXT = (Path(__file__).resolve().parents[2] / "docs" / "iteration-model.md").read_text(encoding="utf-8")
PAGE = " ".join(PAGE_TEXT.split())
runner = CliRunner()


def _breakdown(*args: str) -> dict:
    result = runner.invoke(app, ["iteration", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_parameter_gather_overlap_example():
    args = ("--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "4", "--micro-batch", "2", "--accum", "4",
            "--seq-len", "4096", "--zero", "1", "--backend", "nccl")
    plain, overlapped = _breakdown(*args), _breakdown(*args, "--overlap-param-gather")
    assert overlapped["exposed_comm_s"] < plain["exposed_comm_s"] and overlapped["total_s"] < plain["total_s"]
    expected = (f"exposed communication {plain['exposed_comm_s'] * 1e3:.0f} ms → {overlapped['exposed_comm_s'] * 1e3:.1f} ms, "
                f"step {plain['total_s']:.3f} s → {overlapped['total_s']:.3f} s")
    assert expected in PAGE


def _memory_gb(breakdown: dict) -> float:
    return breakdown["memory"]["total_bytes"] / 1e9


def test_the_hybrid_and_hpz_examples():
    args = ("--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "16", "--micro-batch", "2", "--accum", "4",
            "--seq-len", "4096", "--zero", "3")
    full, hybrid, hpz = (_breakdown(*args, "--shard", shard) for shard in ("full", "hybrid", "hpz"))
    assert hybrid["comm_s"] < hpz["comm_s"] < full["comm_s"]
    assert _memory_gb(full) < _memory_gb(hpz) < _memory_gb(hybrid)
    assert (f"communication {full['comm_s']:.2f} s → {hybrid['comm_s']:.2f} s per step, "
            f"memory {_memory_gb(full):.1f} → {_memory_gb(hybrid):.1f} GB per GPU") in PAGE
    assert (f"communication {full['comm_s']:.2f} s → {hpz['comm_s']:.2f} s, memory {_memory_gb(full):.1f} → "
            f"{_memory_gb(hpz):.1f} GB (hybrid: {hybrid['comm_s']:.2f} s, {_memory_gb(hybrid):.1f} GB)") in PAGE


ROW = re.compile(r"^\| (dgx-\S+) \| (\w+) \| (\d+) \| ([\d,]+) \((\d+)\) \| ([\d,]+) \(([−+]\d+) %\) "
                 r"\| ([\d,]+) \((\d+)\) \| ([\d,]+) \(([−+]\d+) %\) \|$", re.MULTILINE)
CNN_ROWS = ROW.findall(PAGE_TEXT)


def test_the_cnn_check_table_is_found():
    assert len(CNN_ROWS) == 6


@pytest.mark.parametrize("row", CNN_ROWS, ids=lambda row: "-".join(row[:3]))
def test_the_cnn_check_table(row):
    system, dtype, gpus = row[:3]
    for published, micro_batch, predicted, percent in (row[3:7], row[7:11]):
        found = _breakdown("--model", "resnet-50", "--cluster", system, "--gpus", gpus, "--micro-batch", micro_batch,
                           "--compute-dtype", dtype)
        per_gpu = found["samples_per_s"] / int(gpus)
        assert f"{per_gpu:,.0f}" == predicted, (row, per_gpu)
        change = round(100 * (per_gpu / float(published.replace(",", "")) - 1))
        assert int(percent.replace("−", "-")) == change, (row, change)


def test_the_optimizer_offload_example():
    """The page quoted 98.7 ms for the CPU step after the DGX H100's host memory bandwidth fell to
    563.2 GB/s (107.7 ms): a docs review found it (2026-11-28)."""
    found = _breakdown("--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "4", "--micro-batch", "2",
                       "--seq-len", "4096", "--zero", "2", "--offload-optimizer")
    plain = _breakdown("--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "4", "--micro-batch", "2",
                       "--seq-len", "4096", "--zero", "2")
    import hardware

    host = hardware.load_system("dgx-h100").host_memory_bandwidth_Bps
    assert (f"the CPU step is {found['optimizer_host_s'] * 1e3:.1f} ms (the host's {host / 1e9:.1f} GB/s shared by its 8 ranks) "
            f"and the copy back {found['optimizer_copy_s'] * 1e3:.1f} ms per step (the GPU step was "
            f"{plain['optimizer_s'] * 1e3:.1f} ms)") in PAGE


def test_the_rtx_4090_and_mi300x_cnn_figures():
    """Hand-written CNN speeds went stale when borrowed rows began to follow HBM bandwidth (review,
    2026-11-28): computed here and looked up in the page."""
    def images_per_s(cluster, dtype, micro):
        found = _breakdown("--model", "resnet-50", "--cluster", cluster, "--gpus", "1", "--micro-batch", str(micro),
                           "--compute-dtype", dtype, "--backend", "ideal")
        return found["samples_per_s"], found["compute_s"]

    fp32, tf32, bf16 = (images_per_s("rtx4090-8x-pcie", dtype, 64)[0] for dtype in ("fp32", "tf32", "bf16"))
    assert fp32 == tf32
    assert f"The RTX 4090 now gives {fp32:,.1f} images/s in FP32 and in TF32, {bf16:,.1f} in bf16" in PAGE
    mi300x = {dtype: images_per_s("mi300x-8x", dtype, 256)[1] for dtype in ("fp32", "tf32")}
    assert mi300x["fp32"] == mi300x["tf32"]
    assert f"now the same in both, {mi300x['fp32'] * 1e3:.1f} ms since Volta's FP32 row" in PAGE


def _ratio_range(low: float, high: float) -> str:
    return f"{low:.2f}–{high:.2f}×"


def test_the_published_interval_figures_are_the_data_files():
    """The page's interval percentiles and ratios went stale when the benchmark rewrote
    costmodel/data/step_residuals.toml (docs review, 2026-11-30): read from the file here."""
    from costmodel.training import residuals
    from dpbase.bundled import load_bundled

    widths = load_bundled(residuals.DATA_FILE)["calibration"]

    def levels(mode: str) -> str:
        tail = 100 * (1 - widths[mode]) / 2
        return f"p{tail:g}–p{100 - tail:g}"

    assert f"{levels('default')} ({levels('measured')} with `--rate` or `--mfu`)" in PAGE
    one, node, nodes = (residuals.ratio_interval(cls, "default")[:2] for cls in residuals.STEP_CLASSES)
    assert (f"{_ratio_range(*one)} for one GPU, {_ratio_range(*node)} inside a node, "
            f"{_ratio_range(*nodes)} across nodes") in PAGE
    node, nodes = (residuals.ratio_interval(cls, "measured")[:2] for cls in ("single-node", "multi-node"))
    assert f"only the scaling error is left: {_ratio_range(*node)} inside a node, {_ratio_range(*nodes)} across nodes" in PAGE


def test_the_sync_each_micro_batch_example():
    """ResNeXt-101 on 8 A100s, micro-batch 64 × 4 (stale until 2026-11-30: 1.1 → 4.6 ms)."""
    args = ("--model", "resnext101-32x4d", "--cluster", "dgx-a100", "--micro-batch", "64", "--accum", "4")
    bf16, bf16_each, fp32, fp32_each = (_breakdown(*args, "--grad-dtype", dtype, *each)
                                        for dtype in ("bf16", "fp32") for each in ((), ("--sync-each-micro-batch",)))
    step = (bf16_each["total_s"] - bf16["total_s"]) * 1e3
    assert (f"the communication per step goes from {bf16['comm_s'] * 1e3:.1f} ms to {bf16_each['comm_s'] * 1e3:.1f} ms, "
            f"the step by {step:.1f} ms; with fp32 gradients from {fp32['comm_s'] * 1e3:.1f} to "
            f"{fp32_each['comm_s'] * 1e3:.1f} ms") in PAGE
