"""One data-parallel training step, broken down: compute, communication, optimizer, memory.

A step runs ``k`` micro-batches of ``b`` samples on each of ``N`` ranks. Forward + backward
take ``FLOPs / (peak · MFU)`` (backward = 2/3 of it: it costs twice the forward); with full
activation recomputation backward also re-runs the forward (:func:`backward_seconds`). Gradients
are synchronised once per step (DDP ``no_sync`` on the first ``k − 1`` micro-batches), in
buckets overlapped with the last backward (:mod:`costmodel.training.overlap`); ZeRO-2/3 synchronise on
every micro-batch (:mod:`costmodel.training.gradsync`). Synchronous steps wait for the slowest rank
(:mod:`costmodel.training.stragglers`); asynchronous parameter-server steps never wait and report
their staleness. The optimizer step is bound by HBM bandwidth. See docs/iteration-model.md.

    total = k·(t_f + t_b) · straggler factor + exposed communication + optimizer
            + overlap interference + host overhead

The straggler factor, the compute slowed by communication hidden behind it and the framework's
per-step overhead of data parallelism are the scaling losses beyond the collective
(:mod:`costmodel.training.losses`); how gradients are bucketed and when they are reduced is
the ``sync`` preset (:mod:`costmodel.training.syncmodes`); the network transport (RDMA or TCP
sockets, :mod:`costmodel.training.transport`) sets how much hidden communication costs.

Scaling efficiency compares the step with the same rank's work done with no communication
and no straggler wait, ``(k·(t_f + t_b) + optimizer) / total`` (:func:`scaling_efficiency`;
at least what the rank's own data loader needs, which a lone GPU waits for too):
a ZeRO rank's sharded optimizer is its own work, not a gain from scaling, so the efficiency
never exceeds 1.

The arithmetic in :func:`step_seconds` works elementwise on numpy arrays (for the planner);
:func:`iteration_breakdown` evaluates one configuration and returns a frozen :class:`Breakdown`.
"""

from __future__ import annotations

from collections.abc import Callable

from costmodel.training import (
    attention,
    gemm,
    gradsync,
    losses,
    memory,
    offload,
    overlap,
    roofline,
    stragglers,
    syncmodes,
    transport,
    workloads,
)
from costmodel.training.losses import StepLosses
from costmodel.training.memory import MemoryBreakdown
from costmodel.training.workloads import Workload
from dpbase import elementwise as ew
from dpbase.errors import InputError, NotApplicableError, check_switch, is_real, is_whole
from dpbase.lazynp import is_scalar, np
from dpbase.limits import MAX_COUNT, MAX_RANKS, MIN_MFU
from dpbase.values import asdict, fields, frozen, replace

# Backward costs twice the forward (Kaplan et al. 2020, §2.1): forward is 1/3 of the FLOPs.
FORWARD_SHARE_OF_TRAINING_FLOPS = 1.0 / 3.0
BACKWARD_PER_FORWARD = 2.0
# Full activation recomputation (Chen et al. 2016; Korthikanti et al. 2022, §5) re-runs each
# layer's forward during backward: one extra forward, 4/3 of the forward + backward FLOPs.
RECOMPUTE_EXTRA_FORWARDS = 1.0
# A GPU without the requested matmul dtype runs the nearest one it has, in this order: AMP on
# Volta is fp16; a GPU without 16-bit math (Kepler: the K80) trains in fp32, as frameworks do
# there; tf32 is fp32 before Ampere. The breakdown reports the dtype that runs.
COMPUTE_DTYPE_FALLBACK = {"bf16": ("fp16", "fp32"), "tf32": ("fp32",)}
COMPUTE_DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8")


@frozen(kw_only=True)
class TrainingConfig:
    """What the user chooses for one data-parallel training step."""

    micro_batch: int
    seq_len: int | None = None
    accumulation_steps: int = 1
    grad_dtype: str | None = None  # None: the width of the compute dtype that runs (default_grad_dtype)
    compute_dtype: str = "bf16"
    topk_fraction: float | None = None
    mfu: float | None = None
    # Where ``mfu`` was calibrated (the text of --rate's measured run), or None. With it, ``mfu``
    # stands for the default MFU: the model's base speed, the micro-batch terms (GEMM roofline,
    # a CNN's fixed time) still applying; without it a given ``mfu`` holds at any micro-batch.
    mfu_calibration: str | None = None
    # the default MFU of a model with a transformer's width: its non-matmul HBM traffic, bytes per
    # FLOP at width 1 (costmodel.training.roofline); None: roofline.ELEMENTWISE_TRAFFIC
    elementwise_traffic: float | None = None
    optimizer: str = "adamw"
    # how the optimizer steps the parameters: multi-tensor kernels (apex's fused optimizers,
    # PyTorch's foreach/fused), or a loop over the parameter tensors (see PER_TENSOR_STEP_S)
    optimizer_impl: str = "multi-tensor"
    bucket_bytes: float | None = None  # None: the sync mode's default (DDP 25 MiB)
    first_bucket_bytes: float | None = None
    overlap: bool = True
    sync: str = "ddp"
    transport: str = transport.LOCAL
    host_reduce: bool = False
    losses: StepLosses = StepLosses()
    zero_stage: int = 0
    asynchronous: bool = False
    jitter_cv: float = 0.0
    include_attention: bool | None = None  # None: the score matmuls counted where the model has them
    flash_attention: bool = True
    recompute: bool = False
    quantize_weights: int | None = None  # bits of ZeRO++ qwZ weight all-gathers (8), None = full precision
    quantize_grads: int | None = None  # bits of ZeRO++ qgZ gradient all-to-all (4 or 8), None = reduce-scatter
    overlap_param_gather: bool = False  # ZeRO-1/2: the parameter all-gather runs beside the next forward
    offload_optimizer: bool = False  # ZeRO >= 1: optimizer states and step on the host CPU (ZeRO-Offload)
    # accumulation without DDP's no_sync (a training loop that never calls it; DeepLearningExamples'
    # PyTorch CNN scripts): every micro-batch's backward all-reduces, not only the last one's
    sync_each_micro_batch: bool = False
    shard: str = "full"  # ZeRO-3 over every rank ("full"), in each node replicated across ("hybrid"),
    # or over every rank with a secondary weight partition in each node for backward (ZeRO++ "hpz")
    memory_reserve_bytes: float | None = None  # memory kept free per GPU; None: memory.DEFAULT_RESERVE_FRACTION


