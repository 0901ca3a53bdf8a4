"""formula / collective / compare through typer's CliRunner, including bad input."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli import app

runner = CliRunner()
BASE = ["--ranks", "8", "--size", "64MB", "--alpha", "2us", "--bandwidth", "25GB/s"]
KEYS = {"primitive", "algorithm", "ranks", "size_bytes", "time_s", "latency_s", "bandwidth_s", "reduction_s",
        "steps", "bytes_sent_max", "bytes_received_max", "bytes_total", "algbw_Bps", "busbw_Bps", "lower_bound_s"}


def test_collective_json_has_every_key():
    result = runner.invoke(app, ["collective", "all-reduce", "--algorithm", "ring", *BASE, "--json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert KEYS <= set(data)
    assert data["busbw_Bps"] == pytest.approx(data["algbw_Bps"] * 2 * 7 / 8)


def test_collective_human_output_and_auto():
    result = runner.invoke(app, ["collective", "all-reduce", *BASE])
    assert result.exit_code == 0 and "busbw" in result.stdout


def test_compare_ranks_all_and_marks_winner():
    result = runner.invoke(app, ["compare", "all-reduce", *BASE, "--json"])
    data = json.loads(result.stdout)
    assert [d["time_s"] for d in data] == sorted(d["time_s"] for d in data)
    assert data[0]["winner"] and len(data) >= 8
    assert all(d["time_s"] >= d["lower_bound_s"] for d in data)
    # a plain link has no reducing switch: compare lists what collective's auto chooses from
    assert "in-network" not in {d["algorithm"] for d in data}
    chosen = json.loads(runner.invoke(app, ["collective", "all-reduce", *BASE, "--json"]).stdout)
    assert data[0]["algorithm"] == (chosen[0] if isinstance(chosen, list) else chosen)["algorithm"]
    text = runner.invoke(app, ["compare", "all-reduce", *BASE]).stdout
    assert "*" in text and "lower bound" in text


def test_formula_text_latex_and_json():
    result = runner.invoke(app, ["formula", "all-reduce", "ring", "--json"])
    data = json.loads(result.stdout)
    assert data["source"] and data["lower_bound"] and "alpha" in data["time"]
    latex = runner.invoke(app, ["formula", "all-gather", "bruck", "--latex"]).stdout
    assert "\\lceil" in latex
    every = json.loads(runner.invoke(app, ["formula", "reduce-scatter", "--json"]).stdout)
    assert {d["algorithm"] for d in every} == {"ring", "recursive-halving", "pairwise", "direct"}


def test_cluster_query_names_nodes_and_bottleneck():
    result = runner.invoke(app, ["collective", "all-reduce", "--algorithm", "ring", "--cluster", "dgx-a100",
                                 "--nodes", "2", "--size", "1GB", "--json"])
    data = json.loads(result.stdout)
    assert data["nodes"] == 2 and data["gpus_per_node"] == 8 and data["ranks"] == 16
    assert data["bottleneck"].startswith("ib-")  # a ring across two DGX nodes is limited by the NICs


@pytest.mark.parametrize("args", [
    ["collective", "all-reduce", "--algorithm", "ring", "--ranks", "0", "--size", "1MB", "--alpha", "1us", "--bandwidth", "1GB/s"],
    ["collective", "all-reduce", "--algorithm", "ring", "--ranks", "4", "--size", "-5MB", "--alpha", "1us", "--bandwidth", "1GB/s"],
    ["collective", "all-reduce", "--algorithm", "ring", "--ranks", "4", "--size", "1MX", "--alpha", "1us", "--bandwidth", "1GB/s"],
    ["collective", "all-reduce", "--algorithm", "ring", "--ranks", "4", "--size", "1MB", "--alpha", "1 parsec", "--bandwidth", "1GB/s"],
    ["collective", "all-reduce", "--algorithm", "ring", "--ranks", "4", "--size", "1MB", "--alpha", "1us", "--bandwidth", "fast"],
    ["collective", "all-reduce", "--algorithm", "bruck", "--ranks", "4", "--size", "1MB", "--alpha", "1us", "--bandwidth", "1GB/s"],
    ["collective", "all-smash", "--algorithm", "ring", "--ranks", "4", "--size", "1MB", "--alpha", "1us", "--bandwidth", "1GB/s"],
    ["collective", "all-reduce", "--algorithm", "quantum", "--ranks", "4", "--size", "1MB", "--alpha", "1us", "--bandwidth", "1GB/s"],
    ["collective", "all-reduce", "--algorithm", "ring", "--cluster", "no-such-box", "--size", "1MB"],
    ["collective", "all-reduce", "--algorithm", "parameter-server", "--colocated", "--servers", "9", "--ranks", "4", "--size", "1MB", "--alpha", "1us", "--bandwidth", "1GB/s"],
    ["formula", "all-reduce", "bruck"],
])
def test_bad_input_is_one_line_and_exit_2(args):
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "Traceback" not in result.output
