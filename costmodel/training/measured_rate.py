"""Compute speed from a measured run: the MFU that reproduces a throughput the user measured.

Most users know how fast their model trains on one GPU (or one node) long before they know
its model FLOPs utilisation. ``--rate`` takes that throughput and solves for the MFU at which
the model's own step on the measured setup runs at exactly that rate
(:func:`costmodel.training.oncluster.measured_mfu`); the target configuration is then predicted
at that MFU. The MFU found is *calibrated* (``TrainingConfig.mfu_calibration``): it replaces
the default MFU, the base speed before the model's micro-batch terms (the GEMM roofline, a
CNN's fixed time per micro-batch), which still apply, where a ``--mfu`` is the speed itself at
any micro-batch. The two numbers are the same only where those terms do nothing (a transformer
micro-batch large enough to feed the tensor cores, a CNN at the micro-batch its default MFU was
measured at).

Only the matmul part of a step scales with the MFU (the optimizer step, the communication and a
data loader do not), so the MFU is not ``rate × FLOPs / peak``: it is found by bisection on
``log(MFU)`` over [``LOW_MFU``, the model's highest], where the rate rises monotonically with the
MFU (flat only where a data loader binds). The highest is 1 but for a CNN, whose nominal FLOPs
can outrun the peak (cuDNN's Winograd convolutions do up to 4× fewer multiplies than the count:
VGG16 trains at 1.47× the peak of a V100 in FP32), up to its Winograd ceiling (ResNet-50 1.38,
VGG16 3.0: :func:`costmodel.training.workloads.max_mfu`).
A rate above what the highest MFU gives is flagged ``capped`` and one below what ``LOW_MFU``
gives ``floored``; ``dpcost`` refuses both, naming the limit, since a rate out of that range is
most often a wrong dtype, GPU count or micro-batch.

    >>> round(solve_mfu(lambda mfu: 100.0 * mfu, 25.0, highest_mfu=1.0).mfu, 12)
    0.25
    >>> solved = solve_mfu(lambda mfu: 100.0 * mfu, 250.0, highest_mfu=1.0)
    >>> solved.mfu, solved.capped, solved.floored
    (1.0, True, False)
    >>> round(solve_mfu(lambda mfu: 100.0 * mfu, 250.0, highest_mfu=4.0).mfu, 12)
    2.5
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable

from dpbase.errors import InputError, is_real
from dpbase.values import frozen, replace

LOW_MFU = 1e-4  # 10^-4 of peak: below any measured training run
BISECTIONS = 50  # on log(MFU) over four decades: the bracket shrinks to ~1e-14 relative
MAX_RATE = 1e12
RATE_ALLOWED = (f"samples per second of the whole measured run, above 0 and below {MAX_RATE:g}: a number (samples/s), "
                "or with a unit: 1200/s, 1,200 samples/s, 1200 img/s, 450 seq/s, 69070 tok/s")
# A number: digits with optional thousands commas (1,200) or underscores, a fraction, an exponent.
_NUMBER = r"(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+(?:_[0-9]+)*)(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?"
_RATE = rf"^\s*({_NUMBER})\s*(|/\s*s|(?:samples?|img|images?|seq|sequences?|tok|tokens?)\s*/\s*s)\s*$"


@functools.cache
def _rate_pattern() -> re.Pattern:
    return re.compile(_RATE, re.IGNORECASE)  # compiled on the first --rate, not on every answer's import


@frozen
class SolvedMfu:
    """The MFU found for a target rate, and the rates the highest MFU (``highest_mfu``: 1, a CNN's
    Winograd ceiling, :func:`~costmodel.training.workloads.max_mfu`) and ``LOW_MFU`` give: a target
    beyond the first is ``capped`` (answered at the highest), one below the second ``floored``
    (at ``LOW_MFU``)."""

    mfu: float
    target_samples_per_s: float
    ceiling_samples_per_s: float
    floor_samples_per_s: float
    highest_mfu: float

    @property
    def capped(self) -> bool:
        return self.ceiling_samples_per_s <= self.target_samples_per_s

    @property
    def floored(self) -> bool:
        return not self.capped and self.floor_samples_per_s >= self.target_samples_per_s




def parse_rate(text: str | float | int, tokens_per_sample: int, field: str = "rate",
               kind: str | None = None) -> float:
    """Samples per second from ``1200``, ``1,200/s``, ``1200 img/s`` or ``69070 tok/s`` (a token
    rate is divided by ``tokens_per_sample``, 0 for models without a sequence). With the model's
    ``kind``, an image rate needs a model of images (not one of
    :data:`~costmodel.training.workloads.TOKEN_RULE_KINDS`) and a sequence rate
    one of sequences."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value, unit = float(text), ""
    else:
        match = _rate_pattern().match(str(text))
        if not match:
            raise InputError(field, text, RATE_ALLOWED)
        value, unit = float(match.group(1).replace(",", "").replace("_", "")), match.group(2).lower()
    if not _in_range(value):  # check_rate's bounds, the error naming the rate as typed
        raise InputError(field, text, RATE_ALLOWED)
    if unit.startswith("tok"):
        if not tokens_per_sample:
            raise InputError(field, text, "samples/s: a token rate needs a model with a sequence (this one has none)")
        value /= tokens_per_sample
    elif kind is not None and unit.startswith(("im", "seq")) and unit.startswith("im") == _sequences(kind):
        # the unit names what a sample is: a sequence for the token-rule kinds, else an image
        # (a CNN's; a ViT's tokens are its patches)
        images = not _sequences(kind)
        wanted = "samples/s or img/s" if images else "samples/s, seq/s or tok/s"
        raise InputError(field, text, f"{wanted}: a {kind} model's samples are {'images' if images else 'sequences'}")
    return value


