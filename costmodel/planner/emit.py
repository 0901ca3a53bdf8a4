"""What to set to run a plan: NCCL environment, PyTorch DDP/FSDP arguments, DeepSpeed JSON.

Every emitted setting is a :class:`Knob`: the framework's own name for it, the value, and
the plan field it comes from (tests check each name against the framework's documented
names and each field against :class:`costmodel.planner.rank.PlanRow`). Names used:

* NCCL (NCCL user guide, "Environment Variables"): ``NCCL_ALGO`` for the all-reduce alone, in
  NCCL 2.24's per-function form ``allreduce:Tree`` (``Ring``, ``Tree``; in-network as the list
  ``NVLS,NVLSTree,CollnetDirect,CollnetChain``, from which NCCL takes what runs), set only when
  the plan's algorithm is one of NCCL's; otherwise NCCL keeps its own choice. A plain
  ``NCCL_ALGO=Tree`` applies to every collective, and since NCCL 2.24 one without Ring available
  fails (broadcast runs only Ring: DDP's first broadcast of the parameters; audit, 2026-11-30);
  a forced algorithm forces the all-reduce alone in the plan too (``zero_algorithm_ok``).
* PyTorch: ``torch.nn.parallel.DistributedDataParallel(bucket_cap_mb=...,
  gradient_as_bucket_view=True)``, the DDP comm hooks ``bf16_compress_hook`` /
  ``fp16_compress_hook`` (``torch.distributed.algorithms.ddp_comm_hooks.default_hooks``),
  ``torch.distributed.optim.ZeroRedundancyOptimizer`` for ZeRO-1, and
  ``FullyShardedDataParallel(sharding_strategy=ShardingStrategy.SHARD_GRAD_OP | FULL_SHARD,
  mixed_precision=MixedPrecision(...), backward_prefetch=BackwardPrefetch.BACKWARD_PRE,
  forward_prefetch=True)`` for ZeRO-2/3; the ``torchrun`` line (``--nnodes``,
  ``--nproc-per-node``, ``--rdzv-backend``, ``--rdzv-endpoint``).
* DeepSpeed config JSON: ``train_batch_size``, ``train_micro_batch_size_per_gpu``,
  ``gradient_accumulation_steps``, ``bf16``/``fp16`` ``enabled``, ``communication_data_type``,
  ``zero_optimization`` with ``stage``, ``overlap_comm``, ``contiguous_gradients``,
  ``reduce_bucket_size`` and ``allgather_bucket_size`` (stages 1-2) or
  ``stage3_prefetch_bucket_size`` (stage 3) — bucket sizes in *elements*, as DeepSpeed counts;
  ``activation_checkpointing`` where the plan recomputes activations (PyTorch:
  ``torch.utils.checkpoint.checkpoint`` around each transformer block).
"""

from __future__ import annotations

import json
from typing import Any

from dpbase.errors import InputError
from dpbase.values import frozen

KINDS = ("env", "torch", "deepspeed")
MIB = 2**20
DTYPE_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}
TORCH_DTYPE = {"bf16": "torch.bfloat16", "fp16": "torch.float16", "fp32": "torch.float32",
               "tf32": "torch.float32"}  # TF32: fp32 tensors, TF32 matmuls (torch.backends.cuda.matmul.allow_tf32)
COMPRESS_HOOK = {"bf16": "bf16_compress_hook", "fp16": "fp16_compress_hook"}
TORCH_OPTIMIZER = {"adamw": "torch.optim.AdamW", "adam": "torch.optim.Adam", "sgd": "torch.optim.SGD"}
# Horovod's compressors (horovod.torch.compression): fp16 only; a bf16 plan sends the same 2 bytes a value
HOROVOD_16BIT = ("fp16", "bf16")
FSDP_STRATEGY = {2: "ShardingStrategy.SHARD_GRAD_OP", 3: "ShardingStrategy.FULL_SHARD"}
RDZV_PORT = 29500
ALGO_FUNCTION = "allreduce"  # NCCL_ALGO's function prefix (src/graph/tuning.cc parseList, NCCL >= 2.24)
# NCCL before 2.24 reads no function prefix: there a plain list applied to every collective, with
# Ring kept for the ones that run nothing else (2.19-2.23; 2.17-2.18 never disabled it for them)
ALGO_BEFORE_2_24 = "# NCCL < 2.24 reads no function prefix: there set NCCL_ALGO={algo} (other collectives keep Ring)"


