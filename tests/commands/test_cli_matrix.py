"""Every query command answers in text and in JSON, under both backends, without a traceback."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli import app

runner = CliRunner()

QUERIES = [
    "collective all-reduce --cluster dgx-h100 --size 1GB",
    "collective all-reduce --cluster dgx-a100 --nodes 2 --size 64KB",
    "collective all-reduce --cluster dgx-h100 --nodes 2 --size 1GB",
    "collective all-reduce --cluster dgx-b200 --nodes 4 --size 1MB",
    "collective all-gather --cluster dgx-a100 --nodes 2 --size 1GB --algorithm ring",
    "collective reduce-scatter --cluster l40s-4x-pcie --size 256MiB",
    "compare all-reduce --cluster dgx-h100 --nodes 2 --size 1GB",
    "compare all-reduce --cluster dgx-a100 --size 64KB",
    "compare all-gather --cluster dgx-a100 --nodes 2 --size 4MiB",
    "compare all-reduce --cluster l40s-tcp-1x --size 64MB",
    "collective all-reduce --cluster dgx-h100 --gpus-per-node 1 --size 1GB",
    "iteration --model gpt2 --cluster dgx-a100 --nodes 2 --micro-batch 8 --seq-len 1024",
]


@pytest.mark.parametrize("backend", ["ideal", "nccl"])
@pytest.mark.parametrize("query", QUERIES)
def test_text_and_json(query, backend):
    args = [*query.split(), "--backend", backend]
    text = runner.invoke(app, args)
    assert text.exit_code == 0, text.output
    assert text.stdout.strip() and "Traceback" not in text.output
    as_json = runner.invoke(app, [*args, "--json"])
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.stdout)
    rows = data if isinstance(data, list) else [data]
    assert rows and all(isinstance(r, dict) for r in rows)


def test_nccl_compare_ranks_every_enabled_algorithm_and_marks_nccls_choice():
    result = runner.invoke(app, "compare all-reduce --cluster dgx-h100 --nodes 2 --size 1GB --backend nccl --json".split())
    rows = json.loads(result.stdout)
    names = [r["algorithm"] for r in rows]
    assert {"ring", "tree"} <= set(names) and len(names) == len(set(names))
    assert [r["time_s"] for r in rows] == sorted(r["time_s"] for r in rows)
    chosen = json.loads(runner.invoke(app, "collective all-reduce --cluster dgx-h100 --nodes 2 --size 1GB "
                                           "--backend nccl --json".split()).stdout)["algorithm"]
    assert [r["algorithm"] for r in rows if r.get("winner")] == [chosen]


def test_recompute_flags():
    base = "plan --model llama2-70b --cluster dgx-h100 --nodes 64 --global-batch 1024 --seq-len 4096".split()
    needed = json.loads(runner.invoke(app, [*base, "--json"]).stdout)
    assert needed["best"]["recompute"] is True and "recomputation" in needed["reason"].lower()
    never = runner.invoke(app, [*base, "--no-recompute"])
    assert never.exit_code == 2 and "recomputation" in never.stderr
    text = runner.invoke(app, base).stdout
    assert "recompute" in text.splitlines()[text.splitlines().index("Top 10:") + 1]

    small = "iteration --model llama2-7b --cluster dgx-h100 --micro-batch 1 --seq-len 4096 --zero 3 --json".split()
    plain, checkpointed = (json.loads(runner.invoke(app, small + extra).stdout) for extra in ([], ["--recompute"]))
    assert checkpointed["memory"]["activations_bytes"] < plain["memory"]["activations_bytes"] / 4
    assert checkpointed["backward_s"] > plain["backward_s"]


def test_one_rank_is_one_answer_of_zero_under_both_backends():
    for backend in ("ideal", "nccl"):
        rows = json.loads(runner.invoke(app, ["compare", "all-reduce", "--cluster", "l40s-tcp-1x", "--size", "64MB",
                                              "--backend", backend, "--json"]).stdout)
        assert len(rows) == 1 and rows[0]["algorithm"] == "none" and rows[0]["time_s"] == 0
    table = runner.invoke(app, ["nccl-table", "--cluster", "l40s-tcp-1x"])
    assert table.exit_code == 0 and "one rank" in table.stdout


def test_iteration_says_when_recomputation_is_on_and_when_it_would_fit():
    base = "iteration --model llama2-70b --cluster dgx-h100 --nodes 64 --micro-batch 1 --seq-len 4096 --zero 3".split()
    hint = runner.invoke(app, base).stdout
    assert "DOES NOT FIT" in hint and "would fit: --recompute --zero 3" in hint
    on = runner.invoke(app, [*base, "--recompute"]).stdout
    assert "activation recomputation" in on.splitlines()[1] and ": fits" in on
