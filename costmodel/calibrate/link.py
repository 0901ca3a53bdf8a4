"""From parsed nccl-tests logs to a calibration: the fit, per-hop link parameters, a profile.

    >>> from costmodel.calibrate.parse import parse_file                        # doctest: +SKIP
    >>> result = calibrate([parse_file("all_reduce_perf.log")], ranks=8)  # doctest: +SKIP
    >>> open("my-link.toml", "w").write(profile_toml(result))            # doctest: +SKIP

The fitted time per regime, ``A + C·n``, is turned into a link's per-hop latency α and
bandwidth B with the cost formula of the collective's algorithm, ``steps·α + b·n/B``
(``steps`` the α count, ``b`` the β-term bytes per byte of ``n``): α = A / steps and
B = b / C.  The coefficients come from :func:`costmodel.coefficients` for the algorithm nccl-tests
runs (ring; NCCL's ring-based chain for broadcast/reduce; pairwise all-to-all; direct
send/recv), else from nccl-tests' busbw factor (b = factor, steps of the ring schedule).
Any reduction (γ) cost is folded into B: a calibrated link already includes it.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Sequence

from costmodel.calibrate import conventions as names
from costmodel.calibrate.fit import Fit, fit_times
from costmodel.calibrate.parse import NCCL_TESTS_TIME_S, Log
from dpbase.errors import InputError
from dpbase.values import frozen
from hardware.profiles import Regime, regime_covering

BLOCKS = ("both", "out-of-place", "in-place")
# A regime whose fitted C is 0 (a flat floor) is written with the bandwidth at which its
# β-term adds this share of its latency at its largest size, so the profile stays finite.
FLAT_REGIME_TIME_SHARE = 1e-4
# A log measures a bandwidth only if, at its largest message, the fitted per-byte term is at
# least this share of the time. A latency-bound log has none there: its time is flat or moves
# only by nccl-tests' noise, a few per cent (up to 3.6 % between neighbouring sizes of the
# monotonic validation logs); every real log under tests/data/calibration has half or more (the
# least: 51 %, abci_v_32n.txt). 5 % lies between, well below every real log.
MIN_BANDWIDTH_TIME_SHARE = 0.05


# nccl-tests prints algbw = size / time (src/common.cu) for every collective today. From 2017-08 to
# 2020-06 its all_gather and reduce_scatter printed the whole buffer as the size and a per-rank
# algbw × (N − 1), so size / time = N / (N − 1) × algbw (nccl-tests cbe7f65 … ec1b5e2; the 2-rank
# log tests/data/calibration/raw/rtx2080ti_2x_nvlinkbridge_nt44.txt reads 2.000). Every log under
# tests/data/calibration agrees with one of the two within 4 % (median over rows). Rows whose algbw
# prints below 0.1 GB/s carry too few digits (2 decimals) to be compared.
ALGBW_CHECK_MIN_BPS = 0.1e9
ALGBW_AGREEMENT = 0.1


def check_times_match_algbw(logs: Sequence[Log], ranks: int) -> None:
    """Refuse (InputError naming the log) a log whose times disagree with its own algbw column:
    times in another unit than nccl-tests' µs (milliseconds pasted in) would fit a bandwidth
    1000× off, which the log's own columns contradict."""
    conventions = (1.0, ranks / (ranks - 1)) if ranks > 1 else (1.0,)
    for log in logs:
        ratios = [r.size_bytes / t / a for r in log.rows
                  for t, a in ((r.time_oop_s, r.algbw_oop_Bps), (r.time_ip_s, r.algbw_ip_Bps))
                  if t and t > 0 and a and a >= ALGBW_CHECK_MIN_BPS]
        if not ratios:
            continue
        ratio = statistics.median(ratios)
        if any(abs(ratio / convention - 1) <= ALGBW_AGREEMENT for convention in conventions):
            continue
        raise InputError("log", log.source_path,
                         f"times that agree with its algbw column (nccl-tests prints algbw = size / time, "
                         f"time in µs): here size / time is {ratio:.3g}× the printed algbw (median over rows; "
                         "are the times in another unit?)")


