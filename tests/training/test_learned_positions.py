"""A sequence longer than a model's learned position table is refused, not timed: GPT-2's 1,024
learned positions end there (a longer context is another model, with another table)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from cli import app
from costmodel.planner.recommend import plan
from costmodel.training.oncluster import iteration
from costmodel.training.workloads import load_model, model_names
from dpbase.errors import InputError

runner = CliRunner()
ITERATION = ["iteration", "--cluster", "dgx-a100", "--micro-batch", "1"]


@pytest.mark.parametrize("model,table", [("gpt2", 1024), ("gpt2-xl", 1024), ("gpt3-175b", 2048),
                                         ("bert-large", 512), ("roberta-base", 512), ("opt-125m", 2048),
                                         ("opt-66b", 2048), ("bart-large", 1024)])
def test_a_learned_table_ends_where_its_source_says(model, table):
    assert load_model(model).max_positions == table
    assert runner.invoke(app, [*ITERATION, "--model", model, "--seq-len", str(table)]).exit_code == 0
    result = runner.invoke(app, [*ITERATION, "--model", model, "--seq-len", str(table + 1)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    line = result.output.strip()
    assert "\n" not in line and f"got {table + 1}" in line and f"at most {table:,} for {model}" in line


@pytest.mark.parametrize("model", ["llama2-7b", "mpt-7b", "transformer-xl-base", "mistral-7b"])
def test_positions_without_a_table_take_any_length(model):
    """Rotary (Llama, Mistral), relative (Transformer-XL) positions; MPT's learned table is sized by
    the run's max_seq_len (llm-foundry runs it at 4,096 and beyond)."""
    assert load_model(model).max_positions == 0
    assert runner.invoke(app, [*ITERATION, "--model", model, "--seq-len", "16384"]).exit_code == 0


def test_every_preset_runs_at_its_own_sequence_length():
    for name in model_names():
        workload = load_model(name)
        assert not workload.max_positions or workload.seq_len <= workload.max_positions, name


def test_the_planner_and_the_api_refuse_it_too():
    with pytest.raises(InputError, match="seq_len: got 2048.*at most 1,024 for gpt2"):
        plan("gpt2", "dgx-a100", nodes=1, global_batch=64, seq_len=2048)
    with pytest.raises(InputError, match="at most 512 for bert-large"):
        iteration("bert-large", "dgx-a100", micro_batch=1, seq_len=1024)
    result = runner.invoke(app, ["plan", "--model", "gpt2", "--cluster", "dgx-a100", "--global-batch", "64",
                                 "--seq-len", "4096"])
    assert result.exit_code == 2 and "at most 1,024 for gpt2" in result.output


def _file(tmp_path, text):
    path = tmp_path / "mine.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_model_file_states_its_own_table(tmp_path):
    body = "[model]\nlayers = 12\nhidden_size = 768\nheads = 12\nvocab = 50257\nmax_positions = 2048\n"
    path = _file(tmp_path, body + "seq_len = 2048\n")
    assert load_model(path).max_positions == 2048
    result = runner.invoke(app, [*ITERATION, "--model", path, "--seq-len", "4096"])
    assert result.exit_code == 2 and "at most 2,048 for mine" in result.output
    with pytest.raises(InputError, match=r"model\.seq_len: got 4096.*at most 2,048"):
        load_model(_file(tmp_path, body + "seq_len = 4096\n"))
    assert load_model(_file(tmp_path, body.replace("max_positions = 2048\n", "") + "seq_len = 8192\n")).seq_len == 8192
    # without seq_len: GPT-3's 2,048, or the table's end where that is shorter
    assert load_model(_file(tmp_path, body.replace("2048", "1024"))).seq_len == 1024


def test_a_cnn_file_has_no_position_table(tmp_path):
    body = ("[model]\nkind = \"cnn\"\nparams = 25557032\nflops_per_sample = 12.3e9\n"
            "activation_elements_per_sample = 1.1e8\ntensors = 161\nmax_positions = 512\n")
    with pytest.raises(InputError, match=r"model\.max_positions: got 512.*cnn"):
        load_model(_file(tmp_path, body))
