"""A user model TOML is accepted wherever a preset name is."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli import app
from costmodel.training import losses
from costmodel.training.workloads import load_model
from dpbase.errors import InputError

runner = CliRunner()


def _write(tmp_path, text: str):
    path = tmp_path / "mine.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_transformer_shape_gives_params_and_flops(tmp_path):
    path = _write(tmp_path, "[model]\nlayers = 24\nhidden_size = 1024\nheads = 16\nvocab = 30522\n"
                            "seq_len = 512\nkind = \"bert\"\n")
    workload = load_model(str(path))
    assert workload.params == 12 * 24 * 1024**2 + 30522 * 1024  # 12·L·h² + V·h
    assert workload.seq_len == 512 and workload.kind == "bert" and workload.name == "mine"


def test_cnn_needs_flops_per_sample(tmp_path):
    path = _write(tmp_path, "kind = \"cnn\"\nparams = \"25M\"\n")
    with pytest.raises(InputError, match="flops_per_sample"):
        load_model(str(path))


def test_cnn_needs_activation_elements_per_sample(tmp_path):
    """Without it a CNN's activations would take no memory and any micro-batch would fit."""
    path = _write(tmp_path, "kind = \"cnn\"\nparams = \"25M\"\nflops_per_sample = 24.54e9\n")
    with pytest.raises(InputError, match="activation_elements_per_sample"):
        load_model(str(path))
    result = runner.invoke(app, ["iteration", "--cluster", "dgx-a100", "--micro-batch", "64",
                                 "--model", str(path)])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "model.activation_elements_per_sample" in result.stderr


