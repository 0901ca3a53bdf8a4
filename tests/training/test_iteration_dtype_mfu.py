"""MFU by GPU and dtype: fp32/tf32 steps carry the 16-bit default over, not copy it."""

from __future__ import annotations

from pathlib import Path

import pytest

import hardware
from costmodel.training import iteration
from costmodel.training.workloads import load_model

BERT = load_model("bert-large")


def test_fp32_on_volta_runs_a_larger_share_of_its_lower_peak():
    profile = hardware.load_gpu("v100-sxm2")
    rate16, _ = iteration.mfu(profile, None, BERT, "fp16")
    rate, source = iteration.mfu(profile, None, BERT, "fp32")
    assert 0.5 < rate < 0.8 and rate > rate16 and "carried to" in source
    # ... yet the wide step is slower per FLOP than the 16-bit one.
    assert rate * profile.peak_flops["fp32"] < rate16 * profile.peak_flops["fp16"]


def test_tf32_doubles_the_matmul_seconds_and_scales_the_rest_by_the_counted_ratio():
    """A100's TF32 peak is half its BF16 one: a TF32 FLOP's matmul seconds double, its non-matmul
    seconds are roofline.FULL_PRECISION_TRAFFIC_RATIO times the mixed-precision step's (below the
    2 of the activations' widths: autocast keeps part of its own work at 4 bytes). So TF32 runs
    a larger share of its own peak than BF16 does, and a FLOP still takes longer."""
    from costmodel.training import roofline

    profile = hardware.load_gpu("a100-sxm4-80gb")
    rate16, _ = iteration.mfu(profile, None, BERT, "fp16")
    rate, source = iteration.mfu(profile, None, BERT, "tf32")
    assert "carried to tf32" in source and f"x {roofline.FULL_PRECISION_TRAFFIC_RATIO:.3g} (" in source
    peak16, peak32, ceiling = profile.peak_flops["fp16"], profile.peak_flops["tf32"], roofline.matmul_ceiling(profile)
    matmul16, matmul32 = 1 / (peak16 * ceiling), 1 / (peak32 * ceiling)
    rest16 = 1 / (peak16 * rate16) - matmul16
    assert 1 / (peak32 * rate) == pytest.approx(matmul32 + roofline.FULL_PRECISION_TRAFFIC_RATIO * rest16, rel=1e-12)
    assert rate16 < rate and rate * peak32 < rate16 * peak16


def test_the_ratio_is_the_layer_count():
    """200 / 176: an fp32 layer's non-matmul bytes over autocast's, op by op (the table in
    docs/iteration-model.md); with every value 16-bit the same count gives the widths' 2."""
    from costmodel.training import roofline

    mixed, full, half = (sum(row[i] for row in roofline.LAYER_TRAFFIC_PER_H) for i in (1, 2, 3))
    assert (mixed, full, half) == (176, 200, 100) and full / half == 2
    assert roofline.FULL_PRECISION_TRAFFIC_RATIO == pytest.approx(200 / 176, rel=1e-12)
    # autocast keeps norms and the residual stream at 4 bytes: no op moves fewer bytes than its
    # 16-bit run or more than its fp32 one; the casts are autocast's own (none in either other run)
    for what, m, f, h in roofline.LAYER_TRAFFIC_PER_H:
        if "cast" in what:
            assert f == h == 0 < m, what
        else:
            assert h <= m <= f and f == 2 * h, what
    page = (Path(__file__).resolve().parents[2] / "docs" / "iteration-model.md").read_text(encoding="utf-8")
    for what, m, f, h in roofline.LAYER_TRAFFIC_PER_H:
        assert f"| {what} | {m} | {f} | {h} |" in page


def test_a_gpus_default_from_16_bit_runs_carries_the_activations_widths():
    """A model without a width takes the GPU's one default, from Megatron-LM's and Llama 3's
    16-bit runs: there a 4-byte step moves twice the bytes, so an A100's TF32 keeps BF16's share
    of its own half peak (the counted 1.14 is over autocast's step, the width roofline's)."""
    from dataclasses import replace

    profile = hardware.load_gpu("a100-sxm4-80gb")
    widthless = replace(BERT, hidden_size=0)
    rate16, _ = iteration.mfu(profile, None, widthless, "bf16")
    rate, source = iteration.mfu(profile, None, widthless, "tf32")
    assert rate == pytest.approx(rate16, rel=1e-12) and "x 2 (4-byte activations)" in source