@frozen(kw_only=True)
class Breakdown:
    """Times in seconds per optimizer step, throughput, efficiency and memory per GPU."""

    model: str
    params: int
    ranks: int
    algorithm: str
    micro_batch: int
    seq_len: int
    accumulation_steps: int
    global_batch: int
    grad_dtype: str
    compute_dtype: str
    topk_fraction: float | None
    optimizer: str
    zero_stage: int
    overlap: bool
    synchronous: bool
    bucket_bytes: float
    first_bucket_bytes: float
    bucket_count: int
    # the calls as cut: the first's bytes, and whether they hold whole tensors as listed (DDP and
    # Horovod on a transformer or a CNN preset, costmodel.training.tensors; per-tensor calls timed
    # at each tensor's size) rather than the bucket's bytes or the mean tensor
    first_call_bytes: float
    whole_tensors: bool
    sync: str
    transport: str
    jitter_cv: float
    speed_cv: float
    slow_node_factor: float
    overlap_slowdown: float
    mfu: float
    mfu_source: str
    flash_attention: bool
    include_attention: bool
    recompute: bool
    forward_s: float
    backward_s: float
    compute_s: float
    straggler_wait_s: float
    comm_s: float
    hidden_comm_s: float
    exposed_comm_s: float
    interference_s: float
    host_overhead_s: float
    buffer_copy_s: float  # the gradient into the sync mode's buffers and back (syncmodes.buffer_copy_seconds)
    optimizer_s: float
    total_s: float
    samples_per_s: float
    tokens_per_s: float
    rank_alone_samples_per_s: float  # this rank's own work (its compute + its optimizer shard) with no communication or wait: the scaling-efficiency reference
    scaling_efficiency: float
    comm_share: float
    sync_payload_bytes: float
    sync_s_per_sample: float
    staleness_updates: float
    memory: MemoryBreakdown
    zero_totals_bytes: tuple[float, ...]
    smallest_fitting_zero_stage: int | None
    # 10-90 % intervals of the comm time and the step (None: a comm model without intervals, e.g.
    # the ideal backend); see costmodel.training.oncluster.with_interval.
    comm_interval_s: tuple[float, float] | None = None
    total_interval_s: tuple[float, float] | None = None
    # 80 % interval of where published data-parallel runs of this class landed against the
    # model's prediction, out of sample (costmodel.training.residuals), and the class; None under
    # the ideal backend and for asynchronous updates.
    published_interval_s: tuple[float, float] | None = None
    published_class: str | None = None
    # share of the MFU a micro-batch this small can reach (GEMM roofline, costmodel.training.gemm)
    matmul_efficiency: float = 1.0
    # a CNN's fixed seconds per training micro-batch (kernel launches, kernels a small batch cannot
    # fill; costmodel.training.gemm) and the micro-batch its default MFU was measured at, where
    # the step is the MFU's: each micro-batch takes a·(1 − m/m_ref) beyond m × the per-image time
    fixed_s_per_micro_batch: float = 0.0
    mfu_micro_batch: int = 0
    # whether the layers write their attention scores to HBM (no fused kernel: --no-flash-attention, or
    # relative positions whatever the flag; costmodel.training.attention), and the seconds one training
    # micro-batch spends moving them (0 under a user's --mfu, whose measured speed holds them)
    attention_materialised: bool = False
    attention_scores_s: float = 0.0
    quantize_weights: int | None = None  # ZeRO++ qwZ bits
    quantize_grads: int | None = None  # ZeRO++ qgZ bits
    overlap_param_gather: bool = False  # ZeRO-1/2 parameter gather beside the next forward
    offload_optimizer: bool = False  # optimizer on the host (ZeRO-Offload)
    host_reduce: bool = False  # gradients all-reduced through host memory (hostreduce)
    sync_each_micro_batch: bool = False  # accumulation without no_sync: a synchronisation per micro-batch
    optimizer_impl: str = "multi-tensor"  # multi-tensor kernels, or a loop over the parameter tensors
    optimizer_dispatch_s: float = 0.0  # of optimizer_s: what a per-tensor loop adds to the multi-tensor (HBM) step
    optimizer_host_s: float = 0.0  # of optimizer_s: the CPU step (offload)
    optimizer_copy_s: float = 0.0  # of optimizer_s: updated weights copied host -> device (offload)
    shard: str = "full"  # ZeRO-3 over all ranks, or hybrid: in each node, replicated across nodes
    shard_ranks: int = 0  # the ranks ZeRO shards over (ranks, or the GPUs of one node when hybrid)
    input_wait_s: float = 0.0  # waiting for the data loader (losses.input_rate)
    input_rate: float | None = None  # samples/s one rank's data loader sustains (None: not limiting)
    # The model's own readiness curve (Workload.gradient_readiness: a CNN preset's, or a model
    # file's), the overlap's knots (bytes share, backward share); empty: evenly over backward,
    # the input embedding's bytes last
    gradient_readiness: tuple = ()
    # asynchronous updates with one slow worker (--slow-node): its cycle (push, compute × the factor,
    # pull), the others' being total_s; 0 otherwise (async_throughput_share)
    slow_worker_s: float = 0.0

    def to_dict(self) -> dict:
        """Every field (memory as a nested object), for JSON."""
        return asdict(self)

    def to_frame(self):
        """One row (a pandas DataFrame), memory fields prefixed ``memory_``; pandas loads here only."""
        import pandas as pd

        row = self.to_dict()
        row.update({f"memory_{k}": v for k, v in row.pop("memory").items()})
        return pd.DataFrame([row])


@frozen
class StepSeconds:
    """Per-step times from :func:`step_seconds` (floats or numpy arrays)."""

    compute_s: object
    straggler_wait_s: object
    comm_s: object
    exposed_comm_s: object
    total_s: object
    interference_s: object = 0.0
    host_overhead_s: object = 0.0
    input_wait_s: object = 0.0
    buffer_copy_s: object = 0.0


def step_seconds(*, forward_s, backward_s, accumulation_steps, straggler_factor, sync_comm_s,
                 sync_exposed_s, post_step_s, every_micro_batch, optimizer_s,
                 overlap_slowdown=0.0, host_overhead_s=0.0, post_step_exposed_s=None,
                 input_s=0.0, buffer_copy_s=0.0) -> StepSeconds:
    """Assemble a step from its parts; elementwise on numpy arrays.

    ``sync_comm_s``/``sync_exposed_s`` are one synchronisation's collective time and the part
    of it that outlasts the compute it overlaps with; it happens once per step, or on every
    micro-batch when ``every_micro_batch``. ``post_step_s`` runs once per step after the
    optimizer, ``post_step_exposed_s`` of it exposed (all of it unless given: an overlapped
    parameter gather hides the rest behind the next forward). The hidden part slows the compute it runs beside
    by ``overlap_slowdown``; ``host_overhead_s`` is the per-step framework overhead
    (:mod:`costmodel.training.losses`, already 0 for one rank); ``buffer_copy_s`` the gradient's copies
    into the sync mode's buffers and back (:func:`syncmodes.buffer_copy_seconds`, 0 for one rank), on
    the compute stream. ``input_s``: what the rank's data
    loader needs for the step's samples; it prefetches concurrently, so the step waits only for
    what exceeds the rest of the step.
    """
    syncs = ew.where(every_micro_batch, accumulation_steps, 1)
    compute = accumulation_steps * (forward_s + backward_s)
    wait = compute * (straggler_factor - 1.0)
    comm = syncs * sync_comm_s + post_step_s
    # No more exposed than there is: the finish-line arithmetic can overshoot by a rounding error
    # (-1.7e-18 s hidden, printed as a negative time, found by a QA pass on Horovod rows).
    exposed = ew.minimum(syncs * sync_exposed_s + (post_step_s if post_step_exposed_s is None
                                                   else post_step_exposed_s), comm)
    interference = losses.interference_seconds(comm - exposed, overlap_slowdown)
    total = compute + wait + exposed + optimizer_s + interference + host_overhead_s + buffer_copy_s
    starved = ew.maximum(input_s - total, 0.0)
    return StepSeconds(compute, wait, comm, exposed, total + starved, interference, host_overhead_s, starved,
                       buffer_copy_s)


def backward_seconds(forward_s, recompute=False):
    """Backward time: twice the forward, plus the recomputed forward with ``recompute``."""
    return forward_s * (BACKWARD_PER_FORWARD + RECOMPUTE_EXTRA_FORWARDS * recompute)


def alone_seconds(step: StepSeconds, optimizer_s, input_s=0.0):
    """This rank's step alone: its own work (compute + optimizer) with no communication and no
    waiting on others, at least what its own data loader needs for the step's samples
    (``input_s``, :func:`losses.input_seconds`): a lone GPU with that loader waits for it too, so a
    loader-bound step is not a scaling loss. Elementwise on arrays."""
    return ew.maximum(step.compute_s + optimizer_s, input_s)


def async_throughput_share(ranks: int, cycle_s: float, slow_cycle_s: float) -> float:
    """The share of N equal workers' throughput asynchronous workers keep when one of them takes
    ``slow_cycle_s`` per update and the others ``cycle_s``: nobody waits for it (seed 002: no
    barrel effect), it only lands fewer updates, ``(N − 1 + cycle/slow_cycle) / N``. A synchronous
    step instead runs every rank at the slow one's pace (:mod:`costmodel.training.stragglers`).
    The mean staleness of an applied update stays N − 1 whatever the speeds (each worker ``i``
    sees ``(R − r_i)/r_i`` others' updates per cycle at rates ``r``; weighted by ``r_i/R`` they sum
    to N − 1), while the slow worker's own gradients are ``(N − 1)·slow_cycle/cycle`` stale.

        >>> async_throughput_share(8, 1.0, 2.0)   # one worker at half speed among eight
        0.9375
    """
    if ranks <= 1 or slow_cycle_s <= cycle_s:
        return 1.0
    return (ranks - 1 + cycle_s / slow_cycle_s) / ranks


def scaling_efficiency(step: StepSeconds, optimizer_s, input_s=0.0):
    """:func:`alone_seconds` / the step.

    The reference is one GPU doing exactly this rank's share with the same data loader, so the
    ratio is ≤ 1 by construction (the step adds only non-negative terms to it, and waits for the
    loader no longer than it needs); one GPU is 1 whatever its loader. Elementwise on arrays.
    """
    return alone_seconds(step, optimizer_s, input_s) / step.total_s


# An optimizer that loops over the parameter tensors (PyTorch's single-tensor implementations,
# the default on CUDA before 2.0; a hand-written per-parameter loop such as NVIDIA's Transformer-XL
# JITLamb) launches its handful of kernels tensor by tensor from Python. The step begins after a
# host sync (the loss scaler's overflow check, gradient clipping's norm, a logged loss.item()), so
# the GPU waits for the launches. PyTorch PR #45299 (2020) timed optimizer.step() of torchvision
# ResNet-101 (314 parameter tensors) on CUDA with the single-tensor and the multi-tensor (foreach)
# implementations: Adam 42.69 / 10.16 ms, AdamW 51.38 / 15.63 ms, SGD 6.28 / 4.40 ms. What the loop
# costs beyond multi-tensor kernels is the difference, per tensor: 103.6, 113.9 and 6.0 µs. The
# model's multi-tensor step is its HBM time; a loop adds that per tensor it steps: at ZeRO-1 a
# rank's share of them (PyTorch's ZeroRedundancyOptimizer hands each rank whole parameters), at
# ZeRO-2/3 all of them (FSDP shards every parameter, so each rank steps a piece of each).
OPTIMIZER_IMPLS = ("multi-tensor", "per-tensor")
RESNET101_TENSORS = 314
PER_TENSOR_STEP_S = {"adam": (42.69e-3 - 10.16e-3) / RESNET101_TENSORS,
                     "adamw": (51.38e-3 - 15.63e-3) / RESNET101_TENSORS,
                     "sgd": (6.28e-3 - 4.40e-3) / RESNET101_TENSORS}