@frozen(kw_only=True)
class Calibration:
    """A fit plus what it means for the link: per-regime α and bandwidth, busbw plateau."""

    collective: str
    algorithm: str
    ranks: int
    nodes: int | None
    sources: tuple[str, ...]
    fit: Fit
    steps: float
    beta_bytes_per_byte: float
    coefficient_source: str
    link_regimes: tuple[Regime, ...]  # per hop: hardware's own regime (flat where the fit holds level)
    busbw_plateau_Bps: float  # busbw of the largest regime's slope: factor / C
    measured_peak_busbw_Bps: float | None
    notes: tuple[str, ...] = ()
    # 10th and 90th percentile of measured ÷ predicted, each size predicted by a fit that never saw
    # it (costmodel.calibrate.fit.cross_validate); None below 4 distinct sizes
    held_out_band: tuple[float, float] | None = None


def _from_columns(log: Log) -> names.Inference:
    """What the log's redop, root and bandwidth columns say of its collective and ranks."""
    printed = [(r.algbw_oop_Bps / 1e9, r.busbw_oop_Bps / 1e9) for r in log.rows
               if r.algbw_oop_Bps and r.busbw_oop_Bps]
    return names.infer_from_columns([r.redop for r in log.rows], [r.root for r in log.rows], printed)


def log_collectives(log: Log) -> tuple[str, ...]:
    """The collectives ``log`` may have measured, read as :func:`resolve_log` reads them: the one
    its text or file name names, else the candidates its columns leave; () where nothing says."""
    named = log.collective or names.collective_from_filename(log.source_path)
    if named:
        return (named,)
    return _from_columns(log).collectives


def resolve_log(log: Log, collective: str | None = None, ranks: int | None = None,
                nodes: int | None = None) -> Log:
    """``log`` with collective, ranks and nodes filled: the user's values first, then what the
    log names (binary in its text or file name), then what its columns imply (with a note).
    A ``collective`` other than the binary the log's text names is refused (InputError)."""
    notes = list(log.notes)
    user = names.check_collective(collective) if collective is not None else None  # "" is refused, not the default
    if user and log.collective and user != log.collective:  # the log's text names its binary
        raise InputError("collective", collective, f"{log.collective} (the log's own collective)")
    redop = names.redop_contradicts(user, [r.redop for r in log.rows]) if user else None
    if redop is not None:  # an all-reduce log ("sum") fitted as a scatter (CLI audit, 2026-12-01)
        could = sorted(names.PRINTS_A_REDUCTION) if redop != "none" else sorted(
            set(names.collectives()) - names.PRINTS_A_REDUCTION)
        raise InputError("collective", collective, f"one whose nccl-tests log prints redop {redop}, as this "
                         f"log does ({_source_name(log)}): {', '.join(could)}")
    from_name = names.collective_from_filename(log.source_path)
    inferred = _from_columns(log)
    chosen = user or log.collective or from_name
    if chosen is None:  # the columns' first candidate; where they say nothing, nccl-tests' common all-reduce
        chosen = (inferred.collectives or ("all-reduce",))[0]
        if len(inferred.collectives) != 1:
            could = f"could be {' or '.join(inferred.collectives)}, " if inferred.collectives else ""
            notes.append(f"collective not named in the log; {inferred.reason}: {could}assumed {chosen} "
                         "(use --collective)")
    elif chosen not in inferred.collectives and inferred.collectives:
        notes.append(f"{chosen} was given but the columns suggest {' or '.join(inferred.collectives)} "
                     f"({inferred.reason})")
    for field, given, own in (("ranks", ranks, log.ranks), ("nodes", nodes, log.nodes)):
        if given and own and given != own:  # the log's header lists its ranks and their hosts
            raise InputError(field, given, f"{own} (the log's header lists {own} {field}: "
                             f"{_source_name(log)}), or leave --{field} out")
    chosen_ranks = ranks or log.ranks or (inferred.ranks if chosen in inferred.collectives else None)
    if chosen_ranks and not (ranks or log.ranks):
        notes.append(f"rank count {chosen_ranks} read from busbw/algbw (use --ranks to override)")
    elif ranks and inferred.ranks and chosen in inferred.collectives and inferred.ranks != ranks:
        notes.append(f"--ranks {ranks} was given but busbw/algbw in the log imply {inferred.ranks} ranks")
    chosen_nodes = nodes or log.nodes
    if chosen_nodes and chosen_ranks and chosen_ranks % chosen_nodes:
        raise InputError("nodes", chosen_nodes, f"a divisor of the run's {chosen_ranks} ranks")
    rows, wrong = _without_wrong_results(log)
    if wrong:  # a text log's rows are its lines; a JSON log's are the entries of its results
        where = "result" if log.layout == "json" else "line"
        notes.append(f"{len(wrong)} measurement(s) nccl-tests counted wrong results for (#wrong > 0) left out "
                     f"({where} {', '.join(map(str, wrong))})")
    return dataclasses.replace(log, collective=chosen, ranks=chosen_ranks, nodes=nodes or log.nodes,
                               rows=rows, notes=tuple(notes))


