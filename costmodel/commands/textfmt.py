"""Plain-text output for people: aligned tables and key/value blocks (no rich on the fast path)."""

from __future__ import annotations

from collections.abc import Sequence


def table(rows: Sequence[dict[str, str]]) -> str:
    """Rows with equal keys as a left-aligned table under a header line."""
    if not rows:
        return ""
    headers = list(rows[0])
    widths = [max(len(h), *(len(str(r[h])) for r in rows)) for h in headers]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    out = [line(headers), line("-" * w for w in widths)]
    out += [line(r[h] for h in headers) for r in rows]
    return "\n".join(out)


def pairs(items: Sequence[tuple[str, str]]) -> str:
    """``key  value`` lines with the keys aligned."""
    width = max(len(k) for k, _ in items)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in items)
