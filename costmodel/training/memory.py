"""Memory per GPU for data-parallel training: weights, gradients, optimizer states, activations.

Data parallelism replicates the model states on every rank; ZeRO (Rajbhandari et al. 2020)
shards them over the ``N`` data-parallel ranks: stage 1 the optimizer states, stage 2 also
the gradients, stage 3 (= FSDP full sharding) also the weights.

Precision (ZeRO paper §3.1): with 16-bit (or fp8) gradients the weights are 16-bit and the
optimizer keeps an fp32 master copy beside its fp32 states, so mixed-precision Adam holds
2 + 2 + 12 = 16 bytes per parameter (``K = 12``). With fp32 gradients everything is fp32 and
Adam holds 4 + 4 + 8 = 16 bytes per parameter.

Activations (a documented estimate):

* transformers: ``L · s · b · h · (34 + 5 · a · s / h)`` bytes for 16-bit activations
  (Korthikanti et al. 2022, "Reducing Activation Recomputation", Eq. 1 with t = 1), scaled by
  (activation dtype bytes / 2); embeddings and logits are not counted. The ``5·a·s/h`` term
  is the stored attention scores, softmax and dropout mask; FlashAttention (Dao et al. 2022)
  does not store them, so with ``flash_attention`` (the default) only ``34·s·b·h·L`` remains.
  Models whose attention no fused kernel computes (Transformer-XL's relative positions,
  :mod:`costmodel.training.attention`) store them whatever the flag, over ``s + memory`` keys,
  and without attention dropout only the softmax output (2 of the 5 bytes).
* CNNs: elements of all layer outputs per sample × ``CNN_SAVED_TENSORS_PER_OUTPUT`` × bytes × b.
* full activation recomputation (transformers only; Chen et al. 2016, Korthikanti et al. 2022
  §5): only each layer's input is kept, ``2·s·b·h`` bytes per layer with 16-bit activations,
  so ``2·s·b·h·L`` — plus the full activations of the one layer whose backward is running
  (its forward is recomputed just before), which the paper's total leaves out.

Beyond the model states and activations a real process holds (all counted, so a plan that
"fits" does not crash on its first step):

* logits and the loss: the LM head's output in the compute dtype plus its fp32 upcast for the
  cross-entropy and that upcast's fp32 gradient, ``b · s · V · (e + 4 + 4)`` bytes (Megatron-LM
  ``vocab_parallel_cross_entropy`` and Hugging Face ``LlamaForCausalLM`` compute the loss on
  ``logits.float()``); 2.1 GB per fp32 copy at 16k tokens × 32k vocab;
* the CUDA context and kernel images, not tracked by PyTorch's caching allocator:
  ``CUDA_CONTEXT_BYTES``;
* NCCL's communication buffers (only with more than one rank): ``NCCL_BUFFSIZE`` (4 MiB, NCCL
  environment documentation) per connection × ``NCCL_MAX_CHANNELS`` (32, the most a ring graph
  searches: NCCL ``MAXCHANNELS / 2``) × ``NCCL_CONNECTIONS_PER_CHANNEL`` (ring: 1 receive; tree: up to 3 children + 1 parent) —
  an estimate, ~0.67 GB (a communicator of 64 channels would hold twice its ring buffers), that
  also stands in for NVLS's buffers;
* allocator fragmentation: ``FRAGMENTATION_FRACTION`` of the tensor bytes for a step whose
  tensors have the same shapes every step (an estimate: PyTorch's caching allocator reuses its
  blocks), and ``IRREGULAR_FRAGMENTATION_FRACTION`` where the memory-reduction techniques make
  the (de)allocations irregular — ZeRO-3's gathered-and-freed weights, recomputation, optimizer
  offload: GMLake (Guo et al., ASPLOS 2024) measures the caching allocator's fragmentation
  under exactly these techniques, 15 % on average over eight LLMs on A100-80GB (up to 33 %);
  the ZeRO paper (§3.2, §6.3) reports out-of-memory with free but fragmented memory. The
  irregular share is charged on the bytes each technique allocates irregularly
  (:func:`irregular_bytes`), the regular share on the rest: ZeRO-3's model states (weights
  gathered and freed layer by layer), offload's shard of the weights and gradients streamed to
  and from the host each step, recomputation's activations. Charged on every tensor, a
  technique that removes bytes made the step need more: optimizer offload added 7.4 GB of
  fragmentation to a step holding 60 GB of activations it does not touch (gpt3-1.3b, ZeRO-2,
  micro-batch 16 on 16 H100s: 80.4 GB without, 86.8 GB with), ZeRO-3 needed 4.7 GB more than
  ZeRO-2, recomputation 0.16 GB more than none (physics review, 2026-11-29);

and a plan must leave a *reserve* free on top (default ``DEFAULT_RESERVE_FRACTION`` of the
GPU's memory), for what no estimate covers (temporary buffers, allocator spikes).

The core functions work elementwise on numpy arrays (broadcasting) as well as on floats.
"""

