"""How the framework synchronises gradients: the ``--sync`` presets.

| mode | what is all-reduced, when | source |
|---|---|---|
| ``ddp`` | PyTorch DDP buckets (25 MiB, first 1 MiB), overlapped with the last backward | PyTorch ``DistributedDataParallel(bucket_cap_mb=25)`` |
| ``horovod`` | Horovod tensor fusion: ready tensors fused into a 128 MiB buffer, one all-reduce per fusion, started on a 1 ms cycle; overlapped with backward | Horovod docs "Tensor Fusion"; defaults 128 MB / 1 ms since v0.21.0 (PR #2468; 64 MB / 5 ms before) |
| ``flat`` | one all-reduce of the whole flattened gradient after the last micro-batch's backward, not overlapped | DeepLearningExamples BERT ``allreduce_post_accumulation`` |
| ``per-tensor`` | one all-reduce per gradient tensor (no fusion), overlapped with backward | tf_cnn_benchmarks ``variable_update=replicated``; Horovod with fusion off but for its cycle's wait (not counted here) |
| ``fsdp`` | FSDP ``FULL_SHARD`` (ZeRO-3, the default: all-gather weights, reduce-scatter gradients on every micro-batch) or ``SHARD_GRAD_OP`` (``--zero 2``), one collective per FSDP unit (one transformer block) | PyTorch FSDP with a transformer auto-wrap policy; :mod:`costmodel.training.gradsync` |

FSDP communicates per *unit*, the module it wraps: with the transformer auto-wrap policy that
PyTorch's FSDP tutorials and llm-foundry use, each transformer block is one unit, so every
all-gather and reduce-scatter carries one block's parameters (the gradient outside the input
embedding, divided by the layers), not DDP's 25 MiB buckets. ``SHARD_GRAD_OP`` (``--zero 2``)
gathers each unit's weights in the forward, overlapped (:attr:`TrainingConfig.overlap_param_gather`
is set from :attr:`SyncSetup.overlap_param_gather`), not after the optimizer as ZeRO-2 does. Approximations: the gather is counted
once per step, as with ``no_sync`` accumulation (FSDP syncing every micro-batch re-gathers in
each forward: this matters only with accumulation); the root unit (embeddings, head) is cut into block-sized calls and gathered
in backward too, which FSDP skips (about 1 ms of a 0.3 s MPT-125M step); a CNN's unit is its
gradient / layers, not a block.

A fusion cycle adds, on average, half a cycle before the last fused all-reduce can start
(a tensor becomes ready at a uniformly random time within the cycle): ``cycle / 2`` of exposed
wait per synchronisation.

Per-tensor mode needs the number of gradient tensors: the workload's ``tensors`` when given,
else ``layers × TENSORS_PER_LAYER[kind]`` (parameter tensors per layer in the reference
implementations: GPT-2 block 12 — fused c_attn, c_proj, c_fc, mlp c_proj weight+bias, two
LayerNorms; BERT layer 16 — q, k, v, output, intermediate, output-dense weight+bias, two
LayerNorms; ViT block 12 as GPT-2; torchvision ResNet conv layer 3 — conv weight, batch-norm
weight and bias).
"""

from __future__ import annotations

import functools

from costmodel.training.overlap import (
    DDP_BUCKET_BYTES,
    DDP_FIRST_BUCKET_BYTES,
    BucketLayout,
    bucket_layout,
    packed_layout,
    packed_sizes,
)
from costmodel.training.tensors import backward_tensors, tensor_count, tensor_mix
from dpbase.errors import InputError
from dpbase.units import format_size
from dpbase.values import frozen

SYNC_MODES = ("ddp", "horovod", "flat", "per-tensor", "fsdp")
# DeepSpeed's own ZeRO options (ZeRO-Offload, ZeRO++ qwZ/qgZ): with ``ddp`` only (DeepSpeed's
# ZeRO runs under it), refused under the other modes by iteration and plan alike.
DEEPSPEED_ONLY = ("offload_optimizer", "quantize_weights", "quantize_grads")
# The ZeRO stages each mode runs (--zero); FSDP's 0 is its default, FULL_SHARD (ZeRO-3).
ZERO_STAGES_OF = {"ddp": (0, 1, 2, 3), "horovod": (0,), "flat": (0,), "per-tensor": (0,), "fsdp": (0, 2, 3)}


