"""Parse nccl-tests / rccl-tests output (text tables and ``-J`` JSON) into frozen values.

Accepted text, line by line (facts: reference/nccl-model.md section 7):

* result rows of the current layout ``size count type redop root`` + twice
  ``time algbw busbw #wrong`` (out-of-place, then in-place), and of the pre-2022 layout
  (no ``root`` column, sometimes no ``redop`` column, last column ``error``);
* ``N/A`` in any value column (``-c 0`` prints it for ``#wrong``) and a last row cut short
  after its out-of-place block (the in-place values are then ``None``);
* launcher prefixes ``[0]``, ``[1,0]<stdout>:`` (mpirun) and ``0:`` (srun -l);
* ``#`` header lines: ``# nThread … nGpus …``, ``#  Rank  0 Group 0 Pid … on HOST device 0
  [0x..] MODEL`` (ranks, nodes, GPU model), the column-name line, ``# Avg bus bandwidth``;
  ``NCCL version x.y.z`` / ``RCCL version`` / ``nccl-library=21803`` anywhere;
* the collective is the one nccl-tests binary named in the text (``all_reduce_perf`` in a
  pasted command line or in ``# Collective test concluded: …``), if exactly one is;
* any other line (NCCL INFO, warnings, shell output) is skipped.  A line that starts like a
  result row (two integers) but cannot be read raises :class:`ParseError` naming the line.

Units are converted here, at the edge: µs → s and GB/s (1e9 B/s) → B/s.
"""

from __future__ import annotations

import io
import json
import math
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from costmodel.calibrate.conventions import binaries_in_text
from dpbase.errors import InputError, ParseError
from dpbase.values import frozen, replace

NCCL_TESTS_TIME_S = 1e-6  # nccl-tests prints times in µs (src/util.cu)
NCCL_TESTS_BANDWIDTH_BPS = 1e9  # algbw/busbw in GB/s = 1e9 B/s (src/common.cu baseBw)
ROW_VALUES = ("time_oop", "algbw_oop", "busbw_oop", "check_oop", "time_ip", "algbw_ip", "busbw_ip",
              "check_ip")
# nccl-tests prints bandwidths >= 0 (bytes / time); a negative one is a damaged log, refused
# rather than left out of the plateau and peak that calibrate reports from these columns.
BANDWIDTH_COLUMNS = frozenset(name for name in ROW_VALUES if "bw" in name)
MIN_ROW_VALUES = 3  # a row cut short must still carry out-of-place time, algbw and busbw

_PREFIX = re.compile(r"^\s*(?:\[\d+(?:,\d+)*\](?:<std(?:out|err)>)?:?|\d+:(?=\s))\s*")
_INT = re.compile(r"^-?\d+$")
_WORD = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_RANK_LINE = re.compile(r"#\s*Rank\s+(\d+)\s.*?\bon\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s+(.+?)\s*$")
_VERSION = re.compile(r"(?:NCCL|RCCL) version\s+v?(\d+\.\d+\.\d+)")
_LIBRARY = re.compile(r"nccl-library=(\d+)")
_AVG_BUSBW = re.compile(r"#\s*Avg bus bandwidth\s*:\s*([0-9.eE+-]+)")


@frozen(kw_only=True)
class Measurement:
    """One result row.  ``None`` where the log prints ``N/A`` or the row is cut short.

    ``check_*`` is the ``#wrong`` count (current layout) or the max error (pre-2022 layout).
    """

    size_bytes: int
    count: int
    dtype: str
    redop: str | None
    root: int | None
    time_oop_s: float | None
    algbw_oop_Bps: float | None
    busbw_oop_Bps: float | None
    check_oop: float | None
    time_ip_s: float | None
    algbw_ip_Bps: float | None
    busbw_ip_Bps: float | None
    check_ip: float | None
    line: int


