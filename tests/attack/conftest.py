"""Shared by the attack suite: run a dpcost command in-process and check it failed safely.

``safe(args)`` runs ``dpcost ARGS`` through typer's CliRunner and asserts the contract of
issue 18: exit code 0 or 2, never an uncaught exception (a traceback), a failure is exactly
one ``error: …`` line on stderr (``hardware validate``: one per problem), and no ``nan``/``inf`` printed as a number.
"""

from __future__ import annotations

import re
import shlex
import warnings
from dataclasses import dataclass

import click
import pytest
from typer.testing import CliRunner

from cli import app

NON_FINITE = re.compile(r"(?<![A-Za-z])(nan|-?inf)(?![A-Za-z])", re.IGNORECASE)


@dataclass(frozen=True)
class Outcome:
    """What a user of ``cli.main`` sees: exit code, stdout, stderr, and any uncaught exception."""

    exit_code: int
    stdout: str
    stderr: str
    exception: BaseException | None

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run(args: str | list[str]) -> Outcome:
    """``dpcost ARGS`` in-process, as ``cli.main`` runs it (click's usage errors become one line)."""
    argv = shlex.split(args) if isinstance(args, str) else [str(a) for a in args]
    with warnings.catch_warnings(record=True) as caught:  # a warning would be a second stderr line
        warnings.simplefilter("always")
        result = CliRunner().invoke(app, argv, standalone_mode=False)
    shown = "".join(f"{w.filename}:{w.lineno}: {w.category.__name__}: {w.message}\n" for w in caught)
    error = result.exception
    if isinstance(error, click.exceptions.ClickException):  # cli.main prints these as one line, exit 2
        return Outcome(2, result.stdout, shown + f"error: {error.format_message()}\n", None)
    if error is not None and not isinstance(error, SystemExit):
        return Outcome(1, result.stdout, shown + result.stderr, error)
    code = result.return_value if isinstance(result.return_value, int) else result.exit_code
    return Outcome(code, result.stdout, shown + result.stderr, None)


def safe(args: str | list[str]):
    """Run and assert no traceback, exit 0 or 2, one error line on failure, no NaN/inf shown."""
    argv = shlex.split(args) if isinstance(args, str) else [str(a) for a in args]
    result = run(argv)
    if result.exception is not None:
        raise AssertionError(f"dpcost {args}: uncaught {type(result.exception).__name__}: {result.exception}") \
            from result.exception
    assert result.exit_code in (0, 2), (args, result.exit_code, result.output)
    assert "Traceback" not in result.output
    if result.exit_code == 2:
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert lines and all(line.startswith("error: ") for line in lines), (args, result.stderr)
        if argv[:2] != ["hardware", "validate"]:  # validate lists every problem, one line each
            assert len(lines) == 1, (args, result.stderr)
    else:
        assert not NON_FINITE.search(result.stdout), (args, result.stdout)
        assert not result.stderr.strip() or "Warning" not in result.stderr, (args, result.stderr)
    assert "\x1b" not in result.output and "\x07" not in result.output
    return result


def refused(args: str | list[str], word: str = ""):
    """Run and assert a one-line refusal (exit 2) that mentions ``word``."""
    result = safe(args)
    assert result.exit_code == 2, (args, result.stdout)
    assert word.lower() in result.stderr.lower(), (args, result.stderr)
    return result


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A scratch directory as the working directory."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
