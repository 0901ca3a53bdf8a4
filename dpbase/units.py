"""Units at the edges: parse and format sizes, bandwidths and times.

Inside dpcost every quantity is in base units named in the variable: bytes (``_bytes``),
bytes per second (``_Bps``), seconds (``_s``). These helpers convert user text to base
units and back; nothing else in the code multiplies by powers of ten.

Sizes: B, KB/MB/GB/TB/PB are powers of 1000; KiB/MiB/GiB/TiB/PiB powers of 1024.
Bandwidths: a size unit per second (``GB/s``, ``GBps``, ``GiB/s``) or bits per second
(``Gbps``, ``Gb/s``, ``Mbit/s``).  Times: ns, us/µs, ms, s.

One rule for the letter case of a unit: the prefix may be written either way (``kB`` = ``KB``,
``gbps`` = ``Gbps``), but ``B`` is bytes and ``b`` (or ``bit``) is bits. A size in bits
(``4Gb``, ``4gb``, ``256mib``) is refused, a size being bytes; a bandwidth in bits is divided by
8 (``100Gbps``, ``100gb/s``, ``100Gbit/s`` = 12.5 GB/s), except binary bits (``Gib/s``), which
are refused: nobody quotes a link in gibibits, so ``gib/s`` is a mis-cased ``GiB/s``.
"""

from __future__ import annotations

import math
import re

from dpbase.errors import UnitError, is_real
from dpbase.limits import MAX_SIZE_BYTES, MAX_TIME_S, MAX_BANDWIDTH_Bps, MIN_BANDWIDTH_Bps

SIZE_UNITS_BYTES: dict[str, int] = {
    "B": 1,
    "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "PB": 10**15,
    "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40, "PIB": 2**50,
}
BIT_PREFIX: dict[str, int] = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15}
TIME_UNITS_PER_S: dict[str, float] = {"ns": 1e9, "us": 1e6, "µs": 1e6, "μs": 1e6, "ms": 1e3, "s": 1.0}

_NUMBER = r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"
_QUANTITY = re.compile(rf"^\s*{_NUMBER}\s*([A-Za-zµμ/]*)\s*$")
# A size unit: a prefix in either case, ``i`` for powers of 1024, then B (bytes) or b/bit/bits.
_SIZE_UNIT = re.compile(r"([KMGTP]?)(i?)(B|bits?)", flags=re.IGNORECASE)
_PER_SECOND = re.compile(r"(.+?)(?:/s|ps)", flags=re.IGNORECASE)

SIZE_ALLOWED = "a number with B, KB, MB, GB, TB, KiB, MiB, GiB or TiB (e.g. 4GB, 256MiB)"
# where a bare number is bytes (a message size, as nccl-tests prints it)
SIZE_BYTES_ALLOWED = f"{SIZE_ALLOWED[:-1]}; a bare number is bytes)"
BANDWIDTH_ALLOWED = "a number with GB/s, GBps, GiB/s, MB/s, Gbps, Gb/s or Mbps (e.g. 25GB/s, 100Gbps)"
TIME_ALLOWED = "a number with ns, us, µs, ms or s (e.g. 5us, 1.2ms)"


def _split(field: str, text: str | float | int, allowed: str, unit_needed: bool = False) -> tuple[float, str]:
    """(number, unit) of ``text``; a number given as a number has no unit. ``unit_needed``: text
    without a unit is refused (a typed ``6`` beside a default shown as ``6ms`` would be 6 s)."""
    if is_real(text):  # numpy's numbers too (np.float32)
        try:
            return float(text), ""
        except OverflowError:  # an int beyond float range
            raise UnitError(field, text, allowed) from None
    match = _QUANTITY.match(str(text))
    if not match:
        if str(text).strip().startswith("-") and _QUANTITY.match(str(text).strip()[1:]):
            raise UnitError(field, text, f"{allowed}; not negative")  # "-1": a number, refused as < 0
        raise UnitError(field, text, allowed)
    if unit_needed and not match.group(2):
        raise UnitError(field, text, f"{allowed}: a unit is needed")
    number = float(match.group(1))
    if number == 0 and any(digit in "123456789" for digit in match.group(1).lower().partition("e")[0]):
        # "1e-400GB" underflowed to 0 and was answered as an empty message (an audit, 2026-11-30)
        raise UnitError(field, text, f"{allowed}; {match.group(1)} is below the smallest number held (it reads as 0)")
    return number, match.group(2)


def _check_finite(field: str, text: object, value: float, allowed: str) -> float:
    if not math.isfinite(value) or value < 0:
        raise UnitError(field, text, f"{allowed}; not negative" if value < 0 else allowed)
    return value