from __future__ import annotations

import functools

from costmodel.training import attention, workloads
from costmodel.training.workloads import Workload
from dpbase import elementwise as ew
from dpbase.errors import InputError, NotApplicableError, UnknownNameError
from dpbase.values import asdict, frozen

DTYPE_BYTES = {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1}
# Bytes of one kept activation (and logit) element at each compute dtype. fp8 training (NVIDIA
# Transformer Engine) runs fp8 only inside the GEMMs: norms, attention, activation functions
# and the residual stream stay 16-bit, and so do most of the tensors the backward keeps. They
# count at 2 bytes, an upper bound (TE keeps fp8 copies of the linear layers' inputs).
ACTIVATION_BYTES = {**DTYPE_BYTES, "fp8": 2}
GRAD_DTYPES = ("fp32", "bf16", "fp16", "fp8")
# fp32 optimizer state bytes per parameter: SGD with momentum keeps one buffer, Adam/AdamW
# two moments (PyTorch torch/optim/sgd.py, adam.py, adamw.py).
OPTIMIZER_STATE_BYTES = {"sgd": 4, "adam": 8, "adamw": 8}
# Mixed precision: 16-bit working weights plus an fp32 master copy (ZeRO paper §3.1).
MIXED_WEIGHT_BYTES = 2
MASTER_WEIGHT_BYTES = 4
ZERO_STAGES = (0, 1, 2, 3)
# Korthikanti et al. 2022, Eq. 1: per layer s·b·h·(34 + 5·a·s/h) bytes with 2-byte activations.
KORTHIKANTI_LINEAR_BYTES = 34.0
KORTHIKANTI_ATTENTION_BYTES = 5.0
# Of the 34, §4.1: the attention block's 11·s·b·h and the input of its LayerNorm, 2·s·b·h: what an
# encoder-decoder's cross-attention block adds to a decoder layer (its scores add 5·a·s²·b).
KORTHIKANTI_CROSS_ATTENTION_BYTES = 13.0
# Of those 5: the softmax output alone (2 bytes), what attention without dropout stores.
SOFTMAX_OUTPUT_BYTES = 2.0
# Per cached memory token and hidden unit of a layer (16-bit): the cached state itself, the
# projections' input, kept for every layer; its keys and values, as Korthikanti et al. count them
# for the tokens.
MEMORY_STATE_BYTES = 2.0
MEMORY_KV_BYTES = 4.0
KORTHIKANTI_ELEMENT_BYTES = 2.0
# Korthikanti et al. 2022, §5: full recomputation stores each layer's input, s·b·h elements
# = 2·s·b·h bytes per layer in 16-bit.
KORTHIKANTI_CHECKPOINT_BYTES = 2.0
# A conv-BN-ReLU block keeps two tensors of the conv output's size for backward: the conv output
# (batch norm's backward reads its input) and the ReLU output, which overwrites the batch-norm
# output in place (torchvision's ReLU(inplace=True)) and serves the ReLU's backward and the next
# conv's weight gradient. Three (BN output kept apart) put NVIDIA's own ResNet-50 configurations
# out of a 16 GB V100 (AMP micro-batch 256: 19.2 GB); two fit them (13.3 GB; DeepLearningExamples
# PyTorch/Classification/ConvNets configs.yml: DGX-1V 16 GB, AMP 256, FP32 112).
CNN_SAVED_TENSORS_PER_OUTPUT = 2.0
# The loss on fp32 logits (Megatron-LM cross-entropy, Hugging Face LlamaForCausalLM
# ``logits.float()``): an fp32 copy and its fp32 gradient beside the compute-dtype logits.
LOGITS_FP32_COPIES = 2
FP32_BYTES = 4
# CUDA context + kernel images per process (not seen by torch.cuda.memory_allocated): ~300 MB
# idle with CUDA >= 11.7's lazy module loading, > 1,000 MB before it, when every kernel was
# loaded (pytorch/pytorch#107667, ptrblck; #28394: ~1 GB with PyTorch on a Titan V); a training
# process loads cuBLAS/cuDNN/NCCL kernels and workspaces, so we take 1 GB.
CUDA_CONTEXT_BYTES = 1.0e9
# NCCL: NCCL_BUFFSIZE default 4 MiB (NCCL env docs); 32 channels: the most a ring graph searches
# (init.cc MAXCHANNELS / 2; device.h MAXCHANNELS 64 since 2.25, 32 before), which connect.cc may
# double for a small graph; a channel's ring has 1 receive connection, its tree up to 3 children +
# 1 parent.
NCCL_BUFFSIZE_BYTES = 4 * 2**20
NCCL_MAX_CHANNELS = 32
NCCL_CONNECTIONS_PER_CHANNEL = 5
COMM_BUFFER_BYTES = float(NCCL_BUFFSIZE_BYTES * NCCL_MAX_CHANNELS * NCCL_CONNECTIONS_PER_CHANNEL)
# Caching-allocator fragmentation as a share of the tensor bytes (see the docstring): with
# same-shaped tensors every step (estimate), and under ZeRO-3 / recomputation / offload
# (GMLake, ASPLOS 2024: 15 % average fragmentation over eight LLMs, up to 33 %).
FRAGMENTATION_FRACTION = 0.05
IRREGULAR_FRAGMENTATION_FRACTION = 0.15
# Free memory a plan must keep beyond everything counted (default of --memory-reserve).
DEFAULT_RESERVE_FRACTION = 0.05


