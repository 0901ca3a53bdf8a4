"""Turn one CLI query (text with units, names) into predictions; shared by collective/compare.

Hardware comes from exactly one of: ``--alpha/--bandwidth`` (with ``--ranks``), ``--link``
(a link profile: its latency and achievable bandwidth, or its calibrated regime for the
size), or ``--cluster`` (a system profile mapped by :mod:`costmodel.cluster.mapping`, or NCCL's model
with ``--backend nccl``).
"""

from __future__ import annotations

from typing import Any

from costmodel.cluster.stacks import check_stack_backend
from costmodel.collectives.evaluate import predict_entry
from costmodel.collectives.prediction import Prediction
from costmodel.collectives.registry import entries, get, param_names
from costmodel.names import (
    NO_ALGORITHM,
    Algorithm,
    Backend,
    algorithm_named,
    backend_or_auto,
    check_reduction_time,
    primitive_named,
)
from dpbase.errors import DpcostError, InputError, NotApplicableError, UnknownNameError, check_switch, whole_count
from dpbase.units import parse_bandwidth, parse_message_size, parse_time
from dpbase.values import frozen, replace


@frozen(kw_only=True)
class Query:
    primitive: str
    algorithm: str = "auto"  # a name, "auto" (fastest) or "all"
    size: str | float | None = None  # required by run_query (a size left out was 0 bytes, answered)
    ranks: int | None = None
    alpha: str | None = None
    bandwidth: str | None = None
    gamma: str = "0s"
    cluster: str | None = None
    nodes: int = 1
    gpus_per_node: int | None = None
    link: str | None = None
    backend: str = "auto"  # auto: realistic on a cluster (NCCL/RCCL), ideal on a bare link
    stack: str | None = None  # limits auto under the α-β backends; default: the system's, none on a bare link
    servers: int | None = None
    colocated: bool = False
    pipelined: bool = True
    chunks: int | None = None
    leaders: bool = False  # hierarchical: one leader per node (seed 000), not one rail per GPU
    alpha_inter: str | None = None
    bandwidth_inter: str | None = None


# An algorithm's parameters as the query carries them: (CLI flag, the formula's value when given,
# None when not). The one table of them: _params passes them on, check_conflicts refuses them
# where nothing takes them, the Python API accepts their names.
PARAMETERS: dict[str, tuple[str, Any]] = {
    "servers": ("--servers", lambda q: q.servers),
    "chunks": ("--chunks", lambda q: q.chunks),
    "colocated": ("--colocated", lambda q: True if q.colocated else None),
    "pipelined": ("--no-pipeline", lambda q: None if q.pipelined else False),
    "leaders": ("--leaders", lambda q: True if q.leaders else None),
}


def _given_params(q: Query) -> dict[str, Any]:
    """The algorithm parameters the query sets, by name, with the formula's values."""
    return {name: value for name, (_, read) in PARAMETERS.items() if (value := read(q)) is not None}


def _params(q: Query, entry: Any) -> dict[str, Any]:
    wanted = {**_given_params(q),
              # a bare link's node size (on a cluster the layout carries it): the hierarchical G
              "gpus_per_node": q.gpus_per_node if q.cluster is None else None}
    return entry.taken({k: v for k, v in wanted.items() if v is not None})


# The Query fields of the algorithm parameters at their "not given" values (the Query's own
# defaults): a query's parameters are the fields that differ (``given_fields``), which is also how
# a sweep or a chart passes them on.
UNSET = {name: getattr(Query(primitive="all-reduce"), name) for name in PARAMETERS}


