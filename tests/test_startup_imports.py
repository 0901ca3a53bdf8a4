"""Single-answer CLI paths import neither numpy, sympy, pandas nor rich's markdown stack (start-up speed)."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("numpy", "sympy", "pandas", "rich.markdown")
SCALAR_PATHS = [
    "collective all-reduce -a ring --ranks 8 --size 4GB --alpha 5us --bandwidth 25GB/s",
    "collective all-reduce --cluster dgx-h100 --nodes 2 --size 1GB",
    "compare all-reduce --ranks 64 --size 1MB --alpha 5us --bandwidth 25GB/s",
]
HELP_PATHS = ["--help", "collective --help", "plan --help"]


@pytest.mark.parametrize("args", SCALAR_PATHS)
def test_scalar_paths_stay_light(args):
    code = ("import sys; from cli import main; sys.argv = ['dpcost'] + sys.argv[1].split()\n"
            "status = 0\n"
            "try:\n    main()\nexcept SystemExit as done:\n    status = done.code or 0\n"
            f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
            "sys.stderr.write(f'STATUS={status} HEAVY=' + ','.join(heavy))")
    result = subprocess.run([sys.executable, "-c", code, args], capture_output=True, text=True, timeout=120)
    assert "STATUS=0 " in result.stderr and "time" in result.stdout, result.stdout + result.stderr  # it answered
    heavy = result.stderr.rsplit("HEAVY=", 1)[-1].strip()
    assert heavy == "", f"dpcost {args} imported {heavy}"


@pytest.mark.parametrize("args", HELP_PATHS)
def test_help_stays_light(args):
    """Help is click's plain text: typer's rich formatter (rich.markdown, markdown-it) stays unloaded."""
    code = ("import sys; from cli import main; sys.argv = ['dpcost'] + sys.argv[1].split()\n"
            "status = 0\n"
            "try:\n    main()\nexcept SystemExit as done:\n    status = done.code or 0\n"
            f"heavy = [m for m in {HEAVY + ('rich', 'markdown_it', 'typer.rich_utils')!r} if m in sys.modules]\n"
            "sys.stderr.write(f'STATUS={status} HEAVY=' + ','.join(heavy))")
    result = subprocess.run([sys.executable, "-c", code, args], capture_output=True, text=True, timeout=120)
    assert "STATUS=0 " in result.stderr and "Usage:" in result.stdout, result.stdout + result.stderr
    heavy = result.stderr.rsplit("HEAVY=", 1)[-1].strip()
    assert heavy == "", f"dpcost {args} imported {heavy}"
