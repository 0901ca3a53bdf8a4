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
        if isinstance(cmd, click.Group):  # the top level loads its commands lazily: ask for each
            for name in cmd.list_commands(None):
                walk(cmd.get_command(None, name), prefix + [name])
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


def test_shell_completion_script_and_values(monkeypatch):
    script = runner.invoke(app, ["--show-completion", "bash"], prog_name="dpcost")
    assert script.exit_code == 0 and "_dpcost_completion" in script.stdout
    from costmodel.commands import complete

    assert complete.systems("dgx-h") == ["dgx-h100", "dgx-h200"]
    assert "llama2-70b" in complete.models("llama2-")
    assert complete.primitives("all-r") == ["all-reduce"]
    assert {"ring", "rabenseifner"} <= set(complete.algorithms(None, "r"))
    assert "dgx-h100" in complete.profiles("dgx") and "ib-ndr" in complete.links("ib-")


def test_value_completion_through_the_shell_protocol(monkeypatch):
    monkeypatch.setenv("_DPCOST_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", "dpcost hardware show dgx-h")
    monkeypatch.setenv("COMP_CWORD", "3")
    result = runner.invoke(app, [], prog_name="dpcost")
    assert result.stdout.split() == ["dgx-h100", "dgx-h200"]


def test_the_top_level_list_is_each_commands_own_first_paragraph():
    """cli.SUMMARIES (what `dpcost --help` lists without importing the commands) says what each
    command's own help says."""
    from typer.main import get_command

    import cli

    group = get_command(cli.app)
    assert list(cli.SUMMARIES) == list(cli.COMMANDS)
    for name in cli.COMMANDS:
        command = group.get_command(None, name)
        own = (command.help or "").split("\n\n")[0].strip()
        assert cli.SUMMARIES[name] == own, name