def chunks_of(value: Any) -> Any:
    """A pipelined algorithm's chunk count as every entry point reads it: ``"auto"`` (any case) or
    None is the formula's default, the optimum (None); text of digits its number; other text is
    refused; a number is left to the whole-count check."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "auto"):
        return None
    if isinstance(value, str):
        if not value.strip().lstrip("+-").isdigit():
            raise InputError("chunks", value, "an integer >= 1 or 'auto'")
        return int(value)
    return value


def given_fields(**fields: Any) -> dict[str, Any]:
    """The algorithm parameters given, as Query fields (``servers=1, colocated=True``), the unset
    ones left out (``chunks="auto"`` among them: :func:`chunks_of`); a name that is not one is
    refused, naming what is."""
    for name in fields:
        if name not in UNSET:
            raise InputError("params", name, f"an algorithm parameter: {', '.join(UNSET)}")
    if "chunks" in fields:
        fields = {**fields, "chunks": chunks_of(fields["chunks"])}
    return {name: value for name, value in fields.items() if value is not None and value != UNSET[name]}


def _takes(primitive: str, algorithm: str) -> set[str]:
    """The parameter names ``algorithm`` of ``primitive`` takes: every algorithm's for ``all`` (each
    takes its own share, :func:`_params`), none for ``auto`` or a name with no formula."""
    if algorithm == "auto":
        return set()
    try:
        if algorithm == "all":
            return set().union(*param_names(primitive).values())
        return set(get(primitive, algorithm).param_names)
    except DpcostError:  # unknown here: the row's own query says why
        return set()


def fields_for(primitive: str, algorithm: str, fields: dict[str, Any]) -> dict[str, Any]:
    """The share of ``fields`` (:func:`given_fields`) that ``algorithm`` takes: what a sweep or a
    chart passes to each of its algorithms' queries (a ring among parameter-server rows is asked
    without --servers)."""
    taken = _takes(primitive, algorithm)
    return {name: value for name, value in fields.items() if name in taken}


def check_fields_taken(pairs: Any, fields: dict[str, Any]) -> None:
    """Each parameter in ``fields`` is taken by one of the (primitive, algorithm) ``pairs`` a sweep
    or chart asks: one no algorithm takes is refused, naming its flag, never dropped."""
    pairs = list(pairs)
    for name, value in fields.items():
        if not any(name in _takes(primitive, algorithm) for primitive, algorithm in pairs):
            takers = sorted({algorithm for primitive, _ in pairs for algorithm in param_names(primitive, name)})
            asked = ", ".join(dict.fromkeys(primitive_named(primitive).value for primitive, _ in pairs))
            raise _refuse_param(name, value, f"an algorithm of {asked} that takes it"
                                + (f": {', '.join(takers)}" if takers else f"; none of {asked}'s does"))


def library_refusal(name: str, value: Any) -> InputError:
    """An algorithm parameter given where NCCL's or RCCL's model answers: their models time their
    library's own algorithms, which take none (every command and chart refuses it in these words)."""
    return _refuse_param(name, value, "--backend ideal (NCCL's and RCCL's models time their library's own "
                                      "algorithms, which take no parameters), or the one algorithm that takes it, "
                                      "named (collective --algorithm …)")


def _refuse_param(name: str, value: Any, allowed: str) -> InputError:
    """The refusal of one given parameter, in the CLI's words (a switch echoes True: it was given)."""
    return InputError(PARAMETERS[name][0], True if isinstance(value, bool) else value, allowed)


def _link_of(q: Query) -> Any:
    """The query's link profile: a Link given, or loaded from its name or TOML path."""
    from hardware import load_link

    return q.link if _is_link(q.link) else load_link(q.link)


def _rates(q: Query, size_bytes: float) -> tuple[int, float, float]:
    if q.link is not None:
        link = _link_of(q)
        regime = link.regime_for(size_bytes) if link.regimes else None
        alpha = regime.latency_s if regime else link.latency_s
        bandwidth = regime.bandwidth_at(size_bytes) if regime else link.achievable_bandwidth_Bps
    else:
        if q.alpha is None or q.bandwidth is None:
            if q.alpha is not None or q.bandwidth is not None:  # one of the pair: the other is missing
                missing, given = ("--bandwidth", q.alpha) if q.bandwidth is None else ("--alpha", q.bandwidth)
                raise InputError(missing, "nothing", f"a value beside {given!s} (--alpha and --bandwidth "
                                                     "go together), or --link, or --cluster")
            raise InputError("hardware", "nothing", "--alpha and --bandwidth, or --link, or --cluster")
        alpha, bandwidth = parse_time(q.alpha, "alpha"), parse_bandwidth(q.bandwidth, "bandwidth")
        if bandwidth <= 0:  # named as typed ("0GB/s"), before the formulas would divide by it
            raise InputError("bandwidth", q.bandwidth, "a bandwidth > 0, e.g. 25GB/s")
    if q.ranks is None:
        raise InputError("--ranks", "nothing", "an integer >= 1 on a link or --alpha/--bandwidth (--cluster gives "
                                               "its own)")
    return q.ranks, alpha, bandwidth


