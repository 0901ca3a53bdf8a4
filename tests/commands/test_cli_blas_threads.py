"""The CLI starts numpy with one OpenBLAS thread unless the user chose a number."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = "import os, cli; print(os.environ['OPENBLAS_NUM_THREADS'])"


def _probe(**extra: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"} | extra
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env,
                          check=True, cwd=ROOT).stdout.strip()


def test_one_thread_by_default():
    assert _probe() == "1"


def test_the_users_choice_is_kept():
    assert _probe(OPENBLAS_NUM_THREADS="4") == "4"
