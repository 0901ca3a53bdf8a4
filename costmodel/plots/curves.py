"""Curves: time and busbw against message size (log-log, like nccl-tests), and time against N."""

from __future__ import annotations

import math
from typing import Any

from costmodel.plots.common import (
    PALETTE,
    Hardware,
    algorithm_names,
    base_layout,
    check_backend,
    check_drawn,
    checked_rank_counts,
    hover_row,
    series,
    size_grid,
    size_ticks,
)
from dpbase.errors import InputError
from dpbase.units import format_size, format_time

HOVER = ("<b>%{fullData.name}</b><br>size %{customdata[3]}<br>time %{customdata[0]}<br>"
         "busbw %{customdata[1]} (algbw %{customdata[2]})<br>%{customdata[4]}<extra></extra>")
MEASURED_HOVER = ("<b>measured</b><br>size %{customdata[0]}<br>time %{customdata[1]}<br>busbw %{customdata[2]}"
                  "<extra></extra>")


def _check_measured(log: Any, log_path: str, primitive: str) -> None:
    """The log measured ``primitive``, as calibrate reads it (:func:`costmodel.calibrate.link.log_collectives`);
    a log that names none is drawn as it is. An all-gather log over all-reduce curves was drawn
    with nothing said."""
    from costmodel.calibrate.link import log_collectives

    found = log_collectives(log)
    if found and primitive not in found:
        raise InputError("measured", log_path, f"a log of {primitive} (this one measured {' or '.join(found)})")


def _check_measured_ranks(log: Any, log_path: str, hardware: Hardware, primitive: str) -> None:
    """The log ran on as many ranks as the chart predicts for: a 4-rank log was drawn over a
    32-GPU prediction with nothing said (review, 2026-11-29). The count is the log's own (rank
    lines, JSON devices) or, where the collective's busbw factor depends on N, read from its
    busbw/algbw; a log that tells neither (send-recv, broadcast, reduce: factor 1 at any N) is
    drawn as it is."""
    from costmodel.calibrate.link import resolve_log
    from costmodel.names import busbw_factor, primitive_named

    measured = log.ranks
    kind = primitive_named(primitive)
    if measured is None and busbw_factor(kind, 2) != busbw_factor(kind, 3):
        measured = resolve_log(log, primitive).ranks
    predicted = hardware.total_ranks()
    if measured and predicted and measured != predicted:
        raise InputError("measured", log_path, f"a log run on the chart's {predicted} ranks (this one ran on "
                         f"{measured}; give --nodes/--gpus-per-node or --ranks to match it)")


def _measured_traces(log_path: str, primitive: str, hardware: Hardware) -> list[Any]:
    import plotly.graph_objects as go

    from costmodel.calibrate.parse import parse_file
    from costmodel.names import primitive_named
    from dpbase.units import format_bandwidth

    log = parse_file(log_path)
    _check_measured(log, log_path, primitive_named(primitive).value)
    _check_measured_ranks(log, log_path, hardware, primitive_named(primitive).value)
    # out-of-place times, or in-place ones where a log has only those (calibrate reads both)
    rows = [(r.size_bytes, t, bw) for r in log.rows if r.size_bytes > 0
            for t, bw in [(r.time_oop_s, r.busbw_oop_Bps) if r.time_oop_s else (r.time_ip_s, r.busbw_ip_Bps)]
            if t]
    if not rows:  # an in-place-only log drew two empty traces
        raise InputError("measured", log_path, "a log with timed rows to draw")
    sizes = [size for size, _, _ in rows]
    custom = [[format_size(size), format_time(t), "–" if bw is None else format_bandwidth(bw)] for size, t, bw in rows]
    name = f"measured ({log_path.rsplit('/', 1)[-1]})"
    style = {"mode": "markers", "marker": {"symbol": "x", "size": 8, "color": "black"}, "legendgroup": "measured",
             "customdata": custom, "hovertemplate": MEASURED_HOVER}
    return [go.Scatter(x=sizes, y=[t for _, t, _ in rows], name=name, xaxis="x", yaxis="y", **style),
            go.Scatter(x=sizes, y=[None if bw is None else bw / 1e9 for _, _, bw in rows], name=name, showlegend=False,
                       xaxis="x2", yaxis="y2", **style)]