def _names(q: Query, candidates: list[Any]) -> list[Any]:
    """A bare link: every algorithm (the textbook view) unless ``--stack`` narrows ``auto``."""
    stack = _stack(q)
    if q.algorithm == "auto":
        from costmodel.cluster.stacks import runs

        return [e for e in candidates if not e.in_network  # a plain link has no reducing switch
                and (stack is None or runs(stack, e.primitive, e.algorithm))]
    if q.algorithm == "all":  # every textbook algorithm the link runs: no reducing switch either
        return [e for e in candidates if not e.in_network]
    return [get(q.primitive, q.algorithm)]


def _stack(q: Query) -> Any:
    """The query's ``--stack`` as a Stack (refused, naming it, when it is none), or None."""
    from costmodel.cluster.stacks import stack_named

    return None if q.stack is None else stack_named(q.stack)


def _marked_for_stack(q: Query, results: list[Prediction]) -> list[Prediction]:
    """Every algorithm on a bare link (``compare``) with whether ``--stack`` runs it, as a cluster's
    answers say: the fastest the stack runs is compare's winner. A stack given to compare on a
    link was ignored, whatever its text ('abc' ranked too; audit of the CLI, 2026-11-30)."""
    stack = _stack(q)
    if stack is None or q.algorithm != "all":
        return results
    from costmodel.cluster.stacks import runs

    return [replace(r, stack_runs=runs(stack, r.primitive, r.algorithm)) for r in results]


def _ideal(q: Query, size_bytes: float, gamma: float) -> list[Prediction]:
    prim = primitive_named(q.primitive)
    inter = {}
    if q.alpha_inter is not None:
        inter["alpha_inter_s"] = parse_time(q.alpha_inter, "alpha_inter")
    if q.bandwidth_inter is not None:
        inter["bandwidth_inter_Bps"] = parse_bandwidth(q.bandwidth_inter, "bandwidth_inter")
        if inter["bandwidth_inter_Bps"] <= 0:  # named as typed, before the formula divides by it
            raise InputError("bandwidth_inter", q.bandwidth_inter, "a bandwidth > 0, e.g. 25GB/s")
    ranks, alpha, bandwidth = _rates(q, size_bytes)
    candidates = [e for e in entries() if e.primitive is prim and not e.hierarchical]
    results = []
    for entry in _names(q, candidates):
        extra = {**(inter if entry.hierarchical else {}), **_params(q, entry)}
        result = predict_entry(entry, ranks, size_bytes, alpha, bandwidth, gamma, **extra)
        if entry.in_network:  # a bare link states no switch: the answer is the what-if of one
            note = ("assumes a switch that reduces (NVLS, SHARP) at this link's rate: a bare link states none; "
                    "a --cluster with in-network reduction says whether it has one")
            result = replace(result, note=f"{result.note}; {note}" if result.note else note)
        results.append(_no_faster_than_smaller(q, entry, ranks, size_bytes, gamma, extra, result))
    # the fitted collective on the fitted ranks, as it was measured (its own chunking, no γ the log
    # could not show): its calibration's held-out band
    band = _held_out_band(q, ranks) if gamma == 0 and q.chunks is None and q.pipelined else None
    if band is not None:
        fitted = _fitted_on(q)
        results = [replace(r, interval_s=(band[0] * r.time_s, band[1] * r.time_s))
                   if (r.primitive, r.algorithm) == fitted and r.time_s > 0 else r for r in results]
    return _marked_for_stack(q, results)


def _held_out_band(q: Query, ranks: int) -> tuple[float, float] | None:
    """(p10, p90) of measured ÷ predicted that ``dpcost calibrate`` wrote into a link file's
    ``[calibration]`` table (:func:`costmodel.calibrate.link.held_out_band`), where the query runs on
    the ranks it was fitted on; None otherwise (another rank count or algorithm was not measured)."""
    if not isinstance(q.link, str):
        return None
    import hardware

    if not hardware.is_path(q.link):  # a bundled link's name: no calibration of its own
        return None
    found = hardware.load_file(q.link).metadata.get("calibration", {})
    low, high = found.get("held_out_ratio_p10"), found.get("held_out_ratio_p90")
    if low is None or high is None or found.get("ranks") != ranks:
        return None
    return float(low), float(high)