def optimizer_dispatch_seconds(tensors, optimizer: str, impl: str, zero_stage=0, shard_ranks=1):
    """Seconds a per-tensor optimizer loop adds to a rank's step (0 for multi-tensor kernels):
    ``tensors`` of them, at ZeRO-1 the rank's ``tensors / shard_ranks``; elementwise on arrays."""
    if impl != "per-tensor":
        return 0.0
    return ew.ceil(tensors / ew.where(zero_stage == 1, shard_ranks, 1)) * PER_TENSOR_STEP_S[optimizer]


def check_optimizer_impl(impl: str, asynchronous: bool = False, offload: bool = False) -> str:
    """``impl``, where a rank runs its own optimizer on the GPU: not with parameter servers nor
    with ZeRO-Offload's host step (DeepSpeed's CPU Adam)."""
    if impl not in OPTIMIZER_IMPLS:
        raise InputError("optimizer_impl", impl, ", ".join(OPTIMIZER_IMPLS))
    if impl == "per-tensor" and (asynchronous or offload):
        raise InputError("optimizer_impl", impl, "multi-tensor with " + (
            "asynchronous updates (the parameter servers run the optimizer)" if asynchronous
            else "--offload-optimizer (the host steps the optimizer)"))
    return impl


def optimizer_seconds(params, precision, optimizer: str, zero_stage, ranks, hbm_bandwidth_Bps):
    """Optimizer step time, HBM-bound, on this rank's shard (ZeRO ≥ 1 shards it)."""
    moved = memory.optimizer_step_bytes_per_param(precision, optimizer) * params
    return moved / ew.where(ew.greater(zero_stage, 0.5), ranks, 1) / hbm_bandwidth_Bps


# The gradients of a run that names no gradient dtype, by the compute dtype that runs: an FP32 or
# TF32 run keeps FP32 weights and so FP32 gradients (as does a 16-bit request on a GPU that runs it
# in FP32, the K80); a 16-bit run's gradient buffers are its 16-bit dtype (fp8 training keeps them
# in bf16: Transformer Engine runs fp8 inside the GEMMs only). Frameworks that all-reduce FP32
# gradients of a 16-bit run (PyTorch's autocast with FP32 weights) are --grad-dtype fp32.
GRAD_DTYPE_OF_COMPUTE = {"fp32": "fp32", "tf32": "fp32", "fp16": "fp16", "bf16": "bf16", "fp8": "bf16"}


def default_grad_dtype(compute_dtype: str, gpu=None) -> str:
    """The gradient dtype of a run that names none: its compute dtype's width
    (:data:`GRAD_DTYPE_OF_COMPUTE`), on ``gpu`` (a profile or its name) the width of the dtype
    that runs there."""
    runs = compute_dtype if gpu is None else peak_flops(_gpu_of(gpu), compute_dtype)[0]
    if runs not in GRAD_DTYPE_OF_COMPUTE:
        raise InputError("compute_dtype", compute_dtype, ", ".join(COMPUTE_DTYPES))
    return GRAD_DTYPE_OF_COMPUTE[runs]


def peak_flops(gpu, compute_dtype: str) -> tuple[str, float]:
    """(dtype that runs, peak FLOP/s) of ``gpu`` for a compute dtype (nearest supported one)."""
    if compute_dtype not in COMPUTE_DTYPES:
        raise InputError("compute_dtype", compute_dtype, ", ".join(COMPUTE_DTYPES))
    for dtype in (compute_dtype, *COMPUTE_DTYPE_FALLBACK.get(compute_dtype, ())):
        peak = gpu.peak_flops.get(dtype)
        if peak:
            return dtype, float(peak)
    raise NotApplicableError("compute_dtype", compute_dtype,
                             f"a dtype the GPU supports: {', '.join(sorted(gpu.peak_flops))}")


USER_MFU_SOURCE = "given by the user"  # Breakdown.mfu_source of a user's --mfu


def mfu(gpu, value: float | None, workload: Workload | None = None,
        compute_dtype: str | None = None, calibration: str | None = None,
        traffic: float | None = None) -> tuple[float, str]:
    """(model FLOPs utilisation, its source), first of: the user's value (``calibration``, when
    given, is its source); the model kind's default for the GPU's architecture and the dtype that
    runs (kinds with a table in models.toml ``[mfu_by_kind]``: CNNs); for a model with a
    transformer's width, the width roofline (:mod:`costmodel.training.roofline`, its non-matmul
    ``traffic``, None: the default); the GPU profile's; the architecture's."""
    if calibration is not None and not isinstance(calibration, str):  # 3 was taken and printed as the source
        raise InputError("mfu_calibration", calibration, "text saying where the mfu was calibrated, or None")
    if calibration is not None and value is None:
        raise InputError("mfu_calibration", calibration, "only with an mfu (the one it calibrated)")
    if value is not None:
        highest = workloads.max_mfu(workload)  # a CNN's nominal FLOPs can outrun the peak (Winograd)
        if not MIN_MFU <= value <= highest:  # below MIN_MFU a step would take longer than float range allows
            raise InputError("mfu", value, f"a fraction in [{MIN_MFU:g}, 1]" if highest == 1.0 else
                             f"a number in [{MIN_MFU:g}, {highest:.3g}] for {workload.name} (a cnn's nominal "
                             "FLOPs: its Winograd ceiling, docs/iteration-model.md)")
        return float(value), USER_MFU_SOURCE if calibration is None else calibration
    if workload is not None and compute_dtype is not None:
        by_kind = workloads.kind_mfu(workload.kind, getattr(gpu, "arch", "unknown"), compute_dtype,
                                     getattr(gpu, "peak_flops", None), getattr(gpu, "compute_capability", None),
                                     workload, getattr(gpu, "hbm_bandwidth_Bps", None))
        if by_kind is not None:
            return _relative(by_kind, workload, getattr(gpu, "arch", "unknown"))
    ceiling = roofline.matmul_ceiling(gpu)
    if roofline.applies(workload, gpu):
        rate, source = roofline.rate16(workload, gpu, roofline.ELEMENTWISE_TRAFFIC if traffic is None else traffic)
        return _mfu_for_dtype(rate, source, getattr(gpu, "peak_flops", {}) or {}, compute_dtype, ceiling,
                              full_precision_ratio=roofline.FULL_PRECISION_TRAFFIC_RATIO)
    default = getattr(gpu, "default_mfu", None)
    if default:
        rate, source = float(default), str(getattr(gpu, "mfu_source", "GPU profile"))
    else:
        rate, source = workloads.default_mfu_for_arch(getattr(gpu, "arch", "unknown"))
    return _mfu_for_dtype(rate, source, getattr(gpu, "peak_flops", {}) or {}, compute_dtype, ceiling)


def _relative(by_kind: "workloads.KindMfu", workload: Workload, arch: str) -> tuple[float, str]:
    """The kind's default scaled by the model's MFU relative to the kind's measured model, in the
    column of the dtype the run takes (FP32's for a TF32 run at the FP32 speed)."""
    rate, source = by_kind.rate, by_kind.source
    factor = workloads.relative_mfu(workload, by_kind.runs_as, arch)
    if factor == 1.0:
        return rate, source
    cls = workloads.relative_mfu_class(by_kind.runs_as, arch)
    return rate * factor, (f"{source}; x {factor:.2f}, {workload.name}'s {'FP32' if cls == 'fp32' else 'tensor-core'} "
                           f"MFU over ResNet-50's ({workloads.relative_mfu_origin(workload, by_kind.runs_as, arch)})")


# The 16-bit defaults above describe mixed-precision training. A step is matmuls at the GEMM
# ceiling plus memory-bound work (norms, activations, softmax, optimizer-free elementwise);
# fp32/tf32 keep the memory-bound seconds of the mixed-precision step per FLOP, times the bytes
# they move over its: roofline.FULL_PRECISION_TRAFFIC_RATIO (1.14, counted) over the width
# roofline's step, fitted on tables run under autocast-style mixed precision, which keeps norms
# and the residual stream at 4 bytes and casts around its matmuls; 2, the activations' widths,
# over a GPU's one default, from Megatron-LM's and Llama 3's runs, whose activations stay 16-bit.
# They run their matmuls at the same ceiling of their own, lower peak. fp8 runs its
# matmuls at the ceiling of its own, higher peak and keeps the 16-bit memory-bound seconds as
# they are (Transformer Engine: fp8 inside the GEMMs only, 16-bit activations), so it gains on
# the matmuls alone: ~1.3x a bf16 step on H100 at its 40 % default, where the 2x peak gave 2x
# (llm-foundry's H100 FP8 and BF16 tables, 1B and 3B at 512-32,768 tokens: 1.00-1.35x). GEMM
# ceiling: the GPU's measured matmul ceiling (roofline.matmul_ceiling: Bekman's MAMF,
# ml-engineering, cited as S1 in hardware/data/gpus.toml; A100 SXM's 85.9 % where none was measured).


