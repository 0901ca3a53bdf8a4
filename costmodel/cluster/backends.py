"""The one backend dispatch: a collective on a :class:`~costmodel.cluster.mapping.Layout`
under the ideal α-β-γ mapping or NCCL's model, always as a :class:`Prediction`.

``algorithm`` is ``"auto"`` (the fastest; in NCCL mode NCCL's own choice), ``"all"`` (every
algorithm that runs here, fastest first) or a name (registry or NCCL spelling).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from costmodel.cluster.intervals import interval_s
from costmodel.cluster.mapping import Layout, LayoutCache, cluster_candidates, predict_on_cluster
from costmodel.cluster.stacks import Stack, default_stack, resolve_backend, runs, stack_named
from costmodel.collectives.entry import Entry
from costmodel.collectives.evaluate import predict_entry
from costmodel.collectives.prediction import Prediction
from costmodel.collectives.registry import get
from costmodel.names import Backend, backend_or_auto, primitive_named
from dpbase.errors import DpcostError, NotApplicableError
from dpbase.values import replace

ParamsFor = Callable[[Entry], dict[str, Any]]


def bottleneck_link(lay: Layout) -> str:
    """The link NCCL mode charges: the NICs across nodes, else the intra-node fabric."""
    return lay.system.intra_link.name if lay.one_domain else lay.system.nic_link.name


_TOPOLOGIES = LayoutCache(64)


def nccl_topology(lay: Layout, tables: Any = None) -> Any:
    """NCCL's graph search for this layout, cached by the system's value (:class:`LayoutCache`)."""
    from costmodel.nccl import load_tables, topology_for

    if tables is not None and tables is not load_tables():  # user tuning tables: not shared
        return topology_for(lay.system, lay.nodes, lay.gpus_per_node, tables=tables)
    return _TOPOLOGIES.get(lay, lambda where: topology_for(where.system, where.nodes, where.gpus_per_node))


def _mirror_traffic(primitive: str, ranks: int, size_bytes: float, nccl_algorithm: str, latency_s: float,
                    bandwidth_Bps: float) -> dict[str, Any]:
    """Step and byte counts of the registry algorithm NCCL's algorithm mirrors (none for PAT)."""
    from costmodel.nccl.names import REGISTRY_MIRROR

    mirror = REGISTRY_MIRROR.get(nccl_algorithm)
    if mirror is None:
        return {}
    try:
        entry = get(primitive, mirror)
    except NotApplicableError:  # the mirror does not implement this collective
        return {}
    ideal = predict_entry(entry, ranks, size_bytes, max(latency_s, 1e-9), bandwidth_Bps)
    return {"steps": ideal.steps, "bytes_sent_max": ideal.bytes_sent_max,
            "bytes_received_max": ideal.bytes_received_max, "bytes_total": ideal.bytes_total,
            "bytes_aux_max": ideal.bytes_aux_max}


def nccl_prediction(primitive: str, size_bytes: float, lay: Layout, topo: Any, algorithm: str = "auto",
                    tables: Any = None) -> Prediction:
    """NCCL's choice (or the forced algorithm) and the time nccl-tests would report."""
    from costmodel.nccl import nccl_time
    from costmodel.nccl.names import COLLECTIVES, to_nccl_algorithm

    collective = primitive_named(primitive).value
    try:
        p = nccl_time(collective, size_bytes, topo, tables, algorithm=to_nccl_algorithm(algorithm))
    except NotApplicableError:
        # NCCL's model lacks the collective itself (all-to-all, scatter …): that, not which of its
        # algorithms run, is the answer (listing them for scatter was a KeyError traceback; audit 2026-11-30)
        if algorithm == "auto" or collective not in COLLECTIVES:
            raise
        raise _not_run(collective, algorithm, lay, topo, tables) from None
    return Prediction(
        primitive=p.collective, algorithm=p.algorithm, protocol=p.protocol, backend=Backend.NCCL.value,
        ranks=lay.ranks, size_bytes=float(size_bytes), time_s=p.time_s, latency_s=p.latency_s,
        bandwidth_s=max(0.0, p.time_s - p.latency_s - p.launch_overhead_s), reduction_s=0.0,
        # nothing moves (one rank, 0 bytes): no bandwidth, as the ideal model's (inf and NaN were not JSON)
        **({"algbw_Bps": None, "busbw_Bps": None, "bandwidth_Bps": None} if p.n_ranks == 1 or size_bytes == 0 else
           {"algbw_Bps": p.algbw_Bps, "busbw_Bps": p.busbw_Bps, "bandwidth_Bps": p.bandwidth_Bps}),
        launch_overhead_s=p.launch_overhead_s, nccl_model_time_s=p.model_time_s, nccl_version=p.nccl_version,
        cluster=lay.system.name, nodes=lay.nodes, gpus_per_node=lay.gpus_per_node, bottleneck=bottleneck_link(lay),
        stack_runs=True, nccl_choice=True if algorithm == "auto" else None,  # auto is NCCL's choice; a forced one: not asked
        # the job's ranks: an NVL72 topology's even domains may hold a few more (System.nvlink_domains)
        **_mirror_traffic(primitive, lay.ranks, size_bytes, p.algorithm, p.latency_s, p.bandwidth_Bps))


