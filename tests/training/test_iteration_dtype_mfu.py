"""MFU by GPU and dtype: fp32/tf32 steps carry the 16-bit default over, not copy it."""

from __future__ import annotations

import pytest

import hardware
from costmodel.training import iteration
from costmodel.training.workloads import load_model

BERT = load_model("bert-large")


@pytest.mark.parametrize("gpu,dtype,low,high", [("v100-sxm2", "fp32", 0.5, 0.8), ("a100-sxm4-80gb", "tf32", 0.4, 0.6)])
def test_wide_dtypes_run_a_larger_share_of_their_lower_peak(gpu, dtype, low, high):
    profile = hardware.load_gpu(gpu)
    rate16, _ = iteration.mfu(profile, None, BERT, "fp16")
    rate, source = iteration.mfu(profile, None, BERT, dtype)
    assert low < rate < high and rate > rate16 and "carried to" in source
    # ... yet the wide step is slower per FLOP than the 16-bit one.
    assert rate * profile.peak_flops[dtype] < rate16 * profile.peak_flops["fp16"]


def test_sixteen_bit_cnn_and_user_values_are_untouched():
    profile = hardware.load_gpu("v100-sxm2")
    assert iteration.mfu(profile, None, BERT, "fp16")[0] == profile.default_mfu
    assert iteration.mfu(profile, 0.7, BERT, "fp32") == (0.7, "given by the user")
    assert "carried" not in iteration.mfu(profile, None, load_model("resnet-50"), "fp32")[1]


def test_a_gpu_without_tensor_cores_keeps_its_default():
    k80 = hardware.load_gpu("k80")
    assert iteration.mfu(k80, None, BERT, "fp32")[0] == k80.default_mfu
