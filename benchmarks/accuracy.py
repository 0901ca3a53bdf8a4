"""Accuracy of dpcost against real nccl-tests / rccl-tests logs, under both backends.

For every row of every log in ``tests/data/validation`` whose hardware a bundled profile
describes, predict the time (out-of-place column) with ``--backend nccl`` (NCCL-faithful mode,
:func:`costmodel.nccl.nccl_time`) and ``--backend ideal`` (:func:`costmodel.cluster.mapping.predict_on_cluster`
with the algorithm the log forced, else the fastest under the ideal model) and report the median absolute percentage error per log and node count, for
all sizes and for sizes >= 1 MiB, plus pooled figures per class of system.

    python benchmarks/accuracy.py              # markdown table
    python benchmarks/accuracy.py --json       # machine-readable
    python benchmarks/accuracy.py --fit        # refit the [nccl_tests] constants (prints them)
    python benchmarks/accuracy.py --write      # replace the generated tables in docs/validation.md
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT / "tests" / "data" / "validation"
MIB = 1 << 20
REPORT = ROOT / "docs" / "validation.md"
INTERVALS = ROOT / "costmodel" / "data" / "intervals.toml"
SECTION = "accuracy"  # docs/validation.md holds the tables between <!-- accuracy:begin/end -->

# log slug prefix -> bundled hardware system (hardware/data/systems.toml)
LOG_SYSTEMS = {
    "a100sxm40_abci_": "a100-abci-8x",
    "a100sxm40_oci_": "oci-bm-gpu4-8",
    "gb10_dgxspark_": "dgx-spark",
    "gb300_nvl72_": "gb300-nvl72-tray",
    "h100pcie_2x_nvlinkbridge": "h100-pcie-2x-nvlink-bridge",
    "h100sxm_2x8_ib_ndr_": "dgx-h100",
    "h100sxm_8x_nvswitch": "dgx-h100",
    "h100sxm_oci_": "oci-bm-gpu-h100-8",
    "h100sxm_vm_4x8_ib400": "dgx-h100",  # 8 x 400G IB per node, NVSwitch (VMs with a topology file)
    "h200_dell_2x8_spectrumx": "dgx-h200",  # 8 rails x 400GbE RoCE (Spectrum-X) per node, NVSwitch
    "h200_2x1_gke_": "h200-1x-roce",
    "l40s_2x1_tcp_": "l40s-tcp-1x",
    "l40s_4x_pcie_": "l40s-4x-pcie",
    "rtx2080ti_2x_nvlinkbridge": "rtx2080ti-2x-nvlink-bridge",
    "rtx2080ti_2x_pcie3_nop2p": "rtx2080ti-2x-pcie",
    "rtx4090_8x_pcie4_p2poff": "rtx4090-8x-pcie",
    "rtx4090_8x_pcie4_p2pon": "rtx4090-8x-pcie-p2p",
    "v100sxm2_8x_hcm": "dgx-1",
    "v100sxm2_abci_": "v100-abci-4x",
    "mi300x_": "mi300x-8x",
    "mi325x_": "mi325x-8x",
    "mi355x_": "mi355x-8x",
}
# Logs outside the goal and the fit, with the reason (they are still predicted and listed).
EXCLUDED = {
    "h100sxm_2x8_ib_ndr_allreduce_default_nt290": "poster reported degraded multi-node performance",
    "h100sxm_2x8_ib_ndr_allreduce_ring_nt290": "same degraded system, NCCL_ALGO=RING and extra IB settings",
}
# NCCL environment a log's run must have set beyond NCCL_ALGO (not printed by the log), with the reason.
LOG_NCCL_ENV = {
    "rtx4090_8x_pcie4_p2pon": (
        {"p2p_level": "SYS"},
        "the post measures P2P-level bandwidth (20.6 GB/s busbw vs 15.0 through host memory with the stock "
        "driver); NCCL's default P2P level keeps 8 GPUs on an AMD host whose pairs are all SYS on SHM, "
        "so the run must have set NCCL_P2P_LEVEL=SYS",
    ),
}
# Logs no profile describes.
UNDESCRIBABLE = {
    "v100sxm2_2gpu_pairs_nvlink1_2_none_allreduce_32MB": "per-pair NVLink count (0/1/2) is not a system profile",
}
RCCL_PREFIXES = ("mi300x_", "mi325x_", "mi355x_")
# NCCL_ALGO value in a log -> the registry algorithm the ideal backend predicts for it.


@dataclass
class Group:
    """Errors of one (log, node count) under one backend."""

    log: str
    nodes: int
    system: str
    category: str
    errors: list[tuple[int, float]] = field(default_factory=list)  # (size, abs rel error)

    def median(self, min_size: int = 0) -> float | None:
        values = [e for s, e in self.errors if s >= min_size]
        return statistics.median(values) if values else None


def system_for(slug: str) -> str | None:
    """The bundled system a log's hardware maps to, or None."""
    return next((name for prefix, name in LOG_SYSTEMS.items() if slug.startswith(prefix)), None)


