"""Turn one CLI query (text with units, names) into predictions; shared by collective/compare.

Hardware comes from exactly one of: ``--alpha/--bandwidth`` (with ``--ranks``), ``--link``
(a link profile: its latency and achievable bandwidth, or its calibrated regime for the
size), or ``--cluster`` (a system profile mapped by :mod:`costmodel.cluster.mapping`, or NCCL's model
with ``--backend nccl``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from costmodel.collectives.evaluate import predict_entry
from costmodel.collectives.registry import entries, get
from costmodel.names import algorithm_named, primitive_named
from dpbase.errors import InputError
from dpbase.units import parse_bandwidth, parse_size, parse_time

BACKENDS = ("ideal", "nccl")
NCCL_TO_REGISTRY = {"ring": "ring", "tree": "double-binary-tree", "nvls": "in-network", "nvls_tree": "in-network",
                    "nvls-tree": "in-network", "collnet_direct": "in-network", "collnet_chain": "in-network"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Query:
    primitive: str
    algorithm: str = "auto"  # a name, "auto" (fastest) or "all"
    size: str | float = 0
    ranks: int | None = None
    alpha: str | None = None
    bandwidth: str | None = None
    gamma: str = "0s"
    cluster: str | None = None
    nodes: int = 1
    gpus_per_node: int | None = None
    link: str | None = None
    backend: str = "ideal"
    servers: int | None = None
    colocated: bool = False
    pipelined: bool = True
    chunks: int | None = None
    alpha_inter: str | None = None
    bandwidth_inter: str | None = None


def _params(q: Query, entry: Any) -> dict[str, Any]:
    wanted = {"servers": q.servers, "colocated": q.colocated or None, "pipelined": None if q.pipelined else False,
              "chunks": q.chunks}
    names = {p.name for p in entry.params}
    return {k: v for k, v in wanted.items() if v is not None and k in names}


def _rates(q: Query, size_bytes: float) -> tuple[int, float, float]:
    if q.link is not None:
        from hardware import load_link

        link = load_link(q.link)
        regime = link.regime_for(size_bytes) if link.regimes else None
        alpha = regime.latency_s if regime else link.latency_s
        bandwidth = regime.bandwidth_Bps if regime else link.achievable_bandwidth_Bps
    else:
        if q.alpha is None or q.bandwidth is None:
            raise InputError("hardware", "none", "--alpha and --bandwidth, or --link, or --cluster")
        alpha, bandwidth = parse_time(q.alpha, "alpha"), parse_bandwidth(q.bandwidth, "bandwidth")
    if q.ranks is None:
        raise InputError("ranks", None, "an integer >= 1 (--ranks) unless --cluster gives it")
    return q.ranks, alpha, bandwidth


def _names(q: Query, candidates: list[Any]) -> list[Any]:
    if q.algorithm == "auto" and q.cluster is None:
        return [e for e in candidates if not e.in_network]  # a plain link has no reducing switch
    if q.algorithm in ("auto", "all"):
        return candidates
    return [get(q.primitive, q.algorithm)]


def _ideal(q: Query, size_bytes: float, gamma: float) -> list[dict[str, Any]]:
    prim = primitive_named(q.primitive)
    inter = {}
    if q.alpha_inter is not None:
        inter["alpha_inter_s"] = parse_time(q.alpha_inter, "alpha_inter")
    if q.bandwidth_inter is not None:
        inter["bandwidth_inter_Bps"] = parse_bandwidth(q.bandwidth_inter, "bandwidth_inter")
    ranks, alpha, bandwidth = _rates(q, size_bytes)
    candidates = [e for e in entries() if e.primitive is prim and not e.hierarchical]
    results = []
    for entry in _names(q, candidates):
        extra = inter if entry.hierarchical else {}
        results.append(predict_entry(entry, ranks, size_bytes, alpha, bandwidth, gamma, **extra,
                                     **_params(q, entry)))
    return results


def _on_cluster(q: Query, size_bytes: float, gamma: float) -> list[dict[str, Any]]:
    from costmodel.cluster.mapping import cluster_candidates, layout, predict_on_cluster

    lay = layout(q.cluster, q.nodes, q.gpus_per_node)
    if q.ranks is not None and q.ranks != lay.ranks:
        raise InputError("ranks", q.ranks, f"{lay.ranks} (= nodes × GPUs per node) with --cluster")
    if q.backend == "nccl":
        return _nccl_all(q, lay, size_bytes) if q.algorithm == "all" else [_nccl(q, lay, size_bytes)]
    names = _names(q, cluster_candidates(q.primitive, lay))
    return [predict_on_cluster(q.primitive, e.algorithm.value, lay, size_bytes=size_bytes,
                               gamma_s_per_byte=gamma, **_params(q, e)) for e in names]


def _nccl_all(q: Query, lay: Any, size_bytes: float) -> list[dict[str, Any]]:
    """Every algorithm NCCL's model has for the collective, each with its best protocol, fastest first."""
    from costmodel.nccl.names import algorithms_for, normalize_collective
    from dpbase.errors import DpcostError

    results = []
    for name in algorithms_for(normalize_collective(primitive_named(q.primitive).value)):
        try:
            results.append(_nccl(q, lay, size_bytes, name))
        except DpcostError:  # not enabled on this topology (e.g. NVLS without NVSwitch gen3)
            continue
    chosen = _nccl(q, lay, size_bytes, "auto")["algorithm"]  # NCCL picks by its own estimate
    for result in results:
        result["nccl_choice"] = result["algorithm"] == chosen
    return sorted(results, key=lambda r: r["time_s"])