@frozen
class Knob:
    """One setting: the framework's name, its value, and the plan field it comes from."""

    name: str
    value: Any
    field: str


def _env(row) -> list[Knob]:
    from costmodel.nccl.names import nccl_algo_env

    algo = nccl_algo_env(row.algorithm)
    knobs = [Knob("NCCL_ALGO", f"{ALGO_FUNCTION}:{algo}", "algorithm")] if algo and row.gpus > 1 else []
    # Horovod (docs "Tensor Fusion", "Horovod with PyTorch"): the fusion buffer in bytes, the
    # cycle in milliseconds; a threshold of 0 turns fusion off (one all-reduce per tensor)
    if row.sync == "horovod":
        from costmodel.training.syncmodes import HOROVOD_CYCLE_S

        knobs += [Knob("HOROVOD_FUSION_THRESHOLD", int(row.bucket_bytes), "bucket_bytes"),
                  Knob("HOROVOD_CYCLE_TIME", round(HOROVOD_CYCLE_S * 1e3, 6), "sync")]
    elif row.sync == "per-tensor":
        knobs.append(Knob("HOROVOD_FUSION_THRESHOLD", 0, "sync"))
    return knobs


# per-tensor was timed as tf_cnn_benchmarks' replicated all-reduce, which has no cycle
PER_TENSOR_NOTE = ("# timed without Horovod's cycle (tf_cnn_benchmarks' variable_update=replicated has none); "
                   "Horovod with fusion off still waits up to HOROVOD_CYCLE_TIME per cycle")


def _torchrun(row) -> list[Knob]:
    return [Knob("--nnodes", row.nodes, "nodes"), Knob("--nproc-per-node", row.gpus_per_node,
                                                         "gpus_per_node")]


# PyTorch's ZeRO-1 is not the one timed: DDP still all-reduces every gradient, then each rank
# broadcasts its updated shard (torch.distributed.optim.ZeroRedundancyOptimizer), where the plan
# timed DeepSpeed's stage 1: a reduce-scatter of the gradients and an all-gather of the weights.
ZERO1_TORCH_NOTE = ("# note: ZeroRedundancyOptimizer keeps DDP's all-reduce of the gradients (twice the bytes of "
                    "the reduce-scatter this plan timed) and broadcasts the updated shards; "
                    "--emit deepspeed (stage 1) runs what was timed")

HOROVOD_SYNCS = ("horovod", "per-tensor")  # modes emitted as Horovod (per-tensor: fusion off)


def _horovod(row) -> list[Knob]:
    """``horovodrun -np`` and ``hvd.DistributedOptimizer``'s arguments (Horovod with PyTorch)."""
    knobs = [Knob("-np", row.gpus, "gpus"), Knob("micro_batch_size", row.micro_batch, "micro_batch"),
             Knob("backward_passes_per_step", row.accumulation_steps, "accumulation_steps")]
    if row.grad_dtype in HOROVOD_16BIT:
        knobs.append(Knob("compression", "hvd.Compression.fp16", "grad_dtype"))
    return knobs


def _torch(row) -> list[Knob]:
    knobs = _one_gpu(row) if row.gpus == 1 else _horovod(row) if row.sync in HOROVOD_SYNCS else _torch_wrapped(row)
    if row.recompute:  # full activation recomputation: each transformer block checkpointed
        knobs.append(Knob("torch.utils.checkpoint.checkpoint", True, "recompute"))
    return knobs


