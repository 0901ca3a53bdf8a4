"""The planner's landscape: best throughput over two swept axes, the recommendation marked.

Input is :meth:`costmodel.planner.recommend.Plan.to_dict` (``best`` and ``candidates`` rows with
algorithm, micro_batch, accumulation_steps, gpus, total_s, samples_per_s). Each cell shows
the fastest candidate with those two values (the other axes — algorithm, bucket, dtype —
taken at their best); cells with no ranked candidate stay empty.
"""

from __future__ import annotations

from typing import Any

from dpbase.errors import InputError
from dpbase.units import format_time

AXES = ("micro_batch", "accumulation_steps", "gpus")
LABELS = {"micro_batch": "micro-batch per GPU (samples)", "accumulation_steps": "accumulation steps k",
          "gpus": "GPUs"}


def _best_cells(rows: list[dict], x: str, y: str) -> dict[tuple, dict]:
    cells: dict[tuple, dict] = {}
    for row in rows:
        key = (row[x], row[y])
        if key not in cells or row["samples_per_s"] > cells[key]["samples_per_s"]:
            cells[key] = row
    return cells


def _hover(row: dict) -> str:
    return (f"{row['samples_per_s']:,.1f} samples/s, step {format_time(row['total_s'])}<br>"
            f"{row['algorithm']} on {row['gpus']} GPUs, micro-batch {row['micro_batch']} × k = "
            f"{row['accumulation_steps']}")


def check_axes(x: str, y: str) -> None:
    """Two different axes of :data:`AXES` (one error line naming ``x`` or ``y`` otherwise)."""
    for field, name in (("x", x), ("y", y)):
        if name not in AXES:
            raise InputError(field, name, f"one of {', '.join(AXES)}")
    if x == y:
        raise InputError("y", y, f"an axis other than --x (one of {', '.join(a for a in AXES if a != x)})")


def plan_figure(plan: dict[str, Any], *, x: str = "accumulation_steps", y: str = "micro_batch") -> Any:
    """Heatmap of throughput (samples/s) over ``x`` × ``y`` with the recommended plan starred;
    ``plan`` is :func:`costmodel.plan`'s Plan or its ``to_dict()`` (``dpcost plan --json``)."""
    import plotly.graph_objects as go

    if hasattr(plan, "to_dict") and hasattr(plan, "candidates"):  # a Plan, as costmodel.plan returns it
        plan = plan.to_dict()
    if not isinstance(plan, dict) or not {"best", "candidates", "model", "cluster", "global_batch"} <= set(plan):
        raise InputError("plan", type(plan).__name__, "a Plan (costmodel.plan) or its to_dict(), as dpcost plan --json "
                         "writes it")
    check_axes(x, y)
    rows = list(plan["candidates"]) + [plan["best"]]
    cells = _best_cells(rows, x, y)
    xs, ys = sorted({k[0] for k in cells}), sorted({k[1] for k in cells})
    z = [[cells[(a, b)]["samples_per_s"] if (a, b) in cells else None for a in xs] for b in ys]
    text = [[_hover(cells[(a, b)]) if (a, b) in cells else "not ranked" for a in xs] for b in ys]
    best = plan["best"]
    fig = go.Figure(go.Heatmap(z=z, x=[str(v) for v in xs], y=[str(v) for v in ys], text=text, xgap=1, ygap=1,
                               colorscale="Viridis", hovertemplate="%{text}<extra></extra>",
                               colorbar={"title": {"text": "samples/s"}}))
    fig.add_trace(go.Scatter(x=[str(best[x])], y=[str(best[y])], mode="markers+text", name="recommended",
                             text=["★ best"], textposition="top center", hovertext=[_hover(best)],
                             hovertemplate="<b>recommended</b><br>%{hovertext}<extra></extra>",
                             marker={"symbol": "star", "size": 20, "color": "white",
                                     "line": {"color": "black", "width": 1.5}}))
    title = (f"Plan for {plan['model']} on {plan['cluster']}, global batch {plan['global_batch']}: throughput"
             f"<br><sup>over {LABELS[x]} × {LABELS[y]}; recommended: {_hover(best).replace('<br>', ', ')}</sup>")
    fig.update_layout(title={"text": title}, template="plotly_white", height=540, margin={"t": 110},
                      font={"family": "DejaVu Sans, Arial, sans-serif", "size": 13}, showlegend=False)
    fig.update_xaxes(title_text=LABELS[x], type="category")
    fig.update_yaxes(title_text=LABELS[y], type="category")
    return fig
