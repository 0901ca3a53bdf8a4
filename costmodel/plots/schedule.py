"""Animation of a collective's schedule, frame by frame, from the schedule executor's own run.

Rows are ranks (then servers or the switch), columns are equal cells of the buffer; a cell's
colour is how many ranks' data it holds (partial sums grow as they accumulate) and its text
names them. Each frame is a round: the messages in flight together, drawn as arrows. The
subtitle compares the executor's step count (the formula's latency terms: messages a rank or a
server handles one after another, so a round can hold several) and byte count with the
registry's formula.
"""

from __future__ import annotations

from typing import Any

from costmodel.plots.trace import Message, Trace, contributors, record
from dpbase.errors import InputError
from dpbase.units import format_size

MAX_RANKS = 16  # more rows than this cannot be read
COLORSCALE = [[0.0, "#ffffff"], [0.001, "#deebf7"], [1.0, "#08306b"]]


def _names(trace: Trace) -> list[str]:
    aux = trace.nodes - trace.ranks
    extra = ["switch"] if trace.algorithm == "in-network" else [f"server {s}" for s in range(aux)]
    return [f"rank {i}" for i in range(trace.ranks)] + extra


def _short(ranks: tuple[int, ...], total: int) -> str:
    if not ranks:
        return ""
    if len(ranks) == total:
        return "all"
    if len(ranks) > 2 and ranks == tuple(range(ranks[0], ranks[-1] + 1)):
        return f"{ranks[0]}–{ranks[-1]}"
    return ",".join(map(str, ranks))


def _heatmap(trace: Trace, holdings: Any, cell_bytes: float) -> Any:
    import plotly.graph_objects as go

    rows = [[contributors(v) for v in row] for row in holdings]
    text = [[_short(c, trace.ranks) for c in row] for row in rows]
    names = _names(trace)
    hover = [[f"{names[r]}, bytes {format_size(j * cell_bytes)}–{format_size((j + 1) * cell_bytes)}:<br>"
              + (f"data of rank(s) {', '.join(map(str, c))} ({len(c)} of {trace.ranks})" if c else "nothing yet")
              for j, c in enumerate(row)] for r, row in enumerate(rows)]
    return go.Heatmap(z=[[len(c) for c in row] for row in rows], text=text, customdata=hover,
                      texttemplate="%{text}", zmin=0, zmax=trace.ranks, colorscale=COLORSCALE, xgap=2, ygap=2,
                      hovertemplate="%{customdata}<extra></extra>",
                      colorbar={"title": {"text": "ranks summed<br>in the cell"}})


def _arrows(trace: Trace, messages: tuple[Message, ...], cell_bytes: float) -> Any:
    import plotly.graph_objects as go

    xs, ys, sizes, hover = [], [], [], []
    names = _names(trace)
    for m in messages:
        x = (min(m.cells) + max(m.cells)) / 2 + 0.35 * (m.src / max(trace.nodes - 1, 1) - 0.5)
        who = _short(m.contributors, trace.ranks)
        what = "sum of every rank" if who == "all" else f"sum of ranks {who}" if len(m.contributors) > 1 else \
            f"data of rank {who}"
        label = (f"{names[m.src]} → {names[m.dst]}: {format_size(m.elements * cell_bytes)}, {what}"
                 f"{' (added on arrival)' if m.reduce else ''}")
        xs += [x, x, None]
        ys += [m.src, m.dst, None]
        sizes += [0, 14, 0]
        hover += [label, label, ""]
    return go.Scatter(x=xs, y=ys, mode="lines+markers", name="messages this step", text=hover,
                      hovertemplate="%{text}<extra></extra>", line={"color": "#d62728", "width": 2},
                      marker={"symbol": "arrow", "angleref": "previous", "size": sizes, "color": "#d62728"})


def _caption(trace: Trace, index: int) -> str:
    # a frame is a round of concurrent messages; the subtitle's steps are the formula's latency
    # terms, which count messages a rank or server handles one after another (a parameter server's
    # 4 pushes in one round are 4 steps): "step 1 of 2" beside "8 steps" read as a contradiction
    if index == len(trace.steps):
        return f"after round {index}: done"
    step = trace.steps[index]
    # the level only where the schedule has two (a hierarchy's): a parameter server's rounds with
    # dedicated servers read "(intra-node)"
    levels = {s.level for s in trace.steps}
    where = "" if len(levels) < 2 else " (inter-node)" if step.level == "inter" else " (intra-node)"
    count = len(step.messages)
    return f"round {index + 1} of {len(trace.steps)}{where}: {count} message{'' if count == 1 else 's'} in flight"


