"""An encoder-decoder's cross-attention (``cross_attention_layers``): each decoder layer's queries
also attend to the encoder's output, one more pair of score matmuls, its scores where they are
materialised and an attention block's activations (an audit of the presets, 2026-11-30: BART's
training FLOPs were 5.7 % short at its 1,024 tokens)."""

from __future__ import annotations

import dataclasses

import pytest
from typer.testing import CliRunner

import hardware
from cli import app
from costmodel.training import attention, memory, workloads
from costmodel.training.workloads import load_model
from dpbase.errors import InputError

runner = CliRunner()
A100 = hardware.load_system("dgx-a100").gpu


@pytest.mark.parametrize("name, cross", [("bart-base", 6), ("bart-large", 12), ("transformer-big", 6)])
def test_the_encoder_decoder_presets_state_their_decoder_layers(name, cross):
    """Lewis et al. 2020 (6+6 and 12+12 layers), Vaswani et al. 2017 (6+6)."""
    workload = load_model(name)
    assert workload.cross_attention_layers == cross == workload.layers // 2


def test_bart_base_flops_by_hand():
    """6 · 137,841,408 · 1,024 for the matmuls, 12 · h · s · s for each of the 12 self-attention
    and 6 cross-attention score pairs (PaLM's count, App. B)."""
    w = load_model("bart-base")
    s, h = 1024, 768
    expected = 6 * 137_841_408 * s + 12 * h * s * s * (12 + 6)
    assert workloads.training_flops_per_sample(w, s) == pytest.approx(expected, rel=1e-12)
    without = dataclasses.replace(w, cross_attention_layers=0)
    gained = workloads.training_flops_per_sample(w, s) / workloads.training_flops_per_sample(without, s) - 1
    assert gained == pytest.approx(0.060, abs=0.002)  # what the audit found missing at 1,024 tokens
    assert workloads.training_flops_per_sample(w, s, include_attention=False) == 6 * 137_841_408 * s


def test_the_scores_and_activations_of_a_cross_attention_block():
    w = load_model("bart-large")
    without = dataclasses.replace(w, cross_attention_layers=0)
    b, s, a, h = 4, 1024, 16, 1024
    extra_elements = 12 * b * a * s * s
    assert attention.score_elements(layers=24, heads=a, seq_len=s, key_len=s, micro_batch=b, cross_layers=12) \
        == attention.score_elements(layers=24, heads=a, seq_len=s, key_len=s, micro_batch=b) + extra_elements
    # materialised (no fused kernel): the step moves the cross-attention's scores too
    got = attention.workload_score_seconds(w, micro_batch=b, seq_len=s, element_bytes=2, hbm_Bps=A100.hbm_bandwidth_Bps)
    base = attention.workload_score_seconds(without, micro_batch=b, seq_len=s, element_bytes=2,
                                            hbm_Bps=A100.hbm_bandwidth_Bps)
    assert got == pytest.approx(base * 36 / 24)
    # activations: Korthikanti's attention block (11 s·b·h) with its LayerNorm (2 s·b·h) and 5 a·s²·b of scores
    for flash in (True, False):
        more = memory.activation_bytes(w, b, s, 2, flash_attention=flash) - memory.activation_bytes(
            without, b, s, 2, flash_attention=flash)
        assert more == pytest.approx(12 * (13 * s * b * h + (0 if flash else 5 * a * s * s * b)))
    # recomputed, the one layer kept whole at the peak is a decoder's: its whole cross-attention block stays
    kept = memory.activation_bytes(w, b, s, 2, recompute=True) - memory.activation_bytes(without, b, s, 2,
                                                                                          recompute=True)
    assert kept == pytest.approx(13 * s * b * h)


def test_the_cross_scores_span_the_source_not_the_memory():
    """Cross-attention's keys are the source's ``s`` tokens whatever the self-attention's ``k``
    (called directly: the loader refuses a memory beside a decoder)."""
    b, a, s, k = 2, 4, 8, 20
    assert attention.score_elements(layers=3, heads=a, seq_len=s, key_len=k, micro_batch=b, cross_layers=2) \
        == b * a * s * (3 * k + 2 * s)
    plain = memory.transformer_activation_bytes(3, 64, a, s, b, 2, flash_attention=False, key_len=k)
    both = memory.transformer_activation_bytes(3, 64, a, s, b, 2, flash_attention=False, key_len=k, cross_layers=2)
    assert both - plain == pytest.approx(2 * (13 * s * b * 64 + 5 * b * a * s * s))
    # a layer-less call still answers (it divided by the layers once)
    assert memory.transformer_activation_bytes(0, 64, a, s, b, 2) == 0.0


