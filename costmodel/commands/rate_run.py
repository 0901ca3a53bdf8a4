"""What ``--rate`` does for ``iteration`` and ``plan``: compute speed from a run the user measured
(:mod:`costmodel.training.measured_rate`; the options are declared in :mod:`costmodel.commands.rate`).

The measured run is described by the ``--rate-*`` options and is the same for both commands: a
plain data-parallel run on ``--rate-gpus`` GPUs of the cluster (default 1) at
``--rate-micro-batch``, ``--rate-accum`` micro-batches per step (default 1), ZeRO stage
``--rate-zero`` (default 0) and activation recomputation with ``--rate-recompute``. It has the
command's model, compute dtype, optimizer, ``--sync`` preset (DDP for ``fsdp`` below ZeRO-2),
jitter and loss terms; its gradients are in the width of the compute dtype that runs
(:func:`costmodel.training.iteration.default_grad_dtype`, whatever the target's --grad-dtype or a
plan's --grad-dtypes); its
collectives are the cluster's own (algorithm ``auto``, the sync mode's default buckets,
overlapped with backward, synchronous) with none of the target's extras (compression, host
reduction, offload, ZeRO++, the parameter gather beside the forward, hybrid sharding).
"""

from __future__ import annotations

from costmodel.commands.common import gpu_group
from dpbase.values import frozen

# What the measured run keeps of the command's configuration (and its sync, as its ZeRO stage runs
# it); every other TrainingConfig field takes its default (plain data parallelism), so a field
# added later stays out of it.
KEPT = ("seq_len", "compute_dtype", "optimizer", "optimizer_impl", "jitter_cv", "losses", "include_attention",
        "flash_attention")


@frozen(kw_only=True)
class MeasuredRun:
    """What the ``--rate-*`` options say of the measured run (None: not given)."""

    gpus: int | None = None
    micro_batch: int | None = None
    accumulation: int | None = None
    zero_stage: int | None = None
    recompute: bool = False

    @classmethod
    def from_options(cls, *, rate_gpus=None, rate_micro_batch=None, rate_accum=None, rate_zero=None,
                     rate_recompute=False) -> MeasuredRun:
        """From the --rate-* options (the names ``rate.check_options`` checks)."""
        return cls(gpus=rate_gpus, micro_batch=rate_micro_batch, accumulation=rate_accum, zero_stage=rate_zero,
                   recompute=rate_recompute)


def measured_config(config, run: MeasuredRun):
    """The measured run of ``config`` (the module docstring): a new TrainingConfig of its
    :data:`KEPT` fields and the --rate-* options' micro-batch (the command's where
    ``--rate-micro-batch`` is not given), accumulation, ZeRO stage and recomputation, gradients of
    the compute dtype's width, the sync mode that stage runs (:func:`syncmodes.stage_mode`)."""
    from costmodel.training import memory, syncmodes
    from costmodel.training.iteration import TrainingConfig
    from dpbase.errors import InputError
    from dpbase.limits import MAX_COUNT

    micro = config.micro_batch if run.micro_batch is None else run.micro_batch
    micro_batch_field = "micro_batch" if run.micro_batch is None else "rate_micro_batch"  # the option it came from
    accumulation = 1 if run.accumulation is None else run.accumulation
    zero = memory.check_zero_stage(0 if run.zero_stage is None else run.zero_stage, "rate_zero")
    for field, value in ((micro_batch_field, micro), ("rate_accum", accumulation)):
        if isinstance(value, bool) or not 1 <= value <= MAX_COUNT:
            raise InputError(field, value, f"an integer from 1 to {MAX_COUNT}")
    if not syncmodes.stage_runs(config.sync, zero):  # the stages the sync mode runs, named (fsdp: 0, 2, 3)
        runs = [stage for stage in syncmodes.ZERO_STAGES_OF[config.sync] if syncmodes.stage_runs(config.sync, stage)]
        why = "FSDP has no ZeRO-1" if config.sync == "fsdp" else "ZeRO needs --sync ddp or fsdp"
        raise InputError("rate_zero", zero, f"{', '.join(map(str, runs))} with --sync {config.sync} ({why})")
    from costmodel.training.gradsync import sync_each_is_a_choice

    sync = syncmodes.stage_mode(config.sync, zero)
    # the same training loop: one that accumulates without no_sync did so in the measured run too,
    # where its stage and sync mode reduce once a step (elsewhere the question does not arise)
    each = config.sync_each_micro_batch and sync_each_is_a_choice(sync, zero)
    return TrainingConfig(**{name: getattr(config, name) for name in KEPT}, micro_batch=micro,
                          accumulation_steps=accumulation, zero_stage=zero, recompute=run.recompute,
                          grad_dtype=None, sync=sync,
                          sync_each_micro_batch=each)


def measured_speed(workload, system, config, rate: str, run: MeasuredRun, backend: str | None = None):
    """(the solve, its source) for --rate's measured run of ``config`` (:func:`measured_config`) on
    ``run.gpus`` GPUs of ``system``; an out-of-reach rate is refused (:func:`measured_rate.reachable`)."""
    from costmodel.training import measured_rate, memory, workloads
    from costmodel.training.oncluster import measured_mfu

    memory.check_recompute(workload, run.recompute, "rate_recompute")
    gpus = 1 if run.gpus is None else run.gpus
    tokens = workloads.tokens_per_sample(workload, workloads.resolve_seq_len(workload, config.seq_len))
    samples = measured_rate.parse_rate(rate, tokens, kind=workload.kind)
    measured = measured_config(config, run)
    nodes, per_node = gpu_group(system, None, gpus, field="rate_gpus")
    solved = measured_mfu(workload, system, measured, samples, nodes=nodes, gpus_per_node=per_node, backend=backend,
                          _cli_words=True)
    hint = "check --compute-dtype and the --rate-* options" + (
        ", and --input-rate, which caps it" if measured.losses.input_rate is not None else "")
    measured_rate.reachable(solved, rate, f": {workload.name} on {gpus} {system.gpu.name} at micro-batch "
                                          f"{measured.micro_batch}", hint=hint)
    steps = f" x {measured.accumulation_steps}" if measured.accumulation_steps > 1 else ""
    return solved, (f"solved from the measured rate {measured_rate.rate_text(samples)} samples/s on {gpus} "
                    f"GPU{'s' if gpus > 1 else ''} at micro-batch {measured.micro_batch}{steps}, "
                    f"ZeRO-{measured.zero_stage}{', recomputed' if measured.recompute else ''}")
