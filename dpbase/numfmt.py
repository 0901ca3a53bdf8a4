"""Numbers for people: thousands separators and a fixed number of decimals, but never a nonzero
value that reads as zero. Shared by the planner's reason and tables and by ``dpcost iteration``
(so text and tables agree), and light: a single answer's path imports it."""

from __future__ import annotations

import math


def _rounds_to_zero(value: float, text: str) -> bool:
    """Whether a nonzero finite ``value`` printed as ``text`` reads as zero ("0.0", "-0", "0.0%")."""
    if not value or not math.isfinite(value):
        return False
    digits = text.replace(",", "").rstrip("%")
    try:
        return float(digits) == 0
    except ValueError:
        return False


def number(value: float, decimals: int = 1) -> str:
    """``value`` with thousands separators and ``decimals`` decimals, except that a nonzero value
    too small for them gets two significant figures instead of reading as zero.

    >>> number(2391.84), number(0.0077), number(57147.2, 0), number(3e-5, 0), number(0.0)
    ('2,391.8', '0.0077', '57,147', '3e-05', '0.0')
    """
    text = f"{value:,.{decimals}f}"
    return f"{value:.2g}" if _rounds_to_zero(value, text) else text


def rate(samples_per_s: float) -> str:
    """Samples per second as the table, the reason and ``iteration`` print them: one decimal, or two
    significant figures below 0.05 (a slow plan never reads "0.0 samples/s")."""
    return number(samples_per_s, 1)


def percent(fraction: float, decimals: int = 1) -> str:
    """A fraction as a percentage with ``decimals`` decimals, or two significant figures where that
    would read as zero ("0.0077%", "1.7e-06%"; with no decimals, a solved MFU of 0.11 % once read
    "MFU 0%").

    >>> percent(0.4512), percent(0.4512, 0), percent(0.0011, 0)
    ('45.1%', '45%', '0.11%')
    """
    text = f"{fraction:.{decimals}%}"
    return f"{fraction * 100:.2g}%" if _rounds_to_zero(fraction, text) else text
