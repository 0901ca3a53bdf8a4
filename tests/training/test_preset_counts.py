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


# name: (layers, hidden, heads, FFN width, vocab, published total or None, source). OPT's 350M
# embeds 512 wide and projects in and out; the others are pre-LN with a final LayerNorm.
OPT_FAMILY = {
    "opt-125m": (12, 768, 12, 3072, 50272, 125_239_296, "facebook/opt-125m"),
    "opt-350m": (24, 1024, 16, 4096, 50272, 331_196_416, "facebook/opt-350m"),
    "opt-1.3b": (24, 2048, 32, 8192, 50272, 1_315_758_080, "facebook/opt-1.3b"),
    "opt-2.7b": (32, 2560, 32, 10240, 50272, 2_651_596_800, "facebook/opt-2.7b"),
    "opt-6.7b": (32, 4096, 32, 16384, 50272, None, "facebook/opt-6.7b"),
    "opt-13b": (40, 5120, 40, 20480, 50272, None, "facebook/opt-13b"),
    "opt-30b": (48, 7168, 56, 28672, 50272, None, "facebook/opt-30b"),
    "opt-66b": (64, 9216, 72, 36864, 50272, None, "facebook/opt-66b"),
}
# name: (layers, hidden, heads, vocab, published total, source); ALiBi, no position table, 4x FFN
BLOOM_FAMILY = {
    "bloom-560m": (24, 1024, 16, 250880, 559_214_592, "bigscience/bloom-560m"),
    "bloom-1b1": (24, 1536, 16, 250880, 1_065_314_304, "bigscience/bloom-1b1"),
    "bloom-1b7": (24, 2048, 16, 250880, 1_722_408_960, "bigscience/bloom-1b7"),
    "bloom-3b": (30, 2560, 32, 250880, 3_002_557_440, "bigscience/bloom-3b"),
    "bloom-7b1": (30, 4096, 32, 250880, 7_069_016_064, "bigscience/bloom-7b1"),
    "bloom-176b": (70, 14336, 112, 250880, 176_247_271_424, "bigscience/bloom"),
}
# name: (layers, hidden, heads, vocab, published total, source); GPT-NeoX blocks, untied head, 4x FFN
NEOX_FAMILY = {
    "pythia-160m": (12, 768, 12, 50304, 162_322_944, "EleutherAI/pythia-160m"),
    "pythia-410m": (24, 1024, 16, 50304, 405_334_016, "EleutherAI/pythia-410m"),
    "pythia-1b": (16, 2048, 8, 50304, 1_011_781_632, "EleutherAI/pythia-1b"),
    "pythia-1.4b": (24, 2048, 16, 50304, 1_414_647_808, "EleutherAI/pythia-1.4b"),
    "pythia-2.8b": (32, 2560, 32, 50304, 2_775_208_960, "EleutherAI/pythia-2.8b"),
    "pythia-6.9b": (32, 4096, 32, 50432, 6_857_302_016, "EleutherAI/pythia-6.9b"),
    "pythia-12b": (36, 5120, 40, 50688, 11_846_072_320, "EleutherAI/pythia-12b"),
    "gpt-neox-20b": (44, 6144, 64, 50432, 20_554_567_680, "EleutherAI/gpt-neox-20b"),
}


def opt_count(layers, hidden, ffn, vocab, embed=None):
    """Biased q/k/v/o and FFN, two LayerNorms a layer, a tied word embedding, 2,050 learned
    positions (OPT's offset of 2), a final LayerNorm; or, with a narrower ``embed`` (350M), its
    projections in and out and no final LayerNorm (post-LN)."""
    per_layer = 4 * (hidden * hidden + hidden) + (hidden * ffn + ffn) + (ffn * hidden + hidden) + 4 * hidden
    words = vocab * (embed or hidden)
    ends = 2 * embed * hidden if embed else 2 * hidden
    return words + 2050 * hidden + layers * per_layer + ends


def twelve_h2_count(layers, hidden, vocab, tied, extra):
    """BLOOM and GPT-NeoX blocks: biased fused q/k/v, output, 4x FFN and two LayerNorms (12h² + 13h
    a layer), a final LayerNorm, the word embedding (and an untied head), ``extra`` beside."""
    return layers * (12 * hidden * hidden + 13 * hidden) + 2 * hidden + vocab * hidden * (1 if tied else 2) + extra


@pytest.mark.parametrize("name", sorted(OPT_FAMILY))
def test_an_opt_preset_is_its_published_configuration(name):
    layers, hidden, heads, ffn, vocab, published, _ = OPT_FAMILY[name]
    model = workloads.load_model(name)
    assert (model.layers, model.hidden_size, model.heads, model.vocab, model.tied_embeddings) == (
        layers, hidden, heads, vocab, True)
    embed = 512 if name == "opt-350m" else None
    assert model.params == opt_count(layers, hidden, ffn, vocab, embed) == (published or model.params)
    assert model.input_embedding_params == vocab * (embed or hidden)
    # q, k, v, o, fc1, fc2 with their biases and two norms a layer; the word and position
    # embeddings; the final norm's two, or (350M) the two projections
    assert model.tensors == 16 * layers + 4