@frozen(kw_only=True)
class Precision:
    """Bytes per parameter of the working weights, gradients and fp32 master copy."""

    weight_bytes: int
    grad_bytes: int
    master_bytes: int


# Architectures whose collectives reduce fp8 gradients: NCCL 2.24 added ncclFloat8e4m3/e5m2,
# and "FP8 reduction support begins with sm90 capable devices" (NCCL's warning, quoted in
# openxla/xla PR #36158): Hopper and Blackwell, not Ada (sm89) nor earlier; RCCL on MI300 and
# later (ROCm/rccl-tests PR #60 added fp8). bf16 and fp16 gradients reduce on every GPU.
FP8_REDUCTION_ARCHS = ("hopper", "blackwell", "cdna3", "cdna4")


def check_grad_dtype(grad_dtype: str, gpu, field: str = "grad_dtype") -> None:
    """fp8 gradients on a GPU whose collectives cannot reduce fp8 are refused, with what it takes."""
    arch = getattr(gpu, "arch", "unknown")
    if grad_dtype == "fp8" and arch not in FP8_REDUCTION_ARCHS:
        allowed = ", ".join(dtype for dtype in GRAD_DTYPES if dtype != "fp8")
        raise NotApplicableError(field, grad_dtype, f"{allowed} on {getattr(gpu, 'name', 'this GPU')} ({arch}): NCCL "
                                 "reduces fp8 only from sm90 (Hopper, Blackwell), RCCL from MI300")


