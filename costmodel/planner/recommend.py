"""The data-parallel training planner: sweep every configuration, rank them, explain the winner.

    >>> p = plan("gpt2", "dgx-h100", global_batch=64, seq_len=1024)
    >>> p.best.micro_batch * p.best.accumulation_steps * p.best.gpus
    64

The sweep (:mod:`costmodel.planner.grid`) covers all-reduce algorithm × ZeRO stage × gradient
dtype × bucket size × (GPU count, micro-batch, accumulation) with ``micro-batch × accumulation
× GPUs == global batch`` exactly; ZeRO stages 1–3 are considered only where plain data
parallelism does not fit in memory, and full activation recomputation (``recompute``) only
when no plan fits without it (or when asked for). The objective ranks feasible plans:

* ``throughput``: most samples per second (the shortest step: the global batch is fixed);
* ``time-to-train``: ``tokens / tokens per second`` (same order, reported in hours);
* ``gpu-hours``: time to train × GPUs (prefers fewer GPUs when scaling is not free).

The reason and the sensitivity view come from :mod:`costmodel.planner.explain`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from costmodel.apiwords import speaks_keywords
from costmodel.cluster.backends import curves_left_out
from costmodel.cluster.stacks import resolve_backend
from costmodel.names import backend_named
from costmodel.planner import choose, grid, recomputation
from costmodel.planner.comm import outside_backend
from costmodel.planner.rank import (
    OBJECTIVES,
    Constraints,
    GpuRoom,
    PlanRow,
    collapsed_rows,
    infeasible_error,
    objective_scores,
    rows_at,
)
from dpbase.errors import DpcostError, InputError, NotApplicableError, check_switch, is_real, is_whole
from dpbase.values import asdict, frozen, replace

MIB = 1024 * 1024
# Bucket sizes swept around PyTorch DDP's default bucket_cap_mb = 25 (torch/nn/parallel/
# distributed.py); DeepSpeed's default reduce_bucket_size is 5e8 elements, hence the 400 MiB end.
DEFAULT_BUCKET_BYTES = (5 * MIB, 25 * MIB, 100 * MIB, 400 * MIB)


@frozen(kw_only=True)
class Plan:
    """The recommendation, the ranked alternatives, the reason and the sensitivity view."""

    model: str
    cluster: str
    objective: str
    backend: str
    global_batch: int
    seq_len: int
    configurations: int
    feasible_configurations: int
    best: PlanRow
    candidates: tuple[PlanRow, ...]
    reason: str
    findings: dict
    sensitivity: tuple[dict, ...]
    tie_band: float = 0.0
    memory_reserve_bytes: float = 0.0
    deadline_hours: float | None = None
    budget: float | None = None
    price_per_gpu_hour: float | None = None
    power_w: float | None = None
    economics_source: str = ""
    optimizer_impl: str = "multi-tensor"  # the script's optimizer the plans were timed with
    flash_attention: bool = True  # False: no fused attention kernel, the scores through HBM
    mfu: float | None = None  # the MFU the plans were timed at when the user gave or calibrated it (None: defaults)
    mfu_calibration: str | None = None  # where a calibrated MFU came from (--rate)
    elementwise_traffic: float | None = None  # the width roofline's constant the user set (None: the default)

    @property
    def compute_speed(self) -> dict | None:
        """A calibrated compute speed (--rate): its base MFU and where it came from; None otherwise."""
        return None if self.mfu_calibration is None else {"base_mfu": self.mfu, "source": self.mfu_calibration}

    @property
    def best_interval_s(self) -> tuple[float, float] | None:
        """The recommended plan's step time, 10-90 % interval (None under the ideal backend)."""
        found = self.findings.get("step_interval_s") if self.findings else None
        return None if found is None else (float(found[0]), float(found[1]))

    def to_dict(self) -> dict:
        """Every field, for JSON."""
        return asdict(self)

    def to_frame(self):
        """The ranked alternatives as a pandas DataFrame (rank 1 = the recommendation); pandas loads here only."""
        import pandas as pd

        rows = [{"rank": i + 1, "recommended": row == self.best, **asdict(row)}
                for i, row in enumerate(self.candidates)]
        return pd.DataFrame(rows)


# Scale limits (issue 18): refuse requests no cluster has, before building anything. The
# largest published training clusters have ~100k GPUs; a sweep beyond MAX_CONFIGURATIONS
# would take minutes and gigabytes (narrow --buckets/--grad-dtypes/--max-gpus instead).
MAX_NODES = 100_000
MAX_GPUS = 1_000_000
MAX_GLOBAL_BATCH = 2**40
MAX_CONFIGURATIONS = 20_000_000





def _check(global_batch, nodes, min_gpus, max_gpus, objective, tokens, backend, top,
           gpus_field: str = "max_gpus") -> None:
    """The plan's inputs; ``gpus_field`` names the option that gave ``max_gpus`` (--gpus too)."""
    for field, value in (("global_batch", global_batch), ("nodes", nodes), ("min_gpus", min_gpus),
                         ("top", top)):
        if not is_whole(value) or value < 1:
            raise InputError(field, value, "an integer >= 1")
    if max_gpus is not None and (not is_whole(max_gpus) or max_gpus < min_gpus):
        raise InputError(gpus_field, max_gpus, f"an integer >= min_gpus ({min_gpus})")
    for field, value, most in (("global_batch", global_batch, MAX_GLOBAL_BATCH),
                               ("nodes", nodes, MAX_NODES), (gpus_field, max_gpus, MAX_GPUS)):
        if value is not None and value > most:
            raise InputError(field, value, f"at most {most:,}")
    if objective not in OBJECTIVES:
        raise InputError("objective", objective, ", ".join(OBJECTIVES))
    if objective != "throughput" and not (tokens and tokens > 0):
        raise InputError("tokens", tokens, f"a token count > 0 with --objective {objective}")
    if backend != "auto":
        backend_named(backend)


def _check_constraints(objective, constraints: Constraints) -> None:
    """Deadline and budget need tokens; cost needs a price and energy a power."""
    for field, value in (("deadline", constraints.deadline_hours), ("budget", constraints.budget)):
        if value is not None and not 0 < value < math.inf:  # inf read "meets the budget of inf USD"
            raise InputError(field, value, "a finite number > 0")
    for field, value in (("deadline", constraints.deadline_hours), ("budget", constraints.budget)):
        if value is not None and not constraints.tokens:
            raise InputError("tokens", constraints.tokens, f"a token count > 0 with --{field}")
    if (objective == "cost" or constraints.budget is not None) and constraints.price_per_gpu_hour is None:
        raise InputError("price_per_gpu_hour", None,
                         "a price (--price-per-gpu-hour): hardware/data/prices.toml has none for this GPU")
    if objective == "energy" and constraints.power_w is None:
        raise InputError("power_per_gpu", None,
                         "a power in W (--power-per-gpu): hardware/data/prices.toml has none for this GPU")


def default_grad_dtypes(compute_dtype: str, gpu) -> tuple[str, ...]:
    """The gradient dtypes a plan sweeps by default on ``gpu``: the width of the compute dtype
    that runs there (:func:`costmodel.training.iteration.default_grad_dtype`, what ``dpcost
    iteration`` uses by default) and fp32, the two that need no accuracy study (fp8 on request):
    bf16 and fp32 for a bf16 run, fp32 alone for an FP32 one."""
    from costmodel.training.iteration import default_grad_dtype

    return tuple(dict.fromkeys((default_grad_dtype(compute_dtype, gpu), "fp32")))


