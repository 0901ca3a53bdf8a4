"""Single-answer CLI paths import neither numpy, sympy, pandas nor rich's markdown stack, and a
well-formed command line neither typer nor click (start-up speed)."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("numpy", "sympy", "pandas", "rich.markdown")
CLI_FRAMEWORK = ("typer", "click")  # help and usage errors only (cli.answer_plainly)
# dataclasses imports inspect and ast (~70 M instructions): value classes do without (dpbase.values)
# statistics imports decimal, fractions and random (13 M instructions of `dpcost iteration`'s 185 M
# when a relative-MFU lookup imported it for every preset, 2026-11-28)
STDLIB_HEAVY = ("dataclasses", "inspect", "ast", "statistics")
SCALAR_PATHS = [
    "collective all-reduce -a ring --ranks 8 --size 4GB --alpha 5us --bandwidth 25GB/s",
    "collective all-reduce --cluster dgx-h100 --nodes 2 --size 1GB",
    "compare all-reduce --ranks 64 --size 1MB --alpha 5us --bandwidth 25GB/s",
]
HELP_PATHS = ["--help", "collective --help", "plan --help"]
# One training step on Python floats: numpy loads only where an array is built (dpbase.lazynp).
ITERATION_PATHS = [
    "iteration --model llama2-7b --cluster dgx-h100 --nodes 4 --micro-batch 1 --seq-len 4096 --accum 4",
    "iteration --model gpt2 --cluster mi300x-8x --nodes 2 --micro-batch 4 --zero 3 --shard hybrid",
    "iteration --model resnet-50 --cluster dgx-a100 --micro-batch 64 --sync horovod --jitter 0.05",
    "iteration --model vgg16 --cluster dgx-a100 --micro-batch 64",  # a CNN with a relative MFU
]


def _run(args: str, modules: tuple[str, ...]) -> tuple[str, str, list[str]]:
    """Run ``dpcost ARGS`` in a fresh interpreter: (stdout, status, which of ``modules`` it
    imported); what it wrote to stderr is kept in ``_run.stderr``."""
    code = ("import sys; from cli import main; sys.argv = ['dpcost'] + sys.argv[1].split()\n"
            "status = 0\n"
            "try:\n    main()\nexcept SystemExit as done:\n    status = done.code or 0\n"
            f"heavy = [m for m in {modules!r} if m in sys.modules]\n"
            "sys.stderr.write(f'STATUS={status} HEAVY=' + ','.join(heavy))")
    result = subprocess.run([sys.executable, "-c", code, args], capture_output=True, text=True, timeout=120)
    status = result.stderr.rsplit("STATUS=", 1)[-1].split(" ", 1)[0]
    heavy = result.stderr.rsplit("HEAVY=", 1)[-1].strip()
    _run.stderr = result.stderr.rsplit("STATUS=", 1)[0]
    return result.stdout, status, [m for m in heavy.split(",") if m]


@pytest.mark.parametrize("args", SCALAR_PATHS)
def test_scalar_paths_stay_light(args):
    stdout, status, heavy = _run(args, HEAVY + CLI_FRAMEWORK + STDLIB_HEAVY)
    assert status == "0" and "time" in stdout, stdout  # it answered
    assert heavy == [], f"dpcost {args} imported {heavy}"


@pytest.mark.parametrize("args", ITERATION_PATHS)
def test_one_training_step_stays_light(args):
    # the planner is plan's business: a step's text formats its numbers with dpbase.numfmt
    stdout, status, heavy = _run(args, HEAVY + CLI_FRAMEWORK + STDLIB_HEAVY + ("costmodel.planner",))
    assert status == "0" and "throughput" in stdout, stdout
    assert heavy == [], f"dpcost {args} imported {heavy}"


@pytest.mark.parametrize("args", HELP_PATHS)
def test_help_stays_light(args):
    """Help is click's plain text: typer's rich formatter (rich.markdown, markdown-it) stays unloaded."""
    stdout, status, heavy = _run(args, HEAVY + ("rich", "markdown_it", "typer.rich_utils"))
    assert status == "0" and "Usage:" in stdout, stdout
    assert heavy == [], f"dpcost {args} imported {heavy}"


OTHER_COMMANDS = ("costmodel.commands.plan_cmd", "costmodel.commands.calibrate_cmd", "costmodel.commands.plot_cmd",
                  "costmodel.commands.iteration_cmd", "costmodel.commands.sweep_cmd", "costmodel.planner")


@pytest.mark.parametrize("args", SCALAR_PATHS)
def test_a_command_loads_only_its_own_module(args):
    """cli.COMMANDS: a command's module is imported when that command runs, not before."""
    stdout, status, loaded = _run(args, OTHER_COMMANDS)
    assert status == "0" and "time" in stdout, stdout
    assert loaded == [], f"dpcost {args} imported {loaded}"


def test_bare_dpcost_prints_its_help():
    stdout, status, _ = _run("", ())
    assert status == "0" and stdout.startswith("Usage: dpcost") and "\\x0a" not in stdout


def test_a_plan_does_not_load_the_cli_framework():
    stdout, status, loaded = _run("plan --model gpt2 --cluster dgx-a100 --global-batch 64", CLI_FRAMEWORK)
    assert status == "0" and "Recommended" in stdout, stdout
    assert loaded == [], loaded


def test_a_usage_error_still_gets_clicks_message():
    stdout, status, loaded = _run("collective all-reduce --sise 4GB", CLI_FRAMEWORK)
    assert status == "2" and loaded == ["typer", "click"]
    assert _run.stderr.startswith("error: No such option '--sise'"), _run.stderr  # click's words, one line
