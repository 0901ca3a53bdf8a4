"""Materialised attention scores (issue 15): without a fused attention kernel, and always for
Transformer-XL's relative positions, every layer moves its score matrix through HBM; the step
pays that traffic and the activations hold the scores (costmodel.training.attention)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from typer.testing import CliRunner

import hardware
from cli import app
from costmodel.planner.recommend import plan
from costmodel.training import attention, memory
from costmodel.training.iteration import TrainingConfig, iteration_breakdown
from costmodel.training.oncluster import iteration
from costmodel.training.workloads import load_model

runner = CliRunner()
A100 = hardware.load_system("dgx-a100").gpu


# --- the counted accesses, executed --------------------------------------------------------------
class _Tape:
    """Counts reads and writes of score-sized arrays while an attention chain runs on numpy."""

    def __init__(self, shape):
        self.shape, self.reads, self.writes = shape, 0, 0

    def _scores(self, array) -> bool:  # the scores, or the relative shift's copy with its zero column
        return array.shape[0] == self.shape[0] and array.shape[-1] in (self.shape[-1], self.shape[-1] + 1)

    def read(self, *arrays):
        self.reads += sum(self._scores(a) for a in arrays)
        return arrays

    def write(self, array):
        self.writes += self._scores(array)
        return array


def _standard_chain(q, k, v, mask, keep, tape):
    """softmax(Q·Kᵀ/√d + mask)·V with dropout, forward and backward, as the eager chain runs it
    (each line one kernel); returns the output and dQ for an all-ones output gradient."""
    d = q.shape[-1]
    s = tape.write(q @ k.T)
    s = tape.write(tape.read(s)[0] / np.sqrt(d))
    s = tape.write(tape.read(s)[0] + mask)
    p = tape.read(s)[0]
    p = tape.write(np.exp(p - p.max(-1, keepdims=True)) / np.exp(p - p.max(-1, keepdims=True)).sum(-1, keepdims=True))
    dropped = tape.write(tape.read(p)[0] * keep)
    out = tape.read(dropped)[0] @ v
    grad_out = np.ones_like(out)
    tape.read(dropped)  # dV = Pᵀ·dO
    d_dropped = tape.write(grad_out @ v.T)
    d_p = tape.write(tape.read(d_dropped)[0] * keep)
    p_, dp_ = tape.read(p, d_p)
    d_s = tape.write(p_ * (dp_ - (p_ * dp_).sum(-1, keepdims=True)))  # softmax backward
    d_s = tape.write(tape.read(d_s)[0] / np.sqrt(d))  # the mask's gradient passes through
    tape.read(d_s)  # dQ = dS·K
    tape.read(d_s)  # dK = dSᵀ·Q
    return out, d_s @ k


def _relative_chain(q, k, r, u, w, keep, tape):
    """Transformer-XL's AC + shift(BD), masked, softmax, dropout (as mem_transformer.py), forward
    and backward of the score steps; returns the scores before the mask."""
    ac = tape.write((q + u) @ k.T)
    bd = tape.write((q + w) @ r.T)
    padded = np.concatenate([np.zeros((bd.shape[0], 1)), tape.read(bd)[0]], axis=1)
    shifted = tape.write(padded).reshape(bd.shape[1] + 1, bd.shape[0])[1:].reshape(bd.shape)
    a, b = tape.read(ac, shifted)
    s = tape.write((a + b) / np.sqrt(q.shape[-1]))
    s = tape.write(np.where(np.triu(np.ones_like(tape.read(s)[0]), 1 + s.shape[1] - s.shape[0]) > 0, -1e9, s))
    p = tape.read(s)[0]
    p = tape.write(np.exp(p - p.max(-1, keepdims=True)) / np.exp(p - p.max(-1, keepdims=True)).sum(-1, keepdims=True))
    dropped = tape.write(tape.read(p)[0] * keep)
    tape.read(dropped)  # the output P·V
    tape.read(dropped)  # dV
    d_dropped = tape.write(np.ones_like(dropped))  # dP
    d_p = tape.write(tape.read(d_dropped)[0] * keep)
    p_, dp_ = tape.read(p, d_p)
    d_s = tape.write(p_ * (dp_ - (p_ * dp_).sum(-1, keepdims=True)))
    d_s = tape.write(np.where(s < -1e8, 0.0, tape.read(d_s)[0]))  # masked_fill backward
    tape.read(d_s)  # (AC + BD)·scale backward: one read, two writes
    tape.write(d_s / np.sqrt(q.shape[-1]))
    d_shifted = tape.write(d_s / np.sqrt(q.shape[-1]))
    tape.read(d_shifted)  # the shift's backward: a slice copy
    tape.write(d_shifted)
    tape.read(d_s), tape.read(d_s)  # dAC for dq and dk
    tape.read(d_shifted), tape.read(d_shifted)  # dBD for dq and dR
    return a + b


def test_the_counted_accesses_are_what_the_chains_do():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((6, 4)) for _ in range(3))
    keep = (rng.random((6, 6)) > 0.1) / 0.9
    tape = _Tape((6, 6))
    out, _ = _standard_chain(q, k, v, np.zeros((6, 6)), keep, tape)
    s = q @ k.T / 2.0
    reference = np.exp(s - s.max(-1, keepdims=True))
    assert np.allclose(out, (reference / reference.sum(-1, keepdims=True) * keep) @ v)
    assert tape.reads + tape.writes == attention.accesses_per_element(relative=False, dropout=True) == 21
    forward = sum(f for _, f, _, _ in attention.steps(False, True))
    assert forward == 10 and attention.accesses_per_element(relative=False, dropout=False) == 17

    q, kk = rng.standard_normal((4, 4)), rng.standard_normal((6, 4))  # 4 queries, 2 cached + 4 keys
    r = rng.standard_normal((6, 4))  # relative distances 5 … 0
    tape = _Tape((4, 6))
    scores = _relative_chain(q, kk, r, 0.0, 0.0, np.ones((4, 6)), tape)
    for i in range(4):  # after the shift, query i at key j sees the distance (2 + i) − j
        for j in range(6):
            if j <= 2 + i:
                assert np.isclose(scores[i, j], q[i] @ kk[j] + q[i] @ r[5 - (2 + i - j)])
    assert tape.reads + tape.writes == attention.accesses_per_element(relative=True, dropout=True) == 32
    assert attention.accesses_per_element(relative=True, dropout=False) == 28


# --- the term on the step ------------------------------------------------------------------------
def _step(model, **fields):
    config = TrainingConfig(micro_batch=fields.pop("micro_batch", 8), compute_dtype=fields.pop("dtype", "fp16"),
                            **fields)
    workload = load_model(model) if isinstance(model, str) else model
    return iteration_breakdown(workload, A100, lambda p, s: 0.0, 1, config)


def test_relative_attention_pays_its_scores_whatever_the_flag():
    txl = load_model("transformer-xl-large")
    plain = dataclasses.replace(txl, relative_attention=False)
    relative, fused = _step(txl), _step(plain)
    assert fused.attention_scores_s == 0.0 and fused.flash_attention
    elements = 18 * 8 * 16 * 384 * (384 + 384)  # layers · b · heads · s · (s + memory)
    assert relative.attention_scores_s == pytest.approx(elements * (32 * 2 + 2) / A100.hbm_bandwidth_Bps)
    assert relative.forward_s - fused.forward_s == pytest.approx(relative.attention_scores_s / 3)
    assert relative.backward_s - fused.backward_s == pytest.approx(2 * relative.attention_scores_s / 3)
    assert not relative.flash_attention  # reported as materialised
    assert _step(txl, flash_attention=False).total_s == pytest.approx(relative.total_s)
    # the base model has no attention dropout: 28 accesses, no mask
    base = _step("transformer-xl-base", micro_batch=32)
    assert base.attention_scores_s == pytest.approx(16 * 32 * 8 * 192 * 384 * 28 * 2 / A100.hbm_bandwidth_Bps)


def test_standard_attention_pays_only_without_a_fused_kernel():
    flash = _step("bert-large")
    eager = _step("bert-large", flash_attention=False)
    assert flash.attention_scores_s == 0.0
    elements = 24 * 8 * 16 * 512 * 512
    assert eager.attention_scores_s == pytest.approx(elements * (21 * 2 + 2) / A100.hbm_bandwidth_Bps)
    assert eager.forward_s - flash.forward_s == pytest.approx(eager.attention_scores_s / 3)
    wide = _step("bert-large", flash_attention=False, dtype="fp32")  # 4-byte scores, the same 1-byte mask
    assert wide.attention_scores_s == pytest.approx(elements * (21 * 4 + 2) / A100.hbm_bandwidth_Bps)
    # a user's --mfu is their measured speed: it already holds their attention
    assert _step("bert-large", flash_attention=False, mfu=0.4).attention_scores_s == 0.0
    # recomputation re-runs the forward, scores included
    again = _step("bert-large", flash_attention=False, recompute=True)
    assert again.backward_s - eager.backward_s == pytest.approx(eager.forward_s)


def test_the_scores_take_memory_over_the_cached_keys():
    txl = load_model("transformer-xl-base")
    plain = dataclasses.replace(txl, relative_attention=False, memory_length=0)
    b, s = 16, 192
    scores = memory.activation_bytes(txl, b, s, 2) - memory.activation_bytes(plain, b, s, 2)
    assert scores == pytest.approx(16 * b * 8 * s * (s + 192) * memory.SOFTMAX_OUTPUT_BYTES)  # no dropout: P only
    large = load_model("transformer-xl-large")
    flat = dataclasses.replace(large, relative_attention=False, memory_length=0)
    extra = memory.activation_bytes(large, 4, 384, 2) - memory.activation_bytes(flat, 4, 384, 2)
    assert extra == pytest.approx(18 * 4 * 16 * 384 * 768 * memory.KORTHIKANTI_ATTENTION_BYTES)


def test_plan_rows_are_what_iteration_gives():
    system = hardware.load_system("dgx-a100")
    result = plan("transformer-xl-base", system, global_batch=256, compute_dtype="fp16", top=5)
    for row in result.candidates[:3]:
        alone = iteration("transformer-xl-base", system, micro_batch=row.micro_batch,
                          accumulation_steps=row.accumulation_steps, nodes=row.nodes,
                          gpus_per_node=row.gpus_per_node, algorithm=row.algorithm, bucket_bytes=row.bucket_bytes,
                          grad_dtype=row.grad_dtype, compute_dtype="fp16", zero_stage=row.zero_stage,
                          recompute=row.recompute)
        assert alone.attention_scores_s > 0
        assert row.total_s == pytest.approx(alone.total_s, rel=1e-6)


def test_the_cli_reports_it_and_a_user_model_states_it(tmp_path):
    out = runner.invoke(app, ["iteration", "--model", "transformer-xl-large", "--cluster", "dgx-a100",
                              "--micro-batch", "8", "--compute-dtype", "fp16", "--json"])
    data = json.loads(out.output)
    assert data["attention_scores_s"] > 0 and data["flash_attention"] is False
    text = runner.invoke(app, ["iteration", "--model", "bert-large", "--cluster", "dgx-a100", "--micro-batch", "8",
                               "--no-flash-attention"]).output
    assert "attention scores through HBM" in text
    model = tmp_path / "rel.toml"
    model.write_text("[model]\nlayers = 4\nhidden_size = 256\nheads = 4\nvocab = 1000\nseq_len = 128\n"
                     "relative_attention = true\nmemory_length = 128\nattention_dropout = false\n")
    workload = load_model(str(model))
    assert (workload.relative_attention, workload.memory_length, workload.attention_dropout) == (True, 128, False)
    for line, field in (("relative_attention = 1", "model.relative_attention"),
                        ("memory_length = -3", "model.memory_length"),
                        ("attention_dropout = \"no\"", "model.attention_dropout")):
        bad = tmp_path / "bad.toml"
        bad.write_text(f"[model]\nlayers = 4\nhidden_size = 256\nheads = 4\nvocab = 1000\n{line}\n")
        result = runner.invoke(app, ["iteration", "--model", str(bad), "--cluster", "dgx-a100", "--micro-batch", "1"])
        assert result.exit_code == 2 and field in result.output and "Traceback" not in result.output
    cnn = tmp_path / "cnn.toml"
    cnn.write_text("[model]\nkind = \"cnn\"\nparams = 1000000\nflops_per_sample = 1e9\n"
                   "activation_elements_per_sample = 1e6\ntensors = 10\nmemory_length = 8\n")
    result = runner.invoke(app, ["iteration", "--model", str(cnn), "--cluster", "dgx-a100", "--micro-batch", "1"])
    assert result.exit_code == 2 and "model.memory_length" in result.output