def _bucket_sweep(bucket_bytes, sync: str):
    """The bucket sizes to sweep: :data:`DEFAULT_BUCKET_BYTES` where none are given, and refused
    under a sync mode that sizes every call itself (one flat all-reduce, one per tensor:
    :func:`syncmodes.takes_bucket`), where they were ignored while they multiplied the reported
    sweep (review, 2026-11-30). FSDP takes them: its plans' ZeRO-0/1 rows are DDP's."""
    from costmodel.training import syncmodes

    if bucket_bytes is None:
        return DEFAULT_BUCKET_BYTES
    from dpbase.units import parse_size

    # sizes with units ("25MiB") as predict and sweep take them (they were refused as not sizes)
    # text needs its unit: "25" from bucket_cap_mb=25 was 25 bytes, which the CLI refuses (API audit, 2026-11-30)
    bucket_bytes = tuple(parse_size(size, "bucket_bytes", unit_needed=True) if isinstance(size, str) else size
                         for size in _values(bucket_bytes, "bucket_bytes"))
    if sync in syncmodes.SYNC_MODES and not syncmodes.takes_bucket(sync):
        from dpbase.units import format_size

        shown = ",".join(format_size(size) for size in _values(bucket_bytes, "bucket_bytes"))
        raise InputError("--buckets", shown, f"left out with --sync {sync} (it sizes its own collectives: "
                         f"{syncmodes.SELF_SIZED[sync]})")
    return bucket_bytes


def _distinct_axes(algorithms, bucket_bytes, grad_dtypes) -> tuple:
    """The swept algorithms, bucket sizes and gradient dtypes with repeats dropped (first kept,
    in order): a value named twice is one configuration, not two. An empty algorithm list
    (``--algorithms ""``) is refused, not read as the default sweep."""
    if algorithms is not None:
        algorithms = tuple(dict.fromkeys(_values(algorithms, "algorithms")))
        named = next((a for a in algorithms if not isinstance(a, str)), None)
        if named is not None:  # algorithms=5 was an AttributeError from .strip (API audit, 2026-11-30)
            raise InputError("algorithms", named, "algorithm names (e.g. 'auto', 'ring')")
        if not algorithms:
            raise InputError("algorithms", "", "one or more algorithm names (e.g. auto,ring), or leave "
                             "--algorithms unset for what the cluster's stack runs")
    grad_dtypes = None if grad_dtypes is None else tuple(dict.fromkeys(_values(grad_dtypes, "grad_dtypes")))
    return algorithms, tuple(dict.fromkeys(_values(bucket_bytes, "bucket_bytes"))), grad_dtypes


def _values(axis, name: str) -> tuple:
    """A swept axis as a tuple: one name or number is an axis of one (``algorithms="ring"`` was
    iterated letter by letter), as ``costmodel.sweep`` reads its axes. A 0-d numpy array is its
    value (it was unhashable: review, 2026-11-29)."""
    if getattr(axis, "ndim", None) == 0:
        axis = axis.item()
    if isinstance(axis, str) or is_real(axis):
        return (axis,)
    try:
        values = tuple(axis)
    except TypeError:
        raise InputError(name, axis, "a value or a list of values") from None
    return tuple(value.item() if getattr(value, "ndim", None) == 0 else value for value in values)


def _check_money_needs_tokens(tokens, price_per_gpu_hour, power_w) -> None:
    """A price or a power prices the GPU-hours to train on ``tokens``: without tokens there is
    nothing to price, and the option would be silently ignored."""
    for field, value in (("price_per_gpu_hour", price_per_gpu_hour), ("power_per_gpu", power_w)):
        if value is not None and not tokens:
            raise InputError(field, value, "unset without --tokens (it prices the GPU-hours to train on "
                             "--tokens: cost and energy need a token count)")


def _check_tokens_fill_a_step(workload, seq_len, tokens, global_batch) -> None:
    """Training takes whole steps: fewer tokens than one step's (``--tokens 2``) would be trained
    in a fraction of a step (2.04e-10 hours against a 24 ms step)."""
    from costmodel.training import workloads

    if tokens is not None and not tokens > 0:  # NaN too
        raise InputError("tokens", tokens, "a token count > 0, e.g. 2T or 1e12")
    per_sample = workloads.tokens_per_sample(workload, workloads.resolve_seq_len(workload, seq_len))
    if tokens and per_sample > 0 and tokens < global_batch * per_sample:
        raise InputError("tokens", tokens, f"at least one step's tokens: {global_batch * per_sample:,.0f} (global "
                         f"batch {global_batch:,} × {per_sample:,.0f} tokens per sample)")


def _check_tokens_apply(workload, seq_len, tokens, deadline_hours, budget) -> None:
    """Tokens, and the deadline and budget on training them, only for models that have tokens:
    a CNN's samples have none (as its ``--objective`` must be throughput)."""
    from costmodel.training import workloads

    if tokens is None and deadline_hours is None and budget is None:
        return
    if workloads.tokens_per_sample(workload, workloads.resolve_seq_len(workload, seq_len)) > 0:
        return
    field, value = next((f, v) for f, v in (("tokens", tokens), ("deadline", deadline_hours), ("budget", budget))
                        if v is not None)
    raise NotApplicableError(field, value, f"unset for {workload.kind} models (no tokens: the plan ranks "
                             "throughput; --tokens, --deadline and --budget count tokens)")


def _check_axes(bucket_bytes, grad_dtypes) -> None:
    from costmodel.training.memory import GRAD_DTYPES
    from costmodel.training.overlap import MIN_BUCKET_BYTES, bucket_size_ok
    from dpbase.units import format_size

    # the offending item named, not the tuple ("got (0.0,)" for --buckets 0MiB)
    bad_size = next((size for size in bucket_bytes or () if not bucket_size_ok(size)), None)
    if not bucket_bytes or bad_size is not None:  # as iteration's --bucket
        shown = "none" if not bucket_bytes else (
            format_size(bad_size) if is_real(bad_size) and math.isfinite(bad_size) else bad_size)
        raise InputError("buckets", shown, f"one or more sizes of at least {MIN_BUCKET_BYTES} bytes (one fp32 "
                         "gradient element) and at most 1 ZiB")
    if grad_dtypes is None:  # the default sweep, resolved once the GPU is known (default_grad_dtypes)
        return
    bad_dtype = next((d for d in grad_dtypes if d not in GRAD_DTYPES), None)
    if not grad_dtypes or bad_dtype is not None:
        raise InputError("grad_dtypes", "none" if not grad_dtypes else bad_dtype,
                         f"one or more of {', '.join(GRAD_DTYPES)}")


def _count_list(counts: list[int]) -> str:
    """GPU counts (ascending) in words: "16", "8, 16 or 24", "2 to 8", or how many and their range."""
    runs = _runs(counts)
    if len(runs) > SHOWN_RUNS:
        return f"{len(counts):,} counts from {counts[0]:,} to {counts[-1]:,}"
    from costmodel.planner.text import runs_in_words

    return runs_in_words(runs)


def _no_layout_error(gpus_per_node: int, nodes: int, partial: bool, global_batch: int, min_gpus: int,
                     max_gpus: int) -> InputError:
    """No GPU count from ``min_gpus`` to ``max_gpus`` runs the batch. Either none runs at all on
    the nodes (--min-gpus at fault: the counts that do run), or none divides the batch: the
    nearest batches below and above that one of them divides (each accepted as it stands)."""
    where = (f"{nodes:,} node{'s' if nodes > 1 else ''} of {gpus_per_node} GPUs, "
             + ("as many GPUs on each node" if partial else "up to one node or whole nodes"))
    counts = grid.runnable_counts(gpus_per_node, nodes, partial, min_gpus, max_gpus)
    if not counts:
        below = grid.runnable_counts(gpus_per_node, nodes, partial, 1, max_gpus)[-1]  # one GPU always runs
        above = grid.runnable_counts(gpus_per_node, nodes, partial, min_gpus, min_gpus + 2 * gpus_per_node)
        raise_to = f" (or --{'gpus' if partial else 'max-gpus'} {above[0]})" if above else ""
        return InputError("min_gpus", min_gpus, f"at most {below}{raise_to}: no GPU count from {min_gpus} to "
                          f"{max_gpus} runs on {where}")
    near = grid.near_batches(global_batch, counts)
    # whole nodes: part-filled ones (--gpus, as many GPUs on each node) may divide the batch as it is
    part = None if partial else next(reversed(grid.dividing_counts(gpus_per_node, nodes, True, min_gpus, max_gpus,
                                                                   global_batch)), None)
    partly = f", or --gpus {part} (part-filled nodes, which {global_batch:,} divides)" if part else ""
    return InputError("global_batch", global_batch,
                      f"a multiple of a GPU count that runs here, e.g. {near} (GPU counts from {min_gpus} to "
                      f"{max_gpus} that run on {where}: {_count_list(counts)}), or "
                      + ("a wider --min-gpus/--gpus" if partial else "a wider --min-gpus/--max-gpus")
                      + partly)


