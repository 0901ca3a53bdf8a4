"""Every command answers --help with an example; --version works."""

from __future__ import annotations

import click
import pytest
import typer
from typer.testing import CliRunner

from cli import app

runner = CliRunner()


def command_paths() -> list[list[str]]:
    root = typer.main.get_command(app)
    paths = []

    def walk(cmd: click.Command, prefix: list[str]) -> None:
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                walk(sub, prefix + [name])
        else:
            paths.append(prefix)

    walk(root, [])
    return paths


def test_there_are_commands():
    names = {" ".join(p) for p in command_paths()}
    assert {"formula", "collective", "compare", "iteration", "calibrate", "hardware list"} <= names


@pytest.mark.parametrize("path", command_paths(), ids=lambda p: " ".join(p))
def test_help_has_an_example(path):
    result = runner.invoke(app, [*path, "--help"], terminal_width=200)
    assert result.exit_code == 0
    assert "dpcost" in result.stdout and "xample" in result.stdout


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.startswith("dpcost")
