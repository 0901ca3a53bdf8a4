"""Numbers from the registry's formulas: one scalar prediction, or a whole numpy grid at once.

Both paths call the same formula functions (see :mod:`costmodel.collectives.ops`). ``chunks='auto'``
picks the chunk count k that minimises the time: every pipelined formula has the form
steps = s0 + s1·k, wire = w0 + w1/k, reduce = r0 + r1/k, so k* = √((β·w1 + γ·r1)/(α·s1)),
rounded to the better neighbouring integer and kept within [1, n / MIN_CHUNK_BYTES]; a given k
above that limit is refused (:func:`check_chunks`).
A collective over one rank, or of 0 bytes, costs nothing (N = 1 or n = 0 → every term 0).
"""

from __future__ import annotations

import math
from typing import Any

from costmodel.collectives.bounds import entry_bound
from costmodel.collectives.entry import Entry, ParamsView, Terms
from costmodel.collectives.ops import SCALAR, vector_ops
from costmodel.collectives.prediction import Prediction
from costmodel.collectives.registry import get
from costmodel.names import busbw_factor
from dpbase.errors import InputError, NotApplicableError
from dpbase.limits import MAX_RANKS, MAX_SIZE_BYTES, MAX_TIME_S, MAX_BANDWIDTH_Bps, MIN_BANDWIDTH_Bps
from dpbase.units import format_size

MIN_CHUNK_BYTES = 4  # a pipeline chunk holds at least one 4-byte element


def _terms(entry: Entry, N: Any, n: Any, params: dict[str, Any], o: Any) -> Terms:
    return entry.terms(N, n, ParamsView(params), o)


def split_seconds(t: Terms, alpha: Any, beta: Any, gamma: Any, alpha_i: Any, beta_i: Any) -> tuple[Any, Any, Any]:
    """(latency, bandwidth, reduction) seconds of a formula's terms: the one α/β/γ split.

    latency = α·steps + α_inter·steps_inter, bandwidth = β·wire + β_inter·wire_inter,
    reduction = γ·reduce; floats or numpy arrays alike.
    """
    return (alpha * t.steps + alpha_i * t.steps_inter, beta * t.wire + beta_i * t.wire_inter,
            gamma * t.reduce)


def _time(t: Terms, alpha: Any, beta: Any, gamma: Any, alpha_i: Any, beta_i: Any) -> Any:
    latency, bandwidth, reduction = split_seconds(t, alpha, beta, gamma, alpha_i, beta_i)
    return latency + bandwidth + reduction


def _best_chunks(entry: Entry, N: Any, n: Any, params: dict[str, Any], rates: tuple, o: Any) -> Any:
    """k minimising the time (see module docstring); works on floats and arrays."""
    alpha, beta, gamma, alpha_i, beta_i = rates
    one = _terms(entry, N, n, {**params, "chunks": 1}, o)
    two = _terms(entry, N, n, {**params, "chunks": 2}, o)
    s1 = (two.steps - one.steps) * alpha + (two.steps_inter - one.steps_inter) * alpha_i
    w1 = 2 * ((one.wire - two.wire) * beta + (one.wire_inter - two.wire_inter) * beta_i
              + (one.reduce - two.reduce) * gamma)
    k_max = max_chunks(n, o)
    if o is SCALAR:
        ratio = w1 / s1 if s1 > 0 and w1 / k_max**2 < s1 else k_max**2
        raw = min(math.sqrt(ratio), k_max) if w1 > 0 else 1
    else:
        np = o.np
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            raw = np.minimum(np.where(w1 > 0, np.where(s1 > 0, np.sqrt(w1 / s1), np.inf), 1.0), k_max)
    low = o.min(o.max(o.floor(raw), 1), k_max)
    high = o.min(low + 1, k_max)

    def cost(k: Any) -> Any:
        return _time(_terms(entry, N, n, {**params, "chunks": k}, o), *rates)

    return o.where(cost(high) < cost(low), high, low)