# How far the fitted collective's own curve may step down across a regime boundary (the fit's
# seams: boundaries at measured sizes, not the lines' exact crossings) before a time is held.
SEAM_TOLERANCE = 0.01


def _no_faster_than_smaller(q: Query, entry: Any, ranks: int, size_bytes: float, gamma: float, extra: dict,
                            result: Prediction) -> Prediction:
    """On a calibrated link, a message no faster than the largest of each smaller regime.

    The regimes' (α, bandwidth) pairs were fitted to one collective's curve (a ring all-reduce),
    continuous for its own α and bandwidth coefficients; an algorithm that weighs them otherwise
    (recursive doubling: log N of each) could drop at a boundary, 403 µs at 2 MiB to 55 µs at
    2.4 MB on a 32-GPU H100 link, where the ring rises 160 → 163 µs. No message completes faster
    than a smaller one of the same call would, so the time is held at the largest earlier
    regime's end where it falls below it, and a note says so."""
    link = _calibrated_link(q)
    if link is None or _fitted_on(q) == (entry.primitive.value, entry.algorithm.value):
        return result  # the fitted collective keeps its own curve, a measured fall included

    def time_at(size: float, regime: Any) -> float:
        return predict_entry(entry, ranks, size, regime.latency_s, regime.bandwidth_at(size), gamma, **extra).time_s

    def carried(held: float, edge: float, regime: Any, size: float, own: float) -> float:
        """``own`` (the time at ``size`` in ``regime``), or the time held at ``edge`` plus what
        ``regime`` adds from there, where that is more by over the fit's own seam (the fitted
        collective meets its regimes within it, so its answers are never moved)."""
        grown = held + max(own - time_at(edge, regime), 0.0)
        return grown if grown > own * (1 + SEAM_TOLERANCE) else own

    # walk the regimes in order: each edge's time at least the previous edge's plus what its own
    # regime adds between the two edges, so no time falls across a boundary
    held, edge = None, None
    for regime in link.regimes:
        if regime.max_size_bytes >= size_bytes:
            break
        own = time_at(regime.max_size_bytes, regime)
        held = own if held is None else carried(held, edge, regime, regime.max_size_bytes, own)
        edge = regime.max_size_bytes
    if held is None:
        return result
    floor = carried(held, edge, link.regime_for(size_bytes), size_bytes, result.time_s)
    if floor <= result.time_s:
        return result
    from dpbase.units import format_size

    note = (f"held at its time at {format_size(edge)} plus this regime's growth from there: {link.name}'s "
            "calibrated regimes, fitted on another algorithm's curve, made this size faster than a smaller one")
    algbw = size_bytes / floor
    return replace(result, time_s=floor, algbw_Bps=algbw,
                   busbw_Bps=None if result.busbw_Bps is None else result.busbw_Bps * result.time_s / floor,
                   note=f"{result.note}; {note}" if result.note else note)


def _fitted_on(q: Query) -> tuple[str, str]:
    """(collective, algorithm) a calibrated link file was fitted on (its ``[calibration]`` table);
    a Link object has no such table: an all-reduce with the algorithm calibration fits it with by
    default (nccl-tests' own, :func:`costmodel.calibrate.conventions.collectives`)."""
    if isinstance(q.link, str):
        import hardware

        found = hardware.load_file(q.link).metadata.get("calibration", {})
        if found.get("collective") and found.get("algorithm"):
            collective = primitive_named(found["collective"]).value
            try:  # the registry's name for the one written ("tree" is the double binary tree)
                return collective, get(collective, str(found["algorithm"])).algorithm.value
            except DpcostError:
                return collective, str(found["algorithm"])
    from costmodel.calibrate.conventions import collectives

    return "all-reduce", collectives()["all-reduce"].default_algorithm


