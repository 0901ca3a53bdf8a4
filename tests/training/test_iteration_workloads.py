"""Model presets, parameter counts and FLOPs per sample."""

from __future__ import annotations

import pytest

from costmodel.training import workloads
from dpbase.errors import InputError, UnknownNameError

REQUIRED = ["gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "gpt3-125m", "gpt3-350m",
            "gpt3-760m", "gpt3-1.3b", "gpt3-2.7b", "gpt3-6.7b", "gpt3-13b", "gpt3-175b",
            "llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b", "llama3-405b",
            "bert-large", "resnet-50", "vit-l-16"]


@pytest.mark.parametrize("name", REQUIRED)
def test_every_required_preset_loads_with_a_source(name):
    model = workloads.load_model(name)
    assert model.params > 1e7 and model.source and model.kind in workloads.KINDS
    assert model.uses_token_rule or model.flops_per_sample > 0


def test_preset_parameter_counts_match_their_names():
    assert workloads.load_model("GPT2").params == pytest.approx(124e6, rel=0.01)
    assert workloads.load_model("gpt3-175b").params == 175_000_000_000
    assert workloads.load_model("llama3-405b").params == pytest.approx(405e9, rel=0.01)


@pytest.mark.parametrize(("text", "count"), [("7B", 7e9), ("124M", 124e6), ("1.3e9", 1.3e9),
                                             ("350k", 350e3), (2e9, 2e9), ("1.5T", 1.5e12)])
def test_parameter_counts(text, count):
    model = workloads.load_model(text)
    assert model.params == int(count) and model.kind == "transformer"


def test_derived_shape_is_close_to_llama_for_7b():
    layers, hidden, heads = workloads.derived_shape(7_000_000_000)
    assert 28 <= layers <= 36 and hidden == 128 * layers and heads == layers


def test_unknown_model_names_the_choices():
    with pytest.raises(UnknownNameError, match="llama2-7b"):
        workloads.load_model("gpt5")
    with pytest.raises(InputError):
        workloads.parse_param_count("-3B")


@pytest.mark.parametrize("text", ["1500.5", "2.5005k", "0.0015k", "1000000.5", "7000000000.4"])
def test_a_fraction_of_a_parameter_is_refused(text):
    """A count is whole: 1.5 parameters used to be read as 2 (and 0.0015k as 2)."""
    with pytest.raises(InputError, match="a whole parameter count"):
        workloads.parse_param_count(text)


@pytest.mark.parametrize("text", ["1.5", "7", "999"])
def test_a_bare_small_number_is_a_missing_unit(text):
    """`--model 7` ran a 7-parameter model (an audit, 2026-11-30): typed without a unit, a count
    below 1000 is refused, naming the units; 1000 and more, and any count with its unit, are read."""
    with pytest.raises(InputError, match=f"such as {text}B or {text}M"):
        workloads.parse_param_count(text)
    assert workloads.parse_param_count("1000") == 1000 and workloads.parse_param_count("7k") == 7000


@pytest.mark.parametrize("text, count", [("1.3B", 1_300_000_000), ("124M", 124_000_000), ("0.5k", 500),
                                         ("1.23456789B", 1_234_567_890), (7e9, 7_000_000_000)])
def test_whole_counts_in_any_spelling_are_read(text, count):
    assert workloads.parse_param_count(text) == count


def test_six_p_t_rule_and_attention():
    model = workloads.load_model("gpt3-175b")
    base = workloads.training_flops_per_sample(model, 2048, include_attention=False)
    assert base == pytest.approx(6 * 175e9 * 2048)
    with_attention = workloads.training_flops_per_sample(model, 2048)  # counted by default
    assert with_attention - base == pytest.approx(12 * 96 * 12288 * 2048**2)


def test_image_models_carry_flops_per_sample_and_refuse_seq_len():
    resnet = workloads.load_model("resnet-50")
    assert workloads.training_flops_per_sample(resnet, 0) == pytest.approx(3 * 2 * 4.09e9)
    with pytest.raises(InputError, match="seq_len"):
        workloads.resolve_seq_len(resnet, 128)
    with pytest.raises(InputError, match="attention: got True"):
        workloads.training_flops_per_sample(resnet, 0, include_attention=True)
    assert workloads.tokens_per_sample(resnet, 0) == 0
    vit = workloads.load_model("vit-l-16")
    assert workloads.tokens_per_sample(vit, vit.seq_len) == 197


def test_default_mfu_table_has_a_source_and_a_fallback():
    mfu, source = workloads.default_mfu_for_arch("ampere")
    assert mfu == pytest.approx(0.52) and "Narayanan" in source
    assert workloads.default_mfu_for_arch("something-new")[0] > 0
