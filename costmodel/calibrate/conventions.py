"""Which collective a nccl-tests log measured, and its busbw factor.

The table lives in ``costmodel/data/nccltests.toml`` (binary names, aliases, busbw factors,
sources).  Names are dpcost primitive names (``all-reduce``, ``all-to-all``, ``send-recv`` …);
nccl-tests binaries (``all_reduce_perf``) and plain words (``allreduce``, ``a2a``) map onto them.

When a log does not name its collective, :func:`infer_from_columns` reads it from the columns:
``root`` ≥ 0 means broadcast (``redop`` none) or reduce; ``redop`` none with root −1 is
all-gather or all-to-all (ambiguous); a reduction op with root −1 is all-reduce if
busbw/algbw ≥ 1, reduce-scatter if it is below 1.  The same ratio gives the rank count N.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from pathlib import Path

from costmodel.names import busbw_factor as names_busbw_factor
from costmodel.names import primitive_named
from dpbase.bundled import load_bundled
from dpbase.errors import InputError, UnknownNameError
from dpbase.values import frozen

DATA_FILE = Path(__file__).resolve().parents[1] / "data" / "nccltests.toml"

# algbw and busbw are printed in GB/s with 2 decimals (nccl-tests src/util.cu getFloatStr):
# each is uncertain by half the last digit.
PRINT_RESOLUTION_GBPS = 0.005
# busbw/algbw within this relative distance of 1 counts as "equal" (2 ranks or factor 1).
RATIO_TOLERANCE = 0.01


@frozen
class CollectiveInfo:
    """One nccl-tests collective: its binary, aliases, busbw factor kind and source."""

    name: str
    binary: str
    aliases: tuple[str, ...]
    default_algorithm: str
    fallback_steps: str
    source: str


@functools.cache
def collectives() -> dict[str, CollectiveInfo]:
    """All collectives nccl-tests can measure, keyed by dpcost primitive name."""
    table = load_bundled(DATA_FILE)["collective"]
    return {
        name: CollectiveInfo(
            name=name, binary=entry["binary"], aliases=tuple(entry["aliases"]),
            default_algorithm=entry["default_algorithm"],
            fallback_steps=entry["fallback_steps"], source=entry["source"],
        )
        for name, entry in table.items()
    }


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


# What nccl-tests prints in its redop column (src/*.cu, TimeTest's opName): "none" for the tests that
# reduce nothing, a reduction's name (sum, prod, …) for the rest; send-recv prints one though it
# reduces nothing.
PRINTS_A_REDUCTION = frozenset({"all-reduce", "reduce-scatter", "reduce", "send-recv"})


def redop_contradicts(collective: str, redops: Sequence[str | None]) -> str | None:
    """The redop ``collective``'s log could not print, where the log prints it (else None): "none"
    for a collective that prints a reduction, a reduction for one that prints "none"."""
    redop = next((r for r in redops if r), None)
    if redop is None:
        return None
    if (redop == "none") == (collective in PRINTS_A_REDUCTION):
        return redop
    return None


def check_collective(name: str) -> str:
    """The dpcost name of ``name`` (a primitive name, a nccl-tests binary or an alias)."""
    key = _squash(name.removesuffix("_perf"))
    for info in collectives().values():
        if key in {_squash(info.name), _squash(info.binary.removesuffix("_perf")), *info.aliases}:
            return info.name
    raise UnknownNameError("collective", name, collectives())


def binaries_in_text(text: str) -> set[str]:
    """Collectives whose nccl-tests binary name (``all_reduce_perf`` …) occurs in ``text``."""
    found = set()
    for info in collectives().values():
        if info.binary not in text:  # a plain substring test first: the regex scans a large log slowly
            continue
        if re.search(rf"(?<![A-Za-z0-9_]){re.escape(info.binary)}(?![A-Za-z0-9_])", text):
            found.add(info.name)
    return found


def collective_from_filename(path: str) -> str | None:
    """The collective a file name spells (``…alltoall….txt``, ``all_reduce_perf.log``)."""
    stem = Path(path).name.lower()
    binaries = binaries_in_text(stem)
    if len(binaries) == 1:
        return binaries.pop()
    words = [w for w in re.split(r"[^a-z0-9]+", stem) if w]
    candidates = [a + b for a, b in zip(words, words[1:])] + words  # joined pairs first
    for word in candidates:
        for info in collectives().values():
            if word in info.aliases:
                return info.name
    return None


def busbw_factor(collective: str, ranks: int) -> float:
    """nccl-tests' busbw/algbw factor for ``collective`` on ``ranks`` ranks."""
    if ranks < 1:
        raise InputError("ranks", ranks, "an integer >= 1")
    return names_busbw_factor(primitive_named(check_collective(collective)), ranks)


