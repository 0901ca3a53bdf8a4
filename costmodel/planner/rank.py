"""Ranking a planner sweep: objective scores, the top configurations, rows, infeasibility.

A score is lower-is-better and ``inf`` where the configuration is infeasible (does not fit,
or the algorithm cannot run there). Ties keep the sweep's axis order (stable sort).
"""

from __future__ import annotations

import math

import numpy as np

from costmodel.names import NO_ALGORITHM
from costmodel.planner import grid
from costmodel.planner.grid import row_bucket_bytes, stages_allowed
from costmodel.training import gradsync, memory, workloads
from costmodel.training.syncmodes import stage_mode
from dpbase.errors import InputError, NotApplicableError
from dpbase.values import asdict, frozen, replace

OBJECTIVES = ("throughput", "time-to-train", "gpu-hours", "cost", "energy")
SECONDS_PER_HOUR = 3600.0
WATT_HOURS_PER_KWH = 1000.0
# What each objective reports (PlanRow.objective_value) and in which unit.
OBJECTIVE_UNITS = {"throughput": "samples/s", "time-to-train": "hours", "gpu-hours": "GPU-hours",
                   "cost": "USD", "energy": "kWh"}


@frozen(kw_only=True)
class Constraints:
    """What a plan must meet besides memory: wall time for ``tokens`` and money, if given."""

    tokens: float | None = None
    deadline_hours: float | None = None
    budget: float | None = None
    price_per_gpu_hour: float | None = None
    power_w: float | None = None


@frozen(kw_only=True)
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
    compute_s: float  # forward and backward of the micro-batches (iteration's compute_s)
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
    hours_to_train: float | None = None
    gpu_hours: float | None = None
    cost: float | None = None
    energy_kwh: float | None = None
    bytes_sent: float = 0.0
    bucket_bytes_range: tuple[float, ...] = ()
    quantize_weights: int | None = None  # ZeRO++ qwZ bits (ZeRO-3 plans)
    quantize_grads: int | None = None  # ZeRO++ qgZ bits (ZeRO-3 plans)
    overlap_param_gather: bool = False  # ZeRO-1/2 plans: parameter gather beside the next forward
    offload_optimizer: bool = False  # ZeRO >= 1 plans: optimizer on the host CPU (ZeRO-Offload)
    shard: str = "full"  # ZeRO-3 plans: "hybrid" = sharded in each node, replicated across nodes
    asynchronous: bool = False  # asynchronous parameter-server updates (staleness gpus - 1)
    # how the plan synchronises (iteration --sync): ddp (buckets; ZeRO-2/3 as DeepSpeed runs them),
    # horovod (bucket_bytes: the fusion buffer), flat and per-tensor (bucket_bytes: the whole
    # gradient, one tensor), fsdp (ZeRO-2/3 plans; bucket_bytes: one FSDP unit)
    sync: str = "ddp"
    # straggler wait + overlap interference + host overhead (training.losses)
    losses_s: float = 0.0  # straggler wait + overlap interference + host overhead + buffer copies
    interference_s: float = 0.0  # the part of losses_s the hidden collectives add (compute they slow)
    input_wait_s: float = 0.0  # the step's wait for the data loader (--input-rate)
    compute_dtype: str = "bf16"  # what the step was timed in (--compute-dtype as the GPU runs it)
    optimizer: str = "adamw"

    def to_dict(self) -> dict:
        """Every field, for JSON."""
        return asdict(self)


# The parts of a row's step: communication is its exposed part and the compute its hidden part
# slows (what the links cost the step); they add up to total_s. "Bound by" and the HTML report's
# step bars both read them here.
STEP_PARTS = ("compute", "communication", "scaling losses", "input wait", "optimizer")


def step_parts(row) -> dict[str, float]:
    """A plan row's (a PlanRow or its dict) step split into :data:`STEP_PARTS`, in seconds."""
    get = row.get if isinstance(row, dict) else lambda key: getattr(row, key)
    interference = get("interference_s") or 0.0
    return {"compute": get("compute_s"), "communication": get("exposed_comm_s") + interference,
            "scaling losses": get("losses_s") - interference, "input wait": get("input_wait_s"),
            "optimizer": get("optimizer_s")}


def _tokens_per_sample(setting) -> float:
    return float(workloads.tokens_per_sample(setting.workload, setting.seq_len))


