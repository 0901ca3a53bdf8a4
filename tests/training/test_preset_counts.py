"""Every transformer preset's parameter count is what its published configuration gives.

The shapes below are the published configurations' (Hugging Face config.json of the named
checkpoint, or the paper's table): the preset must carry the same layers, hidden size, heads and
vocabulary, and its count must be what those shapes add up to. A typo in either fails here.
"""

from __future__ import annotations

import pytest

from costmodel.training import workloads

# name: (layers, hidden, heads, key/value heads, FFN width, vocab, source)
LLAMA_FAMILY = {
    "llama-7b": (32, 4096, 32, 32, 11008, 32000, "huggyllama/llama-7b"),
    "llama-13b": (40, 5120, 40, 40, 13824, 32000, "huggyllama/llama-13b"),
    "llama-33b": (60, 6656, 52, 52, 17920, 32000, "huggyllama/llama-30b"),
    "llama-65b": (80, 8192, 64, 64, 22016, 32000, "huggyllama/llama-65b"),
    "llama2-7b": (32, 4096, 32, 32, 11008, 32000, "meta-llama/Llama-2-7b-hf"),
    "llama2-13b": (40, 5120, 40, 40, 13824, 32000, "meta-llama/Llama-2-13b-hf"),
    "llama2-70b": (80, 8192, 64, 8, 28672, 32000, "meta-llama/Llama-2-70b-hf"),
    "llama3-8b": (32, 4096, 32, 8, 14336, 128256, "meta-llama/Meta-Llama-3-8B"),
    "llama3-70b": (80, 8192, 64, 8, 28672, 128256, "meta-llama/Meta-Llama-3-70B"),
    "llama3-405b": (126, 16384, 128, 8, 53248, 128256, "meta-llama/Llama-3.1-405B"),
    "mistral-7b": (32, 4096, 32, 8, 14336, 32000, "mistralai/Mistral-7B-v0.1"),
}

# name: (layers, hidden, heads, vocab, learned positions, token types, source)
BERT_FAMILY = {
    "bert-base": (12, 768, 12, 30522, 512, 2, "bert-base-uncased"),
    "bert-large": (24, 1024, 16, 30522, 512, 2, "bert-large-uncased"),
    "roberta-base": (12, 768, 12, 50265, 514, 1, "roberta-base"),
    "roberta-large": (24, 1024, 16, 50265, 514, 1, "roberta-large"),
}


def llama_count(layers, hidden, heads, kv_heads, ffn, vocab):
    """Bias-free attention (q and o hidden², k and v hidden × kv width), a gated FFN (three
    hidden × ffn matrices), two RMSNorms a layer, untied input embedding and output head, a final
    RMSNorm."""
    kv_width = kv_heads * (hidden // heads)
    per_layer = 2 * hidden * hidden + 2 * hidden * kv_width + 3 * hidden * ffn + 2 * hidden
    return layers * per_layer + 2 * vocab * hidden + hidden


def bert_count(layers, hidden, vocab, positions, token_types):
    """Embeddings (words, positions, token types, LayerNorm), layers of biased q/k/v/o and a 4×
    FFN with two LayerNorms, and the pooler: the BertModel / RobertaModel count."""
    embeddings = (vocab + positions + token_types) * hidden + 2 * hidden
    per_layer = 4 * (hidden * hidden + hidden) + 2 * (4 * hidden * hidden) + 4 * hidden + hidden + 4 * hidden
    return embeddings + layers * per_layer + hidden * hidden + hidden


@pytest.mark.parametrize("name", sorted(LLAMA_FAMILY))
def test_a_llama_family_preset_is_its_published_configuration(name):
    layers, hidden, heads, kv_heads, ffn, vocab, _ = LLAMA_FAMILY[name]
    model = workloads.load_model(name)
    assert (model.layers, model.hidden_size, model.heads, model.vocab) == (layers, hidden, heads, vocab)
    assert not model.tied_embeddings
    assert model.params == llama_count(layers, hidden, heads, kv_heads, ffn, vocab)
    assert model.tensors == 9 * layers + 3  # q, k, v, o, gate, up, down, two norms; embedding, norm, head


@pytest.mark.parametrize("name", sorted(BERT_FAMILY))
def test_a_bert_family_preset_is_its_published_configuration(name):
    layers, hidden, heads, vocab, positions, token_types, _ = BERT_FAMILY[name]
    model = workloads.load_model(name)
    assert (model.layers, model.hidden_size, model.heads, model.vocab, model.kind) == (layers, hidden, heads, vocab,
                                                                                       "bert")
    assert model.params == bert_count(layers, hidden, vocab, positions, token_types)


def test_vit_b_16_carries_torchvisions_count_and_work():
    model = workloads.load_model("vit-b-16")
    # torchvision ViT_B_16_Weights: 86,567,656 parameters, 17.56 GFLOPS (multiply-accumulates)
    assert model.params == 86_567_656 and model.flops_per_sample == pytest.approx(3 * 2 * 17.56e9)
    assert model.seq_len == (224 // 16) ** 2 + 1


@pytest.mark.parametrize(("alias", "preset"), [("llama3.1-8b", "llama3-8b"), ("LLAMA3.1-70B", "llama3-70b"),
                                               ("llama3.1-405b", "llama3-405b"), ("RN50", "resnet-50"),
                                               ("gpt3-small", "gpt3-125m"), ("GPT3-XL", "gpt3-1.3b"),
                                               ("vit-base-patch16-224", "vit-b-16")])
def test_an_alias_loads_its_preset_under_the_presets_name(alias, preset):
    assert workloads.load_model(alias) == workloads.load_model(preset)


def test_gpt3s_own_size_names_are_its_table_2_1_sizes():
    """Brown et al. 2020, Table 2.1: Small 125M, Medium 350M, Large 760M, XL 1.3B."""
    sizes = {"gpt3-small": 125e6, "gpt3-medium": 350e6, "gpt3-large": 760e6, "gpt3-xl": 1.3e9}
    assert {name: workloads.load_model(name).params for name in sizes} == pytest.approx(sizes)


def test_every_alias_names_a_preset_and_no_preset_is_an_alias():
    aliases = workloads.model_aliases()
    assert aliases and set(aliases.values()) <= set(workloads.model_names())
    assert not set(aliases) & set(workloads.model_names())


def test_an_unknown_name_suggests_an_alias():
    from dpbase.errors import UnknownNameError

    with pytest.raises(UnknownNameError) as refused:
        workloads.load_model("llama-3.1-8b")
    assert "did you mean 'llama3.1-8b'" in str(refused.value)