def test_the_full_precision_ratio_is_read_where_the_step_is_timed(monkeypatch):
    """At 2 (every non-matmul byte of mixed precision 2 bytes wide) TF32 on A100 keeps BF16's share
    of its own half peak: both parts of a FLOP's time double."""
    from costmodel.training import roofline

    profile = hardware.load_gpu("a100-sxm4-80gb")
    monkeypatch.setattr(roofline, "FULL_PRECISION_TRAFFIC_RATIO", 2.0)
    rate16, _ = iteration.mfu(profile, None, BERT, "fp16")
    rate, _ = iteration.mfu(profile, None, BERT, "tf32")
    assert rate == pytest.approx(rate16, rel=1e-12)


def test_sixteen_bit_cnn_and_user_values_are_untouched():
    from costmodel.training import roofline

    profile = hardware.load_gpu("v100-sxm2")
    assert iteration.mfu(profile, None, BERT, "fp16") == roofline.rate16(BERT, profile)
    assert iteration.mfu(profile, 0.7, BERT, "fp32") == (0.7, "given by the user")
    assert "carried" not in iteration.mfu(profile, None, load_model("resnet-50"), "fp32")[1]


def test_a_gpu_without_tensor_cores_keeps_its_default():
    k80 = hardware.load_gpu("k80")
    assert iteration.mfu(k80, None, BERT, "fp32")[0] == k80.default_mfu


@pytest.mark.parametrize("gpu", ["h100-sxm", "b200", "mi300x"])
def test_fp8_gains_on_the_matmuls_alone(gpu):
    """fp8 doubles the peak but not the step: its matmuls run at the GEMM ceiling of the fp8 peak
    and the 16-bit step's memory-bound seconds stay (review, 2026-11-29: the 16-bit MFU on the
    fp8 peak ran llama2-7b 1.9x faster; llm-foundry's H100 FP8 and BF16 tables give 1.00-1.35x)."""
    profile = hardware.load_gpu(gpu)
    model = load_model("llama2-7b")
    rate16, _ = iteration.mfu(profile, None, model, "bf16")
    rate8, source = iteration.mfu(profile, None, model, "fp8")
    speedup = rate8 * profile.peak_flops["fp8"] / (rate16 * profile.peak_flops["bf16"])
    # below 2x: the non-matmul seconds stay; llama2-7b 1.45x on H100 (1.48x at the traffic 9.5) (22 published pairs: 1.10-1.51x)
    assert 1.1 < speedup < 1.65 and "carried to fp8" in source
    # the same arithmetic, from the 16-bit step's split into matmul and memory-bound seconds
    from costmodel.training import roofline

    ceiling = roofline.matmul_ceiling(profile)
    per_flop16 = 1 / (profile.peak_flops["bf16"] * rate16)
    matmul16 = 1 / (profile.peak_flops["bf16"] * ceiling)
    per_flop8 = 1 / (profile.peak_flops["fp8"] * ceiling) + (per_flop16 - matmul16)
    assert rate8 == pytest.approx(1 / (profile.peak_flops["fp8"] * per_flop8), rel=1e-12)


def test_fp8_keeps_16_bit_activations():
    """Transformer Engine's fp8 stays inside the GEMMs: an fp8 step keeps what a bf16 step keeps."""
    from costmodel import iteration as run

    common = dict(model="llama2-7b", cluster="dgx-h100", micro_batch=2, seq_len=4096, zero_stage=3)
    bf16, fp8 = run(**common, compute_dtype="bf16"), run(**common, compute_dtype="fp8")
    assert fp8.memory.activations_bytes == bf16.memory.activations_bytes > 0
    assert fp8.memory.logits_bytes == bf16.memory.logits_bytes
    assert 1.1 < bf16.forward_s / fp8.forward_s < 1.5
