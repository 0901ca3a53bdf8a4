"""Which algorithm wins over a grid of rank count × message size (ideal or NCCL model)."""

from __future__ import annotations

from typing import Any

from costmodel.plots.common import PALETTE, Hardware, base_layout, check_backend, predictions, size_grid
from dpbase.errors import InputError, NotApplicableError
from dpbase.units import format_size, format_time


def _winners(hardware: Hardware, primitive: str, rank_counts: tuple[int, ...], sizes: list[float]) -> list[list]:
    """rows (ranks) × columns (sizes) of (winner label, winner prediction, runner-up prediction)."""
    grid = []
    for ranks in rank_counts:
        hw = hardware.with_ranks(ranks)
        row = []
        for size in sizes:
            found = predictions(hw, primitive, size, ("auto",) if hw.backend == "nccl" else ())
            if not found:  # NCCL enables no algorithm here: nothing to map (check_backend ruled out the rest)
                raise NotApplicableError("rank_counts", ranks, f"a rank count at which the {hw.backend} model "
                                                               f"times {primitive} on this hardware")
            found.sort(key=lambda p: p["time_s"])
            best = found[0]
            label = best.get("chosen") or best["algorithm"]
            row.append((label, best, found[1] if len(found) > 1 else None))
        grid.append(row)
    return grid


def _hover(ranks: int, label: str, best: dict, second: dict | None) -> str:
    text = f"N = {ranks} ranks, size {format_size(best['size_bytes'])}<br>winner <b>{label}</b>: {format_time(best['time_s'])}"
    if second is not None:
        text += f"<br>runner-up {second['algorithm']}: {format_time(second['time_s'])}"
    return text


def best_map_figure(primitive: str, hardware: Hardware, *, rank_counts: tuple[int, ...],
                    min_size: str | float = "8B", max_size: str | float = "4GiB") -> Any:
    """Heatmap of the fastest algorithm (ideal) or NCCL's algorithm/protocol choice (nccl backend)."""
    import plotly.graph_objects as go

    hardware = check_backend(hardware, primitive)
    if not rank_counts or min(rank_counts) < 1:
        raise InputError("ranks", list(rank_counts), "one or more rank counts >= 1")
    sizes = size_grid(min_size, max_size)
    grid = _winners(hardware, primitive, rank_counts, sizes)
    labels = sorted({cell[0] for row in grid for cell in row})
    index = {name: i for i, name in enumerate(labels)}
    z = [[index[cell[0]] for cell in row] for row in grid]
    text = [[_hover(ranks, *cell) for cell in row] for ranks, row in zip(rank_counts, grid)]
    count = max(len(labels), 2)
    colorscale = []
    for i in range(count):
        color = PALETTE[i % len(PALETTE)]
        colorscale += [[i / count, color], [(i + 1) / count, color]]
    fig = go.Figure(go.Heatmap(
        z=z, x=[format_size(s) for s in sizes], y=[f"N={r}" for r in rank_counts], text=text, zmin=-0.5,
        zmax=count - 0.5, colorscale=colorscale, hovertemplate="%{text}<extra></extra>", xgap=1, ygap=1,
        colorbar={"title": {"text": "winner"}, "tickvals": list(range(len(labels))), "ticktext": labels}))
    model = "NCCL's choice (algorithm/protocol)" if hardware.backend == "nccl" else "fastest algorithm (ideal model)"
    title = (f"{primitive}: {model} over rank count × size<br><sup>{hardware.describe(counts=False)}"
             f", {format_size(sizes[0])} to {format_size(sizes[-1])}</sup>")
    fig.update_layout(**base_layout(title, height=520, margin={"t": 100}))
    fig.update_xaxes(title_text="message size (nccl-tests size, bytes)", type="category")
    fig.update_yaxes(title_text="ranks N", type="category")
    return fig
