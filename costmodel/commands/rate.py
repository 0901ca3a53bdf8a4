"""Where a command's GPUs come from (``--nodes``/``--gpus``) and ``--rate``: compute speed from a
run the user measured (:mod:`costmodel.training.measured`), shared by ``iteration`` and ``plan``."""

import math
from typing import Annotated

from costmodel.commands.options import Option
from dpbase.errors import InputError
from dpbase.limits import MAX_RANKS

RATE = Annotated[str | None, Option("--rate", help="Compute speed from a run you measured: its throughput, whole run (1200, 1200 img/s, 69070 tok/s); the MFU that reproduces it is used, as with --mfu.")]
RATE_GPUS = Annotated[int, Option("--rate-gpus", help="GPUs of the --rate run, on this cluster (default 1).")]


def gpu_group(system, nodes: int | None, gpus: int | None, field: str = "gpus") -> tuple[int, int]:
    """(nodes, GPUs per node) from --nodes and the total --gpus (``field``: the option named in errors)."""
    per_node_max = system.gpus_per_node
    if nodes is not None and not 1 <= nodes <= MAX_RANKS:  # 0 is not "the default"
        raise InputError("nodes", nodes, f"an integer from 1 to {MAX_RANKS} (or leave it out)")
    if gpus is None:
        return (nodes or 1), per_node_max
    if gpus < 1:
        raise InputError(field, gpus, "an integer >= 1")
    if nodes is None:
        nodes = math.ceil(gpus / per_node_max)
        if gpus % nodes:
            raise InputError(field, gpus, f"at most {per_node_max}, or a multiple of {per_node_max} "
                             f"(whole nodes of {system.name})")
    if gpus % nodes or gpus // nodes > per_node_max:
        raise InputError(field, gpus, f"a multiple of --nodes {nodes} with at most "
                         f"{per_node_max} GPUs per node on {system.name}")
    return nodes, gpus // nodes


def measured_speed(workload, system, config, rate: str, rate_gpus: int, rate_micro_batch: int | None,
                    mfu: float | None, **comm_options):
    """(config at the MFU solved from --rate, its mfu_source)."""
    from costmodel.training import measured, workloads
    from costmodel.training.oncluster import measured_mfu
    from dpbase.limits import MAX_COUNT
    from dpbase.values import replace

    if mfu is not None:
        raise InputError("rate", rate, "either --rate or --mfu, not both")
    samples = measured.parse_rate(rate, workloads.resolve_seq_len(workload, config.seq_len))
    micro = config.micro_batch if rate_micro_batch is None else rate_micro_batch
    if isinstance(micro, bool) or not 1 <= micro <= MAX_COUNT:
        raise InputError("rate_micro_batch", rate_micro_batch, f"an integer from 1 to {MAX_COUNT}")
    nodes, per_node = gpu_group(system, None, rate_gpus, field="rate_gpus")
    solved = measured_mfu(workload, system, replace(config, micro_batch=micro), samples,
                          nodes=nodes, gpus_per_node=per_node, **comm_options)
    if solved.capped:
        raise InputError("rate", rate, f"at most {solved.ceiling_samples_per_s:,.4g} samples/s: {workload.name} on "
                         f"{rate_gpus} {system.gpu.name} at micro-batch {micro} and MFU 1 (check --compute-dtype, "
                         "--rate-gpus and --rate-micro-batch)")
    source = measured.source_text(measured.MeasuredRate(samples_per_s=samples, gpus=rate_gpus, micro_batch=micro),
                                  micro, solved)
    return replace(config, mfu=solved.mfu), source