def training_totals(sweep, setting, constraints: Constraints) -> dict[str, np.ndarray | None]:
    """Hours, GPU-hours, cost (USD) and energy (kWh) to train on ``constraints.tokens``."""
    if not constraints.tokens:
        return {"hours": None, "gpu_hours": None, "cost": None, "energy": None}
    per_sample = _tokens_per_sample(setting)
    if per_sample <= 0:
        return {"hours": None, "gpu_hours": None, "cost": None, "energy": None}
    with np.errstate(over="ignore", divide="ignore"):  # a rate too small to finish: inf hours, unscored
        hours = constraints.tokens / (sweep.samples_per_s * per_sample) / SECONDS_PER_HOUR
        gpu_hours = hours * sweep.space.gpus
    price, power = constraints.price_per_gpu_hour, constraints.power_w
    with np.errstate(over="ignore"):
        return {"hours": hours, "gpu_hours": gpu_hours,
                "cost": None if price is None else gpu_hours * price,
                "energy": None if power is None else gpu_hours * power / WATT_HOURS_PER_KWH}


_TOTAL_OF = {"time-to-train": "hours", "gpu-hours": "gpu_hours", "cost": "cost", "energy": "energy"}


def objective_values(sweep, setting, objective: str, tokens: float | None,
                     constraints: Constraints | None = None):
    """What the objective reports: samples/s, hours, GPU-hours, USD or kWh to train."""
    if objective == "throughput":
        return sweep.samples_per_s
    if _tokens_per_sample(setting) <= 0:
        raise NotApplicableError("objective", objective,
                                 f"throughput for {setting.workload.kind} models (no tokens)")
    constraints = constraints or Constraints(tokens=tokens)
    if constraints.tokens is None:
        constraints = replace(constraints, tokens=tokens)
    return training_totals(sweep, setting, constraints)[_TOTAL_OF[objective]]


def constraint_mask(sweep, setting, constraints: Constraints | None) -> np.ndarray | bool:
    """Where the deadline and the budget are met (True where none is set)."""
    if constraints is None or (constraints.deadline_hours is None and constraints.budget is None):
        return True
    totals = training_totals(sweep, setting, constraints)
    ok = np.ones(sweep.space.shape, dtype=bool)
    if constraints.deadline_hours is not None and totals["hours"] is not None:
        ok &= totals["hours"] <= constraints.deadline_hours
    if constraints.budget is not None and totals["cost"] is not None:
        ok &= totals["cost"] <= constraints.budget
    return ok


def objective_scores(sweep, setting, objective: str, tokens: float | None,
                     constraints: Constraints | None = None) -> np.ndarray:
    """Lower-is-better scores over the sweep; ``inf`` where infeasible or a constraint fails."""
    values = objective_values(sweep, setting, objective, tokens, constraints)
    score = -values if objective == "throughput" else values
    return np.where(sweep.feasible & constraint_mask(sweep, setting, constraints), score, np.inf)


def _at(array, shape, index):
    return None if array is None else float(np.broadcast_to(array, shape)[index])


def _shown(space, index) -> dict:
    """What a row shows of its configuration besides the bucket size (its identity in the table)."""
    a, z, d, _, c = index
    nodes, per_node = space.layouts[int(space.cell_layout[c])]
    return {"algorithm": space.algorithms[a] if nodes * per_node > 1 else NO_ALGORITHM,
            "micro_batch": int(space.micro_batch[c]), "accumulation_steps": int(space.accumulation[c]),
            "gpus": nodes * per_node, "nodes": nodes, "gpus_per_node": per_node,
            "grad_dtype": space.grad_dtypes[d], "zero_stage": space.zero_stages[z]}


