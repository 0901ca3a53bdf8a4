"""The GEMM roofline: a micro-batch too small to feed the tensor cores runs below the MFU (issue 15)."""

from __future__ import annotations

import numpy as np
import pytest

import hardware
from costmodel.training.gemm import intensity_flop_per_byte, matmul_efficiency
from costmodel.training.oncluster import iteration


def test_the_roofline_arithmetic():
    m, h = 128, 1024  # 8*M*h^2 / (2*(5*M*h + 4*h^2)) FLOP/B in bf16
    assert intensity_flop_per_byte(m, h, 2) == pytest.approx(8 * m * h * h / (2 * (5 * m * h + 4 * h * h)))
    ridge = 989e12 / 3.35e12  # H100 SXM bf16 dense / HBM3
    assert matmul_efficiency(tokens=m, hidden=h, peak_flops=989e12, hbm_Bps=3.35e12, element_bytes=2) == \
        pytest.approx(intensity_flop_per_byte(m, h, 2) / ridge)
    assert matmul_efficiency(tokens=8192, hidden=8192, peak_flops=989e12, hbm_Bps=3.35e12, element_bytes=2) == 1.0


def test_floats_and_arrays_agree():
    tokens = np.array([64, 128, 512, 4096])
    vector = matmul_efficiency(tokens=tokens, hidden=1024, peak_flops=989e12, hbm_Bps=3.35e12, element_bytes=2)
    for t, v in zip(tokens.tolist(), vector.tolist(), strict=True):
        assert v == pytest.approx(matmul_efficiency(tokens=t, hidden=1024, peak_flops=989e12, hbm_Bps=3.35e12,
                                                    element_bytes=2))


def test_small_micro_batches_cost_more_per_sample_and_say_so():
    small = iteration("bert-large", "dgx-h100", micro_batch=1, seq_len=128)
    large = iteration("bert-large", "dgx-h100", micro_batch=32, seq_len=128)
    assert small.matmul_efficiency < 0.5 and large.matmul_efficiency == 1.0
    assert small.forward_s / 1 > 2 * large.forward_s / 32
    assert "matmul_efficiency" in small.to_dict()


def test_a_users_mfu_is_taken_as_given():
    assert iteration("bert-large", "dgx-h100", micro_batch=1, seq_len=128, mfu=0.3).matmul_efficiency == 1.0


def test_cnns_have_no_transformer_shape():
    assert iteration("resnet-50", "dgx-a100", micro_batch=1).matmul_efficiency == 1.0


def test_the_planner_sweep_uses_the_same_factor():
    from costmodel.planner.recommend import plan

    p = plan("bert-large", hardware.load_system("dgx-h100"), nodes=1, global_batch=64, seq_len=128)
    assert p.best.micro_batch > 1  # micro-batch 1 starves the GPU: not a free tie any more
