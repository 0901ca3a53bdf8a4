"""Top-level metadata tables a profile file may carry beside its profiles.

``dpcost calibrate -o`` writes a ``[calibration]`` table next to the ``[[link]]`` it
fitted: the collective, ranks and algorithm the fit assumed, the coefficients used to turn
the fit into per-hop α and bandwidth, the fit error and the raw fitted regimes.  It does
not change the link (the ``[[link]]`` table alone defines it); it is kept so that a reader
can tell where the numbers came from.  Validation is light: the table must be a table, the
keys listed in :data:`CALIBRATION_KEYS` must have the right type when present, and each
``[[calibration.regime]]`` must be a table of numbers.  Other keys are kept as written.

    >>> problems_in_calibration({"collective": "all-reduce", "ranks": 1})
    [ProfileError('[calibration].ranks: got 1; allowed: an integer >= 2')]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from dpbase.errors import ProfileError


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


def _check(ok: Callable[[Any], bool], allowed: str) -> tuple[Callable[[Any], bool], str]:
    return ok, allowed


# key -> (check, what is allowed); keys not listed are kept unchecked.
CALIBRATION_KEYS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "collective": _check(lambda v: isinstance(v, str) and bool(v.strip()), "a collective name"),
    "algorithm": _check(lambda v: isinstance(v, str) and bool(v.strip()), "an algorithm name"),
    "ranks": _check(lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 2, "an integer >= 2"),
    "nodes": _check(lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1, "an integer >= 1"),
    "steps": _check(lambda v: _is_number(v) and v >= 0, "a number >= 0"),
    "beta_bytes_per_byte": _check(lambda v: _is_number(v) and v > 0, "a number > 0"),
    "sources": _check(lambda v: isinstance(v, list) and all(isinstance(s, str) for s in v), "a list of strings"),
    "median_abs_pct_error": _check(lambda v: _is_number(v) and v >= 0, "a number >= 0"),
    "worst_abs_pct_error": _check(lambda v: _is_number(v) and v >= 0, "a number >= 0"),
    "held_out_ratio_p10": _check(lambda v: _is_number(v) and 0 < v < math.inf, "a finite number > 0"),
    "held_out_ratio_p90": _check(lambda v: _is_number(v) and 0 < v < math.inf, "a finite number > 0"),
}
REGIME_NUMBERS = ("latency_s", "seconds_per_byte", "min_size_bytes", "max_size_bytes", "points")


def _regime_problems(rows: Any) -> list[ProfileError]:
    if not isinstance(rows, list):
        return [ProfileError("[calibration].regime", rows, "an array of tables [[calibration.regime]]")]
    problems = []
    for index, row in enumerate(rows):
        label = f"[calibration].regime[{index}]"
        if not isinstance(row, dict):
            problems.append(ProfileError(label, row, "a table"))
            continue
        problems += [ProfileError(f"{label}.{key}", row[key], "a number")
                     for key in REGIME_NUMBERS if key in row and not _is_number(row[key])]
    return problems


def problems_in_calibration(table: Any) -> list[ProfileError]:
    """Every problem in a ``[calibration]`` table (empty list = acceptable)."""
    if not isinstance(table, dict):
        return [ProfileError("[calibration]", table, "a table")]
    problems = [ProfileError(f"[calibration].{key}", table[key], allowed)
                for key, (ok, allowed) in CALIBRATION_KEYS.items() if key in table and not ok(table[key])]
    if "regime" in table:
        problems += _regime_problems(table["regime"])
    band = [table.get(key) for key in ("held_out_ratio_p10", "held_out_ratio_p90")]
    if not problems and (band.count(None) == 1 or (None not in band and band[0] > band[1])):
        problems.append(ProfileError("[calibration].held_out_ratio_p10", band[0],
                                     f"both ends of the band, p10 <= p90 (p90 = {band[1]})"))
    return problems


# top-level table name -> its validator
METADATA_TABLES: dict[str, Callable[[Any], list[ProfileError]]] = {"calibration": problems_in_calibration}
