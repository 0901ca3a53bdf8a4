"""Speed of the core (issue 2): vectorised evaluations per second and CLI wall time.

    python benchmarks/core_speed.py

(a) ring all-reduce over a 10^6-point grid of (N, n, α, β): evaluations per second on one core;
(b) median wall time of one `dpcost collective …` call (a fresh Python process each time).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def grid_rate(points: int = 1_000_000, repeats: int = 5) -> float:
    import numpy as np

    from costmodel.collectives.evaluate import evaluate_grid

    rng = np.random.default_rng(0)
    ranks = rng.integers(1, 4096, points).astype(float)
    size = rng.uniform(1, 1e10, points)
    alpha = rng.uniform(1e-6, 2e-5, points)
    bw = rng.uniform(1e9, 5e11, points)
    best = min(_timed(lambda: evaluate_grid("all-reduce", "ring", ranks, size, alpha, bw)) for _ in range(repeats))
    return points / best


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def cli_wall(args: list[str], runs: int = 15) -> float:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], check=True, capture_output=True, env=env)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    rate = grid_rate()
    print(f"(a) ring all-reduce, 10^6-point grid: {rate:,.0f} evaluations/s (goal >= 10^7)")
    query = ["collective", "all-reduce", "--algorithm", "ring", "--ranks", "64", "--size", "1GB",
             "--alpha", "5us", "--bandwidth", "25GB/s"]
    print(f"(b) dpcost collective … median wall: {cli_wall(query) * 1000:.0f} ms (goal < 500 ms; aim < 130 ms)")
    print(f"    python -c pass median wall: {cli_wall_python() * 1000:.0f} ms (interpreter start-up floor)")


def cli_wall_python(runs: int = 15) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


if __name__ == "__main__":
    main()
