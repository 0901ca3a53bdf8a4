"""What every chart shares: the hardware a query names, predictions per point, size axes, hover text.

Hardware is named as on the CLI: ``cluster`` (+ ``nodes``, ``gpus_per_node``) or
``alpha``/``bandwidth`` (+ ``ranks``); ``backend`` is ``auto`` (as on the CLI: NCCL's tuning model
on an NVIDIA cluster, RCCL's ring/tree on AMD, the ideal model on a bare link or for a collective
NCCL's model lacks, noted), ``ideal`` (α-β-γ), ``nccl`` or ``rccl`` (these two need a cluster). Predictions go through :func:`costmodel.cluster.query.run_query`
(ideal) or :func:`costmodel.nccl.nccl_time` (NCCL) so a chart shows what the CLI prints.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from dpbase.errors import DpcostError, InputError, NotApplicableError
from dpbase.units import format_bandwidth, format_size, format_time, parse_size
from dpbase.values import frozen

# NCCL's algorithms a chart forces one by one (protocol left to NCCL); others need CollNet/SHARP.
NCCL_ALGORITHMS = ("ring", "tree", "nvls", "nvls_tree", "pat")
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#393b79", "#ad494a")
FONT = {"family": "DejaVu Sans, Arial, sans-serif", "size": 13}


@frozen(kw_only=True)
class Hardware:
    """The machine a chart is drawn for (the CLI's hardware options)."""

    cluster: str | None = None
    nodes: int = 1
    gpus_per_node: int | None = None
    alpha: str | None = None
    bandwidth: str | None = None
    ranks: int | None = None
    backend: str = "auto"  # resolved by check_backend for the chart's primitive, as the CLI does
    note: str | None = None  # why the chart is drawn on another backend than asked (auto's fall-back)
    # the algorithm parameters given (query.given_fields as (name, value) pairs: servers, colocated …),
    # passed to each drawn algorithm that takes them, as `collective` takes them
    params: tuple[tuple[str, Any], ...] = ()

    def with_ranks(self, ranks: int) -> "Hardware":
        """The same hardware with ``ranks`` ranks (whole nodes of a cluster)."""
        if self.cluster is None:
            return replace(self, ranks=ranks)
        per_node = self.per_node()
        if ranks < per_node and per_node % ranks == 0:  # within one node: use ``ranks`` of its GPUs
            return replace(self, nodes=1, gpus_per_node=ranks)
        if ranks % per_node:
            raise InputError("ranks", ranks, f"a divisor or a multiple of {per_node} GPUs per node on {self.cluster}")
        return replace(self, nodes=ranks // per_node)

    def default_rank_counts(self, max_ranks: int) -> tuple[int, ...]:
        """Rank counts to sweep when none are given: powers of two from 2 up to ``max_ranks``;
        on a cluster, the powers of two that divide one node, then 1, 2, 4 … whole nodes."""
        if self.cluster is None:
            return tuple(2**k for k in range(1, max(1, max_ranks.bit_length() - 1) + 1))
        per_node = self.per_node()
        within = [2**k for k in range(1, per_node.bit_length()) if per_node % 2**k == 0 and 2**k < per_node]
        nodes = [per_node * 2**k for k in range(0, 64) if per_node * 2**k <= max(max_ranks, per_node)]
        return tuple(within + nodes)

    def calibrated(self) -> bool:
        """Whether the cluster's profile carries measured curves (``dpcost calibrate --system``)."""
        from costmodel.cluster.mapping import layout

        return self.cluster is not None and bool(layout(self.cluster, 1, self.gpus_per_node).system.measured)

    def per_node(self) -> int:
        from costmodel.cluster.mapping import layout

        return layout(self.cluster, 1, self.gpus_per_node).gpus_per_node

    def total_ranks(self) -> int:
        if self.cluster is None:
            if self.ranks is None:
                raise InputError("ranks", None, "an integer >= 1 (the rank count) unless a cluster gives it")
            return self.ranks
        from costmodel.cluster.mapping import layout

        # the layout's own checks first: --nodes -1 was refused as "gpus_per_node: got -8" (an audit, 2026-11-30)
        return layout(self.cluster, self.nodes, self.gpus_per_node).ranks

    def _params_text(self) -> str:
        """The algorithm parameters for a title: 'colocated, servers=1'."""
        return ", ".join(name if value is True else f"{name}={value}" for name, value in self.params)

    def describe(self, counts: bool = True) -> str:
        """Short text for titles: 'dgx-h100 × 2 node(s) (16 GPUs), ideal α-β model'."""
        if self.cluster is None:
            count = f"{_plural(self.ranks, 'rank')}, " if self.ranks is not None and counts else ""
            given = f", {self._params_text()}" if self.params else ""
            return f"{count}α = {_shown(self.alpha, 'time')}, bandwidth {_shown(self.bandwidth, 'bandwidth')}{given}"
        model = {"nccl": "NCCL model", "rccl": "RCCL ring/tree, α-β"}.get(self.backend, "ideal α-β model")
        if self.backend == "nccl" and self.calibrated():
            model += " (not this profile's measured curves: dpcost collective applies them)"
        if self.note:
            model = f"{model} ({self.note})"
        if self.params:
            model += f"; {self._params_text()}"
        if not counts:
            return f"{self.cluster} ({self.per_node()} GPUs per node), {model}"
        return f"{self.cluster} × {_plural(self.nodes, 'node')} ({_plural(self.total_ranks(), 'GPU')}), {model}"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _shown(value: Any, kind: str) -> str:
    """A rate as the user typed it ("5us"), or a number in base units written with its unit (the
    API's 5e-06 read "α = 5e-06")."""
    if isinstance(value, str) or value is None:
        return str(value)
    from dpbase.units import format_bandwidth, format_time

    return format_time(float(value)) if kind == "time" else format_bandwidth(float(value))


def check_sources(hw: Hardware) -> None:
    """One source of hardware, and no option the chart would not use, as `collective` rules it
    (its query's checks) and `dpcost plot` says it: the Python charts took ``alpha`` or ``ranks``
    beside ``cluster`` and drew the cluster."""
    from costmodel.cluster.query import Query, check_conflicts

    check_conflicts(Query(primitive="all-reduce", alpha=hw.alpha, bandwidth=hw.bandwidth, cluster=hw.cluster,
                          backend=hw.backend, nodes=hw.nodes))
    if hw.cluster is not None and hw.ranks is not None:
        raise InputError("--ranks", hw.ranks, "left out with --cluster (its ranks are --nodes × --gpus-per-node)")
    if hw.cluster is None and hw.gpus_per_node is not None:
        raise InputError("--gpus-per-node", hw.gpus_per_node, "only with --cluster (a bare link's chart has no nodes)")
    if hw.cluster is None and (hw.alpha is None or hw.bandwidth is None):  # charts take no --link
        raise InputError("hardware", "none", "--alpha and --bandwidth, or --cluster")


def algorithm_names(algorithms: str | Iterable[str] | None) -> tuple[str, ...]:
    """A chart's named algorithms as a tuple: one name is one algorithm (``algorithms="ring"`` was
    read letter by letter)."""
    if algorithms is None:
        return ()
    return (algorithms,) if isinstance(algorithms, str) else tuple(dict.fromkeys(algorithms))  # each once


def checked_rank_counts(rank_counts: object) -> tuple[int, ...]:
    """A chart's rank counts: one or more whole numbers from 1 to ``MAX_RANKS`` (a lone 8, None or
    4.0 was a TypeError or AttributeError from inside the chart)."""
    from dpbase.errors import is_whole
    from dpbase.limits import MAX_RANKS

    allowed = f"a list of one or more whole rank counts from 1 to {MAX_RANKS}, e.g. [2, 4, 8]"
    if isinstance(rank_counts, (str, bytes)) or not isinstance(rank_counts, Iterable):
        raise InputError("rank_counts", rank_counts, allowed)
    counts = list(rank_counts)
    if not counts or not all(is_whole(n) and 1 <= n <= MAX_RANKS for n in counts):
        raise InputError("rank_counts", counts, allowed)
    return tuple(int(n) for n in counts)


def check_backend(hw: Hardware, primitive: str, algorithms: tuple[str, ...] = ()) -> Hardware:
    """Before any work: a known primitive, and a backend that can time it (one error line
    otherwise). Returns ``hw`` with its backend resolved for ``primitive`` and the chart's named
    ``algorithms`` the way `collective` resolves it (:func:`costmodel.cluster.backends.backend_for`:
    ``auto`` is the cluster's realistic backend, or the ideal one with a note where that cannot
    answer the collective or one of the algorithms)."""
    from costmodel.cluster.backends import backend_for
    from costmodel.names import primitive_named
    from costmodel.nccl.names import COLLECTIVES

    name = primitive_named(primitive).value  # primitive: got 'bogus'; allowed: one of …
    if not isinstance(hw, Hardware):
        raise InputError("hardware", hw, "a costmodel.plots.Hardware (cluster=…, or alpha=, bandwidth=, ranks=)")
    check_sources(hw)
    from costmodel.cluster.query import check_algorithm_name

    for algorithm in algorithms:  # an unknown name, named as such (it made the others' backend ideal)
        if algorithm != "auto":  # the backend's own choice, as collective takes it (a bare link's too)
            check_algorithm_name(algorithm, on_cluster=hw.cluster is not None)
    if hw.cluster is None:
        from costmodel.cluster.query import ideal_only

        ideal_only(hw.backend)  # the message `collective` and `sweep` give
    from hardware import system_of

    # a name, a TOML path or a System, as every other API entry takes it (a System was "path: got System(…)")
    system = system_of(hw.cluster, "cluster") if hw.cluster is not None else None
    chosen, note = max((backend_for(name, hw.backend, system, algorithm=a) for a in algorithms or ("auto",)),
                       key=lambda found: found[1] is not None)  # a fall-back to ideal, if any, with its note
    hw = replace(hw, backend=chosen.value, note=note, params=_checked_params(hw.params))
    if hw.params:  # each taken by a drawn algorithm; each point's query checks the rest, as `collective` does
        from costmodel.cluster.query import check_fields_taken, library_refusal

        check_fields_taken([(name, a) for a in algorithms or ("all",)], dict(hw.params))
        if hw.backend == "nccl":  # drawn by NCCL's model directly (_nccl_points), not through a query
            raise library_refusal(*hw.params[0])
    if hw.backend != "nccl":
        return hw
    if name not in COLLECTIVES:
        raise InputError("backend", "nccl", f"ideal or auto for {name} (NCCL's tuning model has only "
                                            f"{', '.join(sorted(COLLECTIVES))}; auto falls back to ideal)")
    return hw


def _checked_params(params: Any) -> tuple[tuple[str, Any], ...]:
    """``Hardware.params`` as (name, value) pairs of the parameters given (a mapping is taken too;
    unset values such as ``servers=None`` are dropped, an unknown name refused, not a KeyError)."""
    from collections.abc import Mapping

    from costmodel.cluster.query import given_fields

    pairs = params.items() if isinstance(params, Mapping) else params
    try:
        fields = dict(pairs)
    except (TypeError, ValueError):
        raise InputError("params", params, "(name, value) pairs of algorithm parameters, e.g. "
                                           "(('colocated', True), ('servers', 1))") from None
    return tuple(given_fields(**{str(name): value for name, value in fields.items()}).items())


def size_grid(min_size: str | float, max_size: str | float) -> list[float]:
    """Powers of two from min to max inclusive (like nccl-tests ``-f 2``)."""
    low, high = parse_size(min_size, "min_size"), parse_size(max_size, "max_size")
    if low < 1:
        raise InputError("min_size", min_size, "a size >= 1 B")
    if high < low:
        raise InputError("max_size", max_size, f"a size >= the minimum size ({format_size(low)})")
    first, last = math.ceil(math.log2(low)), math.floor(math.log2(high))
    if last < first:
        raise InputError("min_size", low, "a range holding at least one power of two")
    return [float(2**e) for e in range(first, last + 1)]


def _topology(cluster: str, nodes: int, gpus_per_node: int | None) -> Any:
    from costmodel.cluster.backends import nccl_topology
    from costmodel.cluster.mapping import layout

    return nccl_topology(layout(cluster, nodes, gpus_per_node))


def _nccl_points(hw: Hardware, primitive: str, size_bytes: float, algorithms: tuple[str, ...],
                 named: bool) -> list[dict]:
    from costmodel.nccl import nccl_time
    from costmodel.nccl.names import to_nccl_algorithm

    topo = _topology(hw.cluster, hw.nodes, hw.gpus_per_node)
    found = []
    for name in algorithms:
        try:  # a registry name (double-binary-tree, in-network) as `collective` takes it
            p = nccl_time(primitive, size_bytes, topo, algorithm=to_nccl_algorithm(name))
        except DpcostError:  # not enabled on this topology or for this collective
            continue
        point = p.as_dict()
        found.append({**point, "algorithm": name if named or name == "auto" else p.algorithm, "ran": p.algorithm,
                      "chosen": chosen_label(point), "lower_bound_s": None})
    return found


# The fields of an algorithm's own refusals (its name, its parameters); any other refusal (an RCCL
# backend on an NVIDIA system) is the chart's, not the algorithm's (review of 2026-11-29's change:
# best-map answered "rank_counts: got 8" for --backend rccl on dgx-h100)
_ALGORITHM_FIELDS = ("algorithm", "gpus_per_node", "ranks", "servers", "chunks")


def chosen_label(p: dict) -> str:
    """What answered a call: the algorithm, with the protocol where the library chose one."""
    return f"{p['algorithm']}/{p['protocol']}" if p.get("protocol") else p["algorithm"]


def predictions(hw: Hardware, primitive: str, size_bytes: float, algorithms: tuple[str, ...] = ()) -> list[dict]:
    """Every algorithm's prediction at one size, or each named one's (``auto``: the backend's own
    choice, named in ``chosen``), as ``dpcost collective`` computes it: a named algorithm is asked
    by name, so the charts take every name ``collective`` takes (they filtered the list of
    everything, where RCCL's list has ring and tree only and NCCL's spells them its own way).
    Each point is keyed by the name asked (``ran``: the algorithm that answered it); one the
    backend cannot time here is left out."""
    from costmodel.cluster.query import Query, run_query

    if hw.backend == "nccl":
        if hw.cluster is None:
            raise InputError("backend", "nccl", "--backend nccl together with --cluster SYSTEM")
        return _nccl_points(hw, primitive, size_bytes, algorithms or NCCL_ALGORITHMS, bool(algorithms))
    from costmodel.cluster.query import UNSET, fields_for

    fields = dict(hw.params)
    query = Query(primitive=primitive, algorithm="all", size=size_bytes, ranks=hw.ranks if hw.cluster is None else None,
                  alpha=hw.alpha, bandwidth=hw.bandwidth, cluster=hw.cluster, nodes=hw.nodes,
                  gpus_per_node=hw.gpus_per_node, backend=hw.backend, **fields_for(primitive, "all", fields))
    if not algorithms:
        return [r.to_dict() for r in run_query(query)]
    found = []
    for name in algorithms:
        try:  # each algorithm with its own share of the parameters (a ring beside the parameter server: none)
            answered = run_query(replace(query, algorithm=name, **{**UNSET, **fields_for(primitive, name, fields)}))
        except NotApplicableError as error:  # the algorithm does not run here (check_drawn names what runs)
            if error.field not in _ALGORITHM_FIELDS:  # the hardware or backend itself: said as collective says it
                raise
            continue
        found += [{**p, "algorithm": name, "ran": p["algorithm"], "chosen": chosen_label(p) if name == "auto" else None}
                  for p in (r.to_dict() for r in answered)]
    return found


def series(hw: Hardware, primitive: str, sizes: list[float], algorithms: tuple[str, ...] = ()) -> dict[str, list]:
    """algorithm -> list of predictions over ``sizes`` (None where it does not apply). The chart
    that draws them checks the names over all it draws (:func:`check_drawn`)."""
    table: dict[str, list] = {}
    for index, size in enumerate(sizes):
        for p in predictions(hw, primitive, size, algorithms):
            table.setdefault(p["algorithm"], [None] * len(sizes))[index] = p
    return table


def check_drawn(primitive: str, algorithms: tuple[str, ...], drawn, hw: Hardware | None = None,
                size_bytes: float | None = None) -> None:
    """Every algorithm the user named is on the chart (an unknown one among several was dropped
    silently); at least one algorithm is. Where none of the named ones runs, the refusal lists what
    does (``hw`` at ``size_bytes``: `-a nvls` on two nodes listed nothing)."""
    missing = [name for name in algorithms if name not in drawn]
    if not drawn or missing:
        runs = list(drawn) or ([] if hw is None or size_bytes is None or not algorithms
                               else list(series(hw, primitive, [size_bytes], ())))
        raise InputError("algorithm", (missing or [", ".join(algorithms) or "all"])[0],
                         f"an algorithm of {primitive} on this hardware" + (f": {', '.join(runs)}" if runs else ""))


def size_ticks(sizes: list[float]) -> dict[str, Any]:
    """Log-axis ticks at every other power of four, labelled in B/KiB/MiB/GiB."""
    values = [s for s in sizes if math.log2(s) % 4 == 0] or sizes
    return {"tickvals": values, "ticktext": [format_size(v) for v in values]}


def hover_row(p: dict) -> list[str]:
    """[time, busbw, algbw, size, detail] with units, for ``customdata``."""
    detail = p.get("chosen") or f"{p.get('steps', 0):.6g} steps, {format_size(p.get('bytes_sent_max', 0))} sent/rank"
    def bandwidth(value: float | None) -> str:  # None or inf: a one-rank call moves nothing
        return format_bandwidth(value) if value is not None and math.isfinite(value) else "-"

    return [format_time(p["time_s"]), bandwidth(p["busbw_Bps"]), bandwidth(p["algbw_Bps"]),
            format_size(p["size_bytes"]), detail]


def base_layout(title: str, **extra: Any) -> dict[str, Any]:
    """Layout shared by every chart: title, font, white template, legend on the right."""
    return {"title": {"text": title}, "font": FONT, "template": "plotly_white", "hovermode": "closest",
            **extra}
