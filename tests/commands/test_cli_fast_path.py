"""The typer-free path (cli.answer_plainly, costmodel.commands.argv) gives each command exactly
the values click gives it, and declines every command line it cannot be sure of."""

from __future__ import annotations

import enum
import json
from pathlib import Path

import click
import pytest
import typer.main
import typer.models
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import cli
from costmodel.commands.argv import parse
from costmodel.commands.options import for_typer, parameter_specs


def _function(name: str):
    """The function behind a command, or behind a group's subcommand ("hardware show")."""
    top, _, sub = name.partition(" ")
    target = cli._command_target(top)[1]
    return target[sub] if sub else target


def _command_names() -> list[str]:
    names = []
    for top in cli.COMMANDS:
        target = _function(top)
        names += [f"{top} {sub}" for sub in target] if isinstance(target, dict) else [top]
    return names


FUNCTION_COMMANDS = _command_names()
# Every parameter is one the plain parser reads (calibrate takes a list of paths, some charts
# repeat an option: those go to click).
PLAIN = ("formula", "collective", "compare", "sweep", "iteration", "plan", "nccl-table", "hardware list",
         "hardware show", "hardware validate", "plot best-map", "plot plan", "plot schedule")


def _recording_command(name: str):
    """click's command for ``name`` as typer builds it, calling a recorder instead of the command."""
    seen: list[dict] = []

    def recorder(**values):
        seen.append(values)

    recorder.__wrapped__ = _function(name)  # for_typer reads the declarations through it
    command = typer.main.get_command_from_info(typer.models.CommandInfo(name=name.split()[-1],
                                                                        callback=for_typer(recorder)),
                                               pretty_exceptions_short=True, rich_markup_mode=None)
    return command, seen


def _click_values(name: str, argv: list[str]) -> dict | None:
    """What click calls the command with, or None where click refuses the command line."""
    command, seen = _recording_command(name)
    try:
        command.main(list(argv), prog_name=name, standalone_mode=False)
    except click.exceptions.ClickException:
        return None
    return seen[0] if seen else None


def _sample(spec) -> list[str]:
    """A well-formed value for one parameter."""
    if spec.is_flag:
        return []
    if isinstance(spec.convert, type) and issubclass(spec.convert, enum.Enum):
        return [list(spec.convert)[-1].value]
    return {int: ["3"], float: ["0.25"]}.get(spec.convert, ["x-1"])


@pytest.mark.parametrize("name", FUNCTION_COMMANDS)
def test_declarations_are_what_click_builds(name):
    """Option strings, flags, required-ness and defaults as click holds them, for every parameter."""
    command, _ = _recording_command(name)
    built = {param.name: param for param in command.params}
    specs = parameter_specs(_function(name))
    assert [spec.name for spec in specs] == [param.name for param in command.params]
    for spec in specs:
        param = built[spec.name]
        assert spec.positional == (param.param_type_name == "argument"), spec.name
        if not spec.positional:
            assert spec.switches == tuple(param.opts) and spec.off_switches == tuple(param.secondary_opts), spec.name
            assert spec.is_flag == param.is_flag, spec.name
        assert spec.required == param.required, spec.name
        if not spec.required:  # click's default, as the command receives it (an Enum by its value)
            default = spec.default.value if isinstance(spec.default, enum.Enum) else spec.default
            assert default == param.default, spec.name
        if spec.convert in (int, float, str):
            assert param.type.name == {int: "integer", float: "float", str: "text"}[spec.convert], spec.name
    assert all(spec.plain for spec in specs) == (name in PLAIN)


def test_a_command_with_a_parameter_click_must_read_is_left_to_click():
    assert parse(_function("calibrate"), ["log.txt"]) is None