def _not_run(collective: str, algorithm: str, lay: Layout, topo: Any, tables: Any) -> NotApplicableError:
    """The user's algorithm, in the user's words, and what NCCL does run there (not NCCL's
    internal algorithm/protocol pair: `--algorithm in-network` on a DGX-1 named 'nvls/auto')."""
    from costmodel.nccl.names import REGISTRY_MIRROR
    from costmodel.nccl.selection import candidates
    from costmodel.nccl.tables import load_tables

    runs_here = dict.fromkeys(REGISTRY_MIRROR.get(row[0], row[0])
                              for row in candidates(collective, topo, tables or load_tables()))
    return NotApplicableError("algorithm", algorithm, f"one NCCL runs for {collective} on {lay.system.name}: "
                              + ", ".join(["auto", *runs_here]) + " (--backend ideal times the textbook algorithms)")


def _nccl_every(primitive: str, size_bytes: float, lay: Layout, topo: Any, tables: Any) -> list[Prediction]:
    """Every algorithm NCCL's model has for the collective (each with its best protocol);
    ``nccl_choice`` marks the one NCCL picks by its own estimate."""
    from costmodel.nccl.names import algorithms_for, normalize_collective

    found = []
    for name in algorithms_for(normalize_collective(primitive_named(primitive).value)):
        try:
            found.append(nccl_prediction(primitive, size_bytes, lay, topo, name, tables))
        except DpcostError:  # not enabled on this topology (e.g. NVLS without NVSwitch gen3)
            continue
    chosen = nccl_prediction(primitive, size_bytes, lay, topo, "auto", tables).algorithm
    return [replace(p, nccl_choice=p.algorithm == chosen) for p in found]


RCCL_NOTE = ("rccl backend: RCCL's own tuning model (constants of RCCL {version}) picks the algorithm and "
             "protocol; the time is that algorithm's on the α-β mapping with the profiles' measured "
             "efficiencies, its bandwidth term at the protocol's bytes on the wire (LL 2x, LL128 8/7) "
             "(RCCL's own estimate is in nccl_model_time_s)")


# A named algorithm RCCL does not run, on a call its tuning model decides (as outside_nccl's note)
NOT_RCCL_NOTE = ("{algorithm} is not an RCCL algorithm: textbook α-β-γ model (ideal backend); RCCL itself "
                 "would run {runs} here")


def _rccl_note() -> str:
    from costmodel.nccl.rccl import rccl_tables

    return RCCL_NOTE.format(version=rccl_tables()["version"])


def _rccl_marked(p: Prediction, choice: Any, chosen: bool) -> Prediction:
    """An α-β prediction of an algorithm RCCL runs, at RCCL's protocol's bytes on the wire
    (:func:`~costmodel.cluster.rccl_choice.on_the_wire`), with the protocol and RCCL's own estimate
    (0 for a 0-byte call, which RCCL discards before a kernel, as NCCL does: nccl_time's rule)."""
    from costmodel.cluster.rccl_choice import on_the_wire

    estimate_s = choice.model_time_us * 1e-6 if p.size_bytes > 0 else 0.0
    return replace(on_the_wire(p, choice.protocol), protocol=choice.protocol, nccl_model_time_s=estimate_s,
                   nccl_choice=chosen, nccl_version=choice.rccl_version)


