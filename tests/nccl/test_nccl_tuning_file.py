"""``dpcost nccl-table --tuning FILE``: a file that sets nothing is refused (CliRunner)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli import app
from costmodel.nccl.tables import load_tables
from dpbase.errors import ProfileError

runner = CliRunner()
ALLOWED = ('a version (e.g. version = "2.27.5") or at least one NCCL constant to override '
           '(e.g. [base_latency_us.ring] ll = 5.0)')


def _invoke(*args: str):
    return runner.invoke(app, ["nccl-table", "--cluster", "dgx-h100", *args])


@pytest.mark.parametrize("text", ["", "   \n\n", "# only a comment\n", "[base_latency_us]\n",
                                  "[base_latency_us.ring]\n[refinements]\n"])
def test_a_tuning_file_that_sets_nothing_is_one_error_line(tmp_path, text):
    path = tmp_path / "empty.toml"
    path.write_text(text, encoding="utf-8")
    result = _invoke("--tuning", str(path))
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [f"error: tuning ({path}): got 'no settings'; allowed: {ALLOWED}"]


def test_an_empty_tuning_file_under_json_is_an_error_object(tmp_path):
    path = tmp_path / "empty.toml"
    path.write_text("", encoding="utf-8")
    result = _invoke("--tuning", str(path), "--json")
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert (error["field"], error["got"], error["allowed"]) == (f"tuning ({path})", "no settings", ALLOWED)
    assert len(result.stderr.splitlines()) == 1


def test_a_version_alone_or_one_constant_is_still_a_tuning(tmp_path):
    version = tmp_path / "version.toml"
    version.write_text('version = "2.27.5"\n', encoding="utf-8")
    result = _invoke("--tuning", str(version))
    assert result.exit_code == 0 and "NCCL 2.27.5" in result.stdout
    constant = tmp_path / "constant.toml"
    constant.write_text("[base_latency_us.ring]\nll = 5.0\n", encoding="utf-8")
    assert load_tables(constant).base_latency_us("ring", "LL") == 5.0


def test_load_tables_refuses_an_empty_file(tmp_path):
    path = tmp_path / "empty.toml"
    path.write_text("", encoding="utf-8")
    with pytest.raises(ProfileError, match="no settings"):
        load_tables(path)


@pytest.mark.parametrize(("text", "field", "allowed"), [
    ("[tree_correction_factor]\nll = [" + ", ".join(["0.0"] * 24) + "]\n", "tree_correction_factor.ll", "> 0"),
    ("[refinements]\ntree_ll_divisor = 0\n", "refinements.tree_ll_divisor", "> 0"),
    ("[search_speeds_GBps]\nsm90_inter = [" + ", ".join(["0.0"] * 17) + "]\n", "search_speeds_GBps.sm90_inter", "> 0"),
    ("[refinements]\nallreduce_inter_steps_offset = 10\n", "refinements.allreduce_inter_steps_offset", "0 or 1"),
    ("[refinements]\nallreduce_inter_steps_offset = 1.5\n", "refinements.allreduce_inter_steps_offset", "int"),
    ("[nvls_efficiency]\nhopper = 5.0\n", "nvls_efficiency.hopper", "at most 1"),
    ("[nccl_tests]\nefficiency_nvlink = 1.5\n", "nccl_tests.efficiency_nvlink", "at most 1"),
])
def test_a_constant_the_model_cannot_use_is_one_error_line(tmp_path, cli_error, text, field, allowed):
    """Zeros the model divides by (a traceback before), an inter-step offset NCCL never used
    (negative times before), shares of a link above 1 (2,594 GB/s busbw on one H100 node before)."""
    path = tmp_path / "tuning.toml"
    path.write_text(text, encoding="utf-8")
    line = cli_error(["nccl-table", "--cluster", "dgx-h100", "--nodes", "2", "--size", "64KiB", "--tuning", str(path)])
    assert field in line and allowed in line, line
    assert line.startswith(f"error: {field}: got "), line  # "int" sits in the field's own name: the line leads with it
    if field.endswith("steps_offset"):
        assert "allowed: 0 or 1" in line, line
