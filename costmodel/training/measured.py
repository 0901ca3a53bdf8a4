"""Compute speed from a measured run: the MFU that reproduces a throughput the user measured.

Most users know how fast their model trains on one GPU (or one node) long before they know
its model FLOPs utilisation. ``--rate`` takes that throughput and solves for the MFU at which
the model's own step on the measured setup (same model, GPU, micro-batch, dtypes, optimizer
and loss terms; the measured GPU count with its collectives) runs at exactly that rate; the
target configuration is then predicted at that MFU, as if the user had passed ``--mfu``.

Only the matmul part of a step scales with the MFU (the optimizer step, the communication and a
data loader do not), so the MFU is not ``rate × FLOPs / peak``: it is found by bisection on
``log(MFU)`` over [``LOW_MFU``, 1], where the rate rises monotonically with the MFU. A measured
rate above what MFU 1 gives is answered at MFU 1 and flagged ``capped`` (the benchmark keeps it:
cuDNN's Winograd and FFT convolutions do fewer FLOPs than the count, so AlexNet on a P100 needs
more); ``dpcost`` refuses it, since a rate no GPU of the profile can reach is most often a wrong
dtype, GPU count or micro-batch.

This is the "compute speed from the published baseline" mode of benchmarks/dp_scaling.py, which
calls :func:`solve_mfu`: there, leave-one-source-out, it misses published scaling efficiency by
a median of 1.9 points inside a node and 1.8 across nodes (docs/validation.md).

    >>> round(solve_mfu(lambda mfu: 100.0 * mfu, 25.0).mfu, 12)
    0.25
    >>> solve_mfu(lambda mfu: 100.0 * mfu, 250.0)
    SolvedMfu(mfu=1.0, capped=True, ceiling_samples_per_s=100.0)
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from dpbase.errors import InputError
from dpbase.values import frozen

LOW_MFU = 1e-4  # 10^-4 of peak: below any measured training run
BISECTIONS = 50  # on log(MFU) over four decades: the bracket shrinks to ~1e-14 relative
RATE_ALLOWED = ("samples per second of the whole measured run, above 0: a number (samples/s), "
                "or with a unit: 1200/s, 1200 samples/s, 1200 img/s, 450 seq/s, 69070 tok/s")
_RATE = re.compile(r"^\s*([0-9][0-9_,]*\.?[0-9]*(?:[eE][-+]?[0-9]+)?)\s*"
                   r"(|/s|(?:samples?|img|images?|seq|sequences?|tok|tokens?)\s*/\s*s)\s*$", re.IGNORECASE)
MAX_RATE = 1e12
SOLVED_PREFIX = "solved from the measured rate"  # starts the mfu_source of an MFU found here


@frozen
class SolvedMfu:
    """The MFU found, whether the measured rate needed more than MFU 1 (answered at 1), and the
    rate MFU 1 gives."""

    mfu: float
    capped: bool
    ceiling_samples_per_s: float


@frozen(kw_only=True)
class MeasuredRate:
    """A throughput the user measured: ``samples_per_s`` of the whole run on ``gpus`` GPUs at
    ``micro_batch`` (None: the micro-batch of the configuration it calibrates)."""

    samples_per_s: float
    gpus: int = 1
    micro_batch: int | None = None


def parse_rate(text: str | float | int, seq_len: int | None, field: str = "rate") -> float:
    """Samples per second from ``1200``, ``1200/s``, ``1200 img/s`` or ``69070 tok/s`` (tokens are
    divided by ``seq_len``, which a token rate needs)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value, unit = float(text), ""
    else:
        match = _RATE.match(str(text))
        if not match:
            raise InputError(field, text, RATE_ALLOWED)
        value, unit = float(match.group(1).replace(",", "").replace("_", "")), match.group(2).lower()
    if not (math.isfinite(value) and 0 < value < MAX_RATE):
        raise InputError(field, text, RATE_ALLOWED)
    if unit.startswith("tok"):
        if not seq_len:
            raise InputError(field, text, "samples/s: a token rate needs the model's sequence length (--seq-len)")
        value /= seq_len
    return value


def solve_mfu(rate_of: Callable[[float], float], target_samples_per_s: float) -> SolvedMfu:
    """The MFU at which ``rate_of(mfu)`` (samples/s, rising with the MFU) equals the target."""
    low, high = LOW_MFU, 1.0
    ceiling = rate_of(high)
    if ceiling <= target_samples_per_s:
        return SolvedMfu(1.0, True, ceiling)
    for _ in range(BISECTIONS):
        middle = math.sqrt(low * high)
        low, high = (middle, high) if rate_of(middle) < target_samples_per_s else (low, middle)
    return SolvedMfu(math.sqrt(low * high), False, ceiling)


def is_solved(mfu_source: str) -> bool:
    """True for the ``mfu_source`` of an MFU solved from a measured rate."""
    return mfu_source.startswith(SOLVED_PREFIX)


def source_text(measured: MeasuredRate, micro_batch: int, solved: SolvedMfu) -> str:
    """``mfu_source`` of a configuration whose MFU was solved from ``measured``."""
    gpus = f"{measured.gpus} GPU{'s' if measured.gpus > 1 else ''}"
    text = (f"{SOLVED_PREFIX} {measured.samples_per_s:,.4g} samples/s on {gpus} at "
            f"micro-batch {micro_batch}")
    return text + (": the rate needs more than MFU 1, answered at 1" if solved.capped else "")