def _one_gpu(row) -> list[Knob]:
    """One GPU: the launch and the loop; no DDP/FSDP wrapper or hook (nothing to exchange: it wrapped
    the model in DDP with a bf16 compress hook)."""
    return [*_torchrun(row), Knob("micro_batch_size", row.micro_batch, "micro_batch"),
            Knob("gradient_accumulation_steps", row.accumulation_steps, "accumulation_steps")]


def _torch_wrapped(row) -> list[Knob]:
    """The launch, the loop and the DDP/FSDP wrapper's arguments (or a flat all-reduce's)."""
    knobs = _torchrun(row)
    knobs.append(Knob("micro_batch_size", row.micro_batch, "micro_batch"))
    knobs.append(Knob("gradient_accumulation_steps", row.accumulation_steps, "accumulation_steps"))
    if row.sync == "flat":  # one all-reduce of the flattened gradient after the last backward
        # apex DDP(delay_allreduce=True): all communication after backward (every backward); with
        # accumulation, DeepLearningExamples BERT's --allreduce_post_accumulation (no DDP wrapper)
        knobs.append(Knob("delay_allreduce", True, "sync") if row.accumulation_steps == 1
                     else Knob("--allreduce_post_accumulation", True, "sync"))
        return knobs
    if row.zero_stage <= 1:
        knobs.append(Knob("bucket_cap_mb", round(row.bucket_bytes / MIB, 3), "bucket_bytes"))
        if row.grad_dtype in COMPRESS_HOOK:
            knobs.append(Knob("comm_hook", COMPRESS_HOOK[row.grad_dtype], "grad_dtype"))
        if row.zero_stage == 1:
            knobs.append(Knob("ZeroRedundancyOptimizer", True, "zero_stage"))
    else:
        if row.shard == "hybrid":  # shard in the node, replicate across (HSDP)
            knobs.append(Knob("sharding_strategy", "ShardingStrategy.HYBRID_SHARD", "shard"))
        elif row.shard == "hpz":  # FSDP2 fully_shard: reshard to the node after forward
            knobs.append(Knob("reshard_after_forward", row.gpus_per_node, "shard"))
        else:
            knobs.append(Knob("sharding_strategy", FSDP_STRATEGY[row.zero_stage], "zero_stage"))
        knobs.append(Knob("reduce_dtype", TORCH_DTYPE[row.grad_dtype], "grad_dtype"))
    return knobs


