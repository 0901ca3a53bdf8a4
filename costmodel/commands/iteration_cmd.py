"""``dpcost iteration``: break one data-parallel training step down on a cluster."""

from typing import Annotated

from costmodel.commands import complete
from costmodel.commands.common import (
    bucket_bytes_of,
    cli_errors,
    echo,
    gpu_group,
    parse_bits,
    print_json,
    reserve_bytes_of,
    server_placement,
)
from costmodel.commands.options import (
    COLOCATED,
    COMPUTE_DTYPE,
    JSON,
    MEMORY_RESERVE,
    MFU,
    MICRO_BATCH,
    NO_FLASH_ATTENTION,
    OPTIMIZER,
    OPTIMIZER_IMPL,
    PS_PLACEMENT,
    SEQ_LEN,
    Option,
)
from costmodel.commands.rate import RATE, RATE_ACCUM, RATE_GPUS, RATE_RECOMPUTE, RATE_ZERO, check_options
from costmodel.training import losses, roofline
from dpbase.errors import InputError


def _buckets(b, format_size) -> str:
    """How the gradient was cut: one bucket is the whole gradient (whatever --bucket or
    --first-bucket say: a first bucket larger than the gradient read "1 buckets of 25 MiB"), and
    a first bucket larger than the rest is named (DDP's smaller 1 MiB default first is not).
    Buckets of whole tensors (DDP, Horovod, where the model's tensors are listed) are told by their
    calls: the first as cut, and the rest's mean."""
    if b.bucket_count <= 1:
        return "1 bucket (the whole gradient)"
    from costmodel.training.memory import precision_for

    # the gradient's own bytes (not a step's: accumulation synchronising k times, ZeRO-2, moves k x)
    grad = b.params * precision_for(b.grad_dtype).grad_bytes
    return _cut(b, grad, format_size) + _early(b)


def _compressed(b, format_size) -> str:
    """With top-k compression, the bytes a step hands to its collectives beside the gradient's own
    (the buckets are cut from the gradient; what they send was in the JSON alone: seed audit,
    2026-11-30)."""
    if b.topk_fraction is None:
        return ""
    from costmodel.training.memory import precision_for

    grad = b.params * precision_for(b.grad_dtype).grad_bytes
    return (f", top-k {b.topk_fraction:g}: all-gathers {format_size(b.sync_payload_bytes)} per step (every rank's "
            f"values and indices; the gradient is {format_size(grad)})")


def _early(b) -> str:
    """Where the model's own readiness curve has its first bytes ready early (a CNN's classifier),
    how many by when: ", 89 % of the gradient ready by 0.5 % of backward"."""
    knots = b.gradient_readiness
    if len(knots) < 3 or not b.overlap or b.sync == "flat":  # (flat reduces after backward)
        return ""
    bytes_share, backward_share = knots[1]
    return f", {bytes_share:.0%} of the gradient ready by {backward_share:.1%} of backward"


def _cut(b, grad: float, format_size) -> str:
    """The calls as cut: one per tensor, whole tensors, or the bucket's bytes."""
    if b.sync == "per-tensor":  # each call timed at its tensor's size where the tensors are listed
        return (f"{b.bucket_count} calls, one per gradient tensor ({format_size(grad / b.bucket_count)} on average"
                f"{', each timed at its own size' if b.whole_tensors else ''})")
    if b.whole_tensors:
        return _whole_tensors(b, grad, format_size)
    if 0 < grad <= b.bucket_bytes:  # --bucket 1TiB read "2 buckets of 1 TiB"
        return f"{b.bucket_count} buckets: the first of {format_size(b.first_bucket_bytes)}, then the rest"
    if b.first_bucket_bytes > b.bucket_bytes:
        return (f"{b.bucket_count} buckets: the first of {format_size(b.first_bucket_bytes)}, "
                f"then {format_size(b.bucket_bytes)} each")
    return f"{b.bucket_count} buckets of {format_size(b.bucket_bytes)}"


def _whole_tensors(b, grad: float, format_size) -> str:
    """Calls of whole tensors: the bucket (and a first bucket set apart), then the calls as cut,
    the first and the rest's mean ("226 buckets of 25 MiB (whole tensors: the first call 262.1 MB,
    then 58.73 MB on average)")."""
    if grad <= b.bucket_bytes:  # one bucket after the first holds the rest
        return (f"{b.bucket_count} buckets of whole tensors: the first of {format_size(b.first_call_bytes)}, "
                "then the rest")
    first = f", the first of {format_size(b.first_bucket_bytes)}" if b.first_bucket_bytes > b.bucket_bytes else ""
    mean = (grad - b.first_call_bytes) / (b.bucket_count - 1)
    return (f"{b.bucket_count} buckets of {format_size(b.bucket_bytes)}{first} (whole tensors: the first call "
            f"{format_size(b.first_call_bytes)}, then {format_size(mean)} on average)")