def _ideal(primitive: str, size_bytes: float, lay: Layout, algorithm: str, gamma_s_per_byte: float,
           params_for: ParamsFor, stack: Stack, backend: Backend) -> list[Prediction]:
    candidates = cluster_candidates(primitive, lay)
    if algorithm == "auto" or (algorithm == "all" and backend is Backend.RCCL):
        candidates = [e for e in candidates if runs(stack, e.primitive, e.algorithm)]
    if not candidates and algorithm in ("auto", "all"):
        raise NotApplicableError("algorithm", algorithm, f"an algorithm of {primitive} that {stack.value} runs "
                                 f"on {lay.system.name} (name one with --algorithm)")
    rccl = backend is Backend.RCCL
    name = primitive_named(primitive).value
    auto_choice, schedule = None, None
    if rccl:
        from costmodel.cluster.rccl_choice import MSCCL_ALGORITHM, msccl, msccl_prediction, pick, registry_algorithm

        # what RCCL runs under auto: MSCCL's all-pairs schedule (a two-shot) where it takes the call, for
        # auto, all and two-shot named; for another name, what the note of an algorithm RCCL lacks says
        auto_msccl = msccl(name, size_bytes, lay)
        schedule = auto_msccl if algorithm in ("auto", "all", MSCCL_ALGORITHM) else None
        if schedule is not None and algorithm in ("auto", MSCCL_ALGORITHM):  # past RCCL's tuning model
            return [msccl_prediction(schedule, lay, size_bytes, gamma_s_per_byte)]
        auto_choice = pick(name, size_bytes, lay) if schedule is None else None
        picked = [e for e in candidates
                  if auto_choice is not None and e.algorithm.value == registry_algorithm(auto_choice)]
        if algorithm == "auto" and picked:
            candidates = picked
    chosen = candidates if algorithm in ("auto", "all") else [get(primitive, algorithm)]
    extra = {"backend": backend.value, "note": _rccl_note()} if rccl else {}
    out = []
    for e in chosen:
        p = replace(predict_on_cluster(primitive, e.algorithm.value, lay, size_bytes=size_bytes,
                                       gamma_s_per_byte=gamma_s_per_byte, **params_for(e)),
                    stack_runs=runs(stack, e.primitive, e.algorithm), **extra)
        choice = pick(name, size_bytes, lay, e.algorithm.value) if rccl else None
        if choice is not None:
            p = _rccl_marked(p, choice, auto_choice is not None and choice.algorithm == auto_choice.algorithm)
        elif rccl and algorithm != "all" and (auto_choice is not None or auto_msccl is not None):
            # named, and not RCCL's: the textbook's, saying what RCCL runs instead
            runs_instead = (f"MSCCL's all-pairs {MSCCL_ALGORITHM} ({auto_msccl.protocol})" if auto_msccl is not None
                            else f"{registry_algorithm(auto_choice)} ({auto_choice.protocol})")
            p = replace(p, backend=Backend.IDEAL.value,
                        note=NOT_RCCL_NOTE.format(algorithm=e.algorithm.value, runs=runs_instead))
        out.append(p)
    if schedule is not None:  # every algorithm: MSCCL's schedule is the one RCCL runs
        out.insert(0, msccl_prediction(schedule, lay, size_bytes, gamma_s_per_byte))
    return out


# An explicit --backend ideal on a calibrated cluster is the textbook α-β-γ model: its measured
# curves neither answer nor scale it (they did, as "ideal" scaled by a measured ratio)
IDEAL_SKIPS_MEASURED = ("the cluster's measured curves are left out with --backend ideal (the textbook model); "
                        "leave --backend unset for them")


def curves_left_out(system: Any, backend: str | Backend | None, stack: str | Stack | None = None) -> str | None:
    """Why a calibrated cluster's measured curves do not answer, or None where they do (or there
    are none). They measured the system's own library under its realistic backend: not the
    textbook model an explicit ``backend="ideal"`` asks for, nor another library's ``stack``
    (gloo on NVIDIA was answered by the NCCL curve). One rule for collective, iteration and plan."""
    if not getattr(system, "measured", ()):
        return None
    if backend_or_auto(backend) is Backend.IDEAL:
        return IDEAL_SKIPS_MEASURED
    own = default_stack(system)
    if stack is not None and stack_named(stack) is not own:
        return (f"the cluster's measured curves ({own.value}'s) are left out with --stack {stack_named(stack).value} "
                "(that library is timed on the model)")
    return None