def build_space(system, *, nodes: int, global_batch: int, min_gpus: int, max_gpus: int,
                algorithms, bucket_bytes, grad_dtypes, partial: bool = False) -> grid.Space:
    """The swept axes; when no GPU count runs the batch, an InputError naming accepted batches
    (or ``min_gpus``, when no count from ``min_gpus`` to ``max_gpus`` runs on the nodes at all).

    ``partial``: any GPU count up to ``max_gpus`` (packed on the fewest nodes), not only whole
    nodes; refuses sweeps above ``MAX_CONFIGURATIONS`` before building them.
    """
    layouts = grid.batch_layouts(system.gpus_per_node, nodes, min_gpus, max_gpus, global_batch, partial)
    if not layouts:
        raise _no_layout_error(system.gpus_per_node, nodes, partial, global_batch, min_gpus, max_gpus)
    size = (grid.cell_count(layouts, global_batch) * len(algorithms) * len(grid.ZERO_STAGES)
            * len(bucket_bytes) * len(grad_dtypes))
    if size > MAX_CONFIGURATIONS:
        raise InputError("global_batch", global_batch,
                         f"a sweep of at most {MAX_CONFIGURATIONS:,} configurations (this one has "
                         f"{size:,}): narrow {'--gpus' if partial else '--max-gpus'}/--min-gpus, --buckets, "
                         "--grad-dtypes")
    index, micro, accum = grid.batch_cells(layouts, global_batch)
    return grid.Space(algorithms=tuple(algorithms), zero_stages=grid.ZERO_STAGES,
                      grad_dtypes=tuple(grad_dtypes), bucket_bytes=tuple(map(float, bucket_bytes)),
                      layouts=layouts, cell_layout=index, micro_batch=micro, accumulation=accum)


# Runs of GPU counts a finding keeps in full: beyond them only how many and their ends.
SHOWN_RUNS = 4


def _runs_summary(runs) -> dict | None:
    """Runs ``[first, last]`` of GPU counts (ascending) as a finding: the first
    :data:`SHOWN_RUNS` + 1 of them, how many, and the lowest and highest count (None if none)."""
    kept, count, low, high = [], 0, None, None
    for first, last in runs:
        if first > last:
            continue
        if count <= SHOWN_RUNS:
            kept.append([int(first), int(last)])
        count += 1
        low = first if low is None else low
        high = last
    return None if not count else {"runs": kept if count <= SHOWN_RUNS else [], "count": count,
                                   "low": int(low), "high": int(high)}


def gpu_limits(gpus_per_node: int, nodes: int, partial: bool, global_batch: int, most: int,
               allowed: int) -> dict:
    """Why no GPU count above ``most`` (the sweep's largest) up to ``allowed`` (--max-gpus or
    --gpus) runs, by the limit that binds each (:func:`costmodel.cluster.mapping.layout_of`):

    * ``capacity``: counts above what ``nodes`` nodes hold (``beyond_nodes`` True);
    * ``batch``: counts the layouts could run but the global batch does not divide by;
    * ``uneven`` (--gpus): counts that need more than ``nodes`` nodes with the same number of
      GPUs on each (at most ``gpus_per_node``);
    * ``part_nodes`` (whole nodes): counts above one node that are not whole nodes.

    Each as :func:`_runs_summary` (None where no count falls under it)."""
    capacity = nodes * gpus_per_node
    top = min(allowed, capacity)
    found = {"most": int(most), "allowed": int(allowed), "gpus_per_node": int(gpus_per_node),
             "nodes": int(nodes), "partial": bool(partial), "global_batch": int(global_batch),
             "capacity": int(capacity), "beyond_nodes": allowed > capacity,
             "batch": None, "uneven": None, "part_nodes": None}
    if top <= most:
        return found
    kinds = {"batch": [], "uneven": [], "part_nodes": []}
    for count in range(most + 1, top + 1):  # each count the sweep left out, by the limit that binds it:
        # one that runs on the nodes is left out by the batch alone
        runs = grid.layout_of(count, gpus_per_node, nodes, partial) is not None
        kinds["batch" if runs else "uneven" if partial else "part_nodes"].append(count)
    found.update((kind, _runs_summary(_runs(counts))) for kind, counts in kinds.items())
    return found


def _runs(points) -> list[tuple[int, int]]:
    """Ascending integers as runs of consecutive ones: [1, 2, 3, 7] -> [(1, 3), (7, 7)]."""
    out = []
    for point in points:
        if out and out[-1][1] == point - 1:
            out[-1] = (out[-1][0], point)
        else:
            out.append((point, point))
    return out


def training_setting(workload, system, *, seq_len, compute_dtype, mfu, optimizer, jitter_cv,
                     backend, recompute: bool = False, memory_reserve: float | None = None,
                     mfu_calibration: str | None = None, elementwise_traffic: float | None = None) -> grid.Setting:
    """What a sweep holds fixed, validated (compute dtype, MFU, optimizer, jitter, recompute).
    ``mfu_calibration``: where a calibrated ``mfu`` came from (TrainingConfig.mfu_calibration);
    ``elementwise_traffic``: the width roofline's constant behind the default MFU (None: its default)."""
    from costmodel.training import iteration, memory, roofline, stragglers, workloads

    roofline.check_traffic(elementwise_traffic, mfu, workload, system.gpu)
    dtype, peak = iteration.peak_flops(system.gpu, compute_dtype)
    rate, _ = iteration.mfu(system.gpu, mfu, workload, dtype, mfu_calibration, elementwise_traffic)
    memory.optimizer_state_bytes(optimizer)
    stragglers.check_jitter(jitter_cv)
    return grid.Setting(workload=workload, seq_len=workloads.resolve_seq_len(workload, seq_len),
                        peak_flops=peak, mfu=rate, compute_dtype=dtype, optimizer=optimizer,
                        jitter_cv=jitter_cv, backend=backend,
                        mfu_given=iteration.mfu_holds_at_any_micro_batch(mfu, mfu_calibration),
                        mfu_calibration=mfu_calibration, elementwise_traffic=elementwise_traffic,
                        recompute=memory.check_recompute(workload, recompute),
                        memory_reserve_bytes=None if memory_reserve is None else
                        memory.reserve_bytes(system.gpu.memory_bytes, memory_reserve))


def _reserve(system, reserve_bytes: float | None, fraction: float | None) -> float | None:
    """The reserve in bytes from bytes or a share of the GPU's memory (None: the default)."""
    from costmodel.training import memory

    return memory.reserve_given(system.gpu.memory_bytes, reserve_bytes, fraction)


def check_losses(losses):
    from costmodel.training.losses import check

    return check(losses)