@frozen(kw_only=True)
class Log:
    """A parsed log: what it says about the run, and its rows in file order."""

    collective: str | None
    ranks: int | None
    nodes: int | None
    gpu_model: str | None
    nccl_version: str | None
    rows: tuple[Measurement, ...]
    source_path: str
    layout: str  # "current", "pre-2022" or "json"
    avg_busbw_Bps: float | None = None
    notes: tuple[str, ...] = ()
    head: str = ""  # the file's start, where NCCL prints its INFO lines (read once: a pipe cannot be read again)


def _strip_prefix(line: str) -> str:
    return _PREFIX.sub("", line, count=1).rstrip()


def _value(token: str, name: str, number: int) -> float | None:
    if token.upper() == "N/A":
        return None
    try:
        value = float(token)
    except ValueError:
        raise ParseError(f"line {number} column {name}", token, "a number or N/A") from None
    if not math.isfinite(value):
        raise ParseError(f"line {number} column {name}", token, "a finite number or N/A")
    if value < 0 and name in BANDWIDTH_COLUMNS:
        raise ParseError(f"line {number} column {name}", token, "a bandwidth >= 0 GB/s or N/A")
    return value


def _is_row(tokens: list[str]) -> bool:
    return len(tokens) >= 2 and bool(_INT.match(tokens[0])) and bool(_INT.match(tokens[1]))


def _number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return token.upper() == "N/A"
    return True


def _damaged_size(tokens: list[str]) -> bool:
    """A result row but for its size cell: count, a type word, then at least the out-of-place
    values. It was skipped as shell output, so a log lost the point without a word ("8Ki" in the
    size column fitted 46 of 48 points, one regime fewer; an audit of the CLI, 2026-11-30)."""
    return (len(tokens) >= 3 + MIN_ROW_VALUES and not _INT.match(tokens[0]) and bool(_INT.match(tokens[1]))
            and bool(_WORD.match(tokens[2])) and sum(map(_number, tokens[3:])) >= MIN_ROW_VALUES)


def _row(tokens: list[str], number: int, has_root: bool) -> tuple[Measurement, bool]:
    """The row on line ``number`` and whether it was cut short."""
    if len(tokens) < 3 or not _WORD.match(tokens[2]):
        raise ParseError(f"line {number}", " ".join(tokens), "size count type [redop] [root] values")
    rest = tokens[3:]
    redop = rest.pop(0) if rest and _WORD.match(rest[0]) else None
    if rest and len(rest) == len(ROW_VALUES) + 1:
        has_root = True
    root = None
    if has_root and rest:
        if not _INT.match(rest[0]):
            raise ParseError(f"line {number} column root", rest[0], "an integer")
        root = int(rest.pop(0))
    if not MIN_ROW_VALUES <= len(rest) <= len(ROW_VALUES):
        raise ParseError(f"line {number}", " ".join(tokens),
                         f"a complete result row (got {len(rest)} of {len(ROW_VALUES)} values)")
    values = [_value(t, n, number) for t, n in zip(rest, ROW_VALUES)]
    missing = len(ROW_VALUES) - len(values)
    return _measurement(tokens, redop, root, values + [None] * missing, number), missing > 0


def _scaled(value: float | None, scale: float) -> float | None:
    return None if value is None else value * scale


def _measurement(tokens, redop, root, values, number) -> Measurement:
    t_oop, a_oop, b_oop, c_oop, t_ip, a_ip, b_ip, c_ip = values
    return Measurement(
        size_bytes=int(tokens[0]), count=int(tokens[1]), dtype=sys.intern(tokens[2]),
        redop=sys.intern(redop) if redop else redop, root=root,
        time_oop_s=_scaled(t_oop, NCCL_TESTS_TIME_S), algbw_oop_Bps=_scaled(a_oop, NCCL_TESTS_BANDWIDTH_BPS),
        busbw_oop_Bps=_scaled(b_oop, NCCL_TESTS_BANDWIDTH_BPS), check_oop=c_oop,
        time_ip_s=_scaled(t_ip, NCCL_TESTS_TIME_S), algbw_ip_Bps=_scaled(a_ip, NCCL_TESTS_BANDWIDTH_BPS),
        busbw_ip_Bps=_scaled(b_ip, NCCL_TESTS_BANDWIDTH_BPS), check_ip=c_ip, line=number,
    )


