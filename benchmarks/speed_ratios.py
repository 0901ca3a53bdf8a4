"""Speed as ratios measured in one run (issue 16): CPU time against `python -c pass`, configurations/s.

1. Each CLI path in a fresh process, alternated with `python -c pass` from the same interpreter,
   pair by pair; the ratio is the median over pairs of (CPU time of the command) / (CPU time of
   `python -c pass`). CPU time = user + system of the child (resource.getrusage), so the
   machine's other load barely moves it.
2. In-process throughputs: one configuration at a time (`iteration_breakdown`, ideal and
   realistic comm), `plan()` with its explanation (configurations swept / s), the NCCL-backend
   plan, and the sweep kernel without explanation.

Peers (not installed here; their figures are the side-by-side measurement quoted in issue 16,
same method): llm-analysis 10.3x `python -c pass` per CLI answer and ~1,416 configurations/s;
Calculon 38x and 33-225 configurations/s.

    python benchmarks/speed_ratios.py [--pairs 7] [--python ENV/bin/python] [--write]

Measure the CLI in an environment where dpcost is installed the way a user installs it
(``pip install .``, the README's first command): ``--python`` names that environment's
interpreter, and its ``dpcost`` console script is what runs. An editable install (``pip
install -e``, the development venv) is the wrong place: its ``python -c pass`` also loads the
editable finder and every test tool's ``.pth`` file (27 ms against 12 ms here), which halves
every ratio. The script refuses an editable environment unless ``--allow-editable`` is given.
The floors are measured the same way: ``import typer`` (every typer CLI pays it) and ``import
numpy`` (every vectorised sweep pays it), the latter with one OpenBLAS thread as dpcost's CLI
loads it (``OPENBLAS_NUM_THREADS=1`` unless the user set it: starting a thread per core costs
more CPU than anything dpcost asks of BLAS) and with numpy's default.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# The peers, measured side by side with the same method (issue 16): CPU time of one CLI answer
# over `python -c pass`, and configurations per second one at a time (Calculon: a range).
PEER_CLI_RATIOS = {"llm-analysis": 10.3, "Calculon": 38.0}
PEER_RATES = {"llm-analysis": 1416.0, "Calculon (low)": 33.0, "Calculon (high)": 225.0}

# (code, environment changes; None unsets): numpy's floor as dpcost loads it (cli.py sets one
# OpenBLAS thread unless the user set one), and numpy's own default, a thread per core.
FLOORS = {"`import typer` (any typer CLI)": ("import typer", {}),
          "`import numpy`, one OpenBLAS thread (any vectorised sweep; as dpcost loads it)":
              ("import numpy", {"OPENBLAS_NUM_THREADS": "1"}),
          "`import numpy`, numpy's default (an OpenBLAS thread per core)":
              ("import numpy", {"OPENBLAS_NUM_THREADS": None})}
PATHS = {
    "`dpcost --help`": (["--help"], 5),
    "`dpcost collective` (α-β)": (["collective", "all-reduce", "-a", "ring", "--ranks", "8", "--size", "4GB",
                                  "--alpha", "5us", "--bandwidth", "25GB/s"], 4),
    "`dpcost collective` (cluster, NCCL mode)": (["collective", "all-reduce", "--cluster", "dgx-h100", "--nodes", "2",
                                                 "--size", "1GB"], 4),
    "`dpcost iteration`": (["iteration", "--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "4",
                            "--micro-batch", "1", "--seq-len", "4096", "--accum", "4"], 6),
    "`dpcost plan` (README)": (["plan", "--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "4",
                                "--global-batch", "512", "--seq-len", "4096"], 10),
}


def _cpu(command: list[str], changes: dict[str, str | None] | None = None) -> float:
    env = None
    if changes:
        env = {k: v for k, v in os.environ.items() if k not in changes}
        env |= {k: v for k, v in changes.items() if v is not None}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def editable(python: str) -> bool:
    """Whether ``python``'s environment has dpcost installed in editable mode (PEP 660)."""
    code = ("import json, importlib.metadata as m\n"
            "d = m.distribution('dpcost').read_text('direct_url.json') or '{}'\n"
            "print(json.loads(d).get('dir_info', {}).get('editable', False))")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False).stdout.strip()
    return out == "True"


def cli_ratios(pairs: int, python: str) -> dict[str, dict]:
    baseline = [python, "-c", "pass"]
    cli = [str(Path(python).parent / "dpcost")]
    commands = {label: (cli + args, goal, {}) for label, (args, goal) in PATHS.items()}
    commands |= {label: ([python, "-c", code], None, extra) for label, (code, extra) in FLOORS.items()}
    out = {}
    for label, (command, goal, extra) in commands.items():
        ratios = []
        _cpu(command, extra)  # warm the file cache
        for _ in range(pairs):
            ratios.append(_cpu(command, extra) / max(_cpu(baseline), 1e-4))
        out[label] = {"ratio": statistics.median(ratios), "goal": goal}
    return out


def _rate(function, seconds: float = 2.0) -> float:
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        done += function()
    return done / (time.perf_counter() - start)


