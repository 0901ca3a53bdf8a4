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


def test_the_node_size_goes_to_hierarchical_only_and_through_the_sweep(cli_error):
    """Review of 2026-11-28: the sweep's vectorised path dropped the node size. A later review: it
    was taken beside ring, auto and compare's every algorithm, which run over the one link, and
    answered as if it were not given. A single prediction now refuses it there; a sweep gives it to
    its hierarchical rows alone (and refuses it when none is swept)."""
    from costmodel.cluster.api import sweep
    from dpbase.errors import InputError

    with pytest.raises(InputError, match="^gpus_per_node: got 4; allowed: only with algorithm hierarchical"):
        costmodel.predict("all-reduce", 1e9, "ring", ranks=8, alpha_s=5e-6, bandwidth_Bps=25e9, gpus_per_node=4)
    for argv in (["collective", "all-reduce", *LINK[:-2], "-a", "ring", "--gpus-per-node", "4"],
                 ["collective", "all-reduce", *LINK[:-2], "--gpus-per-node", "4"],
                 ["compare", "all-reduce", *LINK[:-2], "--gpus-per-node", "4"],
                 ["sweep", "all-reduce", "-N", "8", "--sizes", "1GB", "--alpha", "5us", "--bandwidth", "25GB/s",
                  "-a", "ring", "--gpus-per-node", "4"]):
        assert cli_error(argv).startswith("error: --gpus-per-node: got 4; allowed: only with --algorithm hierarchical")
    rows = sweep("all-reduce", "1GB", ranks=[8], algorithms=["ring", "hierarchical"], alpha_s="5us",
                 bandwidth_Bps="25GB/s", gpus_per_node=4).to_dict("records")
    found = {row["algorithm"]: row for row in rows}
    assert found["hierarchical"]["params"] == {"gpus_per_node": 4, "leaders": False} and found["ring"]["params"] == {}
    assert found["hierarchical"]["time_s"] == pytest.approx(
        predict_on_link("all-reduce", "hierarchical", ranks=8, size_bytes=1e9, alpha_s=5e-6, bandwidth_Bps=25e9,
                        gpus_per_node=4).time_s, rel=1e-12)


def test_inter_node_rates_on_one_node_are_refused(cli_error):
    """`-N 8 -a hierarchical --alpha-inter 1ms` ran 8 ranks as one node of 8 (the default G): the
    inter-node rates took no part, and the answer was the same with or without them."""
    line = cli_error(["collective", "all-reduce", *LINK, "--alpha-inter", "1ms"])
    assert line == ("error: --alpha-inter: got '1ms'; allowed: more --ranks than --gpus-per-node (8, its default): "
                    "8 ranks are one node, where the hierarchical algorithm has no inter-node level")
    assert cli_error(["collective", "all-reduce", *LINK, "--bandwidth-inter", "1GB/s", "--gpus-per-node", "8"]) \
        .startswith("error: --bandwidth-inter: got '1GB/s'; allowed: more --ranks than --gpus-per-node (8): ")
    slow, fast = (runner.invoke(app, ["collective", "all-reduce", *LINK, "--gpus-per-node", "4", "--alpha-inter",
                                      alpha, "--json"]) for alpha in ("1ms", "1us"))
    assert json.loads(slow.stdout)["time_s"] > json.loads(fast.stdout)["time_s"]  # two nodes: they take part


def test_a_node_size_below_one_is_refused_whatever_the_algorithm(cli_error):
    """A node of 0 GPUs describes no hardware (ring ran with it); one that does not divide the
    ranks is the hierarchical algorithm's to refuse, so a sweep over ranks keeps the rows it can answer."""
    for algorithm in ("ring", "auto"):
        line = cli_error(["collective", "all-reduce", *LINK[:-2], "-a", algorithm, "--gpus-per-node", "0"])
        assert line.startswith("error: gpus_per_node: got 0; allowed: an integer >= 1")
    from costmodel.cluster.api import sweep

    rows = sweep("all-reduce", "1GB", ranks=[2, 4, 8, 16], algorithms=["ring", "hierarchical"], alpha_s="5us",
                 bandwidth_Bps="25GB/s", gpus_per_node=8)
    assert sorted(zip(rows["algorithm"], rows["ranks"])) == [("hierarchical", 8), ("hierarchical", 16), ("ring", 2),
                                                             ("ring", 4), ("ring", 8), ("ring", 16)]


def test_chunks_are_refused_without_a_pipeline(cli_error):
    line = cli_error(["collective", "all-reduce", *LINK[:-2], "-a", "parameter-server", "--no-pipeline", "--chunks", "4"])
    assert line.startswith("error: --chunks: got 4; allowed: left out with --no-pipeline")
    # an algorithm that takes neither is refused for what it does not take, as before
    line = cli_error(["collective", "all-reduce", *LINK[:-2], "-a", "ring", "--no-pipeline", "--chunks", "4"])
    assert line.startswith("error: --chunks: got 4; allowed: a parameter of ring all-reduce: it has none")
