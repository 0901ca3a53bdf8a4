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
from costmodel.training import attention, memory, workloads
from costmodel.training.iteration import TrainingConfig, iteration_breakdown
from costmodel.training.oncluster import iteration
from costmodel.training.workloads import load_model

runner = CliRunner()
A100 = hardware.load_system("dgx-a100").gpu


# --- the counted accesses, executed -------------------------------------------------------------
# Each function below is one kernel of the eager chain, computing its part of the forward or
# backward for real; the tally counts every score-sized array a kernel reads or writes (the scores
# are heads × queries × keys, so Q, K, V, the relative positions and the shared masks are not).
# The gradients are checked against finite differences, so the backward chain is the real one.
class _Tally:
    def __init__(self, shape):
        self.shape, self.floats, self.masks = shape, 0, 0

    def kernel(self, f):
        def run(*args):
            out = f(*args)
            for a in (*args, *(out if isinstance(out, tuple) else (out,))):
                if isinstance(a, np.ndarray) and a.ndim == 3 and a.shape[:2] == self.shape[:2] \
                        and a.shape[2] in (self.shape[2], self.shape[2] + 1):  # the shift's padded copy too
                    if a.dtype == bool:
                        self.masks += 1
                    else:
                        self.floats += 1
            return out
        return run


def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _softmax_dropout_pv(scores, v, keep, grad_out, t):
    """How both attentions end: softmax, dropout, ·V, and back to the gradient of the scores."""
    p = t.kernel(_softmax)(scores)
    dropped, mask = t.kernel(lambda p: (p * keep, keep > 0))(p)  # the kernel draws its random numbers
    out = t.kernel(lambda p, v: p @ v)(dropped, v)
    t.kernel(lambda p, g: p.transpose(0, 2, 1) @ g)(dropped, grad_out)  # dV
    d_dropped = t.kernel(lambda g, v: g @ v.transpose(0, 2, 1))(grad_out, v)
    d_p = t.kernel(lambda g, m: g * m / (1 - 0.1))(d_dropped, mask)
    return out, t.kernel(lambda p, g: p * (g - (p * g).sum(-1, keepdims=True)))(p, d_p)  # softmax backward


def _standard(q, k, v, keep, grad_out, t):
    """softmax(Q·Kᵀ/√d + mask)·V with dropout (BertSelfAttention), forward then backward."""
    d = q.shape[-1]
    scores = t.kernel(lambda q, k: q @ k.transpose(0, 2, 1))(q, k)
    scaled = t.kernel(lambda s: s / np.sqrt(d))(scores)
    masked = t.kernel(lambda s: s + 0.0)(scaled)  # + an additive padding mask, broadcast per key
    out, d_s = _softmax_dropout_pv(masked, v, keep, grad_out, t)
    d_s = t.kernel(lambda g: g / np.sqrt(d))(d_s)  # the mask's gradient passes through
    d_q = t.kernel(lambda g, k: g @ k)(d_s, k)
    t.kernel(lambda g, q: g.transpose(0, 2, 1) @ q)(d_s, q)  # dK
    return out, d_q


def _relative(q, k, r, keep, grad_out, t):
    """Transformer-XL's AC + shift(BD), scaled, masked, softmax, dropout, ·V (v = k here),
    forward then backward; returns the output, dq and the scores before the mask."""
    n, s_len, d = q.shape
    keys = k.shape[1]
    causal = np.triu(np.ones((s_len, keys), bool), 1 + keys - s_len)
    ac = t.kernel(lambda q, k: q @ k.transpose(0, 2, 1))(q, k)
    bd = t.kernel(lambda q, r: q @ r.T)(q, r)
    padded = t.kernel(lambda x: np.concatenate([np.zeros((n, s_len, 1)), x], axis=2))(bd)
    shifted = padded.reshape(n, keys + 1, s_len)[:, 1:].reshape(n, s_len, keys)  # views, as in _rel_shift
    scores = t.kernel(lambda a, b: (a + b) / np.sqrt(d))(ac, shifted)
    masked = t.kernel(lambda x: np.where(causal, -1e30, x))(scores)
    out, d_m = _softmax_dropout_pv(masked, k, keep, grad_out, t)
    d_s = t.kernel(lambda g: np.where(causal, 0.0, g))(d_m)  # masked_fill backward
    d_ac, d_shifted = t.kernel(lambda g: (g / np.sqrt(d), g / np.sqrt(d)))(d_s)
    d_padded = t.kernel(lambda: np.zeros((n, s_len, keys + 1)))()  # narrow's backward: zeros, then a copy

    def copy_into(g):  # reads the gradient, writes into the zeros (which it does not read)
        d_padded.reshape(n, keys + 1, s_len)[:, 1:] = g.reshape(n, keys, s_len)
        return d_padded
    d_padded = t.kernel(copy_into)(d_shifted)
    d_bd = t.kernel(np.ascontiguousarray)(d_padded[:, :, 1:])  # the einsum's layout copy
    d_q = t.kernel(lambda g, k: g @ k)(d_ac, k) + t.kernel(lambda g, r: g @ r)(d_bd, r)
    t.kernel(lambda g, q: g.transpose(0, 2, 1) @ q)(d_ac, q)  # dK
    t.kernel(lambda g, q: (g.transpose(0, 2, 1) @ q).sum(0))(d_bd, q)  # dR
    return out, d_q, ac + shifted