def _write(tmp_path, body: str):
    path = tmp_path / "encdec.toml"
    path.write_text("[model]\nkind = \"transformer\"\nlayers = 12\nhidden_size = 768\nheads = 12\nvocab = 50265\n"
                    "seq_len = 1024\n" + body, encoding="utf-8")
    return str(path)


def test_a_model_file_states_it(tmp_path):
    w = load_model(_write(tmp_path, "cross_attention_layers = 6\n"))
    plain = load_model(_write(tmp_path, ""))
    assert w.cross_attention_layers == 6 and plain.cross_attention_layers == 0
    assert workloads.training_flops_per_sample(w, 1024) - workloads.training_flops_per_sample(plain, 1024) \
        == pytest.approx(12 * 768 * 1024 * 1024 * 6)


@pytest.mark.parametrize("body, allowed", [
    ("cross_attention_layers = 12\n", "at most 11 for a model of 12 layers"),
    ("cross_attention_layers = -1\n", "an integer from 0"),
    ("cross_attention_layers = 2.5\n", "an integer from 0"),
    ("cross_attention_layers = 6\nrelative_attention = true\n", "Transformer-XL"),
    ("cross_attention_layers = 6\nmemory_length = 192\n", "Transformer-XL"),
])
def test_a_model_file_gets_one_clear_error(tmp_path, body, allowed):
    with pytest.raises(InputError) as error:
        load_model(_write(tmp_path, body))
    assert error.value.field == "model.cross_attention_layers" and allowed in str(error.value)


def test_a_file_without_layers_is_checked_against_its_derived_ones(tmp_path):
    """params alone derive the layers (12·L·h² + V·h): the decoder's share is checked against them."""
    path = tmp_path / "derived.toml"
    path.write_text("[model]\nkind = \"transformer\"\nparams = \"140M\"\nvocab = 50265\ncross_attention_layers = 40\n",
                    encoding="utf-8")
    with pytest.raises(InputError) as error:
        load_model(str(path))
    layers = workloads.derived_shape(140_000_000)[0]
    assert error.value.field == "model.cross_attention_layers" and f"at most {layers - 1}" in str(error.value)


@pytest.mark.parametrize("name, cross", [("gpt2", 100), ("gpt2", 12), ("resnet-50", 3), ("transformer-xl-base", 2),
                                         ("gpt2", -1), ("gpt2", 2.5)])
def test_a_workload_built_in_python_is_checked_as_a_file_is(name, cross):
    from costmodel.training.workloads import workload_of

    with pytest.raises(InputError) as error:
        workload_of(dataclasses.replace(load_model(name), cross_attention_layers=cross))
    assert error.value.field == "cross_attention_layers"
    assert workload_of(dataclasses.replace(load_model("gpt2"), cross_attention_layers=6)).cross_attention_layers == 6


@pytest.mark.parametrize("kind, extra", [("bert", ""), ("cnn", "flops_per_sample = 1e9\n"
                                                               "activation_elements_per_sample = 1e6\ntensors = 10\n")])
def test_only_a_transformer_has_a_decoder(tmp_path, kind, extra):
    path = tmp_path / "other.toml"
    path.write_text(f"[model]\nkind = \"{kind}\"\nparams = 10000000\nvocab = 30522\n{extra}"
                    "cross_attention_layers = 2\n", encoding="utf-8")
    with pytest.raises(InputError) as error:
        load_model(str(path))
    assert error.value.field == "model.cross_attention_layers"


def test_the_cli_answers_and_refuses_with_one_line(tmp_path):
    good = _write(tmp_path, "cross_attention_layers = 6\n")
    result = runner.invoke(app, ["iteration", "--model", good, "--cluster", "dgx-a100", "--micro-batch", "2", "--json"])
    assert result.exit_code == 0, result.output
    bad = tmp_path / "bad.toml"
    bad.write_text("[model]\nkind = \"transformer\"\nlayers = 12\nhidden_size = 768\nheads = 12\nvocab = 50265\n"
                   "cross_attention_layers = 40\n", encoding="utf-8")
    result = runner.invoke(app, ["iteration", "--model", str(bad), "--cluster", "dgx-a100", "--micro-batch", "2"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "model.cross_attention_layers" in lines[0] and "40" in lines[0]
