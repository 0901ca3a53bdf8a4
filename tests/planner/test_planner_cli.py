"""``dpcost plan`` through typer's CliRunner: JSON shape, text output, infeasible requests."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from costmodel.commands import plan_cmd
from costmodel.commands.options import for_typer
from costmodel.planner.recommend import plan
from costmodel.training.workloads import load_model
from dpbase.errors import InputError, NotApplicableError

runner = CliRunner()
app = typer.Typer()
app.command("plan")(for_typer(plan_cmd.plan))  # as cli builds it: the declared options
app.command("other")(lambda: None)  # two commands: typer keeps the "plan" sub-command name

BASE = ["plan", "--model", "gpt2", "--cluster", "dgx-h100", "--nodes", "2", "--seq-len", "512"]
BEST_FIELDS = {"algorithm", "micro_batch", "accumulation_steps", "gpus", "bucket_bytes",
               "grad_dtype", "zero_stage", "total_s", "samples_per_s"}


def test_json_has_best_candidates_and_reason():
    result = runner.invoke(app, [*BASE, "--global-batch", "64", "--top", "5", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert BEST_FIELDS <= set(data["best"])
    assert len(data["candidates"]) == 5 and all(BEST_FIELDS <= set(c) for c in data["candidates"])
    assert data["candidates"][0] == data["best"]
    best = data["best"]
    assert best["micro_batch"] * best["accumulation_steps"] * best["gpus"] == 64
    assert isinstance(data["reason"], str) and best["algorithm"] in data["reason"]
    assert {r["parameter"] for r in data["sensitivity"]} == {"link bandwidth", "link latency", "MFU"}


def test_text_output_has_reason_table_and_sensitivity():
    result = runner.invoke(app, [*BASE, "--global-batch", "64", "--top", "3"])
    assert result.exit_code == 0, result.output
    for text in ("Recommended:", "Bound by", "Top 3:", "samples/s", "Sensitivity"):
        assert text in result.stdout


@pytest.mark.parametrize("args,words", [
    (["--global-batch", "0"], "global_batch"),
    (["--global-batch", "64", "--objective", "time-to-train"], "tokens"),
    (["--global-batch", "64", "--grad-dtypes", "int4"], "grad_dtypes"),
    (["--global-batch", "64", "--buckets", "0MiB"], "buckets"),
    (["--global-batch", "17", "--min-gpus", "2"], "multiple of a GPU count"),
])
def test_bad_input_is_one_clear_line_and_exit_2(args, words):
    result = runner.invoke(app, [*BASE, *args])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and words in result.output


def test_indivisible_batch_names_the_batches_that_would_work():
    with pytest.raises(InputError, match="e.g. 16 or 24"):
        plan("gpt2", "dgx-h100", nodes=4, global_batch=20, min_gpus=8)


def test_nothing_fits_says_what_to_change():
    with pytest.raises(NotApplicableError) as error:
        plan("llama2-70b", "dgx-h100", nodes=2, global_batch=64, seq_len=2048, recompute=False)
    message = str(error.value)
    assert "needs" in message and "GB per GPU" in message and "use at least" in message
    with pytest.raises(NotApplicableError, match="activation recomputation.*activations and logits alone exceed"):
        plan("llama2-70b", "dgx-h100", nodes=64, global_batch=1024, seq_len=4096, recompute=False)
    with pytest.raises(NotApplicableError, match="use at least.*already recomputes"):
        plan("llama2-70b", "dgx-h100", nodes=1, global_batch=8, seq_len=4096)


def test_nccl_backend_sweeps_nccl_algorithms_and_its_own_choice():
    result = plan("gpt2", "dgx-h100", nodes=2, global_batch=32, seq_len=512, backend="nccl",
                  explain=False, top=40)
    assert {row.algorithm for row in result.candidates} <= {"auto", "ring", "double-binary-tree",
                                                           "in-network", "none"}


def test_better_links_that_read_slower_say_why():
    """NCCL chooses by its own estimate, and faster links can move its choice to a slower
    algorithm: the line says so (review, 2026-11-29)."""
    from costmodel.commands.plan_cmd import _sensitivity

    rows = [{"parameter": "link bandwidth", "factor": 0.5, "samples_per_s": 90.0, "change": -0.033},
            {"parameter": "link bandwidth", "factor": 1.5, "samples_per_s": 99.9, "change": -0.001},
            {"parameter": "MFU", "factor": 1.5, "samples_per_s": 120.0, "change": 0.2}]
    text = "\n".join(_sensitivity(rows))
    assert "algorithm choice" in next(line for line in text.splitlines() if "link bandwidth" in line)
    rows[1]["change"] = 0.01
    assert "algorithm choice" not in "\n".join(_sensitivity(rows))


def test_the_table_names_its_volume_the_bandwidth_optimal_one():
    """Review F (2026-11-29): the column read "sent/GPU", the name of `collective`'s busiest-rank
    figure, which an in-network all-reduce makes 1.875× smaller on 16 GPUs; the column is the
    bandwidth-optimal (ring) volume the tie-break reads: plain DDP sends 2 (N-1)/N of the gradient."""
    args = [*BASE, "--global-batch", "64", "--grad-dtypes", "bf16", "--top", "1", "--algorithms", "in-network"]
    text = runner.invoke(app, args)
    data = json.loads(runner.invoke(app, [*args, "--json"]).stdout)["best"]
    assert text.exit_code == 0 and "sent/GPU" not in text.stdout
    header, _, row = text.stdout.split("Top 1:\n")[1].splitlines()[:3]
    column = header.index("ring volume/GPU")
    gpus, params = data["gpus"], load_model("gpt2").params
    assert (data["algorithm"], data["zero_stage"]) == ("in-network", 0)  # NVLS moves less; the column does not
    assert data["bytes_sent"] == pytest.approx(2 * (gpus - 1) / gpus * 2 * params, rel=1e-9)
    assert row[column:].split()[:2] == [f"{data['bytes_sent'] / 1e9:.1f}", "GB"]



def test_the_header_names_a_sequence_only_for_models_that_have_one():
    """A CNN's plan read "global batch 1024, seq 0" (iteration already left it out)."""
    cnn = runner.invoke(app, ["plan", "--model", "resnet-50", "--cluster", "dgx-a100", "--nodes", "1",
                              "--global-batch", "256", "--top", "1"])
    assert cnn.exit_code == 0, cnn.output
    assert "global batch 256, objective throughput" in cnn.output.splitlines()[0]
    text = runner.invoke(app, [*BASE, "--global-batch", "64", "--top", "1"])
    assert text.exit_code == 0 and "global batch 64, seq 512, objective" in text.output.splitlines()[0]