def _mfu_for_dtype(rate16: float, source: str, peaks: dict, compute_dtype: str | None, ceiling: float,
                   full_precision_ratio: float | None = None):
    """The 16-bit default MFU carried over to an fp32/tf32 step (a lower peak) or an fp8 one (a
    higher peak; see the comment above), matmuls at the GPU's ``ceiling``. Other dtypes, and a
    peak on the wrong side of 16-bit's (no tensor cores: fp32 as fast as fp16), keep the 16-bit rate.
    ``full_precision_ratio``: a 4-byte step's memory-bound bytes over the 16-bit step's, where the
    16-bit rate's source says (the width roofline's autocast-style step:
    roofline.FULL_PRECISION_TRAFFIC_RATIO); None, a GPU's default from 16-bit runs, the
    activations' widths."""
    peak16 = roofline.peak16_of(peaks)
    # the memory-bound seconds scale with the bytes the step moves (memory.ACTIVATION_BYTES: fp8's
    # activations are 16-bit)
    width = memory.ACTIVATION_BYTES.get(compute_dtype, 0) / memory.ACTIVATION_BYTES["bf16"]
    counted = width > 1 and full_precision_ratio is not None
    ratio = full_precision_ratio if counted else width
    peak = peaks.get(compute_dtype) if ratio else None
    if not peak16 or not peak or rate16 >= ceiling or (peak > peak16) != (compute_dtype == "fp8") \
            or peak == peak16:
        return rate16, source
    memory_s_per_flop = 1.0 / (peak16 * rate16) - 1.0 / (peak16 * ceiling)
    step_s_per_flop = 1.0 / (peak * ceiling) + ratio * memory_s_per_flop
    rate = 1.0 / (peak * step_s_per_flop)
    why = "fp8 in the GEMMs only, 16-bit activations" if width <= 1 else \
        "4-byte activations" + (" against autocast's mixed ones, docs/iteration-model.md" if counted else "")
    return rate, (f"{source}; carried to {compute_dtype}: matmuls at {ceiling:.1%} of the "
                  f"{compute_dtype} peak, the 16-bit step's memory-bound time x {ratio:.3g} ({why}) -> {rate:.0%}")


# TrainingConfig's switches (True or False) and its numbers (None: unset), read from its fields'
# declared types, so a new field is checked without being listed: the numbers' types before any
# arithmetic, each one's range where it is read
SWITCHES = tuple(f.name for f in fields(TrainingConfig) if f.type == "bool")
NUMBERS = tuple(f.name for f in fields(TrainingConfig) if f.type in ("float", "float | None"))
REQUIRED_NUMBERS = tuple(f.name for f in fields(TrainingConfig) if f.type == "float")
COUNTS = tuple(f.name for f in fields(TrainingConfig) if f.type in ("int", "int | None"))


def _as_python_numbers(config: TrainingConfig) -> TrainingConfig:
    """The counts as Python ints and the numbers as Python floats, once checked: a numpy integer
    or 8.0 given for a count is taken (``is_whole``), but it leaked into the breakdown (a numpy
    micro-batch made ``to_dict`` unserialisable by json; 8.0 gave a global batch of 128.0;
    review, 2026-11-29)."""
    counts = {name: int(getattr(config, name)) for name in COUNTS  # a value not whole is left to its own check
              if type(getattr(config, name)) is not int and is_whole(getattr(config, name))}
    numbers = {name: float(getattr(config, name)) for name in NUMBERS
               if getattr(config, name) is not None and type(getattr(config, name)) not in (float, int)}
    given = config.losses  # its numbers as Python floats too (an np.float32 rate made the step a float32)
    if any(type(getattr(given, field.name)) not in (float, int, type(None), bool) for field in fields(given)):
        numbers["losses"] = losses.check(given)
    return replace(config, **counts, **numbers) if counts or numbers else config


def _check(config: TrainingConfig, ranks: int) -> None:
    for name in SWITCHES:  # read by truth below: asynchronous="no" ran asynchronous
        check_switch(name, getattr(config, name))
    if config.include_attention is not None:  # None: the model's own (workloads.counts_attention)
        check_switch("include_attention", config.include_attention)
    for name in NUMBERS:  # text or a switch here was a TypeError, or True read as 1
        value = getattr(config, name)
        if value is None and name in REQUIRED_NUMBERS:  # jitter_cv=None was a TypeError
            raise InputError(name, value, "a number")
        if value is not None and not is_real(value):
            raise InputError(name, value, "a number")
    if not isinstance(config.losses, losses.StepLosses):  # None was an AttributeError
        raise InputError("losses", config.losses, "a costmodel.training.losses.StepLosses")
    if config.sync != "ddp":  # DeepSpeed's own options, as plan refuses them (review, 2026-11-29)
        for name in syncmodes.DEEPSPEED_ONLY:
            value = getattr(config, name)
            if value not in (None, False):
                shown = f"int{value}" if name.startswith("quantize") else value
                raise InputError(name, shown, f"unset with --sync {config.sync} (DeepSpeed's option; use --sync ddp)")
    for field, value, most in (("micro_batch", config.micro_batch, MAX_COUNT), ("ranks", ranks, MAX_RANKS),
                               ("accumulation_steps", config.accumulation_steps, MAX_COUNT)):
        if not is_whole(value) or not 1 <= value <= most:
            raise InputError(field, value, f"an integer from 1 to {most}")
    memory.check_zero_stage(config.zero_stage)
    memory.optimizer_state_bytes(config.optimizer)
    check_optimizer_impl(config.optimizer_impl, config.asynchronous, config.offload_optimizer)
    stragglers.check_jitter(config.jitter_cv)
    losses.check(config.losses)
    # nobody waits under asynchronous updates: zero-mean jitter and spread cost nothing, and a
    # persistently slow worker lands fewer updates (async_throughput_share)
    if config.asynchronous and ranks == 1:  # the one worker's push, pull and the servers' optimizer were dropped
        raise InputError("asynchronous", True, "2 or more GPUs (one GPU has no peer to update asynchronously; "
                         "its step is the synchronous one)")
    if config.asynchronous and config.losses.host_overhead_s not in (0.0, losses.HOST_OVERHEAD_S):  # both: none taken
        raise InputError("host_overhead", config.losses.host_overhead_s,
                         f"0 or its default ({losses.HOST_OVERHEAD_S:g} s) with asynchronous updates (the overhead of a "
                         "data-parallel synchronised step, which parameter-server workers never take)")
    if config.transport not in transport.TRANSPORTS:
        raise InputError("transport", config.transport, ", ".join(transport.TRANSPORTS))
    bucket, first = config.bucket_bytes, config.first_bucket_bytes  # None: the sync mode's default
    overlap.check_bucket_sizes(overlap.MIN_BUCKET_BYTES if bucket is None else bucket,
                               overlap.MIN_BUCKET_BYTES if first is None else first)


@frozen(kw_only=True)
class _Compute:
    """Forward time of one micro-batch and how it was derived."""

    seq_len: int
    compute_dtype: str
    mfu: float
    mfu_source: str
    forward: MicroBatchForward  # the forward and how it was derived (roofline share, a CNN's fixed time)

    @property
    def forward_s(self) -> float:
        return float(self.forward.forward_s)


@frozen(kw_only=True)
class MicroBatchForward:
    """:func:`micro_batch_forward`'s answer (floats, or arrays shaped like the micro-batches)."""

    forward_s: object
    matmul_efficiency: object  # the GEMM roofline's share of the MFU (1 for CNNs, under --mfu)
    fixed_s: object  # a CNN's fixed seconds per training micro-batch (0 otherwise)
    mfu_micro_batch: int  # the micro-batch the default MFU was measured at (0: none applies)
    attention_scores_s: object = 0.0  # materialised attention scores through HBM per training micro-batch
    attention_materialised: bool = False  # the scores reach HBM (their memory counts; their time unless --mfu)
    mfu_taken: tuple[float, str] | None = None  # (MFU, source) a TF32 CNN micro-batch runs at instead of the default


def mfu_holds_at_any_micro_batch(mfu: float | None, calibration: str | None) -> bool:
    """True for a user's --mfu (measured at their own micro-batch, taken as given at any); False
    for the default MFU (``mfu`` None) and a calibrated one (--rate: ``calibration`` names where it
    came from), to which the micro-batch terms apply. The one rule for TrainingConfig and the
    planner's Setting."""
    return mfu is not None and calibration is None