def _source_name(log: Log) -> str:
    import os

    return os.path.basename(str(log.source_path)) if log.source_path else "the log"


def _without_wrong_results(log: Log) -> tuple[tuple, list[int]]:
    """The rows with every time nccl-tests checked and found wrong (``#wrong`` > 0: the current
    and the JSON layouts count wrong elements; the pre-2022 layout prints a float error, which
    rounding makes non-zero, so it is kept) set to N/A, and the lines of those times."""
    if log.layout == "pre-2022":
        return log.rows, []
    rows, wrong = [], []
    for row in log.rows:
        changes = {time: None for time, check in (("time_oop_s", row.check_oop), ("time_ip_s", row.check_ip))
                   if check is not None and check > 0 and getattr(row, time) is not None}
        if changes:
            wrong.append(row.line)
            row = dataclasses.replace(row, **changes)
        rows.append(row)
    return tuple(rows), wrong


def points(logs: Sequence[Log], block: str = "both") -> tuple[list[float], list[float]]:
    """(sizes, times) of the rows of ``logs``; N/A and 0-byte rows are skipped, a negative size or a
    time that is not a finite number > 0 is refused (InputError naming the line)."""
    if block not in BLOCKS:
        raise InputError("block", block, ", ".join(BLOCKS))
    sizes, times = [], []
    for log in logs:
        for row in log.rows:
            chosen = {"both": (row.time_oop_s, row.time_ip_s), "out-of-place": (row.time_oop_s,),
                      "in-place": (row.time_ip_s,)}[block]
            for time_s in chosen:
                if time_s is None or row.size_bytes == 0:  # N/A, or a 0-byte call (no curve point)
                    continue
                if row.size_bytes < 0 or not math.isfinite(time_s) or time_s <= 0:
                    # the time as the log writes it (µs), not converted ("got -9.999999999999999e-06")
                    what, value = (("size", row.size_bytes) if row.size_bytes < 0
                                   else ("time", f"{time_s / NCCL_TESTS_TIME_S:.6g} us"))
                    raise InputError(f"{log.source_path} line {row.line} {what}", value,
                                     "a measured size >= 0 and a finite time > 0")
                sizes.append(float(row.size_bytes))
                times.append(time_s)
    return sizes, times


def _pipelined_coefficients(coefficients, collective: str, algorithm: str, ranks: int) -> tuple[float, float]:
    """(steps, β factor) of a pipelined algorithm as NCCL runs it: many chunks per buffer.

    The α count is the pipeline fill (one chunk, k = 1); the per-byte factor is the k → ∞
    limit of the formula's ``a + b/k`` β factor, ``2·β(k=2) − β(k=1)`` (exact for that form;
    the same extrapolation :mod:`costmodel.collectives.evaluate` uses for its chunk optimum).  For a
    chain broadcast this is N−1 steps at 1 byte per byte: NCCL's ring broadcast/reduce
    algBw = busBw (reference/nccl-model.md §3, ``ncclTopoTuneModel``)."""
    one = coefficients(collective, algorithm, ranks, chunks=1)
    two = coefficients(collective, algorithm, ranks, chunks=2)
    return float(one.steps), 2.0 * float(two.beta_bytes_per_byte) - float(one.beta_bytes_per_byte)