def _calibrated_link(q: Query) -> Any:
    """The query's link when it carries calibrated regimes (more than one), else None."""
    if q.link is None:
        return None
    link = _link_of(q)
    return link if link.regimes and len(link.regimes) > 1 else None


def _on_cluster(q: Query, size_bytes: float, gamma: float) -> list[Prediction]:
    from costmodel.cluster.backends import choice_change_note, predict_collective
    from costmodel.cluster.mapping import layout, regimes_unused_note

    lay = layout(q.cluster, q.nodes, q.gpus_per_node)
    if q.ranks is not None and q.ranks != lay.ranks:
        raise InputError("ranks", q.ranks, f"{lay.ranks} (= nodes × GPUs per node) with --cluster")
    results = predict_collective(q.primitive, size_bytes, lay, algorithm=q.algorithm, backend=q.backend,
                                 stack=q.stack, gamma_s_per_byte=gamma, params_for=lambda entry: _params(q, entry))
    # NCCL's model times the reduction itself (RCCL's answers are α-β-γ timed: γ applies there);
    # NotApplicable, so a sweep leaves this combination out and keeps the others
    if gamma > 0 and any(r.backend == Backend.NCCL.value for r in results):
        raise NotApplicableError("gamma", q.gamma, "0 (or --backend ideal) where NCCL's model answers: it times the "
                                 "reduction itself")
    change = choice_change_note(q.primitive, size_bytes, lay, results[0]) \
        if q.algorithm == "auto" and len(results) == 1 else None
    unused = regimes_unused_note(lay.system, lay.nodes)
    gloo = _gloo_note(q.stack) if lay.ranks > 1 else None
    from hardware.notes import rate_mismatch_notes

    rates = "; ".join(rate_mismatch_notes(lay.system, lay.nodes > 1, lay.gpus_per_node > 1)) or None
    if change or unused or gloo or rates:
        results = [replace(r, note="; ".join(filter(None, (r.note, change, unused, gloo, rates)))) for r in results]
    return results


def _gloo_note(stack: str | None) -> str | None:
    """The note of gloo on a GPU cluster (:data:`costmodel.cluster.stacks.GLOO_ON_GPUS_NOTE`)."""
    if stack is None:
        return None
    from costmodel.cluster.stacks import GLOO_ON_GPUS_NOTE, Stack, stack_named

    return GLOO_ON_GPUS_NOTE if stack_named(stack) is Stack.GLOO else None


def _given(q: Query, names: tuple[str, ...]) -> list[str]:
    return [f"--{name.replace('_', '-')}" for name in names if getattr(q, name) is not None]


def _given_value(q: Query, flag: str) -> Any:
    """What the user gave for ``flag`` (``--alpha-inter``: ``q.alpha_inter``)."""
    return getattr(q, flag.removeprefix("--").replace("-", "_"))


def _check_link_nodes(q: Query, inter: list[str]) -> None:
    """A bare link's node size (``--gpus-per-node``) is the hierarchical algorithm's G and nothing
    else's (flat algorithms, and auto's and all's candidates, run over the one link), and its
    inter-node rates take part only when the ranks span more than one such node: each left out
    (``NotApplicableError``: a sweep leaves that combination out and says so) rather than ignored."""
    if q.cluster is not None:
        return
    hierarchical = q.algorithm not in ("auto", "all") and not _nccl_only(q) and get(q.primitive, q.algorithm).hierarchical
    if q.gpus_per_node is not None and not hierarchical:
        raise NotApplicableError("--gpus-per-node", q.gpus_per_node, "only with --algorithm hierarchical on a link or "
                                 "--alpha/--bandwidth (its ranks per node); the other algorithms run over the one link")
    if inter and q.ranks is not None:
        per_node = _link_node_size(q)
        if q.ranks <= per_node:
            given = _given(q, inter)[0]
            raise NotApplicableError(given, getattr(q, inter[0]), f"more --ranks than --gpus-per-node ({per_node}"
                                     f"{'' if q.gpus_per_node else ', its default'}): {q.ranks} ranks are one node, "
                                     "where the hierarchical algorithm has no inter-node level")


def _link_node_size(q: Query) -> int:
    """The hierarchical algorithm's G on a link: --gpus-per-node, else its parameter's default."""
    default = next(p.default for p in get(q.primitive, q.algorithm).params if p.name == "gpus_per_node")
    return q.gpus_per_node or default