def throughputs() -> dict[str, dict]:
    import hardware
    from costmodel.cluster.comm import comm_model
    from costmodel.planner.recommend import plan
    from costmodel.training.iteration import TrainingConfig, iteration_breakdown
    from costmodel.training.workloads import load_model

    system = hardware.load_system("dgx-h100")
    workload = load_model("llama2-7b")
    rng = random.Random(0)
    models = {backend: [comm_model(system, n, backend=backend) for n in (1, 2, 4)] for backend in ("ideal", "auto")}

    def one(backend: str):
        def call() -> int:
            comm = rng.choice(models[backend])
            config = TrainingConfig(micro_batch=rng.choice((1, 2, 4)), seq_len=4096,
                                    accumulation_steps=rng.choice((1, 4, 16)), zero_stage=rng.choice((0, 1, 2, 3)))
            iteration_breakdown(workload, system.gpu, comm, config=config)
            return 1
        return call

    def planned(**kwargs):  # the large plan of benchmarks/planner_speed.py: fixed costs do not dominate
        def call() -> int:
            return plan("llama2-70b", "dgx-h100", nodes=64, global_batch=1024, seq_len=4096, **kwargs).configurations
        return call

    def large() -> int:  # the sweep kernel's space (planner_speed.py) through plan(), explanation included
        mib = 1 << 20
        return plan("1.3B", "dgx-h100", nodes=64, global_batch=20160, seq_len=2048, max_gpus=512,
                    bucket_bytes=tuple(s * mib for s in (1, 2, 5, 10, 25, 50, 100, 400)),
                    grad_dtypes=("bf16", "fp32", "fp16", "fp8")).configurations

    plan("llama2-70b", "dgx-h100", nodes=64, global_batch=1024, seq_len=4096)  # warm caches
    return {
        "one configuration at a time, ideal comm (`iteration_breakdown`)": {"rate": _rate(one("ideal")), "goal": 20_000},
        "one configuration at a time, NCCL comm": {"rate": _rate(one("auto")), "goal": 20_000},
        "`plan()` with its explanation (70B on up to 64 nodes, NCCL backend: 8,320 configurations)": {
            "rate": _rate(planned()), "goal": 1e6},
        "`plan()` with its explanation, a large plan (1.3B on up to 64 nodes, 8 bucket sizes x 4 gradient dtypes, "
        "NCCL backend: 436,224 configurations)": {"rate": _rate(large), "goal": 1e6},
        "`plan()` without the explanation, NCCL backend": {"rate": _rate(planned(explain=False)), "goal": 3e5},
        # Issue 16's 10^7 is the sweep kernel's (the last row); a whole plan() of this size is held
        # to plan()'s 10^6 (its fixed cost, the textbook algorithms' collective tables, is most of it).
        "`plan()` without the explanation, ideal backend (6,240 configurations)": {
            "rate": _rate(planned(explain=False, backend="ideal")), "goal": 1e6},
        "sweep kernel (precompute + sweep + ranking, 1.3B on up to 64 nodes, ideal; planner_speed.py)": {
            "rate": _kernel_rate(), "goal": 1e7},
    }


def _kernel_rate() -> float:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from planner_speed import vectorised_rate

    return vectorised_rate("ideal")["configs_per_s"]


def render(ratios: dict, rates: dict, python: str) -> str:
    kind = "an editable install (ratios understated)" if editable(python) else "a regular `pip install .`"
    lines = [f"Measured by `python benchmarks/speed_ratios.py --python <env>/bin/python --write` in one run on 2 "
             f"cores, Python {sys.version.split()[0]}, dpcost from {kind}: CPU time of a fresh process over that of "
             "the same environment's `python -c pass`, alternated pair by pair (median); in-process rates over 2 s "
             "each.", "",
             "| CLI path | CPU time vs `python -c pass` | goal |", "|---|---|---|"]
    for label, r in ratios.items():
        if r["goal"] is None:
            lines.append(f"| {label} | {r['ratio']:.1f}× | floor |")
            continue
        mark = "✓" if r["ratio"] <= r["goal"] else "✗"
        lines.append(f"| {label} | {r['ratio']:.1f}× | ≤ {r['goal']}× {mark} |")
    lines += ["", "| in process | configurations/s | goal |", "|---|---|---|"]
    for label, r in rates.items():
        mark = "✓" if r["rate"] >= r["goal"] else "✗"
        lines.append(f"| {label} | {r['rate']:,.0f} | ≥ {r['goal']:,.0f} {mark} |")
    lines += ["", "Peers, measured side by side with the same method (issue 16): llm-analysis "
              f"{PEER_CLI_RATIOS['llm-analysis']:g}× `python -c pass` per CLI answer and "
              f"≈ {PEER_RATES['llm-analysis']:,.0f} configurations/s one at a time; Calculon "
              f"{PEER_CLI_RATIOS['Calculon']:g}× and {PEER_RATES['Calculon (low)']:.0f}–"
              f"{PEER_RATES['Calculon (high)']:.0f} configurations/s."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--python", default=sys.executable,
                        help="interpreter of an environment with dpcost installed by `pip install .`")
    parser.add_argument("--allow-editable", action="store_true", help="measure an editable install anyway")
    parser.add_argument("--write", action="store_true", help="replace the ratios section of docs/performance.md")
    args = parser.parse_args()
    if editable(args.python) and not args.allow_editable:
        raise SystemExit("error: --python: dpcost is installed editable there (its `python -c pass` loads the "
                         "editable finder and halves every ratio); make one with `python3 -m venv /tmp/v && "
                         "/tmp/v/bin/pip install .` and pass --python /tmp/v/bin/python")
    text = render(cli_ratios(args.pairs, args.python), throughputs(), args.python)
    if args.write:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from accuracy import write_section

        write_section(ROOT / "docs" / "performance.md", "ratios", text)
        print("wrote the ratios section of docs/performance.md")
    print(text)


if __name__ == "__main__":
    main()
