"""Stacked bars of one training step per configuration: compute, hidden and exposed communication, optimizer.

Hidden communication runs under the backward pass, so its bar segment is the part of the
compute time that communication overlaps; the segments add up to the step time.
"""

from __future__ import annotations

from typing import Any

from dpbase.errors import InputError
from dpbase.units import format_time
from dpbase.values import frozen

SEGMENTS = (  # (label, colour)
    ("compute", "#4c78a8"),
    ("compute overlapped by communication (hidden comm)", "#9ecae9"),
    ("straggler wait", "#bab0ac"),
    ("exposed communication", "#e45756"),
    ("optimizer step", "#72b7b2"),
    ("overlap interference", "#f58518"),
    ("host overhead", "#b279a2"),
    ("gradient buffer copies", "#9d755d"),
)


@frozen(kw_only=True)
class StepSetup:
    """One bar: a model trained on a cluster (the ``dpcost iteration`` options)."""

    model: str
    cluster: str
    micro_batch: int
    nodes: int = 1
    gpus_per_node: int | None = None
    accumulation_steps: int = 1
    algorithm: str = "auto"
    backend: str = "auto"  # as dpcost plot breakdown and dpcost iteration: the cluster's realistic backend
    zero_stage: int = 0
    seq_len: int | None = None  # None: the model's own

    def label(self) -> str:
        zero = f", ZeRO-{self.zero_stage}" if self.zero_stage else ""
        return (f"{self.cluster} ×{self.nodes}<br>{self.algorithm}, b={self.micro_batch}, "
                f"k={self.accumulation_steps}{zero}")


def step_breakdown(setup: StepSetup) -> Any:
    """The :class:`costmodel.training.iteration.Breakdown` of one setup: what ``dpcost iteration``
    answers for it (:func:`costmodel.training.oncluster.iteration`: the cluster's transport, the
    intervals, a named algorithm refused where the step's collectives do not run it)."""
    from costmodel.training.oncluster import iteration

    if not isinstance(setup, StepSetup):  # None was an AttributeError
        raise InputError("setup", type(setup).__name__, "a StepSetup(model=…, cluster=…, micro_batch=…)")
    return iteration(setup.model, setup.cluster, nodes=setup.nodes, gpus_per_node=setup.gpus_per_node,
                     algorithm=setup.algorithm, backend=setup.backend, micro_batch=setup.micro_batch,
                     accumulation_steps=setup.accumulation_steps, zero_stage=setup.zero_stage,
                     seq_len=setup.seq_len)


def segment_seconds(b: Any) -> list[float]:
    """Seconds of each SEGMENTS entry; they add up to ``b.total_s``."""
    return [b.compute_s - b.hidden_comm_s, b.hidden_comm_s, b.straggler_wait_s, b.exposed_comm_s, b.optimizer_s,
            b.interference_s, b.host_overhead_s, b.buffer_copy_s]


def breakdown_figure(breakdowns: list[Any], labels: list[str], title: str = "") -> Any:
    """One stacked bar per Breakdown (with its label); hover gives each part in time and share."""
    import plotly.graph_objects as go

    if not isinstance(breakdowns, (list, tuple)) or not isinstance(labels, (list, tuple)):  # None: a TypeError
        raise InputError("breakdowns", type(breakdowns).__name__, "a list of Breakdowns and a list of their labels")
    if not breakdowns or len(breakdowns) != len(labels):
        raise InputError("breakdowns", len(breakdowns), f"one or more, as many as labels ({len(labels)})")
    if not all(hasattr(b, "total_s") and hasattr(b, "memory") for b in breakdowns):
        raise InputError("breakdowns", [type(b).__name__ for b in breakdowns][:3],
                         "Breakdowns (costmodel.iteration, step_breakdown)")
    parts = [segment_seconds(b) for b in breakdowns]
    fig = go.Figure()
    for i, (name, color) in enumerate(SEGMENTS):
        seconds = [p[i] for p in parts]
        custom = [[format_time(s), f"{s / b.total_s:.1%}", format_time(b.total_s), f"{b.samples_per_s:,.1f}"]
                  for s, b in zip(seconds, breakdowns)]
        fig.add_trace(go.Bar(x=labels, y=seconds, name=name, marker_color=color, customdata=custom,
                             hovertemplate=f"<b>{name}</b><br>%{{customdata[0]}} (%{{customdata[1]}} of the "
                                           "%{customdata[2]} step)<br>%{customdata[3]} samples/s<extra></extra>"))
    for label, b in zip(labels, breakdowns):  # a step that cannot run is drawn, and says so above its bar
        if not b.memory.fits:
            fig.add_annotation(x=label, y=b.total_s, yshift=14, showarrow=False, font={"color": "#d62728"},
                               text=f"does not fit: {b.memory.total_bytes / 1e9:,.1f} GB "
                                    f"of {b.memory.capacity_bytes / 1e9:,.1f} GB")
    model = breakdowns[0].model
    text = title or f"{model}: one training step broken down ({len(breakdowns)} configuration{'' if len(breakdowns) == 1 else 's'})"
    fig.update_layout(barmode="stack", title={"text": text}, template="plotly_white", height=520,
                      font={"family": "DejaVu Sans, Arial, sans-serif", "size": 13})
    fig.update_yaxes(title_text="time per step (s)", exponentformat="SI")
    fig.update_xaxes(title_text="configuration")
    return fig
