"""Text from user files made safe to echo: control characters shown as escapes, never sent raw.

A profile description or a log line may hold ESC/BEL sequences (terminal injection) or bidi
overrides (text that reads differently from what it is); anything dpcost echoes from a user
file or a user argument goes through :func:`printable`.

    >>> printable("ok\\x1b[31mred\\x07")
    'ok\\\\x1b[31mred\\\\x07'
"""

from __future__ import annotations

import re

from dpbase.errors import MAX_SHOWN_CHARS

_KEEP = {"\n"}


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: object, keep_newlines: bool = False) -> str:
    """``text`` with every character Python does not call printable escaped (``\\x1b``, ``\\u202e``):
    controls, format characters (bidi overrides), line/paragraph separators, unassigned code points.

    Newlines are escaped too unless ``keep_newlines`` (multi-line output built by dpcost).
    """
    value = str(text)
    if value.isprintable():
        return value
    keep = _KEEP if keep_newlines else set()
    return "".join(c if c.isprintable() or c in keep else _escape(c) for c in value)


# a quoted or parenthesised value (click quotes what was typed, spaces and commas included), or a
# run without either
_LONG_RUN = re.compile(r"(?<=')[^']{%d,}(?=')|(?<=\()[^()]{%d,}(?=\))|[^\s'\"(),]{%d,}"
                       % ((MAX_SHOWN_CHARS + 1,) * 3))


def shortened(text: str) -> str:
    """``text`` with every quoted or parenthesised value, and every run without a space, quote, comma
    or parenthesis, of more than ``MAX_SHOWN_CHARS`` characters cut to its first half and its
    length, as :class:`InputError` quotes a long value: click's own usage errors quote what was
    typed in full ("ab,ab,…" six thousand characters long included).

        >>> shortened("got '" + "x" * 300 + "'") == "got '" + "x" * 100 + "…(300 characters)'"
        True
        >>> len(shortened("got '" + "ab, " * 2000 + "' and (" + "c d " * 100 + ")")) < 400
        True
    """
    return _LONG_RUN.sub(lambda run: f"{run.group()[:MAX_SHOWN_CHARS // 2]}…({len(run.group())} characters)", text)