def _size_unit(unit: str) -> tuple[str, bool] | None:
    """``(prefix, in bits)`` of a size unit (``"Gi"``, False for GiB; ``"G"``, True for gb), the
    prefix in capitals but for the ``i``; None for anything else."""
    match = _SIZE_UNIT.fullmatch(unit)
    if not match or (match.group(2) and not match.group(1)):  # "iB"
        return None
    prefix, binary, base = match.groups()
    return prefix.upper() + ("i" if binary else ""), base != "B"


def parse_size(text: str | float | int, field: str = "size", unit_needed: bool = False) -> float:
    """Bytes in ``text``; typed text without a unit is bytes (nccl-tests' message sizes) unless
    ``unit_needed`` (a bucket typed ``25`` from PyTorch's ``bucket_cap_mb=25``; a profile's
    ``memory = "80"``); a number given as a number is bytes. The prefix may be in either case;
    ``b`` is bits, refused: a size is in bytes.

    >>> parse_size("4GB"), parse_size("1KiB"), parse_size(12), parse_size("2kB")
    (4000000000.0, 1024.0, 12.0, 2000.0)
    """
    allowed = SIZE_ALLOWED if unit_needed else SIZE_BYTES_ALLOWED
    number, unit = _split(field, text, allowed, unit_needed)
    parsed = _size_unit(unit) if unit else ("", False)
    if parsed is None:
        raise UnitError(field, text, allowed)
    prefix, bits = parsed
    if bits:  # Gb, gb, Mbit: a size is in bytes
        written = f"{prefix}B" if not prefix or prefix.endswith("i") else f"{prefix}B or {prefix}iB"
        raise UnitError(field, text, f"{allowed}; {unit} reads as bits, a size is in bytes ({written})")
    size_bytes = _check_finite(field, text, number * SIZE_UNITS_BYTES[f"{prefix}B".upper()], allowed)
    if size_bytes > MAX_SIZE_BYTES:
        raise UnitError(field, text, f"{allowed}, at most 1 ZiB")
    return size_bytes


def parse_message_size(text: str | float | int, field: str = "size") -> float:
    """A collective's message in bytes (:func:`parse_size`): 0, or at least 1 byte, since a message
    holds whole bytes ("0.5" was timed with its busiest rank sending 0.875 B, and nccl-table
    answered 0.5 B; review and audit, 2026-11-29/30). The one rule for every command's ``--size``.

    >>> parse_message_size("4KiB"), parse_message_size(0)
    (4096.0, 0.0)
    """
    size_bytes = parse_size(text, field)
    if 0 < size_bytes < 1:
        raise UnitError(field, text, "0, or at least 1 byte (a message holds whole bytes)")
    if isinstance(text, str) and abs(size_bytes - round(size_bytes)) > 1e-9 * max(size_bytes, 1.0):
        # typed text: "1.5B" was timed as 1.5 bytes (an audit, 2026-11-30); 1.5KB is 1,500 whole bytes
        raise UnitError(field, text, f"a whole number of bytes (it is {size_bytes:g} B; a message holds whole bytes)")
    return size_bytes


def parse_bandwidth(text: str | float | int, field: str = "bandwidth") -> float:
    """Bytes per second in ``text``; a number (int or float) is bytes per second, but text needs
    its unit. ``B`` is bytes and ``b`` bits, whatever the case of the prefix (``gbps`` = ``Gbps``).
    A non-zero bandwidth lies within 1 B/s – 1000 PB/s (:mod:`dpbase.limits`); 0 is left to the
    field to accept (a profile's absent link) or refuse.

    >>> parse_bandwidth("100Gbps"), parse_bandwidth("25GB/s"), parse_bandwidth("100gb/s")
    (12500000000.0, 25000000000.0, 12500000000.0)
    """
    return _bandwidth_in_range(field, text, _bandwidth_Bps(field, text))


def _bandwidth_Bps(field: str, text: str | float | int) -> float:
    number, unit = _split(field, text, BANDWIDTH_ALLOWED, unit_needed=True)  # `--bandwidth 25` is not 25 B/s
    if not unit:
        return _check_finite(field, text, number, BANDWIDTH_ALLOWED)
    per_second = _PER_SECOND.fullmatch(unit)
    parsed = _size_unit(per_second.group(1)) if per_second else None
    if parsed is None:
        raise UnitError(field, text, BANDWIDTH_ALLOWED)
    prefix, bits = parsed
    if not bits:
        return _check_finite(field, text, number * SIZE_UNITS_BYTES[f"{prefix}B".upper()], BANDWIDTH_ALLOWED)
    if prefix.endswith("i"):  # gib/s: gibibits, or a mis-cased GiB/s
        raise UnitError(field, text, f"{BANDWIDTH_ALLOWED}; {unit} reads as binary bits: write {prefix}B/s "
                                     f"(bytes) or {prefix[0]}b/s (bits)")
    return _check_finite(field, text, number * BIT_PREFIX[prefix] / 8, BANDWIDTH_ALLOWED)


