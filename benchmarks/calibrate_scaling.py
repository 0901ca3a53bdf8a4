"""Cost of `dpcost calibrate` against the size of the log: wall time and peak memory.

Synthetic nccl-tests all_reduce_perf logs (current text layout, out-of-place and in-place
blocks), times from a three-protocol α-β curve (LL / LL128 / Simple) with ±2 % noise:

* ``-f 1.1`` from 8 B: 218 distinct sizes (one row each);
* ``-f 1.05`` from 8 B: 400 distinct sizes;
* a large log: the 218-size sweep repeated (``-n`` iterations printed as separate runs)
  until the file is about ``--large-mb`` MB.

Each case runs `dpcost calibrate LOG --ranks 16 --json` in a fresh process (imports
included) under a memory limit; wall time and the peak resident set (ru_maxrss of the child)
are reported, or why the run failed (killed, limit).

    python benchmarks/calibrate_scaling.py                 # text
    python benchmarks/calibrate_scaling.py --large-mb 200  # the issue's 200 MB log
"""

from __future__ import annotations

import argparse
import json
import math
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEMORY_LIMIT_BYTES = 4 << 30
TIMEOUT_S = 600
# The child reports its own peak resident set (KiB on Linux) when it exits.
CHILD = ("import atexit, resource, sys; atexit.register(lambda: sys.stderr.write("
         "f'\\nmaxrss_kib={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n')); "
         "sys.argv[0] = 'dpcost'; import cli; cli.main()")


def _time_us(size: int, rng: random.Random) -> float:
    """A three-protocol α-β curve in µs (LL, LL128, Simple), the fastest at each size."""
    curves = ((8.0, 4e9), (14.0, 40e9), (30.0, 180e9))
    best = min(alpha + size / bw * 1e6 for alpha, bw in curves)
    return best * (1 + rng.uniform(-0.02, 0.02))


def sizes_for(factor: float, count: int) -> list[int]:
    sizes, size = [], 8.0
    while len(sizes) < count:
        whole = int(round(size / 4)) * 4 or 4
        if not sizes or whole > sizes[-1]:
            sizes.append(whole)
        size *= factor
    return sizes


def log_text(sizes: list[int], repeats: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    lines = ["# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 1.1(factor) warmup iters: 5 iters: 20",
             "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"]
    for _ in range(repeats):
        for size in sizes:
            t1, t2 = _time_us(size, rng), _time_us(size, rng)
            bw1, bw2 = size / t1 / 1e3, size / t2 / 1e3
            lines.append(f"{size:>12} {size // 4:>12}     float     sum      -1 {t1:8.2f} {bw1:7.2f} {bw1 * 1.875:7.2f}"
                         f"      0 {t2:8.2f} {bw2:7.2f} {bw2 * 1.875:7.2f}      0")
    lines.append("# Out of bounds values : 0 OK")
    return "\n".join(lines) + "\n"


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))


def run_case(path: Path) -> dict:
    start = time.perf_counter()
    command = [sys.executable, "-c", CHILD,
               "calibrate", str(path), "--ranks", "16", "--json"]
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S,
                              preexec_fn=_limit)
    except subprocess.TimeoutExpired:
        return {"ok": False, "why": f"timeout after {TIMEOUT_S} s"}
    wall = time.perf_counter() - start
    peaks = [int(line.split("=")[1]) for line in done.stderr.splitlines() if line.startswith("maxrss_kib=")]
    result = {"wall_s": round(wall, 2), "peak_rss_MB": round(peaks[-1] / 1024, 1) if peaks else None,
              "ok": done.returncode == 0}
    if done.returncode == 0:
        summary = json.loads(done.stdout)
        result |= {"points": summary["points"], "regimes": len(summary["regimes"]),
                   "median_abs_pct_error": round(summary["median_abs_pct_error"], 3)}
    else:
        errors = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("maxrss_kib=")]
        result["why"] = (errors or [f"exit {done.returncode}"])[-1][:200]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large-mb", type=float, default=200.0, help="Size of the large log (MB).")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sweep_218 = sizes_for(1.1, 218)
    cases = {"218 sizes (-f 1.1)": (sweep_218, 1), "400 sizes (-f 1.05)": (sizes_for(1.05, 400), 1)}
    row_bytes = len(log_text(sweep_218, 1)) / len(sweep_218)
    cases[f"~{args.large_mb:g} MB log (218 sizes repeated)"] = (
        sweep_218, max(1, math.ceil(args.large_mb * 1e6 / row_bytes / len(sweep_218))))
    report = {}
    with tempfile.TemporaryDirectory() as folder:
        for label, (sizes, repeats) in cases.items():
            path = Path(folder) / "all_reduce_perf.log"
            path.write_text(log_text(sizes, repeats), encoding="utf-8")
            report[label] = {"log_MB": round(path.stat().st_size / 1e6, 3), "rows": len(sizes) * repeats,
                             **run_case(path)}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for label, row in report.items():
        print(f"{label:<36} {row['log_MB']:>7} MB {row['rows']:>9} rows: "
              + (f"{row['wall_s']:>7} s, peak {row['peak_rss_MB']} MB, {row['regimes']} regime(s), "
                 f"median error {row['median_abs_pct_error']} %" if row["ok"] else f"failed ({row['why']})"))


if __name__ == "__main__":
    main()
