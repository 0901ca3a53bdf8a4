"""Options a collective query would have ignored are refused, one line each (review, 2026-11-28)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli import app

runner = CliRunner()
BARE = ["all-reduce", "--ranks", "8", "--alpha", "5us", "--bandwidth", "25GB/s"]


@pytest.mark.parametrize("command", ["collective", "compare"])
def test_nodes_without_a_cluster_are_refused(command, cli_error):
    assert cli_error([command, *BARE, "--size", "1MB", "--nodes", "64"]).startswith("error: --nodes: ")
    assert cli_error([command, "all-reduce", "--link", "ib-ndr", "--ranks", "8", "--size", "1MB", "--nodes", "3"]) \
        .startswith("error: --nodes: ")


@pytest.mark.parametrize("flag", [["--servers", "4"], ["--chunks", "3"], ["--colocated"], ["--no-pipeline"]])
def test_algorithm_parameters_under_auto_are_refused(flag, cli_error):
    """Under auto the library (or the fastest algorithm) chooses, and nothing takes them: the
    answer was the same with and without."""
    line = cli_error(["collective", "all-reduce", "--cluster", "dgx-h100", "--nodes", "2", "--size", "1GiB", *flag])
    assert "not auto" in line
    assert "not auto" in cli_error(["collective", *BARE, "--size", "1MB", *flag])


def test_compare_on_a_plain_link_ranks_what_auto_chooses_from():
    """A plain link has no reducing switch: compare marked in-network the winner (73 µs) where
    collective's auto and sweep answered rabenseifner (139 µs)."""
    args = ["all-reduce", "--ranks", "64", "--size", "1MB", "--alpha", "5us", "--bandwidth", "25GB/s", "--json"]
    ranked = json.loads(runner.invoke(app, ["compare", *args]).stdout)
    auto = json.loads(runner.invoke(app, ["collective", *args]).stdout)
    auto = auto[0] if isinstance(auto, list) else auto
    assert "in-network" not in {row["algorithm"] for row in ranked}
    assert ranked[0]["winner"] and ranked[0]["algorithm"] == auto["algorithm"]


def test_sweep_refuses_a_stack_beside_a_named_algorithm_as_collective_does(cli_error):
    """The sweep's vectorised path skipped the query's checks: --stack with -a ring gave a row."""
    line = cli_error(["sweep", *BARE, "--stack", "nccl", "-a", "ring", "--sizes", "1MB"])
    assert line.startswith("error: --stack: ")
    from costmodel.cluster.api import sweep
    from dpbase.errors import InputError

    with pytest.raises(InputError, match="^stack: "):
        sweep("all-reduce", "1MB", ranks=8, algorithms="ring", alpha_s="5us", bandwidth_Bps="25GB/s", stack="nccl")


@pytest.mark.parametrize("args", [
    ["calibrate", "tests/data/calibration/raw/abci_a_1n.txt", "--html", "fit.toml"],
    ["plan", "--model", "gpt2", "--cluster", "dgx-h100", "--global-batch", "64", "--html", "report.toml"],
    ["plot", "sweep", "all-reduce", "--ranks", "8", "--alpha", "5us", "--bandwidth", "25GB/s", "-o", "sweep.png"],
])
def test_an_html_output_must_be_named_html(args, cli_error, tmp_path, monkeypatch):
    """calibrate --html fit.toml wrote HTML into a file named as a profile; plot refused it alone."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(tmp_path)
    args = [str(root / a) if a.startswith("tests/") else a for a in args]
    assert "a .html path" in cli_error(args)
    assert not any(tmp_path.iterdir())


def test_a_chart_without_hardware_names_only_its_own_options(cli_error):
    """plot has no --link: its error offered one."""
    line = cli_error(["plot", "sweep", "all-reduce", "-o", "a.html"])
    assert "--alpha and --bandwidth, or --cluster" in line and "--link" not in line


def test_a_printed_formula_defines_the_functions_it_uses():
    """recursive doubling's all-gather printed MinSum(...) with no word of what it is."""
    out = runner.invoke(app, ["formula", "all-gather", "recursive-doubling"]).stdout
    assert "MinSum(" in out and "where        MinSum(r, L) = Σ_{j<L} min(2^j, r)" in out
    bruck = json.loads(runner.invoke(app, ["formula", "all-to-all", "bruck", "--json"]).stdout)
    assert ("PopSum(" in bruck["time"]) == any(w.startswith("PopSum") for w in bruck["where"])
    assert json.loads(runner.invoke(app, ["formula", "all-reduce", "ring", "--json"]).stdout)["where"] == []
