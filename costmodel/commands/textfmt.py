"""Output for people: tables and key/value blocks.

On a terminal, tables are drawn with rich (header styled, numbers right-aligned); piped into
a file or another program they are plain aligned text, which is also what the tests, the
README and the tutorial show. rich is imported only on the terminal path, so a scalar query
does not pay for it. ``--json`` is the format for programs.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence

# A cell that starts like a number (1.5, -3%, 280 ms, 4 GB, x0.5 …) is right-aligned on a terminal.
_NUMERIC = re.compile(r"^[-+x~]?\d[\d.,]*(?:e[-+]?\d+)?(?: ?[A-Za-zµ%/]+)?$")


def for_people() -> bool:
    """True when stdout is a terminal (and the user did not ask for plain text with NO_COLOR/TERM=dumb)."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    stream = sys.stdout
    return bool(getattr(stream, "isatty", None) and stream.isatty())


def table(rows: Sequence[dict[str, str]], *, title: str | None = None) -> str:
    """Rows with equal keys as a table under a header: rich on a terminal, plain text otherwise."""
    if not rows:
        return ""
    if for_people():
        return rich_table(rows, title=title)
    headers = list(rows[0])
    widths = [max(len(h), *(len(str(r[h])) for r in rows)) for h in headers]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    out = [title] if title else []
    out += [line(headers), line("-" * w for w in widths)]
    out += [line(r[h] for h in headers) for r in rows]
    return "\n".join(out)


def rich_table(rows: Sequence[dict[str, str]], *, title: str | None = None, width: int | None = None) -> str:
    """The same rows drawn by rich (with terminal colour codes), as a string."""
    import io
    import shutil

    from rich import box
    from rich.console import Console
    from rich.table import Table

    headers = list(rows[0])
    numeric = {h: all(_NUMERIC.match(str(r[h])) or str(r[h]) in ("", "-") for r in rows) for h in headers}
    grid = Table(box=box.SIMPLE_HEAD, header_style="bold cyan", title=title, title_justify="left",
                 pad_edge=False)
    widths = {h: max(len(h), *(len(str(r[h])) for r in rows)) for h in headers}
    for h in headers:
        grid.add_column(h, justify="right" if numeric[h] else "left", no_wrap=True, min_width=widths[h])
    for r in rows:
        grid.add_row(*(str(r[h]) for h in headers))
    needed = sum(w + 3 for w in widths.values()) + 2
    if title:
        needed = max(needed, len(title))
    buffer = io.StringIO()  # never narrower than the table: a narrow terminal wraps lines, cells stay whole
    Console(file=buffer, force_terminal=True, highlight=False,
            width=width or max(shutil.get_terminal_size().columns, needed)).print(grid)
    return buffer.getvalue().rstrip("\n")


def pairs(items: Sequence[tuple[str, str]]) -> str:
    """``key  value`` lines with the keys aligned."""
    width = max(len(k) for k, _ in items)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in items)
