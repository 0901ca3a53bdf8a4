"""``dpcost formula``, ``dpcost collective`` and ``dpcost compare``."""

import math
from typing import Annotated, Optional

from costmodel.collectives.prediction import Prediction
from costmodel.commands import complete
from costmodel.commands.common import algorithm_fields, cli_errors, echo, print_json
from costmodel.commands.options import (
    ALPHA,
    CHUNKS,
    COLOCATED,
    GPUS_PER_NODE,
    JSON,
    LEADERS,
    NO_PIPELINE,
    NODES,
    SERVERS,
    Argument,
    Option,
)
from costmodel.commands.textfmt import pairs, table
from costmodel.names import REALISTIC_BACKENDS
from dpbase.units import format_bandwidth, format_size, format_time

RANKS = Annotated[Optional[int], Option("--ranks", "-N", help="Number of ranks N (default: nodes × GPUs per node of --cluster).")]
SIZE = Annotated[str, Option("--size", "-n", help="Message size with nccl-tests' meaning, e.g. 4GB, 256MiB.")]
BANDWIDTH = Annotated[Optional[str], Option("--bandwidth", help="Link bandwidth per direction, e.g. 25GB/s, 100Gbps.")]
GAMMA = Annotated[str, Option("--gamma", help="Reduction time per byte, e.g. 0.1ns (0 by default); refused where NCCL's model answers (it times the reduction itself) and for a collective that reduces nothing.")]
CLUSTER = Annotated[Optional[str], Option("--cluster", help="A system profile name or TOML path (instead of --alpha/--bandwidth).", autocompletion=complete.systems)]
LINK = Annotated[Optional[str], Option("--link", help="A link profile (name or TOML, e.g. from `dpcost calibrate -o`).", autocompletion=complete.links)]
BACKEND = Annotated[str, Option("--backend", help="auto (realistic: NCCL's model on NVIDIA clusters, RCCL's tuning model on AMD; ideal on a bare link), ideal (textbook α-β-γ), nccl or rccl.")]
STACK = Annotated[Optional[str], Option("--stack", help="nccl, rccl, mpi or gloo: what auto may pick under the α-β backends (default: the cluster's; none on a bare link). Another library than the cluster's own is timed on the α-β mapping under auto; refused with --backend nccl or rccl.")]


def _row(p: Prediction, winner: bool, servers: bool = False) -> dict[str, str]:
    """One algorithm's line of ``compare``; ``servers``: a column for the busiest dedicated server or
    reducing switch (where the parameter server's bottleneck is: its ranks each send only n)."""
    row = {"algorithm": p.algorithm + (" *" if winner else "") + (" †" if p.stack_runs is False else "")}
    if p.backend in REALISTIC_BACKENDS:  # each algorithm with its stack's protocol
        row["protocol"] = p.protocol or "-"
    row |= {"time": _time_text(p), "latency": format_time(p.latency_s),
            "bandwidth": format_time(p.bandwidth_s),
            "steps": f"{p.steps:.6g}" if p.has_traffic else "-",
            "sent/rank": format_size(p.bytes_sent_max) if p.has_traffic else "-"}
    if servers:
        row["server/switch"] = format_size(p.bytes_aux_max) if p.has_traffic and p.bytes_aux_max else "-"
    row["busbw"] = format_bandwidth(p.busbw_Bps) if p.busbw_Bps is not None else "-"
    return row


def _ranks_bound_s(results: list[Prediction]) -> float:
    """The primitive's bound where the ranks reduce (every such algorithm's is the same); only where
    every algorithm aggregates off the ranks (dedicated servers, switches: a machine of its own,
    :func:`costmodel.collectives.bounds.off_rank`), the smallest of theirs."""
    from costmodel.collectives.bounds import off_rank
    from costmodel.collectives.registry import get

    on_ranks = [r.lower_bound_s for r in results if r.lower_bound_s is not None
                and not off_rank(get(r.primitive, r.algorithm), r.params or {})]
    return on_ranks[0] if on_ranks else min(r.lower_bound_s for r in results if r.lower_bound_s is not None)


