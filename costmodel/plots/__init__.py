"""Interactive plotly charts (offline HTML): sweep, scaling, best-algorithm map, breakdown, plan, schedule.

Every ``*_figure`` function returns a ``plotly.graph_objects.Figure``; :func:`write_html`
writes it with plotly.js embedded so the file opens without a network. plotly is imported
only inside the functions that draw.

    >>> from costmodel.plots import Hardware, sweep_figure, write_html
    >>> fig = sweep_figure("all-reduce", Hardware(ranks=8, alpha="5us", bandwidth="25GB/s"))
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from costmodel.plots.bestmap import best_map_figure
from costmodel.plots.breakdown import StepSetup, breakdown_figure, step_breakdown
from costmodel.plots.common import Hardware
from costmodel.plots.curves import scaling_figure, sweep_figure
from costmodel.plots.planfig import plan_figure
from costmodel.plots.schedule import schedule_figure


def write_html(fig: Any, path: str | Path, inputs: Iterable[str | Path | None] = ()) -> Path:
    """Write ``fig`` as a self-contained HTML file (plotly.js inlined) and return its path.

    Refuses a ``path`` that names one of ``inputs``; the write is atomic (:mod:`dpbase.safeio`).
    """
    from dpbase.errors import InputError
    from dpbase.safeio import write_outputs

    if not hasattr(fig, "to_html"):  # None was an AttributeError
        raise InputError("fig", type(fig).__name__, "a plotly figure (one of this package's *_figure functions)")
    html = fig.to_html(include_plotlyjs=True, full_html=True, auto_play=False)
    return write_outputs({"output": (path, html)}, inputs)["output"]


__all__ = [
    "Hardware", "StepSetup", "best_map_figure", "breakdown_figure", "plan_figure", "scaling_figure", "schedule_figure",
    "step_breakdown", "sweep_figure", "write_html",
]