def _zero_options(shard, offload, overlap, weight_bits, grad_bits) -> tuple:
    """Each ZeRO option as (field, value, unset value, the ZeRO stages it acts on, DeepSpeed's
    alone): what :func:`_no_zero_options_with_async` and :func:`_check_sync` refuse."""
    def typed(bits):  # ZeRO++'s bits as the option takes them (int4, int8)
        return None if bits is None else f"int{bits}"

    from costmodel.training.gradsync import QUANTIZED_STAGE
    from costmodel.training.syncmodes import DEEPSPEED_ONLY

    options = (("shard", shard, "full", (3,)), ("offload_optimizer", offload, False, (1, 2, 3)),
               ("overlap_param_gather", overlap, False, (1, 2)),
               ("quantize_weights", typed(weight_bits), None, (QUANTIZED_STAGE,)),
               ("quantize_grads", typed(grad_bits), None, (QUANTIZED_STAGE,)))
    return tuple((*option, option[0] in DEEPSPEED_ONLY) for option in options)


def _refuse(field: str, value, unset, why: str) -> None:
    """An option given (not at its unset value) where it would be silently ignored: one error."""
    if value is not None and value != unset:
        raise InputError(field, value, f"{unset if isinstance(unset, str) else 'unset'} {why}")


def _no_zero_options_with_async(options: tuple) -> None:
    """Asynchronous plans are ZeRO-0: a ZeRO option given with them would be silently ignored."""
    for field, value, unset, _, _ in options:
        _refuse(field, value, unset, "with --async (parameter servers hold the optimizer: no ZeRO)")


def _canonical_names(algorithms) -> set[str]:
    """The swept algorithms' canonical names ("ps", "Parameter_Server" → "parameter-server"); a
    name no algorithm has is kept as given (the sweep refuses it with the list of names)."""
    from costmodel.names import algorithm_named

    names = set()
    for name in algorithms:
        try:
            names.add(algorithm_named(name).value)
        except DpcostError:
            names.add(name)
    return names


def _async_algorithms(algorithms) -> tuple[str, ...]:
    """Asynchronous updates need parameter servers: the default sweep is them alone (any of the
    name's spellings: "ps" was refused here, where iteration takes it; API audit, 2026-12-01)."""
    if algorithms is None:
        return ("parameter-server",)
    if _canonical_names(algorithms) != {"parameter-server"}:
        raise InputError("algorithms", ",".join(algorithms), "parameter-server alone with --async")
    return tuple(algorithms)


def _check_sync(sync: str, options: tuple, asynchronous: bool) -> None:
    """One of :data:`syncmodes.SYNC_MODES`. A ZeRO option needs a mode that runs one of its
    stages (:data:`syncmodes.ZERO_STAGES_OF`: horovod, flat and per-tensor run none) and, for
    DeepSpeed's own (ZeRO++, ZeRO-Offload), ``ddp``; asynchronous parameter servers are their own
    scheme (``ddp`` only)."""
    from costmodel.training.syncmodes import SYNC_MODES, ZERO_STAGES_OF

    if sync not in SYNC_MODES:
        raise InputError("sync", sync, ", ".join(SYNC_MODES))
    if sync == "ddp":
        return
    _refuse("asynchronous", asynchronous, False, f"with --sync {sync} (the parameter servers' own scheme; "
                                                 "plan with --sync ddp)")
    for field, value, unset, stages, deepspeed in options:
        if deepspeed:
            _refuse(field, value, unset, f"with --sync {sync} (DeepSpeed's option; plan with --sync ddp)")
        elif not set(stages) & set(ZERO_STAGES_OF[sync]):
            _refuse(field, value, unset, f"with --sync {sync} (a ZeRO option: --sync {sync} runs no ZeRO)")


def _check_shard(shard: str) -> str:
    from costmodel.training.iteration import SHARDS

    if shard not in SHARDS:
        raise InputError("shard", shard, " or ".join(SHARDS))
    return shard


def step_interval(best: PlanRow, setting, system, backend: str) -> tuple[float, float] | None:
    """The recommended step's 10-90 % interval under a realistic backend.

    The plan is recomputed one configuration at a time (:func:`iteration_breakdown` with the
    realistic :class:`CommModel`) with every collective at the low, then the high end of its own
    interval (:func:`costmodel.training.oncluster.with_interval`); the relative ends are applied
    to the sweep's step time. None under the ideal backend (no interval).
    """
    from costmodel.cluster.comm import comm_model
    from costmodel.training import syncmodes, transport
    from costmodel.training.iteration import TrainingConfig, iteration_breakdown
    from costmodel.training.oncluster import with_interval

    if best.gpus <= 1:  # one GPU: no collective, nothing uncertain about the communication
        return None
    comm = comm_model(system, best.nodes, best.gpus_per_node, algorithm=best.algorithm, backend=backend)
    if not comm.has_intervals:
        return None
    # the row's call size under its own sync mode (the unit of an FSDP row; flat and per-tensor size their own)
    config = TrainingConfig(micro_batch=best.micro_batch, accumulation_steps=best.accumulation_steps,
                            seq_len=setting.seq_len if setting.workload.uses_token_rule else None,
                            grad_dtype=best.grad_dtype, sync=best.sync,
                            bucket_bytes=best.bucket_bytes if syncmodes.takes_bucket(best.sync) else None,
                            zero_stage=best.zero_stage, recompute=best.recompute, compute_dtype=setting.compute_dtype,
                            flash_attention=setting.flash_attention,
                            # the default MFU passed as a user's would drop the roofline and a CNN's fixed time
                            mfu=setting.user_mfu,
                            mfu_calibration=setting.mfu_calibration, elementwise_traffic=setting.elementwise_traffic,
                            optimizer=setting.optimizer, jitter_cv=setting.jitter_cv,
                            optimizer_impl=setting.optimizer_impl,
                            # the sweep's loss terms (a loader's floor, a slow node) and first bucket
                            losses=setting.losses,
                            first_bucket_bytes=setting.first_bucket_bytes if best.sync == "ddp" else None,
                            quantize_weights=best.quantize_weights, quantize_grads=best.quantize_grads,
                            overlap_param_gather=best.overlap_param_gather, offload_optimizer=best.offload_optimizer,
                            shard=best.shard, asynchronous=best.asynchronous,
                            transport=transport.step_transport(system, best.nodes, best.gpus_per_node))
    scalar = iteration_breakdown(setting.workload, system.gpu, comm, config=config)
    ranged = with_interval(scalar, setting.workload, system.gpu, comm, config)
    if ranged.total_interval_s is None or scalar.total_s <= 0:
        return None
    low, high = ranged.total_interval_s
    return best.total_s * low / scalar.total_s, best.total_s * high / scalar.total_s


def published_findings(best: PlanRow, setting, backend: str) -> dict | None:
    """Where published runs of the recommended step's class landed against the model, out of
    sample (:func:`costmodel.training.residuals.published_interval`): findings for the reason, or
    None under the ideal backend (its collectives are a textbook bound), for asynchronous updates
    (every published run was synchronous) or without data."""
    from costmodel.training import losses, residuals

    found = residuals.published_interval(best.total_s, best.gpus, best.nodes,
                                         measured_speed=setting.user_mfu is not None,
                                         backend=backend, synchronous=not best.asynchronous,
                                         floor_s=losses.input_seconds(setting.losses.input_rate,
                                                                      best.micro_batch * best.accumulation_steps))
    if found is None:
        return None
    step, cls = found
    return {"published_interval_s": step, "published_class": cls}


def _ps_params(algorithms, servers, colocated, system, nodes: int) -> tuple:
    """Parameter-server settings for the sweep: only with ``parameter-server`` among ``algorithms``."""
    from costmodel.cluster.comm import ps_params
    from costmodel.cluster.mapping import layout

    if servers is None and colocated is None:
        return ()
    if not algorithms or "parameter-server" not in algorithms:
        raise InputError("--servers" if servers is not None else "--ps-placement", servers if servers is not None
                         else ("colocated" if colocated else "dedicated"),
                         "only with parameter-server among the algorithms (--algorithms)")
    return ps_params("parameter-server", layout(system, nodes), servers, colocated)


def _resolve(model, cluster):
    import hardware
    from costmodel.training.workloads import workload_of

    workload = workload_of(model)
    return workload, hardware.system_of(cluster)