def _gb(size_bytes: float) -> str:
    return f"{size_bytes / 1e9:,.2f} GB"


def _algorithm_text(b, comm_info: dict) -> str:
    """``ring``, or for auto what the comm model picks for the step's bucket (25 MiB unless the
    step's calls are another size: ``--bucket``, a flat all-reduce, a tensor) and the backend."""
    from dpbase.units import format_size

    if b.host_reduce and b.ranks > 1:
        return "all-reduce through host memory (--host-reduce: PCIe copies, CPU reduction)"
    name = comm_info.get("algorithm", b.algorithm) or "n/a"
    chosen, protocol = comm_info.get("algorithm_at_25MiB"), comm_info.get("protocol_at_25MiB")
    size = "25 MiB"
    if "algorithm_at_bucket" in comm_info:  # the header iteration prints: the step's own call size
        chosen, protocol = comm_info["algorithm_at_bucket"], comm_info["protocol_at_bucket"]
        size = format_size(b.bucket_bytes)
    backend = comm_info.get("backend", "ideal")
    primitive = comm_info.get("primitive_at_25MiB", "all-reduce")
    calls = f"at {size}" if primitive == "all-reduce" else f"for {size} {primitive}s"
    calls += " in the node" if comm_info.get("group_at_25MiB") == "node" else ""
    if name == "auto" and chosen:
        return f"auto ({chosen}{'/' + protocol if protocol else ''} {calls}, {backend} backend)"
    return f"{name} ({backend} backend)"


def _probed_group(comm, config):
    """The group the step's gradient collective runs on: hybrid sharding's reduce-scatter runs on
    the GPUs of one node, where the whole job's probe named the 128-rank choice (review, 2026-11-30)."""
    if config.shard == "hybrid" and config.zero_stage == 3 and comm.ranks > 1:
        from costmodel.cluster.comm import hybrid_groups

        return hybrid_groups(comm)[0], True
    return comm, False


def _described(comm, config) -> dict:
    """The comm model at a glance for the header and JSON: what a 25 MiB call of the step's gradient
    collective runs, probed on the group it runs on (:func:`_probed_group`)."""
    primitive = _gradient_primitive(config)
    group, hybrid = _probed_group(comm, config)
    info = comm.describe(primitive)
    if hybrid:
        inner = group.describe(primitive)
        info = {**info, **{key: inner[key] for key in ("backend", "algorithm_at_25MiB", "protocol_at_25MiB")},
                "group_at_25MiB": "node"}
    return info


def _at_bucket(comm, config, bucket_bytes: float) -> dict:
    """What a call of the step's own bucket runs, where it is not the 25 MiB :func:`_described`
    probes (the header named the 25 MiB choice under --bucket 400MB); nothing otherwise."""
    from costmodel.cluster.comm import PROBE_BYTES

    if not bucket_bytes > 0 or abs(bucket_bytes - PROBE_BYTES) <= 0.5:
        return {}
    at = _probed_group(comm, config)[0].choose(_gradient_primitive(config), bucket_bytes)
    return {"algorithm_at_bucket": at.algorithm, "protocol_at_bucket": at.protocol,
            "bucket_probe_bytes": float(bucket_bytes)}


def _gradient_primitive(config) -> str:
    """The collective that carries the step's gradients (:func:`gradsync.step_primitives`): ZeRO-0's
    all-reduce, a ZeRO stage's reduce-scatter, qgZ's all-to-all, top-k's all-gather."""
    from costmodel.training.gradsync import step_primitives

    found = step_primitives(config.zero_stage, config.quantize_grads is not None, topk=config.topk_fraction is not None)
    return next(p for p in ("all-reduce", "reduce-scatter", "all-to-all", "all-gather") if p in found)


def _range(interval, what: str = "") -> str:
    """``   10-90 %: 1.2 s-1.6 s`` (then ``what``) for an interval, nothing without one."""
    from dpbase.units import format_time

    return "" if interval is None else f"   10-90 %: {format_time(interval[0])}–{format_time(interval[1])}{what}"


