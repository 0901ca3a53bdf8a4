"""Conflicting or unused flags are an error naming both (issue 18), never silently dropped."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from cli import app

runner = CliRunner()
BARE = ["--ranks", "8", "--alpha", "1us", "--bandwidth", "1GB/s"]


@pytest.mark.parametrize("args,named", [
    (["collective", "all-reduce", "--cluster", "dgx-h100", "--size", "1GB", "-a", "ring", "--alpha", "1s",
      "--bandwidth", "1B/s"], "--alpha"),
    (["collective", "all-reduce", "--cluster", "dgx-h100", "--size", "1GB", "--bandwidth", "1GB/s"], "--bandwidth"),
    (["collective", "all-reduce", "--cluster", "dgx-h100", "--size", "1GB", "--link", "ib-ndr"], "--link"),
    (["compare", "all-reduce", "--cluster", "dgx-h100", "--size", "1GB", "--alpha", "5us"], "--alpha"),
    (["collective", "all-reduce", "--link", "ib-ndr", "--ranks", "8", "--size", "1GB", "--bandwidth", "1GB/s"],
     "--bandwidth"),
    (["collective", "all-reduce", "--size", "1GB", "-a", "ring", "--servers", "2", *BARE], "--servers"),
    (["collective", "all-reduce", "--size", "1GB", "-a", "ring", "--chunks", "4", *BARE], "--chunks"),
    (["collective", "all-reduce", "--size", "1GB", "-a", "ring", "--colocated", *BARE], "--colocated"),
    (["collective", "all-reduce", "--size", "1GB", "-a", "ring", "--stack", "mpi", *BARE], "--stack"),
])
def test_conflicting_or_unused_flags_are_one_error_line(args, named):
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and named in lines[0]


def test_a_parameter_the_algorithm_has_is_used():
    base = runner.invoke(app, ["collective", "all-reduce", "--size", "1GB", "-a", "parameter-server", *BARE])
    two = runner.invoke(app, ["collective", "all-reduce", "--size", "1GB", "-a", "parameter-server",
                              "--servers", "2", *BARE])
    assert base.exit_code == two.exit_code == 0 and base.output != two.output


def test_a_clusters_calibrated_link_regimes_are_said_to_be_unused():
    """Regimes fitted by `dpcost calibrate` are one collective's cost on one layout: --link uses
    them; a cluster prediction cannot, and says so rather than dropping them silently."""
    import json
    from pathlib import Path

    from typer.testing import CliRunner

    from cli import app

    lab = str(Path(__file__).parents[1] / "data" / "hardware" / "my_cluster.toml")
    runner = CliRunner()
    two = json.loads(runner.invoke(app, ["collective", "all-reduce", "--cluster", lab, "--nodes", "2",
                                         "--size", "1GiB", "--json"]).stdout)
    assert "regimes of lab-roce-100 apply to --link predictions" in two["note"]
    assert "dpcost calibrate LOGS --system BASE -o FILE" in two["note"]
    one = json.loads(runner.invoke(app, ["collective", "all-reduce", "--cluster", lab, "--size", "1GiB",
                                         "--json"]).stdout)
    assert "regimes" not in (one["note"] or "")  # one node: its NIC carries nothing


def test_iteration_says_so_too():
    """The same note under `dpcost iteration` (text and JSON): its collectives come from the
    cluster's nominal link rates, not from the link's calibrated regimes."""
    import json
    from pathlib import Path

    lab = str(Path(__file__).parents[1] / "data" / "hardware" / "my_cluster.toml")
    args = ["iteration", "--model", "gpt2", "--cluster", lab, "--micro-batch", "4"]
    text = runner.invoke(app, [*args, "--nodes", "2"])
    assert text.exit_code == 0, text.output
    assert "note: the calibrated regimes of lab-roce-100 apply to --link predictions" in text.output
    assert "regimes of lab-roce-100" in json.loads(runner.invoke(app, [*args, "--nodes", "2", "--json"]).stdout)["note"]
    assert json.loads(runner.invoke(app, [*args, "--json"]).stdout)["note"] is None  # one node: no NIC


def test_plan_says_so_too():
    """`dpcost plan` (its reason and findings) gives the same note when its plan crosses the NIC
    whose regimes go unused, and none on one node."""
    from pathlib import Path

    from costmodel.planner.recommend import plan

    lab = str(Path(__file__).parents[1] / "data" / "hardware" / "my_cluster.toml")
    two = plan("gpt2", lab, nodes=2, global_batch=256)
    assert two.best.nodes == 2
    assert "regimes of lab-roce-100 apply to --link predictions" in two.findings["regimes_unused"]
    assert "Note: the calibrated regimes of lab-roce-100" in two.reason
    one = plan("gpt2", lab, nodes=1, global_batch=256)
    assert one.findings["regimes_unused"] is None and "regimes" not in one.reason


def test_chunks_takes_what_its_error_offers(cli_error):
    """--chunks 0 was refused offering 'auto', which the option (an integer) refused in turn
    (review, 2026-11-30): auto is the default optimum, text other than a count is refused by name."""
    from typer.testing import CliRunner

    from cli import app

    args = ["collective", "broadcast", "-a", "pipelined-chain", "--ranks", "8", "--size", "64MiB", "--alpha", "5us",
            "--bandwidth", "25GB/s", "--json"]
    auto, default = (CliRunner().invoke(app, [*args, *extra]) for extra in (["--chunks", "auto"], []))
    assert auto.exit_code == default.exit_code == 0 and auto.stdout == default.stdout
    for bad in ("0", "x", "2.5"):
        assert cli_error([*args[:-1], "--chunks", bad]).startswith(f"error: chunks: got {bad if bad == '0' else repr(bad)}")


def test_the_other_vendors_library_is_refused_and_in_network_says_what_it_assumes(cli_error):
    """--stack rccl on dgx-h100 was timed on the α-β mapping with no note, in-network on a bare
    link with no word of the switch it assumes, and in-network across two H100 nodes was refused
    saying the node "has 'nvls' on 2 node(s)" (review, 2026-11-30)."""
    import json

    from typer.testing import CliRunner

    from cli import app

    line = cli_error(["collective", "all-reduce", "--cluster", "dgx-h100", "--size", "1GB", "--stack", "rccl"])
    assert line.startswith("error: stack: got 'rccl'") and "runs on AMD GPUs" in line
    line = cli_error(["collective", "all-reduce", "--cluster", "mi300x-8x", "--size", "1GB", "--stack", "nccl"])
    assert "runs on NVIDIA GPUs" in line
    assert CliRunner().invoke(app, ["collective", "all-reduce", "--cluster", "dgx-h100", "--size", "1GB", "--stack",
                                    "gloo"]).exit_code == 0
    bare = CliRunner().invoke(app, ["collective", "all-reduce", "-a", "in-network", "--ranks", "3", "--size", "16MiB",
                                    "--alpha", "5us", "--bandwidth", "25GB/s", "--json"])
    assert "assumes a switch that reduces" in json.loads(bare.stdout)["note"]
    line = cli_error(["collective", "all-reduce", "--cluster", "dgx-h100", "--nodes", "2", "--size", "1GB", "-a",
                      "in-network", "--backend", "ideal"])
    assert "NVLS reduces inside one node's NVSwitch, not across 2 nodes" in line
