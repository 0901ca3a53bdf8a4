"""``dpcost plan``: recommend a data-parallel training plan, with alternatives and a reason."""

import contextlib
from enum import Enum
from typing import Annotated

from costmodel.commands import complete
from costmodel.commands.common import (
    cli_errors,
    comma_list,
    echo,
    parse_bits,
    parse_reserve,
    print_json,
    server_placement,
)
from costmodel.commands.options import (
    COLOCATED,
    COMPUTE_DTYPE,
    JSON,
    MEMORY_RESERVE,
    MFU,
    NO_FLASH_ATTENTION,
    OPTIMIZER,
    OPTIMIZER_IMPL,
    PS_PLACEMENT,
    SEQ_LEN,
    Option,
)
from costmodel.commands.rate import RATE, RATE_ACCUM, RATE_GPUS, RATE_RECOMPUTE, RATE_ZERO, check_options
from costmodel.training import roofline


class Objective(str, Enum):
    """What the planner optimises."""

    throughput = "throughput"
    time_to_train = "time-to-train"
    gpu_hours = "gpu-hours"
    cost = "cost"
    energy = "energy"


class Emit(str, Enum):
    """What runnable settings to print."""

    torch = "torch"
    deepspeed = "deepspeed"
    env = "env"


def _algorithm(name: str) -> str:
    """One swept algorithm's registry name (an alias read as its algorithm), or auto."""
    from costmodel.names import algorithm_named

    return name if name == "auto" else algorithm_named(name).value


def _bucket(text: str) -> float:
    """One swept bucket size, with its unit and in the model's range (as iteration's --bucket)."""
    from costmodel.commands.common import bucket_bytes_of

    return bucket_bytes_of(text, "buckets")


@contextlib.contextmanager
def _as_typed(**given: tuple[str | None, float | None]):
    """The planner's refusals of an option it was handed converted (``field=(text typed, value
    passed)``: a reserve no GPU holds, a deadline no plan meets) quoting the text typed
    ("got '500GB'", "got '1h'"), not its bytes or hours."""
    from dpbase.errors import InputError

    try:
        yield
    except InputError as error:
        text, value = given.get(error.field, (None, None))
        if value is None or error.value != value:
            raise
        raise type(error)(error.field, text, error.allowed) from None


def _table(rows) -> str:
    from costmodel.commands.textfmt import table
    from costmodel.planner.text import table_cells

    return table(table_cells(rows))


_HOURS = {"h": 1.0, "d": 24.0, "w": 168.0}


def parse_hours(text: str | None, field: str) -> float | None:
    """A duration in hours: "720h", "30d", "4w", or a bare number of hours."""
    from dpbase.errors import InputError

    if text is None:
        return None
    raw = text.strip().lower()
    scale = _HOURS.get(raw[-1:], None)
    number = raw[:-1] if scale else raw
    try:
        value = float(number) * (scale or 1.0)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise InputError(field, text, "a duration > 0 in hours, e.g. 720h, 30d or 4w")
    return value


def _check_html(html: str | None, cluster: str) -> None:
    """``--html``: a file path (an empty one would write nothing), not the cluster's TOML."""
    if html is None:  # the writer's module (tempfile, shutil) only when there is a report to write
        return
    from dpbase.safeio import check_html_path, check_outputs

    check_html_path("html", html)  # an empty or blank path too: it has no .html suffix
    check_outputs({"html": html}, [cluster])


def _sensitivity(rows, best=None) -> list[str]:
    from costmodel.planner.text import rate, signed_percent

    lines = ["Sensitivity of the best plan's throughput (samples/s):"]
    for parameter in dict.fromkeys(r["parameter"] for r in rows):
        cells = [f"x{r['factor']:g}: {rate(r['samples_per_s'])} ({signed_percent(r['change'])})"
                 for r in rows if r["parameter"] == parameter]
        lines.append(f"  {parameter:<15} " + "   ".join(cells) + _against_the_grain(parameter, rows)
                     + _unscaled_path(parameter, rows, best))
    return lines


def _unscaled_path(parameter: str, rows, best) -> str:
    """Why a plan that communicates reads 0.0 % on both link rows: the rows scale the node's links
    and NICs (whatif.scaled_system), not the GPUs' path to host memory, which a parameter server
    inside one node runs on (a planner audit, 2026-11-30: '0.0 %' read as 'the links do not
    matter' for a step whose exposed communication was 8 %)."""
    if best is None or parameter not in ("link bandwidth", "link latency") or best.comm_s <= 0.0 \
            or best.algorithm != "parameter-server" or best.nodes != 1:
        return ""
    if any(r["parameter"] == parameter and r["change"] != 0.0 for r in rows):
        return ""
    return "   (its collectives run on the GPUs' path to host memory, which these rows do not scale)"


