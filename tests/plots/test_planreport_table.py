"""The HTML report prints what the text prints: the heading line (measured speed, optimizer loop,
no fused attention), the reason with its notes, and the table's own columns (recompute, hours,
USD where the text has them). No browser needed: the page is read as text."""

from __future__ import annotations

import html
import re

from typer.testing import CliRunner

from cli import app
from costmodel.planner.recommend import plan
from costmodel.planner.text import heading, table_cells
from costmodel.plots.planreport import report_html

runner = CliRunner()


def _cells(page: str) -> list[list[str]]:
    head = re.findall(r"<th>(.*?)</th>", page)
    rows = [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(<td>.*?)</tr>", page)]
    return [[html.unescape(c) for c in head], *[[html.unescape(c) for c in row] for row in rows]]


def test_the_report_table_is_the_text_table():
    result = plan("llama2-7b", "dgx-h100", nodes=2, global_batch=256, tokens=1e9, price_per_gpu_hour=2.0,
                  recompute=True, optimizer_impl="per-tensor", top=6)
    page = report_html(result)
    cells = table_cells(result.candidates)
    table = _cells(page)
    assert table[0] == list(cells[0]) and {"recompute", "hours", "USD"} <= set(table[0])
    assert table[1:] == [list(row.values()) for row in cells]
    assert html.escape(heading(result, where=False)) in page
    assert "--optimizer-impl per-tensor" in page
    # a plan's dict (what --json writes) makes the same heading and table (the charts' ids are random)
    again = report_html(result.to_dict())
    assert _cells(again) == table and html.escape(heading(result, where=False)) in again


def test_the_report_carries_the_texts_heading_and_notes(tmp_path):
    path = tmp_path / "r.html"
    args = ["plan", "--model", "gpt2", "--cluster", "dgx-a100", "--nodes", "2", "--global-batch", "64",
            "--backend", "nccl", "--algorithms", "ring,rabenseifner", "--no-flash-attention", "--rate", "40000 tok/s",
            "--rate-micro-batch", "4"]
    text = runner.invoke(app, args)
    assert text.exit_code == 0, text.output
    assert runner.invoke(app, [*args, "--html", str(path)]).exit_code == 0
    page = html.unescape(path.read_text(encoding="utf-8"))
    first = text.stdout.splitlines()[0]
    assert "compute speed: base MFU" in first and "--no-flash-attention" in first and first in page
    assert "rabenseifner is not an NCCL algorithm" in page
