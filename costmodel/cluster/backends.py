"""The one backend dispatch: a collective on a :class:`~costmodel.cluster.mapping.Layout`
under the ideal α-β-γ mapping or NCCL's model, always as a :class:`Prediction`.

``algorithm`` is ``"auto"`` (the fastest; in NCCL mode NCCL's own choice), ``"all"`` (every
algorithm that runs here, fastest first) or a name (registry or NCCL spelling).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from costmodel.cluster.mapping import Layout, cluster_candidates, predict_on_cluster
from costmodel.collectives.entry import Entry
from costmodel.collectives.evaluate import predict_entry
from costmodel.collectives.prediction import Prediction
from costmodel.collectives.registry import entries, get
from costmodel.names import Backend, algorithm_named, backend_named, primitive_named
from dpbase.errors import DpcostError

ParamsFor = Callable[[Entry], dict[str, Any]]


def bottleneck_link(lay: Layout) -> str:
    """The link NCCL mode charges: the NICs across nodes, else the intra-node fabric."""
    return lay.system.nic_link.name if lay.nodes > 1 else lay.system.intra_link.name


_TOPOLOGIES: dict[tuple[str, int, int], Any] = {}
_TOPOLOGY_CACHE_SIZE = 64


def nccl_topology(lay: Layout, tables: Any = None) -> Any:
    """NCCL's graph search for this layout, cached by the system's *value* (its full repr), so a
    user profile that reuses a bundled name never gets the bundled system's topology."""
    from costmodel.nccl import topology_for

    if tables is not None:  # user tuning tables: not shared
        return topology_for(lay.system, lay.nodes, lay.gpus_per_node, tables=tables)
    key = (repr(lay.system), lay.nodes, lay.gpus_per_node)
    if key not in _TOPOLOGIES:
        if len(_TOPOLOGIES) >= _TOPOLOGY_CACHE_SIZE:
            _TOPOLOGIES.pop(next(iter(_TOPOLOGIES)))
        _TOPOLOGIES[key] = topology_for(lay.system, lay.nodes, lay.gpus_per_node)
    return _TOPOLOGIES[key]


def _mirror_traffic(primitive: str, ranks: int, size_bytes: float, nccl_algorithm: str, latency_s: float,
                    bandwidth_Bps: float) -> dict[str, Any]:
    """Step and byte counts of the registry algorithm NCCL's algorithm mirrors (none for PAT)."""
    from costmodel.nccl.names import REGISTRY_MIRROR

    mirror = REGISTRY_MIRROR.get(nccl_algorithm)
    key = (primitive_named(primitive), algorithm_named(mirror)) if mirror else None
    if key is None or key not in {e.key for e in entries()}:
        return {}
    ideal = predict_entry(get(*key), ranks, size_bytes, max(latency_s, 1e-9), bandwidth_Bps)
    return {"steps": ideal.steps, "bytes_sent_max": ideal.bytes_sent_max,
            "bytes_received_max": ideal.bytes_received_max, "bytes_total": ideal.bytes_total,
            "bytes_aux_max": ideal.bytes_aux_max}


def nccl_prediction(primitive: str, size_bytes: float, lay: Layout, topo: Any, algorithm: str = "auto",
                    tables: Any = None) -> Prediction:
    """NCCL's choice (or the forced algorithm) and the time nccl-tests would report."""
    from costmodel.nccl import nccl_time
    from costmodel.nccl.names import to_nccl_algorithm

    p = nccl_time(primitive_named(primitive).value, size_bytes, topo, tables, algorithm=to_nccl_algorithm(algorithm))
    return Prediction(
        primitive=p.collective, algorithm=p.algorithm, protocol=p.protocol, backend=Backend.NCCL.value,
        ranks=p.n_ranks, size_bytes=float(size_bytes), time_s=p.time_s, latency_s=p.latency_s,
        bandwidth_s=max(0.0, p.time_s - p.latency_s - p.launch_overhead_s), reduction_s=0.0,
        algbw_Bps=p.algbw_Bps, busbw_Bps=p.busbw_Bps, bandwidth_Bps=p.bandwidth_Bps,
        launch_overhead_s=p.launch_overhead_s, nccl_model_time_s=p.model_time_s, nccl_version=p.nccl_version,
        cluster=lay.system.name, nodes=lay.nodes, gpus_per_node=lay.gpus_per_node, bottleneck=bottleneck_link(lay),
        **_mirror_traffic(primitive, p.n_ranks, size_bytes, p.algorithm, p.latency_s, p.bandwidth_Bps))


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


def _ideal(primitive: str, size_bytes: float, lay: Layout, algorithm: str, gamma_s_per_byte: float,
           params_for: ParamsFor) -> list[Prediction]:
    candidates = cluster_candidates(primitive, lay)
    chosen = candidates if algorithm in ("auto", "all") else [get(primitive, algorithm)]
    return [predict_on_cluster(primitive, e.algorithm.value, lay, size_bytes=size_bytes,
                               gamma_s_per_byte=gamma_s_per_byte, **params_for(e)) for e in chosen]


def predict_collective(primitive: str, size_bytes: float, lay: Layout, *, algorithm: str = "auto",
                       backend: str | Backend = Backend.IDEAL, gamma_s_per_byte: float = 0.0,
                       params_for: ParamsFor | None = None, topo: Any = None,
                       tables: Any = None) -> list[Prediction]:
    """Predictions for one collective on the layout, fastest first (one for ``auto`` or a name)."""
    backend = backend_named(backend)
    if backend is Backend.NCCL:
        topo = topo if topo is not None else nccl_topology(lay, tables)
        if algorithm == "all":
            results = _nccl_every(primitive, size_bytes, lay, topo, tables)
        else:
            results = [nccl_prediction(primitive, size_bytes, lay, topo, algorithm, tables)]
    else:
        results = _ideal(primitive, size_bytes, lay, algorithm, gamma_s_per_byte, params_for or (lambda e: {}))
    results.sort(key=lambda r: (r.time_s, r.algorithm))
    return results[:1] if algorithm == "auto" else results