def check_inputs(ranks: Any, size_bytes: Any, rates: dict[str, Any]) -> None:
    """Reject N < 1, non-integer N, negative or non-finite sizes and rates (scalars only)."""
    if isinstance(ranks, bool) or not isinstance(ranks, (int, float)) or not 1 <= ranks <= MAX_RANKS \
            or not float(ranks).is_integer():
        raise InputError("ranks", ranks, f"an integer from 1 to {MAX_RANKS}")
    if not math.isfinite(size_bytes) or not 0 <= size_bytes <= MAX_SIZE_BYTES:
        raise InputError("size", size_bytes, "a finite number of bytes from 0 to 2**70")
    for name, value in rates.items():
        if not math.isfinite(value) or value < 0:
            raise InputError(name, value, "a finite number >= 0")


def max_chunks(size_bytes: Any, o: Any = SCALAR) -> Any:
    """The most pipeline chunks a ``size_bytes`` message splits into: each holds at least one
    :data:`MIN_CHUNK_BYTES` element (and a message of none still runs in one)."""
    return o.max(1, o.floor(size_bytes / MIN_CHUNK_BYTES))


def check_chunks(entry: Entry, size_bytes: float, params: dict[str, Any]) -> None:
    """A given chunk count the message cannot split into is refused (NotApplicableError: a sweep
    or ranking leaves that size out), never answered with chunks of under one element."""
    chunks = params.get("chunks")
    if not entry.pipelined or chunks in (None, "auto") or getattr(chunks, "ndim", 0) \
            or getattr(chunks, "free_symbols", None):
        return
    most = int(max_chunks(float(size_bytes)))
    if int(chunks) > most:
        raise NotApplicableError("chunks", int(chunks), f"at most {most} for a {format_size(size_bytes)} message "
                                                        f"(a chunk holds at least one {MIN_CHUNK_BYTES}-byte element)")


def whole_steps(steps: Any) -> Any:
    """A step count as the integer it is (a hierarchy's N/G nodes made 16.0 where every other
    algorithm said 16)."""
    return int(steps) if isinstance(steps, float) and steps.is_integer() else steps


def check_answer(field: str, seconds: Any, inputs: dict[str, Any]) -> None:
    """Final guard: a time that is not a finite number >= 0 is never returned as an answer."""
    if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds >= 0):
        shown = ", ".join(f"{name}={value:g}" for name, value in inputs.items())
        raise InputError(field, seconds, f"a finite time >= 0; these inputs ({shown}) are outside the range "
                                         "the model can answer (a bandwidth near 0, or a huge size, α or γ)")


def resolve(entry: Entry, ranks: int, given: dict[str, Any]) -> dict[str, Any]:
    """Parameters with defaults, validated for this entry."""
    params = _values(entry, given)
    if entry.validate is not None:
        try:
            entry.validate(int(ranks), params)
        except NotApplicableError as error:
            if error.field in params and error.field not in given:  # a default the user never typed
                raise NotApplicableError(error.field, error.value, f"{error.allowed}, given: its default "
                                                                   f"{error.value} does not fit") from None
            raise
    return params


def _values(entry: Entry, given: dict[str, Any]) -> dict[str, Any]:
    """The parameters with defaults, each of its kind (:meth:`Entry.check_params`), chunks whole."""
    params = entry.resolve_params(given)
    chunks = params.get("chunks")
    if chunks is not None and chunks != "auto":
        params["chunks"] = int(chunks)
    return params


def evaluate_terms(entry: Entry, N: Any, n: Any, params: dict[str, Any], rates: tuple, o: Any) -> tuple:
    """(terms, time, chunks) with chunks resolved and the rule for nothing to move applied: one
    rank, or 0 bytes (every stack discards an empty collective before it sends a message: NCCL's
    src/enqueue.cc, "Empty collectives can be discarded"), costs nothing."""
    if entry.pipelined and params.get("chunks") == "auto":
        params = {**params, "chunks": _best_chunks(entry, N, n, params, rates, o)}
    raw = _terms(entry, N, n, params, o)
    if o is SCALAR:
        terms = raw if N > 1 and n > 0 else Terms(*(0 * value for value in raw))
    else:
        several = ((N > 1) & (n > 0)).astype(float)
        terms = Terms(*(value if isinstance(value, int) and value == 0 else value * several for value in raw))
    return terms, _time(terms, *rates), params.get("chunks")