@pytest.mark.parametrize("name", sorted(BLOOM_FAMILY) + sorted(NEOX_FAMILY))
def test_a_bloom_or_gpt_neox_preset_is_its_published_configuration(name):
    """BLOOM ties its head and normalises its embedding (2h more, one more tensor); GPT-NeoX and
    Pythia untie the head (a second V × h)."""
    bloom = name in BLOOM_FAMILY
    layers, hidden, heads, vocab, published, _ = (BLOOM_FAMILY if bloom else NEOX_FAMILY)[name]
    model = workloads.load_model(name)
    assert (model.layers, model.hidden_size, model.heads, model.vocab, model.tied_embeddings) == (
        layers, hidden, heads, vocab, bloom)
    assert model.params == twelve_h2_count(layers, hidden, vocab, bloom, 2 * hidden if bloom else 0) == published
    assert model.tensors == 12 * layers + (5 if bloom else 4)


def test_gpt_j_falcon_and_bart_are_their_configurations():
    """GPT-J-6B: untied head with a bias, bias-free attention, one LayerNorm a block (Hugging Face's
    count; the model card's 6,053,381,344 is mesh-transformer-jax's). Falcon: bias-free,
    multi-query (7B: one key/value head of 64) or grouped (40B: 8 groups, two LayerNorms a block),
    the head tied (its checkpoint stores a copy, which the Hub's totals count). BART: a shared
    embedding, two position tables of 1,026, encoder layers and decoder layers with
    cross-attention."""
    def gptj(layers, h, vocab):
        return 2 * vocab * h + vocab + layers * (12 * h * h + 7 * h) + 2 * h

    def falcon(layers, h, vocab, kv_width, norms):
        return vocab * h + layers * (h * (h + 2 * kv_width) + 9 * h * h + 2 * norms * h) + 2 * h

    def bart(layers, h, vocab):
        encoder = 4 * (h * h + h) + 8 * h * h + 5 * h + 4 * h
        decoder = encoder + 4 * (h * h + h) + 2 * h
        return vocab * h + 2 * 1026 * h + 4 * h + layers * (encoder + decoder), layers * (encoder + decoder) + vocab * h

    assert workloads.load_model("gpt-j-6b").params == gptj(28, 4096, 50400) == 6_050_882_784
    assert workloads.load_model("falcon-7b").params == falcon(32, 4544, 65024, 64, 1) == 7_217_189_760 - 65024 * 4544
    assert workloads.load_model("falcon-40b").params == falcon(60, 8192, 65024, 8 * 64, 2) == \
        41_835_970_560 - 65024 * 8192
    for name, layers, h in (("bart-base", 6, 768), ("bart-large", 12, 1024)):
        model = workloads.load_model(name)
        assert (model.params, model.flops_params) == bart(layers, h, 50265)
    assert workloads.load_model("bart-large").params == 406_291_456 and workloads.load_model("bart-base").params == \
        139_420_416


def test_transformer_big_is_deeplearningexamples_wmt_model():
    """DeepLearningExamples' translation Transformer (transformer_wmt_en_de_big_t2t): one shared
    embedding, bias-free attention projections, a biased 4x FFN, a LayerNorm per sublayer and one
    after each stack; the matmul weights a source and a target token run through; its tensors."""
    d, f, vocab, layers = 1024, 4096, 33712, 6
    encoder = 4 * d * d + 2 * d * f + f + d + 2 * 2 * d
    decoder = 8 * d * d + 2 * d * f + f + d + 3 * 2 * d
    model = workloads.load_model("transformer-big")
    assert model.params == vocab * d + layers * (encoder + decoder) + 2 * 2 * d == 210_808_832
    per_token = layers * (4 * d * d + 2 * d * f) + layers * 2 * d * d + layers * (6 * d * d + 2 * d * f) + vocab * d
    assert model.flops_params == per_token == 210_681_856
    assert model.tensors == 1 + layers * 12 + 2 + layers * 18 + 2 == 185
    assert workloads.load_model("transformer-wmt-en-de-big") == model


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
                                               ("vit-base-patch16-224", "vit-b-16"), ("GPT-J", "gpt-j-6b"),
                                               ("bloom-7.1b", "bloom-7b1"), ("BLOOM-1.7B", "bloom-1b7")])
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


@pytest.mark.parametrize("name, layers, hidden, head_and_tail", [
    ("transformer-xl-base", 16, 512, 20_003 * 512 + 3.3e6),
    ("transformer-xl-large", 18, 1024, 21.5e6 + 1e6 + 0.5e6),
])
def test_transformer_xl_matmul_work_per_token_leaves_r_net_out(name, layers, hidden, head_and_tail):
    """Per target token the layers run qkv_net (3h²; over the memory too, which
    training_flops_per_sample adds), o_net (h²) and the FF (8h²), plus the softmax head. r_net
    projects the klen positions once per micro-batch (NVIDIA's mem_transformer.py:
    ``r_head_k.view(rlen, n_head, d_head)``, no batch dimension), not per token: counting it per
    token put the base model's matmul work 6.5 % high (an audit, 2026-11-30)."""
    per_token = layers * 12 * hidden**2 + head_and_tail
    assert workloads.load_model(name).flops_params == pytest.approx(per_token, rel=0.005)