def stage_mode(sync: str, stage: int) -> str:
    """The sync mode a ZeRO stage runs under a chosen ``sync``: an FSDP run's ZeRO-0 is DDP's
    (``NO_SHARD``); FSDP shards as ZeRO-2/3 (``SHARD_GRAD_OP``, ``FULL_SHARD``) and has no ZeRO-1,
    which stays FSDP's and so runs nowhere under it (PyTorch's ZeroRedundancyOptimizer all-reduces
    the whole gradient, not the reduce-scatter a ZeRO-1 row times). The planner's rows and
    --rate's measured run read it here."""
    return "ddp" if sync == "fsdp" and stage == 0 else sync


@functools.cache  # asked per ZeRO stage of every step: a handful of distinct questions
def stage_runs(sync: str, stage: int, *, asynchronous: bool = False, host_reduce: bool = False,
               offload_optimizer: bool = False) -> bool:
    """Whether a chosen ``sync`` runs ZeRO stage ``stage`` (:data:`ZERO_STAGES_OF`): parameter
    servers (``asynchronous``, they hold the optimizer) and a host-memory all-reduce only ZeRO-0,
    an offloaded optimizer only ZeRO >= 1. The one rule of iteration's advice and the planner's sweep."""
    if (asynchronous or host_reduce) and stage != 0:
        return False
    if offload_optimizer and stage == 0:
        return False
    return stage in ZERO_STAGES_OF[stage_mode(sync, stage)]


# Passes over the gradient, in HBM, that a mode's buffer copies cost per synchronisation: (into
# the buffer, out of it), each pass one read or one write of the gradient's bytes. PyTorch DDP
# copies every gradient into its bucket as it becomes ready (reducer.cpp copy_grad_to_bucket:
# ``at::mul_out(bucket_view, grad, 1/world)``, the average fused into the copy) and back once the
# bucket is reduced (copy_bucket_to_grad: ``grad.copy_(bucket_view)``), unless
# ``gradient_as_bucket_view=True``, whose default is False; DeepSpeed's ZeRO copies into its
# reduction buffer alike and out only its shard. NVIDIA's BERT flattens the gradient into one
# buffer and back after backward (apex ``multi_tensor_scale``; from FP32 gradients into an FP16
# buffer that is 12 bytes a parameter, counted here as 4 passes of the buffer's 2: an
# approximation). These copies run on the compute stream (DDP's in its autograd hooks and
# finalize_backward), so nothing hides them. Horovod's are not counted: it copies fused tensors
# into its fusion buffer and out (MemcpyInFusionBuffer, MemcpyOutFusionBuffer) on its own
# stream, beside backward, and a tensor reduced alone not at all (nccl_operations.cc copies only
# when a response fuses more than one); a review of this term found it (2026-11-30), and timing
# them as part of each fused collective is left. A per-tensor all-reduce reduces each gradient
# where it is, and FSDP reduce-scatters its flat parameter's gradient in place: no copy. One
# rank copies nothing (no DDP wrapper).
BUFFER_COPY_PASSES = {"ddp": (2, 2), "horovod": (0, 0), "flat": (2, 2), "per-tensor": (0, 0), "fsdp": (0, 0)}


def buffer_copy_passes(mode: str, *, asynchronous: bool = False, host_reduce: bool = False,
                       offloaded: bool = False) -> tuple[int, int]:
    """(into, out of) the buffers: the passes over the gradient a step's copies make
    (:data:`BUFFER_COPY_PASSES`). None for parameter servers or a host-memory reduction (the
    gradient leaves the GPU as it is); none out with ZeRO-Offload, which sends the reduced shard to
    the host (a transfer its own term times). The one rule of iteration, the planner's rows and
    ``--no-buffer-copies``' note.

        >>> buffer_copy_passes("ddp"), buffer_copy_passes("ddp", offloaded=True), buffer_copy_passes("fsdp")
        ((2, 2), (2, 0), (0, 0))
    """
    if asynchronous or host_reduce:
        return 0, 0
    into, back = BUFFER_COPY_PASSES[mode]
    return into, 0 if offloaded else back