@dataclass(slots=True)
class _Header:
    """What the ``#`` lines say; filled while scanning, read once at the end."""

    ranks: dict[int, tuple[str, str]]
    columns: list[str]
    avg_busbw: float | None = None

    def read(self, text: str) -> None:
        rank = _RANK_LINE.match(text)
        if rank:
            self.ranks[int(rank.group(1))] = (rank.group(2), rank.group(3))
        elif re.match(r"#\s+size\s", text):
            self.columns = text.lstrip("#").split()
        elif _AVG_BUSBW.match(text):
            self.avg_busbw = float(_AVG_BUSBW.match(text).group(1)) * NCCL_TESTS_BANDWIDTH_BPS


def _version(text: str) -> str | None:
    match = _VERSION.search(text) if " version" in text else None
    if match:
        return match.group(1)
    library = _LIBRARY.search(text) if "nccl-library=" in text else None
    if not library:
        return None
    code = int(library.group(1))  # NCCL_VERSION_CODE: X*10000+Y*100+Z from 2.9, else X*1000+Y*100+Z
    if code >= 20900:
        return f"{code // 10000}.{code // 100 % 100}.{code % 100}"
    return f"{code // 1000}.{code // 100 % 10}.{code % 100}"


def _candidates(text: str, header: _Header | None = None) -> Iterator[tuple[int, list[str]]]:
    """(line number, tokens) of every line that starts like a result row, one at a time;
    ``#`` lines go to ``header`` when given.  Nothing is kept, so a large log costs its rows."""
    for number, raw in enumerate(io.StringIO(text, newline=None), start=1):
        line = _strip_prefix(raw)
        if line.lstrip().startswith("#"):
            if header is not None:
                header.read(line.strip())
            continue
        tokens = line.split()
        if _is_row(tokens):
            yield number, tokens
        elif _damaged_size(tokens):
            raise ParseError(f"line {number} column size", tokens[0], "an integer (bytes)")


def _scan(text: str) -> tuple[Counter, _Header]:
    """First pass: the header and how many value columns the candidate rows have."""
    header = _Header(ranks={}, columns=[])
    widths = Counter(len(t) - 3 - int(len(t) > 3 and bool(_WORD.match(t[3]))) for _, t in _candidates(text, header))
    return widths, header


def _has_root(widths: Counter, header: _Header) -> bool:
    if header.columns:
        return "root" in header.columns
    return widths.get(len(ROW_VALUES) + 1, 0) > 0


def _no_rows_error(text: str, path: str) -> ParseError:
    lines = text.splitlines()
    if not text.strip():
        return ParseError(f"{path}", "an empty file", "nccl-tests or rccl-tests output")
    first = next(((i, line) for i, line in enumerate(lines, 1) if line.strip() and not line.lstrip().startswith("#")),
                 (1, lines[0]))
    return ParseError(f"{path} line {first[0]}", first[1].strip()[:80],
                      "nccl-tests result rows (size count type … time algbw busbw …); none found")


def parse_text(text: str, source_path: str = "<text>") -> Log:
    """Parse the text of a nccl-tests / rccl-tests log (see the module docstring)."""
    try:  # a row's error names its line; the file too, where several are read (the first pass's too)
        widths, header = _scan(text)
        has_root = _has_root(widths, header) if widths else False
        parsed = [_row(tokens, number, has_root) for number, tokens in _candidates(text)] if widths else []
    except ParseError as error:
        raise ParseError(f"{source_path} {error.field}", error.value, error.allowed) from None
    if not widths:  # its error names the file and line itself
        raise _no_rows_error(text, source_path)
    rows = tuple(row for row, _ in parsed)
    hosts = {host for host, _ in header.ranks.values()}
    models = Counter(model for _, model in header.ranks.values())
    old = any(c in ("error", "errors") for c in header.columns) or not has_root
    notes = tuple(f"line {row.line}: row cut short; the missing values are None"
                  for row, short in parsed if short)
    named = binaries_in_text(text)
    return Log(
        collective=named.pop() if len(named) == 1 else None, ranks=len(header.ranks) or None,
        nodes=len(hosts) or None, gpu_model=models.most_common(1)[0][0] if models else None,
        nccl_version=_version(text),
        rows=rows, source_path=source_path, layout="pre-2022" if old else "current",
        avg_busbw_Bps=header.avg_busbw, notes=notes,
    )


