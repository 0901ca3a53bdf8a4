"""Output for people: rich tables on a terminal, plain text in pipes; progress bars only for slow work."""

from __future__ import annotations

import io
import re
import time

import pytest

from costmodel.commands import progress as progress_mod
from costmodel.commands import textfmt

ROWS = [{"algorithm": "ring", "time": "280.1 ms", "GPUs": "32 (4x8)"},
        {"algorithm": "double-binary-tree", "time": "1.5 s", "GPUs": "8 (1x8)"}]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_table_in_a_pipe(monkeypatch):
    monkeypatch.setattr("sys.stdout", io.StringIO())
    text = textfmt.table(ROWS)
    assert "\x1b[" not in text
    lines = text.splitlines()
    assert lines[0].split() == ["algorithm", "time", "GPUs"]
    assert set(lines[1].replace(" ", "")) == {"-"}
    assert lines[3].startswith("double-binary-tree  1.5 s")


def test_rich_table_on_a_terminal(monkeypatch):
    monkeypatch.setattr("sys.stdout", _Tty())
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    text = textfmt.table(ROWS)
    assert "\x1b[" in text  # styled header
    plain = [line for line in ANSI.sub("", text).splitlines() if line.strip()]
    assert plain[0].split() == ["algorithm", "time", "GPUs"]
    assert "─" in plain[1]
    # numbers right-aligned: the time column ends at the same place on every row
    ends = {line.index(cell) + len(cell) for line, cell in zip(plain[2:], ("280.1 ms", "1.5 s"))}
    assert len(ends) == 1
    # text left-aligned and never cut short, even on a narrow terminal
    narrow = ANSI.sub("", textfmt.rich_table(ROWS, width=20))
    assert "double-binary-tree" in narrow and "…" not in narrow


def test_no_color_means_plain(monkeypatch):
    monkeypatch.setattr("sys.stdout", _Tty())
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in textfmt.table(ROWS)


@pytest.mark.parametrize("cell,numeric", [("280 ms", True), ("24.99 GB/s", True), ("101.0%", True),
                                          ("x0.5", True), ("4x ib-edr", False), ("32 (4x8)", False),
                                          ("ring", False)])
def test_numeric_cells(cell, numeric):
    assert bool(textfmt._NUMERIC.match(cell)) is numeric


def test_progress_bar_drawn_only_for_slow_work_on_a_terminal():
    quick = _Tty()
    with progress_mod.progress("Quick", stream=quick, delay_s=10.0) as update:
        for i in range(5):
            update(i + 1, 5)
    assert quick.getvalue() == ""

    slow = _Tty()
    with progress_mod.progress("Sweeping plans", stream=slow, delay_s=0.0) as update:
        for i in range(3):
            time.sleep(0.01)
            update(i + 1, 3)
    assert "Sweeping plans" in ANSI.sub("", slow.getvalue())

    pipe = io.StringIO()
    with progress_mod.progress("Piped", stream=pipe, delay_s=0.0) as update:
        update(1, 1)
    assert pipe.getvalue() == ""