def _bound_label(results: list[Prediction]) -> str:
    """What the footer's bound bounds: where some algorithm aggregates off the ranks (a switch
    that reduces, dedicated servers) and others on them, the bound is the ranks' (an in-network
    winner at 210.8 µs sat under "lower bound: 307.7 µs"; an audit of the CLI, 2026-11-30)."""
    from costmodel.collectives.bounds import off_rank
    from costmodel.collectives.registry import get

    kinds = {off_rank(get(r.primitive, r.algorithm), r.params or {}) for r in results if r.lower_bound_s is not None}
    return "lower bound where the ranks reduce" if kinds == {True, False} else "lower bound"


def _bandwidth_text(value: float | None) -> str:
    return format_bandwidth(value) if value is not None and math.isfinite(value) else "-"


def _time_text(p: Prediction) -> str:
    """'1.24 ms (0.98–1.61)': the time and, for a realistic backend, its out-of-sample interval."""
    if p.interval_s is None:
        return format_time(p.time_s)
    low, high = p.interval_s
    if low <= p.time_s <= high:
        return f"{format_time(p.time_s)} ({format_time(low)}–{format_time(high)})"
    # the band is where measured runs of the class land against this model's answers; a model that
    # errs one way (the textbook one, too fast) sits outside it, which read as a band that missed
    # its own point (MISSION audit, 2026-11-30)
    side = "fast" if p.time_s < low else "slow"
    return f"{format_time(p.time_s)} (measured runs: {format_time(low)}–{format_time(high)}; this model runs {side} here)"


def _describe(p: Prediction) -> str:
    items = [("primitive", p.primitive), ("algorithm", p.algorithm), ("ranks", str(p.ranks)),
             ("size", format_size(p.size_bytes)), ("time", _time_text(p)),
             ("  latency (α)", format_time(p.latency_s)), ("  bandwidth (β)", format_time(p.bandwidth_s)),
             ("  reduction (γ)", format_time(p.reduction_s))]
    if p.has_traffic:  # traffic of the registry algorithm NCCL's one mirrors (absent for, e.g., PAT)
        items += [("steps (α count)", f"{p.steps:.6g}"),
                  ("sent by busiest rank", format_size(p.bytes_sent_max)),
                  ("received by busiest rank", format_size(p.bytes_received_max)),
                  ("total on links", format_size(p.bytes_total))]
    if p.bytes_aux_max:
        items.append(("busiest server/switch", format_size(p.bytes_aux_max)))
    if p.algbw_Bps is not None:
        items += [("algbw", _bandwidth_text(p.algbw_Bps)), ("busbw", _bandwidth_text(p.busbw_Bps))]
    if p.source == "measured" or (p.note and "not measured" in p.note):  # a calibrated cluster
        items.append(("source", p.source or "model"))
    # said by the realistic backends' notes and by a fall-back's; the textbook's asked for was unsaid
    if p.cluster and p.backend == "ideal" and "ideal backend" not in (p.note or ""):
        items.append(("backend", "ideal (the textbook α-β-γ model on the cluster's links)"))
    if p.note:
        items.append(("note", p.note))
    if p.lower_bound_s is not None:  # the ideal backend's Chan et al. bound; NCCL mode has none
        items.append(("lower bound", format_time(p.lower_bound_s)))
    if p.nccl_model_time_s is not None:
        if p.launch_overhead_s is not None:
            items.append(("  launch overhead", format_time(p.launch_overhead_s)))
        stack = "RCCL" if p.backend == "rccl" else "NCCL"
        items.append((f"{stack} {p.nccl_version or ''} own estimate".replace("  ", " "), format_time(p.nccl_model_time_s)))
    for key, value in (("protocol", p.protocol), ("nodes", p.nodes), ("gpus_per_node", p.gpus_per_node),
                       ("bottleneck", p.bottleneck)):
        if value not in (None, ""):
            items.append((key, str(value)))
    if p.params:
        items.append(("parameters", ", ".join(f"{k}={v}" for k, v in p.params.items())))
    return pairs(items)


