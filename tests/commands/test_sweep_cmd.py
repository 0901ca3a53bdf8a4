"""``dpcost sweep`` writes the sweep DataFrame as a table, CSV or JSON (issue 16)."""

from __future__ import annotations

import io
import json

import pandas as pd
from typer.testing import CliRunner

from cli import app
from costmodel.cluster.api import sweep
from costmodel.commands.sweep_cmd import flat

runner = CliRunner()
ARGS = ["sweep", "all-reduce,all-gather", "--cluster", "dgx-h100,dgx-a100", "--nodes", "1,2", "--sizes", "4KiB,1GiB"]


def test_csv_round_trips_to_the_same_dataframe(tmp_path):
    out = tmp_path / "sweep.csv"
    result = runner.invoke(app, [*ARGS, "--format", "csv", "-o", str(out)])
    assert result.exit_code == 0, result.output
    read = pd.read_csv(out, keep_default_na=True)
    expected = flat(sweep(["all-reduce", "all-gather"], ["4KiB", "1GiB"], clusters=["dgx-h100", "dgx-a100"],
                          nodes=[1, 2]))
    assert list(read.columns) == list(expected.columns) and len(read) == 16
    again = pd.read_csv(io.StringIO(expected.to_csv(index=False)))
    pd.testing.assert_frame_equal(read, again)
    for column in ("time_s", "busbw_Bps", "size_bytes", "nodes", "interval_low_s"):
        assert (abs(read[column] - expected[column].astype(float)) <= 1e-12 * abs(expected[column].astype(float))).all()


def test_json_is_one_record_per_row_with_every_prediction_field():
    result = runner.invoke(app, [*ARGS, "--json"])
    assert result.exit_code == 0, result.output
    records = json.loads(result.stdout)
    assert len(records) == 16 and {"time_s", "interval_s", "protocol", "backend"} <= set(records[0])


def test_table_names_the_axes():
    result = runner.invoke(app, ARGS)
    assert result.exit_code == 0, result.output
    assert "dgx-a100" in result.stdout and "nvls" in result.stdout and "GiB" in result.stdout


def test_a_bare_link_sweep_with_ranks_and_algorithms():
    result = runner.invoke(app, ["sweep", "all-reduce", "--ranks", "8,16", "--alpha", "5us", "--bandwidth", "25GB/s",
                                 "-a", "ring,double-binary-tree", "--min-size", "1KiB", "--max-size", "1MiB",
                                 "--factor", "32", "--format", "csv"])
    assert result.exit_code == 0, result.output
    df = pd.read_csv(io.StringIO(result.stdout))
    assert len(df) == 2 * 2 * 3 and set(df["algorithm"]) == {"ring", "double-binary-tree"}


def test_bad_input_is_one_line_and_a_json_error_with_json():
    result = runner.invoke(app, ["sweep", "all-reduce", "--cluster", "dgx-h100", "--ranks", "8", "--json"])
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["field"] == "--ranks" and "nodes" in error["allowed"]
    result = runner.invoke(app, ["sweep", "all-reduce", "--cluster", "dgx-h100", "--format", "xml"])
    assert result.exit_code == 2 and "format" in result.output


def test_refuses_to_overwrite_its_input(tmp_path):
    import hardware

    path = tmp_path / "mine.toml"
    path.write_text(hardware.to_toml(hardware.load_system("dgx-h100")), encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    result = runner.invoke(app, ["sweep", "all-reduce", "--cluster", str(path), "--sizes", "1MiB", "-o", str(path)])
    assert result.exit_code == 2 and path.read_text(encoding="utf-8") == before


def test_a_realistic_backend_without_a_cluster_is_refused_with_a_named_algorithm_too():
    """A bare α/β link has only the ideal backend: ``--backend nccl`` is refused with or without
    ``--algorithm`` (it used to answer with the ideal backend once an algorithm was named), in
    sweep as in collective, and in the Python API."""
    import pytest

    from costmodel.cluster.api import predict
    from dpbase.errors import InputError

    bare = ["all-reduce", "--alpha", "5us", "--bandwidth", "25GB/s", "--ranks", "8"]
    for command in (["sweep", *bare, "--sizes", "1MiB"], ["collective", *bare, "--size", "1MiB"]):
        for named in ([], ["--algorithm", "ring"]):
            result = runner.invoke(app, [*command, "--backend", "nccl", *named])
            assert result.exit_code == 2, (command, named, result.output)
            assert result.stderr.strip().splitlines() == [
                "error: backend: got 'nccl'; allowed: --backend nccl together with --cluster SYSTEM "
                "(a bare link or --alpha/--bandwidth has only the ideal backend)"]
    with pytest.raises(InputError, match="backend"):
        predict("all-reduce", "1MiB", "ring", ranks=8, alpha_s="5us", bandwidth_Bps="25GB/s", backend="nccl")
    assert predict("all-reduce", "1MiB", "ring", ranks=8, alpha_s="5us", bandwidth_Bps="25GB/s",
                   backend="ideal").backend == "ideal"