def _published(b, from_rate: bool) -> list[str]:
    """Where published runs predicted like this one landed (costmodel.training.residuals)."""
    from costmodel.training.iteration import USER_MFU_SOURCE
    from costmodel.training.residuals import CLASS_TEXT, interval_name
    from dpbase.units import format_time

    if b.published_interval_s is None:
        return []
    low, high = b.published_interval_s
    speed = ("compute speed from --rate" if from_rate else "compute speed from --mfu" if b.mfu_source == USER_MFU_SOURCE
             else "compute speed predicted; --rate (or --mfu) from a measured run narrows it")
    return [f"  published runs       step {format_time(low)}–{format_time(high)}   ({interval_name()} of "
            f"{CLASS_TEXT[b.published_class]} runs predicted out of sample; {speed})"]


def _zero_stage(zero: int | None, sync: str) -> int:
    """``--zero`` as TrainingConfig takes it (0 unset; --sync fsdp reads 0 as its FULL_SHARD). A
    ``--zero 0`` typed beside ``--sync fsdp`` became ZeRO-3 unsaid: FSDP shards, so it is refused."""
    if zero == 0 and sync == "fsdp":
        raise InputError("zero", zero, "2 (SHARD_GRAD_OP) or 3 (FULL_SHARD, the default: leave --zero out) with "
                         "--sync fsdp, which shards")
    return 0 if zero is None else zero


def _no_copies_to_drop(b, no_buffer_copies: bool) -> str | None:
    """The note of --no-buffer-copies where the step copies nothing on the compute stream anyway
    (a per-tensor all-reduce, FSDP and Horovod's own stream, parameter servers, a host-memory
    reduction): it was taken without effect, unsaid (review, 2026-11-30). One GPU's own note says it."""
    from costmodel.training import syncmodes

    if not no_buffer_copies or b.ranks == 1:
        return None
    mode = syncmodes.stage_mode(b.sync, b.zero_stage)
    if syncmodes.buffer_copy_passes(mode, asynchronous=not b.synchronous, host_reduce=b.host_reduce) != (0, 0):
        return None
    return (f"--no-buffer-copies changes nothing here: this step copies no gradient into buffers on the compute "
            f"stream ({'parameter servers' if not b.synchronous else '--host-reduce' if b.host_reduce else '--sync ' + mode})")


def _one_micro_batch(b, sync_each_micro_batch: bool) -> str | None:
    """The note of --sync-each-micro-batch on a step of one micro-batch, which all-reduces after it
    either way: taken without effect, unsaid (CLI audit, 2026-12-01). One GPU's own note says it."""
    if not sync_each_micro_batch or b.ranks == 1 or b.accumulation_steps > 1:
        return None
    return ("--sync-each-micro-batch changes nothing here: a step of one micro-batch (--accum 1) "
            "synchronises after it either way")


def _one_gpu_options(**given: bool) -> str | None:
    """A note naming the data-parallel options given (``given``: option → whether it was) that one
    GPU, which exchanges no gradients and waits for no peer, leaves without effect."""
    flags = [f"--{name.replace('_', '-')}" for name, was in given.items() if was]
    if not flags:
        return None
    return (f"one GPU exchanges no gradients and waits for no peer: {', '.join(flags)} "
            f"{'changes' if len(flags) == 1 else 'change'} nothing here")