def _sequences(kind: str) -> bool:
    """Whether a ``kind``'s sample is a sequence (the token-rule kinds), not an image."""
    from costmodel.training.workloads import TOKEN_RULE_KINDS

    return kind in TOKEN_RULE_KINDS


MEASURED_SOURCE = "solved from a measured rate"  # mfu_calibration when the caller names none


def reachable(solved: SolvedMfu, got: object = None, context: str = "", hint: str = "") -> SolvedMfu:
    """``solved``, unless its target lies outside what its highest MFU and ``LOW_MFU`` give: then an
    InputError on ``rate`` naming that limit (``got``: what the user typed, default the target;
    ``context``: what the limit is of, e.g. the measured run; ``hint``: what to check)."""
    got = solved.target_samples_per_s if got is None else got
    advice = f" ({hint})" if hint else ""
    if solved.capped:
        raise InputError("rate", got, f"at most {rate_text(solved.ceiling_samples_per_s)} samples/s{context} "
                         f"at MFU {solved.highest_mfu:.3g}{advice}")
    if solved.floored:
        raise InputError("rate", got, f"at least {rate_text(solved.floor_samples_per_s)} samples/s{context} "
                         f"at MFU {LOW_MFU:g}{advice}")
    return solved


def rate_text(samples_per_s: float) -> str:
    """A rate as the errors and sources print it: 1,200 or 0.509."""
    return f"{samples_per_s:,.0f}" if samples_per_s >= 100 else f"{samples_per_s:.3g}"


def calibrated(config, solved: SolvedMfu, source: str = MEASURED_SOURCE):
    """``config`` (a TrainingConfig) at the solved MFU, calibrated: the micro-batch terms apply.
    A solve that hit a limit is refused (:func:`reachable`)."""
    from costmodel.training.iteration import TrainingConfig

    if not isinstance(solved, SolvedMfu):  # None was an AttributeError
        raise InputError("solved", type(solved).__name__, "a SolvedMfu (costmodel.measured_mfu's answer)")
    if not isinstance(config, TrainingConfig):
        raise InputError("config", type(config).__name__, "a TrainingConfig (the configuration to predict)")
    reachable(solved, hint="give a measured rate the model can reach")
    return replace(config, mfu=solved.mfu, mfu_calibration=source)


def _in_range(samples_per_s: float) -> bool:
    """Finite and in (0, MAX_RATE)."""
    return math.isfinite(samples_per_s) and 0 < samples_per_s < MAX_RATE


def check_rate(samples_per_s: float, field: str = "rate") -> float:
    """A rate in samples/s, validated (:func:`_in_range`)."""
    if not is_real(samples_per_s) or not _in_range(float(samples_per_s)):  # numpy's scalars too
        raise InputError(field, samples_per_s, f"samples per second, above 0 and below {MAX_RATE:g}")
    return float(samples_per_s)


def solve_mfu(rate_of: Callable[[float], float], target_samples_per_s: float, *,
              highest_mfu: float) -> SolvedMfu:
    """The MFU in [``LOW_MFU``, ``highest_mfu``] at which ``rate_of(mfu)`` (samples/s, rising
    with the MFU) equals the target. ``highest_mfu`` has no default: it is the model's
    (:func:`~costmodel.training.workloads.max_mfu`), and a default of 1 silently capped CNNs."""
    low, high = LOW_MFU, highest_mfu
    ceiling, floor = rate_of(high), rate_of(low)
    limits = dict(target_samples_per_s=target_samples_per_s, ceiling_samples_per_s=ceiling,
                  floor_samples_per_s=floor, highest_mfu=highest_mfu)
    if ceiling <= target_samples_per_s:
        return SolvedMfu(mfu=highest_mfu, **limits)
    if floor >= target_samples_per_s:
        return SolvedMfu(mfu=LOW_MFU, **limits)
    for _ in range(BISECTIONS):
        middle = math.sqrt(low * high)
        low, high = (middle, high) if rate_of(middle) < target_samples_per_s else (low, middle)
    return SolvedMfu(mfu=math.sqrt(low * high), **limits)