def precision_for(grad_dtype: str) -> Precision:
    """Weight/gradient/master bytes per parameter for a gradient dtype."""
    if grad_dtype not in GRAD_DTYPES:
        raise UnknownNameError("grad_dtype", grad_dtype, GRAD_DTYPES)
    return _PRECISIONS[grad_dtype]


def _precision(grad_dtype: str) -> Precision:
    if grad_dtype == "fp32":
        return Precision(weight_bytes=4, grad_bytes=4, master_bytes=0)
    return Precision(weight_bytes=MIXED_WEIGHT_BYTES, grad_bytes=DTYPE_BYTES[grad_dtype],
                     master_bytes=MASTER_WEIGHT_BYTES)


_PRECISIONS = {dtype: _precision(dtype) for dtype in GRAD_DTYPES}  # values: one per dtype, shared


def optimizer_state_bytes(optimizer: str) -> int:
    """fp32 optimizer state bytes per parameter (without the master copy)."""
    if not isinstance(optimizer, str) or optimizer not in OPTIMIZER_STATE_BYTES:  # [1] was a TypeError (unhashable)
        raise UnknownNameError("optimizer", optimizer, OPTIMIZER_STATE_BYTES)
    return OPTIMIZER_STATE_BYTES[optimizer]


def check_zero_stage(zero_stage: int, field: str = "zero_stage") -> int:
    """The ZeRO stage, validated (``field``: the option named in the error)."""
    if isinstance(zero_stage, bool) or zero_stage not in ZERO_STAGES:
        raise InputError(field, zero_stage, "0, 1, 2 or 3")
    return int(zero_stage)


def model_state_bytes(params, precision: Precision, optimizer_bytes_per_param, zero_stage, ranks,
                      secondary_ranks=None):
    """(weights, gradients, optimizer) bytes per rank; elementwise on arrays.

    ``optimizer_bytes_per_param`` includes the master copy (0 when the optimizer runs
    elsewhere, as on a parameter server). ``secondary_ranks``: ZeRO-3 rows also keep ZeRO++
    hpZ's secondary partition of the weights (weights / secondary_ranks), None for none.
    """
    stage = ew.operand(zero_stage)
    weights = params * precision.weight_bytes / ew.where(stage >= 3, ranks, 1)
    if secondary_ranks is not None:
        weights = weights + ew.where(stage >= 3, params * precision.weight_bytes / secondary_ranks, 0.0)
    grads = params * precision.grad_bytes / ew.where(stage >= 2, ranks, 1)
    states = params * optimizer_bytes_per_param / ew.where(stage >= 1, ranks, 1)
    return weights, grads, states