def category(slug: str, nodes: int, system: object) -> str:
    """single-node nvswitch / single-node pcie / single-node other / multi-node / rccl single-node / rccl multi-node (the
    library's own classes, :func:`costmodel.cluster.intervals.system_class`)."""
    from costmodel.cluster.intervals import system_class

    return system_class(system, nodes)


def read_rows(path: Path) -> list[dict[str, str]]:
    """Rows of one validation CSV with a positive size."""
    with path.open(newline="", encoding="utf-8") as handle:
        return [row for row in csv.DictReader(handle) if int(row["size_bytes"]) > 0]


def nccl_env(slug: str) -> dict[str, str]:
    """The NCCL settings (keyword arguments of ``topology_for``) a log's run used."""
    return next((env for prefix, (env, _) in LOG_NCCL_ENV.items() if slug.startswith(prefix)), {})


def predict_nccl(row: dict[str, str], system: object, tables: object, env: dict[str, str] | None = None):
    """NCCL-mode prediction of one row; raises DpcostError when not applicable."""
    from costmodel.nccl import nccl_time, topology_for
    from costmodel.nccl.names import normalize_collective

    topo = topology_for(system, int(row["nodes"]), int(row["gpus_per_node"]), tables, **(env or {}))
    algorithm = row["nccl_algo_env"] or "auto"
    collective = normalize_collective(row["collective"].removesuffix("_perf"))
    return nccl_time(collective, int(row["size_bytes"]), topo, tables, algorithm=algorithm)


def _primitive(row: dict[str, str]) -> str:
    """The dpcost primitive of a row (``all_reduce_perf`` -> ``all-reduce``)."""
    from costmodel.calibrate.conventions import check_collective

    return check_collective(row["collective"])


def predict_ideal(row: dict[str, str], system: object) -> object:
    """Ideal-backend prediction (``costmodel.cluster.mapping.predict_on_cluster``) of one row.

    The algorithm is the one the log ran when it forced one (NCCL_ALGO=ring -> ring, tree ->
    double-binary-tree), else the fastest algorithm the cluster can run under the ideal model
    (the minimum over ``cluster_candidates``)."""
    from costmodel.cluster.mapping import cluster_candidates, layout, predict_on_cluster
    from dpbase.errors import DpcostError, NotApplicableError

    primitive, size_bytes = _primitive(row), int(row["size_bytes"])
    lay = layout(system, int(row["nodes"]), int(row["gpus_per_node"]))
    forced = forced_algorithm(row)
    if forced != "auto":
        return predict_on_cluster(primitive, forced, lay, size_bytes=size_bytes)
    results = []
    for entry in cluster_candidates(primitive, lay):
        try:
            results.append(predict_on_cluster(primitive, entry.algorithm.value, lay, size_bytes=size_bytes))
        except DpcostError:
            continue
    if not results:
        raise NotApplicableError("algorithm", "any", f"an algorithm of {primitive} that {lay.system.name} can run")
    return min(results, key=lambda result: result.time_s)