def predict_entry(entry: Entry, ranks: int, size_bytes: float, alpha_s: float, bandwidth_Bps: float,
                  gamma_s_per_byte: float = 0.0, alpha_inter_s: float | None = None,
                  bandwidth_inter_Bps: float | None = None, **given: Any) -> Prediction:
    """Scalar prediction: time, its α/β/γ parts, traffic and the lower bound."""
    rates_in = {"alpha": alpha_s, "bandwidth": bandwidth_Bps, "gamma": gamma_s_per_byte}
    if alpha_inter_s is not None:
        rates_in["alpha_inter"] = alpha_inter_s
    if bandwidth_inter_Bps is not None:
        rates_in["bandwidth_inter"] = bandwidth_inter_Bps
    check_inputs(ranks, size_bytes, rates_in)
    if bandwidth_Bps <= 0:
        raise InputError("bandwidth", bandwidth_Bps, "a bandwidth > 0")
    beta = 1.0 / bandwidth_Bps
    alpha_i = alpha_s if alpha_inter_s is None else alpha_inter_s
    beta_i = beta if bandwidth_inter_Bps is None else 1.0 / bandwidth_inter_Bps if bandwidth_inter_Bps > 0 else math.inf
    N, n = int(ranks), float(size_bytes)
    params = resolve(entry, N, given)
    check_chunks(entry, n, params)
    rates = (alpha_s, beta, gamma_s_per_byte, alpha_i, beta_i)
    terms, time_s, chunks = evaluate_terms(entry, N, n, params, rates, SCALAR)
    if chunks is not None:
        params["chunks"] = int(chunks)
    bound = entry_bound(entry, N, n, params, SCALAR)
    bound_s = 0.0 if N == 1 or n == 0 else (min(alpha_s, alpha_i) * bound.steps + min(beta, beta_i) * bound.wire
                                             + gamma_s_per_byte * bound.reduce)
    check_answer("time", time_s, rates_in)
    # one rank moves nothing: no bandwidth (None, as the Prediction documents; inf and inf · 0 were
    # not JSON)
    algbw = None if N == 1 or n == 0 else n / time_s if time_s > 0 else math.inf
    latency_s, bandwidth_s, reduction_s = split_seconds(terms, *rates)
    return Prediction(
        primitive=entry.primitive.value, algorithm=entry.algorithm.value, ranks=N, size_bytes=n, time_s=time_s,
        latency_s=latency_s, bandwidth_s=bandwidth_s, reduction_s=reduction_s,
        steps=whole_steps(terms.steps + terms.steps_inter), bytes_sent_max=terms.sent_max,
        bytes_received_max=terms.recv_max, bytes_total=terms.total, bytes_aux_max=terms.aux_max,
        algbw_Bps=algbw, busbw_Bps=None if algbw is None else algbw * busbw_factor(entry.primitive, N),
        lower_bound_s=bound_s, alpha_s=alpha_s, bandwidth_Bps=bandwidth_Bps,
        gamma_s_per_byte=gamma_s_per_byte, params=params,
        note=UNBOUNDED_CHUNKS_NOTE if (chunks is not None and given.get("chunks") in (None, "auto")
                                       and params.get("pipelined", True) and N > 1 and max_chunks(n) > 1
                                       and alpha_s == alpha_i == 0 and int(chunks) == int(max_chunks(n))) else None,
    )


# With no cost per message, the chunk count that minimises a pipeline's time has no finite optimum:
# the split stops at one element per chunk, and its step count (8e9 for 4 GB) is that split's.
UNBOUNDED_CHUNKS_NOTE = ("α = 0: no cost per message, so the pipeline splits into as many chunks as the message "
                         f"holds ({MIN_CHUNK_BYTES}-byte elements); its time is the limit of ever more chunks, "
                         "and the steps count that split (give --chunks, or an α, for a real pipeline's)")