def transformer_activation_bytes(layers, hidden, heads, seq_len, micro_batch, element_bytes,
                                 flash_attention=True, recompute=False, key_len=None,
                                 score_bytes=KORTHIKANTI_ATTENTION_BYTES, cross_layers=0):
    """Korthikanti et al. 2022 activation estimate for a transformer; elementwise on arrays.

    With ``recompute`` only the layer inputs are kept, plus one layer's full activations.
    ``flash_attention``: the scores stay on chip (False: they are stored, as
    :func:`attention.materialised` decides for a workload); ``key_len``: the keys each query
    attends to (``seq_len`` unless a memory of cached tokens adds to them); ``score_bytes``:
    16-bit bytes stored per score element (Korthikanti's 5: softmax output, dropout mask and
    output; 2 without attention dropout); ``cross_layers``: the decoder layers of an
    encoder-decoder among ``layers``, each with a cross-attention block (its linear activations and
    scores over the source's ``seq_len`` tokens; recomputed like the rest).
    """
    keys = seq_len if key_len is None else key_len
    stored_layers = layers - (layers - 1) * recompute  # 1 layer's worth while it is recomputed
    stored_cross = ew.minimum(cross_layers, stored_layers)  # recomputed: the one kept layer a decoder's, whole
    # the stored layers' score elements, counted as the attention's HBM traffic counts them
    scores = ew.where(flash_attention, 0.0, score_bytes * attention.score_elements(
        layers=stored_layers, heads=heads, seq_len=seq_len, key_len=keys, micro_batch=micro_batch,
        cross_layers=stored_cross))
    # a memory of cached tokens: every layer's cached states stay (recomputed or not); its keys and
    # values over them are activations like the tokens' (2 bytes each)
    cached = hidden * (keys - seq_len) * micro_batch
    scale = element_bytes / KORTHIKANTI_ELEMENT_BYTES
    checkpoints = layers * hidden * KORTHIKANTI_CHECKPOINT_BYTES * recompute
    linear = (stored_layers * KORTHIKANTI_LINEAR_BYTES + stored_cross * KORTHIKANTI_CROSS_ATTENTION_BYTES) * hidden
    return ((linear + checkpoints) * seq_len * micro_batch + scores
            + (layers * MEMORY_STATE_BYTES + stored_layers * MEMORY_KV_BYTES) * cached) * scale


def check_recompute(workload: Workload, recompute: bool, field: str = "recompute") -> bool:
    """Recomputation is modelled for transformer layers only (not for CNNs); ``field``: the
    option that asked for it (--rate-recompute for a measured run's)."""
    if recompute and not recompute_applies(workload):
        raise NotApplicableError(field, recompute,
                                 f"False for {workload.kind} models ({workload.name}): "
                                 "recomputation is modelled for transformer layers only")
    return bool(recompute)


def recompute_applies(workload: Workload) -> bool:
    """Whether full activation recomputation is modelled for this workload."""
    return workload.has_transformer_layers


def activation_bytes(workload: Workload, micro_batch, seq_len, element_bytes, flash_attention=True,
                     recompute=False):
    """Activation bytes of one micro-batch for ``workload`` (elementwise on arrays)."""
    if workload.kind == "cnn":
        check_recompute(workload, recompute)
        per_sample = workload.activation_elements_per_sample * CNN_SAVED_TENSORS_PER_OUTPUT
        return per_sample * element_bytes * micro_batch
    return transformer_activation_bytes(workload.layers, workload.hidden_size, workload.heads,
                                        seq_len, micro_batch, element_bytes,
                                        not attention.materialised(workload, flash_attention), recompute,
                                        key_len=workloads.key_length(workload, seq_len),
                                        score_bytes=KORTHIKANTI_ATTENTION_BYTES if workload.attention_dropout
                                        else SOFTMAX_OUTPUT_BYTES, cross_layers=workload.cross_attention_layers)


def logits_bytes(workload: Workload, micro_batch, seq_len, element_bytes):
    """Logits, their fp32 copy and its gradient for one micro-batch (0 without a vocabulary).
    An adaptive softmax materialises fewer logits per token than the vocabulary
    (``Workload.logits_vocab``: its head, plus a tail cluster's for the tokens outside it)."""
    vocab = 0 if workload.kind == "cnn" else (workload.logits_vocab or workload.vocab)
    return micro_batch * seq_len * vocab * (element_bytes + LOGITS_FP32_COPIES * FP32_BYTES)


@frozen(kw_only=True)
class Overheads:
    """What a process holds beyond its tensors (defaults: the module's sourced estimates)."""

    context_bytes: float = CUDA_CONTEXT_BYTES
    comm_buffer_bytes: float = COMM_BUFFER_BYTES
    fragmentation_fraction: float = FRAGMENTATION_FRACTION
    irregular_fragmentation_fraction: float = IRREGULAR_FRAGMENTATION_FRACTION


DEFAULT_OVERHEADS = Overheads()


