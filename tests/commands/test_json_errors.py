"""With --json, a refused input is a JSON object on stdout as well as one line on stderr (issue 16)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from cli import app

runner = CliRunner()

BAD = {
    "collective": ["collective", "all-reduce", "--ranks", "0", "--size", "1GB", "--alpha", "1us", "--bandwidth", "1GB/s"],
    "compare": ["compare", "all-reduce", "--ranks", "8", "--size", "-1GB", "--alpha", "1us", "--bandwidth", "1GB/s"],
    "iteration": ["iteration", "--model", "no-such-model", "--cluster", "dgx-h100", "--micro-batch", "1"],
    "plan": ["plan", "--model", "llama2-7b", "--cluster", "no-such-system", "--global-batch", "64"],
    "calibrate": ["calibrate", "/no/such/log.txt"],
    "hardware show": ["hardware", "show", "no-such-profile"],
    "nccl-table": ["nccl-table", "--cluster", "no-such-system"],
    "plot sweep": ["plot", "sweep", "all-reduce", "--cluster", "no-such-system", "-o", "x.html"],
    "sweep": ["sweep", "all-reduce", "--cluster", "no-such-system", "--sizes", "1MiB"],
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_json_error_object(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, [*BAD[name], "--json"])
    assert result.exit_code == 2, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"error"} and set(data["error"]) == {"field", "got", "allowed", "message"}
    assert data["error"]["message"] and data["error"]["field"]
    assert f"error: {data['error']['message']}" in result.stderr


def test_without_json_stdout_stays_empty():
    result = runner.invoke(app, BAD["collective"])
    assert result.exit_code == 2 and result.stdout == "" and result.stderr.startswith("error: ranks")


def test_a_usage_error_through_the_console_entry_point_is_json_too():
    code = "import sys; from cli import main; sys.argv = ['dpcost', *sys.argv[1:]]; main()"
    run = subprocess.run([sys.executable, "-c", code, "collective", "all-reduce", "--ranks", "abc", "--json"],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 2
    error = json.loads(run.stdout)["error"]
    assert error["field"] == "--ranks" and "not a valid integer" in error["message"]
    assert run.stderr.startswith("error: ")