def _numerical_dq(forward, q, grad_out, eps=1e-6):
    d_q = np.zeros_like(q)
    for index in np.ndindex(q.shape):
        up, down = q.copy(), q.copy()
        up[index] += eps
        down[index] -= eps
        d_q[index] = ((forward(up) * grad_out).sum() - (forward(down) * grad_out).sum()) / (2 * eps)
    return d_q


def test_the_counted_accesses_are_what_the_chains_do():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 5, 4)) for _ in range(3))
    keep = (rng.random((2, 5, 5)) > 0.1) / 0.9
    grad_out = rng.standard_normal((2, 5, 4))
    tally = _Tally((2, 5, 5))
    out, d_q = _standard(q, k, v, keep, grad_out, tally)
    assert np.allclose(out, (_softmax(q @ k.transpose(0, 2, 1) / 2.0) * keep) @ v)
    assert np.allclose(d_q, _numerical_dq(lambda x: _standard(x, k, v, keep, grad_out, _Tally((0, 0, 0)))[0],
                                          q, grad_out), atol=1e-6)
    assert tally.floats == attention.accesses_per_element(relative=False, dropout=True) == 21
    assert tally.masks == attention.DROPOUT_MASK_BYTES  # written forward, read backward
    assert sum(f for _, f, _, _ in attention.steps(False, True)) == 10
    assert attention.accesses_per_element(relative=False, dropout=False) == 17

    q = rng.standard_normal((2, 4, 4))  # 4 queries; 2 cached + 4 keys
    kk, r = rng.standard_normal((2, 6, 4)), rng.standard_normal((6, 4))  # r: relative distances 5 … 0
    keep = (rng.random((2, 4, 6)) > 0.1) / 0.9
    grad_out = rng.standard_normal((2, 4, 4))
    tally = _Tally((2, 4, 6))
    _, d_q, scores = _relative(q, kk, r, keep, grad_out, tally)
    for h, i, j in np.ndindex(2, 4, 6):  # after the shift, query i at key j sees the distance (2 + i) − j
        if j <= 2 + i:
            assert np.isclose(scores[h, i, j], q[h, i] @ kk[h, j] + q[h, i] @ r[5 - (2 + i - j)])
    numerical = _numerical_dq(lambda x: _relative(x, kk, r, keep, grad_out, _Tally((0, 0, 0)))[0], q, grad_out)
    assert np.allclose(d_q, numerical, atol=1e-6)
    assert tally.floats == attention.accesses_per_element(relative=True, dropout=True) == 35
    assert tally.masks == attention.DROPOUT_MASK_BYTES
    assert [sum(step[column] for step in attention.steps(True, True)) for column in (1, 2)] == [14, 21]
    assert attention.accesses_per_element(relative=True, dropout=False) == 31


# --- the term on the step ------------------------------------------------------------------------
def _step(model, **fields):
    fields.setdefault("include_attention", False)  # the score traffic alone (their matmuls: workloads)
    config = TrainingConfig(micro_batch=fields.pop("micro_batch", 8), compute_dtype=fields.pop("dtype", "fp16"),
                            **fields)
    workload = load_model(model) if isinstance(model, str) else model
    return iteration_breakdown(workload, A100, lambda p, s: 0.0, 1, config)


def test_relative_attention_pays_its_scores_whatever_the_flag():
    txl = load_model("transformer-xl-large")
    plain = dataclasses.replace(txl, relative_attention=False)
    relative, fused = _step(txl), _step(plain)
    assert fused.attention_scores_s == 0.0 and fused.flash_attention and not fused.attention_materialised
    elements = 18 * 8 * 16 * 384 * (384 + 384)  # layers · b · heads · s · (s + memory)
    assert relative.attention_scores_s == pytest.approx(elements * (35 * 2 + 2) / A100.hbm_bandwidth_Bps)
    assert relative.forward_s - fused.forward_s == pytest.approx(relative.attention_scores_s / 3)
    assert relative.backward_s - fused.backward_s == pytest.approx(2 * relative.attention_scores_s / 3)
    assert relative.attention_materialised and relative.flash_attention  # the user's flag, and what runs
    assert _step(txl, flash_attention=False).total_s == pytest.approx(relative.total_s)
    # the base model has no attention dropout: 31 accesses, no mask
    base = _step("transformer-xl-base", micro_batch=32)
    assert base.attention_scores_s == pytest.approx(16 * 32 * 8 * 192 * 384 * 31 * 2 / A100.hbm_bandwidth_Bps)


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
    given = _step("bert-large", flash_attention=False, mfu=0.4)
    assert given.attention_scores_s == 0.0 and given.attention_materialised
    # recomputation re-runs the forward, scores included
    again = _step("bert-large", flash_attention=False, recompute=True)
    assert again.backward_s - eager.backward_s == pytest.approx(eager.forward_s)
    fused_again = _step("bert-large", recompute=True)  # the scores' whole count (1/3 + 2/3) lands in backward
    assert again.backward_s - fused_again.backward_s == pytest.approx(eager.attention_scores_s)