def runtime_bytes(ranks, overheads: Overheads = DEFAULT_OVERHEADS):
    """CUDA context plus NCCL buffers (the latter only with more than one rank); elementwise."""
    return overheads.context_bytes + ew.where(ew.greater(ranks, 1), overheads.comm_buffer_bytes, 0.0)


def irregular_bytes(zero_stage, states_bytes, transient_bytes, streamed_bytes, recompute=False, offload=False):
    """The bytes a step allocates irregularly (GMLake), elementwise: ZeRO-3's model states (its
    weights gathered and freed layer by layer), optimizer offload's ``streamed_bytes`` at ZeRO-1/2
    (:func:`streamed_bytes`), recomputation's activations and logits (``transient_bytes``)."""
    stage = ew.operand(zero_stage)
    states = ew.where(stage == 3, states_bytes, ew.where(bool(offload) & (stage >= 1), streamed_bytes, 0.0))
    return states + (transient_bytes if recompute else 0.0)


def streamed_bytes(params, precision: Precision, shard_ranks):
    """What optimizer offload moves per GPU and step: its shard of the gradients to the host and
    of the updated weights back (the states stay there); elementwise."""
    return params * (precision.grad_bytes + precision.weight_bytes) / shard_ranks


def fragmentation_bytes(tensor_bytes, overheads: Overheads = DEFAULT_OVERHEADS, irregular=0.0):
    """Allocator fragmentation on top of ``tensor_bytes``: the regular share of them, the irregular
    share of the ``irregular`` bytes among them (:func:`irregular_bytes`); elementwise."""
    extra = overheads.irregular_fragmentation_fraction - overheads.fragmentation_fraction
    return overheads.fragmentation_fraction * tensor_bytes + extra * irregular


def reserve_given(capacity_bytes: float, reserve_bytes: float | None, share: float | None) -> float | None:
    """The reserve a user gave, in bytes: as bytes, or as a ``share`` of ``capacity_bytes`` (None:
    neither, the default). Checked against the capacity where it is used (:func:`reserve_bytes`)."""
    if share is None:
        return reserve_bytes
    if reserve_bytes is not None:
        raise InputError("memory_reserve", reserve_bytes, "bytes or a fraction, not both")
    if not 0 <= share < 1:
        raise InputError("memory_reserve_fraction", share, "a fraction from 0 to below 1")
    return share * float(capacity_bytes)


def reserve_bytes(capacity_bytes: float, reserve: float | None = None) -> float:
    """The reserve in bytes: ``reserve`` as given, else ``DEFAULT_RESERVE_FRACTION`` of capacity."""
    if reserve is None:
        return DEFAULT_RESERVE_FRACTION * float(capacity_bytes)
    if not 0 <= reserve < capacity_bytes:
        raise InputError("memory_reserve", reserve,
                         f"bytes >= 0 and below the GPU's {capacity_bytes / 1e9:.0f} GB")
    return float(reserve)


def total_bytes(states_bytes, activations_bytes, logits, ranks, overheads: Overheads = DEFAULT_OVERHEADS,
                irregular=0.0):
    """Everything a rank holds: tensors, fragmentation, CUDA context, NCCL buffers; elementwise."""
    tensors = states_bytes + activations_bytes + logits
    return tensors + fragmentation_bytes(tensors, overheads, irregular) + runtime_bytes(ranks, overheads)


@frozen(kw_only=True)
class MemoryBreakdown:
    """Bytes per GPU; ``fits`` when the total plus the reserve is within the GPU's memory."""

    weights_bytes: float
    gradients_bytes: float
    optimizer_bytes: float
    activations_bytes: float
    logits_bytes: float
    runtime_bytes: float
    fragmentation_bytes: float
    total_bytes: float
    capacity_bytes: float
    reserve_bytes: float
    fits: bool

    @property
    def headroom_bytes(self) -> float:
        """Free memory left (compare with ``reserve_bytes``)."""
        return self.capacity_bytes - self.total_bytes

    def to_dict(self) -> dict:
        """Every field, for JSON."""
        return asdict(self)