def _row(sweep, setting, scores, index, rank: int, totals: dict, sent=None) -> PlanRow:
    space = sweep.space
    z, d, u = index[1], index[2], index[3]
    total = float(sweep.total_s[index])
    samples = float(sweep.samples_per_s[index])
    score = float(scores[index])
    return PlanRow(
        rank=rank, **_shown(space, index), bucket_bytes=row_bucket_bytes(setting, space, z, d, u),
        sync=stage_mode(setting.sync, space.zero_stages[z]),
        recompute=bool(setting.recompute), total_s=total, compute_s=float(sweep.compute_s[index]),
        losses_s=float(sweep.losses_s[index]), interference_s=float(sweep.interference_s[index]),
        input_wait_s=float(sweep.input_wait_s[index]),
        comm_s=float(sweep.comm_s[index]), exposed_comm_s=float(sweep.exposed_comm_s[index]),
        optimizer_s=float(sweep.optimizer_s[index]), samples_per_s=samples,
        tokens_per_s=samples * _tokens_per_sample(setting),
        scaling_efficiency=float(sweep.scaling_efficiency[index]),
        comm_share=float(sweep.exposed_comm_s[index]) / total,
        memory_bytes=float(sweep.memory_bytes[index]),
        memory_headroom_bytes=sweep.capacity_bytes - float(sweep.memory_bytes[index]),
        objective_value=-score if score < 0 else score,
        **_totals_at(sweep, totals, index),
        bytes_sent=0.0 if sent is None else float(sent[index]),
        compute_dtype=setting.compute_dtype, optimizer=setting.optimizer,
        **_quantized(setting, space.zero_stages[z]))


def _quantized(setting, zero_stage: int) -> dict:
    """ZeRO++ and gather-overlap settings of a row: only ZeRO-3 rows quantise, only ZeRO-1/2
    rows gather after the optimizer (as the sweep computed them)."""
    weights, grads = gradsync.quantized_bits(setting.quantize, zero_stage)
    if zero_stage < 1:
        return {"asynchronous": True} if setting.asynchronous else {}
    return {"quantize_weights": weights, "quantize_grads": grads,
            "overlap_param_gather": setting.overlap_param_gather and zero_stage in (1, 2),
            "offload_optimizer": setting.offload_optimizer,
            "shard": setting.shard if zero_stage == 3 else "full"}


def _totals_at(sweep, totals: dict, index) -> dict:
    shape = sweep.space.shape
    return {"hours_to_train": _at(totals["hours"], shape, index),
            "gpu_hours": _at(totals["gpu_hours"], shape, index),
            "cost": _at(totals["cost"], shape, index), "energy_kwh": _at(totals["energy"], shape, index)}


def rows_at(sweep, setting, scores, indices, constraints: Constraints | None = None,
            sent=None) -> list[PlanRow]:
    """Rows for the given multi-indices, ranked 1, 2, …"""
    totals = training_totals(sweep, setting, constraints or Constraints())  # whole arrays: once
    return [_row(sweep, setting, scores, index, rank, totals, sent)
            for rank, index in enumerate(indices, 1)]


# Rows whose steps differ by less than 0.1 % (relative) and that differ only in bucket size are
# one plan to a user: the table shows them once, with the bucket range. So are one GPU's rows that
# differ only in gradient dtype with the same memory (nothing is sent: they were listed twice).
SAME_STEP = 1e-3


def collapsed_rows(sweep, setting, scores, indices, count: int, constraints: Constraints | None = None,
                   sent=None) -> list[PlanRow]:
    """The rows of ``indices`` (best first) with those that differ only in bucket size and not
    in the step merged: the first of each group stands for it, with the group's bucket range;
    ranks 1, 2, … and at most ``count`` rows. Rows are built for the groups shown only.
    ``indices`` are tuples (a, z, d, u, c) of Python ints (tuple slicing drops the bucket)."""
    space = sweep.space
    steps = sweep.total_s[tuple(np.array(indices, dtype=np.intp).reshape(-1, len(space.shape)).T)].tolist()
    groups: list[list[tuple]] = []
    by_identity: dict[tuple, list[tuple[list[tuple], float]]] = {}  # each identity's (group, its first step)
    identities: dict[tuple, tuple] = {}  # by the index without its bucket size (which the identity leaves out)
    for index, step in zip(indices, steps):
        where = index[:3] + index[4:]
        key = identities.get(where)
        if key is None:
            shown = _shown(space, index)
            if shown["gpus"] == 1:  # one GPU sends no gradient: its dtype is one plan where the memory agrees
                shown["grad_dtype"] = round(float(sweep.memory_bytes[index]))
            key = identities[where] = tuple(shown.values())
        for group, first_step in by_identity.get(key, ()):
            if abs(step / first_step - 1.0) < SAME_STEP:
                group.append(index)
                break
        else:
            groups.append([index])
            by_identity.setdefault(key, []).append((groups[-1], step))
    shown = groups[:count]
    out = []
    for row, group in zip(rows_at(sweep, setting, scores, [g[0] for g in shown], constraints, sent), shown):
        buckets = tuple(sorted({space.bucket_bytes[i[3]] for i in group}))
        out.append(replace(row, bucket_bytes_range=buckets) if len(buckets) > 1 else row)
    return out