@pytest.mark.parametrize("name", PLAIN)
def test_every_option_parses_as_click_parses_it(name):
    """Each option alone (with the required ones), in every spelling: the same values as click."""
    specs = parameter_specs(_function(name))
    required = [token for spec in specs if spec.required
                for token in ([spec.switches[0]] if not spec.positional else []) + _sample(spec)]
    argvs = [required]
    for spec in specs:
        if spec.positional or spec.required:
            continue
        for switch in spec.switches + spec.off_switches:
            argvs.append(required + [switch] + _sample(spec))
            if not spec.is_flag and switch.startswith("--"):
                argvs.append(required + [f"{switch}={_sample(spec)[0]}"])
    for argv in argvs:
        fast = parse(_function(name), argv)
        assert fast is not None, argv
        assert fast == _click_values(name, argv), argv


@pytest.mark.parametrize("argv", [
    ["all-reduce", "--size", "4GB", "--help"], ["all-reduce", "--size"], ["all-reduce", "--sise", "4GB"],
    ["all-reduce", "--size", "4GB", "-N8"], ["all-reduce", "--size", "4GB", "--ranks", "eight"],
    ["all-reduce", "--size", "4GB", "--json=1"], ["all-reduce", "--", "--size", "4GB"], ["--size", "4GB"],
    ["all-reduce", "extra", "words", "--size", "4GB"], ["all-reduce", "--size", "4GB", "--ranks", "1.5"],
])
def test_declines_what_it_cannot_be_sure_of(argv):
    assert parse(_function("collective"), argv) is None


_TOKENS = st.sampled_from(["--size", "-n", "--ranks", "-N", "--json", "-a", "--algorithm", "--nodes", "--alpha",
                           "--colocated", "--no-pipeline", "--servers", "--", "--help", "-", "all-reduce", "ring",
                           "4GB", "8", "-8", "1e3", " 7", "0x10", "1_0", "nan", "", "--ranks=2", "--json=true",
                           "--size=", "-N=3", "--gamma", "-1ns"])


# Each random line starts from a well-formed one, so that most of them are parsed (and compared
# with click) rather than declined.
_COLLECTIVE = ["all-reduce", "--size", "4GB"]
_PLAN = ["--model", "gpt2", "--cluster", "dgx-h100", "--global-batch", "64"]


@settings(max_examples=300, deadline=None)
@given(st.lists(_TOKENS, max_size=8))
def test_any_command_line_parses_as_click_or_not_at_all(argv):
    argv = _COLLECTIVE + argv
    fast = parse(_function("collective"), argv)
    if fast is not None:
        assert fast == _click_values("collective", argv), argv


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["--model", "--cluster", "--global-batch", "--objective", "throughput", "cost",
                                 "--recompute", "--no-recompute", "--emit", "env", "--top", "3", "gpt2",
                                 "dgx-h100", "64", "--nodes", "--tie-band", "0.1", "--json", "--async"]),
                max_size=10))
def test_plan_command_lines_parse_as_click_or_not_at_all(argv):
    argv = _PLAN + argv
    fast = parse(_function("plan"), argv)
    if fast is not None:
        assert fast == _click_values("plan", argv), argv


runner = CliRunner()

COMMAND_LINES = [
    "collective all-reduce -a ring --ranks 8 --size 4GB --alpha 5us --bandwidth 25GB/s",
    "collective all-reduce --cluster dgx-h100 --nodes 2 --size 1GB --json",
    "collective all-reduce --ranks 8 --size -4GB --alpha 5us --bandwidth 25GB/s",
    "collective all-reduce --ranks 8 --size -4GB --alpha 5us --bandwidth 25GB/s --json",
    "compare all-reduce --ranks 64 --size 1MB --alpha 5us --bandwidth 25GB/s",
    "formula all-reduce ring",
    "iteration --model gpt2 --cluster dgx-a100 --micro-batch 4 --accum 2",
    "iteration --model gpt2 --cluster no-such-system --micro-batch 4",
    "plan --model gpt2 --cluster dgx-a100 --global-batch 64 --objective throughput --top 3",
    "nccl-table --cluster dgx-a100 --size 1GiB",
    "hardware show dgx-h100 --json",
    "hardware list --kind gpu",
    "hardware show no-such-profile",
]


