"""The README's first quick-start command works on a fresh machine: a new venv, `pip install .`, the main job.

The command is read from the README itself (so the test and the README cannot disagree) and run
with bash in a scratch copy of the project, as a new user would paste it. It needs the package
index (as CI has); it takes about a minute, most of it pip.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKIP = {".git", ".venv", "venv", "__pycache__", ".pytest_cache", ".hypothesis", "build", "dist"}


def quick_start_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S)]


def _fresh_shell_env() -> dict[str, str]:
    """The caller's environment without the test run's own virtualenv (a new shell's PATH)."""
    venv = Path(sys.prefix).resolve()
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep)
            if p and not Path(p).resolve().is_relative_to(venv)]
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    return env | {"PATH": os.pathsep.join(path or ["/usr/local/bin", "/usr/bin", "/bin"]),
                  "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def test_readme_has_exactly_two_quick_start_commands():
    commands = quick_start_commands()
    assert len(commands) == 2 and all("\n" not in c for c in commands)
    assert "pip install ." in commands[0] and "dpcost " in commands[0]
    assert "pytest" in commands[1]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_first_quick_start_command_in_a_fresh_venv(tmp_path):
    project = tmp_path / "dpcost"
    shutil.copytree(ROOT, project, ignore=lambda _dir, names: [n for n in names if n in SKIP or n.endswith(".egg-info")])
    command = quick_start_commands()[0]
    done = subprocess.run(["bash", "-c", command], cwd=project, capture_output=True, text=True, timeout=1500,
                          env=_fresh_shell_env())
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Recommended:" in done.stdout
    assert "Traceback" not in done.stderr