def _against_the_grain(parameter: str, rows) -> str:
    """Why better links can read slower: the library chooses its algorithm by its own estimate,
    and faster links move that choice (review, 2026-11-29: gpt2 on 4 DGX H100 nodes read
    "link bandwidth x1.5: -0.1 %", as NCCL left its NVLS tree for tree/LL128 at 25 MiB)."""
    better = {"link bandwidth": 1.5, "link latency": 0.5}.get(parameter)
    if better is None or not any(r["parameter"] == parameter and r["factor"] == better and r["change"] < 0
                                 for r in rows):
        return ""
    return "   (the collective library's own estimate moves its algorithm choice on these links)"


def _text(result, nodes) -> str:
    from costmodel.planner.text import heading

    return "\n".join([heading(result, nodes), "", result.reason, "", f"Top {len(result.candidates)}:",
                      _table(result.candidates), "", *_sensitivity(result.sensitivity, result.best)])


def _measured_mfu(model, cluster, rate, run, *, seq_len, compute_dtype, optimizer, optimizer_impl, flash_attention,
                  sync, jitter, input_rate, backend):
    """(the solve, its source) from --rate: the measured run (commands/rate_run.py) at the plan's
    model, compute dtype, optimizer, sync preset, jitter and data loader."""
    import hardware
    from costmodel.commands.rate_run import measured_speed
    from costmodel.training.iteration import TrainingConfig
    from costmodel.training.losses import StepLosses
    from costmodel.training.workloads import load_model
    from dpbase.errors import InputError

    if run.micro_batch is None:
        from costmodel.training import measured_rate, workloads

        # the rate itself first: "--rate abc" was refused as a missing --rate-micro-batch (an audit, 2026-11-30)
        workload = load_model(model)
        measured_rate.parse_rate(rate, workloads.tokens_per_sample(workload, workloads.resolve_seq_len(workload, seq_len)),
                                 kind=workload.kind)
        raise InputError("rate_micro_batch", None, "the micro-batch of the --rate run (plan sweeps micro-batches)")
    config = TrainingConfig(micro_batch=run.micro_batch, seq_len=seq_len, compute_dtype=compute_dtype,
                            optimizer=optimizer, optimizer_impl=optimizer_impl, flash_attention=flash_attention,
                            sync=sync, jitter_cv=jitter,
                            losses=StepLosses(input_rate=input_rate))
    return measured_speed(load_model(model), hardware.load_system(cluster), config, rate, run, backend=backend)