@frozen(kw_only=True)
class GpuRoom:
    """The GPUs a plan may use: ``nodes`` of ``gpus_per_node``, from ``min_gpus`` to ``max_gpus``
    (whole nodes, or with ``partial`` nodes in part), for ``global_batch`` samples a step."""

    gpus_per_node: int
    nodes: int
    min_gpus: int
    max_gpus: int
    global_batch: int
    partial: bool = False


def infeasible_error(sweep, setting, system, room_for: GpuRoom | None = None) -> NotApplicableError | InputError:
    """No plan to recommend. Nothing fits: how much memory the leanest plan needs and what to
    change (NotApplicableError). Plans fit but the swept algorithms run none of them: the
    ``algorithms`` at fault (InputError, :func:`_algorithms_error`). Where the cause is the
    user's own input it is named instead: a ``--memory-reserve`` without which the leanest plan
    fits (InputError on ``memory_reserve``), or a global batch that no GPU count divides from
    the count that would fit up to ``room_for.max_gpus`` (InputError on ``global_batch``)."""
    space = sweep.space
    runs = stages_allowed(setting, space)  # only the stages the plan can run
    memory_bytes = np.where(runs, sweep.memory_bytes, np.inf)
    if (memory_bytes <= sweep.usable_bytes).any():  # plans fit in memory: the swept algorithms run none
        return _algorithms_error(sweep, setting, memory_bytes)
    leanest = np.unravel_index(int(np.argmin(memory_bytes)), memory_bytes.shape)
    c = leanest[4]
    need_gb = float(sweep.memory_bytes[leanest]) / 1e9
    gpus = int(space.gpus[c])
    b = space.micro_batch[c]
    element = memory.ACTIVATION_BYTES[setting.compute_dtype]
    per_gpu = float(memory.activation_bytes(setting.workload, b, setting.seq_len, element,
                                            setting.flash_attention, setting.recompute)
                    + memory.logits_bytes(setting.workload, b, setting.seq_len, element))
    # what does not shrink with more GPUs (recomputation's activations fragment at the irregular
    # share), and what a byte of sharded states costs (ZeRO-3's at the irregular share; offload's
    # streamed shard, a part of them, left at the regular one: an estimate of the GPUs wanted)
    fixed = float(memory.total_bytes(0.0, per_gpu, 0.0, gpus, setting.overheads,
                                     per_gpu if setting.recompute else 0.0))
    grow = 1.0 + float(memory.fragmentation_bytes(1.0, setting.overheads,
                                                  1.0 if space.zero_stages[leanest[1]] == 3 else 0.0))
    states = (float(sweep.memory_bytes[leanest]) - fixed) / grow  # sharded states per GPU
    room = (sweep.usable_bytes - fixed) / grow
    reserve_error = _reserve_error(sweep, setting, system, float(sweep.memory_bytes[leanest]),
                                   f"ZeRO-{space.zero_stages[leanest[1]]}, micro-batch {int(b)}, {gpus} GPUs")
    if reserve_error is not None:
        return reserve_error
    remedy = "tensor/sequence parallelism" if setting.recompute else \
        "activation recomputation / tensor parallelism"
    sharded = bool(runs[0, 1:].any())  # more GPUs shrink the states only where ZeRO runs
    unsharded = ("ZeRO does not apply to asynchronous parameter servers" if setting.asynchronous else
                 f"shard the model states with ZeRO (--sync ddp or fsdp; --sync {setting.sync} runs none)")
    wanted = int(np.ceil(states * gpus / room)) if room > 0 else 0
    gpus_option = "--gpus" if room_for is not None and room_for.partial else "--max-gpus"
    others = (("" if setting.offload_optimizer or setting.asynchronous or setting.sync != "ddp" else
               "keep the optimizer states on the host (--offload-optimizer), ")
              + "shorten --seq-len, "
              # a lower reserve helps only where the need fits in the whole GPU and a reserve is kept
              + ("lower --memory-reserve, " if 0 < sweep.reserve_bytes and need_gb * 1e9 <= sweep.capacity_bytes
                 else "")
              + "or add tensor/pipeline parallelism"
              + ("; this already recomputes activations" if setting.recompute else ""))
    if sharded and setting.shard != "hybrid" and room_for is not None and 0 < wanted <= room_for.max_gpus:
        found = _batch_error(room_for, wanted, need_gb, gpus, system, sweep, others)
        if found is not None:  # the GPUs allowed would fit it, but the batch runs on none of them
            return found
    advice = (f"shorten --seq-len or use {remedy} (one micro-batch's "
              f"{'checkpointed ' if setting.recompute else ''}activations and logits alone "
              "exceed the GPU)" + ("; this already recomputes activations" if setting.recompute else "")
              ) if room <= 0 else (
        ("shard over every GPU (--shard full: hybrid sharding splits the states over one node's GPUs, "
         "so more nodes do not shrink them), " if sharded and setting.shard == "hybrid" else
         f"use at least {_gpus_to_ask(wanted, room_for, gpus_option)}, " if sharded
         else f"{unsharded}, ") + others)
    return NotApplicableError(
        "model", setting.workload.name,
        f"a plan that fits: the leanest (ZeRO-{space.zero_stages[leanest[1]]}, micro-batch "
        f"{int(b)}, {gpus} GPUs) needs {need_gb:.1f} GB per GPU but {system.gpu.name} has "
        f"{sweep.capacity_bytes / 1e9:.0f} GB of which {sweep.reserve_bytes / 1e9:.1f} GB are "
        f"kept free (--memory-reserve); {advice}")


