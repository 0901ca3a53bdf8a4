"""Start-up: median wall time of the CLI's query commands, each in a fresh process (issue 8).

    python benchmarks/cli_startup.py            # print the table
    python benchmarks/cli_startup.py --write    # also replace the table in docs/performance.md

Runs the installed ``dpcost`` console script when there is one (what a user types), else
``python cli.py``. Goals: under 0.5 s for --help, collective and iteration; under 2 s for plan,
on a 2-core machine.
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
    script = shutil.which("dpcost")
    return [script] if script else [sys.executable, str(ROOT / "cli.py")]


def wall_times(arguments: str, runs: int) -> list[float]:
    command = [*launcher(), *shlex.split(arguments)]
    subprocess.run(command, capture_output=True, check=True)  # warm the file cache once
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return times


def measure(runs: int) -> list[dict]:
    rows = []
    for label, arguments, goal_s in COMMANDS:
        times = wall_times(arguments, runs if goal_s < 1 else max(3, runs // 3))
        rows.append({"label": label, "command": f"dpcost {arguments}", "median_s": statistics.median(times),
                     "min_s": min(times), "runs": len(times), "goal_s": goal_s})
    return rows


def markdown(rows: list[dict]) -> str:
    lines = [f"Measured by `python benchmarks/cli_startup.py --write` on {os.cpu_count()} cores, "
             f"Python {platform.python_version()}, each command a fresh process (median of the runs shown).",
             "", "| command | median wall | fastest | runs | goal |", "|---|---|---|---|---|"]
    for r in rows:
        verdict = "✓" if r["median_s"] < r["goal_s"] else "✗"
        lines.append(f"| {r['label']} | {r['median_s'] * 1000:.0f} ms | {r['min_s'] * 1000:.0f} ms | {r['runs']} "
                     f"| < {r['goal_s'] * 1000:.0f} ms {verdict} |")
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