def _lines(b, comm_info: dict, recomputed=None, from_rate: bool = False) -> list[str]:
    from costmodel.training.roofline import SOURCE as ROOFLINE
    from dpbase.numfmt import number, percent, rate  # shared with plan: text and tables agree
    from dpbase.units import format_size, format_time

    mem = b.memory
    mode = "synchronous" if b.synchronous else f"asynchronous (staleness {b.staleness_updates:g} updates)"
    rows = [
        f"{b.model} ({b.params / 1e9:.3g} B params) on {b.ranks} GPU{'' if b.ranks == 1 else 's'}, "
        f"algorithm {_algorithm_text(b, comm_info)}, ZeRO-{b.zero_stage}, {mode}",
        f"step: {b.accumulation_steps} x micro-batch {b.micro_batch} per GPU, global batch "
        f"{b.global_batch}, {f'seq {b.seq_len}, ' if b.seq_len else ''}grads {b.grad_dtype}, compute {b.compute_dtype} "
        f"at MFU {percent(b.mfu, 0)}"
        + (" of the nominal FLOPs (Winograd convolutions do fewer)" if b.mfu > 1.0 else "")
        + (f" ({b.mfu_source})" if from_rate else f" ({ROOFLINE})" if b.mfu_source.startswith(ROOFLINE) else "")
        + (f" x {b.matmul_efficiency:.0%} (a micro-batch this small starves the tensor cores: GEMM roofline)"
           if b.matmul_efficiency < 0.995 else "")
        + (f", a fixed {format_time(b.fixed_s_per_micro_batch)} per micro-batch (kernel launches, kernels a small "
           f"batch cannot fill; the MFU is micro-batch {b.mfu_micro_batch}'s)" if b.mfu_micro_batch else "")
        + (f", attention scores through HBM {format_time(b.attention_scores_s)} per micro-batch "
           "(no fused attention kernel: every layer materialises its scores)" if b.attention_scores_s else
           ", attention scores materialised (their HBM traffic is in the --mfu given)" if b.attention_materialised
           else "")
        + f", {_buckets(b, format_size)}"
        + _compressed(b, format_size)
        + (", activation recomputation (backward re-runs the forward)" if b.recompute else ""),
        f"sync {b.sync}, transport {b.transport}; losses: overlap slowdown {b.overlap_slowdown:.1%}"
        + (f", GPU speed spread {b.speed_cv * 100:.3g}% (one-sided)" if b.synchronous else "")
        + (f", slow node x{b.slow_node_factor:g}" if b.slow_node_factor > 1 else "")
        + (f", jitter {b.jitter_cv * 100:.3g}%" if b.jitter_cv else "")
        + ("" if b.synchronous else "; no straggler wait (asynchronous: nobody waits for the slowest)")
        + (f"; ZeRO++ int{b.quantize_weights} weights" if b.quantize_weights else "")
        + (f"; ZeRO++ int{b.quantize_grads} gradients (all-to-all)" if b.quantize_grads else "")
        + ("; parameter all-gather overlapped with the next forward" if b.overlap_param_gather else "")
        + ("; optimizer offloaded to the CPU (ZeRO-Offload)" if b.offload_optimizer else "")
        + (f"; gradients synchronised after each of the {b.accumulation_steps} micro-batches (no no_sync)"
           if b.sync_each_micro_batch and b.accumulation_steps > 1 and b.ranks > 1 else "")
        + (f"; hybrid sharding: ZeRO-3 over the {b.shard_ranks} GPUs of each node, replicated across nodes"
           if b.shard == "hybrid" else "")
        + ("; ZeRO++ hpZ: backward gathers the weights inside the node (secondary partition)"
           if b.shard == "hpz" else ""),
        "",
        f"  forward              {format_time(b.forward_s):>12}",
        f"  backward             {format_time(b.backward_s):>12}",
        f"  straggler wait       {format_time(b.straggler_wait_s):>12}",
        f"  communication        {format_time(b.comm_s):>12}   hidden {format_time(b.hidden_comm_s)}, "
        f"exposed {format_time(b.exposed_comm_s)}" + _range(b.comm_interval_s),
        f"  overlap interference {format_time(b.interference_s):>12}   (compute slowed by hidden comm)",
        f"  host overhead        {format_time(b.host_overhead_s):>12}   (per data-parallel step)",
        *([f"  buffer copies        {format_time(b.buffer_copy_s):>12}   (the gradient into the {b.sync} buffers "
           "and back, in HBM)"] if b.buffer_copy_s > 0 else []),
        *([f"  input pipeline wait  {format_time(b.input_wait_s):>12}   (data loader at {number(b.input_rate, 0)} samples/s per rank)"]
          if b.input_rate is not None else []),
        f"  optimizer            {format_time(b.optimizer_s):>12}"
        + (f"   a per-tensor loop: {format_time(b.optimizer_dispatch_s)} launching its kernels"
           if b.optimizer_impl == "per-tensor" else "")
        + (f"   on the host: CPU step {format_time(b.optimizer_host_s)}, weights copied back "
           f"{format_time(b.optimizer_copy_s)}" if b.offload_optimizer else ""),
        f"  total                {format_time(b.total_s):>12}" + _range(b.total_interval_s, " (the collectives' spread alone)"),
        *([f"  slow worker          {format_time(b.slow_worker_s):>12}   (1 of {b.ranks} at x{b.slow_node_factor:g} "
           f"compute: the others do not wait, it lands fewer updates; its gradients "
           f"{b.staleness_updates * b.slow_worker_s / b.total_s:.3g} updates stale)"] if b.slow_worker_s else []),
        "",
        f"  throughput           {rate(b.samples_per_s)} samples/s"
        + (f", {number(b.tokens_per_s, 0)} tokens/s" if b.tokens_per_s else ""),
        f"  scaling efficiency   {percent(b.scaling_efficiency)}   (exposed comm share {percent(b.comm_share)})",
        *_published(b, from_rate),
        "",
        f"memory per GPU: weights {_gb(mem.weights_bytes)}, gradients {_gb(mem.gradients_bytes)}, "
        f"optimizer {_gb(mem.optimizer_bytes)}, activations {_gb(mem.activations_bytes)}, "
        f"logits and loss {_gb(mem.logits_bytes)}, CUDA context and NCCL buffers "
        f"{_gb(mem.runtime_bytes)}, fragmentation {_gb(mem.fragmentation_bytes)}",
        f"  total {_gb(mem.total_bytes)} of {_gb(mem.capacity_bytes)}, {_gb(mem.reserve_bytes)} kept "
        "free as the reserve: " + ("fits" if mem.fits else "DOES NOT FIT"),
    ]
    if not mem.fits:
        rows.append(_what_fits(b, recomputed))
    return rows