def _hierarchical_in_one_node(q: Query) -> str | None:
    """The note of the hierarchical algorithm named on a link whose ranks fill one node at most:
    it has no inter-node level there, and its answer is its intra-node level's alone (it read as
    hierarchical's, unsaid; MISSION audit, 2026-11-30). The inter-node rates are refused there
    (:func:`_check_link_nodes`)."""
    if q.cluster is not None or q.ranks is None or q.algorithm in ("auto", "all") or _nccl_only(q):
        return None
    if not get(q.primitive, q.algorithm).hierarchical:
        return None
    per_node = _link_node_size(q)
    if q.ranks > per_node:
        return None
    return (f"{q.ranks} ranks are one node of --gpus-per-node {per_node}{'' if q.gpus_per_node else ' (its default)'}: "
            "hierarchical has no inter-node level here, and this is its intra-node level's time alone")


def check_conflicts(q: Query) -> None:
    """Hardware comes from exactly one source, and every parameter given is used: two sources, or a
    parameter the algorithm does not have, is an error naming both flags (never silently dropped)."""
    rates = _given(q, ("alpha", "bandwidth", "alpha_inter", "bandwidth_inter"))
    if q.cluster is not None and (rates or q.link is not None):
        other = rates[0] if rates else "--link"
        raise InputError(other, _given_value(q, other), f"left out with --cluster (its profile gives the links): "
                         f"--cluster or {other}, not both")
    if q.link is not None and rates:
        raise InputError(rates[0], _given_value(q, rates[0]), f"left out with --link (its profile gives α and "
                         f"bandwidth): --link or {rates[0]}, not both")
    if q.cluster is None and q.stack is not None and q.algorithm not in ("auto", "all"):
        raise InputError("--stack", q.stack, f"only with --algorithm auto (got --algorithm {q.algorithm})")
    named = backend_or_auto(q.backend)
    backend = "auto" if named is None else named.value
    check_stack_backend(q.stack, backend)  # the backend names the library itself
    if q.cluster is None and q.gpus_per_node is not None and q.gpus_per_node < 1:
        # a bare link's node size: the hierarchical algorithm checks that it divides the ranks
        # (flat ones run over one link, and a sweep over ranks leaves out only what it cannot answer)
        raise InputError("gpus_per_node", q.gpus_per_node, "an integer >= 1")
    if q.cluster is None and q.nodes != 1:  # a link's ranks are --ranks; nodes belong to a cluster
        raise InputError("--nodes", q.nodes, "only with --cluster (a link or --alpha/--bandwidth takes --ranks)")
    inter = [name for name in ("alpha_inter", "bandwidth_inter") if getattr(q, name) is not None]
    if inter and (q.algorithm in ("auto", "all") or not get(q.primitive, q.algorithm).hierarchical):
        raise InputError(_given(q, inter)[0], getattr(q, inter[0]),
                         "only with --algorithm hierarchical (the rates of its inter-node level)")
    _check_link_nodes(q, inter)
    given = _given_params(q)
    first = next(iter(given.items()), None)
    if "pipelined" in given and "chunks" in given and q.algorithm != "auto":
        # unpipelined is one chunk (-a all took both, reporting 4); a named algorithm lacking them says so
        if q.algorithm == "all" or _nccl_only(q) or {"pipelined", "chunks"} <= get(q.primitive, q.algorithm).param_names:
            raise _refuse_param("chunks", q.chunks, "left out with --no-pipeline (push everything, then pull: "
                                                    "one chunk)")
    if first and q.algorithm == "auto":  # the choice is the library's or the fastest: nothing would take them
        raise _refuse_param(*first, "a named --algorithm that takes it (or --algorithm all), not auto")
    if first and q.algorithm == "all" and q.cluster is not None and backend != Backend.IDEAL.value:
        # NCCL's and RCCL's models list their own algorithms, none of which takes them
        raise library_refusal(*first)
    if q.algorithm == "all":  # each algorithm takes its own; one none of them takes was dropped silently
        check_fields_taken([(q.primitive, "all")], {name: getattr(q, name) for name in given})
    if q.algorithm in ("auto", "all"):
        return
    if _nccl_only(q):  # NCCL's ring broadcast, its PAT: the backend decides whether it runs
        if first:
            raise _refuse_param(*first, f"an algorithm with a formula that takes it: {q.algorithm} {q.primitive} "
                                        "is NCCL's, timed by its model, which takes no parameters")
        return
    entry = get(q.primitive, q.algorithm)
    accepted = {param.name for param in entry.params}
    for name, value in given.items():
        if name not in accepted:
            raise _refuse_param(name, value, f"a parameter of {q.algorithm} {q.primitive}: "
                                             f"{', '.join(sorted(accepted)) or 'it has none'}")


