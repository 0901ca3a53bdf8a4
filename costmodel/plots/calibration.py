"""Plot a calibration: measured points and the fitted curve, time and busbw vs size (log-log).

Dotted lines mark the crossovers; shaded bands the transitions between regimes.

plotly is imported inside the functions, so importing this module costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from costmodel.calibrate.conventions import busbw_factor
from costmodel.calibrate.link import Calibration
from costmodel.calibrate.parse import Log

CURVE_POINTS = 400
COLORS = {"out-of-place": "#1f77b4", "in-place": "#2ca02c", "fit": "#ff7f0e"}  # same in both panels


def _measured(logs: Sequence[Log]) -> dict[str, tuple[list[float], list[float], list[float]]]:
    series: dict[str, tuple[list[float], list[float], list[float]]] = {}
    for label, time_key, busbw_key in (("out-of-place", "time_oop_s", "busbw_oop_Bps"),
                                       ("in-place", "time_ip_s", "busbw_ip_Bps")):
        rows = [r for log in logs for r in log.rows
                if r.size_bytes > 0 and getattr(r, time_key) and getattr(r, busbw_key) is not None]
        series[label] = ([r.size_bytes for r in rows], [getattr(r, time_key) * 1e6 for r in rows],
                         [getattr(r, busbw_key) / 1e9 for r in rows])
    return series


def figure(result: Calibration, logs: Sequence[Log]):
    """A plotly figure: time (µs) and busbw (GB/s) vs size, measured and fitted."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, subplot_titles=("time vs size", "busbw vs size"))
    for label, (sizes, times_us, busbw) in _measured(logs).items():
        symbol = "circle" if label == "out-of-place" else "x"
        marker = {"symbol": symbol, "color": COLORS[label]}
        fig.add_scatter(x=sizes, y=times_us, mode="markers", name=f"measured {label}",
                        marker=marker, row=1, col=1, legendgroup=label)
        fig.add_scatter(x=sizes, y=busbw, mode="markers", name=f"measured {label}", showlegend=False,
                        marker=marker, row=1, col=2, legendgroup=label)
    fitted = np.asarray(result.fit.sizes_bytes)
    grid = np.geomspace(fitted.min(), fitted.max(), CURVE_POINTS)
    predicted_s = result.fit.predict_s(grid)
    factor = busbw_factor(result.collective, result.ranks)
    line = {"color": COLORS["fit"]}
    fig.add_scatter(x=grid, y=predicted_s * 1e6, mode="lines", name="fit", line=line, row=1, col=1,
                    legendgroup="fit")
    fig.add_scatter(x=grid, y=factor * grid / predicted_s / 1e9, mode="lines", name="fit", line=line,
                    showlegend=False, row=1, col=2, legendgroup="fit")
    for crossover in result.fit.crossovers_bytes:
        for col in (1, 2):
            fig.add_vline(x=float(crossover), line_dash="dot", line_color="grey", row=1, col=col)
    for transition in (r for r in result.fit.regimes if r.transition):  # the hand-over between two regimes
        for col in (1, 2):
            fig.add_vrect(x0=transition.min_size_bytes, x1=transition.max_size_bytes,
                          fillcolor="grey", opacity=0.12, line_width=0, row=1, col=col)
    fig.update_xaxes(type="log", title_text="size (bytes, nccl-tests 'size')")
    fig.update_yaxes(type="log", title_text="time (µs)", row=1, col=1)
    fig.update_yaxes(type="log", title_text="busbw (GB/s)", row=1, col=2)
    warning = ""
    if result.fit.falls:
        from dpbase.units import format_size

        deepest = result.fit.falls[0]
        warning = (f"; non-monotonic: time falls {100 * deepest.relative:+.0f} % from "
                   f"{format_size(deepest.from_size_bytes)} to {format_size(deepest.to_size_bytes)}")
    fig.update_layout(title=f"dpcost calibrate: {result.collective}, {result.ranks} ranks "
                            f"(median error {result.fit.median_abs_pct_error:.2f} %{warning})")
    return fig


def write_html(result: Calibration, logs: Sequence[Log], path: str | Path) -> Path:
    """Write the figure as one offline HTML file (plotly.js embedded)."""
    from dpbase.safeio import write_outputs

    html = figure(result, logs).to_html(include_plotlyjs=True, full_html=True)
    return write_outputs({"html": (path, html)}, [log.source_path for log in logs])["html"]
