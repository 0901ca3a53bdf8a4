"""``dpcost calibrate``: fit latency and bandwidth to nccl-tests logs, write a link profile."""

import math
from pathlib import Path
from typing import Annotated, Optional

from costmodel.commands.common import cli_errors, echo, print_json
from costmodel.commands.options import Argument, Option
from dpbase.errors import InputError
from dpbase.text import printable

BLOCK_HELP = "Which timings to fit: both (default), out-of-place or in-place."


def _floor(regime, link) -> bool:
    """A latency floor: a fitted regime whose time does not grow with the size (not a transition's
    hold), whose link bandwidth is only a stand-in (calibrate.link.FLAT_REGIME_TIME_SHARE)."""
    return not link.flat and regime.seconds_per_byte <= 0


def _summary(result) -> dict:
    fit = result.fit
    return {
        "collective": result.collective, "algorithm": result.algorithm, "ranks": result.ranks,
        "nodes": result.nodes, "sources": list(result.sources),
        "regimes": [{"min_size_bytes": r.min_size_bytes,
                     "max_size_bytes": r.max_size_bytes if math.isfinite(r.max_size_bytes) else None,
                     "latency_s": r.latency_s, "seconds_per_byte": r.seconds_per_byte,
                     "algbw_Bps": 1 / r.seconds_per_byte if r.seconds_per_byte > 0 else None,
                     "points": r.points, "transition": r.transition,
                     "link_latency_s": link.latency_s, "link_bandwidth_Bps": link.bandwidth_Bps,
                     "link_flat": link.flat,
                     # a latency floor's link bandwidth is a stand-in (its β-term 0.01 % of the time)
                     "bandwidth_measured": not _floor(r, link)}
                    for r, link in zip(fit.regimes, result.link_regimes)],
        "crossover_sizes_bytes": list(fit.crossovers_bytes),
        "steps": result.steps, "beta_bytes_per_byte": result.beta_bytes_per_byte,
        "coefficient_source": result.coefficient_source,
        "busbw_plateau_Bps": result.busbw_plateau_Bps, "measured_peak_busbw_Bps": result.measured_peak_busbw_Bps,
        "median_abs_pct_error": fit.median_abs_pct_error, "worst_abs_pct_error": fit.worst_abs_pct_error,
        "points": len(fit.sizes_bytes), "notes": list(result.notes),
        # p10, p90 of measured / predicted, each size held out of the fit (None below 4 sizes)
        "held_out_ratio_band": list(result.held_out_band) if result.held_out_band is not None else None,
    }


def _print_text(result) -> None:
    from costmodel.calibrate.link import FLAT_REGIME_TIME_SHARE
    from dpbase.units import format_bandwidth, format_size, format_time

    fit = result.fit
    fitted = [r for r in fit.regimes if not r.transition]
    bridges = len(fit.regimes) - len(fitted)
    echo(f"{result.collective} on {result.ranks} ranks, algorithm {result.algorithm}: "
               f"{len(fit.sizes_bytes)} points, {len(fitted)} fitted regime(s)"
               + (f" and {bridges} transition(s) between them" if bridges else ""))
    lower = 0.0  # each regime is used from the previous one's upper bound (crossover) on
    for regime, link in zip(fit.regimes, result.link_regimes):
        upper = format_size(regime.max_size_bytes) if math.isfinite(regime.max_size_bytes) else "∞"
        start, lower = (lower or regime.min_size_bytes), regime.max_size_bytes
        kind = "transition" if regime.transition else f"{regime.points:>2} points"
        if link.flat:  # a hold: one time across the gap (calibrate.link.link_regimes)
            echo(f"  {kind:<10} sizes {format_size(start)} … {upper}: flat at {format_time(regime.latency_s)}; "
                 f"per hop α = {format_time(link.latency_s)}, bandwidth = {format_bandwidth(link.bandwidth_Bps)} "
                 f"at {upper}, growing with the message")
            continue
        if _floor(regime, link):  # the profile's bandwidth there is a stand-in
            echo(f"  {kind:<10} sizes {format_size(start)} … {upper}: flat at {format_time(regime.latency_s)} "
                 f"(the time does not grow with the size here: no bandwidth measured); per hop α = {format_time(link.latency_s)}, "
                 f"its bandwidth written only to keep the β-term under "
                 f"{100 * FLAT_REGIME_TIME_SHARE:g} % of the time")
            continue
        echo(f"  {kind:<10} sizes {format_size(start)} … {upper}: A = {format_time(regime.latency_s)}, "
                   f"algbw = {format_bandwidth(1 / regime.seconds_per_byte)}; per hop α = {format_time(link.latency_s)}, "
                   f"bandwidth = {format_bandwidth(link.bandwidth_Bps)}")
    peak = result.measured_peak_busbw_Bps  # None: the log prints no busbw (N/A)
    echo(f"busbw plateau (fit) {format_bandwidth(result.busbw_plateau_Bps)}; measured peak "
         f"{format_bandwidth(peak) if peak else 'not in the log'}")
    echo(f"residuals: median {fit.median_abs_pct_error:.2f} %, worst {fit.worst_abs_pct_error:.2f} %")
    if result.held_out_band is not None:
        low, high = result.held_out_band
        echo(f"held out (each size predicted by a fit without it): measured / predicted {low:.3g}–{high:.3g} "
             "(10–90 %), the interval of predictions of this collective on the written link")
    echo(f"coefficients: {result.steps:g} steps, {result.beta_bytes_per_byte:.4g} B per B "
               f"({result.coefficient_source})")
    for note in result.notes:  # notes quote the user's logs (paths, GPU names): escape control characters
        echo(f"note: {printable(note)}")