def evaluate(backend: str, tables: object = None) -> list[Group]:
    """Predict every row of every describable log with ``backend``; one Group per (log, nodes).

    Backends: ``nccl`` (NCCL mode), ``nccl-own`` (NCCL's own estimate for its choice), ``ideal``.
    """
    from costmodel.nccl import load_tables
    from dpbase.errors import DpcostError
    from hardware import load_system

    tables = tables or load_tables()
    groups: dict[tuple[str, int], Group] = {}
    for path in sorted(DATA.glob("*.csv")):
        name = system_for(path.stem)
        if name is None or path.stem in UNDESCRIBABLE:
            continue
        system = load_system(name)
        for row in read_rows(path):
            nodes = int(row["nodes"])
            try:
                if backend in ("nccl", "nccl-own"):
                    prediction = predict_nccl(row, system, tables, nccl_env(path.stem))
                    seconds = prediction.time_s if backend == "nccl" else prediction.model_time_s
                else:
                    seconds = predict_ideal(row, system).time_s
            except DpcostError:
                continue
            measured = float(row["time_us_oop"] or row["time_us_ip"]) * 1e-6
            group = groups.setdefault((path.stem, nodes), Group(path.stem, nodes, name, category(path.stem, nodes, system)))
            group.errors.append((int(row["size_bytes"]), abs(seconds - measured) / measured))
    return list(groups.values())


