"""``--rate``: compute speed from a run the user measured, for ``iteration`` and ``plan``
(:mod:`costmodel.training.measured_rate`)."""

from typing import Annotated

from costmodel.commands.common import gpu_group
from costmodel.commands.options import Option
from dpbase.errors import InputError

RATE = Annotated[str | None, Option("--rate", help="Compute speed from a run you measured: its throughput, whole run (1200, 1200 img/s, 69070 tok/s); the MFU that reproduces it is used, as with --mfu.")]
RATE_GPUS = Annotated[int | None, Option("--rate-gpus", help="GPUs of the --rate run, on this cluster (default 1).")]


def check_options(rate: str | None, mfu: float | None, rate_gpus: int | None, rate_micro_batch: int | None) -> None:
    """--rate excludes --mfu; --rate-gpus and --rate-micro-batch describe it, so need it."""
    if rate is not None and mfu is not None:
        raise InputError("rate", rate, "either --rate or --mfu, not both")
    for field, value in (("rate_gpus", rate_gpus), ("rate_micro_batch", rate_micro_batch)):
        if rate is None and value is not None:
            raise InputError(field, value, "only with --rate (the run it describes)")


def _rate_text(samples_per_s: float) -> str:
    return f"{samples_per_s:,.0f}" if samples_per_s >= 100 else f"{samples_per_s:.3g}"


def measured_speed(workload, system, config, rate: str, rate_gpus: int | None, micro_batch: int, setup: str,
                   **comm_options) -> tuple[float, str]:
    """(MFU, its source) solved from --rate for ``config`` run on ``rate_gpus`` GPUs of ``system``
    at ``micro_batch`` (its transport: the cluster's for that many nodes); ``setup`` says, in the
    source, what else the measured run is taken to be."""
    from costmodel.training import measured_rate, transport, workloads
    from costmodel.training.oncluster import measured_mfu
    from dpbase.limits import MAX_COUNT
    from dpbase.values import replace

    gpus = 1 if rate_gpus is None else rate_gpus
    tokens = workloads.tokens_per_sample(workload, workloads.resolve_seq_len(workload, config.seq_len))
    samples = measured_rate.parse_rate(rate, tokens)
    if isinstance(micro_batch, bool) or not 1 <= micro_batch <= MAX_COUNT:
        raise InputError("rate_micro_batch", micro_batch, f"an integer from 1 to {MAX_COUNT}")
    nodes, per_node = gpu_group(system, None, gpus, field="rate_gpus")
    config = replace(config, micro_batch=micro_batch, transport=transport.step_transport(system, nodes))
    solved = measured_mfu(workload, system, config, samples, nodes=nodes, gpus_per_node=per_node, **comm_options)
    where = f"{workload.name} on {gpus} {system.gpu.name} at micro-batch {micro_batch}"
    hint = "check --compute-dtype, --rate-gpus and --rate-micro-batch" + (
        ", and --input-rate, which caps it" if config.losses.input_rate is not None else "")
    if solved.capped:
        raise InputError("rate", rate, f"at most {_rate_text(solved.ceiling_samples_per_s)} samples/s: {where} "
                         f"at MFU 1 ({hint})")
    if solved.floored:
        raise InputError("rate", rate, f"at least {_rate_text(solved.floor_samples_per_s)} samples/s: {where} "
                         f"at MFU {measured_rate.LOW_MFU:g} ({hint})")
    return solved.mfu, (f"solved from the measured rate {_rate_text(samples)} samples/s on {gpus} "
                        f"GPU{'s' if gpus > 1 else ''} at micro-batch {micro_batch}, {setup}")
