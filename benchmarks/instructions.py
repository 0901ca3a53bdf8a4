"""CLI cost as instruction counts (valgrind's callgrind): deterministic where CPU time is not.

CPU time on a shared 2-core VM moves by 10-20 % from run to run, more than most changes to
dpcost's own start-up; the instructions a process retires do not (two runs agree to 0.1 %).
This script runs each CLI path of `benchmarks/speed_ratios.py`, the floors and `python -c pass`
once under ``valgrind --tool=callgrind`` (after one plain run that warms dpcost's parsed-TOML
cache) and reports millions of instructions and the ratio to `python -c pass`. With several
``--python`` environments (e.g. an install of the previous commit beside the current one) it
puts them side by side. Instructions are not time — `python -c pass` spends much of its CPU
time loading the interpreter rather than retiring instructions, so these ratios run higher
than the CPU-time ones — but a change that lowers them lowers the work.

    python benchmarks/instructions.py --python ENV/bin/python [--python OLD/bin/python] [--write]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from speed_ratios import FLOORS, PATHS  # noqa: E402

DOC = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- instructions:begin -->", "<!-- instructions:end -->"


def _environment(changes: dict[str, str | None]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in changes}
    return env | {k: v for k, v in changes.items() if v is not None}


def instructions(command: list[str], changes: dict[str, str | None] | None = None) -> int:
    """Instructions ``command`` retires (callgrind's "Collected"), after one warm-up run."""
    env = _environment(changes or {})
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env)
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out", *command],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False, env=env)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if not found:
        raise SystemExit(f"error: callgrind gave no count for {' '.join(command)}:\n{out.stderr[-500:]}")
    return int(found.group(1))


def measure(python: str) -> dict[str, int]:
    cli = str(Path(python).parent / "dpcost")
    counts = {"`python -c pass`": instructions([python, "-c", "pass"])}
    counts |= {label: instructions([python, "-c", code], extra) for label, (code, extra) in FLOORS.items()}
    counts |= {label: instructions([cli, *args]) for label, (args, _goal) in PATHS.items()}
    return counts


def render(columns: dict[str, dict[str, int]]) -> str:
    names = list(columns)
    lines = [f"Measured by `python benchmarks/instructions.py --write` (valgrind callgrind, Python "
             f"{sys.version.split()[0]}): millions of instructions, and in brackets the ratio to the same "
             "environment's `python -c pass`.", "",
             "| path | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for label in columns[names[0]]:
        cells = []
        for name in names:
            count, base = columns[name][label], columns[name]["`python -c pass`"]
            cells.append(f"{count / 1e6:,.0f} M ({count / base:.1f}×)")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", action="append", help="an environment's interpreter (repeat to compare)")
    parser.add_argument("--label", action="append", help="a column title per --python (default: its path)")
    parser.add_argument("--write", action="store_true", help="replace the section in docs/performance.md")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("error: valgrind is not installed (apt-get install valgrind)")
    pythons = args.python or [sys.executable]
    labels = args.label or pythons
    if len(labels) != len(pythons):
        raise SystemExit("error: give one --label per --python")
    table = render({label: measure(python) for label, python in zip(labels, pythons)})
    print(table)
    if args.write:
        text = DOC.read_text(encoding="utf-8")
        start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
        DOC.write_text(text[:start] + "\n" + table + "\n" + text[end:], encoding="utf-8")


if __name__ == "__main__":
    main()
