"""Dependencies: dpcost runs without a single warning (PYTHONWARNINGS=error makes one fatal),
and the test configuration no longer hides typer/click deprecation warnings."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = [
    ["--help"],
    ["collective", "all-reduce", "--ranks", "8", "--size", "1GB", "--alpha", "5us", "--bandwidth", "25GB/s"],
    ["hardware", "list", "--kind", "system"],
    ["collective", "all-reduce", "--ranks", "0", "--size", "1GB", "--alpha", "5us", "--bandwidth", "25GB/s"],
    ["plot", "--help"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_no_warning_with_warnings_as_errors(args):
    env = {**os.environ, "PYTHONWARNINGS": "error"}
    done = subprocess.run([sys.executable, "-W", "error", "-c", "import cli; cli.main()", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 2), done.stderr
    assert "Warning" not in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_pytest_does_not_hide_typer_or_click_warnings():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert not [f for f in config.get("filterwarnings", []) if f.startswith("ignore")]


def test_installed_click_is_inside_the_pinned_range():
    from importlib.metadata import version

    major, minor = (int(part) for part in version("click").split(".")[:2])
    assert (8, 1) <= (major, minor) < (8, 5)