def _check(primitive: str, algorithm: str, ranks: int, params: dict, size_bytes: float, cells: int) -> str:
    """'executor: … · formula: …' for the subtitle (same N, parameters and size)."""
    from costmodel.collectives.api import predict
    from costmodel.collectives.schedules import execute
    from costmodel.names import algorithm_named, primitive_named

    run = execute(primitive_named(primitive), algorithm_named(algorithm), ranks, cells, params)
    scale = size_bytes / run.size_bytes
    sent = float(run.counts.sent[:ranks].max()) * scale
    formula = predict(primitive, algorithm, ranks=ranks, size_bytes=size_bytes, alpha_s=1.0, bandwidth_Bps=1.0,
                      **params)
    steps = run.counts.steps + run.counts.steps_inter
    verdict = "result correct" if run.correct else "RESULT WRONG"
    return (f"executor: {steps:g} steps (latency terms), busiest rank sends {format_size(sent)} ({verdict}) · "
            f"formula: {formula.steps:g} steps, {format_size(formula.bytes_sent_max)}")


def schedule_figure(primitive: str, algorithm: str, ranks: int, *, size: str | float = "1GiB",
                    **params: Any) -> Any:
    """Animated schedule of one (primitive, algorithm) on ``ranks`` ranks (2 to 16).

    >>> fig = schedule_figure("all-reduce", "ring", 4)
    >>> len(fig.frames)  # 2(N-1) rounds + the final state
    7
    """
    import plotly.graph_objects as go

    from costmodel.plots.trace import resolved_params
    from dpbase.units import parse_size

    if isinstance(ranks, bool) or not isinstance(ranks, int) or not 2 <= ranks <= MAX_RANKS:  # 4.0 was a TypeError
        raise InputError("ranks", ranks, f"an integer from 2 to {MAX_RANKS} (one row per rank)")
    resolved = resolved_params(primitive, algorithm, ranks, params)
    for name in ("servers", "chunks"):  # more server rows or chunk columns than this cannot be drawn
        value = resolved.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > MAX_RANKS:
            raise InputError(name, value, f"at most {MAX_RANKS} for a drawn schedule")
    size_bytes = parse_size(size, "size")
    trace = record(primitive, algorithm, ranks, resolved)
    if size_bytes < trace.cells:  # 0 B animated rounds of 0-byte messages; 3 B drew 0.75 B cells
        raise InputError("size", size, f"at least {trace.cells} B for this chart (a whole byte in each of its "
                                       f"{trace.cells} cells; 0 bytes move nothing)")
    cell_bytes = size_bytes / trace.cells
    states = [s.holdings for s in trace.steps] + [trace.final]
    moves = [s.messages for s in trace.steps] + [()]
    check = _check(primitive, algorithm, ranks, resolved, size_bytes, trace.cells)
    frames = [go.Frame(name=str(i), data=[_heatmap(trace, h, cell_bytes), _arrows(trace, m, cell_bytes)],
                       layout={"title": {"text": _title(trace, size_bytes, _caption(trace, i), check)}})
              for i, (h, m) in enumerate(zip(states, moves))]
    fig = go.Figure(data=frames[0].data, frames=frames)
    names = _names(trace)
    fig.update_layout(title={"text": _title(trace, size_bytes, _caption(trace, 0), check)}, template="plotly_white",
                      height=340 + 42 * trace.nodes, margin={"t": 130, "b": 190},
                      font={"family": "DejaVu Sans, Arial, sans-serif", "size": 13},
                      updatemenus=[_buttons()], sliders=[_slider(len(frames))])
    fig.update_xaxes(title_text=f"buffer cells ({format_size(cell_bytes)} each, {trace.cells} cells = "
                     f"{format_size(size_bytes)})", range=[-0.5, trace.cells - 0.5], dtick=1)
    fig.update_yaxes(tickvals=list(range(trace.nodes)), ticktext=names, autorange="reversed",
                     range=[trace.nodes - 0.5, -0.5])
    return fig


def _title(trace: Trace, size_bytes: float, caption: str, check: str) -> str:
    params = ", ".join(f"{k}={v}" for k, v in trace.params.items())
    return (f"{trace.algorithm} {trace.primitive} of {format_size(size_bytes)} on {trace.ranks} ranks"
            f"{' (' + params + ')' if params else ''}<br><sup>{caption}<br>{check}</sup>")


def _buttons() -> dict:
    play = {"frame": {"duration": 900, "redraw": True}, "fromcurrent": True, "transition": {"duration": 0}}
    pause = {"frame": {"duration": 0, "redraw": False}, "mode": "immediate"}
    return {"type": "buttons", "direction": "left", "x": 0, "y": 0, "xanchor": "left", "yanchor": "top", "pad": {"t": 70},
            "buttons": [{"label": "▶ play", "method": "animate", "args": [None, play]},
                        {"label": "❚❚ pause", "method": "animate", "args": [[None], pause]}]}


def _slider(count: int) -> dict:
    steps = [{"label": "start" if i == 0 else ("end" if i == count - 1 else str(i)), "method": "animate",
              "args": [[str(i)], {"frame": {"duration": 0, "redraw": True}, "mode": "immediate"}]}
             for i in range(count)]
    return {"active": 0, "x": 0.18, "y": 0, "len": 0.8, "pad": {"t": 60}, "xanchor": "left", "yanchor": "top",
            "currentvalue": {"prefix": "step: "}, "steps": steps}