def _what_fits(b, recomputed=None) -> str:
    """What to change when the step does not fit: a ZeRO stage this configuration runs, else
    recomputation, else more (and a stage that would fit under another sync mode, named so)."""
    options = ", ".join(f"ZeRO-{stage} {_gb(total)}" for stage, total in enumerate(b.zero_totals_bytes))
    if b.smallest_fitting_zero_stage is not None:
        return f"  would fit: --zero {b.smallest_fitting_zero_stage} ({options})"
    if recomputed is not None and recomputed.smallest_fitting_zero_stage is not None:
        stage = recomputed.smallest_fitting_zero_stage
        return (f"  no ZeRO stage fits ({options}); would fit: --recompute --zero {stage} "
                f"({_gb(recomputed.zero_totals_bytes[stage])})")
    from costmodel.training import memory

    elsewhere = [stage for stage, total in enumerate(b.zero_totals_bytes)
                 if memory.fits(total, b.memory.capacity_bytes, b.memory.reserve_bytes)]
    smaller = "lower --micro-batch, " if b.micro_batch > 1 else ""
    recompute = "" if b.recompute or recomputed is None else "--recompute, "
    named = b.synchronous and not b.host_reduce and b.algorithm != "auto"
    how = "the parameter servers" if not b.synchronous else "--host-reduce" if b.host_reduce else \
        f"--sync {b.sync}" if b.sync != "ddp" else f"--algorithm {b.algorithm}" if named and elsewhere else None
    which = "" if how is None else f" {how} runs"
    # what the suggestion drops: each of these runs ZeRO-0 only, and is refused beside --zero; a
    # named algorithm may run none of the stage's collectives (refused there), auto runs them all
    drop = "without --host-reduce, " if b.host_reduce else "" if b.synchronous else \
        "synchronous, without parameter servers, "
    drop += "with --algorithm auto, " if named else ""
    switch = "" if b.sync == "ddp" else "--sync ddp "
    other = f"; {drop}{switch}--zero {elsewhere[0]} would fit" if elsewhere and how else ""
    return (f"  no ZeRO stage{which} fits ({options}): {smaller}{recompute}add GPUs or use model "
            f"parallelism{other}")


