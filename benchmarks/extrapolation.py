"""Node-count extrapolation from a calibrated cluster (issue 14): fit at few node counts, predict the rest.

For every validation log with measurements at three or more node counts (one collective, one
algorithm setting), the curves of the smallest multi-node count (and the one-node curve where the
log has it) become a calibrated cluster profile (``costmodel.calibrate.cluster_profile``); every
other node count is then predicted through ``costmodel.cluster`` (``--cluster my.toml``): the
realistic model scaled by the nearest measured layout's measured/model ratio. Reported: the
median |error| per held-out node count and the median over them.

    python benchmarks/extrapolation.py [--write]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from accuracy import DATA, EXCLUDED, read_rows, system_for, write_section  # noqa: E402

MIN_NODE_COUNTS = 3


def _curve(rows, system, nodes, per_node):
    from costmodel.calibrate.cluster_profile import _regimes
    from costmodel.calibrate.fit import cross_validate, fit_times
    from hardware.profiles import MeasuredCurve

    sizes = [float(r["size_bytes"]) for r in rows if float(r["size_bytes"]) > 0]
    times = [float(r["time_us_oop"]) * 1e-6 for r in rows if float(r["size_bytes"]) > 0]
    fit = fit_times(sizes, times)
    try:
        _, errors = cross_validate(sizes, times)
        error = float(statistics.median(abs(e) for e in errors))
    except Exception:  # noqa: BLE001 - too few sizes: in-sample
        error = fit.median_abs_pct_error / 100
    name = rows[0]["collective"].removesuffix("_perf").replace("_", "-")
    return MeasuredCurve(collective=name, algorithm=(rows[0]["nccl_algo_env"] or "auto").lower(), nodes=nodes,
                         gpus_per_node=per_node, regimes=_regimes(fit), min_size_bytes=min(sizes),
                         max_size_bytes=max(sizes), median_error=min(error, 1.0), source="validation CSV")


def evaluate() -> list[dict]:
    import hardware
    from costmodel.cluster.api import predict

    results = []
    for path in sorted(DATA.glob("*.csv")):
        name = system_for(path.stem)
        if name is None or path.stem in EXCLUDED:
            continue
        by_nodes = defaultdict(list)
        for row in read_rows(path):
            by_nodes[int(row["nodes"])].append(row)
        if len(by_nodes) < MIN_NODE_COUNTS:
            continue
        base = hardware.load_system(name)
        counts = sorted(by_nodes)
        multi = [n for n in counts if n > 1]
        fitted = ([1] if 1 in counts else []) + multi[:1]
        curves = tuple(_curve(by_nodes[n], base, n, int(by_nodes[n][0]["gpus_per_node"])) for n in fitted)
        system = dataclasses.replace(base, measured=curves)
        for nodes in counts:
            if nodes in fitted:
                continue
            rows = by_nodes[nodes]
            per_node = int(rows[0]["gpus_per_node"])
            errors, plain = [], []  # (size, |error|) calibrated, and of the profile without curves
            for row in rows:
                size = float(row["size_bytes"])
                if size <= 0:
                    continue
                measured = float(row["time_us_oop"]) * 1e-6
                try:
                    p, q = (predict(curves[0].collective, size, cluster=on, nodes=nodes, gpus_per_node=per_node,
                                    algorithm=curves[-1].algorithm if curves[-1].algorithm != "auto" else "auto")
                            for on in (system, base))
                except Exception:  # noqa: BLE001 - a layout the model cannot describe
                    break
                errors.append((size, abs(p.time_s / measured - 1)))
                plain.append((size, abs(q.time_s / measured - 1)))
            if errors:
                results.append({"log": path.stem, "fitted_nodes": fitted, "nodes": nodes, "rows": len(errors),
                                "median_error": statistics.median(e for _, e in errors),
                                "median_error_1mib": _median_at_least(errors, MIB),
                                "uncalibrated": statistics.median(e for _, e in plain),
                                "uncalibrated_1mib": _median_at_least(plain, MIB)})
    return results


MIB = 1 << 20


def _median_at_least(errors: list[tuple[float, float]], size: float) -> float | None:
    large = [e for s, e in errors if s >= size]
    return statistics.median(large) if large else None


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def render(results: list[dict]) -> str:
    lines = ["| log | fitted on nodes | predicted nodes | rows | median abs error | ≥ 1 MiB | "
             "without the curves (the bundled profile) | ≥ 1 MiB |", "|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['log']} | {', '.join(map(str, r['fitted_nodes']))} | {r['nodes']} | {r['rows']} | "
                     f"{_pct(r['median_error'])} | {_pct(r['median_error_1mib'])} | {_pct(r['uncalibrated'])} | "
                     f"{_pct(r['uncalibrated_1mib'])} |")
    overall = statistics.median(r["median_error"] for r in results) if results else float("nan")
    large = [r["median_error_1mib"] for r in results if r["median_error_1mib"] is not None]
    plain = [r["uncalibrated_1mib"] for r in results if r["uncalibrated_1mib"] is not None]
    lines += ["", f"Median over held-out node counts: {100 * overall:.1f} % (goal ≤ 15 %); at ≥ 1 MiB "
                  f"{_pct(statistics.median(large) if large else None)}, against "
                  f"{_pct(statistics.median(plain) if plain else None)} without the curves."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace the section in docs/validation.md")
    args = parser.parse_args()
    results = evaluate()
    text = render(results)
    if args.write:
        write_section(ROOT / "docs" / "validation.md", "extrapolation", text)
        print("wrote the extrapolation section of docs/validation.md")
    else:
        print(text)


if __name__ == "__main__":
    main()