def coefficients_for(collective: str, algorithm: str | None, ranks: int) -> tuple[str, float, float, str]:
    """(algorithm, steps, beta_bytes_per_byte, where they came from) for the collective.

    ``algorithm`` None means the one nccl-tests runs (``default_algorithm`` in
    ``costmodel/data/nccltests.toml``).  A named algorithm that does not implement the
    collective is an error; nccl-tests' busbw factor (with the ring schedule's step count)
    stands in only when the default is not in the registry."""
    from costmodel.collectives.api import coefficients as registry
    from costmodel.collectives.registry import get
    from dpbase.errors import NotApplicableError, UnknownNameError

    if algorithm is not None and not str(algorithm).strip():  # "" fitted the default's ring (an audit, 2026-11-30)
        raise InputError("algorithm", algorithm, f"an algorithm of {collective}, or leave --algorithm out "
                         f"(nccl-tests runs {names.collectives()[collective].default_algorithm})")
    chosen = algorithm or names.collectives()[collective].default_algorithm
    try:
        if get(collective, chosen).pipelined:
            return (chosen, *_pipelined_coefficients(registry, collective, chosen, ranks),
                    "costmodel.coefficients (pipelined: fill steps, k→∞ bytes)")
        found = registry(collective, chosen, ranks)
        return chosen, float(found.steps), float(found.beta_bytes_per_byte), "costmodel.coefficients"
    except (NotApplicableError, UnknownNameError):
        if algorithm:
            raise
    steps = names.fallback_steps(collective, ranks)
    factor = names.busbw_factor(collective, ranks)
    return (chosen, float(max(steps, 1)), factor,
            f"nccl-tests busbw factor ({chosen} not in the formula registry)")


def finite_slope(regime, fit: Fit) -> float:
    """The regime's seconds per byte; a flat one (0) gets the slope whose β-term adds
    ``FLAT_REGIME_TIME_SHARE`` of its latency at its largest size, so profiles stay finite."""
    slope = regime.seconds_per_byte
    if slope > 0:
        return slope
    largest = regime.max_size_bytes if math.isfinite(regime.max_size_bytes) else max(fit.sizes_bytes)
    return FLAT_REGIME_TIME_SHARE * max(regime.latency_s, min(fit.times_s)) / largest


def busbw_printed(logs: Sequence[Log]) -> list[float]:
    """Every busbw the logs print (zeros kept: nccl-tests' two decimals in GB/s)."""
    return [bw for log in logs for r in log.rows for bw in (r.busbw_oop_Bps, r.busbw_ip_Bps) if bw is not None]


def _unmeasured_bandwidth(fit: Fit, printed: Sequence[float]) -> str | None:
    """Why the fit does not determine a bandwidth, or None when it does: the largest regime's
    per-byte term (``C·n`` at the largest message ``n``) is below ``MIN_BANDWIDTH_TIME_SHARE``
    of the time (0 when the time does not grow with the size there), or every busbw the logs
    print is 0 (nccl-tests' 2 decimals in GB/s: no size moved 5 MB/s)."""
    from dpbase.units import format_size, format_time

    share = fit.bandwidth_share
    where = f"the largest message here is {format_size(max(fit.sizes_bytes))}"
    if share >= MIN_BANDWIDTH_TIME_SHARE:  # False for NaN too
        return f"{where} and every busbw the log prints is 0" if printed and max(printed) == 0 else None
    if fit.falls:  # the fall nearest the largest sizes
        fall = max(fit.falls, key=lambda f: f.to_size_bytes)
        return (f"{where}, and the time falls as the size grows ({format_time(fall.from_time_s)} at "
                f"{format_size(fall.from_size_bytes)}, {format_time(fall.to_time_s)} at "
                f"{format_size(fall.to_size_bytes)})")
    if share > 0:
        return (f"{where}, where bandwidth is {100 * share:.2g} % of the time "
                f"(at least {100 * MIN_BANDWIDTH_TIME_SHARE:g} % needed)")
    return f"{where}, and the time does not grow with the size there"


def check_bandwidth_measured(fit: Fit, logs: Sequence[Log], printed: Sequence[float]) -> None:
    """Refuse (InputError naming the log) a fit that cannot tell a finite positive bandwidth:
    no bandwidth-bound size, or times that do not grow with the size (see
    :func:`_unmeasured_bandwidth`).  The bandwidth it would write is made up."""
    reason = _unmeasured_bandwidth(fit, printed)  # printed: busbw_printed(logs), which the caller has
    if reason is None:
        return
    sources = [log.source_path for log in logs]
    raise InputError("log", sources[0] if len(sources) == 1 else sources,
                     f"rows whose time grows with the message size: {reason}; "
                     f"measure up to nccl-tests -e 1G or larger")