def _rank(sweep, setting, system, objective, constraints, room_for: GpuRoom | None = None):
    """(scores, rule keys, bytes sent per GPU): none depends on the tie band; the infeasibility
    error when nothing is feasible (``room_for``: the GPUs allowed, for its advice)."""
    scores = objective_scores(sweep, setting, objective, constraints.tokens, constraints)
    if not np.isfinite(scores).any():
        if sweep.feasible.any():
            raise _constraint_error(sweep, setting, objective, constraints)
        raise infeasible_error(sweep, setting, system, room_for)
    sent = choose.bytes_sent(sweep, setting.workload.params)
    return scores, choose.rule_keys(sweep, setting.workload.params, scores, sent=sent), sent


def _ranked(scores, keys, top, tie_band, near=None) -> list[tuple[int, ...]]:
    """The multi-indices of the plans the table may show, in the rules' order among the tied
    plans (``near``, else those within the tie band)."""
    flat = choose.order(scores, keys, tie_band, top * COLLAPSE_DEPTH, near)
    return list(zip(*(axis.tolist() for axis in np.unravel_index(np.asarray(flat, dtype=np.intp),
                                                                 scores.shape))))


def _tie_set(sweep, setting, scores, fastest: int, floor: float, objective: str, constraints, sent,
             interval_of) -> np.ndarray | None:
    """The plans tied with the ``fastest`` (flat index) in every scenario (:func:`_scenario_ties`)
    where the fastest plan's 10-90 % interval is wider than ``floor``; None where it is not (the
    floor band alone then ties). What the plan and its what-if re-plans decide ties by."""
    at = tuple(int(i) for i in np.unravel_index(fastest, scores.shape))
    row = rows_at(sweep, setting, scores, [at], constraints, sent)[0]
    if choose.interval_band(interval_of(row), row.total_s) <= floor:
        return None
    return _scenario_ties(sweep, setting, scores, floor, objective, constraints, sent, interval_of, fastest)


def _scenario_ties(sweep, setting, scores, floor: float, objective: str, constraints, sent,
                   interval_of, fastest: int) -> np.ndarray:
    """Flat indices of the plans within ``floor`` of the best score that stay within it in every
    scenario of the model's uncertainty (:func:`choose.scenario_tied`: every collective at the low
    end of its interval, at its prediction, or at the high end, for every plan at once), and the
    ``fastest`` (flat index). ``interval_of(row)``: a row's 10-90 % step interval (None: no collective)."""
    candidates = choose.tied(scores, floor)
    indices = [tuple(int(i) for i in np.unravel_index(flat, scores.shape)) for flat in candidates]
    rows = rows_at(sweep, setting, scores, indices, constraints, sent)
    ends = [interval_of(row) or (row.total_s, row.total_s) for row in rows]
    return choose.scenario_tied(candidates, scores.ravel()[candidates], [row.total_s for row in rows],
                                [low for low, _ in ends], [high for _, high in ends], objective == "throughput",
                                floor, fastest)


# Rows fetched per row shown, so that collapsing bucket-only duplicates still fills the table.
COLLAPSE_DEPTH = 40


def _constraint_error(sweep, setting, objective, constraints):
    """Plans fit in memory but none meets the deadline/budget: say what the best one needs."""
    from costmodel.planner.text import total

    hours = objective_scores(sweep, setting, "time-to-train", constraints.tokens,
                             Constraints(tokens=constraints.tokens))
    fastest = float(np.min(hours))
    cost = objective_scores(sweep, setting, "cost", constraints.tokens,
                            replace(constraints, deadline_hours=None, budget=None)) \
        if constraints.budget is not None else None
    late = constraints.deadline_hours is not None and fastest > constraints.deadline_hours
    dear = cost is not None and float(np.min(cost)) > constraints.budget
    parts = []
    if late:  # in hours, as --deadline is read and every total is shown
        parts.append(f"the fastest plan needs {total(fastest)} hours (deadline {total(constraints.deadline_hours)} hours)")
    if dear:
        parts.append(f"the cheapest costs {total(float(np.min(cost)))} USD (budget {total(constraints.budget)} USD)")
    if not parts and cost is not None and constraints.deadline_hours is not None:  # each alone is met, not both
        in_time = np.where(hours <= constraints.deadline_hours, cost, np.inf)
        parts.append(f"no plan meets both: those within the deadline of {total(constraints.deadline_hours)} hours "
                     f"cost at least {total(float(np.min(in_time)))} USD (budget {total(constraints.budget)} USD)")
    if not parts:  # no deadline or budget excluded them: the objective itself is not a finite number
        return _unscored_error(objective, constraints)
    field = "deadline" if late else "budget"
    value = constraints.deadline_hours if field == "deadline" else constraints.budget
    # more GPUs help a deadline; a budget only where the cheapest plan already uses the most GPUs
    # swept (sharding over more can drop recomputation: mpt-30b costs 363 USD on 8 GPUs, 302 on 32),
    # not where fewer were cheapest (mpt-7b: 35,430 USD on 2 nodes and on 16)
    cheapest_gpus = 0 if cost is None else int(np.broadcast_to(sweep.space.gpus, cost.shape).ravel()[np.argmin(cost)])
    more_help = late or not dear or cheapest_gpus >= int(sweep.space.gpus.max())
    remedies = (["allow more GPUs (--nodes/--gpus)"] if more_help else []) \
        + (["a larger --budget or a lower --price-per-gpu-hour"] if dear or not late else [])
    return InputError(field, value, "a constraint some plan meets: " + "; ".join(parts)
                      + "; " + ", ".join(remedies) + " or train on fewer --tokens")


def _unscored_error(objective, constraints) -> InputError:
    """Plans fit but none has a finite score, with no deadline or budget to blame: name the input
    the objective multiplies by (the price, the power, the tokens)."""
    field, value, what = {"cost": ("price_per_gpu_hour", constraints.price_per_gpu_hour, "a price per GPU-hour"),
                          "energy": ("power_per_gpu", constraints.power_w, "a power per GPU")}.get(
        objective, ("tokens", constraints.tokens, "a token count"))
    return InputError(field, value, f"{what} for which the plans' {objective} is a finite number "
                      "(every plan that fits scored none)")


class _Progress:
    """Reports (done, total) to the caller's callback, a few dozen times per plan at most."""

    def __init__(self, callback: Callable[[int, int], None] | None, total: int) -> None:
        self.callback, self.total, self.done = callback, total, 0
        if callback:
            callback(0, total)

    def advance(self, units: int = 1) -> None:
        self.done = min(self.done + units, self.total)
        if self.callback:
            self.callback(self.done, self.total)

    def finish(self) -> None:
        if self.done < self.total:
            self.advance(self.total - self.done)


# Progress units besides one per algorithm: the array sweep, the recomputation's tables and
# sweep when nothing fits without it, the ranking, and the explanation (what-if re-plans,
# sensitivity, crossover).
_SWEEP_UNITS, _RECOMPUTE_UNITS, _RANK_UNITS, _EXPLAIN_UNITS = 1, 1, 1, 3


# The size at which :func:`_algorithms_that_run` asks whether an algorithm runs on a layout
# (whether it does depends on the layout, not the size).
PROBE_BYTES = 25 * MIB


def _algorithms_that_run(system, space, setting, names) -> list[str]:
    """Those of ``names`` whose all-reduce runs on some multi-GPU layout of ``space``."""
    from costmodel.planner.comm import CommCache

    cache = CommCache(system, setting.backend, setting.comm_params)
    multi = [(n, g) for n, g in space.layouts if n * g > 1]
    found = []
    for name in names:
        batch = cache.batch(multi, name, (PROBE_BYTES,))
        if (batch.runnable & np.isfinite(batch("all-reduce", np.array([PROBE_BYTES]))[:, 0])).any():
            found.append(name)
    return found