def _json_number(value: object, where: str) -> float | None:
    if value is None or value == "N/A":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ParseError(where, value, "a finite number, null or \"N/A\"")
    return float(value)


def _json_block(entry: dict, key: str, where: str) -> list[float | None]:
    block = entry.get(key) or {}
    if not isinstance(block, dict):
        raise ParseError(f"{where}.{key}", block, "an object with time, alg_bw, bus_bw and nwrong")
    values = [_json_number(block.get(name), f"{where}.{key}.{name}") for name in ("time", "alg_bw", "bus_bw", "nwrong")]
    for name, value in zip(("alg_bw", "bus_bw"), values[1:3]):
        if value is not None and value < 0:
            raise ParseError(f"{where}.{key}.{name}", block.get(name), "a bandwidth >= 0 GB/s or null")
    return values


def parse_json(text: str, source_path: str = "<json>") -> Log:
    """Parse the ``-J`` JSON of nccl-tests: ``results`` entries with size, count, type, redop,
    root and ``out_of_place``/``in_place`` blocks of time (µs), alg_bw, bus_bw (GB/s), nwrong."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ParseError(f"{source_path} line {error.lineno}", error.msg, "valid JSON") from None
    except RecursionError:
        raise ParseError(source_path, "JSON nested too deeply", "nccl-tests -J output") from None
    results = data.get("results") if isinstance(data, dict) else data
    if not isinstance(results, list) or not results:
        raise ParseError(f"{source_path}", "JSON without results", "a JSON object with a 'results' list")
    rows = []
    for index, entry in enumerate(results):
        where = f"{source_path} results[{index}]"
        size = entry.get("size") if isinstance(entry, dict) else None
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ParseError(where, entry, "an object with an integer size >= 0")
        values = _json_block(entry, "out_of_place", where) + _json_block(entry, "in_place", where)
        count = entry.get("count")
        count = count if isinstance(count, int) and not isinstance(count, bool) else 0
        tokens = [str(size), str(count), str(entry.get("type", "unknown"))]
        root = entry.get("root")
        redop = entry.get("redop")
        rows.append(_measurement(tokens, redop if isinstance(redop, str) else None,
                                 root if isinstance(root, int) and not isinstance(root, bool) else None,
                                 values, index + 1))
    config = data.get("config", {}) if isinstance(data, dict) else {}
    config = config if isinstance(config, dict) else {}
    devices = config.get("devices") if isinstance(config.get("devices"), list) else []
    hosts = {d.get("hostname") for d in devices if isinstance(d, dict) and isinstance(d.get("hostname"), str)}
    models = Counter(d.get("name") for d in devices if isinstance(d, dict) and isinstance(d.get("name"), str))
    return Log(
        collective=None, ranks=len(devices) or None, nodes=len(hosts) or None,
        gpu_model=models.most_common(1)[0][0] if models else None,
        nccl_version=_version(json.dumps(config)), rows=tuple(rows), source_path=source_path,
        layout="json",
    )


def parse_file(path: str | Path) -> Log:
    """Read ``path`` and parse it as ``-J`` JSON (an object) or as a text log. A path that is not
    a readable file is one :class:`InputError` naming it (the command line's wording)."""
    if not isinstance(path, (str, Path)) or not str(path):
        raise InputError("file", path, "a path to an nccl-tests log")
    from dpbase.readfile import read_text

    text = read_text(path, "file", "a readable nccl-tests log", errors="replace", log=True)
    log = parse_json(text, str(path)) if text.lstrip().startswith("{") else parse_text(text, str(path))
    return replace(log, head=text[:HEAD_CHARS])


# Where NCCL prints its INFO lines (NCCL_ALGO, the version): the start of a log, kept with it.
HEAD_CHARS = 256 * 1024
