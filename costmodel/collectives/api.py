"""The scalar Python API: predict one collective, compare algorithms, read coefficients."""

from __future__ import annotations

from typing import Any

from costmodel.apiwords import UnknownKeywordError, speaks_keywords
from costmodel.collectives.entry import ParamsView
from costmodel.collectives.evaluate import check_inputs, predict_entry, resolve, whole_steps
from costmodel.collectives.ops import SCALAR
from costmodel.collectives.prediction import Prediction
from costmodel.collectives.registry import entries, get, param_names
from costmodel.names import REDUCING_PRIMITIVES, Primitive, check_reduction_time, primitive_named
from dpbase.values import frozen


def predict(primitive: str | Primitive, algorithm: str, *, ranks: int, size_bytes: float,
            alpha_s: float, bandwidth_Bps: float, gamma_s_per_byte: float = 0.0,
            alpha_inter_s: float | None = None, bandwidth_inter_Bps: float | None = None,
            **params: Any) -> Prediction:
    """Predict one collective under the α-β-γ model.

    >>> p = predict("all-reduce", "ring", ranks=8, size_bytes=4e9, alpha_s=0, bandwidth_Bps=1e9)
    >>> p.bytes_sent_max / 1e9, p.steps
    (7.0, 14)
    """
    entry = get(primitive, algorithm)
    return predict_entry(entry, ranks, size_bytes, alpha_s, bandwidth_Bps, gamma_s_per_byte,
                         alpha_inter_s, bandwidth_inter_Bps, **params)


@speaks_keywords({"alpha": "alpha_s", "bandwidth": "bandwidth_Bps", "gamma": "gamma_s_per_byte"})
def compare(primitive: str | Primitive, size: Any = None, *, ranks: int, size_bytes: Any = None, alpha_s: float,
            bandwidth_Bps: float, gamma_s_per_byte: float = 0.0, include_in_network: bool = False,
            **shared: Any) -> list[Prediction]:
    """Every algorithm of the primitive, fastest first (parameters each one accepts are passed).
    The size comes second, as :func:`costmodel.predict` takes it, or as ``size_bytes=``
    (``compare("all-reduce", "1GB", …)`` was a TypeError).

    In-network reduction needs a switch that reduces, which a bare link does not have: its
    textbook formula is ranked only with ``include_in_network=True``, as ``dpcost compare`` and
    ``predict``'s ``auto`` leave it out on a link (it ranked first by default, where ``auto`` picked
    another; review, 2026-11-29).

    Sizes, times and bandwidths are numbers in base units or text with a unit ("1GB", "5us",
    "25GB/s"), as :func:`costmodel.predict` takes them; a keyword no algorithm of the primitive
    takes is refused, not dropped."""
    from dpbase.errors import InputError, check_switch, whole_count
    from dpbase.units import parse_bandwidth, parse_message_size, parse_time

    prim = primitive_named(primitive)
    ranks = whole_count("ranks", ranks)
    if size is not None and size_bytes is not None:  # two sizes: neither may win silently
        raise InputError("size_bytes", size_bytes, f"left out when size is given (size={size!r})")
    if size is None and size_bytes is None:
        raise InputError("size_bytes", None, "a message size (bytes, or text with a unit such as 1GB), given "
                                             "second or as size_bytes=")
    field = "size" if size is not None else "size_bytes"
    size_bytes = parse_message_size(size if size is not None else size_bytes, field)
    alpha_s = parse_time(alpha_s, "alpha_s")
    bandwidth_Bps = parse_bandwidth(bandwidth_Bps, "bandwidth_Bps")
    gamma_s_per_byte = parse_time(gamma_s_per_byte, "gamma_s_per_byte")
    check_reduction_time(prim, gamma_s_per_byte, "gamma_s_per_byte")  # taken by no algorithm: refused
    check_switch("include_in_network", include_in_network)
    known = sorted(set().union(*param_names(prim).values()))
    unknown = sorted(set(shared) - set(known))
    if unknown:
        raise UnknownKeywordError(unknown[0], shared[unknown[0]], f"a parameter of an algorithm of {prim.value}: "
                                                         f"{', '.join(known) or 'they take none'}")
    results = []
    for entry in entries():
        if entry.primitive is not prim or (entry.in_network and not include_in_network):
            continue
        accepted = entry.taken(shared)
        if entry.hierarchical and "gpus_per_node" not in accepted:
            continue
        results.append(predict(prim, entry.algorithm, ranks=ranks, size_bytes=size_bytes, alpha_s=alpha_s,
                               bandwidth_Bps=bandwidth_Bps, gamma_s_per_byte=gamma_s_per_byte, **accepted))
    return sorted(results, key=lambda p: (p.time_s, p.algorithm))


@frozen
class Coefficients:
    """time = steps·α + beta_bytes_per_byte·n·β + gamma_bytes_per_byte·n·γ (flat, fixed chunks)."""

    steps: float
    beta_bytes_per_byte: float
    gamma_bytes_per_byte: float