def predict_collective(primitive: str, size_bytes: float, lay: Layout, *, algorithm: str = "auto",
                       backend: str | Backend | None = None, stack: str | Stack | None = None,
                       gamma_s_per_byte: float = 0.0, params_for: ParamsFor | None = None, topo: Any = None,
                       tables: Any = None) -> list[Prediction]:
    """Predictions for one collective on the layout, fastest first (one for ``auto`` or a name).

    ``backend`` None/"auto" is the system's realistic backend (NCCL on NVIDIA, RCCL on AMD);
    ``stack`` (default: the system's) limits what ``auto`` may pick under the α-β backends; another
    library than the system's own resolves ``auto`` to them (:func:`resolve_backend`).
    """
    asked = backend_or_auto(backend)  # None: auto (the measured layer asks the model the same way)
    left_out = curves_left_out(lay.system, asked, stack)
    backend, fallback = backend_for(primitive, backend, lay.system, stack, algorithm)
    stack = stack_named(stack) if stack is not None else default_stack(lay.system)
    if backend is Backend.NCCL:
        topo = topo if topo is not None else nccl_topology(lay, tables)
        if algorithm == "all":
            results = _nccl_every(primitive, size_bytes, lay, topo, tables)
        else:
            results = [nccl_prediction(primitive, size_bytes, lay, topo, algorithm, tables)]
    else:
        results = _ideal(primitive, size_bytes, lay, algorithm, gamma_s_per_byte, params_for or (lambda e: {}),
                         stack, backend)
    # every backend on a cluster says how sure it is: the ideal one from its own (wide) errors
    results = [replace(r, interval_s=interval_s(lay.system, lay.nodes, size_bytes, r.time_s,
                                                 backend is Backend.IDEAL or r.backend == Backend.IDEAL.value),
                       note=fallback or r.note) for r in results]
    if left_out:
        from costmodel.cluster.measured import join_notes

        results = [replace(r, note=join_notes(r.note, left_out)) for r in results]
    elif getattr(lay.system, "measured", ()):
        from costmodel.cluster.measured import calibrated
        from hardware.given import derived_system

        def model(prim: str, size: float, algo: str, where: Layout) -> list[Prediction]:
            bare = replace(where, system=derived_system(where.system, measured=()))
            return predict_collective(prim, size, bare, algorithm=algo,
                                      backend=asked, stack=stack)

        results = calibrated(primitive, size_bytes, lay, algorithm, results, model, backend.value)
    results = [r if r.source else replace(r, source="model") for r in results]
    results.sort(key=lambda r: (r.time_s, r.algorithm))
    return results[:1] if algorithm == "auto" else results


def choice_change_note(primitive: str, size_bytes: float, lay: Layout, chosen: Prediction) -> str | None:
    """Say when NCCL's own choice differs from its choice at half the size.

    With the algorithm and protocol fixed, NCCL mode's time never falls as the size grows; NCCL's
    choice can change between neighbouring sizes (e.g. LL to Simple), and then it can. The note
    names both choices and whether the time at half the size was the larger.
    """
    if chosen.backend != Backend.NCCL.value or chosen.protocol is None or size_bytes < 2 or chosen.ranks < 2:
        return None
    half = nccl_prediction(primitive, size_bytes / 2, lay, nccl_topology(lay))
    if (half.algorithm, half.protocol) == (chosen.algorithm, chosen.protocol):
        return None
    from dpbase.units import format_size, format_time

    text = (f"NCCL's choice changes between {format_size(size_bytes / 2)} ({half.algorithm}/{half.protocol}) "
            f"and {format_size(size_bytes)} ({chosen.algorithm}/{chosen.protocol})")
    if half.time_s > chosen.time_s:
        text += f": the smaller message takes longer ({format_time(half.time_s)} vs {format_time(chosen.time_s)})"
    return text


def backend_for(primitive: str, backend: str | Backend | None, system: Any, stack: str | Stack | None = None,
                algorithm: str = "auto") -> tuple[Backend, str | None]:
    """The backend a collective runs on, and the note saying why it is not the one ``auto``
    resolved to (None): under ``auto`` a collective or algorithm NCCL's model lacks falls back to
    the ideal model (:func:`outside_nccl`); a backend named explicitly is kept (and NCCL's model
    refuses what it lacks). ``collective``, ``compare`` and the charts all ask here."""
    explicit = backend_or_auto(backend) is not None
    chosen = resolve_backend(backend, system, stack)
    if chosen is Backend.NCCL and not explicit:
        note = outside_nccl(primitive, algorithm)
        if note:
            return Backend.IDEAL, note
    return chosen, None


def outside_nccl(primitive: str, algorithm: str = "auto") -> str | None:
    """Why NCCL's model cannot answer (a collective or algorithm it does not have), or None: the
    note of ``auto``'s fall-back to the ideal backend (``collective``, ``compare``, the charts)."""
    from costmodel.nccl.names import COLLECTIVES, to_nccl_algorithm

    name = primitive_named(primitive).value
    if name not in COLLECTIVES:
        return f"NCCL's tuning model has no {name}: textbook α-β-γ model (ideal backend) on the cluster's links"
    if algorithm in ("auto", "all"):
        return None
    try:
        to_nccl_algorithm(algorithm)
    except DpcostError:
        return (f"{algorithm} is not an NCCL algorithm: textbook α-β-γ model (ideal backend); "
                "NCCL itself would run ring, tree or NVLS")
    return None