def buffer_copy_seconds(into, back, grad_bytes, hbm_bandwidth_Bps, ranks, shard_ranks=1, syncs=1):
    """Seconds a step spends on the compute stream copying a rank's gradient into its sync mode's
    communication buffers and back at the GPU's HBM bandwidth: ``into`` passes over the full
    gradient, ``back`` over the reduced result (its 1/``shard_ranks`` share where ZeRO shards the
    gradient), on each of the step's ``syncs`` synchronisations (:func:`buffer_copy_passes`); 0 on
    one rank. Elementwise on numpy arrays.

        >>> buffer_copy_seconds(2, 2, 1e9, 2e12, 8)   # 4 passes of 1 GB at 2 TB/s
        0.002
        >>> buffer_copy_seconds(0, 0, 1e9, 2e12, 8), buffer_copy_seconds(2, 2, 1e9, 2e12, 1)
        (0.0, 0.0)
    """
    import dpbase.elementwise as ew

    seconds = syncs * (into + back / shard_ranks) * grad_bytes / hbm_bandwidth_Bps
    return ew.where(ew.greater(ranks, 1), seconds, 0.0)


# The modes whose call size is a free choice (--bucket: DDP's bucket, Horovod's fusion buffer);
# the others set it themselves (the whole gradient, one tensor, one FSDP unit).
SIZED_MODES = ("ddp", "horovod")
HOROVOD_FUSION_BYTES = 128 * 1024 * 1024
HOROVOD_CYCLE_S = 1e-3


@frozen(kw_only=True)
class SyncSetup:
    """Bucketing, overlap and ZeRO stage a sync mode implies, and its per-sync wait."""

    mode: str
    bucket_bytes: float
    first_bucket_bytes: float
    overlap: bool
    zero_stage: int
    wait_s: float = 0.0
    overlap_param_gather: bool = False  # weights gathered in the forward, beside compute (FSDP SHARD_GRAD_OP)


def call_layout(setup: SyncSetup, workload, grad_bytes: float) -> BucketLayout:
    """How ``setup`` cuts ``grad_bytes`` of ``workload``'s gradient into collectives: DDP's buckets
    and Horovod's fusion buffers hold the model's whole tensors where they are listed (a
    transformer's, a CNN preset's: :mod:`costmodel.training.tensors`; a tensor larger than the
    bucket is one call; a model file's CNN is cut by bytes), per-tensor calls are the tensors one
    by one, and the other modes' calls are their own size (the whole gradient, one FSDP unit). The
    one rule iteration and the planner cut by."""
    return _call_layout(setup.mode, workload, float(grad_bytes), float(setup.bucket_bytes),
                        float(setup.first_bucket_bytes))


def whole_tensors(setup: SyncSetup, workload) -> bool:
    """Whether ``setup``'s calls hold ``workload``'s whole tensors as listed (:func:`call_layout`:
    DDP's and Horovod's buckets, per-tensor calls timed at each tensor's size), not the bucket's
    bytes or the mean tensor."""
    return setup.mode in (*SIZED_MODES, "per-tensor") and bool(backward_tensors(workload))


@functools.lru_cache(maxsize=1024)
def _call_layout(mode: str, workload, grad_bytes: float, bucket_bytes: float, first_bucket_bytes: float) -> BucketLayout:
    if mode == "per-tensor" and backward_tensors(workload):  # one call per tensor, each timed at its size
        calls = len(backward_tensors(workload))
        return BucketLayout(grad_bytes / calls, calls - 1, grad_bytes / calls, 0.0, mix=tensor_mix(workload))
    tensors = backward_tensors(workload) if mode in SIZED_MODES else ()
    if not tensors:  # the mode's own call size, or buckets cut by bytes (tensors not listed)
        return bucket_layout(grad_bytes, bucket_bytes, first_bucket_bytes)
    per_param = grad_bytes / max(int(workload.params), 1)
    sizes = packed_sizes((p * per_param for p in tensors), bucket_bytes, first_bucket_bytes,
                         within=mode == "horovod")
    return packed_layout(sizes, bucket_bytes, grad_bytes)


def fsdp_unit_bytes(workload, grad_bytes: float) -> float:
    """One FSDP unit's gradient bytes: a transformer block's share of the gradient outside the
    input embedding (the module docstring)."""
    return max(float(grad_bytes) * (1.0 - workload.late_fraction) / max(int(workload.layers), 1), 1.0)