def coefficients(primitive: str | Primitive, algorithm: str, ranks: int, **params: Any) -> Coefficients:
    """The α count and the per-byte β and γ factors of one algorithm on N ranks.

    Pipelined algorithms use ``chunks`` (default 1) since their auto chunk count depends on n.

    >>> coefficients("all-reduce", "ring", 8)
    Coefficients(steps=14, beta_bytes_per_byte=1.75, gamma_bytes_per_byte=0.875)
    """
    entry = get(primitive, algorithm)
    if not isinstance(ranks, bool) and hasattr(ranks, "__index__"):  # numpy's integers, as predict takes them
        ranks = ranks.__index__()
    check_inputs(ranks, 1.0, {})
    if entry.pipelined and params.get("chunks", "auto") == "auto":
        params = {**params, "chunks": 1}
    resolved = resolve(entry, ranks, params)
    if ranks == 1:
        return Coefficients(0, 0.0, 0.0)
    t = entry.terms(int(ranks), 1.0, ParamsView(resolved), SCALAR)
    return Coefficients(whole_steps(t.steps + t.steps_inter), float(t.wire + t.wire_inter), float(t.reduce))


def run_schedule(primitive: str | Primitive, algorithm: str, inputs: Any, *, op: str = "sum", **params: Any) -> Any:
    """Run an algorithm's schedule step by step on ``inputs``, one list of numbers per rank (the
    whole buffer; for gather and all-gather, the rank's own block): every rank's output, what the
    primitive should give, and the steps and elements the run moved (the numbers the formulas
    count). ``op`` is the reduction of a reduce, all-reduce or reduce-scatter (seed 002): sum (the
    default), prod, max, min, lor or land; the cost does not depend on it. The seeds' worked
    examples with their values:

    >>> out = run_schedule("reduce-scatter", "ring", [[0, 1, 2, 3]] * 4)
    >>> out.outputs, out.correct
    (((0.0,), (4.0,), (8.0,), (12.0,)), True)
    >>> run_schedule("all-reduce", "ring", [[1, 5], [4, 2]], op="max").outputs
    ((4.0, 5.0), (4.0, 5.0))
    """
    import numpy as np

    from costmodel.collectives.schedules import OPS, SCHEDULES, run, whole_blocks
    from dpbase.errors import InputError

    entry = get(primitive, algorithm)
    if (entry.primitive, entry.algorithm) not in SCHEDULES:  # every registry entry has one (a test checks)
        raise InputError("algorithm", algorithm, "an algorithm with an executable schedule")
    if not isinstance(op, str) or op not in OPS:
        raise InputError("op", op, f"{', '.join(list(OPS)[:-1])} or {list(OPS)[-1]} (the reduction)")
    if op != "sum" and entry.primitive not in REDUCING_PRIMITIVES:
        raise InputError("op", op, f"sum, its default: {entry.primitive.value} reduces nothing")
    try:
        arrays = [np.asarray(values, dtype=float).reshape(-1) for values in inputs]
    except (TypeError, ValueError):
        raise InputError("inputs", inputs, "one list of numbers per rank") from None
    if not arrays or any(a.size == 0 for a in arrays) or len({a.size for a in arrays}) != 1:
        raise InputError("inputs", inputs, "one non-empty list of numbers per rank, all of one length")
    if not all(np.isfinite(a).all() for a in arrays):  # NaN was refused as a buffer the schedule could not cut
        raise InputError("inputs", inputs, "finite numbers (no NaN or infinity)")
    ranks = len(arrays)
    resolved = resolve(entry, ranks, params)
    if entry.pipelined and resolved.get("chunks") in (None, "auto"):  # the schedule runs whole chunks
        resolved["chunks"] = 1
    # a schedule cuts the buffer into its blocks, halves and chunks; a length it cannot cut evenly
    # is refused, naming the length every schedule cuts (a ring's 5 elements on 5 ranks run)
    try:
        with np.errstate(over="raise", invalid="raise"):  # a sum past float's range was inf, "correct" (audit)
            found = run(entry.primitive, entry.algorithm, arrays, resolved, op)
    except FloatingPointError:
        raise InputError("inputs", f"{len(arrays)} lists reaching {max(float(np.abs(a).max()) for a in arrays):g}",
                         f"numbers whose {op} stays within float range (up to {np.finfo(float).max:.3g})") from None
    except (ValueError, IndexError, ZeroDivisionError):
        found = None
    if found is None or not found.correct:
        whole = whole_blocks(ranks, resolved)
        blocks = ranks if entry.primitive in (Primitive.ALL_GATHER, Primitive.GATHER) else 1
        raise InputError("inputs", f"{ranks} lists of {arrays[0].size}",
                         f"lists this schedule cuts evenly: a buffer of a multiple of {whole} elements "
                         f"({'each rank giving 1/' + str(ranks) + ' of it' if blocks > 1 else 'per rank'})")
    return found