def link_regimes(fit: Fit, steps: float, beta_bytes_per_byte: float) -> tuple[Regime, ...]:
    """Per-hop α and bandwidth of each regime of the fit (transitions included: the profile
    must reproduce the whole curve).

    A flat transition (a channel ramp, or a hold across a fall: the time level at sizes where
    the neighbours are bandwidth-bound) ends where the line it hands over to reaches its time,
    so it is that line's per-hop α and bandwidth with the bandwidth growing with the message
    (``flat``): every algorithm takes across it what it takes at its upper end, the measured
    one the level time. Read as latency alone it made any algorithm with fewer steps look far
    faster (README's ABCI A100 log on 16 ranks: recursive doubling 19.6 µs at 1.2 MB where the
    measured ring takes 146.5; now 201). A flat floor at the smallest sizes (no transition) is
    latency, as fitted."""
    regimes = []
    for i, regime in enumerate(fit.regimes):
        following = fit.regimes[i + 1] if i + 1 < len(fit.regimes) else None
        if (regime.transition and regime.seconds_per_byte == 0 and following is not None
                and math.isfinite(regime.max_size_bytes) and regime.latency_s > following.latency_s):
            regimes.append(Regime(
                max_size_bytes=regime.max_size_bytes, latency_s=following.latency_s / steps,
                bandwidth_Bps=beta_bytes_per_byte * regime.max_size_bytes / (regime.latency_s - following.latency_s),
                flat=True))
            continue
        slope = finite_slope(regime, fit)
        regimes.append(Regime(max_size_bytes=regime.max_size_bytes, latency_s=regime.latency_s / steps,
                                  bandwidth_Bps=beta_bytes_per_byte / slope))
    return tuple(regimes)


def predict_with_link(regimes: Sequence[Regime], steps: float, beta_bytes_per_byte: float,
                      size_bytes: float) -> float:
    """Time of one collective of ``size_bytes`` on links with ``regimes`` (the last covers any
    larger size)."""
    regime = regime_covering(regimes, size_bytes)
    return steps * regime.latency_s + beta_bytes_per_byte * size_bytes / regime.bandwidth_at(size_bytes)


def _same(values: Sequence, field: str):
    distinct = {v for v in values if v is not None}
    if len(distinct) > 1:
        raise InputError(field, sorted(map(str, distinct)), "the same value in every log (or pass it)")
    return distinct.pop() if distinct else None


def check_regimes_in_range(regimes: Sequence[Regime], sources: Sequence[str]) -> None:
    """Refuse a fit whose latency or bandwidth no profile may hold (:mod:`dpbase.limits`: what
    ``dpcost hardware validate`` and every ``--link``/``--cluster`` accept): a log whose times or
    sizes are in another unit (seconds for µs, bits for bytes) would otherwise be written as a
    profile dpcost itself refuses."""
    from dpbase.units import BANDWIDTH_RANGE, TIME_RANGE, bandwidth_in_range, seconds_in_range

    for regime in regimes:
        if not seconds_in_range(regime.latency_s) or not regime.bandwidth_Bps or not bandwidth_in_range(regime.bandwidth_Bps):
            raise InputError("logs", ", ".join(sources),
                             f"times and sizes a machine gives: the fit reads a latency of {regime.latency_s:.3g} s "
                             f"and a bandwidth of {regime.bandwidth_Bps:.3g} B/s, where a profile's latency is "
                             f"{TIME_RANGE} and its bandwidth {BANDWIDTH_RANGE} (are the log's times or sizes in "
                             "another unit?)")


def calibrate(logs: Sequence[Log], *, collective: str | None = None, ranks: int | None = None,
              nodes: int | None = None, algorithm: str | None = None, block: str = "both") -> Calibration:
    """Fit ``logs`` (one collective on one set of ranks) and derive link parameters."""
    if not logs:
        raise InputError("logs", "none", "at least one nccl-tests log")
    for field, value, least in (("ranks", ranks, 2), ("nodes", nodes, 1)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < least):
            raise InputError(field, value, f"an integer >= {least} (or leave it out to read it from the log)")
    resolved = [resolve_log(log, collective, ranks, nodes) for log in logs]
    chosen = _same([log.collective for log in resolved], "collective")
    chosen_ranks = _same([log.ranks for log in resolved], "ranks")
    if not chosen_ranks:
        raise InputError("ranks", "unknown", "--ranks N (the log does not say how many ranks ran)")
    if chosen_ranks < 2:
        raise InputError("ranks", chosen_ranks, "an integer >= 2 (one rank moves no data)")
    check_times_match_algbw(resolved, chosen_ranks)
    chosen_algorithm, steps, beta, origin = coefficients_for(chosen, algorithm, chosen_ranks)
    fit = fit_times(*points(resolved, block))
    printed = busbw_printed(resolved)
    check_bandwidth_measured(fit, resolved, printed)
    factor = names.busbw_factor(chosen, chosen_ranks)
    slope = fit.regimes[-1].seconds_per_byte
    peaks = [bw for bw in printed if bw]
    notes = tuple(dict.fromkeys(n for log in resolved for n in log.notes)) + fit.notes
    regimes = link_regimes(fit, steps, beta)
    check_regimes_in_range(regimes, [log.source_path for log in resolved])
    return Calibration(
        collective=chosen, algorithm=chosen_algorithm, ranks=chosen_ranks,
        nodes=_same([log.nodes for log in resolved], "nodes"),
        sources=tuple(log.source_path for log in resolved), fit=fit, steps=steps,
        beta_bytes_per_byte=beta, coefficient_source=origin, link_regimes=regimes,
        busbw_plateau_Bps=factor / slope,  # slope > 0: check_bandwidth_measured
        measured_peak_busbw_Bps=max(peaks) if peaks else None, notes=notes,
        held_out_band=held_out_band(fit.sizes_bytes, fit.times_s),
    )


