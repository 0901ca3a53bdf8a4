"""From nccl-tests logs to a calibrated *cluster* profile: a base system plus measured curves.

Logs are grouped by what they measured (collective, ranks, nodes, the NCCL_ALGO they ran) and
each group is fitted on its own (:func:`costmodel.calibrate.link.calibrate`); the fit's pieces
become a :class:`hardware.MeasuredCurve` of the whole call's time, ``A + n / B`` per size
regime, with the fit's two-fold cross-validated median error (every other size held out).
The profile is the base system, renamed, with those curves: ``--cluster my-cluster.toml`` then
works wherever a system does (:mod:`costmodel.cluster.measured` uses the curves).
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from costmodel.calibrate.fit import cross_validate
from costmodel.calibrate.link import calibrate, check_regimes_in_range, finite_slope, points, resolve_log
from costmodel.calibrate.parse import Log
from dpbase.errors import InputError
from dpbase.values import frozen
from hardware import System
from hardware.profiles import MeasuredCurve, Regime


def _nodes(log: Log, system: System, nodes: int | None) -> int:
    if nodes is not None:
        return nodes
    if log.nodes:
        return log.nodes
    if log.ranks and log.ranks % system.gpus_per_node == 0:
        return log.ranks // system.gpus_per_node
    if log.ranks and log.ranks < system.gpus_per_node:
        return 1
    raise InputError("nodes", None, f"--nodes (the log {log.source_path} does not say, and {log.ranks} ranks "
                                    f"are not whole nodes of {system.gpus_per_node} GPUs)")


def _regimes(fit) -> tuple[Regime, ...]:
    """The fit's pieces as a whole call's ``A + n / B`` (flat pieces made finite as links are)."""
    return tuple(Regime(max_size_bytes=r.max_size_bytes, latency_s=max(r.latency_s, 0.0),
                        bandwidth_Bps=1.0 / finite_slope(r, fit)) for r in fit.regimes)


CROSS_VALIDATED = "cross-validated"
IN_SAMPLE = "in-sample (fewer than 4 message sizes: nothing to hold out)"


def _cv_error(sizes: Sequence[float], times: Sequence[float], fallback: float) -> tuple[float, str]:
    """(median |relative error|, how it was measured): two-fold cross-validated, or the fit's own
    in-sample error where there are too few sizes to hold any out (a line through two points has
    none, which says nothing of its error)."""
    try:
        _, errors = cross_validate(sizes, times)
    except InputError:  # fewer than 4 distinct sizes: the in-sample error is all there is
        return fallback, IN_SAMPLE
    import numpy as np

    return float(np.median(np.abs(errors))), CROSS_VALIDATED


_ALGO_IN_TEXT = re.compile(r"NCCL_ALGO set by environment to (\w+)", re.IGNORECASE)
_ALGO_IN_NAME = re.compile(r"(?:^|[_.-])(ring|tree|nvls|nvlstree|nvls_tree|collnet|collnetdirect|collnetchain|pat)"
                           r"(?:[_.-]|$)", re.IGNORECASE)


def algorithm_of(path: str, text: str | None = None) -> str:
    """The NCCL_ALGO a log ran with: from NCCL's INFO line, else its file name (``ar_2n_ring.log``,
    as the recipe names them), else ``auto`` (NCCL's own choice)."""
    from costmodel.nccl.names import normalize_algorithm

    found = _ALGO_IN_TEXT.search(text or "") or _ALGO_IN_NAME.search(Path(path).name)
    if not found:
        return "auto"
    name = found.group(1).lower().replace("nvlstree", "nvls_tree").replace("collnetdirect", "collnet_direct")
    return normalize_algorithm(name.replace("collnetchain", "collnet_chain"))


@frozen
class MeasuredCurves:
    """The curves of a set of logs and what reading and fitting them found (each note once)."""

    curves: tuple[MeasuredCurve, ...]
    notes: tuple[str, ...] = ()
    error_kinds: tuple[str, ...] = ()  # per curve: how its median_error was measured (CROSS_VALIDATED, IN_SAMPLE)


# The model in a GPU name as nccl-tests prints it ("NVIDIA H100 80GB HBM3", "AMD Instinct MI300X",
# "NVIDIA GeForce RTX 2080 Ti", "NVIDIA RTX A6000", "NVIDIA GB10") or as a profile spells it
# ("h100-sxm", "rtx-2080ti", "l40s"): the whole token, suffix letters included, so an A10 is not
# an A100 nor an L40 an L40S.
_GPU_MODEL = re.compile(r"(?<![a-z0-9])(rtx ?(?:pro ?)?a?\d{4}(?: ?ti)?|g[bh]\d{2,3}|mi\d{3}[a-z]?"
                        r"|[abhkltpv]\d{1,3}[a-z]?)(?![a-z0-9])")


def _models(text: str) -> set[str]:
    """The GPU model tokens of ``text``, spaces dropped ("rtx 2080 ti" -> "rtx2080ti")."""
    spaced = re.sub(r"[^a-z0-9]+", " ", text.lower())
    return {token.replace(" ", "") for token in _GPU_MODEL.findall(spaced)}


def gpu_mismatch_note(log: Log, system: System) -> str | None:
    """A note when the log names a GPU model the system's GPU profile does not (an H100 log
    calibrated as an MI300X cluster was taken without a word); None when they agree or either
    names no model."""
    named = _models(log.gpu_model or "")
    gpu = system.gpu
    own = _models(gpu.name) or _models(gpu.description)
    if not named or not own or named & own:
        return None
    return (f"{log.source_path} ran on {log.gpu_model}, but {system.name}'s GPU is {gpu.name}: its curves "
            "describe another GPU's cluster")


def measured_curves(logs: Sequence[Log], system: System, *, collective: str | None = None,
                    ranks: int | None = None, nodes: int | None = None, nccl_algo: str | None = None,
                    block: str = "both", algorithms: Sequence[str] | None = None) -> MeasuredCurves:
    """One curve per (collective, nodes, GPUs per node, NCCL_ALGO) group of ``logs`` on ``system``,
    with the notes of each group's calibration (rows nccl-tests counted wrong, a ``--ranks`` the
    columns contradict, a fit whose error is unknown or whose regimes tie).

    ``nccl_algo`` names what every log ran; otherwise ``algorithms`` gives it per log (e.g. from
    :func:`algorithm_of`), else ``auto``.
    """
    groups: dict[tuple[str, int, int, str], list[Log]] = defaultdict(list)
    for index, log in enumerate(logs):
        ran = nccl_algo or (algorithms[index] if algorithms is not None else "auto")
        resolved = resolve_log(log, collective, ranks, nodes)
        if not resolved.collective or not resolved.ranks:
            raise InputError("ranks", None, f"--ranks (the log {log.source_path} does not say)")
        node_count = _nodes(resolved, system, nodes)
        if resolved.ranks % node_count:
            raise InputError("nodes", node_count, f"a divisor of the {resolved.ranks} ranks of {log.source_path}")
        per_node = resolved.ranks // node_count
        if per_node > system.gpus_per_node:
            raise InputError("nodes", node_count, f"enough nodes for {resolved.ranks} ranks of {system.name} "
                                                  f"({system.gpus_per_node} GPUs per node)")
        groups[(resolved.collective, node_count, per_node, ran)].append(resolved)
    curves, kinds = [], []
    notes = [note for note in (gpu_mismatch_note(log, system) for log in logs) if note]
    for (name, node_count, per_node, ran), members in sorted(groups.items()):
        result = calibrate(members, collective=name, ranks=node_count * per_node, nodes=node_count, block=block)
        notes.extend(result.notes)
        sizes, times = points(members, block)
        error, kind = _cv_error(sizes, times, result.fit.median_abs_pct_error / 100)
        kinds.append(kind)
        regimes = _regimes(result.fit)
        check_regimes_in_range(regimes, result.sources)
        curves.append(MeasuredCurve(
            collective=name, algorithm=ran, nodes=node_count, gpus_per_node=per_node,
            regimes=regimes, min_size_bytes=min(s for s in sizes if s > 0),
            max_size_bytes=max(sizes), median_error=min(error, 1.0),
            source=f"{', '.join(result.sources)}; fit {len(result.fit.fitted_regimes)} regime(s), "
                   f"{kind} median error {100 * error:.1f} %"))
    return MeasuredCurves(curves=tuple(curves), notes=tuple(dict.fromkeys(notes)), error_kinds=tuple(kinds))


def cluster_profile(system: System, curves: Sequence[MeasuredCurve], name: str | None = None) -> System:
    """The base system, renamed, with the measured curves (earlier curves of the same group replaced)."""
    keep = [c for c in system.measured
            if (c.collective, c.algorithm, c.nodes, c.gpus_per_node)
            not in {(n.collective, n.algorithm, n.nodes, n.gpus_per_node) for n in curves}]
    label = name or (system.name if system.measured else f"{system.name}-calibrated")
    return dataclasses.replace(
        system, name=label, measured=tuple(keep) + tuple(curves),
        description=f"{system.description} (calibrated: {len(keep) + len(curves)} measured curve(s))",
        source=f"{system.source}; measured curves by dpcost calibrate")