def memory_breakdown(*, params: int, precision: Precision, optimizer_bytes_per_param: float,
                     zero_stage: int, ranks: int, activations_bytes: float,
                     capacity_bytes: float, logits: float = 0.0,
                     overheads: Overheads = DEFAULT_OVERHEADS,
                     reserve: float | None = None, shard_ranks: int | None = None,
                     secondary_ranks: int | None = None, recompute: bool = False,
                     offload: bool = False) -> MemoryBreakdown:
    """Memory per GPU for one configuration; it fits when ``reserve`` bytes stay free.
    ``shard_ranks``: the ranks ZeRO shards over when fewer than ``ranks`` (hybrid sharding);
    ``secondary_ranks``: ZeRO++ hpZ's secondary weight partition (weights / it, kept after forward)."""
    stage = _stage_bytes(params, precision, ranks, activations_bytes, logits, overheads, zero_stage,
                         optimizer_bytes_per_param, shard_ranks, secondary_ranks, recompute, offload)
    return breakdown_at(stage, ranks=ranks, activations_bytes=activations_bytes, logits=logits,
                        capacity_bytes=capacity_bytes, overheads=overheads, reserve=reserve)


def breakdown_at(stage: tuple, *, ranks: int, activations_bytes: float, logits: float,
                 capacity_bytes: float, overheads: Overheads = DEFAULT_OVERHEADS,
                 reserve: float | None = None) -> MemoryBreakdown:
    """The :class:`MemoryBreakdown` of one stage's :func:`_stage_bytes` (what
    :func:`memory_breakdown` returns; :func:`stage_bytes` gives every stage's at once)."""
    weights, grads, states, total, irregular = stage
    tensors = float(weights + grads + states + activations_bytes + logits)
    kept = reserve_bytes(capacity_bytes, reserve)
    return MemoryBreakdown(
        weights_bytes=float(weights), gradients_bytes=float(grads), optimizer_bytes=float(states),
        activations_bytes=float(activations_bytes), logits_bytes=float(logits),
        runtime_bytes=float(runtime_bytes(ranks, overheads)),
        fragmentation_bytes=float(fragmentation_bytes(tensors, overheads, irregular)), total_bytes=total,
        capacity_bytes=float(capacity_bytes), reserve_bytes=kept,
        fits=fits(total, capacity_bytes, kept),
    )


def _stage_bytes(params, precision, ranks, activations_bytes, logits, overheads, zero_stage,
                 optimizer_bytes_per_param, shard_ranks, secondary_ranks, recompute, offload):
    """(weights, gradients, optimizer, total bytes, irregular bytes) per GPU at one ZeRO stage:
    what :func:`memory_breakdown` reports, and :func:`stage_bytes` for every stage."""
    weights, grads, states = model_state_bytes(params, precision, optimizer_bytes_per_param,
                                               zero_stage, shard_ranks or ranks, secondary_ranks)
    uneven = irregular_bytes(zero_stage, weights + grads + states, activations_bytes + logits,
                             streamed_bytes(params, precision, shard_ranks or ranks), recompute, offload)
    total = float(total_bytes(weights + grads + states, activations_bytes, logits, ranks, overheads, uneven))
    return weights, grads, states, total, uneven


def states_on_gpu(optimizer_bytes_per_param, zero_stage, offload: bool = False):
    """Optimizer-state bytes per parameter kept on the GPU: none when they are offloaded to the
    host (ZeRO >= 1 only); elementwise on arrays of stages."""
    return ew.where(bool(offload) & (ew.operand(zero_stage) >= 1), 0.0, optimizer_bytes_per_param)