def test_cnn_needs_its_tensors_or_layers(tmp_path):
    """A micro-batch's fixed time is tensors x 90 us: without either, a transformer's layer count
    derived from params (5 layers for 25M: 15 tensors) stood in for ResNet-50's 161."""
    body = "kind = \"cnn\"\nparams = \"25M\"\nflops_per_sample = 24.54e9\nactivation_elements_per_sample = 11.1e6\n"
    path = _write(tmp_path, body)
    result = runner.invoke(app, ["iteration", "--cluster", "dgx-a100", "--micro-batch", "8", "--model", str(path)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "model.tensors" in result.stderr
    assert load_model(str(_write(tmp_path, body + "tensors = 161\n"))).tensors == 161
    assert load_model(str(_write(tmp_path, body + "layers = 50\n"))).layers == 50


def test_every_preset_states_what_an_image_model_needs():
    from costmodel.training import workloads

    presets = workloads._data()["models"]
    for name, entry in presets.items():
        workloads.check_image_model(entry["kind"], entry)  # raises naming the preset's missing field
    assert {"resnet-18", "resnet-50", "resnet-101", "resnet-152", "vgg16", "alexnet",
            "inception-v3"} <= {name for name, entry in presets.items() if entry["kind"] == "cnn"}


def test_a_cnn_micro_batch_too_large_for_memory_does_not_fit():
    """vgg16 at micro-batch 2048 needs ~13.6M activation elements a sample (its timm card): far
    more than an 80 GB GPU holds (it was reported to fit while its preset had no activations)."""
    result = runner.invoke(app, ["iteration", "--model", "vgg16", "--cluster", "dgx-a100",
                                 "--micro-batch", "2048", "--json"])
    assert result.exit_code == 0, result.stderr
    found = json.loads(result.stdout)
    assert not found["memory"]["fits"] and found["memory"]["activations_bytes"] > 80e9


def test_cli_iteration_runs_a_user_model_like_its_preset(tmp_path):
    """The file's CNN and the preset take the same step where the gradient is one flat all-reduce
    (the preset's listed tensors and readiness would cut and time DDP's buckets differently from a
    file's byte cut: tests/training/test_gradient_readiness.py)."""
    path = _write(tmp_path, "[model]\nparams = 25557032\nkind = \"cnn\"\nlayers = 50\n"
                            "flops_per_sample = 24.54e9\nactivation_elements_per_sample = 11.1e6\n")
    args = ["iteration", "--cluster", "dgx-a100", "--micro-batch", "64", "--mfu", "0.3", "--sync", "flat", "--json"]
    mine = json.loads(runner.invoke(app, [*args, "--model", str(path)]).stdout)
    preset = json.loads(runner.invoke(app, [*args, "--model", "resnet-50"]).stdout)
    assert mine["total_s"] == pytest.approx(preset["total_s"], rel=1e-6)
    assert mine["memory"]["total_bytes"] == pytest.approx(preset["memory"]["total_bytes"], rel=1e-9)
    # and the activations are counted, not zero in both: 64 images x 11.1M elements x 2 saved
    # tensors (conv output, ReLU output) x 2 B (bf16)
    assert mine["memory"]["activations_bytes"] == pytest.approx(64 * 11.1e6 * 2 * 2, rel=1e-12)


def test_cli_unknown_field_is_one_error_line(tmp_path):
    path = _write(tmp_path, "[model]\nparams = 1000000\nwidth = 3\n")
    result = runner.invoke(app, ["iteration", "--cluster", "dgx-a100", "--micro-batch", "1",
                                 "--model", str(path)])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "model.width" in result.stderr


def test_cli_text_breakdown_names_every_loss():
    result = runner.invoke(app, ["iteration", "--model", "gpt2", "--cluster", "dgx-a100", "--nodes", "2",
                                 "--micro-batch", "8", "--slow-node", "1.2"])
    assert result.exit_code == 0
    for text in ("overlap interference", "host overhead", "straggler wait", "sync ddp",
                 "transport rdma", "slow node x1.2", f"GPU speed spread {losses.SPEED_CV * 100:.3g}% (one-sided)"):
        assert text in result.stdout


@pytest.mark.parametrize("dtype, micro_batch", [("fp16", 256), ("fp32", 112)])
def test_nvidias_resnet50_configurations_fit_a_16gb_v100(dtype, micro_batch):
    """DeepLearningExamples trains ResNet-50 on DGX-1V (V100 16 GB) at AMP micro-batch 256 and
    FP32 112 (PyTorch/Classification/ConvNets/configs.yml): the memory model must let them fit."""
    result = runner.invoke(app, ["iteration", "--model", "resnet-50", "--cluster", "v100-abci-4x", "--gpus", "1",
                                 "--optimizer", "sgd", "--compute-dtype", dtype, "--micro-batch", str(micro_batch),
                                 "--json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["memory"]["fits"]


def test_a_model_given_by_its_count_has_logits():
    """A decoder LM always has a vocabulary: a bare count gets GPT-3's (50,257) for its logits'
    memory, and no embedding beside its 12·L·h² layers."""
    from costmodel.training import memory
    from costmodel.training.workloads import DERIVED_VOCAB

    model = load_model("125M")
    assert model.logits_vocab == DERIVED_VOCAB and model.late_fraction == 0.0
    assert memory.logits_bytes(model, 48, 2048, 2) == 48 * 2048 * DERIVED_VOCAB * (2 + 4 + 4)
    result = runner.invoke(app, ["iteration", "--model", "125M", "--cluster", "dgx-a100", "--micro-batch", "48",
                                 "--json"])
    assert json.loads(result.stdout)["memory"]["logits_bytes"] > 40e9


def test_a_transformer_file_needs_its_vocabulary(tmp_path):
    path = _write(tmp_path, "[model]\nlayers = 12\nhidden_size = 768\nheads = 12\nseq_len = 1024\n")
    result = runner.invoke(app, ["iteration", "--cluster", "dgx-a100", "--micro-batch", "8", "--model", str(path)])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "model.vocab" in result.stderr
    _write(tmp_path, "[model]\nlayers = 12\nhidden_size = 768\nheads = 12\nseq_len = 1024\nvocab = 50257\n")
    assert load_model(str(path)).vocab == 50257


@pytest.mark.parametrize("value", ['"11M"', "true", "0", "-3"])
def test_an_image_models_numbers_must_be_numbers(tmp_path, value):
    path = _write(tmp_path, f"kind = \"cnn\"\nparams = \"25M\"\nflops_per_sample = 24.54e9\n"
                            f"activation_elements_per_sample = {value}\n")
    result = runner.invoke(app, ["iteration", "--cluster", "dgx-a100", "--micro-batch", "8", "--model", str(path)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "model.activation_elements_per_sample" in result.stderr


@pytest.mark.parametrize(("text", "field"), [
    ("params = 10000000\nvocab = 50257\ntied_embeddings = false\n", "model.vocab"),  # 50,257 x 512 > 10M
    ("params = 10000000\nvocab = 50257\n", "model.vocab"),
    ("params = 124000000\nvocab = 50257\nembedding_params = 200000000\n", "model.embedding_params"),
])
def test_an_input_embedding_larger_than_the_model_is_refused(tmp_path, text, field):
    """The input embedding is a part of params: one larger than them (given, or vocab × hidden
    of the derived shape) gave an untied model a negative matmul count and a negative compute
    time (forward -0.65 ms on an H100)."""
    path = _write(tmp_path, f"[model]\n{text}")
    with pytest.raises(InputError, match=field):
        load_model(str(path))
    result = runner.invoke(app, ["iteration", "--cluster", "dgx-h100", "--micro-batch", "4", "--model", str(path)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and field in result.stderr


GPT2_SHAPE = "layers = 12\nhidden_size = 768\nheads = 12\nvocab = 50257\nseq_len = 1024\n"


@pytest.mark.parametrize(("body", "field"), [
    ('[model]\nlayers = "twelve"\nhidden_size = 768\nheads = 12\nvocab = 50257\n', "model.layers"),
    ("[model]\nlayers = [12]\nhidden_size = 768\nheads = 12\nvocab = 50257\n", "model.layers"),
    ("[model]\nlayers = 1e400\nhidden_size = 768\nheads = 12\nvocab = 50257\n", "model.layers"),
    ("model = 5\n", "model"),
    ('model = "gpt2"\n', "model"),
    ("seq_len = 512\n[model]\n" + GPT2_SHAPE.replace("seq_len = 1024\n", ""), "seq_len"),
    ("[model]\n" + GPT2_SHAPE.replace("layers = 12", "layers = 0"), "model.layers"),
    ("[model]\n" + GPT2_SHAPE.replace("heads = 12", "heads = 0"), "model.heads"),
    ("[model]\n" + GPT2_SHAPE.replace("seq_len = 1024", "seq_len = 0"), "model.seq_len"),
    ("[model]\n" + GPT2_SHAPE + "flops_per_sample = 1e9\n", "model.flops_per_sample"),
    ('[model]\nkind = "vit"\nparams = "86M"\nlayers = 12\nhidden_size = 768\nheads = 12\nflops_per_sample = 52.8e9\n',
     "model.seq_len"),
    # more heads than dimensions (their score memory was charged: a 2.31 s step); a CNN's tokens
    ("[model]\n" + GPT2_SHAPE.replace("heads = 12", "heads = 1000"), "model.heads"),
    ('[model]\nkind = "cnn"\nparams = 25000000\nflops_per_sample = 4.1e9\ntensors = 161\n'
     'activation_elements_per_sample = 2.5e7\nimage_size = 224\nseq_len = 128\n', "model.seq_len"),
])
def test_a_malformed_model_file_is_one_line_naming_the_field(tmp_path, body, field):
    """Found by a QA pass (2026-11-28): these gave tracebacks (a layer count read before it was
    checked, a non-table `model` key), or ran on nonsense (no layers: 1-byte FSDP units and a
    6,553 s step; no tokens: no compute; a top-level key beside [model] or a transformer's
    flops_per_sample silently ignored; a ViT at the derived 2,048 tokens)."""
    path = _write(tmp_path, body)
    for command in (["iteration", "--micro-batch", "8"], ["plan", "--global-batch", "64"]):
        result = runner.invoke(app, [*command, "--cluster", "dgx-h100", "--model", str(path)])
        assert result.exit_code == 2, result.output
        assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"error: {field}:"), result.stderr


def test_a_model_file_that_is_not_utf8_is_one_line(tmp_path):
    path = tmp_path / "binary.toml"
    path.write_bytes(b"\xff\xfe[model]\n")
    result = runner.invoke(app, ["iteration", "--cluster", "dgx-h100", "--micro-batch", "8", "--model", str(path)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "UTF-8" in result.stderr


def test_every_preset_written_as_a_file_loads_as_the_preset(tmp_path):
    """The file checks accept what the bundled presets are (a divisor rule for heads refused GPT-3
    1.3B's printed 24 heads over 2,048, review of 2026-11-28)."""
    import tomllib

    from costmodel.training.workloads import DATA_FILE

    with open(DATA_FILE, "rb") as handle:
        presets = tomllib.load(handle)["models"]
    for name, entry in presets.items():
        body = "[model]\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in entry.items())
        loaded = load_model(str(_write(tmp_path, body)))
        preset = load_model(name)
        assert (loaded.params, loaded.layers, loaded.hidden_size, loaded.heads, loaded.seq_len, loaded.kind) == \
            (preset.params, preset.layers, preset.hidden_size, preset.heads, preset.seq_len, preset.kind), name


def test_a_bert_file_without_seq_len_needs_the_option(tmp_path):
    """A BERT file without seq_len ran at the derived 2,048 tokens (GPT-3's), 4-16x BERT's
    pretraining sequences; --seq-len gives it (a review found the first fix refused it even then)."""
    path = _write(tmp_path, '[model]\nkind = "bert"\n' + GPT2_SHAPE.replace("seq_len = 1024\n", "").replace("50257", "30522"))
    for command in (["iteration", "--micro-batch", "8"], ["plan", "--global-batch", "64"]):
        result = runner.invoke(app, [*command, "--cluster", "dgx-h100", "--model", str(path)])
        assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
        assert result.stderr.startswith("error: seq_len: got 'missing'; allowed: --seq-len, or seq_len in the model file")
        result = runner.invoke(app, [*command, "--cluster", "dgx-h100", "--model", str(path), "--seq-len", "128"])
        assert result.exit_code == 0 and "seq 128" in result.output, result.output


def test_heads_need_not_divide_the_hidden_size(tmp_path):
    """GPT-3 1.3B has 24 heads of 128 over a hidden size of 2,048: a file saying so is taken."""
    path = _write(tmp_path, "[model]\n" + GPT2_SHAPE.replace("hidden_size = 768", "hidden_size = 2048")
                  .replace("heads = 12", "heads = 24"))
    result = runner.invoke(app, ["iteration", "--micro-batch", "8", "--cluster", "dgx-h100", "--model", str(path)])
    assert result.exit_code == 0, result.output


def test_a_shape_too_large_names_the_field_typed(tmp_path):
    """An audit (2026-11-30): layers = 1e12 was refused as 'params: got 7077888000038597632', a
    count the user never typed; the error now names the two fields typed and what they make (it
    named the layers alone, and blamed them for a hidden_size of 1e12: CLI audit, 2026-12-01)."""
    path = _write(tmp_path, "[model]\nlayers = 1000000000000\nhidden_size = 768\nheads = 12\nvocab = 50257\n"
                            "seq_len = 1024\n")
    with pytest.raises(InputError, match=r"^model\.layers and model\.hidden_size: got '1000000000000 and 768'; "
                                         r"allowed: a layer count and width whose parameters \(12 x layers x "
                                         r"hidden_size\^2 \+ embeddings, here 7\.08e\+18\)"):
        load_model(str(path))