def _documented_lines() -> list[str]:
    """Every `$ dpcost …` example of the README and the tutorial that reads and writes no file."""
    root = Path(cli.__file__).resolve().parent
    lines = []
    for doc in ("README.md", "docs/tutorial.md"):
        for text in (root / doc).read_text(encoding="utf-8").splitlines():
            if text.startswith("$ dpcost ") and not any(mark in text for mark in ("|", ">", ".toml", "-o ", ".txt")):
                lines.append(text.removeprefix("$ dpcost ").strip())
    return sorted(set(lines))


DOCUMENTED = _documented_lines()


def test_the_documented_examples_are_checked():
    assert len(DOCUMENTED) >= 20 and any(line.startswith("plan ") for line in DOCUMENTED)


@pytest.mark.parametrize("line", COMMAND_LINES + [line for line in DOCUMENTED if line not in COMMAND_LINES])
def test_the_plain_path_prints_what_typer_prints(line, capsys):
    """Same stdout, stderr and exit code through cli.answer_plainly as through typer."""
    through_typer = runner.invoke(cli.app, line.split())
    capsys.readouterr()
    try:
        code = cli.answer_plainly(line.split())
    except SystemExit as done:
        code = done.code
    out, err = capsys.readouterr()
    assert code is not None, line  # it did not fall back
    assert (code, out, err) == (through_typer.exit_code, through_typer.stdout, through_typer.stderr), line
    if "--json" in line:
        json.loads(out)


def test_help_and_bare_groups_go_to_typer(monkeypatch):
    monkeypatch.setenv("DPCOST_NO_CACHE", "1")
    group = typer.main.get_command(cli._app())  # the app click runs (its commands load on demand)
    context = click.Context(group)
    built = []
    for top in group.list_commands(context):
        command = group.get_command(context, top)
        built += [f"{top} {sub}" for sub in command.list_commands(context)] if isinstance(command, click.Group) \
            else [top]
    assert sorted(FUNCTION_COMMANDS) == sorted(built)
    assert cli.answer_plainly(["hardware"]) is None and cli.answer_plainly(["hardware", "lists"]) is None
    assert cli.answer_plainly(["hardware", "show", "--help"]) is None
    assert cli.answer_plainly(["collective", "--help"]) is None
    assert cli.answer_plainly([]) is None and cli.answer_plainly(["--help"]) is None
    assert cli.answer_plainly(["no-such-command"]) is None


def test_shell_completion_goes_to_typer(monkeypatch):
    monkeypatch.setenv("_DPCOST_COMPLETE", "complete_bash")
    assert cli.answer_plainly(["formula", "all-reduce"]) is None


def test_ctrl_c_during_a_plain_answer_exits_130_without_a_traceback(monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "answer_plainly", interrupted)
    monkeypatch.setattr(cli.sys, "argv", ["dpcost", "formula", "all-reduce"])
    with pytest.raises(SystemExit) as done:
        cli.main()
    assert done.value.code == 130 and capsys.readouterr().err == "\n"


def test_the_console_script_runs_main_with_the_garbage_collector_off(monkeypatch):
    """`dpcost` is cli:run, which turns the cyclic collector off for its short process; main
    (and so the Python API and in-process callers) leaves it as it was."""
    import gc
    import tomllib

    with open(Path(cli.__file__).with_name("pyproject.toml"), "rb") as handle:
        assert tomllib.load(handle)["project"]["scripts"] == {"dpcost": "cli:run"}
    seen = []
    monkeypatch.setattr(cli, "main", lambda: seen.append(gc.isenabled()))
    try:
        cli.run()
    finally:
        gc.enable()
    assert seen == [False]


def test_main_leaves_the_garbage_collector_alone(monkeypatch, capsys):
    import gc

    assert gc.isenabled()
    monkeypatch.setattr(cli.sys, "argv", ["dpcost", "formula", "all-reduce", "ring"])
    with pytest.raises(SystemExit) as done:
        cli.main()
    assert done.value.code == 0 and "ring" in capsys.readouterr().out and gc.isenabled()