def _nccl(q: Query, lay: Any, size_bytes: float, forced: str | None = None) -> dict[str, Any]:
    from costmodel.cluster.mapping import _nccl_topology
    from costmodel.nccl import nccl_time

    topo = _nccl_topology(lay)
    algorithm = forced or ("auto" if q.algorithm in ("auto", "all") else q.algorithm)
    p = nccl_time(primitive_named(q.primitive).value, size_bytes, topo, algorithm=algorithm)
    result = {"primitive": p.collective, "algorithm": p.algorithm, "protocol": p.protocol, "backend": "nccl",
              "ranks": p.n_ranks, "size_bytes": size_bytes, "time_s": p.time_s, "latency_s": p.latency_s,
              "bandwidth_s": max(0.0, p.time_s - p.latency_s - p.launch_overhead_s), "reduction_s": 0.0,
              "launch_overhead_s": p.launch_overhead_s, "nccl_model_time_s": p.model_time_s,
              "algbw_Bps": p.algbw_Bps, "busbw_Bps": p.busbw_Bps, "nccl_version": p.nccl_version,
              "nodes": lay.nodes, "gpus_per_node": lay.gpus_per_node, "cluster": lay.system.name,
              "bottleneck": lay.system.nic_link.name if lay.nodes > 1 else lay.system.intra_link.name}
    mirror = NCCL_TO_REGISTRY.get(p.algorithm)
    if mirror and (primitive_named(q.primitive), algorithm_named(mirror)) in {e.key for e in entries()}:
        ideal = predict_entry(get(q.primitive, mirror), p.n_ranks, size_bytes, max(p.latency_s, 1e-9), p.bandwidth_Bps)
        for key in ("steps", "bytes_sent_max", "bytes_received_max", "bytes_total", "bytes_aux_max"):
            result[key] = ideal[key]
    return result


def run_query(q: Query) -> list[dict[str, Any]]:
    """Predictions for the query, fastest first when several algorithms are asked for."""
    primitive_named(q.primitive)
    if q.algorithm not in ("auto", "all"):
        algorithm_named(q.algorithm)
    if q.backend not in BACKENDS:
        raise InputError("backend", q.backend, "ideal or nccl")
    size_bytes = parse_size(q.size, "size")
    gamma = parse_time(q.gamma, "gamma")
    if q.cluster is not None:
        results = _on_cluster(q, size_bytes, gamma)
    elif q.backend == "nccl":
        raise InputError("backend", "nccl", "--backend nccl together with --cluster SYSTEM")
    else:
        results = _ideal(q, size_bytes, gamma)
    results.sort(key=lambda r: (r["time_s"], r["algorithm"]))
    if results and results[0]["ranks"] == 1 and q.algorithm in ("auto", "all"):
        return [_one_rank(results[0])]
    return results[:1] if q.algorithm == "auto" else results


def _one_rank(result: dict[str, Any]) -> dict[str, Any]:
    """One rank communicates nothing: one answer, not a tie of every algorithm at zero."""
    return {**result, "algorithm": "none", **({"protocol": "none"} if "protocol" in result else {}),
            "algbw_Bps": None, "busbw_Bps": None, "bottleneck": None,
            "note": "one rank: nothing to communicate, every algorithm costs 0"}
