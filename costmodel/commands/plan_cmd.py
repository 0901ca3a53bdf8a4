"""``dpcost plan``: recommend a data-parallel training plan, with alternatives and a reason."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from costmodel.commands import complete
from costmodel.commands.common import cli_errors, print_json


class Objective(str, Enum):
    """What the planner optimises."""

    throughput = "throughput"
    time_to_train = "time-to-train"
    gpu_hours = "gpu-hours"


def _list(text: str, parse) -> tuple:
    return tuple(parse(part.strip()) for part in text.split(",") if part.strip())


def _table(rows) -> str:
    from costmodel.commands.textfmt import table
    from costmodel.planner.text import percent, rate
    from dpbase.units import format_size, format_time

    return table([{
        "#": str(r.rank), "algorithm": r.algorithm, "GPUs": f"{r.gpus} ({r.nodes}x{r.gpus_per_node})",
        "micro-batch": str(r.micro_batch), "accum": str(r.accumulation_steps),
        "bucket": format_size(r.bucket_bytes), "grads": r.grad_dtype, "ZeRO": str(r.zero_stage),
        **({"recompute": "yes" if r.recompute else "no"} if any(x.recompute for x in rows) else {}),
        "step": format_time(r.total_s), "samples/s": rate(r.samples_per_s),
        "efficiency": percent(r.scaling_efficiency), "exposed comm": percent(r.comm_share),
        "memory": f"{r.memory_bytes / 1e9:.1f} GB", "headroom": f"{r.memory_headroom_bytes / 1e9:.1f} GB",
    } for r in rows])


def _sensitivity(rows) -> list[str]:
    from costmodel.planner.text import rate

    lines = ["Sensitivity of the best plan's throughput (samples/s):"]
    for parameter in dict.fromkeys(r["parameter"] for r in rows):
        cells = [f"x{r['factor']:g}: {rate(r['samples_per_s'])} ({r['change']:+.1%})"
                 for r in rows if r["parameter"] == parameter]
        lines.append(f"  {parameter:<15} " + "   ".join(cells))
    return lines


def _text(result, nodes: int) -> str:
    head = (f"Plan for {result.model} on {result.cluster} (up to {nodes} node(s)), global batch "
            f"{result.global_batch}, seq {result.seq_len}, objective {result.objective}, "
            f"{result.backend} backend: {result.configurations:,} configurations swept, "
            f"{result.feasible_configurations:,} feasible")
    return "\n".join([head, "", result.reason, "", f"Top {len(result.candidates)}:",
                      _table(result.candidates), "", *_sensitivity(result.sensitivity)])


@cli_errors
def plan(
    model: Annotated[str, typer.Option(help="Preset name (gpt2, llama2-70b …) or a parameter count (7B, 1.3e9).", autocompletion=complete.models)],
    cluster: Annotated[str, typer.Option(help="System profile name or TOML path (dgx-h100 …).", autocompletion=complete.systems)],
    global_batch: Annotated[int, typer.Option("--global-batch", help="Samples per optimizer step = micro-batch x accumulation x GPUs.")],
    nodes: Annotated[int, typer.Option(help="Nodes available.")] = 1,
    seq_len: Annotated[int | None, typer.Option("--seq-len", help="Tokens per sample (transformers; default from the preset).")] = None,
    max_gpus: Annotated[int | None, typer.Option("--max-gpus", help="Most GPUs to use (default: all GPUs of the nodes).")] = None,
    min_gpus: Annotated[int, typer.Option("--min-gpus", help="Fewest GPUs to use.")] = 1,
    objective: Annotated[Objective, typer.Option(help="throughput, time-to-train or gpu-hours (the last two need --tokens).")] = Objective.throughput,
    tokens: Annotated[str | None, typer.Option(help="Tokens to train on, e.g. 2T or 1e12 (for time-to-train, gpu-hours).")] = None,
    backend: Annotated[str, typer.Option(help="auto (NCCL's model on NVIDIA, RCCL's ring/tree on AMD), ideal (textbook alpha-beta), nccl or rccl.")] = "auto",
    top: Annotated[int, typer.Option(help="How many ranked alternatives to show.")] = 10,
    buckets: Annotated[str, typer.Option(help="Comma-separated DDP bucket sizes to sweep.")] = "5MiB,25MiB,100MiB,400MiB",
    grad_dtypes: Annotated[str, typer.Option("--grad-dtypes", help="Comma-separated gradient dtypes to sweep (fp32, bf16, fp16, fp8).")] = "bf16,fp32",
    compute_dtype: Annotated[str, typer.Option("--compute-dtype", help="Matmul dtype: fp32, tf32, bf16, fp16, fp8.")] = "bf16",
    mfu: Annotated[float | None, typer.Option(help="Model FLOPs utilisation (default: measured for the model kind where known, e.g. CNNs, else the GPU profile's).")] = None,
    optimizer: Annotated[str, typer.Option(help="sgd (momentum), adam or adamw.")] = "adamw",
    jitter: Annotated[float, typer.Option(help="Compute-time coefficient of variation between GPUs.")] = 0.0,
    recompute: Annotated[bool | None, typer.Option("--recompute/--no-recompute", help="Activation recomputation: always / never (default: only when no plan fits without it).", show_default=False)] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Recommend algorithm, micro-batch, accumulation, GPUs, bucket, gradient dtype and ZeRO stage.

    Example: dpcost plan --model llama2-7b --cluster dgx-h100 --nodes 8 --global-batch 512 --seq-len 4096
    """
    from costmodel.commands.progress import progress
    from costmodel.planner.recommend import plan as make_plan
    from costmodel.training.workloads import parse_param_count
    from dpbase.units import parse_size

    with progress("Sweeping plans") as update:
        result = make_plan(
            model, cluster, global_batch=global_batch, nodes=nodes, seq_len=seq_len, min_gpus=min_gpus,
            max_gpus=max_gpus, objective=objective.value, backend=backend, top=top,
            tokens=parse_param_count(tokens, "tokens") if tokens is not None else None,
            bucket_bytes=_list(buckets, lambda s: parse_size(s, "buckets")),
            grad_dtypes=_list(grad_dtypes, str), compute_dtype=compute_dtype, mfu=mfu,
            optimizer=optimizer, jitter_cv=jitter, recompute=recompute, progress=update)
    if json_output:
        print_json(result.to_dict())
        return
    typer.echo(_text(result, nodes))