def micro_batch_forward(workload: Workload, gpu, *, compute_dtype: str, peak: float, mfu: float,
                        mfu_given: bool, flops_per_sample, seq_len, micro_batch,
                        flash_attention: bool = True, mfu_default: bool = False,
                        traffic: float | None = None) -> MicroBatchForward:
    """Forward seconds of one micro-batch of ``micro_batch`` samples: ``(m·s + a·(1 − m/m_ref) + t) / 3``,
    ``s = FLOPs / (peak · MFU · roofline)`` the per-sample training seconds. The GEMM roofline
    (:func:`gemm.workload_efficiency`) slows a transformer micro-batch too small to feed the
    tensor cores; a CNN pays a fixed ``a`` per micro-batch around the micro-batch ``m_ref`` its
    default MFU was measured at (:func:`gemm.cnn_fixed_seconds`); a transformer whose attention
    scores reach HBM (without a fused kernel, or always for relative positions) moves them in
    ``t`` (:func:`attention.workload_score_seconds`: memory-bound, so not scaled by the MFU).
    The step model's 1 : 2 split of a micro-batch between forward and backward applies to
    ``t`` too (the counted accesses split 10 : 11, 14 : 21): the total is the count; the split
    decides only how much communication backward can hide. A user's --mfu is what they
    measured at their own micro-batch: taken as given, with none of the three. Floats or numpy
    arrays of ``micro_batch`` (iteration and the planner's sweep both ask here).

    ``mfu_default``: ``mfu`` is the model kind's default. A TF32 CNN then also times its other
    option (:func:`workloads.tf32_alternative`: the FP32 measurement at the FP32 speed, or the
    TF32 one) and runs each micro-batch at the faster, the fixed time included: the default
    chose by per-image rate, and each measurement's fixed time sits around its own micro-batch
    (``mfu_taken`` names the other option where a scalar micro-batch takes it)."""
    reference = None if mfu_given else workloads.mfu_reference_micro_batch(  # None: no kind table (transformers)
        workload.kind, getattr(gpu, "arch", "unknown"), compute_dtype, getattr(gpu, "peak_flops", None),
        getattr(gpu, "compute_capability", None), workload, getattr(gpu, "hbm_bandwidth_Bps", None))
    found = _forward_line(workload, gpu, compute_dtype, peak, mfu, mfu_given, flops_per_sample, seq_len,
                          micro_batch, flash_attention, reference)
    other = _tf32_other(workload, gpu, reference, traffic) if mfu_default and compute_dtype == "tf32" else None
    if other is None:
        return found
    rate, source, other_reference, (line_dtype, line_peak) = other
    alt = _forward_line(workload, gpu, line_dtype or compute_dtype, line_peak or peak, rate, mfu_given,
                        flops_per_sample, seq_len, micro_batch, flash_attention, other_reference)
    if is_scalar(micro_batch):  # the MFU reported is of the TF32 peak, whichever kernels run
        reported = rate * (line_peak or peak) / peak
        return replace(alt, mfu_taken=(reported, source)) if alt.forward_s < found.forward_s else found
    return replace(found, forward_s=np.minimum(found.forward_s, alt.forward_s))


def _tf32_other(workload: Workload, gpu, reference: int | None,
                traffic: float | None = None) -> tuple[float, str, int | None, tuple] | None:
    """(MFU with the model's relative MFU; source; reference micro-batch; (dtype, peak) its
    kernels run at, (None, None) for the TF32 run's own) of a TF32 run's other option, or None
    (a GPU without a separate FP32 peak). ``reference``: the TF32 default's reference micro-batch
    (:func:`workloads.mfu_reference_micro_batch`; None without a kind table).
    A kind with a table (CNNs) takes its other measurement (:func:`workloads.tf32_alternative`);
    any other (transformers) its FP32 kernels, at the FP32 default MFU: TF32 is a math mode the
    library may use, never one that makes a step slower than FP32 (vit-l-16 on an L40S at
    micro-batch 1 took 18.1 ms in TF32 against 12.2 ms in FP32: its small-GEMM penalty on the
    tensor cores' tiles outweighed their peak; physics review, 2026-11-29)."""
    arch = getattr(gpu, "arch", "unknown")
    other = workloads.tf32_alternative(workload.kind, arch, "tf32", getattr(gpu, "peak_flops", None),
                                       getattr(gpu, "compute_capability", None), workload,
                                       getattr(gpu, "hbm_bandwidth_Bps", None))
    if other is not None:
        rate, source = _relative(other, workload, arch)
        batch = other.entry.get("micro_batch")
        return rate, source, int(batch) if batch else None, (None, None)
    if reference is not None:  # a kind table (its TF32 reference micro-batch) without a second option
        return None
    peaks = getattr(gpu, "peak_flops", None) or {}
    if "tf32" not in peaks or "fp32" not in peaks:
        return None  # TF32 runs as FP32 here already (peak_flops' fall-back)
    rate, source = mfu(gpu, None, workload, "fp32", traffic=traffic)
    return rate, f"{source} (FP32 kernels)", None, ("fp32", peaks["fp32"])


def _forward_line(workload, gpu, compute_dtype, peak, mfu, mfu_given, flops_per_sample, seq_len, micro_batch,
                  flash_attention, reference) -> MicroBatchForward:
    """:func:`micro_batch_forward` at one MFU measured at ``reference`` (None: none applies)."""
    fed = 1.0 if mfu_given else gemm.workload_efficiency(workload, micro_batch, seq_len, gpu, peak,
                                                         memory.DTYPE_BYTES[compute_dtype])
    per_sample = flops_per_sample / (peak * mfu * fed)
    on_hbm = attention.materialised(workload, flash_attention)
    scores = attention.workload_score_seconds(
        workload, micro_batch=micro_batch, seq_len=seq_len, element_bytes=memory.ACTIVATION_BYTES[compute_dtype],
        hbm_Bps=gpu.hbm_bandwidth_Bps) if on_hbm and not mfu_given else 0.0
    step = per_sample * micro_batch + scores
    fixed = 0.0
    if reference:  # a CNN's fixed time per micro-batch around the one its MFU was measured at
        fixed = gemm.cnn_fixed_seconds(syncmodes.tensor_count(workload), per_sample, reference)
        step = step + gemm.fixed_shift_seconds(fixed, micro_batch, reference)
    return MicroBatchForward(forward_s=step * FORWARD_SHARE_OF_TRAINING_FLOPS, matmul_efficiency=fed,
                             fixed_s=fixed, mfu_micro_batch=reference or 0, attention_scores_s=scores,
                             attention_materialised=on_hbm)


def _compute(workload: Workload, gpu, config: TrainingConfig) -> _Compute:
    roofline.check_traffic(config.elementwise_traffic, config.mfu, workload, gpu)
    seq_len = workloads.resolve_seq_len(workload, config.seq_len)
    compute_dtype, peak = peak_flops(gpu, config.compute_dtype)
    rate, mfu_source = mfu(gpu, config.mfu, workload, compute_dtype, config.mfu_calibration,
                           config.elementwise_traffic)
    flops = workloads.training_flops_per_sample(workload, seq_len, config.include_attention)
    attention.check_flash_attention(workload, config.flash_attention)
    found = micro_batch_forward(workload, gpu, compute_dtype=compute_dtype, peak=peak, mfu=rate,
                                mfu_given=mfu_holds_at_any_micro_batch(config.mfu, config.mfu_calibration),
                                flops_per_sample=float(flops), seq_len=seq_len, micro_batch=config.micro_batch,
                                flash_attention=config.flash_attention, mfu_default=config.mfu is None,
                                traffic=config.elementwise_traffic)
    if found.mfu_taken is not None:  # a TF32 CNN micro-batch at its other option (micro_batch_forward)
        rate, mfu_source = found.mfu_taken[0], f"{found.mfu_taken[1]} (faster at micro-batch {config.micro_batch})"
    return _Compute(seq_len=seq_len, compute_dtype=compute_dtype, mfu=rate, mfu_source=mfu_source, forward=found)


def _sync_times(plan: gradsync.SyncPlan, layout, grad_bytes, forward_s, backward_s, use_overlap,
                readiness=overlap.UNIFORM):
    """(collective time, exposed part) of one synchronisation. ``readiness``: when backward has
    produced each share of the gradient (:attr:`Workload.readiness`; forward's gathers, in
    reversed time, need the same layers in the other order)."""
    comm_s, exposed_s = 0.0, 0.0
    for phase, compute_s in ((plan.backward, backward_s), (plan.forward, forward_s)):
        times = (phase.first_s, phase.full_s, phase.last_s)
        if times == (0.0, 0.0, 0.0):  # no collective in this phase (forward below ZeRO-3): both
            continue  # formulas give exactly 0 (the slope-1 line finishes at compute_s)
        comm_s += float(overlap.total_comm_s(layout, *times))
        exposed_s += float(overlap.exposed_comm_s(compute_s, grad_bytes, layout, *times,
                                                  overlap=use_overlap, readiness=readiness))
    return comm_s, exposed_s


def _memory(workload, config, precision, ranks, seq_len, gpu, compute_dtype, shard_ranks=None,
            secondary_ranks=None, named=None, replicas_reduce=False):
    """Memory at the chosen ZeRO stage, the totals at every stage, the smallest that fits (and
    runs: with the sync mode, and with ``named``, a comm model whose algorithm was named)."""
    states = 0.0 if config.asynchronous else (memory.optimizer_state_bytes(config.optimizer)
                                              + precision.master_bytes)
    activations = memory.activation_bytes(workload, config.micro_batch, seq_len,
                                          memory.ACTIVATION_BYTES[compute_dtype],
                                          config.flash_attention, config.recompute)
    logits = memory.logits_bytes(workload, config.micro_batch, seq_len,
                                 memory.ACTIVATION_BYTES[compute_dtype])
    activations, logits = float(activations), float(logits)
    # ZeRO >= 1 with offload: the optimizer states live on the host
    per_stage = (states, shard_ranks, secondary_ranks, config.recompute, config.offload_optimizer)
    # every stage's bytes (the same formulas; a breakdown only for the chosen stage)
    stages = memory.stage_bytes(workload.params, precision, ranks, activations, logits, per_stage)
    chosen = memory.breakdown_at(stages[memory.ZERO_STAGES.index(config.zero_stage)], ranks=ranks,
                                 activations_bytes=activations, logits=logits, capacity_bytes=gpu.memory_bytes,
                                 reserve=config.memory_reserve_bytes)
    totals = tuple(stage[3] for stage in stages)
    smallest = next((stage for stage, total in zip(memory.ZERO_STAGES, totals)  # the first that fits: stop there
                     if memory.fits(total, chosen.capacity_bytes, chosen.reserve_bytes)
                     and _stage_allowed(config, stage, named, replicas_reduce)), None)
    return {"memory": chosen, "zero_totals_bytes": totals, "smallest_fitting_zero_stage": smallest}