def _nccl_only(q: Query) -> bool:
    """A name NCCL's model answers on a cluster but no registry formula has for the primitive."""
    from costmodel.collectives.registry import algorithms_for

    if q.cluster is None or algorithm_named_or_none(q.algorithm) in {a.value for a in algorithms_for(q.primitive)}:
        return False
    from costmodel.nccl.names import normalize_algorithm

    try:
        normalize_algorithm(q.algorithm)
    except UnknownNameError:
        return False
    return True


def algorithm_named_or_none(name: str) -> str | None:
    try:
        return algorithm_named(name).value
    except UnknownNameError:
        return None


def ideal_only(backend: str | None) -> None:
    """Refuse a realistic backend without a cluster: a bare link or α/β has only the ideal one."""
    named = backend_or_auto(backend)
    if named not in (None, Backend.IDEAL):
        raise InputError("backend", named.value, f"--backend {named.value} together with --cluster SYSTEM "
                         "(a bare link or --alpha/--bandwidth has only the ideal backend)")


COUNT_FIELDS = ("ranks", "nodes", "gpus_per_node", "servers", "chunks")


def _is_link(value) -> bool:
    from hardware import Link

    return isinstance(value, Link)


NAME_FIELDS = ("algorithm", "backend", "stack")  # text the query reads as a name


def _whole_counts(q: Query) -> Query:
    """The query with its counts as Python integers (a numpy integer is one; 1.5, "2" or True
    are not), each refused by name otherwise; the cluster a name, a path (str or os.PathLike) or a
    System, the link a name, a path or a hardware.Link; the names text (an algorithm of 0 or ""
    read as auto, 5 raised AttributeError; review, 2026-11-29)."""
    import os

    for field in NAME_FIELDS:
        value = getattr(q, field)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise InputError(field, value, "a name (text), e.g. " + {"algorithm": "ring or auto",
                                                                  "backend": "auto, ideal, nccl or rccl",
                                                                  "stack": "nccl, rccl, mpi or gloo"}[field])
    if isinstance(q.cluster, os.PathLike):
        q = replace(q, cluster=os.fspath(q.cluster))
    if isinstance(q.link, os.PathLike):
        q = replace(q, link=os.fspath(q.link))
    if q.link is not None and not isinstance(q.link, str) and not _is_link(q.link):
        raise InputError("link", q.link, "a link name, a TOML path or a hardware.Link")
    if q.cluster is not None and not isinstance(q.cluster, str):  # hardware only where a cluster is given
        from hardware import system_of

        system_of(q.cluster)  # a System built in Python, checked before the size
    if q.chunks is not None:  # "auto" the default, as the CLI and sweep read it (predict refused it)
        q = replace(q, chunks=chunks_of(q.chunks))
    counts = {field: whole_count(field, getattr(q, field)) for field in COUNT_FIELDS
              if getattr(q, field) is not None or field == "nodes"}
    return replace(q, **counts) if any(counts[f] is not getattr(q, f) for f in counts) else q


SIZE_ALLOWED = "a message size: bytes, or text with a unit such as 256MiB"
SWITCHES = ("colocated", "pipelined", "leaders")  # the query's switches: True or False, never text read as truth


