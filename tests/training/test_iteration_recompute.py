"""Full activation recomputation in the iteration model: memory, compute, what it applies to."""

from __future__ import annotations

import pytest
from iteration_support import SmallGpu, ring_comm

from costmodel.training import memory
from costmodel.training.iteration import TrainingConfig, iteration_breakdown
from costmodel.training.workloads import load_model
from dpbase.errors import NotApplicableError


def test_recompute_keeps_the_layer_inputs_plus_one_layer():
    # Korthikanti et al. 2022 §5: 2·s·b·h bytes per layer (16-bit) with full recomputation,
    # plus the full activations of the layer whose backward runs (34·s·b·h with FlashAttention).
    layers, hidden, seq, batch = 80, 8192, 4096, 2
    got = memory.transformer_activation_bytes(layers, hidden, 64, seq, batch, 2, recompute=True)
    assert got == pytest.approx((2 * layers + 34) * seq * batch * hidden)
    full = memory.transformer_activation_bytes(layers, hidden, 64, seq, batch, 2)
    assert full / got == pytest.approx(34 * layers / (2 * layers + 34))
    fp32 = memory.transformer_activation_bytes(layers, hidden, 64, seq, batch, 4, recompute=True)
    assert fp32 == pytest.approx(2 * got)


def _run(model="gpt2-xl", **config):
    return iteration_breakdown(load_model(model), SmallGpu(), ring_comm(8), 8,
                               TrainingConfig(micro_batch=4, **config))


def test_recompute_adds_one_forward_and_cuts_activation_memory():
    plain, again = _run(), _run(recompute=True)
    assert again.recompute and not plain.recompute
    assert again.forward_s == pytest.approx(plain.forward_s)
    assert again.backward_s == pytest.approx(1.5 * plain.backward_s)
    assert again.compute_s == pytest.approx(4 / 3 * plain.compute_s)
    assert again.memory.activations_bytes < plain.memory.activations_bytes / 5
    assert again.memory.weights_bytes == plain.memory.weights_bytes
    assert again.total_s > plain.total_s


def test_a_longer_backward_hides_more_communication():
    plain, again = _run(bucket_bytes=4e6), _run(bucket_bytes=4e6, recompute=True)
    assert again.comm_s == pytest.approx(plain.comm_s)
    assert again.exposed_comm_s <= plain.exposed_comm_s


def test_recompute_is_not_modelled_for_cnns():
    with pytest.raises(NotApplicableError, match="recompute"):
        _run(model="resnet-50", recompute=True)
    assert not _run(model="resnet-50").recompute