def evaluate_grid(primitive: str, algorithm: str, ranks: Any, size_bytes: Any, alpha_s: Any,
                  bandwidth_Bps: Any, gamma_s_per_byte: Any = 0.0, alpha_inter_s: Any = None,
                  bandwidth_inter_Bps: Any = None, **given: Any) -> dict[str, Any]:
    """Vectorised: numpy arrays (broadcast together) in, arrays of time and traffic out.

    Every input is checked as :func:`predict_entry` checks its scalars (``alpha_s`` and
    ``bandwidth_Bps`` are required; times up to 1e6 s, bandwidths from 1 B/s to 1e18 B/s), and
    all of them, the inter-node rates and γ included, broadcast together. ``algbw_Bps`` and
    ``busbw_Bps`` are NaN where nothing moves (one rank, or 0 bytes).

    >>> import numpy as np
    >>> out = evaluate_grid("all-reduce", "ring", np.array([2, 8]), 4e9, 0.0, 1e9)
    >>> out["time_s"].tolist()
    [4.0, 7.0]
    """
    import numpy as np

    entry = get(primitive, algorithm)
    o = vector_ops()
    _check_grid(np, ranks, size_bytes, alpha_s, bandwidth_Bps, gamma_s_per_byte, alpha_inter_s, bandwidth_inter_Bps)
    # options the formula does not read are refused, as predict refuses them (they were dropped: API
    # audit, 2026-12-01)
    for name, value in (("alpha_inter_s", alpha_inter_s), ("bandwidth_inter_Bps", bandwidth_inter_Bps)):
        if value is not None and not entry.hierarchical:
            raise InputError(name, value, f"only with a hierarchical algorithm ({entry.algorithm.value} runs on one link)")
    # a γ is a hardware constant here, as predict_entry takes it: its term is 0 where nothing reduces
    N = np.asarray(ranks, dtype=float)
    n = np.asarray(size_bytes, dtype=float)
    alpha = np.asarray(alpha_s, dtype=float)
    beta = 1.0 / np.asarray(bandwidth_Bps, dtype=float)
    alpha_i = alpha if alpha_inter_s is None else np.asarray(alpha_inter_s, dtype=float)
    beta_i = beta if bandwidth_inter_Bps is None else 1.0 / np.asarray(bandwidth_inter_Bps, dtype=float)
    params = _values(entry, given)
    # every rank count the grid holds, as predict checks its one (parameters given as arrays, the
    # planner's layouts, are checked by kind above and their layouts by the planner)
    if entry.validate is not None and not any(getattr(value, "ndim", 0) for value in params.values()):
        for count in np.unique(N):
            entry.validate(int(count), params)
    if n.size:  # the smallest size sets the most chunks a given count may be
        check_chunks(entry, float(n.min()), params)
    gamma = np.asarray(gamma_s_per_byte, dtype=float)
    rates = (alpha, beta, gamma, alpha_i, beta_i)
    try:
        shape = np.broadcast(N, n, alpha, beta, gamma, alpha_i, beta_i).shape
    except ValueError:
        raise InputError("shapes", ", ".join(f"{name} {np.shape(value)}" for name, value in (
            ("ranks", N), ("size_bytes", n), ("alpha_s", alpha), ("bandwidth_Bps", beta), ("gamma_s_per_byte", gamma),
            ("alpha_inter_s", alpha_i), ("bandwidth_inter_Bps", beta_i))), "arrays that broadcast together") from None
    terms, time_s, chunks = evaluate_terms(entry, N, n, params, rates, o)
    if np.shape(time_s) != shape:  # a writable array of the grid's shape, as it always was
        time_s = np.array(np.broadcast_to(time_s, shape))
    out = {name: np.broadcast_to(value, shape) for name, value in terms._asdict().items()}
    out["time_s"] = time_s
    parts = split_seconds(terms, *rates)
    for name, value in zip(("latency_s", "bandwidth_s", "reduction_s"), parts, strict=True):
        out[name] = np.broadcast_to(value, shape)
    bound = entry_bound(entry, N, n, params, o)
    out["lower_bound_s"] = np.broadcast_to(np.where((N > 1) & (n > 0), np.minimum(alpha, alpha_i) * bound.steps
                                                    + np.minimum(beta, beta_i) * bound.wire
                                                    + rates[2] * bound.reduce, 0.0), shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        moves = (N > 1) & (n > 0)
        out["algbw_Bps"] = np.where(moves, np.where(time_s > 0, n / time_s, np.inf), np.nan)
        out["busbw_Bps"] = np.where(moves, out["algbw_Bps"] * busbw_factor(entry.primitive, np.maximum(N, 2)), np.nan)
    if chunks is not None:
        out["chunks"] = chunks
    return out


def _check_grid(np: Any, ranks: Any, size_bytes: Any, alpha_s: Any, bandwidth_Bps: Any, gamma: Any,
                alpha_inter_s: Any, bandwidth_inter_Bps: Any) -> None:
    """evaluate_grid's inputs, element by element: what check_inputs asks of scalars."""
    def array(name: str, value: Any) -> Any:
        try:
            out = np.asarray(value, dtype=float)
        except (TypeError, ValueError, OverflowError):
            raise InputError(name, value, "numbers (a scalar or an array)") from None
        if np.asarray(value).dtype == bool:
            raise InputError(name, value, "numbers, not booleans")
        return out

    def refuse(name: str, values: Any, bad: Any, allowed: str) -> None:
        if np.any(bad):
            raise InputError(name, np.atleast_1d(values)[np.atleast_1d(bad)][0].item(), allowed)

    _refuse_text("ranks", ranks)
    _refuse_text("size_bytes", size_bytes)
    N = array("ranks", ranks)
    with np.errstate(invalid="ignore"):
        refuse("ranks", N, ~np.isfinite(N) | (N < 1) | (N > MAX_RANKS) | (N != np.floor(N)),
               f"integers from 1 to {MAX_RANKS}")
        n = array("size_bytes", size_bytes)
        refuse("size_bytes", n, ~np.isfinite(n) | (n < 0) | (n > MAX_SIZE_BYTES), "finite sizes from 0 to 2**70 bytes")
        # γ has a default (0), not None: None was NaN in every answer (API audit, 2026-11-30)
        for name, value in (("alpha_s", alpha_s), ("bandwidth_Bps", bandwidth_Bps), ("gamma_s_per_byte", gamma)):
            if value is None:
                raise InputError(name, None, "a number or an array (seconds; bytes per second)")
        for name, value in (("alpha_s", alpha_s), ("gamma_s_per_byte", gamma), ("alpha_inter_s", alpha_inter_s)):
            if value is not None:
                _refuse_text(name, value)
                v = array(name, value)
                refuse(name, v, ~np.isfinite(v) | (v < 0) | (v > MAX_TIME_S), f"numbers from 0 to {MAX_TIME_S:g}")
        for name, value in (("bandwidth_Bps", bandwidth_Bps), ("bandwidth_inter_Bps", bandwidth_inter_Bps)):
            if value is not None:
                _refuse_text(name, value)
                v = array(name, value)
                refuse(name, v, ~np.isfinite(v) | (v < MIN_BANDWIDTH_Bps) | (v > MAX_BANDWIDTH_Bps),
                       f"bandwidths from {MIN_BANDWIDTH_Bps:g} to {MAX_BANDWIDTH_Bps:g} B/s")


def _refuse_text(name: str, value: Any) -> None:
    """Text is not a number here: ``"5"`` read as 5 s where predict asks for a unit ("5us")."""
    if isinstance(value, (str, bytes)):
        raise InputError(name, value, "a number in SI units (seconds, bytes per second), not text: "
                                      "costmodel.predict parses units")
