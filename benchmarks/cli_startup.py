"""Start-up: wall time of the CLI's query commands, each in a fresh process (issue 8), as a ratio.

    python benchmarks/cli_startup.py            # print the table
    python benchmarks/cli_startup.py --write    # also replace the table in docs/performance.md

Runs the installed ``dpcost`` console script when there is one (what a user types), else
``python cli.py``, alternated run by run with ``python -c pass`` from the same interpreter; the
table quotes the median of the per-pair wall-time ratios (what a user waits, against the
interpreter's own start), not an absolute time from a shared machine. Issue 8's goals (under
0.5 s for --help, collective and iteration; under 2 s for plan, on a 2-core machine) are checked
on the same runs and reported as met or not.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from accuracy import write_section  # noqa: E402  (benchmarks/accuracy.py: one section writer)
from speed_ratios import editable  # noqa: E402  (an editable install's `python -c pass` is slower)

REPORT = ROOT / "docs" / "performance.md"
SECTION = "startup"

COMMANDS = [  # (label, arguments, goal in seconds)
    ("dpcost --help", "--help", 0.5),
    ("dpcost collective (α-β query)", "collective all-reduce --algorithm ring --ranks 8 --size 4GB --alpha 5us --bandwidth 25GB/s", 0.5),
    ("dpcost collective (cluster, NCCL mode)", "collective all-reduce --cluster dgx-h100 --nodes 2 --size 1GB --backend nccl", 0.5),
    ("dpcost iteration", "iteration --model llama2-7b --cluster dgx-h100 --nodes 4 --micro-batch 1 --seq-len 4096 --accum 4", 0.5),
    ("dpcost plan (README quick start)", "plan --model llama2-7b --cluster dgx-h100 --nodes 4 --global-batch 512 --seq-len 4096", 2.0),
    ("dpcost plan (70B, 64 nodes)", "plan --model llama2-70b --cluster dgx-h100 --nodes 64 --global-batch 1024 --seq-len 4096", 2.0),
]


def launcher() -> list[str]:
    """The ``dpcost`` of this interpreter's environment (the one its ``python -c pass`` is timed
    in), else the one on PATH, else ``python cli.py``."""
    own = Path(sys.executable).parent / "dpcost"
    script = str(own) if own.exists() else shutil.which("dpcost")
    return [script] if script else [sys.executable, str(ROOT / "cli.py")]


def _wall(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, check=True)
    return time.perf_counter() - start


def wall_pairs(arguments: str, runs: int) -> list[tuple[float, float]]:
    """(command, ``python -c pass``) wall seconds, alternated run by run."""
    command = [*launcher(), *shlex.split(arguments)]
    baseline = [sys.executable, "-c", "pass"]
    _wall(command)  # warm the file cache once
    return [(_wall(command), _wall(baseline)) for _ in range(runs)]


def measure(runs: int) -> list[dict]:
    rows = []
    for label, arguments, goal_s in COMMANDS:
        pairs = wall_pairs(arguments, runs if goal_s < 1 else max(3, runs // 3))
        rows.append({"label": label, "command": f"dpcost {arguments}",
                     "ratio": statistics.median(t / base for t, base in pairs),
                     "met": statistics.median(t for t, _ in pairs) < goal_s, "runs": len(pairs), "goal_s": goal_s})
    return rows


def markdown(rows: list[dict]) -> str:
    lines = [f"Measured by `python benchmarks/cli_startup.py --write` on {os.cpu_count()} cores, "
             f"Python {platform.python_version()}, dpcost from "
             f"{'an editable install (ratios understated)' if editable(sys.executable) else 'a regular `pip install .`'}"
             ": each command a fresh process, alternated with `python -c pass` "
             "from the same interpreter; the median of the per-pair wall-time ratios. Issue 8's goal is checked on "
             "the same runs' median.",
             "", "| command | wall time vs `python -c pass` | runs | issue 8's goal |", "|---|---|---|---|"]
    for r in rows:
        verdict = "✓" if r["met"] else "✗"
        lines.append(f"| {r['label']} | {r['ratio']:.1f}× | {r['runs']} | < {r['goal_s'] * 1000:.0f} ms {verdict} |")
    lines += ["", "Commands:", "", "```console", *(f"$ {r['command']}" for r in rows), "```"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs per fast command (plans: a third)")
    parser.add_argument("--write", action="store_true", help=f"replace the table in {REPORT.relative_to(ROOT)}")
    args = parser.parse_args()
    body = markdown(measure(args.runs))
    print(body)
    if args.write:
        write_section(REPORT, SECTION, body)
        print(f"wrote {REPORT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
