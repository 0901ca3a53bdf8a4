"""The hierarchical all-reduce on a bare link takes its node size and inter-node rates.

Found by a QA pass (2026-11-28): `--gpus-per-node`, `--alpha-inter` and `--bandwidth-inter` were
dropped on a bare link (CLI, sweep and the Python API), so the algorithm ran as one node of 8
(70 ms, the ring's time) where its own formula gives 110 ms for 2 nodes of 4."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import costmodel
from cli import app
from costmodel.collectives.api import predict as predict_on_link

runner = CliRunner()
LINK = ("-N", "8", "--size", "1GB", "--alpha", "5us", "--bandwidth", "25GB/s", "-a", "hierarchical")
INTER = ("--alpha-inter", "10us", "--bandwidth-inter", "5GB/s", "--gpus-per-node", "4")


def _formula() -> float:
    return predict_on_link("all-reduce", "hierarchical", ranks=8, size_bytes=1e9, alpha_s=5e-6, bandwidth_Bps=25e9,
                           alpha_inter_s=10e-6, bandwidth_inter_Bps=5e9, gpus_per_node=4).time_s


def test_the_cli_passes_them():
    result = runner.invoke(app, ["collective", "all-reduce", *LINK, *INTER, "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["time_s"] == pytest.approx(_formula(), rel=1e-12) and found["time_s"] > 0.1
    ring = runner.invoke(app, ["collective", "all-reduce", *LINK[:-2], "-a", "ring", "--json"])
    assert found["time_s"] > json.loads(ring.stdout)["time_s"]  # the slow inter-node level shows


def test_the_api_passes_them():
    found = costmodel.predict("all-reduce", 1e9, "hierarchical", ranks=8, alpha_s=5e-6, bandwidth_Bps=25e9,
                              gpus_per_node=4, alpha_inter_s=10e-6, bandwidth_inter_Bps=5e9)
    assert found.time_s == pytest.approx(_formula(), rel=1e-12)


def test_a_node_size_that_does_not_divide_the_ranks_is_refused():
    result = runner.invoke(app, ["collective", "all-reduce", *LINK, "--gpus-per-node", "3"])
    assert result.exit_code == 2 and result.stderr.startswith("error: gpus_per_node: got 3;")


def test_inter_node_rates_are_refused_where_nothing_uses_them():
    """`-a ring --alpha-inter 10us` was silently ignored (QA pass, 2026-11-28)."""
    for algorithm in ("ring", "auto"):
        result = runner.invoke(app, ["collective", "all-reduce", *LINK[:-2], "-a", algorithm, "--alpha-inter", "10us"])
        assert result.exit_code == 2 and result.stderr.startswith("error: --alpha-inter: got '10us'; allowed: only "
                                                                  "with --algorithm hierarchical")


def test_the_node_size_goes_to_hierarchical_only_and_through_the_sweep():
    """Review of 2026-11-28: the API refused gpus_per_node beside ring (the CLI accepts it and
    gives it to the algorithms that take it), and the sweep's vectorised path dropped it."""
    from costmodel.cluster.api import sweep

    ring = costmodel.predict("all-reduce", 1e9, "ring", ranks=8, alpha_s=5e-6, bandwidth_Bps=25e9, gpus_per_node=4)
    assert ring.params == {} and ring.time_s > 0
    rows = sweep("all-reduce", "1GB", ranks=[8], algorithms=["ring", "hierarchical"], alpha_s="5us",
                 bandwidth_Bps="25GB/s", gpus_per_node=4).to_dict("records")
    found = {row["algorithm"]: row for row in rows}
    assert found["hierarchical"]["params"] == {"gpus_per_node": 4, "leaders": False} and found["ring"]["params"] == {}
    assert found["hierarchical"]["time_s"] == pytest.approx(
        predict_on_link("all-reduce", "hierarchical", ranks=8, size_bytes=1e9, alpha_s=5e-6, bandwidth_Bps=25e9,
                        gpus_per_node=4).time_s, rel=1e-12)


def test_a_node_size_below_one_is_refused_whatever_the_algorithm(cli_error):
    """A node of 0 GPUs describes no hardware (ring ran with it); one that does not divide the
    ranks is the hierarchical algorithm's to refuse, so a sweep over ranks keeps the rows it can answer."""
    for algorithm in ("ring", "auto"):
        line = cli_error(["collective", "all-reduce", *LINK[:-2], "-a", algorithm, "--gpus-per-node", "0"])
        assert line.startswith("error: gpus_per_node: got 0; allowed: an integer >= 1")
    from costmodel.cluster.api import sweep

    rows = sweep("all-reduce", "1GB", ranks=[2, 4, 8, 16], algorithms=["ring"], alpha_s="5us", bandwidth_Bps="25GB/s",
                 gpus_per_node=8)
    assert len(rows) == 4


def test_chunks_are_refused_without_a_pipeline(cli_error):
    line = cli_error(["collective", "all-reduce", *LINK[:-2], "-a", "parameter-server", "--no-pipeline", "--chunks", "4"])
    assert line.startswith("error: --chunks: got 4; allowed: left out with --no-pipeline")
    # an algorithm that takes neither is refused for what it does not take, as before
    line = cli_error(["collective", "all-reduce", *LINK[:-2], "-a", "ring", "--no-pipeline", "--chunks", "4"])
    assert line.startswith("error: --chunks: got 4; allowed: a parameter of ring all-reduce: it has none")
