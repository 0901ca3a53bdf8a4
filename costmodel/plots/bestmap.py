"""Which algorithm ``auto`` answers over a grid of rank count × message size (ideal, NCCL or RCCL model)."""

from __future__ import annotations

from typing import Any

from costmodel.plots.common import (
    PALETTE,
    Hardware,
    base_layout,
    check_backend,
    checked_rank_counts,
    chosen_label,
    predictions,
    size_grid,
)
from dpbase.errors import InputError, NotApplicableError
from dpbase.units import format_size, format_time


def _winners(hardware: Hardware, primitive: str, rank_counts: tuple[int, ...], sizes: list[float]) -> list[list]:
    """rows (ranks) × columns (sizes) of (winner label, winner prediction, runner-up prediction).

    The winner is ``auto``'s answer, what ``dpcost collective`` prints for the cell: NCCL's or
    RCCL's own choice, or under the ideal model the fastest algorithm the cluster's library runs
    (every algorithm on a bare link). The map showed the fastest registered algorithm under the
    ideal model (recursive doubling where `collective` answers the double binary tree) and the
    faster of ring and tree under RCCL's (review F, 2026-11-29). The runner-up is the fastest
    other algorithm among those ``auto`` chooses from."""
    grid = []
    for ranks in rank_counts:
        hw = hardware.with_ranks(ranks)
        row = []
        for size in sizes:
            found = predictions(hw, primitive, size, ("auto",))
            if not found:  # the backend times nothing here: nothing to map (check_backend ruled out the rest)
                raise NotApplicableError("rank_counts", ranks, f"a rank count at which the {hw.backend} model "
                                                               f"times {primitive} on this hardware")
            best = found[0]
            others = [p for p in predictions(hw, primitive, size)
                      if p["algorithm"] != best["ran"] and p.get("stack_runs") is not False]
            row.append((best["chosen"], best, min(others, key=lambda p: p["time_s"], default=None)))
        grid.append(row)
    return grid


def _hover(backend: str, ranks: int, label: str, best: dict, second: dict | None) -> str:
    text = f"N = {ranks} ranks, size {format_size(best['size_bytes'])}<br>winner <b>{label}</b>: {format_time(best['time_s'])}"
    if second is not None:  # a library chooses by its own estimate: the other may time faster
        other = "runner-up" if backend == "ideal" else "fastest not chosen"
        text += f"<br>{other} {chosen_label(second)}: {format_time(second['time_s'])}"
    return text


def _model(hardware: Hardware) -> str:
    """What a cell shows, for the title."""
    if hardware.backend in ("nccl", "rccl"):
        return f"{hardware.backend.upper()}'s choice (algorithm/protocol)"
    if hardware.cluster is None:
        return "fastest algorithm (ideal model)"
    from costmodel.cluster.mapping import layout
    from costmodel.cluster.stacks import default_stack

    stack = default_stack(layout(hardware.cluster, 1, hardware.gpus_per_node).system).value
    return f"fastest algorithm {stack} runs (ideal model)"


def best_map_figure(primitive: str, hardware: Hardware, *, rank_counts: tuple[int, ...],
                    min_size: str | float = "8B", max_size: str | float = "4GiB") -> Any:
    """Heatmap of ``auto``'s answer per cell: NCCL's or RCCL's choice, or the fastest algorithm the library runs (ideal)."""
    import plotly.graph_objects as go

    hardware = check_backend(hardware, primitive)
    rank_counts = checked_rank_counts(rank_counts)
    if max(rank_counts) < 2:  # as scaling_figure: its map was one row of "none"
        raise InputError("rank_counts", list(rank_counts), "rank counts with one of 2 or more (one rank has no "
                         "collective to draw)")
    sizes = size_grid(min_size, max_size)
    grid = _winners(hardware, primitive, rank_counts, sizes)
    labels = sorted({cell[0] for row in grid for cell in row})
    index = {name: i for i, name in enumerate(labels)}
    z = [[index[cell[0]] for cell in row] for row in grid]
    text = [[_hover(hardware.backend, ranks, *cell) for cell in row] for ranks, row in zip(rank_counts, grid)]
    count = max(len(labels), 2)
    colorscale = []
    for i in range(count):
        color = PALETTE[i % len(PALETTE)]
        colorscale += [[i / count, color], [(i + 1) / count, color]]
    fig = go.Figure(go.Heatmap(
        z=z, x=[format_size(s) for s in sizes], y=[f"N={r}" for r in rank_counts], text=text, zmin=-0.5,
        zmax=count - 0.5, colorscale=colorscale, hovertemplate="%{text}<extra></extra>", xgap=1, ygap=1,
        colorbar={"title": {"text": "winner"}, "tickvals": list(range(len(labels))), "ticktext": labels}))
    model = _model(hardware)
    title = (f"{primitive}: {model} over rank count × size<br><sup>{hardware.describe(counts=False)}"
             f", {format_size(sizes[0])} to {format_size(sizes[-1])}</sup>")
    fig.update_layout(**base_layout(title, height=520, margin={"t": 100}))
    fig.update_xaxes(title_text="message size (nccl-tests size, bytes)", type="category")
    fig.update_yaxes(title_text="ranks N", type="category")
    return fig