def _stage_allowed(config, stage: int, named=None, replicas_reduce: bool = False) -> bool:
    """Whether ``stage`` runs with the rest of ``config`` (:func:`syncmodes.stage_runs`) and, for
    ``named`` (a comm model whose algorithm was named), whether that algorithm runs one of the
    stage's collectives (:func:`gradsync.runs_any`: a parameter server runs no ZeRO-2 collective,
    and `--zero 2` beside it is refused)."""
    runs = syncmodes.stage_runs(config.sync, stage, asynchronous=config.asynchronous,
                                host_reduce=config.host_reduce, offload_optimizer=config.offload_optimizer)
    return runs and (named is None or gradsync.runs_any(named, gradsync.step_primitives(
        stage, config.quantize_grads is not None, replicas_reduce, config.topk_fraction is not None)))


def _named_model(comm):
    """The comm model behind ``comm`` (a CommModel or its bound ``time_s``) when its algorithm was
    named; None for auto or a bare callable (no model to ask what it runs)."""
    model = _owner(comm)
    return model if callable(getattr(model, "runs_named", None)) and model.algorithm != "auto" else None


def _echo(workload, config, ranks, algorithm, compute: _Compute, layout, setup, slowdown) -> dict:
    """The inputs as the breakdown reports them."""
    return {
        "model": workload.name, "params": workload.params, "ranks": ranks, "algorithm": algorithm,
        "micro_batch": config.micro_batch, "seq_len": compute.seq_len,
        "accumulation_steps": config.accumulation_steps,
        "global_batch": ranks * config.micro_batch * config.accumulation_steps,
        "grad_dtype": config.grad_dtype, "compute_dtype": compute.compute_dtype,
        "topk_fraction": config.topk_fraction, "optimizer": config.optimizer,
        "optimizer_impl": config.optimizer_impl,
        "zero_stage": config.zero_stage, "overlap": config.overlap, "synchronous": not config.asynchronous,
        "bucket_bytes": float(setup.bucket_bytes), "first_bucket_bytes": float(setup.first_bucket_bytes),
        "bucket_count": int(layout.count), "first_call_bytes": float(layout.first_bytes),
        "whole_tensors": syncmodes.whole_tensors(setup, workload), "gradient_readiness": workload.gradient_readiness,
        "sync": setup.mode, "transport": config.transport,
        "jitter_cv": config.jitter_cv, "speed_cv": config.losses.speed_cv,
        "slow_node_factor": config.losses.slow_node_factor, "overlap_slowdown": slowdown,
        "mfu": compute.mfu, "mfu_source": compute.mfu_source,
        "matmul_efficiency": float(compute.forward.matmul_efficiency), "flash_attention": config.flash_attention,
        "attention_materialised": compute.forward.attention_materialised,
        "attention_scores_s": float(compute.forward.attention_scores_s),
        "fixed_s_per_micro_batch": float(compute.forward.fixed_s), "mfu_micro_batch": compute.forward.mfu_micro_batch,
        "include_attention": workloads.counts_attention(workload, config.include_attention),
        "recompute": config.recompute,
        "quantize_weights": config.quantize_weights, "quantize_grads": config.quantize_grads,
        "overlap_param_gather": config.overlap_param_gather, "offload_optimizer": config.offload_optimizer,
        "host_reduce": config.host_reduce, "shard": config.shard,
        "sync_each_micro_batch": config.sync_each_micro_batch,
    }


def _resolve_sync(workload, config: TrainingConfig) -> tuple[TrainingConfig, syncmodes.SyncSetup]:
    """The configuration with the sync preset's overlap, ZeRO stage and forward weight gather
    (FSDP SHARD_GRAD_OP; a user's ``overlap_param_gather`` stays on) filled in, copied only when
    the preset changes them, and the preset: its bucket sizes are ``setup``'s."""
    grad_bytes = workload.params * memory.precision_for(config.grad_dtype).grad_bytes
    setup = syncmodes.sync_setup(config.sync, workload, grad_bytes, bucket_bytes=config.bucket_bytes,
                                 first_bucket_bytes=config.first_bucket_bytes,
                                 overlap=config.overlap, zero_stage=config.zero_stage)
    gather = setup.overlap_param_gather or config.overlap_param_gather
    if (setup.overlap, setup.zero_stage, gather) != (config.overlap, config.zero_stage, config.overlap_param_gather):
        config = replace(config, overlap=setup.overlap, zero_stage=setup.zero_stage, overlap_param_gather=gather)
    return config, setup


def _overlap_slowdown(config: TrainingConfig, algorithm: str) -> float:
    return transport.overlap_slowdown_for(config.transport, config.losses.overlap_slowdown,
                                          transport.off_the_gpu(algorithm, config.host_reduce))


def _sync_plan(comm, ranks, config, precision, layout, gpu, host, groups, qgz, *, extras=True, inside_free=False):
    """The step's :func:`gradsync.sync_plan` on ``comm`` (or ``groups``' and ``qgz``'s groups).
    ``extras`` False: the kernels and copies beside the collectives (quantisation, offload) take
    no time; ``inside_free``: nor do the collectives inside one node (hybrid sharding's shard
    group, hpZ's secondary gathers, qgZ's in-node all-to-all), leaving what crosses the network."""
    sync_comm_fn, shard = (comm, ranks) if groups is None else (groups.comm, groups.ranks)
    if config.host_reduce and ranks > 1:  # the all-reduce through host memory (hostreduce)
        sync_comm_fn = _host_reduce_comm(comm, config, host, ranks)
    inside = gradsync.no_time if inside_free else None  # replaces an in-node group's function
    hybrid = groups is not None and groups.replicas is not None
    return gradsync.sync_plan(inside if hybrid and inside else sync_comm_fn, shard, layout, precision,
                              zero_stage=config.zero_stage,
                              topk_fraction=config.topk_fraction, asynchronous=config.asynchronous,
                              weight_bits=config.quantize_weights, grad_bits=config.quantize_grads,
                              quant_s_per_byte=gradsync.QUANT_HBM_PASSES / gpu.hbm_bandwidth_Bps if extras else 0.0,
                              offload_s_per_byte=offload.d2h_s_per_grad_byte(shard, host)
                              if extras and config.offload_optimizer else 0.0,
                              replicas=None if groups is None else groups.replicas, replica_share=1.0 / shard,
                              replica_ranks=None if groups is None else groups.replica_ranks,
                              secondary=None if groups is None or groups.secondary is None else
                              (inside or groups.secondary),
                              sync_each_micro_batch=config.sync_each_micro_batch,
                              **({} if qgz is None else
                                 {"qgz_node": inside or qgz[0], "qgz_rails": qgz[1], "qgz_node_ranks": qgz[2]}))


def _two_level_slowdown(comm, ranks, config, precision, layout, gpu, host, groups, qgz, slowdown: float) -> float:
    """The overlap slowdown of a step whose collectives run at two levels (hybrid sharding, hpZ,
    qgZ) where the network's rule is harsher than the node's (NCCL over TCP sockets,
    :mod:`transport`): :func:`transport.two_level_slowdown` of the share of seconds that cross
    the network. Elsewhere ``slowdown`` as it is."""
    # the node level's own rule: a node without peer-to-peer hides nothing either (review, 2026-11-30);
    # a caller's own comm function states no node: the RDMA one
    lay = _layout_of(comm)
    inside = config.losses.overlap_slowdown if lay is None else \
        transport.node_slowdown(lay.system, lay.gpus_per_node, config.losses.overlap_slowdown)
    if slowdown == inside:
        return slowdown
    if groups is None and qgz is None:  # one level: every collective crosses the network
        return slowdown
    whole = float(gradsync.plan_seconds(_sync_plan(comm, ranks, config, precision, layout, gpu, host, groups, qgz,
                                                   extras=False), layout))
    if whole <= 0.0:
        return slowdown
    across = float(gradsync.plan_seconds(_sync_plan(comm, ranks, config, precision, layout, gpu, host, groups, qgz,
                                                    extras=False, inside_free=True), layout))
    return transport.two_level_slowdown(inside, slowdown, min(across / whole, 1.0))


