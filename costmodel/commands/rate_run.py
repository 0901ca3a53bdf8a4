"""What ``--rate`` does for ``iteration`` and ``plan``: compute speed from a run the user measured
(:mod:`costmodel.training.measured_rate`; the options are declared in :mod:`costmodel.commands.rate`).

The measured run is described by the ``--rate-*`` options and is the same for both commands: a
plain data-parallel run on ``--rate-gpus`` GPUs of the cluster (default 1) at
``--rate-micro-batch``, ``--rate-accum`` micro-batches per step (default 1), ZeRO stage
``--rate-zero`` (default 0) and activation recomputation with ``--rate-recompute``. It has the
command's model, compute dtype, optimizer, ``--sync`` preset (DDP for ``fsdp`` below ZeRO-2),
jitter and loss terms; its gradients are in the compute dtype's width (:data:`GRAD_DTYPE`); its
collectives are the cluster's own (algorithm ``auto``, the sync mode's default buckets,
overlapped with backward, synchronous) with none of the target's extras (compression, host
reduction, offload, ZeRO++, the parameter gather beside the forward, hybrid sharding).
"""

from costmodel.commands.common import gpu_group
from dpbase.errors import InputError
from dpbase.values import frozen

# The measured run's gradient dtype: the compute dtype's width (fp32 for fp32/tf32, fp16 for
# fp16, bf16 otherwise), whatever the target's --grad-dtype or a plan's --grad-dtypes.
GRAD_DTYPE = {"fp32": "fp32", "tf32": "fp32", "fp16": "fp16"}
ZERO_SYNCS = ("ddp", "fsdp")  # the presets with ZeRO stages (syncmodes); the others are ZeRO-0 only


@frozen(kw_only=True)
class MeasuredRun:
    """What the ``--rate-*`` options say of the measured run (None: not given)."""

    gpus: int | None = None
    micro_batch: int | None = None
    accumulation: int | None = None
    zero_stage: int | None = None
    recompute: bool = False


def _rate_text(samples_per_s: float) -> str:
    return f"{samples_per_s:,.0f}" if samples_per_s >= 100 else f"{samples_per_s:.3g}"


def measured_config(config, run: MeasuredRun, micro_batch_field: str):
    """``config`` as the measured run (the module docstring): the --rate-* options' micro-batch
    (``micro_batch_field`` names the option it came from), accumulation, ZeRO stage and
    recomputation, gradients of the compute dtype's width, and plain collectives."""
    from dpbase.limits import MAX_COUNT
    from dpbase.values import replace

    micro = config.micro_batch if run.micro_batch is None else run.micro_batch
    accumulation = 1 if run.accumulation is None else run.accumulation
    zero = 0 if run.zero_stage is None else run.zero_stage
    for field, value in ((micro_batch_field, micro), ("rate_accum", accumulation)):
        if isinstance(value, bool) or not 1 <= value <= MAX_COUNT:
            raise InputError(field, value, f"an integer from 1 to {MAX_COUNT}")
    if zero not in (0, 1, 2, 3):
        raise InputError("rate_zero", zero, "0, 1, 2 or 3")
    if zero and config.sync not in ZERO_SYNCS:
        raise InputError("rate_zero", zero, f"0 with --sync {config.sync} (ZeRO needs --sync ddp or fsdp)")
    return replace(config, micro_batch=micro, accumulation_steps=accumulation, zero_stage=zero,
                   recompute=run.recompute, grad_dtype=GRAD_DTYPE.get(config.compute_dtype, "bf16"),
                   sync="ddp" if config.sync == "fsdp" and zero < 2 else config.sync,
                   bucket_bytes=None, first_bucket_bytes=None, overlap=True, asynchronous=False,
                   topk_fraction=None, host_reduce=False, offload_optimizer=False, overlap_param_gather=False,
                   quantize_weights=None, quantize_grads=None, shard="full")


def measured_speed(workload, system, config, rate: str, run: MeasuredRun, micro_batch_field: str,
                   backend: str | None = None) -> tuple[float, str]:
    """(calibrated MFU, its source) solved from --rate for the measured run of ``config``
    (:func:`measured_config`) on ``run.gpus`` GPUs of ``system`` (the cluster's transport for
    that many nodes)."""
    from costmodel.training import measured_rate, transport, workloads
    from costmodel.training.oncluster import measured_mfu
    from dpbase.values import replace

    gpus = 1 if run.gpus is None else run.gpus
    tokens = workloads.tokens_per_sample(workload, workloads.resolve_seq_len(workload, config.seq_len))
    samples = measured_rate.parse_rate(rate, tokens)
    measured = measured_config(config, run, micro_batch_field)
    nodes, per_node = gpu_group(system, None, gpus, field="rate_gpus")
    measured = replace(measured, transport=transport.step_transport(system, nodes))
    solved = measured_mfu(workload, system, measured, samples, nodes=nodes, gpus_per_node=per_node, backend=backend)
    where = f"{workload.name} on {gpus} {system.gpu.name} at micro-batch {measured.micro_batch}"
    hint = "check --compute-dtype and the --rate-* options" + (
        ", and --input-rate, which caps it" if measured.losses.input_rate is not None else "")
    if solved.capped:
        raise InputError("rate", rate, f"at most {_rate_text(solved.ceiling_samples_per_s)} samples/s: {where} "
                         f"at MFU 1 ({hint})")
    if solved.floored:
        raise InputError("rate", rate, f"at least {_rate_text(solved.floor_samples_per_s)} samples/s: {where} "
                         f"at MFU {measured_rate.LOW_MFU:g} ({hint})")
    steps = f" x {measured.accumulation_steps}" if measured.accumulation_steps > 1 else ""
    return solved.mfu, (f"solved from the measured rate {_rate_text(samples)} samples/s on {gpus} "
                        f"GPU{'s' if gpus > 1 else ''} at micro-batch {measured.micro_batch}{steps}, "
                        f"ZeRO-{measured.zero_stage}{', recomputed' if measured.recompute else ''}")