def _check_algorithms_run(tables, system, space, setting, nodes: int) -> None:
    """Refuse an algorithm the user named (``--algorithms``) that runs on none of the sweep's
    multi-GPU layouts: its plans would all be the one-GPU plan, scored as if more GPUs were slower.
    The error names what does run there (of :func:`comm.all_reduce_algorithms`)."""
    from costmodel.planner.comm import all_reduce_algorithms

    multi = [i for i, (n, g) in enumerate(space.layouts) if n * g > 1]
    if not multi:
        return
    runs = tables.valid[..., multi].reshape(len(space.algorithms), -1).any(axis=1)
    idle = [name for name, ok in zip(space.algorithms, runs) if not ok]
    if not idle:
        return
    counts = sorted({space.layouts[i][0] * space.layouts[i][1] for i in multi})
    where = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"
    others = _algorithms_that_run(system, space, setting, all_reduce_algorithms(system, nodes, setting.backend))
    raise InputError("algorithms", ",".join(idle),
                     f"algorithms that run on {system.name} with {where} GPUs under the {setting.backend} backend: "
                     f"{', '.join(others) or 'none'} ({', '.join(idle)} {'runs' if len(idle) == 1 else 'run'} "
                     "on none of these GPU layouts: its plans would all be the one-GPU plan)")


def _sweep_fitting(setting, system, space, recompute, progress: _Progress, nodes: int, algorithms_given: bool,
                   score_of: Callable, band: float):
    """(setting, sweep, recomputation, the sweep's collective tables). With ``recompute=None``
    (decide) on a model whose recomputation is modelled: where nothing fits without it
    (:func:`grid.fits`: memory and feasibility, no step times) the sweep is with it; otherwise
    recomputation is taken where its best plan scores better than the best without it by more
    than ``band`` (``score_of(sweep, setting)``: the objective's scores, lower is better). The
    sweep with it runs only where some configuration could (:func:`recomputation.may_win`); it
    shares the collective tables, so it costs a few milliseconds. Larger micro-batches can pay for
    the recomputed forward: ZeRO-3 gathers the weights once per micro-batch, and small
    micro-batches run below the GEMMs' peak. ``algorithms_given``: the user named the algorithms
    (:func:`_check_algorithms_run` refuses one that runs nowhere here)."""
    from costmodel.training import memory

    tables = grid.setting_tables(setting, system, space, on_algorithm=progress.advance)
    if algorithms_given:
        _check_algorithms_run(tables, system, space, setting, nodes)
    fitted = grid.fits(setting, system, space, tables)  # whether anything fits decides which sweep runs
    decide = recompute is None and memory.recompute_applies(setting.workload)
    if decide and not fitted.feasible.any():
        progress.advance(_SWEEP_UNITS)
        without = float(np.min(fitted.memory_bytes))
        setting = replace(setting, recompute=True)
        sweep = grid.sweep(setting, system, space, tables)
        return setting, sweep, {"chosen": True, "requested": False,  # forced by memory, not decided by speed
                                "leanest_without_bytes": without, "decided": False}, tables
    sweep = grid.sweep(setting, system, space, tables, fitted)
    progress.advance(_SWEEP_UNITS)
    recomputing = replace(setting, recompute=True)
    scores = score_of(sweep, setting) if decide else None
    if decide and recomputation.may_win(sweep, recomputing, float(np.min(scores)), score_of, band):
        other = grid.sweep(recomputing, system, space, tables)
        recomputing_scores = score_of(other, recomputing)
        if recomputation.taken(scores, recomputing_scores, band):
            return recomputing, other, {"chosen": True, "requested": False, "leanest_without_bytes": None,
                                        "better_by": recomputation.gain(scores, recomputing_scores),
                                        "without": recomputation.best_configuration(sweep, scores),
                                        "decided": True}, tables
    return setting, sweep, {"chosen": setting.recompute, "requested": bool(recompute),
                            "leanest_without_bytes": None, "decided": decide}, tables


# The checks speak the CLI's flags (plan_cmd); this API's caller passed plan's keywords
# (costmodel.apiwords)
_KEYWORDS = {"deadline": "deadline_hours", "power-per-gpu": "power_w", "jitter": "jitter_cv",
             "buckets": "bucket_bytes", "bucket": "bucket_bytes", "no-recompute": "recompute=False",
             "no-flash-attention": "flash_attention=False", "mfu-calibration": "mfu_calibration",
             "async": "asynchronous", "algorithm": "algorithms", "ps-placement": "colocated",
             "elementwise-traffic": "elementwise_traffic"}


