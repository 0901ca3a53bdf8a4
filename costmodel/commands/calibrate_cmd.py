"""``dpcost calibrate``: fit latency and bandwidth to nccl-tests logs, write a link profile."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Optional

import typer

from costmodel.commands.common import cli_errors, print_json
from dpbase.text import printable

BLOCK_HELP = "Which timings to fit: both (default), out-of-place or in-place."


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
                     "link_latency_s": link.latency_s, "link_bandwidth_Bps": link.bandwidth_Bps}
                    for r, link in zip(fit.regimes, result.link_regimes)],
        "crossover_sizes_bytes": list(fit.crossovers_bytes),
        "steps": result.steps, "beta_bytes_per_byte": result.beta_bytes_per_byte,
        "coefficient_source": result.coefficient_source,
        "busbw_plateau_Bps": result.busbw_plateau_Bps, "measured_peak_busbw_Bps": result.measured_peak_busbw_Bps,
        "median_abs_pct_error": fit.median_abs_pct_error, "worst_abs_pct_error": fit.worst_abs_pct_error,
        "points": len(fit.sizes_bytes), "notes": list(result.notes),
    }


def _print_text(result) -> None:
    from dpbase.units import format_bandwidth, format_size, format_time

    fit = result.fit
    fitted = [r for r in fit.regimes if not r.transition]
    bridges = len(fit.regimes) - len(fitted)
    typer.echo(f"{result.collective} on {result.ranks} ranks, algorithm {result.algorithm}: "
               f"{len(fit.sizes_bytes)} points, {len(fitted)} fitted regime(s)"
               + (f" and {bridges} transition(s) between them" if bridges else ""))
    lower = 0.0  # each regime is used from the previous one's upper bound (crossover) on
    for regime, link in zip(fit.regimes, result.link_regimes):
        upper = format_size(regime.max_size_bytes) if math.isfinite(regime.max_size_bytes) else "∞"
        start, lower = (lower or regime.min_size_bytes), regime.max_size_bytes
        algbw = format_bandwidth(1 / regime.seconds_per_byte) if regime.seconds_per_byte > 0 else "∞"
        kind = "transition" if regime.transition else f"{regime.points:>2} points"
        typer.echo(f"  {kind:<10} sizes {format_size(start)} … {upper}: A = {format_time(regime.latency_s)}, "
                   f"algbw = {algbw}; per hop α = {format_time(link.latency_s)}, "
                   f"bandwidth = {format_bandwidth(link.bandwidth_Bps)}")
    typer.echo(f"busbw plateau (fit) {format_bandwidth(result.busbw_plateau_Bps)}; measured peak "
               f"{format_bandwidth(result.measured_peak_busbw_Bps or 0)}")
    typer.echo(f"residuals: median {fit.median_abs_pct_error:.2f} %, worst {fit.worst_abs_pct_error:.2f} %")
    typer.echo(f"coefficients: {result.steps:g} steps, {result.beta_bytes_per_byte:.4g} B per B "
               f"({result.coefficient_source})")
    for note in result.notes:  # notes quote the user's logs (paths, GPU names): escape control characters
        typer.echo(f"note: {printable(note)}")


@cli_errors
def calibrate(
    logs: Annotated[list[Path], typer.Argument(help="nccl-tests / rccl-tests output files (text or -J JSON).")],
    collective: Annotated[Optional[str], typer.Option(help="Collective measured, e.g. all-reduce or all_reduce_perf.")] = None,
    ranks: Annotated[Optional[int], typer.Option(help="Number of ranks (GPUs) in the run.")] = None,
    nodes: Annotated[Optional[int], typer.Option(help="Number of nodes in the run.")] = None,
    algorithm: Annotated[Optional[str], typer.Option(help="Algorithm whose cost formula converts the fit to per-hop link values.")] = None,
    block: Annotated[str, typer.Option(help=BLOCK_HELP)] = "both",
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write a link profile TOML here.")] = None,
    name: Annotated[Optional[str], typer.Option(help="Name of the link in the written profile.")] = None,
    html: Annotated[Optional[Path], typer.Option(help="Write an offline HTML plot (measured vs fit) here.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Fit latency and bandwidth (per size regime) to nccl-tests logs.

    Example: dpcost calibrate all_reduce_perf.log --ranks 16 -o my-ib.toml --html fit.html
    """
    from costmodel.calibrate.link import calibrate as run_calibration
    from costmodel.calibrate.link import profile_toml
    from costmodel.calibrate.parse import parse_file
    from costmodel.commands.progress import progress
    from dpbase.safeio import check_outputs, write_outputs

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
            typer.echo(f"wrote {label} {printable(path)}")