def _step(workload, gpu, comm, ranks, config, forward, precision, layout, wait_s, host, groups, slowdown, qgz=None,
          compute_factor=None):
    """(StepSeconds, SyncPlan, optimizer seconds, (host step, host-to-device copy) seconds, what a
    per-tensor optimizer loop adds of them).

    ``groups`` (:class:`gradsync.ShardGroups`, hybrid sharding or hpZ): where ZeRO's collectives
    run and over how many ranks its states are sharded. ``compute_factor``: the compute of this
    rank × this (an asynchronous slow worker's own cycle, built as a synchronous step's slowest
    rank is); default the straggler model's slowest-of-N (1 under asynchronous updates)."""
    grad_bytes = float(workload.params * precision.grad_bytes)
    offloaded = config.offload_optimizer
    shard = ranks if groups is None else groups.ranks
    plan = _sync_plan(comm, ranks, config, precision, layout, gpu, host, groups, qgz)
    k = config.accumulation_steps
    factor = compute_factor if compute_factor is not None else 1.0 if config.asynchronous else float(
        stragglers.slowest_rank_factor(config.jitter_cv, ranks, 1 if plan.every_micro_batch else k,
                                       config.losses.speed_cv, config.losses.slow_node_factor))
    backward = backward_seconds(forward, config.recompute)
    sync_comm, sync_exposed = _sync_times(plan, layout, grad_bytes, forward * factor,
                                          backward * factor, config.overlap, workload.readiness)
    if ranks > 1:  # a fusion cycle's wait before the last collective (syncmodes)
        sync_comm, sync_exposed = sync_comm + wait_s, sync_exposed + wait_s
    after = (plan.after.first_s, plan.after.full_s, plan.after.last_s)
    post_exposed = float(overlap.exposed_comm_s(forward * factor, grad_bytes, layout, *after, overlap=True,
                                                readiness=workload.readiness)) \
        if config.overlap_param_gather else plan.post_step_s
    host_s, optimizer_s, dispatch_s = (0.0, 0.0), 0.0, 0.0  # (asynchronous: the servers run the optimizer)
    if offloaded:
        host_s = tuple(float(t) for t in offload.step_seconds(
            workload.params, memory.optimizer_step_bytes_per_param(precision, config.optimizer),
            precision.weight_bytes, shard, host.memory_Bps, host.host_link_Bps))
        optimizer_s = host_s[0] + host_s[1]
    elif not config.asynchronous:
        dispatch_s = float(optimizer_dispatch_seconds(  # a per-tensor loop (its share of the tensors at ZeRO-1)
            syncmodes.tensor_count(workload), config.optimizer, config.optimizer_impl, config.zero_stage, shard))
        optimizer_s = float(optimizer_seconds(workload.params, precision, config.optimizer, config.zero_stage, shard,
                                              gpu.hbm_bandwidth_Bps)) + dispatch_s
    passes = syncmodes.buffer_copy_passes(syncmodes.stage_mode(config.sync, config.zero_stage),
                                          asynchronous=config.asynchronous, host_reduce=config.host_reduce,
                                          offloaded=offloaded) if config.losses.buffer_copies else (0, 0)
    copies_s = float(syncmodes.buffer_copy_seconds(*passes, grad_bytes, gpu.hbm_bandwidth_Bps, ranks,
                                                   shard if config.zero_stage >= 1 else 1,
                                                   k if plan.every_micro_batch else 1))
    step = step_seconds(forward_s=forward, backward_s=backward, accumulation_steps=k,
                        straggler_factor=factor, sync_comm_s=sync_comm, sync_exposed_s=sync_exposed,
                        post_step_s=plan.post_step_s, post_step_exposed_s=post_exposed,
                        every_micro_batch=plan.every_micro_batch, buffer_copy_s=copies_s,
                        optimizer_s=optimizer_s, overlap_slowdown=slowdown,
                        host_overhead_s=float(losses.host_overhead_seconds(
                            0.0 if config.asynchronous else config.losses.host_overhead_s, ranks)),
                        input_s=losses.input_seconds(config.losses.input_rate, config.micro_batch * k))
    return step, plan, optimizer_s, host_s, dispatch_s


def _owner(comm):
    """The object behind ``comm``: a bound ``CommModel.time_s`` knows its model (ranks, layout)."""
    return getattr(comm, "__self__", comm)


def _layout_of(comm):
    """The cluster layout ``comm`` runs on, None for a plain function."""
    return getattr(_owner(comm), "layout", None)


def _checked_comm(comm: Callable[[str, float], float]) -> Callable[[str, float], float]:
    """``comm`` with each answer checked: seconds, a finite real number >= 0. Another planner's
    comm function that answered NaN or infinity gave a NaN step, a negative one a
    ZeroDivisionError, ``None`` or text a TypeError (API review, 2026-11-29)."""
    def checked(primitive: str, size_bytes: float) -> float:
        seconds = comm(primitive, size_bytes)
        if not is_real(seconds) or not 0.0 <= float(seconds) < float("inf"):
            from dpbase.units import format_size

            raise InputError("comm", seconds, f"seconds >= 0 (finite) from comm({primitive!r}, "
                                              f"{format_size(float(size_bytes))})")
        return float(seconds)

    return checked


def _gpu_of(gpu):
    """A GPU profile, or its bundled name or TOML path, as the docstring's fields need it; a
    hardware.Gpu built in Python checked as its TOML would be (hardware.gpu_of)."""
    import os

    from hardware import Gpu

    if isinstance(gpu, (str, os.PathLike, Gpu)):
        from hardware import gpu_of

        return gpu_of(gpu)
    if not all(hasattr(gpu, name) for name in ("peak_flops", "hbm_bandwidth_Bps", "memory_bytes")):
        raise InputError("gpu", gpu, "a hardware.Gpu (or its name, e.g. h100-sxm): peak_flops, hbm_bandwidth_Bps, "
                                     "memory_bytes")
    return gpu


def _group_ranks(comm, ranks: int | None) -> int:
    """The data-parallel group size: the comm model's own where it knows it, else ``ranks``."""
    known = getattr(_owner(comm), "ranks", None)
    if known is not None and ranks is not None and ranks != known:
        raise InputError("ranks", ranks, f"{known}, the group the comm model was built for (or leave it out)")
    if known is None and ranks is None:
        raise InputError("ranks", None, "an integer >= 1 (this comm function does not know its group)")
    return known if ranks is None else ranks


SHARDS = ("full", "hybrid", "hpz")


def _check_shard(config: TrainingConfig, groups) -> None:
    """Hybrid sharding is ZeRO-3's (FSDP HYBRID_SHARD, DeepSpeed MiCS) and needs a cluster."""
    if config.shard not in SHARDS:
        raise InputError("shard", config.shard, " or ".join(SHARDS))
    if config.shard != "full":
        if config.zero_stage != 3:
            raise InputError("shard", config.shard,
                             "only with --zero 3 (hybrid: FSDP HYBRID_SHARD / DeepSpeed MiCS; hpz: ZeRO++ hpZ)")
        if groups is None:
            raise InputError("shard", config.shard, "a cluster (its nodes are the shard groups)")


def _check_host_reduce(config: TrainingConfig) -> None:
    """A host-memory reduction runs ZeRO-0's synchronous all-reduce alone: no ZeRO collective,
    no parameter servers, no top-k all-gather (whatever the rank count)."""
    if not config.host_reduce:
        return
    if config.zero_stage != 0 or config.asynchronous:
        raise InputError("host_reduce", True, "only with --zero 0, synchronous (a host-memory all-reduce)")
    if config.topk_fraction is not None:
        raise InputError("host_reduce", True, "only the all-reduce of ZeRO-0 data parallelism (a host-memory "
                                              "reduction has no all-gather, which --topk sends)")


def _host_reduce_comm(comm, config: TrainingConfig, host, ranks: int):
    """The gradient all-reduce through host memory (ZeRO-0 only): on the comm model's cluster,
    or, given a ``host`` path and no cluster, on one node of ``ranks`` GPUs."""
    from costmodel.training import hostreduce

    lay = _layout_of(comm)
    if lay is None:
        if host is None:
            raise InputError("host_reduce", True, "a cluster, or a host path (its PCIe and host memory)")
        return hostreduce.host_comm(None, ranks, 1, host)
    path = host if host is not None else offload.host_path(lay.system, lay.gpus_per_node, field="host_reduce")
    return hostreduce.host_comm(lay.system, lay.gpus_per_node, lay.nodes, path)


def _host_of(comm, host):
    """The offload host path: given, else from the comm model's cluster, else None."""
    if host is not None:
        return host
    lay = _layout_of(comm)
    return offload.host_path(lay.system, lay.gpus_per_node) if lay is not None else None


def _qgz_groups(comm, config) -> tuple | None:
    """ZeRO++ qgZ's hierarchical all-to-all on a comm model's cluster of several nodes: (the node's
    comm, one rail's comm across the nodes, GPUs per node) (:func:`gradsync.sync_plan`); None
    without qgZ, under hybrid sharding (its reduction already stays in the node), on one node, with
    one GPU per node (:func:`qgz_hierarchical`) or for a comm function with no cluster behind it
    (the all-to-all then runs over the group)."""
    if config.quantize_grads is None:  # the common case, before any import
        return None
    from costmodel.cluster.comm import CommModel, hybrid_groups

    owner = _owner(comm)
    if not isinstance(owner, CommModel) or not qgz_runs_in_two_levels(config, owner.layout):
        return None
    intra, rails = hybrid_groups(owner)
    return intra.time_s, rails.time_s, intra.ranks


