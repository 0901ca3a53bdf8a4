"""One self-contained HTML page for a plan: recommendation, alternatives, step, memory,
sensitivity and the chosen algorithm's collectives over message size.

Input is :class:`costmodel.planner.recommend.Plan` (or its ``to_dict()``); the charts are plotly
figures written with plotly.js inlined once, so the page opens offline.
"""

from __future__ import annotations

import html
from types import SimpleNamespace
from typing import Any

from costmodel.planner.rank import STEP_PARTS, step_parts  # the reason's "Bound by" split, for the step bars
from costmodel.planner.text import heading, table_cells
from costmodel.plots.planfig import plan_figure
from dpbase.units import format_size

FONT = {"family": "DejaVu Sans, Arial, sans-serif", "size": 13}


def _layout(fig, title: str, **extra) -> Any:
    fig.update_layout(title={"text": title}, template="plotly_white", font=FONT, height=420,
                      margin={"t": 70}, **extra)
    return fig


def step_figure(plan: dict) -> Any:
    """Stacked bars: each ranked plan's step split into compute, communication, scaling losses,
    input wait and optimizer (:func:`step_parts`)."""
    import plotly.graph_objects as go

    rows = plan["candidates"]
    names = [f"#{r['rank']} {r['algorithm']} ZeRO-{r['zero_stage']} {r['micro_batch']}x"
             f"{r['accumulation_steps']}" for r in rows]
    parts = [step_parts(r) for r in rows]
    fig = go.Figure([go.Bar(name=label, x=names, y=[part[label] for part in parts]) for label in STEP_PARTS])
    return _layout(fig, "Step time of the ranked plans (s)", barmode="stack",
                   yaxis={"title": {"text": "seconds per optimizer step"}})


def memory_figure(plan: dict) -> Any:
    """One stacked bar of the recommended plan's memory per GPU, with capacity and reserve."""
    import plotly.graph_objects as go

    parts = plan["findings"].get("memory_parts") or {}
    best = plan["best"]
    capacity = best["memory_bytes"] + best["memory_headroom_bytes"]
    fig = go.Figure([go.Bar(name=name, x=["recommended plan"], y=[value / 1e9])
                     for name, value in parts.items()])
    fig.add_hline(y=capacity / 1e9, line_dash="dash", annotation_text="GPU memory")
    fig.add_hline(y=(capacity - plan["memory_reserve_bytes"]) / 1e9, line_dash="dot",
                  annotation_text="usable (memory reserve kept free)")
    return _layout(fig, "Memory per GPU (GB)", barmode="stack", yaxis={"title": {"text": "GB"}})


def sensitivity_figure(plan: dict) -> Any:
    """Throughput change of the recommended plan with each input scaled."""
    import plotly.graph_objects as go

    rows = plan["sensitivity"]
    fig = go.Figure(go.Bar(x=[f"{r['parameter']} x{r['factor']:g}" for r in rows],
                           y=[100 * r["change"] for r in rows]))
    return _layout(fig, "Sensitivity: throughput change (%)",
                   yaxis={"title": {"text": "% change in samples/s"}})


def comm_figure(plan: dict) -> Any | None:
    """The chosen algorithm's collectives over message size on the plan's GPUs (log-log)."""
    import plotly.graph_objects as go

    sweep = plan["findings"].get("comm_sweep")
    if not sweep:
        return None
    fig = go.Figure([go.Scatter(name=primitive, x=sweep["sizes_bytes"], y=seconds,
                                mode="lines+markers") for primitive, seconds in sweep["seconds"].items()])
    bucket = plan["best"]["bucket_bytes"]
    fig.add_vline(x=bucket, line_dash="dash", annotation_text=f"bucket {format_size(bucket)}")
    return _layout(fig, f"{sweep['algorithm']} on {sweep['gpus']} GPUs: time per call",
                   xaxis={"type": "log", "title": {"text": "bytes per call"}},
                   yaxis={"type": "log", "title": {"text": "seconds"}})


def _table(plan: Any) -> str:
    """The ranked plans with the text table's columns and cells (:func:`table_cells`: recompute,
    hours and USD where the text prints them)."""
    cells = table_cells(plan.candidates)
    head = "".join(f"<th>{html.escape(label)}</th>" for label in cells[0])
    body = "".join("<tr>" + "".join(f"<td>{html.escape(value)}</td>" for value in row.values()) + "</tr>"
                   for row in cells)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _as_plan(data: dict) -> Any:
    """A plan's ``to_dict()`` read back with attribute access (what the text functions read)."""
    return SimpleNamespace(**{**data, "candidates": [SimpleNamespace(**row) for row in data["candidates"]]})


STYLE = ("body{font-family:DejaVu Sans,Arial,sans-serif;max-width:1100px;margin:2em auto;color:#222}"
         "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px;"
         "text-align:right}p.reason{white-space:pre-line;line-height:1.4}")


def report_html(plan: Any, nodes: int | None = None, *, where: bool = False) -> str:
    """The whole page as a string: the text's heading line (``nodes`` as the CLI states it, with
    ``where``), its reason and its table, then the charts."""
    data = plan.to_dict() if hasattr(plan, "to_dict") else plan
    figures = [plan_figure(data), step_figure(data), memory_figure(data), sensitivity_figure(data)]
    comm = comm_figure(data)
    if comm is not None:
        figures.append(comm)
    charts = [fig.to_html(full_html=False, include_plotlyjs=(i == 0), config={"responsive": True})
              for i, fig in enumerate(figures)]
    readable = _as_plan(data)
    title = f"Plan for {data['model']} on {data['cluster']}, global batch {data['global_batch']}"
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>" + html.escape(title)
            + f"</title><style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
            + f"<p class='heading'>{html.escape(heading(readable, nodes, where=where))}</p>"
            + f"<p class='reason'>{html.escape(data['reason'])}</p><h2>Ranked alternatives</h2>"
            + _table(readable) + "".join(f"<div>{c}</div>" for c in charts) + "</body></html>")
