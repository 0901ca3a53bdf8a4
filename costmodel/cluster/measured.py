"""Calibrated clusters: measured curves answer where they cover the query, the model elsewhere.

A system profile written by ``dpcost calibrate --system`` carries ``measured`` curves (one per
collective × algorithm × layout, fitted to nccl-tests logs). For a query on that layout:

- a curve of the collective covers the size and the algorithm (``auto``: the curve of what the
  stack chose, else the fastest measured one; a name: only a curve of that algorithm — one
  algorithm's fit is never applied to another) → the answer is the curve, ``source = measured``,
  with an interval from the fit's own cross-validated error;
- otherwise the realistic model answers, scaled by what the measurements taught (the median
  ratio measured/model of this layout's curves of the collective at the query's size; with no
  curve on this layout, the curves of the nearest measured node count with the same GPUs per
  node — the node-count extrapolation: the model's structure (hops, tree depth, NIC share)
  carries the change of scale, the measurements the efficiency — where the model runs the same
  algorithm there as on the measured layout: a ring's measured efficiency says nothing of a
  tree's), ``source = model``, with the interval widened by the spread of those ratios and a
  note saying so.
"""

from __future__ import annotations

import functools
import statistics
from collections.abc import Callable

from costmodel.collectives.prediction import Prediction
from costmodel.names import busbw_factor, primitive_named
from dpbase.values import replace

ModelFn = Callable[[str, float, str, object], list[Prediction]]  # (primitive, size, algorithm, layout)
# The smallest relative half-width of a measured curve's interval: nccl-tests' run-to-run spread.
MIN_MEASURED_SPREAD = 0.05


def _same_algorithm(curve_algorithm: str, asked: str) -> bool:
    """Whether a curve measured with ``curve_algorithm`` answers ``asked``: the same NCCL algorithm,
    or one of the family asked for (an NVLS or NVLS-tree curve answers ``in-network``)."""
    from costmodel.nccl.names import FAMILIES, to_nccl_algorithm
    from dpbase.errors import DpcostError

    if curve_algorithm == asked:
        return True
    try:
        curve, wanted = to_nccl_algorithm(curve_algorithm), to_nccl_algorithm(asked)
    except DpcostError:
        return False
    return curve == wanted or curve in FAMILIES.get(wanted, ())


def curve_problems(system) -> list[str]:
    """What would keep a profile's measured curves from ever answering, one line each: a collective
    or algorithm name the tool does not know (``allreduce``), more GPUs per node than the system
    has, two curves of one (collective, algorithm, layout). ``hardware validate`` reports them and
    a query on the system refuses them (they were read and silently never used). Checked once per
    set of curves, not per query (:func:`_problems_of`)."""
    return list(_problems_of(system.measured, system.gpus_per_node, system.name))


@functools.lru_cache(maxsize=64)
def _problems_of(measured: tuple, gpus_per_node: int, name: str) -> tuple[str, ...]:
    from costmodel.nccl.names import to_nccl_algorithm
    from dpbase.errors import DpcostError

    problems, seen = [], set()
    for i, curve in enumerate(measured):
        where = f"system.measured[{i}]"
        try:
            primitive_named(curve.collective)
        except DpcostError as error:
            problems.append(f"{where}.collective: {error}")
        try:
            to_nccl_algorithm(curve.algorithm)
        except DpcostError as error:
            problems.append(f"{where}.algorithm: {error}")
        if curve.gpus_per_node > gpus_per_node:
            problems.append(f"{where}.gpus_per_node: got {curve.gpus_per_node}; allowed: at most the "
                            f"{gpus_per_node} GPUs per node of {name}")
        try:
            key = (primitive_named(curve.collective).value, to_nccl_algorithm(curve.algorithm), curve.nodes,
                   curve.gpus_per_node)
        except DpcostError:  # reported above
            continue
        if key in seen:
            problems.append(f"{where}: got a second curve of {key[0]}, algorithm {key[1]}, {key[2]} node(s) x "
                            f"{key[3]} GPU(s); allowed: one curve per collective, algorithm and layout")
        seen.add(key)
    return tuple(problems)


def curves_for(system, primitive: str, nodes: int, gpus_per_node: int) -> list:
    if system.measured:
        problems = curve_problems(system)
        if problems:
            from dpbase.errors import ProfileError

            field, _, rest = problems[0].partition(": ")
            raise ProfileError(field, system.name, f"a profile whose measured curves can answer ({rest})")
    name = primitive_named(primitive).value  # a curve's collective in any accepted spelling ("allreduce")
    return [c for c in system.measured
            if c.nodes == nodes and c.gpus_per_node == gpus_per_node and primitive_named(c.collective).value == name]


def from_curve(curve, primitive: str, size_bytes: float, lay, backend: str) -> Prediction:
    """The measured curve's answer as a Prediction (interval from the fit's own error)."""
    time_s = curve.time_s(size_bytes)
    regime = curve.regime_for(size_bytes)
    spread = max(2 * curve.median_error, MIN_MEASURED_SPREAD)
    algbw = size_bytes / time_s if time_s > 0 else float("inf")
    return Prediction(
        primitive=primitive_named(primitive).value, algorithm=curve.algorithm, ranks=lay.ranks,
        size_bytes=float(size_bytes), time_s=time_s, latency_s=regime.latency_s,
        bandwidth_s=size_bytes / regime.bandwidth_Bps, reduction_s=0.0, algbw_Bps=algbw,
        busbw_Bps=algbw * busbw_factor(primitive_named(primitive), lay.ranks), backend=backend,
        cluster=lay.system.name, nodes=lay.nodes, gpus_per_node=lay.gpus_per_node,
        interval_s=(time_s * (1 - spread), time_s * (1 + spread)), stack_runs=True, source="measured",
        note=f"measured on this cluster ({curve.source or 'dpcost calibrate'})")