def pooled(groups: list[Group], min_size: int = 0) -> dict[str, float]:
    """Median of the per-group medians per category, goal logs only."""
    by_category: dict[str, list[float]] = {}
    for group in groups:
        value = group.median(min_size)
        if value is not None and group.log not in EXCLUDED:
            by_category.setdefault(group.category, []).append(value)
    return {name: statistics.median(values) for name, values in sorted(by_category.items())}


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def markdown(results: dict[str, list[Group]]) -> str:
    """The per-log table and the pooled table, as markdown."""
    keys = sorted({(g.log, g.nodes) for groups in results.values() for g in groups})
    index = {b: {(g.log, g.nodes): g for g in groups} for b, groups in results.items()}
    lines = ["| log | nodes | system | rows | NCCL own all | NCCL own ≥1MiB | nccl all | nccl ≥1MiB "
             "| ideal all | ideal ≥1MiB | note |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for key in keys:
        found = [index.get(b, {}).get(key) for b in ("nccl-own", "nccl", "ideal")]
        ref = next(g for g in found if g is not None)
        env = ", ".join(f"NCCL_{k.upper()}={v}" for k, v in nccl_env(key[0]).items())
        default = "RCCL: NCCL mode n/a" if ref.category.startswith("rccl") else f"{env} assumed" if env else ""
        note = EXCLUDED.get(key[0], default)
        cells = " | ".join(f"{_pct(g and g.median())} | {_pct(g and g.median(MIB))}" for g in found)
        lines.append(f"| {key[0]} | {key[1]} | {ref.system} | {len(ref.errors)} | {cells} | {note} |")
    lines += ["", "| class (median of per-log medians, goal logs) | backend | all sizes | ≥ 1 MiB |", "|---|---|---|---|"]
    for backend, groups in results.items():
        small, large = pooled(groups), pooled(groups, MIB)
        for name in small:
            lines.append(f"| {name} | {backend} | {_pct(small[name])} | {_pct(large.get(name))} |")
    return "\n".join(lines)


def write_section(path: Path, name: str, body: str) -> None:
    """Replace the text between ``<!-- name:begin -->`` and ``<!-- name:end -->`` in ``path``."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    text = path.read_text(encoding="utf-8")
    if begin not in text or end not in text:
        raise SystemExit(f"error: {path} has no {begin} … {end} section to replace")
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    path.write_text(f"{head}{begin}\n{body.strip()}\n{end}{tail}", encoding="utf-8")


# efficiency_shm is not refitted: it is the large-message plateau of the ring logs through host
# memory (busbw / PCIe link / switch sharing), which the mean-of-medians score would trade against
# the mid-size terms.
FIT_GRID = {
    "launch_overhead_us": [x / 2 for x in range(0, 24)],
    "hop_latency_scale": [0.5 + x / 20 for x in range(0, 51)],
    "efficiency_nvlink": [0.5 + x / 100 for x in range(0, 51)],
    "efficiency_pci": [0.3 + x / 100 for x in range(0, 71)],
    "efficiency_net": [0.3 + x / 100 for x in range(0, 71)],
    "store_and_forward_bytes": [0.0, 8e3, 16e3, 32e3, 48e3, 64e3, 96e3, 128e3, 256e3],
}


def _fit_rows() -> list[tuple]:
    """(log, nodes, size, measured_us, collective, cell, topo) of every goal row in NCCL mode."""
    from costmodel.nccl import load_tables, topology_for
    from costmodel.nccl.names import normalize_algorithm, normalize_collective
    from costmodel.nccl.selection import choose
    from dpbase.errors import DpcostError
    from hardware import load_system

    tables, rows = load_tables(), []
    for path in sorted(DATA.glob("*.csv")):
        name = system_for(path.stem)
        if name is None or path.stem in EXCLUDED or path.stem in UNDESCRIBABLE:
            continue
        for row in read_rows(path):
            try:
                topo = topology_for(load_system(name), int(row["nodes"]), int(row["gpus_per_node"]), tables,
                                    **nccl_env(path.stem))
                coll = normalize_collective(row["collective"].removesuffix("_perf"))
                algo = normalize_algorithm(row["nccl_algo_env"] or "auto")
                cell = choose(coll, int(row["size_bytes"]), topo, tables, algo)[3]
            except DpcostError:
                continue
            rows.append((path.stem, int(row["nodes"]), int(row["size_bytes"]), float(row["time_us_oop"]), coll, cell, topo))
    return rows


def _fit_score(rows: list[tuple], tables: object) -> float:
    from costmodel.nccl.model import measured_time_us

    errors: dict[tuple[str, int], list[tuple[int, float]]] = {}
    for log, nodes, size, measured, coll, cell, topo in rows:
        predicted = measured_time_us(coll, cell, size, topo, tables)
        errors.setdefault((log, nodes), []).append((size, abs(predicted - measured) / measured))
    medians = [statistics.median(e for s, e in v if s >= floor) for v in errors.values()
               for floor in (0, MIB) if any(s >= floor for s, _ in v)]
    return statistics.fmean(medians)


def _tables_with(params: dict[str, float]) -> object:
    from costmodel.nccl import NcclTables, load_tables

    base = load_tables()
    return NcclTables(data=dict(base.data) | {"nccl_tests": params}, version=base.version)


def _fit_on(rows: list[tuple], rounds: int = 2) -> dict[str, float]:
    """Coordinate descent of the [nccl_tests] constants on ``rows``: mean of per-log medians
    (all sizes, >= 1 MiB)."""
    from costmodel.nccl import load_tables

    params = {k: float(v) for k, v in load_tables().section("nccl_tests").items() if k != "source"}

    def score(candidate: dict[str, float]) -> float:
        return _fit_score(rows, _tables_with(candidate))

    for _ in range(rounds):
        for name, grid in FIT_GRID.items():
            params[name] = min(grid, key=lambda value: score(params | {name: value}))
    return params


def leave_one_log_out() -> tuple[list[Group], list[tuple[str, int, float]]]:
    """NCCL mode with the [nccl_tests] constants refitted without each log, then that log predicted.

    Returns the held-out groups (per log and node count) and every held-out row as
    (class, size_bytes, measured/predicted).
    """
    from costmodel.nccl.model import measured_time_us
    from hardware import load_system

    rows = _fit_rows()
    groups: dict[tuple[str, int], Group] = {}
    ratios = []
    for held in sorted({row[0] for row in rows}):
        tables = _tables_with(_fit_on([row for row in rows if row[0] != held]))
        system_name = system_for(held)
        system = load_system(system_name)
        for log, nodes, size, measured, coll, cell, topo in rows:
            if log != held:
                continue
            predicted = measured_time_us(coll, cell, size, topo, tables)
            cls = category(log, nodes, system)
            group = groups.setdefault((log, nodes), Group(log, nodes, system_name, cls))
            group.errors.append((size, abs(predicted - measured) / measured))
            ratios.append((cls, size, measured / predicted))
    return list(groups.values()), ratios


def forced_algorithm(row: dict[str, str]) -> str:
    """The registry algorithm a log forced with NCCL_ALGO (its mirror: tree -> double-binary-tree),
    else "auto"."""
    from costmodel.nccl.names import REGISTRY_MIRROR

    forced = row["nccl_algo_env"].strip().lower()
    return REGISTRY_MIRROR[forced] if forced else "auto"


def rccl_rows():
    """(log path, system, row, layout) for every row of every RCCL goal log."""
    from costmodel.cluster.mapping import layout
    from hardware import load_system

    for path in sorted(DATA.glob("*.csv")):
        if not path.stem.startswith(RCCL_PREFIXES) or path.stem in EXCLUDED:
            continue
        system = load_system(system_for(path.stem))
        for row in read_rows(path):
            yield path, system, row, layout(system, int(row["nodes"]), int(row["gpus_per_node"]))


def rccl_ratios(groups: dict | None = None) -> list[tuple[str, int, float]]:
    """RCCL logs under the rccl backend (α-β ring/tree with the profiles' efficiencies: no constant
    is fitted to the logs, so every prediction is already out of sample)."""
    from costmodel.cluster.backends import predict_collective
    from dpbase.errors import DpcostError

    out = []
    for path, system, row, lay in rccl_rows():
        try:
            found = predict_collective(_primitive(row), int(row["size_bytes"]), lay,
                                       algorithm=forced_algorithm(row), backend="rccl")[0]
        except DpcostError:
            continue
        measured = float(row["time_us_oop"] or row["time_us_ip"]) * 1e-6
        cls = category(path.stem, int(row["nodes"]), system)  # the library's class: one node or several
        out.append((cls, int(row["size_bytes"]), measured / found.time_s))
        if groups is not None:
            key = (path.stem, int(row["nodes"]))
            group = groups.setdefault(key, Group(path.stem, key[1], system.name, cls))
            group.errors.append((int(row["size_bytes"]), abs(found.time_s - measured) / measured))
    return out


def rccl_time_variants() -> dict[tuple[str, int], list[tuple[int, dict[str, float]]]]:
    """Every RCCL row's |error| under three readings of the rccl backend: ``shipped`` (RCCL's
    choice, timed on the α-β mapping), ``estimate`` (RCCL's own estimate as the time) and
    ``fastest`` (the fastest α-β algorithm RCCL runs, ignoring RCCL's choice)."""
    from costmodel.cluster.backends import predict_collective
    from costmodel.cluster.mapping import cluster_candidates, predict_on_cluster
    from costmodel.cluster.rccl_choice import pick
    from costmodel.cluster.stacks import Stack, runs

    out: dict[tuple[str, int], list[tuple[int, dict[str, float]]]] = {}
    for path, _system, row, lay in rccl_rows():
        primitive, size = _primitive(row), int(row["size_bytes"])
        forced = forced_algorithm(row)
        shipped = predict_collective(primitive, size, lay, algorithm=forced, backend="rccl")[0].time_s
        choice = pick(primitive, size, lay, forced)
        estimate = choice.model_time_us * 1e-6 if choice is not None else shipped
        names = [forced] if forced != "auto" else [e.algorithm.value for e in cluster_candidates(primitive, lay)
                                                   if runs(Stack.RCCL, e.primitive, e.algorithm)]
        fastest = min(predict_on_cluster(primitive, n, lay, size_bytes=size).time_s for n in names)
        measured = float(row["time_us_oop"] or row["time_us_ip"]) * 1e-6
        errors = {k: abs(v - measured) / measured for k, v in
                  (("shipped", shipped), ("estimate", estimate), ("fastest", fastest))}
        out.setdefault((path.stem, lay.nodes), []).append((size, errors))
    return out


def rccl_markdown(variants: dict[tuple[str, int], list[tuple[int, dict[str, float]]]]) -> str:
    """Per-log median (and worst) |error| of the three readings of the rccl backend."""
    keys = ("shipped", "estimate", "fastest")
    lines = ["| log | nodes | rows | RCCL's choice on α-β (shipped) | RCCL's own estimate | fastest α-β (before) |",
             "|---|---|---|---|---|---|"]
    medians: dict[str, list[float]] = {k: [] for k in keys}
    for (log, nodes), rows in sorted(variants.items()):
        cells = []
        for k in keys:
            values = [e[k] for _, e in rows]
            medians[k].append(statistics.median(values))
            cells.append(f"{_pct(statistics.median(values))} (worst {_pct(max(values))})")
        lines.append(f"| {log} | {nodes} | {len(rows)} | " + " | ".join(cells) + " |")
    lines.append("| **median of the logs** | | | " + " | ".join(f"**{_pct(statistics.median(medians[k]))}**"
                                                          for k in keys) + " |")
    return "\n".join(lines)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


from costmodel.cluster.intervals import IDEAL_CLASS  # noqa: E402  (an ideal-backend class: this prefix and the system's)


def ideal_ratios() -> list[tuple[str, int, float, str]]:
    """(class, size, measured/predicted, log) of every goal row under the ideal backend, which
    fits nothing to the logs (the algorithm each log forced, else the fastest the ideal model
    runs there): the ideal backend's intervals, its class prefixed :data:`IDEAL_CLASS`."""
    from dpbase.errors import DpcostError
    from hardware import load_system

    out = []
    for path in sorted(DATA.glob("*.csv")):
        name = system_for(path.stem)
        if name is None or path.stem in UNDESCRIBABLE or path.stem in EXCLUDED:
            continue
        system = load_system(name)
        for row in read_rows(path):
            try:
                predicted = predict_ideal(row, system).time_s
            except DpcostError:
                continue
            measured = float(row["time_us_oop"] or row["time_us_ip"]) * 1e-6
            cls = IDEAL_CLASS + category(path.stem, int(row["nodes"]), system)
            out.append((cls, int(row["size_bytes"]), measured / predicted, path.stem))
    return out


def held_out_coverage(rows: list[tuple[str, int, float, str]]) -> float:
    """Share of rows inside the interval built from every other log's rows (leave-one-log-out)."""
    from costmodel.cluster.intervals import regime

    inside = total = 0
    for log in sorted({row[3] for row in rows}):
        table = intervals([(c, s, r) for c, s, r, other in rows if other != log])
        for cls, size, ratio, other in rows:
            found = table.get(cls, {}).get(regime(size)) if other == log else None
            if found:
                total += 1
                inside += found[0] <= ratio <= found[1]
    return inside / total if total else float("nan")


def intervals(ratios: list[tuple[str, int, float]]) -> dict[str, dict[str, list[float]]]:
    """(p10, p90) of measured/predicted per class and size regime."""
    from costmodel.cluster.intervals import regime

    buckets: dict[tuple[str, str], list[float]] = {}
    for cls, size, ratio in ratios:
        buckets.setdefault((cls, regime(size)), []).append(ratio)
    out: dict[str, dict[str, list[float]]] = {}
    for (cls, reg), values in sorted(buckets.items()):
        if len(values) >= 5:
            out.setdefault(cls, {})[reg] = [round(percentile(values, 0.1), 4), round(percentile(values, 0.9), 4),
                                            len(values)]
    return out


def interval_tables_toml(header: list[str], table: dict[str, dict[str, list[float]]]) -> str:
    """``[interval."<class>"]`` tables of ``key = [p10, p90, rows]`` under ``header`` comments
    (also benchmarks/dp_scaling.py's step intervals)."""
    lines = [f"# {line}" for line in header] + [""]
    for cls, cells in table.items():
        lines.append(f'[interval."{cls}"]')
        lines += [f"{key} = {values}" for key, values in cells.items()]
        lines.append("")
    return "\n".join(lines)


def intervals_toml(table: dict[str, dict[str, list[float]]]) -> str:
    return interval_tables_toml([
        "Prediction intervals of the realistic backends: [p10, p90, rows] of measured/predicted per",
        "class and size regime (small < 1 MiB <= large), leave-one-log-out for NCCL mode (the",
        "[nccl_tests] constants refitted without the log predicted), out of sample for rccl and for",
        "the ideal backend (\"ideal <class>\": the textbook model, which fits nothing to the logs).",
        "Generated by `python benchmarks/accuracy.py --write`; do not edit."], table)


def coverage(ratios: list[tuple[str, int, float]], table: dict) -> float:
    """Share of held-out rows whose measured/predicted falls inside their class interval."""
    from costmodel.cluster.intervals import regime

    inside = total = 0
    for cls, size, ratio in ratios:
        found = table.get(cls, {}).get(regime(size))
        if found:
            total += 1
            inside += found[0] <= ratio <= found[1]
    return inside / total if total else float("nan")


def loo_markdown(in_sample: list[Group], held_out: list[Group], ratios: list, table: dict,
                 rccl: list[Group]) -> str:
    small_in, large_in = pooled(in_sample), pooled(in_sample, MIB)
    small_out, large_out = pooled(held_out), pooled(held_out, MIB)
    lines = ["| class (NCCL mode) | in-sample all | in-sample ≥ 1 MiB | leave-one-log-out all | leave-one-log-out ≥ 1 MiB |",
             "|---|---|---|---|---|"]
    for name in sorted(small_out):
        lines.append(f"| {name} | {_pct(small_in.get(name))} | {_pct(large_in.get(name))} | {_pct(small_out[name])} "
                     f"| {_pct(large_out.get(name))} |")
    goal = [g for g in held_out if g.log not in EXCLUDED]
    per_log_all = statistics.median(g.median() for g in goal)
    per_log_large = statistics.median(g.median(MIB) for g in goal if g.median(MIB) is not None)
    rccl_all = statistics.median(g.median() for g in rccl)
    rccl_large = statistics.median(g.median(MIB) for g in rccl if g.median(MIB) is not None)
    lines += ["", f"Median over NVIDIA logs of each log's median |error|, leave-one-log-out: "
              f"{_pct(per_log_all)} % over all sizes, {_pct(per_log_large)} % at ≥ 1 MiB. "
              f"RCCL logs under the rccl backend (nothing fitted to them): {_pct(rccl_all)} % / {_pct(rccl_large)} %.", "",
              "| class | sizes | p10 | p90 | rows |", "|---|---|---|---|---|"]
    for cls, regimes in table.items():
        for reg, (low, high, count) in regimes.items():
            lines.append(f"| {cls} | {'< 1 MiB' if reg == 'small' else '≥ 1 MiB'} | {low:.3f} | {high:.3f} | {count} |")
    lines += ["", f"Coverage: {100 * coverage(ratios, table):.1f} % of held-out rows fall inside their interval."]
    return "\n".join(lines)


def ideal_interval_markdown(table: dict, coverage_held_out: float) -> str:
    """The ideal backend's intervals (``interval_s`` of its predictions on a cluster)."""
    lines = ["The ideal backend's intervals, from every goal log predicted by the textbook model (which fits",
             "nothing to the logs; hierarchical, parameter-server and the other algorithms no log ran borrow",
             "their class's):", "", "| class | sizes | p10 | p90 | rows |", "|---|---|---|---|---|"]
    for cls, regimes in table.items():
        for reg, (low, high, count) in regimes.items():
            lines.append(f"| {cls} | {'< 1 MiB' if reg == 'small' else '≥ 1 MiB'} | {low:.3f} | {high:.3f} | {count} |")
    lines += ["", f"Coverage, each log's rows against the intervals built from the other logs: "
              f"{100 * coverage_held_out:.1f} %."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    parser.add_argument("--fit", action="store_true", help="refit the [nccl_tests] constants and print them")
    parser.add_argument("--write", action="store_true", help=f"replace the tables in {REPORT.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    if args.fit:
        rows = _fit_rows()
        params = _fit_on(rows, rounds=3)
        print(json.dumps(params | {"score": _fit_score(rows, _tables_with(params))}, indent=2))
        return 0
    results = {"nccl-own": evaluate("nccl-own"), "nccl": evaluate("nccl"), "ideal": evaluate("ideal")}
    if args.json:
        out = {b: [{"log": g.log, "nodes": g.nodes, "system": g.system, "category": g.category,
                    "median_all": g.median(), "median_ge_1MiB": g.median(MIB)} for g in gs]
               for b, gs in results.items()}
        print(json.dumps(out, indent=2))
    elif args.write:
        write_section(REPORT, SECTION, markdown(results))
        held_out, ratios = leave_one_log_out()
        rccl_groups: dict = {}
        ratios += rccl_ratios(rccl_groups)
        table = intervals(ratios)
        ideal = ideal_ratios()
        ideal_table = intervals([(c, s, r) for c, s, r, _ in ideal])
        INTERVALS.write_text(intervals_toml(table | ideal_table), encoding="utf-8")
        write_section(REPORT, "loo", loo_markdown(results["nccl"], held_out, ratios, table,
                                                  list(rccl_groups.values()))
                      + "\n\n" + ideal_interval_markdown(ideal_table, held_out_coverage(ideal)))
        write_section(REPORT, "rccl", rccl_markdown(rccl_time_variants()))
        print(f"wrote the tables of {REPORT.relative_to(ROOT)} and {INTERVALS.relative_to(ROOT)}")
    else:
        print(markdown(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