def run_query(q: Query) -> list[Prediction]:
    """Predictions for the query, fastest first when several algorithms are asked for."""
    q = _whole_counts(q)
    unset = {name: Query.__dataclass_fields__[name].default for name in SWITCHES if getattr(q, name) is None}
    if unset:  # None: the default, as iteration and plan read their switches' None
        q = replace(q, **unset)
    for name in SWITCHES:  # PARAMETERS reads them by truth: colocated="no" was colocated
        check_switch(name, getattr(q, name))
    # an alias or spelling read as its primitive here, once: the cluster path took only the canonical
    # name ("allreduce" on a cluster was a ValueError traceback; API audit, 2026-11-30)
    q = replace(q, primitive=primitive_named(q.primitive).value)
    if q.algorithm not in ("auto", "all"):
        _known_algorithm(q)
    check_conflicts(q)  # refuses an unknown backend too, before the size
    if q.size is None:  # a Query without a size answered 0 bytes (API review, 2026-11-29)
        raise InputError("size", None, SIZE_ALLOWED)
    size_bytes = parse_message_size(q.size, "size")
    gamma = parse_time(q.gamma, "gamma")
    check_reduction_time(q.primitive, gamma, "gamma", q.gamma)  # as every option an algorithm does not use
    if q.cluster is not None:
        results = _on_cluster(q, size_bytes, gamma)
    else:
        ideal_only(q.backend)
        results = _ideal(q, size_bytes, gamma)
        one_node = _hierarchical_in_one_node(q)
        if one_node:
            results = [replace(r, note="; ".join(filter(None, (r.note, one_node)))) for r in results]
    if size_bytes == 0:
        results = [_empty(r) for r in results]
    results.sort(key=lambda r: (r.time_s, r.algorithm))
    if results and results[0].ranks == 1 and q.algorithm in ("auto", "all"):
        return [_one_rank(results[0])]
    if results and size_bytes == 0 and q.algorithm in ("auto", "all"):  # not a tie of every algorithm at 0
        return [empty_answer(results[0])]
    return results[:1] if q.algorithm == "auto" else results


def _known_algorithm(q: Query) -> None:
    check_algorithm_name(q.algorithm, on_cluster=q.cluster is not None)


def check_algorithm_name(name: str, on_cluster: bool) -> None:
    """A registry algorithm, or on a cluster one NCCL names (``pat``: NCCL's model answers it);
    else the registry's one-line error. Whether the backend runs it is the backend's to say
    (``collective``, ``sweep`` and the charts ask here)."""
    try:
        algorithm_named(name)
    except UnknownNameError:
        if not on_cluster:
            raise
        from costmodel.nccl.names import normalize_algorithm

        try:
            normalize_algorithm(name)
        except UnknownNameError:
            from costmodel.nccl.names import ALGORITHMS

            raise UnknownNameError("algorithm", name,
                                   list(dict.fromkeys([a.value for a in Algorithm] + list(ALGORITHMS)))) from None


def empty_note(stack: str) -> str:
    """What a 0-byte answer says (``collective``'s and ``nccl-table``'s): ``stack`` NCCL or RCCL."""
    return f"0 bytes: nothing to move ({stack} discards an empty collective without a kernel)"


def _empty(result: Prediction) -> Prediction:
    """A call of 0 bytes costs nothing: NCCL discards an empty collective before launching a kernel
    (src/enqueue.cc, "Empty collectives can be discarded"; RCCL keeps that code), and no algorithm
    has anything to move; nccl-tests times its size-0 row at its own ~0.3 µs of host work. The
    numbers come so from every backend (the formulas' evaluation, the cluster mapping, nccl_time,
    RCCL's estimate); the answer adds what it means."""
    return replace(result, note=empty_note("RCCL" if result.backend == "rccl" else "NCCL"))


def empty_answer(result: Prediction) -> Prediction:
    """The one answer to a 0-byte call whose algorithm is the stack's choice: nothing moves, so no
    algorithm (not a tie of every algorithm at 0). ``collective`` and ``nccl-table`` give it."""
    return replace(_empty(result), algorithm=NO_ALGORITHM, protocol="none" if result.protocol else None,
                   bottleneck=None)


def _one_rank(result: Prediction) -> Prediction:
    """One rank communicates nothing: one answer, not a tie of every algorithm at zero."""
    return replace(result, algorithm=NO_ALGORITHM, protocol="none" if result.protocol is not None else None,
                   algbw_Bps=None, busbw_Bps=None, bottleneck=None,
                   note="one rank: nothing to communicate, every algorithm costs 0")