def _deepspeed(row) -> list[Knob]:
    elements = int(row.bucket_bytes // DTYPE_BYTES.get(row.grad_dtype, 4))
    knobs = [Knob("train_batch_size", row.micro_batch * row.accumulation_steps * row.gpus, "gpus"),
             Knob("train_micro_batch_size_per_gpu", row.micro_batch, "micro_batch"),
             Knob("gradient_accumulation_steps", row.accumulation_steps, "accumulation_steps"),
             Knob("communication_data_type", row.grad_dtype, "grad_dtype"),
             Knob("zero_optimization.stage", row.zero_stage, "zero_stage"),
             Knob("zero_optimization.reduce_bucket_size", elements, "bucket_bytes")]
    if row.zero_stage in (1, 2):  # the same parameters' elements as the bucket's gradients
        knobs.append(Knob("zero_optimization.allgather_bucket_size", elements, "bucket_bytes"))
    if row.zero_stage == 3:
        knobs.append(Knob("zero_optimization.stage3_prefetch_bucket_size", elements, "bucket_bytes"))
    # ZeRO++ (deepspeed.ai/tutorials/zeropp): int8 weight all-gather, int4 gradient all-to-all
    if row.quantize_weights:
        knobs.append(Knob("zero_optimization.zero_quantized_weights", True, "quantize_weights"))
    if row.quantize_grads:
        knobs.append(Knob("zero_optimization.zero_quantized_gradients", True, "quantize_grads"))
    # MiCS (deepspeed.ai/docs/config-json; Zhang et al. 2022): ZeRO-3 sharded within groups of
    # mics_shard_size GPUs (here one node), replicated across them
    if row.shard == "hybrid":
        knobs.append(Knob("zero_optimization.mics_shard_size", row.gpus_per_node, "shard"))
    # ZeRO++ hpZ (deepspeed.ai/tutorials/zeropp): secondary weight partition in each node
    if row.shard == "hpz":
        knobs.append(Knob("zero_optimization.zero_hpz_partition_size", row.gpus_per_node, "shard"))
    # ZeRO-Offload (deepspeed.ai/docs/config-json, "Optimizer offloading"): states and step on the CPU
    if row.offload_optimizer:
        knobs.append(Knob("zero_optimization.offload_optimizer", {"device": "cpu", "pin_memory": True},
                          "offload_optimizer"))
    # Activation checkpointing (deepspeed.ai/docs/config-json, "Activation Checkpointing"): configures
    # deepspeed.checkpointing.checkpoint, which the model calls around each transformer block
    # (Megatron-DeepSpeed --checkpoint-activations; Hugging Face gradient_checkpointing=True); the
    # activations are kept whole on each GPU, as the plan timed them
    if row.recompute:
        knobs.append(Knob("activation_checkpointing.partition_activations", False, "recompute"))
    return knobs


def knobs(row, kind: str) -> list[Knob]:
    """The settings ``kind`` (env, torch, deepspeed) needs to run ``row``."""
    if kind not in KINDS:
        raise InputError("emit", kind, ", ".join(KINDS))
    _check_framework(row, kind)
    if kind == "env":
        return _env(row)
    if kind == "torch":
        return _torch(row)
    return _deepspeed(row)


def deepspeed_config(row) -> dict:
    """The DeepSpeed config JSON as a dict (nested ``zero_optimization``)."""
    config: dict[str, Any] = {}
    for knob in _deepspeed(row):
        head, _, tail = knob.name.partition(".")
        if tail:
            config.setdefault(head, {})[tail] = knob.value
        else:
            config[head] = knob.value
    # fp32 compute: neither switch on (_check_framework refuses what DeepSpeed's JSON cannot say)
    config[row.compute_dtype if row.compute_dtype in ("bf16", "fp16") else "bf16"] = {
        "enabled": row.compute_dtype in ("bf16", "fp16")}
    zero = config["zero_optimization"]
    zero["overlap_comm"] = True
    zero["contiguous_gradients"] = True
    return config


# What a recomputing plan's snippet adds (its micro-batch was sized for checkpointed blocks)
RECOMPUTE_LINE = ("# activation recomputation (this plan's micro-batch was sized for it): in the model's forward, run "
                  "each transformer block as torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False) "
                  "(Hugging Face models: model.gradient_checkpointing_enable())")


def _torchrun_line(row) -> str:
    if row.nodes == 1:  # no rendezvous host to name (an unset $MASTER_ADDR made ':29500')
        return f"torchrun --standalone --nnodes 1 --nproc-per-node {row.gpus_per_node} train.py"
    return (f"torchrun --nnodes {row.nodes} --nproc-per-node {row.gpus_per_node} "
            f"--rdzv-backend c10d --rdzv-endpoint $MASTER_ADDR:{RDZV_PORT} train.py")


def _env_text(row) -> str:
    from costmodel.nccl.names import nccl_algo_env

    found = _env(row)
    if found:
        lines = [f'export {k.name}="{k.value}"' if k.name == "NCCL_ALGO" else f"export {k.name}={k.value}"
                 for k in found]
        forced = any(k.name == "NCCL_ALGO" for k in found)
        older = [ALGO_BEFORE_2_24.format(algo=nccl_algo_env(row.algorithm))] if forced else []
        return "\n".join(lines + older)
    if row.gpus == 1:
        return "# one GPU: no collectives, nothing to set"
    return (f"# '{row.algorithm}' is not one of NCCL's algorithms (NCCL_ALGO: Ring, Tree, NVLS, NVLSTree, ...):"
            " leave NCCL_ALGO unset; NCCL picks its own")


def _horovodrun_line(row) -> str:
    hosts = ",".join(f"host{i + 1}:{row.gpus_per_node}" for i in range(row.nodes))
    return f"horovodrun -np {row.gpus} -H {hosts} python train.py"


def _horovod_text(row) -> str:
    k = {knob.name: knob.value for knob in _horovod(row)}
    env = " ".join(f"{knob.name}={knob.value}" for knob in _env(row) if knob.name.startswith("HOROVOD_"))
    compression = f", compression={k['compression']}" if "compression" in k else ""
    # a comment after the call's closing parenthesis: inside it, it took the parenthesis along
    why = "  # fp16 on the wire: Horovod has no bf16 compressor; the plan timed 2 bytes a value" \
        if row.grad_dtype == "bf16" else ""
    return "\n".join([
        f"# {env} {_horovodrun_line(row)}",
        f"# per GPU: micro-batch {row.micro_batch}, accumulation steps {row.accumulation_steps} "
        "(one synchronisation per optimizer step)",
        "optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters(), "
        f"backward_passes_per_step={k['backward_passes_per_step']}{compression}){why}",
        *([PER_TENSOR_NOTE] if row.sync == "per-tensor" else [])])


def _flat_text(row) -> str:
    k = {knob.name: knob.value for knob in _torch(row)}
    lines = [f"# {_torchrun_line(row)}",
             f"# per GPU: micro-batch {row.micro_batch}, accumulation steps {row.accumulation_steps}; the "
             "flattened gradient all-reduced once, after the last micro-batch's backward"]
    if "delay_allreduce" in k:
        lines.append(f"model = apex.parallel.DistributedDataParallel(model, delay_allreduce={k['delay_allreduce']})")
    else:  # apex DDP would all-reduce after every backward
        lines += ["# no DDP wrapper: after the last micro-batch, flatten the gradients, all-reduce them once",
                  "# and copy them back (DeepLearningExamples BERT run_pretraining.py --allreduce_post_accumulation)"]
    if row.grad_dtype in COMPRESS_HOOK:  # apex DDP and a flattened buffer reduce the gradients' own dtype
        lines.append(FLAT_DTYPE_NOTE.format(dtype=row.grad_dtype, torch=TORCH_DTYPE[row.grad_dtype]))
    return "\n".join(lines)


# The flat all-reduce moves the buffer in its own dtype: under torch.autocast the gradients are fp32,
# twice the bytes a 16-bit plan timed (an audit of the emitted settings, 2026-11-30). DeepLearningExamples
# BERT casts its flattened buffer (--allreduce_post_accumulation_fp16); apex DDP has no such switch.
FLAT_DTYPE_NOTE = ("# timed with {dtype} gradients on the wire: all-reduce the flattened buffer as {torch} "
                   "(cast before, back after; DeepLearningExamples BERT: --allreduce_post_accumulation_fp16); "
                   "fp32 gradients under torch.autocast would send twice the bytes")


def _torch_text(row) -> str:
    """The PyTorch snippet of the row's sync mode, and the checkpointing line where it recomputes."""
    text = (_one_gpu_text(row) if row.gpus == 1 else _horovod_text(row) if row.sync in HOROVOD_SYNCS
            else _flat_text(row) if row.sync == "flat" else _wrapper_text(row))
    return text + ("\n" + RECOMPUTE_LINE if row.recompute else "")


def _one_gpu_text(row) -> str:
    return "\n".join([f"# {_torchrun_line(row)}",
                      f"# per GPU: micro-batch {row.micro_batch}, accumulation steps {row.accumulation_steps}",
                      "# one GPU: no DistributedDataParallel or FSDP wrapper (no gradients to exchange)"])


# The plan times DDP's default, which copies every gradient into its bucket and back (the step's
# buffer copies); the script asks for the buckets as the gradients' storage, which PyTorch
# documents as avoiding that copy (review, 2026-11-30: the script and the plan disagreed unsaid).
BUCKET_VIEW_NOTE = ("# gradient_as_bucket_view=True: no copy of the gradients into the buckets and back, which the "
                    "plan's step counts (DDP's default): `dpcost iteration ... --no-buffer-copies` times it")


def _wrapper_text(row) -> str:
    k = {knob.name: knob.value for knob in _torch(row)}
    lines = [f"# {_torchrun_line(row)}",
             f"# per GPU: micro-batch {row.micro_batch}, accumulation steps {row.accumulation_steps}"
             + ("" if row.accumulation_steps == 1 else
                " (backward under model.no_sync() on all but the last)" if row.zero_stage <= 1 else
                " (sharded gradients are reduce-scattered on every micro-batch)")]
    if row.zero_stage <= 1:
        lines.append(f"model = DistributedDataParallel(model, bucket_cap_mb={k['bucket_cap_mb']}, "
                     "gradient_as_bucket_view=True)")
        lines.append(BUCKET_VIEW_NOTE)
        if "comm_hook" in k:
            lines.append("from torch.distributed.algorithms.ddp_comm_hooks import default_hooks")
            lines.append(f"model.register_comm_hook(None, default_hooks.{k['comm_hook']})")
        if row.zero_stage == 1:
            lines.append("optimizer = ZeroRedundancyOptimizer(model.parameters(), "
                         f"optimizer_class={TORCH_OPTIMIZER[row.optimizer]})")
            lines.append(ZERO1_TORCH_NOTE)
    elif "reshard_after_forward" in k:  # FSDP2 (torch.distributed.fsdp.fully_shard), as ZeRO++ hpZ
        param = TORCH_DTYPE[row.compute_dtype]
        shard = (f"fully_shard({{}}, reshard_after_forward={k['reshard_after_forward']}, "
                 f"mp_policy=MixedPrecisionPolicy(param_dtype={param}, reduce_dtype={k['reduce_dtype']}))")
        # one unit per transformer block (a whole-model unit would gather every weight at once);
        # --sync fsdp timed these units' calls, --sync ddp DeepSpeed's buckets (the note below)
        lines.append(f"for block in model.layers: {shard.format('block')}  # model.layers: the transformer blocks")
        lines.append(shard.format("model")
                     + f"  # after forward the weights stay sharded over the node's {k['reshard_after_forward']} GPUs")
    else:
        param = TORCH_DTYPE[row.compute_dtype]
        # one unit per transformer block (the transformer auto-wrap policy makes them): a whole-model
        # unit would gather every weight at once (an audit, 2026-11-30: 140 GB for llama2-70b)
        wrap = "auto_wrap_policy=functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Block}), "
        lines.append(f"model = FullyShardedDataParallel(model, {wrap}sharding_strategy="
                     f"{k['sharding_strategy']}, mixed_precision=MixedPrecision(param_dtype={param}, "
                     f"reduce_dtype={k['reduce_dtype']}), backward_prefetch="
                     "BackwardPrefetch.BACKWARD_PRE, forward_prefetch=True)"
                     + ("  # Block: the model's transformer block class" if wrap else ""))
    if row.zero_stage >= 2 and row.sync != "fsdp":  # a plan made with --sync fsdp timed FSDP itself
        lines.append(_fsdp_timing_note(row))
    if row.overlap_param_gather:  # no PyTorch/DeepSpeed switch: Megatron-LM's
        lines.append("# this plan overlaps the parameter all-gather with the next forward: Megatron-LM "
                     "--use-distributed-optimizer --overlap-param-gather")
    return "\n".join(lines)


def _check_framework(row, kind: str) -> None:
    """Refuse a setting that would not run what the plan timed (one line naming why).

    DeepSpeed JSON only for a plan timed with DeepSpeed's schedule (``--sync ddp``): one made with
    FSDP's, Horovod's, a flat or a per-tensor all-reduce was timed as that runs. Parameter servers
    and asynchronous updates have no PyTorch, DeepSpeed or NCCL setting here. fp8 (compute or
    gradients) has no switch in either framework's plain API (Transformer Engine's recipes are
    outside it); ZeRO++ quantisation and optimizer offload are DeepSpeed's, not PyTorch's."""
    if row.asynchronous or row.algorithm == "parameter-server":
        raise InputError("emit", kind, "a plan that all-reduces or shards its gradients (this one was timed "
                                       "with parameter servers, which no emitted setting runs)")
    if kind == "env":
        return
    if "fp8" in (row.compute_dtype, row.grad_dtype):
        what = "compute" if row.compute_dtype == "fp8" else "gradients"
        raise InputError("emit", kind, f"env for an fp8 plan (fp8 {what}: no PyTorch or DeepSpeed switch "
                                       "runs them; Transformer Engine's recipes do)")
    if kind == "deepspeed" and row.sync != "ddp":
        raise InputError("emit", kind, f"torch or env for a plan made with --sync {row.sync} (timed as that "
                                       "runs; plan with --sync ddp for DeepSpeed's schedule)")
    if kind == "deepspeed":
        _check_deepspeed(row)
    if kind == "torch" and (row.offload_optimizer or row.quantize_weights or row.quantize_grads):
        what = "optimizer offload" if row.offload_optimizer else "ZeRO++ quantisation"
        raise InputError("emit", kind, f"deepspeed or env for a plan with {what} (DeepSpeed's; PyTorch "
                                       "DDP/FSDP have no such switch)")


def _check_deepspeed(row) -> None:
    """What DeepSpeed's JSON would run otherwise than the plan timed, or not at all (an audit of
    the emitted settings against DeepSpeed's source, 2026-11-30):

    * ZeRO-0 on several GPUs: without ZeRO DeepSpeed all-reduces after backward, in buffers of
      500M elements (``engine.allreduce_gradients``); ``reduce_bucket_size`` and ``overlap_comm``
      are ZeRO's. The plan timed DDP's buckets overlapped with backward, which PyTorch DDP runs.
    * ZeRO++ quantisation below ZeRO-3: DeepSpeed reads ``zero_quantized_*`` in its stage-3 code
      alone (ZeRO++ "extends ZeRO stage 3"), so a ZeRO-1/2 plan's quantised collectives would run
      in full precision.
    * MiCS (``--shard hybrid``) with optimizer offload: ``mics.py`` raises "Local sharding has no
      support for CPU offloading" at the first accumulation boundary."""
    if row.zero_stage == 0 and row.gpus > 1:
        raise InputError("emit", "deepspeed", "torch or env for a ZeRO-0 plan (DeepSpeed without ZeRO all-reduces "
                                              "after backward in 500M-element buffers; this plan timed DDP's buckets "
                                              "overlapped with backward, which PyTorch DDP runs)")
    from costmodel.training.gradsync import QUANTIZED_STAGE

    if (row.quantize_weights or row.quantize_grads) and row.zero_stage != QUANTIZED_STAGE:
        raise InputError("emit", "deepspeed", f"a ZeRO-3 plan for ZeRO++ quantisation (DeepSpeed quantises at stage "
                                              f"3 alone: this ZeRO-{row.zero_stage} plan's collectives would run "
                                              "unquantised)")
    if row.shard == "hybrid" and row.offload_optimizer:
        raise InputError("emit", "deepspeed", "a plan without --offload-optimizer for --shard hybrid (DeepSpeed's "
                                              "MiCS has no CPU offload: 'Local sharding has no support for CPU "
                                              "offloading')")


def _fsdp_timing_note(row) -> str:
    """What the plan timed for a ZeRO-2/3 row, and the command that times FSDP's own schedule.

    A ``--sync ddp`` plan's ZeRO-2/3 rows run DeepSpeed's schedule: collectives in the swept
    bucket size (``reduce_bucket_size``), ZeRO-2's weights gathered after the optimizer (or
    beside the next forward with ``overlap_param_gather``). FSDP calls one collective per wrapped
    unit (one transformer block) and ``SHARD_GRAD_OP`` gathers in the forward: ``plan --sync
    fsdp`` and ``iteration --sync fsdp`` model that (:mod:`costmodel.training.syncmodes`)."""
    from dpbase.units import format_size

    gather = ""
    if row.zero_stage == 2:
        gather = (", weights gathered beside the next forward" if row.overlap_param_gather
                  else ", weights gathered after the optimizer")
    shard = "" if row.shard == "full" else f" --shard {row.shard}"
    return (f"# timed as DeepSpeed runs ZeRO-{row.zero_stage} (collectives in {format_size(row.bucket_bytes)} "
            f"buckets{gather}); FSDP calls one collective per wrapped unit (a transformer block)"
            + (" and gathers in the forward" if row.zero_stage == 2 else "")
            + f": `dpcost plan --sync fsdp` plans with that, `dpcost iteration --sync fsdp --zero {row.zero_stage}"
            f"{shard}` times this configuration so")


# DeepSpeed's JSON configures checkpointing but cannot turn it on: what the model must do, said
# beside it (on stderr from the CLI, so the JSON on stdout stays one document)
DEEPSPEED_RECOMPUTE_NOTE = ("note: this plan recomputes activations (its micro-batch was sized for it); the JSON's "
                            "activation_checkpointing only configures deepspeed.checkpointing.checkpoint, which the "
                            "model must call around each transformer block (Megatron-DeepSpeed "
                            "--checkpoint-activations; Hugging Face gradient_checkpointing=True)")


# What the plan timed that DeepSpeed's JSON has no setting for (ZeRO++ qgZ sends int4 gradients;
# ZeRO-1/2 gather the weights after the optimizer step): said beside it, as the torch snippet says
# the parameter gather's in a comment
DEEPSPEED_INT8_GRADS_NOTE = ("note: this plan timed int8 gradient all-to-alls; DeepSpeed's zero_quantized_gradients "
                             "sends int4 (ZeRO++ qgZ) and has no int8 setting: plan with --quantize-grads int4 for "
                             "what this JSON runs")
DEEPSPEED_OFFLOAD_NOTE = ("note: with offload_optimizer DeepSpeed steps its own CPU Adam (zero_force_ds_cpu_optimizer, "
                          "on by default): hand deepspeed.initialize no torch optimizer, add an \"optimizer\" block "
                          "(type AdamW and its params) or pass deepspeed.ops.adam.DeepSpeedCPUAdam")
DEEPSPEED_MICS_NOTE = ("note: mics_shard_size runs DeepSpeed's MiCS: build the model under deepspeed.zero.MiCS_Init, "
                       "not deepspeed.zero.Init (mics.py asserts it)")
DEEPSPEED_PARAM_GATHER_NOTE = ("note: this plan overlaps the parameter all-gather with the next forward, which "
                               "DeepSpeed's ZeRO-1/2 do not (it gathers after the optimizer step; Megatron-LM "
                               "--use-distributed-optimizer --overlap-param-gather does): plan without "
                               "--overlap-param-gather for what this JSON runs")


def note(row, kind: str) -> str | None:
    """What :func:`render`'s output cannot say itself (None where it says everything)."""
    if kind != "deepspeed":
        return None
    notes = [text for text, applies in ((DEEPSPEED_RECOMPUTE_NOTE, row.recompute),
                                        (DEEPSPEED_INT8_GRADS_NOTE, row.quantize_grads == 8),
                                        (DEEPSPEED_OFFLOAD_NOTE, row.offload_optimizer),
                                        (DEEPSPEED_MICS_NOTE, row.shard == "hybrid" and row.zero_stage == 3),
                                        (DEEPSPEED_PARAM_GATHER_NOTE, row.overlap_param_gather)) if applies]
    return "\n".join(notes) or None


def render(row, kind: str) -> str:
    """The text to paste: shell exports, a PyTorch snippet, or DeepSpeed JSON (+ launch line)."""
    knobs(row, kind)  # validates kind (and that the plan was timed for that framework)
    if kind == "env":
        launch = _horovodrun_line(row) if row.sync in HOROVOD_SYNCS else _torchrun_line(row)
        note = "\n" + PER_TENSOR_NOTE if row.sync == "per-tensor" else ""
        return _env_text(row) + "\n" + launch + note
    if kind == "torch":
        return _torch_text(row)
    return json.dumps(deepspeed_config(row), indent=2)