@cli_errors
def formula(
    primitive: Annotated[str, Argument(help="broadcast scatter gather reduce all-reduce all-gather reduce-scatter all-to-all send-recv", autocompletion=complete.primitives)],
    algorithm: Annotated[Optional[str], Argument(help="An algorithm; all of the primitive's when omitted.", autocompletion=complete.algorithms)] = None,
    latex: Annotated[bool, Option("--latex", help="Print LaTeX.")] = False,
    colocated: COLOCATED = False,
    no_pipeline: NO_PIPELINE = False,
    leaders: LEADERS = False,
    json_: JSON = False,
) -> None:
    """Show the symbolic α-β-γ formula(s), conditions, lower bound and source.

    Example: dpcost formula all-reduce ring --latex
    """
    from costmodel.collectives.registry import algorithms_for
    from costmodel.collectives.symbolic import formula as build
    from dpbase.errors import InputError

    # the flags that select another form of a formula, as `collective` takes them
    forms = {"colocated": ("--colocated", colocated, True), "pipelined": ("--no-pipeline", no_pipeline, False),
             "leaders": ("--leaders", leaders, True)}
    fixed = {name: value for name, (_, given, value) in forms.items() if given}
    if fixed and algorithm is None:  # build() refuses one the algorithm lacks (Entry.check_params)
        raise InputError(forms[next(iter(fixed))][0], True, "with a named algorithm that takes it (e.g. formula "
                         "all-reduce hierarchical --leaders)")
    names = [algorithm] if algorithm is not None else [a.value for a in algorithms_for(primitive)]
    found = [build(primitive, name, **fixed) for name in names]
    if json_:
        print_json([f.to_dict() for f in found] if algorithm is None else found[0].to_dict())
        return
    for f in found:
        d = f.to_dict()
        time = d["time_latex"] if latex else d["time"]
        bound = d["lower_bound_latex"] if latex else d["lower_bound"]
        echo(pairs([("formula", f"{d['primitive']} / {d['algorithm']}"), ("summary", d["summary"]),
                          ("time", time), ("lower bound", bound),
                          *([("where", "; ".join(d["where"]))] if d["where"] else []),
                          ("conditions", "; ".join(d["conditions"]) or "any N ≥ 1"),
                          ("parameters", ", ".join(f"{k}: {v}" for k, v in d["parameters"].items()) or "none"),
                          ("source", d["source"])]) + "\n")


@cli_errors
def collective(
    primitive: Annotated[str, Argument(help="The collective primitive, e.g. all-reduce.", autocompletion=complete.primitives)],
    size: SIZE,
    algorithm: Annotated[str, Option("--algorithm", "-a", help="An algorithm, or auto (the fastest).", autocompletion=complete.algorithms)] = "auto",
    ranks: RANKS = None,
    alpha: ALPHA = None,
    bandwidth: BANDWIDTH = None,
    gamma: GAMMA = "0s",
    cluster: CLUSTER = None,
    nodes: NODES = 1,
    gpus_per_node: GPUS_PER_NODE = None,
    link: LINK = None,
    backend: BACKEND = "auto",
    stack: STACK = None,
    servers: SERVERS = None,
    colocated: COLOCATED = False,
    no_pipeline: NO_PIPELINE = False,
    chunks: CHUNKS = None,
    leaders: LEADERS = False,
    alpha_inter: Annotated[Optional[str], Option("--alpha-inter", help="Hierarchical: inter-node latency.")] = None,
    bandwidth_inter: Annotated[Optional[str], Option("--bandwidth-inter", help="Hierarchical: inter-node bandwidth.")] = None,
    json_: JSON = False,
) -> None:
    """Predict one collective: time, its α/β/γ parts, steps and traffic.

    Example: dpcost collective all-reduce --algorithm ring --ranks 8 --size 4GB --alpha 5us --bandwidth 25GB/s
    """
    from costmodel.cluster.query import Query, run_query

    query = Query(primitive=primitive, algorithm=algorithm, ranks=ranks, size=size, alpha=alpha,
                  bandwidth=bandwidth, gamma=gamma, cluster=cluster, nodes=nodes, gpus_per_node=gpus_per_node,
                  link=link, backend=backend, stack=stack, alpha_inter=alpha_inter, bandwidth_inter=bandwidth_inter,
                  **algorithm_fields(servers, colocated, no_pipeline, chunks, leaders))
    result = run_query(query)[0]
    if json_:
        print_json(result)
    else:
        echo(_describe(result))