def _decades(value: float) -> str:
    """A power of ten as its exponent reads ("1e6"), any other number as %g."""
    exponent = round(math.log10(value))
    return f"1e{exponent}" if value == 10.0 ** exponent and abs(exponent) > 3 else f"{value:g}"


# the ranges of dpbase.limits in words: a non-zero bandwidth's, and a latency's, reduction time's or overhead's
BANDWIDTH_RANGE = f"from {MIN_BANDWIDTH_Bps:g} B/s to {MAX_BANDWIDTH_Bps / 1e15:g} PB/s"
TIME_RANGE = f"at most {_decades(MAX_TIME_S)} s ({MAX_TIME_S / 86400:.1f} days)"


def bandwidth_in_range(value_Bps: float) -> bool:
    """Whether a bandwidth is one dpcost takes: 0 (the field's to accept) or 1 B/s to 1000 PB/s."""
    return not value_Bps or MIN_BANDWIDTH_Bps <= value_Bps <= MAX_BANDWIDTH_Bps


def seconds_in_range(seconds: float) -> bool:
    """Whether a latency, reduction time or overhead is one dpcost takes: at most 1e6 s."""
    return seconds <= MAX_TIME_S


def _bandwidth_in_range(field: str, text: object, value_Bps: float) -> float:
    if not bandwidth_in_range(value_Bps):
        raise UnitError(field, text, f"{BANDWIDTH_ALLOWED}, {BANDWIDTH_RANGE}")
    return value_Bps


def parse_time(text: str | float | int, field: str = "time") -> float:
    """Seconds in ``text``; a number (int or float) is seconds, but text needs its unit: a
    typed ``6`` beside a default shown as ``6ms`` would otherwise be read as 6 s. At most 10^6 s
    (:mod:`dpbase.limits`): these are latencies, reduction times and overheads.

    >>> parse_time("5us"), parse_time("1.5ms"), parse_time(0.002)
    (5e-06, 0.0015, 0.002)
    """
    number, unit = _split(field, text, TIME_ALLOWED, unit_needed=True)
    key = unit or "s"
    if key not in TIME_UNITS_PER_S:
        raise UnitError(field, text, TIME_ALLOWED)
    seconds = _check_finite(field, text, number / TIME_UNITS_PER_S[key], TIME_ALLOWED)
    if not seconds_in_range(seconds):
        raise UnitError(field, text, f"{TIME_ALLOWED}, {TIME_RANGE}")
    return seconds


# Four significant digits round a value from (1 − 5e-5) × a unit's base up to the base itself:
# such a value takes the next unit ("1000 µs" was printed for 999.96 µs).
ROUNDS_UP = 1 - 5e-5


def format_size(size_bytes: float) -> str:
    """Human-readable size in powers of 1024 for exact binary sizes, else 1000."""
    if size_bytes == 0:
        return "0 B"
    binary = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
    decimal = ["B", "KB", "MB", "GB", "TB", "PB"]
    decimal_exact = any(size_bytes % 10 ** (3 * k) == 0 and size_bytes >= 10 ** (3 * k) for k in range(1, 6))
    binary_exact = any(size_bytes % 2 ** (10 * k) == 0 and size_bytes >= 2 ** (10 * k) for k in range(1, 6))
    if binary_exact and not decimal_exact:
        units, base = binary, 1024.0
    else:
        units, base = decimal, 1000.0
    value, index = float(size_bytes), 0
    while value >= base * ROUNDS_UP and index < len(units) - 1:  # 1023.96 KiB is "1 MiB"
        value /= base
        index += 1
    return f"{value:.4g} {units[index]}"


def format_time(seconds: float) -> str:
    """Seconds with a readable unit (ns, µs, ms, s).  A time that is not a finite number is
    never printed as an answer: it raises InputError (the final guard of every text output)."""
    if not math.isfinite(seconds):
        raise UnitError("time", seconds, "a finite time: the inputs are outside the range the model can answer "
                                         "(a bandwidth near 0, or a huge size, α or γ)")
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(seconds) >= scale * ROUNDS_UP:  # 999.96 µs is "1 ms", not "1000 µs"
            return f"{seconds / scale:.4g} {unit}"
    return f"{seconds / 1e-9:.4g} ns"


def format_bandwidth(bytes_per_s: float) -> str:
    """Bytes per second as GB/s (powers of 1000, like nccl-tests)."""
    return f"{bytes_per_s / 1e9:.4g} GB/s"