def fallback_steps(collective: str, ranks: int) -> int:
    """Sequential message steps of the ring/pipelined schedule nccl-tests' busbw assumes."""
    kind = collectives()[check_collective(collective)].fallback_steps
    return {"2(N-1)": 2 * (ranks - 1), "N-1": ranks - 1, "1": 1}[kind]


def _factor(ranks: int, doubled: bool) -> float:
    return (2.0 if doubled else 1.0) * (ranks - 1) / ranks


def _ranks_from_bandwidths(pairs: Sequence[tuple[float, float]], doubled: bool) -> int | None:
    """N whose factor 2(N-1)/N (or (N-1)/N) the printed busbw/algbw pins down, else None.

    Read from the row with the largest algbw (the most printed digits); accepted only when
    the rounding of the printed figures cannot make it N-1 or N+1.
    """
    if not pairs:
        return None
    algbw, busbw = max(pairs)
    ratio = busbw / algbw
    spread = ratio * (PRINT_RESOLUTION_GBPS / algbw + PRINT_RESOLUTION_GBPS / busbw)
    top = 2.0 if doubled else 1.0
    if ratio >= top:
        return None
    ranks = round(top / (top - ratio))
    if ranks < 2 or abs(ratio - _factor(ranks, doubled)) > spread:
        return None
    neighbours = [_factor(n, doubled) for n in (ranks - 1, ranks + 1) if n >= 2]
    if any(abs(f - _factor(ranks, doubled)) <= 2 * spread for f in neighbours):
        return None
    return ranks


@frozen
class Inference:
    """What the columns say: candidate collectives (none where no column says), a rank count, and why."""

    collectives: tuple[str, ...]
    ranks: int | None
    reason: str


def infer_from_columns(redops: Sequence[str | None], roots: Sequence[int | None],
                       bandwidths_GBps: Sequence[tuple[float, float]]) -> Inference:
    """Candidate collectives and N from the redop/root columns and (algbw, busbw) in GB/s
    as printed (rows with a zero figure are ignored)."""
    pairs = [(a, b) for a, b in bandwidths_GBps if a > 0 and b > 0]
    algbw, busbw = max(pairs) if pairs else (0.0, 0.0)
    ratio = busbw / algbw if pairs else None
    redop = next((r for r in redops if r), None)
    root = next((r for r in roots if r is not None), None)
    if root is not None and root >= 0:
        name = "broadcast" if redop in (None, "none") else "reduce"
        return Inference((name,), None, f"root column is {root}")
    if redop == "none":
        ranks = _ranks_from_bandwidths(pairs, doubled=False)
        return Inference(("all-gather", "all-to-all"), ranks, "redop is none and root is -1")
    if redop is None and not pairs:  # a -J log with times alone: nothing says which
        return Inference((), None, "no redop, root or bandwidth column says which")
    if ratio is not None and ratio < 1 - RATIO_TOLERANCE:
        ranks = _ranks_from_bandwidths(pairs, doubled=False)
        return Inference(("reduce-scatter",), ranks, f"redop {redop} with busbw/algbw < 1")
    ranks = _ranks_from_bandwidths(pairs, doubled=True)
    if ratio is not None and abs(ratio - 1) <= RATIO_TOLERANCE:
        return Inference(("all-reduce", "send-recv"), 2,
                         f"redop {redop} with busbw = algbw (2-rank all-reduce or send-recv)")
    return Inference(("all-reduce",), ranks, f"redop {redop} with busbw/algbw > 1")