def sweep_figure(primitive: str, hardware: Hardware, *, min_size: str | float = "8B", max_size: str | float = "4GiB",
                 algorithms: tuple[str, ...] = (), measured_log: str | None = None) -> Any:
    """Time and busbw against size for each algorithm (log-log), optionally with a measured log.

    >>> fig = sweep_figure("all-reduce", Hardware(ranks=8, alpha="5us", bandwidth="25GB/s"))
    >>> fig.layout.xaxis.type, fig.layout.yaxis.title.text
    ('log', 'time (s)')
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    algorithms = algorithm_names(algorithms)
    hardware = check_backend(hardware, primitive, algorithms)
    if hardware.total_ranks() < 2:  # its chart was one "none" series at 0 s on a log axis
        field = "ranks" if hardware.cluster is None else "gpus_per_node"
        raise InputError(field, hardware.total_ranks(), "2 or more ranks in all (one rank has no collective to draw)")
    sizes = size_grid(min_size, max_size)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.09,
                        subplot_titles=("time per call", "bus bandwidth (nccl-tests busbw)"))
    drawn = series(hardware, primitive, sizes, algorithms)
    check_drawn(primitive, algorithms, drawn, hardware, sizes[-1])
    for index, (name, points) in enumerate(drawn.items()):
        kept = [p for p in points if p is not None]
        custom = [hover_row(p) for p in kept]
        common = {"mode": "lines+markers", "legendgroup": name, "customdata": custom, "hovertemplate": HOVER,
                  "x": [p["size_bytes"] for p in kept], "marker": {"size": 5},
                  "line": {"color": PALETTE[index % len(PALETTE)]}}
        fig.add_trace(go.Scatter(y=[p["time_s"] for p in kept], name=name, **common), row=1, col=1)
        busbw = [p["busbw_Bps"] / 1e9 if p["busbw_Bps"] is not None and math.isfinite(p["busbw_Bps"]) else None
                 for p in kept]  # None: one rank moves nothing, so it has no bandwidth to draw
        fig.add_trace(go.Scatter(y=busbw, name=name, showlegend=False,
                                 **common), row=1, col=2)
    if measured_log is not None:
        for trace in _measured_traces(measured_log, primitive, hardware):
            fig.add_trace(trace)
    ticks = size_ticks(sizes)
    fig.update_xaxes(type="log", title_text="message size (nccl-tests size, bytes)", **ticks)
    fig.update_yaxes(type="log", title_text="time (s)", exponentformat="SI", row=1, col=1)
    fig.update_yaxes(type="log", title_text="busbw (GB/s)", row=1, col=2)
    title = (f"{primitive}: time and busbw against size, {format_size(sizes[0])} to {format_size(sizes[-1])}"
             f"<br><sup>{hardware.describe()}</sup>")
    fig.update_layout(**base_layout(title, height=560, margin={"t": 110}))
    return fig


def scaling_figure(primitive: str, hardware: Hardware, *, size: str | float, rank_counts: tuple[int, ...],
                   algorithms: tuple[str, ...] = ()) -> Any:
    """Time against rank count at one size for each algorithm, with the primitive's lower bound.

    ``rank_counts`` are totals (multiples of the GPUs per node when a cluster is named).
    """
    import plotly.graph_objects as go

    from dpbase.units import parse_message_size

    algorithms = algorithm_names(algorithms)
    hardware = check_backend(hardware, primitive, algorithms)
    size_bytes = parse_message_size(size, "size")
    if size_bytes == 0:  # nothing moves: its chart was every algorithm at 0 s on a log axis
        raise InputError("size", size, "a size > 0 (0 bytes move nothing to draw)")
    # sorted, each once: a count given twice was a point twice, and 64,2,16 drew the curves back
    # across the log axis; one rank has no collective (its chart was empty, traces named "none")
    rank_counts = tuple(sorted(set(checked_rank_counts(rank_counts))))
    if max(rank_counts) < 2:
        raise InputError("rank_counts", list(rank_counts), "rank counts with one of 2 or more (one rank has no "
                         "collective to draw)")
    table: dict[str, list] = {}
    bound: list[float | None] = []
    for ranks in rank_counts:
        points = series(hardware.with_ranks(ranks), primitive, [size_bytes], algorithms)
        for name, found in points.items():
            table.setdefault(name, []).append((ranks, found[0]))
        bounds = [p[0]["lower_bound_s"] for p in points.values() if p[0] and p[0].get("lower_bound_s")]
        bound.append(min(bounds) if bounds else None)
    check_drawn(primitive, algorithms, table, hardware.with_ranks(rank_counts[-1]), size_bytes)  # NVLS: some counts
    fig = go.Figure()
    for name, rows in table.items():
        fig.add_trace(go.Scatter(x=[r for r, _ in rows], y=[p["time_s"] for _, p in rows], name=name,
                                 mode="lines+markers", customdata=[hover_row(p) + [r] for r, p in rows],
                                 hovertemplate=HOVER.replace("size %{customdata[3]}", "N = %{customdata[5]} ranks, "
                                                             "size %{customdata[3]}")))
    if any(b is not None for b in bound):
        fig.add_trace(go.Scatter(x=list(rank_counts), y=bound, name="lower bound", mode="lines",
                                 line={"dash": "dash", "color": "black"},
                                 customdata=[format_time(b) if b else "n/a" for b in bound],
                                 hovertemplate="lower bound at N = %{x}: %{customdata}<extra></extra>"))
    title = (f"{primitive} of {format_size(size_bytes)}: time against rank count"
             f"<br><sup>{hardware.describe(counts=False)}</sup>")
    fig.update_layout(**base_layout(title, height=540, margin={"t": 100}))
    fig.update_xaxes(type="log", title_text="ranks N", tickvals=list(rank_counts))
    fig.update_yaxes(type="log", title_text="time (s)", exponentformat="SI")
    return fig