@speaks_keywords(_KEYWORDS)
def plan(model: Any, cluster: Any, *, global_batch: int, nodes: int | None = None,
         seq_len: int | None = None, min_gpus: int = 1, max_gpus: int | None = None,
         gpus: int | None = None, objective: str = "throughput", tokens: float | None = None,
         backend: str = "auto", top: int = 10, bucket_bytes=None,
         grad_dtypes=None, algorithms=None, compute_dtype: str = "bf16",
         mfu: float | None = None, mfu_calibration: str | None = None, elementwise_traffic: float | None = None,
         optimizer: str = "adamw", optimizer_impl: str = "multi-tensor", flash_attention: bool = True,
         jitter_cv: float = 0.0, tie_band: float | None = None, explain: bool = True, recompute: bool | None = None,
         memory_reserve: float | None = None, memory_reserve_fraction: float | None = None,
         deadline_hours: float | None = None,
         budget: float | None = None, price_per_gpu_hour: float | None = None,
         power_w: float | None = None, servers: int | None = None, colocated: bool | None = None,
         quantize_weights: int | None = None, quantize_grads: int | None = None,
         overlap_param_gather: bool = False, offload_optimizer: bool = False, shard: str = "full",
         asynchronous: bool = False, input_rate: float | None = None, sync: str = "ddp",
         progress: Callable[[int, int], None] | None = None) -> Plan:
    """Recommend a data-parallel plan for ``model`` on up to ``nodes`` nodes of ``cluster``.

    ``model`` is a preset name, a parameter count or a Workload; ``cluster`` a system name,
    TOML path or System. ``algorithms`` defaults to every all-reduce algorithm the cluster
    can run (NCCL's ring/tree/NVLS and its own choice ``auto`` with ``backend='nccl'``).
    ``gpus``: up to this many GPUs in any count (partial nodes, packed on the fewest nodes)
    instead of whole nodes; ``nodes`` then caps the node count (default: no cap).

    Plans within ``tie_band`` (relative) of the best score are tied and ordered by
    :data:`choose.RULES` (headroom, bytes sent, ZeRO stage, GPUs, score to 1 ppb, fewer accumulation
    steps); the reason names the rule that decided. ``tie_band=0`` gives the argmin (to 1 ppb,
    then fewer accumulation steps).
    ``None`` (default): :data:`choose.TIE_BAND` (2 %), and where the fastest plan's 10-90 % step
    interval under a realistic backend is wider than that (:func:`choose.interval_band`), a plan is
    tied only if it stays within it in every scenario of that uncertainty
    (:func:`choose.scenario_tied`: every collective at the low end, prediction, high end).

    Memory counts weights, gradients, optimizer states, activations, logits and the loss, the
    CUDA context, NCCL buffers and fragmentation (:mod:`costmodel.training.memory`); a plan must
    leave ``memory_reserve`` bytes (or ``memory_reserve_fraction`` of the GPU's memory) free
    (default ``memory.DEFAULT_RESERVE_FRACTION``).

    Objectives: ``throughput``, ``time-to-train`` (hours), ``gpu-hours``, ``cost`` (USD, needs a
    price per GPU-hour) and ``energy`` (kWh of GPU board power); all but throughput need
    ``tokens``. ``deadline_hours`` and ``budget`` (USD) exclude plans that miss them. Price and
    power default to ``hardware/data/prices.toml`` for the cluster's GPU.

    ``mfu``: the MFU taken as given at every micro-batch (a user's measured value); with
    ``mfu_calibration`` (where it came from, e.g. :func:`costmodel.training.oncluster.measured_mfu`
    solved from a measured rate) it replaces the default MFU instead, and the micro-batch terms
    (GEMM roofline, a CNN's fixed time) still shape the plans.

    ``recompute``: full activation recomputation (each layer's forward re-run in backward,
    4/3 of the compute; only the layer inputs stay in memory). ``None`` (default) turns it on
    where no plan fits without it, or where its best plan scores better than the best without it
    by more than the tie band's floor (``tie_band`` if given); ``True`` always; ``False`` never.

    ``overlap_param_gather``: ZeRO-1/2 plans run their parameter all-gather beside the next
    step's forward (Megatron-LM ``--overlap-param-gather``) instead of after the optimizer.

    ``optimizer_impl``: "per-tensor" when the training script's optimizer loops over the parameter
    tensors (:data:`costmodel.training.iteration.PER_TENSOR_STEP_S`): every plan adds the loop over
    its rank's tensors (a ZeRO-1 rank's share), as ``iteration`` does.

    ``flash_attention`` False: no fused attention kernel, every layer materialises its scores
    (:mod:`costmodel.training.attention`: their memory and HBM traffic), as ``iteration`` charges them.

    ``offload_optimizer``: ZeRO >= 1 plans keep the optimizer states on the host and step on
    the CPU (ZeRO-Offload, :mod:`costmodel.training.offload`; needs the system's host memory
    bandwidth).

    ``shard``: "hybrid" makes the ZeRO-3 plans shard in each node and replicate across nodes
    (FSDP HYBRID_SHARD, DeepSpeed MiCS); "full" (default) shards over every GPU.

    ``asynchronous``: asynchronous parameter-server training (``parameter-server`` is then the
    algorithm swept unless ``algorithms`` names it with others): no barrier, no straggler wait,
    the servers run the optimizer and hold its states; ZeRO does not apply.

    ``input_rate``: samples per second one rank's data loader sustains (None: not limiting); a
    plan whose GPUs consume faster waits for it (:mod:`costmodel.training.losses`).

    ``sync``: how the framework synchronises, as ``iteration --sync`` (:mod:`costmodel.training.syncmodes`).
    ``"ddp"`` (default): DDP's buckets (the swept sizes), ZeRO-2/3 plans as DeepSpeed runs
    them (ZeRO-2's weights gathered after the optimizer). ``"fsdp"``: ZeRO-2/3 plans as PyTorch
    FSDP runs them, one collective per wrapped unit (a transformer block), ``SHARD_GRAD_OP``
    (ZeRO-2) gathering in the forward; ZeRO-0 plans are DDP's (``NO_SHARD``), and no ZeRO-1 plan
    is made (FSDP has none). ``"horovod"``: tensor fusion
    (the swept sizes are the fusion buffer) and its cycle's wait; ``"flat"``: one all-reduce of
    the whole gradient after backward; ``"per-tensor"``: one per gradient tensor; these three
    are ZeRO-0 only. A row's ``bucket_bytes`` is its call size (the fusion buffer, the whole
    gradient, one tensor, one FSDP unit) and its ``sync`` the mode it runs.

    Inputs that would be silently ignored are refused: ``tokens``, ``deadline_hours`` or
    ``budget`` for a model without tokens (a CNN), a price or power without ``tokens``, an empty
    ``algorithms``, and a named algorithm that runs on none of the multi-GPU layouts swept.
    Repeated algorithms, bucket sizes and gradient dtypes count once (the first kept). Without
    ``grad_dtypes`` the plan sweeps :func:`default_grad_dtypes`: the compute dtype's and fp32.

    ``progress``, if given, is called as ``progress(done, total)`` — first with ``done = 0``,
    then as the collective times of each algorithm, the array sweep, the ranking and the
    explanation finish (a few dozen calls at most), last with ``done == total`` — so a
    caller can draw a progress bar. It is not called again once the plan is returned.
    """
    from costmodel.planner import explain as planner_explain
    from costmodel.planner.comm import all_reduce_algorithms
    from costmodel.planner.economics import economics_for

    for name, value in (("flash_attention", flash_attention), ("explain", explain), ("asynchronous", asynchronous),
                        ("overlap_param_gather", overlap_param_gather), ("offload_optimizer", offload_optimizer),
                        ("recompute", recompute), ("colocated", colocated)):
        if value is not None or name not in ("recompute", "colocated"):  # those two: None is "decide"/"default"
            check_switch(name, value)
    for name, value in (("tokens", tokens), ("mfu", mfu), ("jitter_cv", jitter_cv), ("tie_band", tie_band),
                        ("memory_reserve", memory_reserve), ("memory_reserve_fraction", memory_reserve_fraction),
                        ("deadline_hours", deadline_hours), ("budget", budget),
                        ("price_per_gpu_hour", price_per_gpu_hour), ("power_w", power_w), ("input_rate", input_rate)):
        if value is not None and not is_real(value):
            raise InputError(name, value, "a number")  # text here was a TypeError from the arithmetic
    if progress is not None and not callable(progress):
        raise InputError("progress", progress, "a function progress(done, total), or None")
    if tokens is not None:  # the CLI's range and wholeness: inf tokens gave "inf hours, inf USD"
        from costmodel.training.workloads import parse_param_count

        tokens = parse_param_count(tokens, "tokens", "token")
    algorithms_given = algorithms is not None
    bucket_bytes = _bucket_sweep(bucket_bytes, sync)
    algorithms, bucket_bytes, grad_dtypes = _distinct_axes(algorithms, bucket_bytes, grad_dtypes)
    partial = gpus is not None
    if partial and max_gpus is not None:
        raise InputError("max_gpus", max_gpus, "unset with --gpus (which already caps the GPUs)")
    _check(global_batch, 1 if nodes is None else nodes, min_gpus, gpus if partial else max_gpus, objective,
           tokens, backend, top, gpus_field="gpus" if partial else "max_gpus")
    # whole numbers as Python's ints from here (numpy's integers, 64.0): counts, divisors, text
    global_batch, min_gpus, top = int(global_batch), int(min_gpus), int(top)
    nodes, gpus, max_gpus = (None if value is None else int(value) for value in (nodes, gpus, max_gpus))
    _check_money_needs_tokens(tokens, price_per_gpu_hour, power_w)
    if tie_band is not None and not 0 <= tie_band < 1:
        raise InputError("tie_band", tie_band, "a fraction from 0 to below 1 (e.g. 0.02)")
    _check_axes(bucket_bytes, grad_dtypes)
    workload, system = _resolve(model, cluster)
    if objective == "throughput":  # another objective is refused for a model without tokens by its own field
        _check_tokens_apply(workload, seq_len, tokens, deadline_hours, budget)
    _check_tokens_fill_a_step(workload, seq_len, tokens, global_batch)
    from costmodel.training.memory import check_grad_dtype

    if grad_dtypes is None:
        grad_dtypes = default_grad_dtypes(compute_dtype, system.gpu)
    for grad_dtype in grad_dtypes:
        check_grad_dtype(grad_dtype, system.gpu, "grad_dtypes")
    curves_note = curves_left_out(system, backend)
    if curves_note:  # the textbook model asked for: a calibration's curves left out, and said so
        from hardware.given import derived_system

        system = derived_system(system, measured=())
    backend = resolve_backend(backend, system).value  # auto: NCCL's model on NVIDIA, RCCL's tuning model on AMD
    money = economics_for(system.gpu.name, price_per_gpu_hour=price_per_gpu_hour, power_w=power_w)
    constraints = Constraints(tokens=tokens, deadline_hours=deadline_hours, budget=budget,
                              price_per_gpu_hour=money.price_per_gpu_hour, power_w=money.power_w)
    _check_constraints(objective, constraints)
    setting = training_setting(workload, system, seq_len=seq_len, compute_dtype=compute_dtype,
                               mfu=mfu, optimizer=optimizer, jitter_cv=jitter_cv, backend=backend,
                               recompute=bool(recompute), memory_reserve=_reserve(
                                   system, memory_reserve, memory_reserve_fraction), mfu_calibration=mfu_calibration,
                               elementwise_traffic=elementwise_traffic)
    from costmodel.training.gradsync import QUANTIZED_STAGE, check_quantization

    check_quantization(quantize_weights, quantize_grads, QUANTIZED_STAGE)
    options = _zero_options(shard, offload_optimizer, overlap_param_gather, quantize_weights, quantize_grads)
    if asynchronous:
        algorithms = _async_algorithms(algorithms)
        _no_zero_options_with_async(options)
    _check_sync(sync, options, asynchronous)
    if sync == "fsdp" and algorithms is not None and _canonical_names(algorithms) == {"parameter-server"}:
        # --sync fsdp changes only the ZeRO-2/3 rows, whose all-gather and reduce-scatter a parameter
        # server does not run: the plan was DDP's, the option silently dropped (CLI audit, 2026-12-01)
        raise InputError("sync", sync, "ddp with parameter-server alone in --algorithms (--sync fsdp times the "
                         "ZeRO-2/3 rows' all-gather and reduce-scatter, which a parameter server does not run)")
    from costmodel.training.attention import check_flash_attention
    from costmodel.training.iteration import check_optimizer_impl

    check_flash_attention(workload, bool(flash_attention))
    setting = replace(setting, optimizer_impl=check_optimizer_impl(optimizer_impl, asynchronous, offload_optimizer),
                      flash_attention=bool(flash_attention),
                      comm_params=_ps_params(algorithms, servers, colocated, system, nodes or 1),
                      quantize=(quantize_weights, quantize_grads),
                      overlap_param_gather=bool(overlap_param_gather),
                      offload_optimizer=bool(offload_optimizer), shard=_check_shard(shard),
                      asynchronous=bool(asynchronous), sync=sync,
                      losses=check_losses(replace(setting.losses, input_rate=input_rate)))
    if offload_optimizer:
        from costmodel.training.offload import host_path

        host_path(system)  # refuses a system whose host memory bandwidth is unknown, before sweeping
    if partial:
        max_gpus, nodes = int(gpus), int(nodes or gpus)
    else:
        nodes = int(nodes or 1)
        max_gpus = int(max_gpus or nodes * system.gpus_per_node)
    if asynchronous:  # one GPU has no peer: its step would be a synchronous one without its optimizer
        if max_gpus < 2:
            raise InputError("asynchronous", True, f"2 or more GPUs (at most {max_gpus} here: "
                             "one GPU has no peer to update asynchronously)")
        if int(global_batch) < 2:  # a sample per worker at least: wider GPU limits would not help
            raise InputError("global_batch", global_batch, "2 or more with asynchronous updates (a sample for each "
                             "of at least 2 workers)")
        min_gpus = max(int(min_gpus), 2)
    space = build_space(system, nodes=nodes, global_batch=int(global_batch), min_gpus=min_gpus,
                        max_gpus=max_gpus, bucket_bytes=bucket_bytes, grad_dtypes=grad_dtypes,
                        partial=partial,
                        algorithms=algorithms or all_reduce_algorithms(system, nodes, backend))
    steps = _Progress(progress, len(space.algorithms) + _SWEEP_UNITS + _RECOMPUTE_UNITS
                      + _RANK_UNITS + (_EXPLAIN_UNITS if explain else 0))
    band = choose.TIE_BAND if tie_band is None else tie_band

    def score_of(candidate, candidate_setting):  # the ranking's own scores, without its errors
        return objective_scores(candidate, candidate_setting, objective, constraints.tokens, constraints)

    setting, sweep, recompute_state, tables = _sweep_fitting(setting, system, space, recompute, steps, nodes,
                                                           algorithms_given, score_of, band)
    steps.advance(_RECOMPUTE_UNITS)
    scores, keys, sent = _rank(sweep, setting, system, objective, constraints,
                               GpuRoom(gpus_per_node=system.gpus_per_node, nodes=nodes, min_gpus=int(min_gpus),
                                       max_gpus=max_gpus, global_batch=int(global_batch), partial=partial))
    known: dict[tuple, tuple[float, float] | None] = {}

    def interval_of(row: PlanRow):  # each configuration's interval computed once
        key = (row.algorithm, row.micro_batch, row.accumulation_steps, row.nodes, row.gpus_per_node,
               row.bucket_bytes, row.grad_dtype, row.zero_stage, row.recompute, row.sync)
        if key not in known:
            known[key] = step_interval(row, setting, system, backend)
        return known[key]

    fastest_flat = choose.fastest(scores, keys) if tie_band is None or explain else None  # the ties', the reason's
    near, source = None, "floor" if tie_band is None else "given"
    if tie_band is None:  # ties from the model's own uncertainty, where the fastest plan's exceeds the floor
        near = _tie_set(sweep, setting, scores, fastest_flat, band, objective, constraints, sent, interval_of)
        source = "floor" if near is None else "scenarios"

    def ties_on(other_sweep, other_setting, other_system, other_scores, other_keys):  # the what-if's re-plans
        def other_interval(row: PlanRow):
            return step_interval(row, other_setting, other_system, backend)

        return _tie_set(other_sweep, other_setting, other_scores, choose.fastest(other_scores, other_keys), band,
                        objective, constraints, None, other_interval)

    ranked = _ranked(scores, keys, top, band, near)  # the table once the ties are known
    rows = collapsed_rows(sweep, setting, scores, ranked, top, constraints, sent)
    interval = interval_of(rows[0]) if explain else None
    steps.advance(_RANK_UNITS)
    findings, reason, sensitivity = ({}, "", ())
    if explain:
        findings, reason, sensitivity = planner_explain.explain(
            sweep=sweep, setting=setting, system=system, scores=scores, ranked=ranked,
            objective=objective, tokens=tokens, max_gpus=max_gpus, tolerance=band,
            recompute_state=recompute_state, on_step=steps.advance, keys=keys, tied=near,
            ties_on=ties_on if tie_band is None else None,
            constraints=constraints, rows=rows, tables=tables, sent=sent, fastest=fastest_flat,
            gpu_limits=gpu_limits(system.gpus_per_node, nodes, partial, int(global_batch),
                                  max(n * g for n, g in space.layouts), max_gpus))
    outside_note = outside_backend(space.algorithms, backend)
    if explain:
        findings = {**findings, "tie_band_source": source, "measured_left_out": curves_note,
                    "outside_backend": outside_note}
    published = published_findings(rows[0], setting, backend) if explain else None
    if explain and (interval is not None or published is not None or curves_note or outside_note):  # findings the reason lacked
        from costmodel.planner.text import reason_text

        findings = {**findings, **({"step_interval_s": interval} if interval is not None else {}),
                    **(published or {})}
        reason = reason_text(rows[0], findings, objective)
    steps.finish()
    return Plan(model=workload.name, cluster=system.name, objective=objective, backend=backend,
                global_batch=int(global_batch), seq_len=setting.seq_len,
                configurations=int(scores.size), feasible_configurations=int(np.isfinite(scores).sum()),
                best=rows[0], candidates=tuple(rows), reason=reason, findings=findings,
                sensitivity=tuple(sensitivity), tie_band=float(band),
                memory_reserve_bytes=float(sweep.reserve_bytes),
                deadline_hours=deadline_hours, budget=budget,
                price_per_gpu_hour=money.price_per_gpu_hour, power_w=money.power_w,
                economics_source=money.source, optimizer_impl=setting.optimizer_impl,
                flash_attention=setting.flash_attention, mfu=setting.user_mfu,
                mfu_calibration=setting.mfu_calibration, elementwise_traffic=setting.elementwise_traffic)


__all__ = ["DEFAULT_BUCKET_BYTES", "Plan", "PlanRow", "build_space", "default_grad_dtypes", "plan"]