def _gpus_to_ask(wanted: int, room_for: GpuRoom | None, gpus_option: str) -> str:
    """The GPUs to ask for where about ``wanted`` would fit the model: the smallest count from
    there that runs (whole nodes unless ``room_for.partial``, else part-filled ones with --gpus)
    and splits the global batch evenly, with its nodes ("32 GPUs (4 nodes: about 19 are needed,
    …; raise --nodes/--max-gpus)"); a larger batch where it is smaller than ``wanted`` (each GPU
    takes one sample at least); ``wanted`` alone where no room is known."""
    how = f"raise --nodes/{gpus_option}"
    if room_for is not None and wanted > room_for.global_batch:
        return (f"{wanted} GPUs, with a global batch of at least {wanted} to spread over them "
                f"(raise --global-batch and --nodes/{gpus_option})")
    if room_for is not None:
        per_node, batch = room_for.gpus_per_node, room_for.global_batch
        for partial in dict.fromkeys((room_for.partial, True)):  # whole nodes first, unless --gpus
            # as many nodes as it takes: a count up to the batch needs at most that many
            counts = grid.dividing_counts(per_node, batch, partial, max(wanted, 1), batch, batch)
            if not counts:
                continue
            count = counts[0]
            if count == wanted and partial == room_for.partial:
                break
            if partial and not room_for.partial:  # no whole number of nodes divides the batch
                return (f"{count} GPUs (about {wanted} are needed, and {batch:,} samples split evenly over "
                        f"no whole number of {per_node}-GPU nodes from there: --gpus {count})")
            nodes = -(-count // per_node)
            return (f"{count} GPUs ({nodes} node{'s' if nodes > 1 else ''}: about {wanted} are needed, "
                    f"and {batch:,} samples split evenly over {count}; {how})")
    return f"{wanted} GPUs ({how})"


def _reserve_error(sweep, setting, system, need_bytes: float, leanest: str) -> InputError | None:
    """The user's --memory-reserve as the cause: the leanest plan would fit under the default
    reserve (:data:`memory.DEFAULT_RESERVE_FRACTION`), so the reserve asked for alone rules it
    out. None where no reserve was given or the default would not fit it either."""
    capacity = sweep.capacity_bytes
    if setting.memory_reserve_bytes is None or need_bytes > capacity - memory.reserve_bytes(capacity):
        return None
    most = math.floor((capacity - need_bytes) / 1e8) / 10  # GB, rounded down: the figure shown fits
    return InputError("memory_reserve", f"{sweep.reserve_bytes / 1e9:.1f} GB ({sweep.reserve_bytes / capacity:.0%})",
                      f"at most {most:.1f} GB ({math.floor(most * 1e9 / capacity * 100)}% of the GPU) kept free: the leanest plan "
                      f"({leanest}) needs {need_bytes / 1e9:.1f} GB per GPU of {system.gpu.name}'s "
                      f"{capacity / 1e9:.0f} GB")


def _batch_error(room_for: GpuRoom, wanted: int, need_gb: float, gpus: int, system, sweep,
                 advice: str) -> InputError | None:
    """The global batch as the cause: ``wanted`` GPUs would fit the model and a count from there
    up to ``room_for.max_gpus`` runs on the nodes, but the batch does not divide by it. None
    where every such count divides the batch (the estimate was off: no batch to blame)."""
    counts = grid.runnable_counts(room_for.gpus_per_node, room_for.nodes, room_for.partial,
                                  max(wanted, room_for.min_gpus), room_for.max_gpus)
    batch = room_for.global_batch
    if not counts or any(batch % c == 0 for c in counts):
        return None
    count = counts[0]
    near = grid.near_batches(batch, [count])
    allowed = f" of the {room_for.max_gpus:,} allowed" if count < room_for.max_gpus else ""
    # whole nodes: part-filled ones (--gpus, the same GPUs on each node) may divide the batch as it is
    part = None if room_for.partial else next(iter(grid.dividing_counts(
        room_for.gpus_per_node, room_for.nodes, True, max(wanted, room_for.min_gpus), room_for.max_gpus, batch)), None)
    partly = ""
    if part is not None:
        nodes, per_node = grid.layout_of(part, room_for.gpus_per_node, room_for.nodes, True)
        partly = f"; or --gpus {part} ({nodes} nodes x {per_node} GPUs, which {batch:,} divides)"
    return InputError("global_batch", batch,
                      f"a multiple of {count} (e.g. {near}): {count} GPUs{allowed} would fit the model (about "
                      f"{wanted} are needed: on the {gpus} GPUs the batch runs on, the leanest plan needs "
                      f"{need_gb:.1f} GB per GPU of the {sweep.usable_bytes / 1e9:.1f} GB usable on "
                      f"{system.gpu.name}) but {batch:,} is not divisible by {count}{partly}; or {advice}")


def _algorithms_error(sweep, setting, memory_bytes) -> InputError:
    """Configurations fit in memory but none runs with the swept algorithms (e.g. ZeRO >= 1 with an
    algorithm that has no reduce-scatter/all-gather): name the algorithms, not the model.
    ``memory_bytes``: each configuration's, inf where its stage does not run."""
    space = sweep.space
    usable = sweep.usable_bytes
    names = ", ".join(space.algorithms)
    one = len(space.algorithms) == 1
    zero = np.array(space.zero_stages)
    plain = np.where((zero == 0).reshape(1, -1, 1, 1, 1), memory_bytes, np.inf)
    plain_gb = float(np.min(plain)) / 1e9
    sharded = np.where((zero >= 1).reshape(1, -1, 1, 1, 1), memory_bytes, np.inf)
    plain_fits_nowhere = not np.asarray(sweep.plain_dp_fits).any()  # the sweep's own answer
    if np.isfinite(plain_gb) and plain_fits_nowhere and np.isfinite(np.min(sharded)):
        sharding = ("auto, which ZeRO >= 1 needs under the nccl backend (the model times NCCL's own "
                    "reduce-scatter and all-gather; a forced algorithm forces the all-reduce only)"
                    if setting.backend == "nccl" else
                    f"auto or an algorithm with reduce-scatter and all-gather (ZeRO >= 1 needs them, which "
                    f"{names} {'does' if one else 'do'} not have under the {setting.backend} backend)")
        why = (f"{sharding}; plain data parallelism with {names} needs {plain_gb:.1f} GB per GPU but "
               f"{usable / 1e9:.1f} GB are usable")
    else:
        leanest = float(np.min(memory_bytes)) / 1e9
        why = (f"an algorithm that runs on these GPU layouts (plans fit in memory, the leanest at "
               f"{leanest:.1f} GB per GPU of {usable / 1e9:.1f} GB usable, but {names} "
               f"{'runs' if one else 'run'} none of them under the {setting.backend} backend)")
    given = ",".join(space.algorithms)
    return InputError("algorithms", given, f"{why}; e.g. --algorithms auto,{given}, or leave --algorithms unset")