def test_the_scores_take_memory_over_the_cached_keys():
    txl = load_model("transformer-xl-base")
    plain = dataclasses.replace(txl, relative_attention=False, memory_length=0)
    b, s = 16, 192
    extra = memory.activation_bytes(txl, b, s, 2) - memory.activation_bytes(plain, b, s, 2)
    scores = 16 * b * 8 * s * (s + 192) * memory.SOFTMAX_OUTPUT_BYTES  # no dropout: the softmax output only
    cached = 16 * b * 192 * 512 * (memory.MEMORY_STATE_BYTES + memory.MEMORY_KV_BYTES)  # states, keys, values
    assert extra == pytest.approx(scores + cached)
    large = load_model("transformer-xl-large")
    flat = dataclasses.replace(large, relative_attention=False, memory_length=0)
    extra = memory.activation_bytes(large, 4, 384, 2) - memory.activation_bytes(flat, 4, 384, 2)
    assert extra == pytest.approx(18 * 4 * 16 * 384 * 768 * memory.KORTHIKANTI_ATTENTION_BYTES
                                  + 18 * 4 * 384 * 1024 * (memory.MEMORY_STATE_BYTES + memory.MEMORY_KV_BYTES))
    # recomputation keeps one layer's scores, keys and values, and every layer's cached states
    kept = memory.activation_bytes(txl, b, s, 2, recompute=True) - memory.activation_bytes(plain, b, s, 2, recompute=True)
    assert kept == pytest.approx(scores / 16 + 16 * b * 192 * 512 * memory.MEMORY_STATE_BYTES
                                 + b * 192 * 512 * memory.MEMORY_KV_BYTES)


def test_a_memory_runs_the_projections_over_the_cached_tokens():
    """Transformer-XL's qkv_net(cat([mems, w])): each layer's Q, K and V projections (3·h²) also
    run over the memory, forward and backward; the score matmuls span the memory's keys."""
    txl = load_model("transformer-xl-base")
    plain = dataclasses.replace(txl, memory_length=0)
    extra = (workloads.training_flops_per_sample(txl, 192, include_attention=False)
             - workloads.training_flops_per_sample(plain, 192, include_attention=False))
    assert extra == pytest.approx(6 * 3 * 512 ** 2 * 16 * 192)
    with_attention = workloads.training_flops_per_sample(txl, 192)  # the default counts the score matmuls
    assert with_attention == workloads.training_flops_per_sample(txl, 192, include_attention=True)
    assert with_attention - workloads.training_flops_per_sample(txl, 192, include_attention=False) == pytest.approx(
        6 * 3 * 16 * 512 * 192 * 384)
    bert = load_model("bert-large")
    assert (workloads.training_flops_per_sample(bert, 128)
            - workloads.training_flops_per_sample(bert, 128, include_attention=False)) == pytest.approx(
        12 * 24 * 1024 * 128 * 128)


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
    assert data["attention_scores_s"] > 0 and data["attention_materialised"] is True
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


@pytest.mark.parametrize("model", ["gpt2", "bert-large"])
def test_plan_charges_standard_attention_without_a_fused_kernel_as_iteration_does(model):
    system = hardware.load_system("dgx-a100")
    eager = plan(model, system, global_batch=64, compute_dtype="fp16", flash_attention=False, top=5)
    for row in eager.candidates[:3]:
        alone = iteration(model, system, micro_batch=row.micro_batch, accumulation_steps=row.accumulation_steps,
                          nodes=row.nodes, gpus_per_node=row.gpus_per_node, algorithm=row.algorithm,
                          bucket_bytes=row.bucket_bytes, grad_dtype=row.grad_dtype, compute_dtype="fp16",
                          zero_stage=row.zero_stage, recompute=row.recompute, flash_attention=False)
        assert alone.attention_scores_s > 0
        assert row.total_s == pytest.approx(alone.total_s, rel=1e-6)
        assert row.memory_bytes == pytest.approx(alone.memory.total_bytes, rel=1e-6)
    fused = plan(model, system, global_batch=64, compute_dtype="fp16", top=1).best
    assert eager.best.samples_per_s < fused.samples_per_s
    out = runner.invoke(app, ["plan", "--model", model, "--cluster", "dgx-a100", "--global-batch", "64",
                              "--no-flash-attention", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["flash_attention"] is False
