"""Field parsers for profile TOML: one raw TOML value -> one checked Python value.

Each parser is called as ``parser(value, label)`` where ``label`` names the table, the
entry and the field (``systems[0] (my-box).nic_bandwidth``); on a bad value it raises
:class:`~dpbase.errors.ProfileError` with that label, the value and what is allowed.
Quantities must carry their unit as text (``"80GB"``): a bare number is refused because
``80`` could mean bytes or gigabytes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from dpbase import units
from dpbase.errors import InputError, ProfileError
from hardware.profiles import DTYPES, MeasuredCurve, Regime

Parser = Callable[[Any, str], Any]

KEBAB_NAME = re.compile(r"^[a-z0-9]+(?:[-.][a-z0-9]+)*$")
TERA = 1e12  # peak_tflops are written in TFLOP/s; stored in FLOP/s


def text(value: Any, label: str) -> str:
    """A string (may be empty)."""
    if not isinstance(value, str):
        raise ProfileError(label, value, "a string")
    return value


def nonempty_text(value: Any, label: str) -> str:
    """A non-empty string, e.g. a description or a source."""
    if not isinstance(value, str) or not value.strip():
        raise ProfileError(label, value, "a non-empty string")
    return value


def text_list(value: Any, label: str) -> tuple[str, ...]:
    """A list of non-empty strings (e.g. other names of an instance), kept as a tuple."""
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise ProfileError(label, value, 'a list of non-empty strings (e.g. ["ND96asr_v4"])')
    return tuple(value)


def link_matrix(value: Any, label: str) -> tuple[tuple[int, ...], ...]:
    """A square matrix of non-negative link counts (a mesh node's NVLinks between each pair of its
    GPUs, as ``nvidia-smi topo -m`` prints NV#), kept as a tuple of tuples."""
    ok = isinstance(value, list) and value and all(
        isinstance(row, list) and len(row) == len(value)
        and all(isinstance(count, int) and not isinstance(count, bool) and count >= 0 for count in row)
        for row in value)
    if not ok:
        raise ProfileError(label, value, "a square list of lists of link counts >= 0, one row per GPU "
                                         "(e.g. [[0, 2], [2, 0]])")
    return tuple(tuple(row) for row in value)


def kebab_name(value: Any, label: str) -> str:
    """A kebab-case identifier such as ``h100-sxm`` or ``ib-ndr``."""
    if not isinstance(value, str) or not KEBAB_NAME.match(value):
        raise ProfileError(label, value, "a kebab-case name of a-z, 0-9 and '-' (e.g. h100-sxm)")
    return value


def choice(options: Sequence[str]) -> Parser:
    """A parser accepting exactly one of ``options``."""
    shown = ", ".join(repr(option) for option in options)

    def parse(value: Any, label: str) -> str:
        if value not in options:
            raise ProfileError(label, value, f"one of {shown}")
        return value

    return parse


def _quantity(parse_unit: Callable[[str, str], float], allowed: str, positive: bool) -> Parser:
    def parse(value: Any, label: str) -> float:
        if not isinstance(value, str):
            raise ProfileError(label, value, f"a string: {allowed}")
        if value.strip().startswith("-"):  # the same bound as a zero gets below ("> 0" where zero is refused)
            raise ProfileError(label, value, f"a value {'> 0' if positive else '>= 0'}: {allowed}")
        try:
            number = parse_unit(value, label)
        except InputError as error:
            raise ProfileError(label, value, error.allowed) from None
        if positive and number <= 0:
            raise ProfileError(label, value, f"a value > 0: {allowed}")
        return number

    return parse


size = _quantity(lambda text, label: units.parse_size(text, label, unit_needed=True),  # "80": bytes or GB?
                 units.SIZE_ALLOWED, positive=True)
bandwidth = _quantity(units.parse_bandwidth, units.BANDWIDTH_ALLOWED, positive=True)
bandwidth_or_zero = _quantity(units.parse_bandwidth, units.BANDWIDTH_ALLOWED, positive=False)
_duration = _quantity(units.parse_time, units.TIME_ALLOWED, positive=False)
# A link's latency: microseconds on any fabric, milliseconds over a WAN; "1000s" was taken and
# made every collective on the link take hours, where bandwidths were range-checked.
MAX_LATENCY_S = 1.0


def duration(value: Any, label: str) -> float:
    """A latency: a time with a unit, from 0 to MAX_LATENCY_S."""
    seconds = _duration(value, label)
    if seconds > MAX_LATENCY_S:
        raise ProfileError(label, value, f"a latency of at most {MAX_LATENCY_S:g} s (links take µs; a WAN ms)")
    return seconds


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


# The smallest share of a peak a profile may give (an efficiency, an MFU, a matmul ceiling): a
# link at 0.1 % of its rate or a GPU at 0.1 % of its peak is no hardware; below, a 1e-300
# efficiency made a 1 GiB all-reduce take 1.5e299 s and a step print inf hours (audit).
MIN_FRACTION = 1e-3


def fraction(value: Any, label: str) -> float:
    """A number in [MIN_FRACTION, 1], e.g. an efficiency or a model-FLOPs utilisation."""
    number = _number(value)
    if number is None or not MIN_FRACTION <= number <= 1:
        raise ProfileError(label, value, f"a number from {MIN_FRACTION:g} to 1")
    return number


def share(value: Any, label: str) -> float:
    """A number in [0, 1] that may be as small as it likes, e.g. a calibration's median error."""
    number = _number(value)
    if number is None or not 0 <= number <= 1:
        raise ProfileError(label, value, "a number from 0 to 1")
    return number


# An oversubscription ratio beyond this describes no fabric a training job runs on (2:1-8:1 are
# the oversubscribed leaf-spine designs; a 1e30 ratio made a 1 GiB all-reduce take 1.5e29 s).
MAX_OVERSUBSCRIPTION = 64.0


def at_least_one(value: Any, label: str) -> float:
    """A number from 1 to MAX_OVERSUBSCRIPTION, e.g. an oversubscription ratio."""
    number = _number(value)
    if number is None or not 1 <= number <= MAX_OVERSUBSCRIPTION:
        raise ProfileError(label, value, f"a number from 1 to {MAX_OVERSUBSCRIPTION:g} (1.0 = full bisection)")
    return number


def integer(low: int, high: int) -> Parser:
    """A parser accepting an integer in [low, high]."""

    def parse(value: Any, label: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ProfileError(label, value, f"an integer from {low} to {high}")
        return value

    return parse


def boolean(value: Any, label: str) -> bool:
    """``true`` or ``false``."""
    if not isinstance(value, bool):
        raise ProfileError(label, value, "true or false")
    return value


# A GPU's dense peak, TFLOP/s: 1 GFLOP/s to 1 EFLOP/s (B200's fp4 is ~10^4); a 1e300 peak made
# the step NaN and plan a traceback (audit).
MIN_TFLOPS, MAX_TFLOPS = 1e-3, 1e6


def peak_tflops(value: Any, label: str) -> dict[str, float]:
    """A table of dense TFLOP/s per dtype -> FLOP/s per dtype; missing = unsupported."""
    allowed = f"a table of dtype = TFLOP/s (dense) with dtypes {', '.join(DTYPES)}"
    if not isinstance(value, dict) or not value:
        raise ProfileError(label, value, allowed)
    flops: dict[str, float] = {}
    for dtype, tflops in value.items():
        if dtype not in DTYPES:
            raise ProfileError(f"{label}.{dtype}", tflops, f"a dtype among {', '.join(DTYPES)}")
        number = _number(tflops)
        if number is None or not MIN_TFLOPS <= number <= MAX_TFLOPS:
            raise ProfileError(f"{label}.{dtype}", tflops,
                               f"a number of TFLOP/s from {MIN_TFLOPS:g} to {MAX_TFLOPS:g}")
        flops[dtype] = number * TERA
    return flops


REGIME_KEYS = ("max_size", "latency", "bandwidth", "flat")


def _regime(row: Any, label: str, last: bool, flat_allowed: bool = True) -> Regime:
    if not isinstance(row, dict):
        raise ProfileError(label, row, "a table with max_size, latency, bandwidth")
    for key in row:
        if key not in REGIME_KEYS:
            raise ProfileError(f"{label}.{key}", row[key], f"one of the fields {', '.join(REGIME_KEYS)}")
    for key in ("latency", "bandwidth") + (() if last else ("max_size",)):
        if key not in row:
            raise ProfileError(f"{label}.{key}", "missing", "a required field")
    max_size = size(row["max_size"], f"{label}.max_size") if "max_size" in row else math.inf
    flat = row.get("flat", False)
    if not isinstance(flat, bool):
        raise ProfileError(f"{label}.flat", flat, "true or false")
    if flat and not flat_allowed:
        raise ProfileError(f"{label}.flat", "true", "false or absent: a measured curve's regime is the collective's "
                                                    "own time, not a link's")
    if flat and last:  # the last regime serves every larger size: its bandwidth would grow without end
        raise ProfileError(f"{label}.flat", "true", "false or absent on the last regime (a flat regime's bandwidth "
                                                    "is the one at its max_size, which a later regime must follow)")
    return Regime(max_size_bytes=max_size, latency_s=duration(row["latency"], f"{label}.latency"),
                  bandwidth_Bps=bandwidth(row["bandwidth"], f"{label}.bandwidth"), flat=flat)


def regimes(value: Any, label: str, flat_allowed: bool = True) -> tuple[Regime, ...]:
    """Calibrated regimes in increasing ``max_size``; only the last may omit it (infinity).
    ``flat`` only where ``flat_allowed`` (a link's, not a measured curve's) and not on the last."""
    if not isinstance(value, list) or not value:
        raise ProfileError(label, value, "an array of tables [[link.regimes]]")
    parsed = tuple(_regime(row, f"{label}[{i}]", i == len(value) - 1, flat_allowed) for i, row in enumerate(value))
    for i in range(1, len(parsed)):
        if parsed[i].max_size_bytes <= parsed[i - 1].max_size_bytes:
            raise ProfileError(f"{label}[{i}].max_size", value[i].get("max_size", "missing"),
                               "a size larger than the previous regime's max_size")
    return parsed


MEASURED_KEYS = ("collective", "algorithm", "nodes", "gpus_per_node", "sizes", "median_error", "source", "regimes")


def _measured(row: Any, label: str) -> MeasuredCurve:
    if not isinstance(row, dict):
        raise ProfileError(label, row, "a table [[system.measured]]")
    for key in row:
        if key not in MEASURED_KEYS:
            raise ProfileError(f"{label}.{key}", row[key], f"one of the fields {', '.join(MEASURED_KEYS)}")
    for key in ("collective", "algorithm", "nodes", "gpus_per_node", "sizes", "regimes"):
        if key not in row:
            raise ProfileError(f"{label}.{key}", "missing", "a required field")
    sizes = row["sizes"]
    if not isinstance(sizes, list) or len(sizes) != 2:
        raise ProfileError(f"{label}.sizes", sizes, 'the smallest and largest measured size, e.g. ["8B", "8GiB"]')
    low, high = size(sizes[0], f"{label}.sizes[0]"), size(sizes[1], f"{label}.sizes[1]")
    if not 0 < low <= high:
        raise ProfileError(f"{label}.sizes", sizes, "0 < smallest <= largest")
    return MeasuredCurve(collective=kebab_name(row["collective"], f"{label}.collective"),
                         algorithm=nonempty_text(row["algorithm"], f"{label}.algorithm"),
                         nodes=integer(1, 1_000_000)(row["nodes"], f"{label}.nodes"),
                         gpus_per_node=integer(1, 1024)(row["gpus_per_node"], f"{label}.gpus_per_node"),
                         regimes=regimes(row["regimes"], f"{label}.regimes", flat_allowed=False), min_size_bytes=low,
                         max_size_bytes=high,
                         median_error=share(row.get("median_error", 0.0), f"{label}.median_error"),
                         source=text(row.get("source", ""), f"{label}.source"))


def measured(value: Any, label: str) -> tuple[MeasuredCurve, ...]:
    """Calibrated collective curves ``[[system.measured]]`` (each with ``[[system.measured.regimes]]``)."""
    if not isinstance(value, list):
        raise ProfileError(label, value, "an array of tables [[system.measured]]")
    return tuple(_measured(row, f"{label}[{i}]") for i, row in enumerate(value))