@cli_errors
def calibrate(
    logs: Annotated[Optional[list[Path]], Argument(help="nccl-tests / rccl-tests output files (text or -J JSON).")] = None,
    collective: Annotated[Optional[str], Option(help="Collective measured, e.g. all-reduce or all_reduce_perf.")] = None,
    ranks: Annotated[Optional[int], Option(help="Number of ranks (GPUs) in the run.")] = None,
    nodes: Annotated[Optional[int], Option(help="Number of nodes in the run.")] = None,
    algorithm: Annotated[Optional[str], Option(help="Algorithm whose cost formula converts the fit to per-hop link values.")] = None,
    block: Annotated[str, Option(help=BLOCK_HELP)] = "both",
    output: Annotated[Optional[str], Option("--output", "-o", help="Write a link profile TOML here.")] = None,
    name: Annotated[Optional[str], Option(help="Name of the link in the written profile.")] = None,
    html: Annotated[Optional[str], Option(help="Write an offline HTML plot (measured vs fit) here.")] = None,
    system: Annotated[Optional[str], Option("--system", help="Write a calibrated CLUSTER profile: this base system (name or TOML) plus the measured curves; accepted by every --cluster.")] = None,
    nccl_algo: Annotated[str, Option("--nccl-algo", help="With --system: the NCCL_ALGO every log ran with (default: read from each log's NCCL INFO line or file name, e.g. ar_2n_ring.log, else NCCL's own choice).")] = "auto",
    recipe: Annotated[bool, Option("--recipe", help="Print the nccl-tests command lines that measure what plan needs (with --cluster, --nodes); no logs.")] = False,
    cluster: Annotated[Optional[str], Option("--cluster", help="With --recipe: the system to measure.")] = None,
    json_output: Annotated[bool, Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Fit latency and bandwidth (per size regime) to nccl-tests logs.

    Example: dpcost calibrate all_reduce_perf.log --ranks 16 -o my-ib.toml --html fit.html

    With --system, the logs (any collectives and node counts) become a cluster profile:
    dpcost calibrate ar_2n.log ag_2n.log --system dgx-h100 -o my-cluster.toml, then
    dpcost plan … --cluster my-cluster.toml.
    """
    if recipe:  # it prints what to measure: nothing is fitted or written
        ignored = {"--collective": collective, "--ranks": ranks, "--algorithm": algorithm, "--output": output,
                   "--name": name, "--html": html, "--system": system,
                   "--nccl-algo": None if nccl_algo == "auto" else nccl_algo, "--block": None if block == "both" else block}
        given = [flag for flag, value in ignored.items() if value is not None]
        if given:
            raise InputError(given[0], str(ignored[given[0]]), "left out with --recipe (it prints the nccl-tests runs "
                             "to make: nothing is fitted or written; it takes --cluster, --nodes and --json)")
        return _recipe(logs, cluster, nodes, json_output)
    if name is not None and output is None:
        raise InputError("--name", name, "only with --output (the name of the profile written there)")
    if cluster is not None:
        raise InputError("--cluster", cluster, "only with --recipe (a cluster profile is written with --system)")
    if not logs:
        raise InputError("logs", "none", "at least one nccl-tests log (or --recipe --cluster SYSTEM)")
    if system is not None:
        if algorithm is not None:  # the curves keep what NCCL ran: --nccl-algo names it
            raise InputError("--algorithm", algorithm, "left out with --system (a cluster profile's curves are "
                             "NCCL's own algorithm: --nccl-algo names the one the logs ran with)")
        return _cluster(logs, system, output, name, collective, ranks, nodes, nccl_algo, block, html, json_output)
    if nccl_algo != "auto":
        raise InputError("--nccl-algo", nccl_algo, "only with --system (a link calibration takes --algorithm)")
    from costmodel.calibrate.link import calibrate as run_calibration
    from costmodel.calibrate.link import profile_toml
    from costmodel.calibrate.parse import parse_file
    from costmodel.commands.progress import progress
    from dpbase.safeio import check_outputs, write_outputs

    if html is not None:
        from dpbase.safeio import check_html_path

        check_html_path("html", html)
    check_outputs({"output": output, "html": html}, logs)  # before any work: never over an input
    if name is not None:
        from hardware.fields import kebab_name

        kebab_name(name, "name")
    with progress(f"Calibrating from {len(logs)} log(s)") as update:
        parsed = []
        for done, path in enumerate(logs):
            update(done, len(logs) + 1)
            parsed.append(parse_file(path))
        update(len(logs), len(logs) + 1)
        result = run_calibration(parsed, collective=collective, ranks=ranks, nodes=nodes,
                                 algorithm=algorithm, block=block)
        update(len(logs) + 1, len(logs) + 1)
    written = {"output": (output, profile_toml(result, name=name)) if output is not None else None}
    if html is not None:
        from costmodel.plots.calibration import figure

        written["html"] = (html, figure(result, parsed).to_html(include_plotlyjs=True, full_html=True))
    write_outputs(written, logs)
    if json_output:
        print_json(_summary(result) | {"profile": str(output) if output else None,
                                       "html": str(html) if html else None})
        return
    _print_text(result)
    for label, path in (("profile", output), ("plot", html)):
        if path is not None:
            echo(f"wrote {label} {printable(path)}")


def _recipe(logs, cluster, nodes, json_output) -> None:
    """``--recipe``: what to run with nccl-tests so that plan runs on measured curves."""
    import hardware
    from costmodel.calibrate.recipe import recipe_lines

    if logs:
        raise InputError("logs", [str(p) for p in logs], "none with --recipe (it prints what to measure)")
    if cluster is None:
        raise InputError("--cluster", None, "the system to measure, e.g. --recipe --cluster dgx-h100 --nodes 4")
    if nodes is not None and not 1 <= nodes <= 100_000:
        raise InputError("nodes", nodes, "an integer from 1 to 100000")
    lines = recipe_lines(hardware.load_system(cluster), nodes or 1)
    if json_output:
        print_json({"commands": [line for line in lines if not line.startswith("#")]})
        return
    echo("\n".join(lines))


def _check_nccl_algo(base, curves, given: str | None) -> None:
    """Each curve's NCCL algorithm (``--nccl-algo``, else read from its log's INFO line or file
    name) must be one NCCL runs for the curve's collective on its layout of the base system (an
    A100 system has no NVLS), named as NCCL names them. Collectives NCCL's model lacks (all-to-all)
    and non-NVIDIA systems (RCCL's) are not NCCL's to check."""
    from costmodel.cluster.backends import nccl_topology
    from costmodel.cluster.mapping import layout
    from costmodel.cluster.stacks import Stack, default_stack
    from costmodel.nccl.names import COLLECTIVES, normalize_algorithm
    from costmodel.nccl.selection import candidates
    from costmodel.nccl.tables import load_tables
    from dpbase.errors import InputError

    if default_stack(base) is not Stack.NCCL:
        return
    tables = load_tables()
    for c in curves:
        if c.algorithm in (None, "auto") or c.collective not in COLLECTIVES:
            continue
        runs = dict.fromkeys(row[0] for row in candidates(c.collective, nccl_topology(layout(base, c.nodes,
                                                                                          c.gpus_per_node)), tables))
        if normalize_algorithm(c.algorithm) not in runs:
            field, value = ("--nccl-algo", given) if given else (f"NCCL_ALGO read from the {c.collective} log", c.algorithm)
            raise InputError(field, value, f"one NCCL runs for {c.collective} on {base.name} at {c.nodes} node(s) "
                             f"× {c.gpus_per_node} GPUs: {', '.join(runs) or 'none'}"
                             + ("" if given else " (--nccl-algo names what the log ran)"))


def _cluster(logs, system_name, output, name, collective, ranks, nodes, nccl_algo, block, html, json_output) -> None:
    """``--system``: write a calibrated cluster profile (base system + measured curves)."""
    import hardware
    from costmodel.calibrate.cluster_profile import cluster_profile, measured_curves
    from costmodel.calibrate.parse import parse_file
    from dpbase.errors import InputError
    from dpbase.safeio import check_outputs, write_outputs
    from dpbase.units import format_size

    if output is None:
        raise InputError("--output", None, "a file for the cluster profile (-o my-cluster.toml) with --system")
    if html is not None:
        raise InputError("--html", str(html), "a link calibration (without --system); plot the profile with "
                                              "dpcost plot sweep --cluster")
    check_outputs({"output": output}, logs)
    if name is not None:
        from hardware.fields import kebab_name

        kebab_name(name, "name")
    if nccl_algo != "auto":
        from costmodel.nccl.names import normalize_algorithm

        nccl_algo = normalize_algorithm(nccl_algo)
    base = hardware.load_system(system_name)
    from costmodel.calibrate.cluster_profile import algorithm_of

    ran = None if nccl_algo == "auto" else nccl_algo
    parsed = [parse_file(path) for path in logs]  # read once each (a pipe, <(...), cannot be read twice)
    per_log = [algorithm_of(str(path), log.head) for path, log in zip(logs, parsed, strict=True)]
    fitted = measured_curves(parsed, base, collective=collective, ranks=ranks,
                             nodes=nodes, nccl_algo=ran, algorithms=per_log, block=block)
    curves, notes = fitted.curves, fitted.notes
    _check_nccl_algo(base, curves, ran)
    profile = cluster_profile(base, curves, name)
    write_outputs({"output": (output, "# Written by dpcost calibrate --system\n" + hardware.standalone_toml(profile))},
                  logs + ([Path(system_name)] if system_name.endswith(".toml") else []))
    if json_output:
        print_json({"profile": str(output), "name": profile.name, "base": base.name,
                    "curves": [{"collective": c.collective, "algorithm": c.algorithm, "nodes": c.nodes,
                                "gpus_per_node": c.gpus_per_node, "regimes": len(c.regimes),
                                "min_size_bytes": c.min_size_bytes, "max_size_bytes": c.max_size_bytes,
                                "median_error": c.median_error, "error_kind": kind}
                               for c, kind in zip(curves, fitted.error_kinds, strict=True)], "notes": notes})
        return
    for note in notes:
        echo(f"note: {note}")
    for c, kind in zip(curves, fitted.error_kinds, strict=True):
        echo(f"{c.collective}, {c.nodes} node(s) x {c.gpus_per_node} GPU(s), algorithm {c.algorithm}: "
                   f"{len(c.regimes)} regime(s) from {format_size(c.min_size_bytes)} to "
                   f"{format_size(c.max_size_bytes)}, {kind} median error {100 * c.median_error:.1f} %")
    echo(f"wrote cluster profile {printable(output)} ({profile.name}, based on {base.name}); "
               f"use it as --cluster {printable(output)}")