def qgz_hierarchical(nodes, gpus_per_node):
    """Whether qgZ's all-to-all runs in two levels: several nodes of several GPUs each (one node
    is its own group; one GPU per node exchanges nothing inside it). Elementwise."""
    return (nodes > 1) & (gpus_per_node > 1)


def qgz_runs_in_two_levels(config: TrainingConfig, layout) -> bool:
    """qgZ asked for, outside hybrid sharding (its reduction already stays in the node), on a
    layout :func:`qgz_hierarchical` takes: the one rule for the step and its intervals."""
    return config.quantize_grads is not None and config.shard != "hybrid" and bool(
        qgz_hierarchical(layout.nodes, layout.gpus_per_node))


def _groups_of(comm, groups, shard: str) -> gradsync.ShardGroups | None:
    """The groups ZeRO-3 runs in for ``shard`` ("hybrid" or "hpz"): given, else from the comm
    model's cluster (cluster.comm.hybrid_groups), else None."""
    if groups is not None:
        return groups
    from costmodel.cluster.comm import CommModel, hybrid_groups

    owner = _owner(comm)
    if not isinstance(owner, CommModel):
        return None
    intra, rails = hybrid_groups(owner)
    if shard == "hpz":
        return gradsync.ShardGroups(comm=owner.time_s, ranks=owner.ranks, secondary=intra.time_s,
                                    secondary_ranks=intra.ranks)
    return gradsync.ShardGroups(comm=intra.time_s, ranks=intra.ranks, replicas=rails.time_s,
                                replica_ranks=rails.ranks)


def iteration_breakdown(workload: Workload, gpu, comm: Callable[[str, float], float], ranks: int | None = None,
                        config: TrainingConfig | None = None, *, algorithm: str = "",
                        host: offload.HostPath | None = None, groups: tuple | None = None,
                        qgz: tuple | None = None) -> Breakdown:
    """Break one data-parallel training step down for ``ranks`` GPUs of type ``gpu``.

    ``comm(primitive, size_bytes)`` gives the seconds of one collective over the group
    (nccl-tests size convention); ``gpu`` needs ``peak_flops`` (dtype → FLOP/s),
    ``hbm_bandwidth_Bps``, ``memory_bytes`` and optionally ``default_mfu`` and ``arch``.
    A comm model that knows its group (a ``CommModel``, or its bound ``time_s``) gives the rank
    count itself; passing a different ``ranks`` is an error, so the two cannot disagree.
    ``qgz``: ZeRO++ qgZ's hierarchical groups (node's comm, one rail's comm, GPUs per node),
    given, else from a comm model's cluster of several nodes (:func:`_qgz_groups`).
    """
    if not isinstance(config, TrainingConfig):  # a dict was an AttributeError
        raise InputError("config", config, "a TrainingConfig (micro_batch, …)")
    ranks = _group_ranks(comm, ranks)
    named = _named_model(comm)
    if qgz is None:
        qgz = _qgz_groups(comm, config)
    if config.offload_optimizer:
        host = _host_of(comm, host)
    if config.shard != "full":
        groups = _groups_of(comm, groups, config.shard)
    if not callable(comm) and callable(getattr(comm, "time_s", None)):  # a CommModel itself
        comm = comm.time_s
    if not callable(comm):
        raise InputError("comm", comm, "a function comm(primitive, size_bytes) -> seconds, or a CommModel")
    from costmodel.cluster.comm import CommModel

    if not isinstance(_owner(comm), CommModel):  # a caller's own function or model (a CommModel's are dpcost's)
        comm = _checked_comm(comm)
    workload = workloads.workload_of(workload)  # a preset's name too ("gpt2" was an AttributeError)
    gpu = _gpu_of(gpu)
    if config.grad_dtype is None:
        config = replace(config, grad_dtype=default_grad_dtype(config.compute_dtype, gpu))
    _check(config, ranks)
    config = _as_python_numbers(config)
    memory.check_recompute(workload, config.recompute)
    config, setup = _resolve_sync(workload, config)
    _check_host_reduce(config)  # on one GPU too, where nothing is reduced: the pair is refused alike
    # hybrid sharding all-reduces across the replicas where there is more than one (or may be)
    replicas_reduce = groups is not None and config.shard == "hybrid" and (
        groups.replica_ranks is None or groups.replica_ranks > 1)
    gradsync.check_asynchronous(config.asynchronous, config.zero_stage)  # before the algorithm it implies
    if named is not None:  # on the stage the sync mode runs: a named algorithm must run one of its collectives
        gradsync.check_algorithm_runs(named, gradsync.step_primitives(
            config.zero_stage, config.quantize_grads is not None, replicas_reduce,
            config.topk_fraction is not None))
    # on the stage the sync mode runs (--sync fsdp is ZeRO-3 whatever --zero says)
    gradsync.check_topk(config.topk_fraction, config.zero_stage, config.sync)
    gradsync.check_quantization(config.quantize_weights, config.quantize_grads, config.zero_stage)
    gradsync.check_overlap_param_gather(config.overlap_param_gather, config.zero_stage)
    gradsync.check_sync_each_micro_batch(config.sync_each_micro_batch, config.sync, config.zero_stage,
                                         config.asynchronous)
    offload.check(config.offload_optimizer, config.zero_stage, host)
    _check_shard(config, groups)
    compute = _compute(workload, gpu, config)
    precision = memory.precision_for(config.grad_dtype)
    memory.check_grad_dtype(config.grad_dtype, gpu)
    layout = syncmodes.call_layout(setup, workload, workload.params * precision.grad_bytes)
    if config.shard == "full":
        groups = None
    slowdown = _two_level_slowdown(comm, ranks, config, precision, layout, gpu, host, groups, qgz,
                                   _overlap_slowdown(config, algorithm or str(getattr(_owner(comm), "algorithm", ""))))
    step, plan, optimizer_s, host_s, dispatch_s = _step(workload, gpu, comm, ranks, config, compute.forward_s,
                                            precision, layout, setup.wait_s, host, groups, slowdown, qgz)
    shard_ranks = ranks if groups is None else groups.ranks
    k, per_rank = config.accumulation_steps, config.micro_batch * config.accumulation_steps
    total = float(step.total_s)
    input_s = losses.input_seconds(config.losses.input_rate, per_rank)
    slow_cycle = 0.0
    share = 1.0
    if config.asynchronous and config.losses.slow_node_factor > 1.0:  # it lands fewer updates; nobody waits
        # its own cycle, as the synchronous model builds its slowest rank's step: its compute × the
        # factor, the same communication (more of it hidden behind the longer backward) and loader
        slow_cycle = float(_step(workload, gpu, comm, ranks, config, compute.forward_s, precision, layout,
                                 setup.wait_s, host, groups, slowdown, qgz,
                                 compute_factor=config.losses.slow_node_factor)[0].total_s)
        share = async_throughput_share(ranks, total, slow_cycle)
    samples_per_s = ranks * per_rank / total * share
    efficiency = float(scaling_efficiency(step, optimizer_s, input_s)) * share
    return Breakdown(
        **_echo(workload, config, ranks, algorithm, compute, layout, setup, slowdown),
        forward_s=k * compute.forward_s,
        backward_s=k * backward_seconds(compute.forward_s, config.recompute),
        compute_s=float(step.compute_s), straggler_wait_s=float(step.straggler_wait_s),
        comm_s=float(step.comm_s), hidden_comm_s=float(step.comm_s - step.exposed_comm_s),
        exposed_comm_s=float(step.exposed_comm_s), interference_s=float(step.interference_s),
        host_overhead_s=float(step.host_overhead_s), buffer_copy_s=float(step.buffer_copy_s),
        optimizer_s=optimizer_s, total_s=total,
        input_wait_s=float(step.input_wait_s), input_rate=config.losses.input_rate,
        optimizer_host_s=host_s[0], optimizer_copy_s=host_s[1], shard_ranks=shard_ranks,
        optimizer_dispatch_s=dispatch_s,
        samples_per_s=samples_per_s,
        tokens_per_s=samples_per_s * float(workloads.tokens_per_sample(workload, compute.seq_len)),
        rank_alone_samples_per_s=per_rank / float(alone_seconds(step, optimizer_s, input_s)),
        scaling_efficiency=efficiency,
        comm_share=float(step.exposed_comm_s) / total,
        sync_payload_bytes=plan.bytes_per_step(k),
        sync_s_per_sample=float(step.comm_s) / per_rank,
        staleness_updates=float(stragglers.async_staleness_updates(ranks)) if config.asynchronous else 0.0,
        slow_worker_s=slow_cycle,
        **_memory(workload, config, precision, ranks, compute.seq_len, gpu, compute.compute_dtype,
                  shard_ranks if groups is not None else None,
                  groups.secondary_ranks if groups is not None else None, named, replicas_reduce),
    )