@functools.lru_cache(maxsize=256, typed=True)
def _bucketed(mode: str, bucket_bytes, first_bucket_bytes, overlap: bool, zero_stage: int) -> SyncSetup:
    """The setup of a bucketed mode (DDP, Horovod's fusion buffer, FSDP once its unit is known),
    memoised: every configuration with these settings shares the (frozen) value."""
    if mode == "horovod":
        fusion = HOROVOD_FUSION_BYTES if bucket_bytes is None else bucket_bytes
        return SyncSetup(mode=mode, bucket_bytes=fusion, first_bucket_bytes=fusion, overlap=overlap,
                         zero_stage=0, wait_s=HOROVOD_CYCLE_S / 2.0)
    bucket = DDP_BUCKET_BYTES if bucket_bytes is None else bucket_bytes
    first = DDP_FIRST_BUCKET_BYTES if first_bucket_bytes is None else first_bucket_bytes
    return SyncSetup(mode=mode, bucket_bytes=bucket, first_bucket_bytes=first, overlap=overlap,
                     # FSDP SHARD_GRAD_OP gathers in the forward, beside compute; --no-overlap: after it
                     zero_stage=zero_stage, overlap_param_gather=mode == "fsdp" and zero_stage == 2 and overlap)


# The modes that size their collectives themselves (no bucket taken; what sizes them, said when a
# size is given). Their complement takes a bucket: DDP's buckets, Horovod's buffer (both swept,
# SIZED_MODES) and FSDP's unit.
SELF_SIZED = {"flat": "one all-reduce of the whole gradient", "per-tensor": "one all-reduce per gradient tensor"}


def takes_bucket(mode: str) -> bool:
    """Whether ``mode`` takes a bucket size (DDP's buckets, Horovod's buffer, an FSDP unit)."""
    return mode not in SELF_SIZED


def _check_sizes(mode: str, bucket_bytes, first_bucket_bytes) -> None:
    """A size the mode would not use is refused, not ignored: flat and per-tensor size their
    collectives themselves, and Horovod's fusion buffers are all --bucket (no first bucket)."""
    if mode in SELF_SIZED and bucket_bytes is not None:
        raise InputError("bucket", format_size(bucket_bytes), f"left out with --sync {mode} ({SELF_SIZED[mode]})")
    if mode in (*SELF_SIZED, "horovod") and first_bucket_bytes is not None:
        why = SELF_SIZED.get(mode, "every fusion buffer is --bucket")
        raise InputError("first_bucket", format_size(first_bucket_bytes), f"left out with --sync {mode} ({why})")


def sync_setup(mode: str, workload, grad_bytes: float, *, bucket_bytes: float | None = None,
               first_bucket_bytes: float | None = None, overlap: bool = True,
               zero_stage: int = 0) -> SyncSetup:
    """What ``mode`` means for this workload; ``bucket_bytes`` None = the mode's default.

    Raises InputError when the mode contradicts an explicit ZeRO stage.
    """
    if mode not in SYNC_MODES:
        raise InputError("sync", mode, ", ".join(SYNC_MODES))
    if mode == "fsdp":
        if zero_stage not in ZERO_STAGES_OF[mode]:
            raise InputError("zero", zero_stage, "2 or 3 with --sync fsdp (FULL_SHARD is --zero 3, the default; "
                                                 "SHARD_GRAD_OP is --zero 2)")
        # every call carries one unit, the first too (a given --bucket is the unit)
        unit = fsdp_unit_bytes(workload, grad_bytes) if bucket_bytes is None else bucket_bytes
        return _bucketed(mode, unit, unit if first_bucket_bytes is None else first_bucket_bytes, overlap,
                         zero_stage or 3)
    if mode != "ddp" and zero_stage not in ZERO_STAGES_OF[mode]:  # ddp's stage is checked with the others
        raise InputError("zero", zero_stage, f"0 with --sync {mode} (ZeRO needs --sync ddp or fsdp)")
    _check_sizes(mode, bucket_bytes, first_bucket_bytes)
    if mode in SIZED_MODES:
        return _bucketed(mode, bucket_bytes, first_bucket_bytes, overlap, zero_stage)
    if mode == "flat":
        whole = max(float(grad_bytes), 1.0)
        return SyncSetup(mode=mode, bucket_bytes=whole, first_bucket_bytes=whole, overlap=False,
                         zero_stage=0)
    per_tensor = max(float(grad_bytes) / tensor_count(workload), 1.0)
    return SyncSetup(mode=mode, bucket_bytes=per_tensor, first_bucket_bytes=per_tensor,
                     overlap=overlap, zero_stage=0)