@cli_errors
def compare(
    primitive: Annotated[str, Argument(help="The collective primitive, e.g. all-reduce.", autocompletion=complete.primitives)],
    size: SIZE,
    ranks: RANKS = None,
    alpha: ALPHA = None,
    bandwidth: BANDWIDTH = None,
    gamma: GAMMA = "0s",
    cluster: CLUSTER = None,
    nodes: NODES = 1,
    gpus_per_node: GPUS_PER_NODE = None,
    link: LINK = None,
    backend: BACKEND = "auto",
    stack: STACK = None,
    servers: SERVERS = None,
    colocated: COLOCATED = False,
    no_pipeline: NO_PIPELINE = False,
    chunks: CHUNKS = None,
    leaders: LEADERS = False,
    json_: JSON = False,
) -> None:
    """Rank every applicable algorithm, fastest first, with the lower bound; the winner is marked *.

    Example: dpcost compare all-reduce --ranks 64 --size 1MB --alpha 5us --bandwidth 25GB/s
    """
    from costmodel.cluster.query import Query, run_query

    query = Query(primitive=primitive, algorithm="all", ranks=ranks, size=size, alpha=alpha, bandwidth=bandwidth,
                  gamma=gamma, cluster=cluster, nodes=nodes, gpus_per_node=gpus_per_node, link=link,
                  backend=backend, stack=stack, **algorithm_fields(servers, colocated, no_pipeline, chunks, leaders))
    results = run_query(query)
    winner = next((i for i, r in enumerate(results) if r.nccl_choice),
                  next((i for i, r in enumerate(results) if r.stack_runs is not False), 0))
    if json_:
        print_json([{**r.to_dict(), "winner": i == winner} for i, r in enumerate(results)])
        return
    servers = any(r.has_traffic and r.bytes_aux_max for r in results)
    echo(table([_row(r, i == winner, servers) for i, r in enumerate(results)]))
    if results and results[0].note:
        library = "RCCL" if any(r.backend == "rccl" for r in results) else "NCCL"  # the backend that answered
        marked = next((r for r in results if r.nccl_choice), None)
        # an MSCCL schedule is what RCCL runs, past its tuning model: no estimate chose it (review, 2026-11-30)
        chosen = ("" if marked is None else "; * = what RCCL runs (MSCCL's schedule, not its tuning model's choice)"
                  if marked.backend == "rccl" and marked.nccl_model_time_s is None
                  else f"; * = {library}'s own choice (by its estimate)")
        echo(f"\n{results[0].note}{chosen}")
    elif results and results[0].lower_bound_s is not None:
        unrun = "; † = the stack does not run it (auto never picks it)" if any(r.stack_runs is False for r in results) else ""
        echo(f"\n{_bound_label(results)}: {format_time(_ranks_bound_s(results))}  (* = fastest{unrun})")
    elif results:
        echo(f"\nNCCL {results[0].nccl_version or ''} tuning model, fastest first; * = NCCL's own choice (by its estimate)")
