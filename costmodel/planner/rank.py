"""Ranking a planner sweep: objective scores, the top configurations, rows, infeasibility.

A score is lower-is-better and ``inf`` where the configuration is infeasible (does not fit,
or the algorithm cannot run there). Ties keep the sweep's axis order (stable sort).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from costmodel.training import memory, workloads
from dpbase.errors import NotApplicableError

OBJECTIVES = ("throughput", "time-to-train", "gpu-hours")
SECONDS_PER_HOUR = 3600.0
# Plans whose scores differ by less than 0.1 % are within the model's resolution (its inputs,
# MFU and link efficiency, are known to a few per cent); among them the planner prefers fewer
# GPUs, then less communication time.
TIE_TOLERANCE = 1e-3


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanRow:
    """One configuration and its predicted step (seconds per optimizer step, bytes per GPU)."""

    rank: int
    algorithm: str
    micro_batch: int
    accumulation_steps: int
    gpus: int
    nodes: int
    gpus_per_node: int
    bucket_bytes: float
    grad_dtype: str
    zero_stage: int
    recompute: bool
    total_s: float
    compute_s: float
    comm_s: float
    exposed_comm_s: float
    optimizer_s: float
    samples_per_s: float
    tokens_per_s: float
    scaling_efficiency: float
    comm_share: float
    memory_bytes: float
    memory_headroom_bytes: float
    objective_value: float

    def to_dict(self) -> dict:
        """Every field, for JSON."""
        return asdict(self)


def _tokens_per_sample(setting) -> float:
    return float(workloads.tokens_per_sample(setting.workload, setting.seq_len))


def objective_values(sweep, setting, objective: str, tokens: float | None):
    """What the objective reports: samples/s, hours to train, or GPU-hours to train."""
    if objective == "throughput":
        return sweep.samples_per_s
    per_sample = _tokens_per_sample(setting)
    if per_sample <= 0:
        raise NotApplicableError("objective", objective,
                                 f"throughput for {setting.workload.kind} models (no tokens)")
    hours = tokens / (sweep.samples_per_s * per_sample) / SECONDS_PER_HOUR
    return hours if objective == "time-to-train" else hours * sweep.space.gpus


def objective_scores(sweep, setting, objective: str, tokens: float | None) -> np.ndarray:
    """Lower-is-better scores over the sweep; ``inf`` where infeasible."""
    values = objective_values(sweep, setting, objective, tokens)
    score = -values if objective == "throughput" else values
    return np.where(sweep.feasible, score, np.inf)


def top_indices(scores: np.ndarray, count: int, prefer: tuple = (),
                tolerance: float = 0.0) -> list[tuple[int, ...]]:
    """Multi-indices of the ``count`` best finite scores, best first (ties: axis order).

    With ``tolerance`` > 0, the first place goes to the plan that is smallest in the
    ``prefer`` arrays (first array first) among those within ``tolerance`` (relative) of the
    best score; the others keep their order.
    """
    flat = scores.ravel()
    count = min(count, int(np.isfinite(flat).sum()))
    part = np.argpartition(flat, count - 1)[:count] if count < flat.size else np.arange(flat.size)
    order = part[np.lexsort((part, flat[part]))][:count]
    if tolerance > 0 and prefer and order.size:
        best = flat[order[0]]
        near = np.flatnonzero(flat <= best + tolerance * abs(best))
        keys = [np.broadcast_to(p, scores.shape).ravel()[near] for p in reversed(prefer)]
        chosen = near[np.lexsort((near, *keys))[0]]
        order = np.concatenate(([chosen], order[order != chosen]))[:count]
    return [tuple(int(i) for i in np.unravel_index(k, scores.shape)) for k in order]


def _row(sweep, setting, scores, index, rank: int) -> PlanRow:
    space = sweep.space
    a, z, d, u, c = index
    nodes, per_node = space.layouts[int(space.cell_layout[c])]
    total = float(sweep.total_s[index])
    samples = float(sweep.samples_per_s[index])
    score = float(scores[index])
    return PlanRow(
        rank=rank, algorithm=space.algorithms[a] if nodes * per_node > 1 else "none",
        micro_batch=int(space.micro_batch[c]), accumulation_steps=int(space.accumulation[c]),
        gpus=nodes * per_node, nodes=nodes, gpus_per_node=per_node,
        bucket_bytes=space.bucket_bytes[u], grad_dtype=space.grad_dtypes[d],
        zero_stage=space.zero_stages[z], recompute=bool(setting.recompute), total_s=total, compute_s=float(sweep.compute_s[index]),
        comm_s=float(sweep.comm_s[index]), exposed_comm_s=float(sweep.exposed_comm_s[index]),
        optimizer_s=float(sweep.optimizer_s[index]), samples_per_s=samples,
        tokens_per_s=samples * _tokens_per_sample(setting),
        scaling_efficiency=float(sweep.scaling_efficiency[index]),
        comm_share=float(sweep.exposed_comm_s[index]) / total,
        memory_bytes=float(sweep.memory_bytes[index]),
        memory_headroom_bytes=sweep.capacity_bytes - float(sweep.memory_bytes[index]),
        objective_value=-score if score < 0 else score)


def rows_at(sweep, setting, scores, indices) -> list[PlanRow]:
    """Rows for the given multi-indices, ranked 1, 2, …"""
    return [_row(sweep, setting, scores, index, rank) for rank, index in enumerate(indices, 1)]


def infeasible_error(sweep, setting, system) -> NotApplicableError:
    """Nothing fits: say how much memory the leanest plan needs and what to change."""
    space = sweep.space
    leanest = np.unravel_index(int(np.argmin(sweep.memory_bytes)), sweep.memory_bytes.shape)
    c = leanest[4]
    need_gb = float(sweep.memory_bytes[leanest]) / 1e9
    gpus = int(space.gpus[c])
    activations = float(memory.activation_bytes(
        setting.workload, space.micro_batch[c], setting.seq_len,
        memory.DTYPE_BYTES[setting.compute_dtype], setting.flash_attention, setting.recompute))
    states = float(sweep.memory_bytes[leanest]) - activations
    room = sweep.capacity_bytes - activations
    remedy = "tensor/sequence parallelism" if setting.recompute else \
        "activation recomputation / tensor parallelism"
    advice = (f"shorten --seq-len or use {remedy} (one micro-batch's "
              f"{'checkpointed ' if setting.recompute else ''}activations alone exceed the GPU)"
              ) if room <= 0 else (
        f"use at least {int(np.ceil(states * gpus / room))} GPUs (raise --nodes/--max-gpus), "
        "shorten --seq-len, or add tensor/pipeline parallelism")
    if setting.recompute:
        advice += "; this already recomputes activations"
    return NotApplicableError(
        "model", setting.workload.name,
        f"a plan that fits: the leanest (ZeRO-{space.zero_stages[leanest[1]]}, micro-batch "
        f"{int(space.micro_batch[c])}, {gpus} GPUs) needs {need_gb:.1f} GB per GPU but "
        f"{system.gpu.name} has {sweep.capacity_bytes / 1e9:.0f} GB; {advice}")
