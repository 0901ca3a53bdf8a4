"""The late gradient (input embedding) of adaptive-embedding models, from their own counts."""

from __future__ import annotations

import pytest

from costmodel.training.workloads import load_model, load_model_file
from dpbase.errors import InputError


def _txl_count(layers, d, d_inner, div_val, clusters, tied_head_proj):
    """Parameters of NVIDIA's Transformer-XL (mem_transformer.py) from its configuration."""
    embed = sum(size * (d // div_val**i) for i, size in enumerate(clusters))
    projs = 0 if div_val == 1 else sum(d * (d // div_val**i) for i in range(len(clusters)))
    layer = 3 * d * d + 2 * d * d + 2 * d * d_inner + d_inner + d + 4 * d  # qkv, r/o, FF, 2 LN
    biases = 2 * d + (len(clusters) - 1) * (d + 1) + sum(clusters)  # r_w/r_r, clusters, softmax
    head_proj = 0 if div_val == 1 or tied_head_proj else d * d
    return embed + projs, embed + projs + layers * layer + biases + head_proj


CLUSTERS = (20_000, 20_000, 160_000, 67_735)  # cutoffs 19997/39997/199997 + 3 specials, 267,735


@pytest.mark.parametrize("name, layers, d, d_inner, div_val", [
    ("transformer-xl-base", 16, 512, 2048, 1), ("transformer-xl-large", 18, 1024, 4096, 4)])
def test_transformer_xl_presets_match_their_configuration(name, layers, d, d_inner, div_val):
    embedding, total = _txl_count(layers, d, d_inner, div_val, CLUSTERS, tied_head_proj=False)
    model = load_model(name)
    assert model.params == total
    assert model.embedding_params == embedding
    # tied input/output weights: the whole adaptive embedding lands when backward ends
    assert model.late_fraction == pytest.approx(embedding / total)


def test_the_late_fraction_defaults_to_vocab_times_hidden():
    bert = load_model("bert-large")
    assert bert.late_fraction == pytest.approx(30522 * 1024 / bert.params)


def test_a_user_model_file_gives_its_embedding(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text('[model]\nparams = 1000000\nlayers = 2\nhidden_size = 64\nheads = 2\n'
                    'vocab = 5000\nseq_len = 128\nembedding_params = 100000\n')
    assert load_model_file(str(path)).late_fraction == pytest.approx(0.1)
    path.write_text('[model]\nparams = 1000000\nvocab = 5000\nhidden_size = 64\nembedding_params = -1\n')
    with pytest.raises(InputError, match="embedding_params"):
        load_model_file(str(path))


def test_an_adaptive_softmax_materialises_its_head_not_the_vocabulary():
    from costmodel.training import memory

    model = load_model("transformer-xl-base")
    full = memory.logits_bytes(load_model("bert-large"), 32, 192, 2) / 30522  # per logit
    assert model.logits_vocab < model.vocab / 10
    assert memory.logits_bytes(model, 32, 192, 2) == pytest.approx(full * model.logits_vocab)


def test_a_user_model_file_gives_its_logits(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text('[model]\nparams = 4000000\nlayers = 2\nhidden_size = 64\nheads = 2\n'  # 50,000 x 64 inside
                    'vocab = 50000\nseq_len = 128\nlogits_vocab = 5000\n')
    assert load_model_file(str(path)).logits_vocab == 5000


def test_an_embedding_larger_than_the_model_is_refused(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text('[model]\nparams = 1000000\nlayers = 2\nhidden_size = 64\nheads = 2\n'
                    'vocab = 5000\nseq_len = 128\nembedding_params = 2000000\n')
    with pytest.raises(InputError, match="embedding_params"):
        load_model_file(str(path))


def _bert_count(layers, hidden, vocab=30522, positions=512, types=2):
    """Parameters of Hugging Face's BertModel (embeddings with their LayerNorm, encoder, pooler)."""
    embeddings = (vocab + positions + types) * hidden + 2 * hidden
    layer = 4 * (hidden * hidden + hidden) + 2 * 4 * hidden * hidden + 4 * hidden + hidden + 2 * 2 * hidden
    return embeddings + layers * layer + hidden * hidden + hidden


@pytest.mark.parametrize("name, layers, hidden", [("bert-base", 12, 768), ("bert-large", 24, 1024)])
def test_bert_presets_match_their_configuration(name, layers, hidden):
    model = load_model(name)
    assert model.params == _bert_count(layers, hidden)
    assert (model.layers, model.hidden_size, model.heads) == (layers, hidden, hidden // 64)


def _mpt_count(layers, hidden, vocab=50368, positions=2048):
    """Parameters of the MPT configuration llm-foundry's benchmark table counts: token and learned
    position embeddings; per block the fused QKV (3h² + 3h), the output projection (h² + h), the
    expansion-4 MLP (8h² + 5h) and two LayerNorms (4h); a final LayerNorm (2h)."""
    return (vocab + positions) * hidden + layers * (12 * hidden * hidden + 13 * hidden) + 2 * hidden


@pytest.mark.parametrize("size, layers, hidden, heads", [
    ("125m", 12, 768, 12), ("350m", 24, 1024, 16), ("760m", 24, 1536, 12), ("1b", 24, 2048, 16),
    ("3b", 32, 2560, 20), ("7b", 32, 4096, 32), ("13b", 40, 5120, 40), ("30b", 48, 7168, 56),
    ("70b", 80, 8192, 64)])
def test_mpt_presets_match_their_configuration(size, layers, hidden, heads):
    """The presets carry llm-foundry's printed NumParams; the architecture gives the same count."""
    model = load_model(f"mpt-{size}")
    assert (model.layers, model.hidden_size, model.heads, model.vocab) == (layers, hidden, heads, 50368)
    assert model.params == _mpt_count(layers, hidden)


def test_untied_llama_embeddings_do_no_matmul_work():
    """Llama's input embedding (untied from its head) is a lookup: 6·(P − V·h) FLOPs per token."""
    from costmodel.training.workloads import load_model, training_flops_per_sample

    for name in ("llama2-7b", "llama3-8b", "llama3-405b"):
        model = load_model(name)
        expected = 6 * (model.params - model.vocab * model.hidden_size) * 4096
        assert training_flops_per_sample(model, 4096, False) == expected
    # against the counts the presets once carried (parameters outside the input embedding, from the
    # Hugging Face configs), independent of the rule above
    matmul = {"llama2-7b": 6_607_343_616, "llama2-13b": 12_852_024_320, "llama2-70b": 68_714_504_192,
              "llama3-8b": 7_504_924_672, "llama3-70b": 69_503_033_344, "llama3-405b": 403_752_042_496}
    for name, count in matmul.items():
        assert training_flops_per_sample(load_model(name), 4096, False) == 6 * count * 4096, name
    gpt2 = load_model("gpt2")  # tied: its one matrix is also the head, a matmul: every parameter counts
    assert gpt2.tied_embeddings and training_flops_per_sample(gpt2, 1024, False) == 6 * gpt2.params * 1024


def test_an_untied_user_model_without_params_counts_its_output_head(tmp_path):
    """Layers, hidden and vocab alone: an untied head (Llama's) is a second vocab × hidden matrix,
    and it does the head's matmul, so the matmul parameters keep it (the lookup is left out)."""
    shape = "layers = 40\nhidden_size = 5120\nvocab = 100000\n"
    tied, untied = tmp_path / "tied.toml", tmp_path / "untied.toml"
    tied.write_text(shape)
    untied.write_text(shape + "tied_embeddings = false\n")
    body = 12 * 40 * 5120**2
    assert load_model_file(str(tied)).params == body + 100_000 * 5120
    model = load_model_file(str(untied))
    assert model.params == body + 2 * 100_000 * 5120
    assert model.matmul_params == body + 100_000 * 5120


def test_a_user_model_without_params_counts_its_own_embedding(tmp_path):
    """embedding_params given (an adaptive input embedding) replaces V·h in the derived count; an
    untied head adds V·h (the review's suspicion, 2026-11-29: it counted 2·V·h whatever the file gave)."""
    path = tmp_path / "adaptive.toml"
    path.write_text("layers = 4\nhidden_size = 256\nvocab = 10000\nembedding_params = 500000\n"
                    "tied_embeddings = false\n")
    assert load_model_file(str(path)).params == 12 * 4 * 256**2 + 500_000 + 10_000 * 256
