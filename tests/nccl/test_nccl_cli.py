"""`dpcost nccl-table` through typer's CliRunner."""

import json

import typer
from typer.testing import CliRunner

from cli import app

runner = CliRunner()


def _invoke(*args):
    return runner.invoke(app, ["nccl-table", *args])


def test_text_table_shows_tuning_cells():
    result = _invoke("--cluster", "dgx-a100")
    assert result.exit_code == 0, result.output
    assert "15.0/50.1" in result.output and "56.0/137.1" in result.output and "ring/LL128" in result.output


def test_json_with_prediction():
    result = _invoke("--cluster", "dgx-h100", "--size", "1GiB", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["prediction"]["algorithm"] == "nvls" and data["prediction"]["protocol"] == "Simple"
    assert data["graphs"]["ring"]["n_channels"] == 12
    cells = {(c["algorithm"], c["protocol"]): c for c in data["table"]["all-reduce"]}
    assert round(cells[("nvls", "Simple")]["algbw_GBps"], 1) == 272.0


def test_tuning_override_and_bad_input(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text("[base_latency_us]\nring = { ll = 1.0 }\n")
    assert "9.4/50.1" in _invoke("--cluster", "dgx-a100", "--tuning", str(path)).output
    bad = _invoke("--cluster", "dgx-a100", "--nodes", "0")
    assert bad.exit_code == 2 and "nodes" in bad.output
    unknown = _invoke("--cluster", "no-such-system")
    assert unknown.exit_code == 2


def test_mountable_in_another_typer_app():
    from costmodel.commands.nccl_cmd import nccl_table
    from costmodel.commands.options import for_typer

    root = typer.Typer()
    root.command("nccl-table")(for_typer(nccl_table))
    root.command("other")(lambda: None)  # two commands: the first word names the command
    assert runner.invoke(root, ["nccl-table", "--cluster", "dgx-a100", "--json"]).exit_code == 0


def test_amd_systems_get_rcclss_table_and_choice():
    """2 × 8 MI300X, RCCL's model 5 on the profile's ring bus bandwidth B: tree/Simple is
    99.2 µs / 0.11·B/2 (tests/nccl/test_rccl_model.py has the arithmetic)."""
    from costmodel.cluster.mapping import layout
    from costmodel.cluster.rccl_choice import rccl_topology

    bus = rccl_topology(layout("mi300x-8x", 2)).bus_bw_GBps
    result = _invoke("--cluster", "mi300x-8x", "--nodes", "2", "--size", "8MiB")
    assert result.exit_code == 0, result.output
    assert "RCCL 2.21.5, tuning model 5" in result.output
    assert f"99.2/{0.11 * bus / 2:.1f}" in result.output
    assert "RCCL chooses double-binary-tree/Simple" in result.output
    data = json.loads(_invoke("--cluster", "mi300x-8x", "--nodes", "2", "--size", "8MiB", "--json").output)
    assert (data["stack"], data["tuning_model"], data["arch"]) == ("rccl", 5, "gfx942")
    assert data["prediction"]["protocol"] == "Simple" and data["prediction"]["backend"] == "rccl"
    refused = _invoke("--cluster", "mi300x-8x", "--nccl-version", "2.21.5")
    assert refused.exit_code == 2 and "--nccl-version" in refused.output and "RCCL" in refused.output


def test_one_amd_gpu_has_no_communicator_to_tune():
    text = _invoke("--cluster", "mi300x-8x", "--gpus-per-node", "1")
    assert text.exit_code == 0 and "one rank, nothing to communicate" in text.output
    data = json.loads(_invoke("--cluster", "mi300x-8x", "--gpus-per-node", "1", "--json").output)
    assert data["n_ranks"] == 1 and data["table"] is None