def held_out_band(sizes_bytes, times_s) -> tuple[float, float] | None:
    """(p10, p90) of measured ÷ predicted over every point, each predicted by a fit that never saw
    its size (two-fold over the sizes, :func:`costmodel.calibrate.fit.cross_validate`): how sure a
    prediction on the calibrated link is for the collective it was fitted on. None below 4 sizes."""
    import numpy as np

    from costmodel.calibrate.fit import cross_validate

    if len(set(sizes_bytes)) < 4:
        return None
    _, errors = cross_validate(sizes_bytes, times_s)
    ratios = 1.0 / (1.0 + np.asarray(errors))
    low, high = np.percentile(ratios, [10, 90])
    return round(float(low), 4), round(float(high), 4)


def _toml_text(value: object) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_text(v) for v in value) + "]"
    return repr(value)


def _calibration_lines(result: Calibration) -> list[str]:
    fit = result.fit
    fields = {
        "collective": result.collective, "algorithm": result.algorithm, "ranks": result.ranks,
        "steps": result.steps, "beta_bytes_per_byte": result.beta_bytes_per_byte,
        "coefficient_source": result.coefficient_source, "sources": list(result.sources),
        "crossover_sizes_bytes": [float(c) for c in fit.crossovers_bytes],
        "median_abs_pct_error": round(fit.median_abs_pct_error, 4),
        "worst_abs_pct_error": round(fit.worst_abs_pct_error, 4),
    }
    if result.nodes:
        fields["nodes"] = result.nodes
    if result.held_out_band is not None:  # read back as the interval of predictions on this link
        fields["held_out_ratio_p10"], fields["held_out_ratio_p90"] = result.held_out_band
    lines = ["", "[calibration]"] + [f"{key} = {_toml_text(value)}" for key, value in fields.items()]
    for regime in fit.regimes:
        lines += ["", "[[calibration.regime]]", f"latency_s = {regime.latency_s!r}",
                  f"seconds_per_byte = {regime.seconds_per_byte!r}",
                  f"min_size_bytes = {regime.min_size_bytes!r}", f"points = {regime.points}"]
        if math.isfinite(regime.max_size_bytes):
            lines.append(f"max_size_bytes = {regime.max_size_bytes!r}")
        if regime.transition:
            lines.append("transition = true")
    return lines


def profile_toml(result: Calibration, name: str | None = None, category: str = "calibrated") -> str:
    """A hardware link profile (``[[link]]`` with ``[[link.regimes]]``, as hardware's own writer
    writes any link) plus the raw fit in a ``[calibration]`` table.  The top-level bandwidth is
    the largest regime's, the latency the smallest regime's."""
    from hardware import Link, to_toml

    first, last = result.link_regimes[0], result.link_regimes[-1]
    link = Link(name=name or f"calibrated-{result.collective}-{result.ranks}ranks",
                description=f"Per-hop link fitted to nccl-tests {result.collective} on {result.ranks} ranks",
                source=(f"dpcost calibrate {' '.join(result.sources)} "
                        f"({result.collective}, {result.ranks} ranks, {result.algorithm})"),
                category=category, bandwidth_Bps=last.bandwidth_Bps, efficiency=1.0, latency_s=first.latency_s,
                regimes=result.link_regimes if len(result.link_regimes) > 1 else ())
    lines = ["# Written by dpcost calibrate; the [calibration] table keeps the raw fit.", to_toml(link).rstrip("\n")]
    return "\n".join(lines + _calibration_lines(result)) + "\n"