def _chosen(curves: list, size_bytes: float, algorithm: str):
    covering = [c for c in curves if c.covers(size_bytes)]
    if algorithm == "auto":
        own = [c for c in covering if c.algorithm == "auto"]
        pool = own or covering
        return min(pool, key=lambda c: c.time_s(size_bytes)) if pool else None
    named = [c for c in covering if _same_algorithm(c.algorithm, algorithm)]
    return named[0] if named else None


def _scale(curves: list, model: ModelFn, lay, size_bytes: float) -> tuple[float, float, frozenset] | None:
    """(median, spread, the model's algorithms) of measured/model over ``curves`` (all on layout
    ``lay``) at the query's size (clamped into the sizes each curve answers,
    :attr:`MeasuredCurve.covered_bytes`, so the scaled model meets the curve where the curve stops
    answering): the measured efficiency where the size's regime (latency floor or bandwidth) is
    the same as the query's, of the algorithms the model ran there."""
    ratios, algorithms = [], set()
    for c in curves:
        low, high = c.covered_bytes
        at = min(max(size_bytes, low), high)
        try:
            answer = model(c.collective, at, c.algorithm, lay)[0]
        except Exception:  # noqa: BLE001 - a curve the model cannot reproduce teaches nothing here
            continue
        if answer.time_s > 0:
            ratios.append(c.time_s(at) / answer.time_s)
            algorithms.add(answer.algorithm)
    if not ratios:
        return None
    middle = statistics.median(ratios)
    return middle, max(abs(r / middle - 1) for r in ratios), frozenset(algorithms)


def _teaching_curves(lay, primitive: str) -> tuple[list, object]:
    """This layout's curves, else those of the nearest measured node count (same GPUs per node);
    of the query's collective where it was measured (an all-to-all's efficiency moved an
    all-reduce's answer 6 % off on GB300), else of any."""
    name = primitive_named(primitive).value
    own = [c for c in lay.system.measured if primitive_named(c.collective).value == name]
    pool = [c for c in (own or lay.system.measured) if c.gpus_per_node == lay.gpus_per_node]
    same = [c for c in pool if c.nodes == lay.nodes]
    if same:
        return same, lay
    counts = sorted({c.nodes for c in pool}, key=lambda n: (abs(n - lay.nodes), -n))
    if not counts:
        return [], lay
    nearest = counts[0]
    return [c for c in pool if c.nodes == nearest], replace(lay, nodes=nearest)


def calibrated(primitive: str, size_bytes: float, lay, algorithm: str, results: list[Prediction],
               model: ModelFn, backend: str) -> list[Prediction]:
    """``results`` (the model's) with measured curves put in where they apply (module docstring)."""
    curves = curves_for(lay.system, primitive, lay.nodes, lay.gpus_per_node)
    if algorithm != "all":
        curve = _chosen(curves, size_bytes, algorithm)
        if curve is not None:
            return [from_curve(curve, primitive, size_bytes, lay, backend)]
    layout_curves, taught_on = _teaching_curves(lay, primitive)
    scale = _scale(layout_curves, model, taught_on, size_bytes)
    elsewhere = taught_on.nodes != lay.nodes
    where = f"the {taught_on.nodes}-node layout's" if elsewhere else "this layout's"
    out = []
    for r in results:
        curve = _chosen(curves, size_bytes, r.algorithm) if algorithm == "all" else None
        if curve is not None:
            out.append(replace(from_curve(curve, primitive, size_bytes, lay, backend), nccl_choice=r.nccl_choice))
            continue
        if scale is None:
            out.append(replace(r, source="model", note=join_notes(r.note, "not measured on this cluster's layouts: "
                                                                      "the model's answer")))
            continue
        factor, spread, taught = scale
        if elsewhere and r.algorithm not in taught:  # another algorithm's efficiency teaches nothing of this one
            out.append(replace(r, source="model", note=join_notes(
                r.note, f"not measured: the model's answer ({r.algorithm} here; {where} calibrated curves ran "
                        f"{', '.join(sorted(taught))} in the model, whose measured/model ratio is not this one's)")))
            continue
        low, high = r.interval_s or (r.time_s, r.time_s)
        out.append(replace(r, time_s=r.time_s * factor, source="model",
                           interval_s=(low * factor * (1 - spread), high * factor * (1 + spread)),
                           note=join_notes(r.note, f"not measured: the model scaled by x{factor:.3g}, the median "
                                               f"measured/model ratio at this size of {where} {len(layout_curves)} "
                                               "calibrated curve(s)")))
    return out


def join_notes(first: str | None, second: str) -> str:
    """Two notes of one prediction as one ("first; second"), or the second alone."""
    return f"{first}; {second}" if first else second
