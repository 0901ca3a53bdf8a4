"""Speed of the planner: configurations per second of the vectorised sweep, and `dpcost plan`.

1. A sweep of 327,168 configurations on the ideal backend, 436,224 on NCCL's (every all-reduce algorithm × 4 ZeRO stages ×
   4 gradient dtypes × 8 bucket sizes × every exact (GPUs, micro-batch, accumulation) split of
   a global batch with many divisors on up to 64 DGX H100 nodes), timed end to end: the
   collective-time precomputation, the numpy sweep and the ranking. One core (numpy's
   elementwise kernels are single-threaded). The first run of the process (cold: memory
   pages, lazy imports) and the median of the runs are reported, for the ideal backend and
   for the nccl backend (NCCL's four algorithm choices, so fewer configurations).
2. The same configurations per second through the scalar API (`iteration_breakdown` one at a
   time, a random sample, a comm model built for each; memoised inputs warm up over the sample, as
   they would in a planner author's loop), beside the peers' rates, which are one
   configuration at a time too: llm-analysis ≈ 1,416 /s and Calculon 33–225 /s, measured side by
   side with the same method (issue 16; docs/performance.md). Only that comparison is like for
   like: the sweep is a vectorised kernel over a grid, which the peers do not offer.
3. `dpcost plan` for llama2-70b on 64 nodes, wall time of a fresh process (imports included),
   median of the runs.

    python benchmarks/planner_speed.py          # text
    python benchmarks/planner_speed.py --json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from speed_ratios import PEER_RATES  # noqa: E402  (one configuration at a time, issue 16)

MIB = 1 << 20
# 20160 = 2^6·3^2·5·7: many divisors, so many exact batch splits.
GLOBAL_BATCH = 20160
BUCKETS = tuple(size * MIB for size in (1, 2, 5, 10, 25, 50, 100, 400))
DTYPES = ("bf16", "fp32", "fp16", "fp8")
CLI_ARGS = ["plan", "--model", "llama2-70b", "--cluster", "dgx-h100", "--nodes", "64",
            "--global-batch", "1024"]

RUNS = 7


def _planner_inputs(backend: str = "ideal"):
    import hardware
    from costmodel.planner import recommend as planner
    from costmodel.planner.comm import all_reduce_algorithms
    from costmodel.training.workloads import load_model

    system = hardware.load_system("dgx-h100")
    space = planner.build_space(system, nodes=64, global_batch=GLOBAL_BATCH, min_gpus=1,
                                max_gpus=512, algorithms=all_reduce_algorithms(system, 64, backend),
                                bucket_bytes=BUCKETS, grad_dtypes=DTYPES)
    setting = planner.training_setting(load_model("1.3B"), system, seq_len=2048, compute_dtype="bf16",
                               mfu=None, optimizer="adamw", jitter_cv=0.0, backend=backend)
    return system, space, setting


def vectorised_rate(backend: str = "ideal", runs: int = RUNS) -> dict:
    """Configurations per second of precompute + sweep + ranking: first run and median."""
    from costmodel.planner import choose, grid, recommend
    from costmodel.planner.rank import objective_scores

    system, space, setting = _planner_inputs(backend)
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        sweep = grid.sweep(setting, system, space)
        scores = objective_scores(sweep, setting, "throughput", None)
        # ranked as plan() ranks a ten-row table: the rows it fetches to collapse bucket-only duplicates too
        recommend._ranked(scores, choose.rule_keys(sweep, setting.workload.params, scores), 10, choose.TIE_BAND)
        timings.append(time.perf_counter() - start)
    configs = int(sweep.total_s.size)
    median = statistics.median(timings)
    return {"backend": backend, "configurations": configs, "seconds": median,
            "first_run_s": timings[0], "runs": runs, "configs_per_s": configs / median}


def scalar_rate(samples: int = 300) -> dict:
    """Configurations per second of the scalar iteration API on a random sample of the grid."""
    from costmodel.cluster import mapping as cluster
    from costmodel.cluster.comm import CommModel
    from costmodel.training.iteration import TrainingConfig, iteration_breakdown

    system, space, setting = _planner_inputs()
    rng = random.Random(0)
    start = time.perf_counter()
    for _ in range(samples):
        c = rng.randrange(len(space.micro_batch))
        nodes, per_node = space.layouts[int(space.cell_layout[c])]
        comm = CommModel(cluster.layout(system, nodes, per_node), "ring", "ideal").time_s
        config = TrainingConfig(micro_batch=int(space.micro_batch[c]), seq_len=setting.seq_len,
                                accumulation_steps=int(space.accumulation[c]),
                                grad_dtype=rng.choice(DTYPES), bucket_bytes=rng.choice(BUCKETS),
                                zero_stage=rng.choice((0, 1, 2, 3)))
        iteration_breakdown(setting.workload, system.gpu, comm, nodes * per_node, config)
    seconds = time.perf_counter() - start
    return {"configurations": samples, "seconds": seconds, "configs_per_s": samples / seconds}


def cli_wall(seq_len: int, runs: int = RUNS) -> dict:
    """Wall and CPU time of a fresh `dpcost plan` process (median of the runs)."""
    command = [sys.executable, str(ROOT / "cli.py")]
    walls, cpus, codes = [], [], set()
    for _ in range(runs):
        start, before = time.perf_counter(), os.times()
        done = subprocess.run([*command, *CLI_ARGS, "--seq-len", str(seq_len)],
                              capture_output=True, text=True, check=False)
        after = os.times()
        walls.append(time.perf_counter() - start)
        cpus.append(after.children_user + after.children_system
                    - before.children_user - before.children_system)
        codes.add(done.returncode)
    return {"seq_len": seq_len, "wall_s": statistics.median(walls),
            "cpu_s": statistics.median(cpus), "exit_code": max(codes), "runs": runs, "via": "cli.py"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    fast, slow = vectorised_rate(), scalar_rate()
    nccl = vectorised_rate("nccl")
    report = {"vectorised": fast, "vectorised_nccl": nccl, "scalar_iteration_api": slow,
              "scalar_over_peers": {name: slow["configs_per_s"] / rate
                                    for name, rate in PEER_RATES.items()},
              "speedup_over_scalar": fast["configs_per_s"] / slow["configs_per_s"],
              "cli": [cli_wall(4096), cli_wall(2048)]}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for run in (fast, nccl):
        print(f"vectorised sweep, {run['backend']} backend: {run['configurations']:,} configurations "
              f"in {run['seconds']:.3f} s (median of {run['runs']}; first run "
              f"{run['first_run_s']:.3f} s) = {run['configs_per_s']:,.0f} configs/s "
              "(precompute + sweep + ranking, one core)")
    print(f"scalar iteration API, a comm model built per configuration: {slow['configs_per_s']:,.0f} "
          f"configs/s (the sweep is x{report['speedup_over_scalar']:,.0f} that: not comparable with the peers)")
    for name, factor in report["scalar_over_peers"].items():
        print(f"  vs {name}, one configuration at a time ({PEER_RATES[name]:,.0f} configs/s): x{factor:,.1f}")
    for run in report["cli"]:
        print(f"dpcost plan llama2-70b, 64 nodes, seq {run['seq_len']} ({run['via']}): "
              f"wall {run['wall_s']:.2f} s, CPU {run['cpu_s']:.2f} s (median of {run['runs']}), "
              f"exit code {run['exit_code']}")


if __name__ == "__main__":
    main()