def stage_inputs(zero_stage: int, optimizer_bytes_per_param: float, shard_ranks: int | None = None,
                 secondary_ranks: int | None = None, recompute: bool = False, offload: bool = False) -> dict:
    """What one ZeRO stage changes in :func:`memory_breakdown`'s inputs:
    offloaded states (:func:`states_on_gpu`), hybrid sharding's ``shard_ranks`` and hpZ's
    ``secondary_ranks`` (ZeRO-3 only), and what allocates irregularly (:func:`irregular_bytes`)."""
    sharded = zero_stage == 3
    return {"zero_stage": zero_stage,
            "optimizer_bytes_per_param": states_on_gpu(optimizer_bytes_per_param, zero_stage, offload),
            "shard_ranks": shard_ranks if sharded else None, "secondary_ranks": secondary_ranks if sharded else None,
            "recompute": bool(recompute), "offload": bool(offload)}


@functools.lru_cache(maxsize=4096, typed=True)
def _stage_arguments(per_stage: tuple) -> tuple[tuple, ...]:
    """Every stage's :func:`stage_inputs` as :func:`_stage_bytes`' arguments, memoised: a pure
    function of a few discrete settings (optimizer bytes, shard groups, recompute, offload) that
    every configuration with those settings shares."""
    out = []
    for stage in ZERO_STAGES:
        given = stage_inputs(stage, *per_stage)
        out.append((stage, given["optimizer_bytes_per_param"], given["shard_ranks"], given["secondary_ranks"],
                    given["recompute"], given["offload"]))
    return tuple(out)


@functools.lru_cache(maxsize=4096, typed=True)
def stage_bytes(params: int, precision: Precision, ranks: int, activations_bytes: float, logits: float,
                per_stage: tuple, overheads: Overheads = DEFAULT_OVERHEADS) -> tuple[tuple, ...]:
    """Every ZeRO stage's :func:`_stage_bytes` (``ZERO_STAGES`` order): its total is what
    :func:`memory_breakdown` reports at that stage, and :func:`breakdown_at` builds that
    breakdown from it; ``per_stage``: :func:`stage_inputs`' arguments after the stage (Python
    scalars: one configuration). Memoised: a planner's one-at-a-time loop asks the same
    (model, dtype, ranks, micro-batch, settings) for every accumulation count, bucket size,
    algorithm and ZeRO stage it tries; ``typed``: an int and an equal float stay apart."""
    return tuple(_stage_bytes(params, precision, ranks, activations_bytes, logits, overheads, *arguments)
                 for arguments in _stage_arguments(per_stage))


def fits(needed_bytes: float, capacity_bytes: float, kept_bytes: float) -> bool:
    """Whether ``needed_bytes`` (a total) plus the reserve ``kept_bytes`` is within the GPU's memory."""
    return needed_bytes + kept_bytes <= capacity_bytes


# PyTorch AdamW applies decoupled weight decay (default 1e-2) as a separate multiply of the
# fp32 weights: one more read + write pass; Adam's default weight_decay is 0 (torch/optim/
# adamw.py and adam.py defaults).
DECAY_PASSES = {"sgd": 0, "adam": 0, "adamw": 1}


def optimizer_step_bytes_per_param(precision: Precision, optimizer: str) -> int:
    """HBM bytes one optimizer step moves per parameter.

    It reads the gradient, reads and writes every fp32 state (master copy included), writes
    the 16-bit working weights (mixed precision) or reads and writes the fp32 weights, plus
    one read + write of the fp32 weights per decoupled weight-decay pass. Mixed-precision
    Adam: 2 + 2·12 + 2 = 28 bytes; fp32 Adam: 4 + 2·8 + 2·4 = 28 bytes.
    """
    states = optimizer_state_bytes(optimizer) + precision.master_bytes
    weights = precision.weight_bytes if precision.master_bytes else 2 * precision.weight_bytes
    fp32_weight_bytes = precision.master_bytes or precision.weight_bytes
    decay = 2 * fp32_weight_bytes * DECAY_PASSES[optimizer]
    return precision.grad_bytes + 2 * states + weights + decay