@cli_errors
def iteration(
    model: Annotated[str, Option(help="Preset name (gpt2, llama2-7b, resnet-50 …) or a parameter count (7B, 124M, 1.3e9).", autocompletion=complete.models)],
    cluster: Annotated[str, Option(help="System profile name or TOML path (dgx-h100 …).", autocompletion=complete.systems)],
    micro_batch: MICRO_BATCH,
    nodes: Annotated[int | None, Option(help="Nodes (default: enough for --gpus, else 1).")] = None,
    gpus: Annotated[int | None, Option(help="Total GPUs (default: all GPUs of the nodes).")] = None,
    seq_len: SEQ_LEN = None,
    accum: Annotated[int, Option(help="Gradient accumulation steps (micro-batches per synchronisation).")] = 1,
    algorithm: Annotated[str, Option(help="Collective algorithm or auto.", autocompletion=complete.algorithms)] = "auto",
    backend: Annotated[str, Option(help="auto (NCCL's model on NVIDIA, RCCL's tuning model on AMD), ideal (textbook alpha-beta), nccl or rccl.")] = "auto",
    grad_dtype: Annotated[str | None, Option("--grad-dtype", help="Gradient dtype: fp32, bf16, fp16, fp8 (default: the width of the compute dtype that runs: fp32 for an fp32/tf32 run, else its 16-bit dtype).")] = None,
    compute_dtype: COMPUTE_DTYPE = "bf16",
    topk: Annotated[float | None, Option(help="Top-k gradient compression: fraction of gradients sent (0-1].")] = None,
    mfu: MFU = None,
    elementwise_traffic: Annotated[float | None, Option("--elementwise-traffic", help=f"A transformer's non-matmul HBM traffic, bytes per training FLOP at width 1, behind its default MFU (the width roofline; default {roofline.ELEMENTWISE_TRAFFIC:g}, fitted on published single-GPU throughputs). Not with --mfu or --rate.")] = None,
    rate: RATE = None,
    rate_gpus: RATE_GPUS = None,
    rate_micro_batch: Annotated[int | None, Option("--rate-micro-batch", help="Micro-batch of the --rate run (default: --micro-batch).")] = None,
    rate_accum: RATE_ACCUM = None,
    rate_zero: RATE_ZERO = None,
    rate_recompute: RATE_RECOMPUTE = False,
    optimizer: OPTIMIZER = "adamw",
    optimizer_impl: OPTIMIZER_IMPL = "multi-tensor",
    bucket: Annotated[str | None, Option(help="Bucket / fusion-buffer size (default: the --sync mode's: DDP 25MiB, Horovod 128MiB, FSDP one transformer block).")] = None,
    first_bucket: Annotated[str | None, Option("--first-bucket", help="DDP first bucket size (default 1MiB; FSDP: the --bucket).")] = None,
    sync: Annotated[str, Option(help="How gradients are synchronised: ddp (buckets), horovod (tensor fusion), flat (one all-reduce after backward), per-tensor (no fusion), fsdp (one collective per transformer block; ZeRO-3, or SHARD_GRAD_OP with --zero 2).")] = "ddp",
    no_overlap: Annotated[bool, Option("--no-overlap", help="Communicate after backward instead of overlapping.")] = False,
    zero: Annotated[int | None, Option(help="ZeRO stage 0 (DDP, the default), 1, 2 or 3 (FSDP FULL_SHARD; with --sync fsdp, 3 by default and 2 is SHARD_GRAD_OP).")] = None,
    asynchronous: Annotated[bool, Option("--async", help="Asynchronous parameter-server updates.")] = False,
    quantize_weights: Annotated[str | None, Option("--quantize-weights", help="ZeRO++ qwZ: all-gather weights as int8 (ZeRO-3).")] = None,
    quantize_grads: Annotated[str | None, Option("--quantize-grads", help="ZeRO++ qgZ: exchange gradients as int4 or int8 by all-to-all instead of reduce-scatter (ZeRO-3).")] = None,
    input_rate: Annotated[float | None, Option("--input-rate", help="Samples per second one rank's data loader sustains (default: not limiting); the step waits when the GPU consumes faster.")] = None,
    shard: Annotated[str, Option("--shard", help="ZeRO-3 over every GPU (full), over each node's GPUs replicated across nodes (hybrid: FSDP HYBRID_SHARD, DeepSpeed MiCS), or over every GPU with backward's weight gathers inside the node (hpz: ZeRO++ hpZ).")] = "full",
    offload_optimizer: Annotated[bool, Option("--offload-optimizer", help="ZeRO >= 1: keep the optimizer states on the host and run the optimizer step on the CPU (ZeRO-Offload); needs the system's host_memory_bandwidth.")] = False,
    sync_each_micro_batch: Annotated[bool, Option("--sync-each-micro-batch", help="Accumulate without DDP's no_sync: every micro-batch's backward all-reduces, not only the last (a training loop that never calls no_sync; ZeRO-0/1, not --sync flat).")] = False,
    overlap_param_gather: Annotated[bool, Option("--overlap-param-gather", help="ZeRO-1/2: all-gather the updated parameters beside the next forward (Megatron-LM --overlap-param-gather) instead of after the optimizer.")] = False,
    servers: Annotated[int | None, Option("--servers", help="Parameter servers S (with --algorithm parameter-server or --async; default 1).")] = None,
    ps_placement: PS_PLACEMENT = None,
    colocated: COLOCATED = False,
    jitter: Annotated[float, Option(help="Per-micro-batch compute-time coefficient of variation between GPUs (averages over accumulation; e.g. 0.05).")] = 0.0,
    speed_cv: Annotated[float, Option("--speed-cv", help=f"Persistent GPU-to-GPU speed spread, one-sided: GPUs slow below their clock ceiling (coefficient of variation; default {losses.SPEED_CV:g}, fitted on published scaling tables, within Sinha et al. 2022).")] = losses.SPEED_CV,
    slow_node: Annotated[float, Option("--slow-node", help="One persistently slow rank: its compute takes this multiple (1 = none).")] = 1.0,
    no_buffer_copies: Annotated[bool, Option("--no-buffer-copies", help="The gradient is reduced where it lies: no copy into the all-reduce buffers and back (PyTorch DDP's gradient_as_bucket_view=True).")] = False,
    overlap_slowdown: Annotated[float | None, Option("--overlap-slowdown", help="Compute slowdown while communication overlaps it (default 0.189, Lee et al. 2025). Over NCCL's TCP sockets, and on one node without peer-to-peer (its SHM transport), hidden communication costs its full time: 1, not settable lower (a --host-reduce path keeps the default: no GPU kernel waits on the network).")] = None,
    host_overhead: Annotated[str, Option("--host-overhead", help="Framework overhead per data-parallel step (default fitted on published scaling tables).")] = f"{losses.HOST_OVERHEAD_S * 1e3:g}ms",
    host_reduce: Annotated[bool, Option("--host-reduce", help="All-reduce the gradients through host memory (MPI/gloo on the CPU, CPU parameter servers): PCIe copies, CPU reduction, the CPUs' ring across nodes; ZeRO-0.")] = False,
    attention: Annotated[bool | None, Option("--attention/--no-attention", help="Count the attention score matmuls, 12·L·h·s² FLOPs per sample, 12·C·h·s² more for an encoder-decoder's C cross-attention layers (default: on for transformer and bert models, whose MFU defaults count them; --no-attention leaves 6·P·s alone).", show_default=False)] = None,
    no_flash_attention: NO_FLASH_ATTENTION = False,
    recompute: Annotated[bool, Option("--recompute", help="Full activation recomputation: keep only layer inputs, re-run each forward in backward (4/3 compute).")] = False,
    memory_reserve: MEMORY_RESERVE = None,
    json_output: JSON = False,
) -> None:
    """Break one training step down: compute, hidden/exposed communication, optimizer, memory.

    Example: dpcost iteration --model llama2-7b --cluster dgx-h100 --nodes 4 --micro-batch 1 --accum 8
    """

    import hardware
    from costmodel.cluster import comm as cluster_module
    from costmodel.training import memory, transport
    from costmodel.training.iteration import TrainingConfig, iteration_breakdown
    from costmodel.training.losses import StepLosses
    from costmodel.training.oncluster import breakdown_on, step_algorithm
    from costmodel.training.workloads import borrowed_cnn_speed_note, load_model
    from dpbase.units import parse_time
    from dpbase.values import replace

    described = dict(rate_gpus=rate_gpus, rate_micro_batch=rate_micro_batch, rate_accum=rate_accum,
                     rate_zero=rate_zero, rate_recompute=rate_recompute)  # the run behind --rate
    check_options(rate, mfu, elementwise_traffic, **described)
    system = hardware.load_system(cluster)
    node_count, per_node = gpu_group(system, nodes, gpus)
    algorithm = step_algorithm(algorithm, asynchronous, host_reduce)
    colocated = server_placement(ps_placement, colocated)
    comm = cluster_module.comm_model(system, node_count, per_node, algorithm=algorithm, backend=backend,
                                     servers=servers, colocated=colocated, _cli_words=True)
    if no_overlap and not overlap_param_gather and overlap_slowdown is not None:  # nothing hides: no slowdown
        raise InputError("--overlap-slowdown", overlap_slowdown, "left out with --no-overlap (the communication "
                         "runs after backward: no compute runs beside it to slow down), unless "
                         "--overlap-param-gather hides the parameter gather behind the next forward")
    step_transport = transport.step_transport(system, node_count, per_node)
    overlap_slowdown = losses.OVERLAP_SLOWDOWN if overlap_slowdown is None else \
        transport.check_given_slowdown(step_transport, overlap_slowdown, f"{system.name} " + (
            "across nodes" if node_count > 1 else "(its GPUs have no peer-to-peer path)"),
                                       transport.off_the_gpu(algorithm, host_reduce))
    config = TrainingConfig(
        micro_batch=micro_batch, seq_len=seq_len, accumulation_steps=accum, grad_dtype=grad_dtype,
        compute_dtype=compute_dtype, topk_fraction=topk, mfu=mfu, elementwise_traffic=elementwise_traffic,
        optimizer=optimizer, optimizer_impl=optimizer_impl,
        bucket_bytes=None if bucket is None else bucket_bytes_of(bucket, "bucket"),
        first_bucket_bytes=None if first_bucket is None else bucket_bytes_of(first_bucket, "first_bucket"),
        overlap=not no_overlap, zero_stage=_zero_stage(zero, sync), asynchronous=asynchronous, jitter_cv=jitter,
        include_attention=attention, flash_attention=not no_flash_attention, recompute=recompute,
        sync=sync, transport=step_transport, host_reduce=host_reduce,
        quantize_weights=parse_bits(quantize_weights, "quantize_weights"),
        quantize_grads=parse_bits(quantize_grads, "quantize_grads"),
        overlap_param_gather=overlap_param_gather, offload_optimizer=offload_optimizer, shard=shard,
        sync_each_micro_batch=sync_each_micro_batch, memory_reserve_bytes=reserve_bytes_of(memory_reserve, system.gpu.memory_bytes),
        losses=StepLosses(host_overhead_s=parse_time(host_overhead, "host_overhead"),
                          overlap_slowdown=overlap_slowdown, speed_cv=speed_cv,
                          slow_node_factor=slow_node, input_rate=input_rate, buffer_copies=not no_buffer_copies))
    info = _described(comm, config)
    workload = load_model(model)
    if rate is not None:
        from costmodel.commands.rate_run import MeasuredRun, measured_speed
        from costmodel.training.measured_rate import calibrated

        solved, source = measured_speed(workload, system, config, rate, MeasuredRun.from_options(**described),
                                        backend=backend)
        config = calibrated(config, solved, source)
    result = breakdown_on(workload, system.gpu, comm, config)
    if comm.ranks > 1:  # the header's choice at the step's own bucket, where it is not 25 MiB
        info = {**info, **_at_bucket(comm, config, result.bucket_bytes)}
    from costmodel.cluster.backends import curves_left_out
    from costmodel.cluster.mapping import regimes_unused_note

    # a calibrated link's regimes, which a cluster cannot use; a calibrated cluster's curves, which
    # --backend ideal leaves out
    borrowed = None if mfu is not None or rate is not None else borrowed_cnn_speed_note(
        workload, result.compute_dtype, getattr(system.gpu, "arch", "unknown"))
    from hardware.notes import rate_mismatch_notes

    rates = rate_mismatch_notes(system, node_count > 1, result.ranks > node_count)  # a bits/bytes typo?
    unused = "; ".join(note for note in (regimes_unused_note(system, node_count), curves_left_out(system, backend),
                                         borrowed, *rates, _no_copies_to_drop(result, no_buffer_copies),
                                         _one_micro_batch(result, sync_each_micro_batch)) if note) or None
    if result.ranks == 1:  # the data-parallel options given, which one GPU leaves without effect
        idle = _one_gpu_options(algorithm=algorithm != "auto", backend=backend != "auto", topk=topk is not None,
                                bucket=bucket is not None, first_bucket=first_bucket is not None,
                                # fsdp runs ZeRO-3 (its gather buffers): not without effect
                                sync=sync not in ("ddp", "fsdp"), no_overlap=no_overlap,
                                jitter=jitter != 0.0, speed_cv=speed_cv != losses.SPEED_CV, slow_node=slow_node != 1.0,
                                no_buffer_copies=no_buffer_copies,
                                overlap_slowdown=config.losses.overlap_slowdown != losses.OVERLAP_SLOWDOWN,
                                host_overhead=config.losses.host_overhead_s != losses.HOST_OVERHEAD_S,
                                host_reduce=host_reduce, servers=servers is not None,
                                quantize_weights=quantize_weights is not None,
                                quantize_grads=quantize_grads is not None, shard=shard != "full",
                                overlap_param_gather=overlap_param_gather, sync_each_micro_batch=sync_each_micro_batch)
        unused = "; ".join(part for part in (unused, idle) if part) or None
    if json_output:
        print_json({**result.to_dict(), "cluster": system.name, "nodes": node_count,
                    # the backend that times the collectives, as the text says (a parameter server's
                    # is the ideal one whatever --backend asked for)
                    "gpus_per_node": per_node, "backend": info.get("backend", comm.backend), "comm": info,
                    "note": unused})
        return
    recomputed = None  # the same step with recomputation, to say whether that would fit
    if not result.memory.fits and not recompute and memory.recompute_applies(workload):
        recomputed = iteration_breakdown(workload, system.gpu, comm.time_s, comm.ranks,
                                         replace(config, recompute=True))
    echo("\n".join(_lines(result, info, recomputed, from_rate=rate is not None)
                   + ([f"note: {unused}"] if unused else [])))

