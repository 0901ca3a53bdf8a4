"""Test-wide settings.

Hypothesis runs derandomized by default, so CI and a fresh clone see the same examples every
time (a property failure is then a real regression, not a new random draw). To explore new
examples: ``python -m pytest --hypothesis-profile=explore``.
"""

import pytest
from hypothesis import settings

settings.register_profile("default", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, max_examples=500, print_blob=True)
settings.load_profile("default")


@pytest.fixture
def cli_error():
    """Run the CLI and return its one error line: a user's bad input is exactly one line on
    stderr, starting "error: ", with exit code 2."""
    from typer.testing import CliRunner

    from cli import app

    def run(args) -> str:
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
        return lines[0]

    return run