@cli_errors
def plan(
    model: Annotated[str, Option(help="Preset name (gpt2, llama2-70b …) or a parameter count (7B, 1.3e9).", autocompletion=complete.models)],
    cluster: Annotated[str, Option(help="System profile name or TOML path (dgx-h100 …).", autocompletion=complete.systems)],
    global_batch: Annotated[int, Option("--global-batch", help="Samples per optimizer step = micro-batch x accumulation x GPUs.")],
    nodes: Annotated[int | None, Option(help="Nodes available (default 1; with --gpus: no cap).")] = None,
    gpus: Annotated[int | None, Option("--gpus", help="GPUs available in any count, partial nodes allowed (e.g. 20 on 8-GPU nodes).")] = None,
    seq_len: SEQ_LEN = None,
    max_gpus: Annotated[int | None, Option("--max-gpus", help="Most GPUs to use (default: all GPUs of the nodes).")] = None,
    min_gpus: Annotated[int, Option("--min-gpus", help="Fewest GPUs to use.")] = 1,
    objective: Annotated[Objective, Option(help="throughput, time-to-train, gpu-hours, cost (USD) or energy (kWh); all but throughput need --tokens.")] = Objective.throughput,
    tokens: Annotated[str | None, Option(help="Tokens to train on, e.g. 2T or 1e12 (for time-to-train, gpu-hours, cost, energy, --deadline, --budget).")] = None,
    deadline: Annotated[str | None, Option(help="Wall time allowed for --tokens: 720h, 30d, 4w; a bare number is hours (plans that miss it are excluded).")] = None,
    budget: Annotated[float | None, Option(help="Most USD to spend on --tokens (needs a price per GPU-hour).")] = None,
    price_per_gpu_hour: Annotated[float | None, Option("--price-per-gpu-hour", help="USD per GPU-hour (default: hardware/data/prices.toml).")] = None,
    power_per_gpu: Annotated[float | None, Option("--power-per-gpu", help="Watts per GPU for --objective energy (default: the GPU's board power).")] = None,
    memory_reserve: MEMORY_RESERVE = None,
    tie_band: Annotated[float | None, Option("--tie-band", help="Plans within this relative margin of the best count as tied (tie-break rules decide); default: 0.02, and where the fastest plan's 10-90 % step interval is wider, a plan must stay within it with every collective at the low end, prediction and high end of its interval.")] = None,
    backend: Annotated[str, Option(help="auto (NCCL's model on NVIDIA, RCCL's tuning model on AMD), ideal (textbook alpha-beta), nccl or rccl.")] = "auto",
    top: Annotated[int, Option(help="How many ranked alternatives to show.")] = 10,
    buckets: Annotated[str | None, Option(help="Comma-separated DDP bucket sizes (Horovod fusion buffers) to sweep; default 5MiB,25MiB,100MiB,400MiB. Not with --sync flat or per-tensor, which size every call themselves.")] = None,
    grad_dtypes: Annotated[str | None, Option("--grad-dtypes", help="Comma-separated gradient dtypes to sweep (fp32, bf16, fp16, fp8; default: the compute dtype's, as iteration's --grad-dtype, and fp32).")] = None,
    compute_dtype: COMPUTE_DTYPE = "bf16",
    mfu: MFU = None,
    elementwise_traffic: Annotated[float | None, Option("--elementwise-traffic", help=f"A transformer's non-matmul HBM traffic, bytes per training FLOP at width 1, behind its default MFU (the width roofline; default {roofline.ELEMENTWISE_TRAFFIC:g}). Not with --mfu or --rate.")] = None,
    rate: RATE = None,
    rate_gpus: RATE_GPUS = None,
    rate_micro_batch: Annotated[int | None, Option("--rate-micro-batch", help="Micro-batch of the --rate run (needed with --rate: the plan sweeps micro-batches).")] = None,
    rate_accum: RATE_ACCUM = None,
    rate_zero: RATE_ZERO = None,
    rate_recompute: RATE_RECOMPUTE = False,
    optimizer: OPTIMIZER = "adamw",
    optimizer_impl: OPTIMIZER_IMPL = "multi-tensor",
    no_flash_attention: NO_FLASH_ATTENTION = False,
    jitter: Annotated[float, Option(help="Compute-time coefficient of variation between GPUs.")] = 0.0,
    recompute: Annotated[bool | None, Option("--recompute/--no-recompute", help="Activation recomputation: always / never (default: where no plan fits without it, or its best plan is faster by more than the tie band's floor).", show_default=False)] = None,
    emit: Annotated[Emit | None, Option(help="Print what to set to run the plan: torch (DDP/FSDP arguments), deepspeed (config JSON) or env (NCCL variables + torchrun).")] = None,
    html: Annotated[str | None, Option(help="Write a one-page HTML report to this path.")] = None,
    algorithms: Annotated[str | None, Option("--algorithms", help="Comma-separated all-reduce algorithms to sweep (default: what the cluster's stack runs), e.g. auto,parameter-server.")] = None,
    quantize_weights: Annotated[str | None, Option("--quantize-weights", help="ZeRO++ qwZ for the ZeRO-3 plans: all-gather weights as int8.")] = None,
    quantize_grads: Annotated[str | None, Option("--quantize-grads", help="ZeRO++ qgZ for the ZeRO-3 plans: gradients as int4 or int8 by all-to-all.")] = None,
    input_rate: Annotated[float | None, Option("--input-rate", help="Samples per second one rank's data loader sustains (default: not limiting).")] = None,
    asynchronous: Annotated[bool, Option("--async", help="Asynchronous parameter-server updates (sweeps parameter-server alone; with --servers/--ps-placement).")] = False,
    shard: Annotated[str, Option("--shard", help="ZeRO-3 plans over every GPU (full), over each node's GPUs replicated across nodes (hybrid: FSDP HYBRID_SHARD, DeepSpeed MiCS), or with backward's weight gathers inside the node (hpz: ZeRO++ hpZ).")] = "full",
    sync: Annotated[str, Option("--sync", help="How the framework synchronises, as iteration --sync: ddp (DDP buckets; ZeRO-2/3 as DeepSpeed runs them), fsdp (ZeRO-2/3 as PyTorch FSDP runs them: one collective per transformer block), horovod (tensor fusion: --buckets are the fusion buffer), flat (one all-reduce after backward) or per-tensor; the last three without ZeRO.")] = "ddp",
    offload_optimizer: Annotated[bool, Option("--offload-optimizer", help="ZeRO >= 1 plans: optimizer states and step on the host CPU (ZeRO-Offload); needs the system's host_memory_bandwidth.")] = False,
    overlap_param_gather: Annotated[bool, Option("--overlap-param-gather", help="ZeRO-1/2 plans: all-gather the updated parameters beside the next forward (Megatron-LM --overlap-param-gather).")] = False,
    servers: Annotated[int | None, Option("--servers", help="Parameter servers S when parameter-server is among --algorithms (default 1).")] = None,
    ps_placement: PS_PLACEMENT = None,
    colocated: COLOCATED = False,
    json_output: JSON = False,
) -> None:
    """Recommend algorithm, micro-batch, accumulation, GPUs, bucket, gradient dtype and ZeRO stage.

    Example: dpcost plan --model llama2-7b --cluster dgx-h100 --nodes 8 --global-batch 512 --seq-len 4096
    """
    from costmodel.commands.progress import progress
    from costmodel.planner.economics import check_economics
    from costmodel.planner.recommend import plan as make_plan
    from costmodel.training.workloads import parse_param_count
    from dpbase.errors import InputError

    if emit is not None and json_output:  # one output: refused before the sweep, never dropped
        raise InputError("--json", f"given with --emit {emit.value}",
                         "one output: --emit writes a launch script, --json the plan")
    _check_html(html, cluster)  # before the sweep: a report it could not write is refused first
    check_economics(price_per_gpu_hour, power_per_gpu)
    reserve, reserve_share = parse_reserve(memory_reserve)
    placement = server_placement(ps_placement, colocated)
    described = dict(rate_gpus=rate_gpus, rate_micro_batch=rate_micro_batch, rate_accum=rate_accum,
                     rate_zero=rate_zero, rate_recompute=rate_recompute)  # the run behind --rate
    check_options(rate, mfu, elementwise_traffic, **described)
    source = None
    if rate is not None:
        from costmodel.commands.rate_run import MeasuredRun

        solved, source = _measured_mfu(model, cluster, rate, MeasuredRun.from_options(**described), seq_len=seq_len,
                                       compute_dtype=compute_dtype, optimizer=optimizer,
                                       optimizer_impl=optimizer_impl, flash_attention=not no_flash_attention,
                                       sync=sync, jitter=jitter,
                                       input_rate=input_rate, backend=backend)
        mfu = solved.mfu
    swept = None if algorithms is None else list(comma_list(algorithms, "algorithms", "ring,double-binary-tree",
                                                             _algorithm))
    hours = parse_hours(deadline, "deadline")
    with progress("Sweeping plans") as update, _as_typed(memory_reserve=(memory_reserve, reserve),
                                                          deadline=(deadline, hours)):
        result = make_plan(
            model, cluster, global_batch=global_batch, nodes=nodes, gpus=gpus, seq_len=seq_len,
            min_gpus=min_gpus, max_gpus=max_gpus, objective=objective.value, backend=backend,
            top=top, tokens=parse_param_count(tokens, "tokens", "token") if tokens is not None else None,
            bucket_bytes=None if buckets is None else comma_list(buckets, "buckets", "25MiB,100MiB", _bucket),
            grad_dtypes=None if grad_dtypes is None else comma_list(grad_dtypes, "grad_dtypes", "bf16,fp32"), compute_dtype=compute_dtype, mfu=mfu,
            mfu_calibration=source, elementwise_traffic=elementwise_traffic,
            optimizer=optimizer, optimizer_impl=optimizer_impl, flash_attention=not no_flash_attention,
            jitter_cv=jitter, recompute=recompute, tie_band=tie_band,
            memory_reserve=reserve, memory_reserve_fraction=reserve_share, deadline_hours=hours,
            budget=budget, price_per_gpu_hour=price_per_gpu_hour, power_w=power_per_gpu,
            algorithms=swept, servers=servers, quantize_weights=parse_bits(quantize_weights, "quantize_weights"),
            quantize_grads=parse_bits(quantize_grads, "quantize_grads"), overlap_param_gather=overlap_param_gather,
            offload_optimizer=offload_optimizer, shard=shard, asynchronous=asynchronous,
            input_rate=input_rate, colocated=placement, sync=sync,
            progress=update, _cli_words=True)
    if html is not None:
        from costmodel.plots.planreport import report_html
        from dpbase.safeio import write_outputs

        write_outputs({"html": (html, report_html(result, nodes or (None if gpus else 1), where=True))}, [cluster])
    if emit is not None:
        from costmodel.planner.emit import note, render

        echo(render(result.best, emit.value))
        aside = note(result.best, emit.value)
        if aside:
            echo(aside, err=True)
        return
    if json_output:
        print_json({**result.to_dict(), **({"compute_speed": result.compute_speed} if result.compute_speed else {})})
        return
    echo(_text(result, nodes or (None if gpus else 1)))

