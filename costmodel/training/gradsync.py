"""Which collectives one training step issues, per bucket, for each synchronisation mode.

Sizes follow the nccl-tests convention: the per-rank buffer for all-reduce, the full
(gathered) buffer for all-gather and reduce-scatter. ``comm(primitive, size_bytes)`` returns
the seconds one collective takes across the data-parallel group.

| mode | overlapped with backward, per bucket | overlapped with forward | after the optimizer | when |
|---|---|---|---|---|
| DDP (ZeRO-0) | all-reduce(bucket) | – | – | last micro-batch |
| DDP + top-k  | all-gather(N · k · (value + index)) | – | – | last micro-batch |
| ZeRO-1 | reduce-scatter(bucket) | – (overlap_param_gather: the all-gather after the optimizer) | all-gather(weights) | last micro-batch |
| ZeRO-2 | reduce-scatter(bucket) | – (as ZeRO-1) | all-gather(weights) | every micro-batch |
| ZeRO-3 / FSDP | all-gather(weights) + reduce-scatter(bucket) | all-gather(weights) | – | every micro-batch |
| ZeRO-3 + ZeRO++ hpZ | all-gather(weights) in the node (secondary partition) + reduce-scatter(bucket) | all-gather(weights) | – | every micro-batch |
| ZeRO-3 hybrid (HSDP / MiCS) | in the node: all-gather(weights) + reduce-scatter(bucket); across nodes: all-reduce(bucket / G) per rail | all-gather(weights) in the node | – | every micro-batch |
| async PS | push + pull = the comm model's parameter-server "all-reduce" | – | – | last micro-batch |
| ZeRO++ qwZ / qgZ (ZeRO-3) | weights all-gathered as int8; gradients int4/int8 by all-to-all instead of reduce-scatter, plus the (de)quantisation kernels' HBM passes | as its stage | as its stage | as its stage |

ZeRO-1 keeps full gradients, so accumulation skips synchronisation on all but the last
micro-batch; ZeRO-2 reduces its sharded gradients on every micro-batch (DeepSpeed
``stage_1_and_2.py`` reduces in backward hooks when gradients are partitioned) and ZeRO-3
gathers weights and reduce-scatters on every micro-batch. ZeRO-3 moves 3 × the weight/gradient
volume against 2 × for all-reduce: 1.5 × (Rajbhandari et al. 2020, §7.2).

ZeRO-1/2's parameter all-gather after the optimizer is exposed by default (DeepSpeed stage 1/2,
PyTorch ``ZeroRedundancyOptimizer``).  With ``overlap_param_gather`` (Megatron-LM's distributed
optimizer, ``--overlap-param-gather``: the gather of each bucket is issued before the next
step's forward needs its layers) it runs beside the first micro-batch's forward, bucket by
bucket, and only what outlasts that forward is exposed — the forward-phase overlap ZeRO-3's
gathers already get (``overlap.exposed_comm_s`` over the forward, as in ``iteration._step``).

Top-k sparsification (Lin et al. 2018, Deep Gradient Compression; Shi et al. 2019) sends a
fraction ``k`` of each bucket's gradients with their int32 indices; sparse vectors from
different ranks do not add elementwise, so they are exchanged with an all-gather.
"""

from __future__ import annotations

from collections.abc import Callable

from costmodel.training.memory import Precision
from costmodel.training.overlap import BucketLayout, total_comm_s
from dpbase import elementwise as ew
from dpbase.errors import InputError, is_whole
from dpbase.lazynp import SCALAR_TYPES, is_array, np
from dpbase.values import frozen

CommFn = Callable[[str, float], float]
# Deep Gradient Compression (Lin et al. 2018) sends each kept value with its int32 index.
TOPK_INDEX_BYTES = 4
# The collectives one bucket runs at each ZeRO stage (the table above), in issue order.
ZERO_PRIMITIVES: dict[int, tuple[str, ...]] = {0: ("all-reduce",), 1: ("reduce-scatter", "all-gather"),
                                               2: ("reduce-scatter", "all-gather"),
                                               3: ("all-gather", "reduce-scatter")}


# ZeRO++ quantises ZeRO-3's collectives: DeepSpeed reads zero_quantized_weights/gradients in its
# stage-3 code alone ("ZeRO++ extends ZeRO stage 3", deepspeed.ai/tutorials/zeropp). Until
# 2026-11-30 ZeRO-1/2 plans were timed quantised too, a run no framework makes (an audit of the
# emitted DeepSpeed JSON: its ZeRO-1/2 plans ran unquantised).
QUANTIZED_STAGE = 3


def quantized_bits(quantize: tuple, zero_stage: int) -> tuple:
    """(weight bits, gradient bits) of ZeRO++ that a ``zero_stage`` row runs: the ones asked for at
    :data:`QUANTIZED_STAGE`, none at any other stage. The one rule the planner's sweep, its rows,
    its explanation and :func:`sync_plan` read."""
    return tuple(quantize) if zero_stage == QUANTIZED_STAGE else (None, None)


def step_primitives(zero: int = 0, quantized_grads: bool = False, replicas_reduce: bool = False,
                    topk: bool = False) -> tuple[str, ...]:
    """The collectives a synchronisation runs, as :func:`sync_plan` builds them (a test runs
    both over every setting): top-k's all-gather of values and indices (ZeRO-0), else
    :data:`ZERO_PRIMITIVES` with qgZ's all-to-all in place of the reduce-scatter (ZeRO-3),
    and, where ``replicas_reduce``, hybrid ZeRO-3's all-reduce of the replicas (more than one
    node of them, or a count not known)."""
    if topk:
        return ("all-gather",)
    qgz = quantized_grads and zero == QUANTIZED_STAGE
    found = [p for p in ZERO_PRIMITIVES.get(zero, ZERO_PRIMITIVES[0]) if not (qgz and p == "reduce-scatter")]
    found += ["all-to-all"] if qgz else []
    found += ["all-reduce"] if zero == 3 and replicas_reduce else []
    return tuple(dict.fromkeys(found))


def check_asynchronous(asynchronous: bool, zero_stage: int) -> None:
    """Asynchronous parameter-server updates run ZeRO-0 only (the servers hold the one copy)."""
    if asynchronous and zero_stage != 0:
        raise InputError("zero_stage", zero_stage, "0 with asynchronous (parameter-server) updates")


def runs_any(comm, primitives: tuple[str, ...]) -> bool:
    """Whether ``comm``'s algorithm (auto: always) runs one of ``primitives`` (its
    :meth:`~costmodel.cluster.comm.CommModel.runs_named`): the one rule of what a named algorithm
    may time, asked by :func:`check_algorithm_runs` and by the memory advice of each ZeRO stage."""
    return comm.algorithm == "auto" or any(comm.runs_named(p) for p in primitives)


def check_algorithm_runs(comm, primitives: tuple[str, ...]) -> None:
    """``comm``'s algorithm (auto always runs) must run one of the step's ``primitives`` (its
    :meth:`~costmodel.cluster.comm.CommModel.runs_named`: under NCCL's model ring, tree and
    in-network are forced on the all-reduce alone); one that runs none of them would be timed as
    auto under its name (``bruck`` at ZeRO-0, ``ring`` at ZeRO-1 under NCCL), so it is refused,
    naming it as the user typed it (``comm.named_as``) and those that would run."""
    if runs_any(comm, primitives):
        return
    algorithm = comm.named_as or comm.algorithm
    from costmodel.collectives.registry import algorithms_for
    from dpbase.values import replace

    names = dict.fromkeys(a.value for p in primitives for a in algorithms_for(p))
    offered = [name for name in names if any(replace(comm, algorithm=name).runs_named(p) for p in primitives)]
    # under NCCL's model its own names force the all-reduce alone; the others are textbook algorithms on
    # the α-β model ("ring" at ZeRO-1 was refused beside a list of those alone; planner audit, 2026-11-30)
    from costmodel.cluster.comm import NCCL_FORCEABLE

    calls = ", ".join(primitives)
    if comm.backend == "nccl":  # NCCL's model runs its own choice for them; a textbook name runs on the α-β model
        why = (f"{algorithm} forces NCCL's all-reduce, which this step does not issue; " if comm.algorithm in NCCL_FORCEABLE
               else f"one this step's {calls} runs: ")
        own = [name for name in offered if name in NCCL_FORCEABLE]
        textbook = [name for name in offered if name not in NCCL_FORCEABLE]
        forced = f", NCCL's own {', '.join(own)}" if own else ""
        raise InputError("algorithm", algorithm, f"{why}auto (NCCL's own choice for its {calls}){forced}, or one timed "
                                                 f"on the textbook α-β model: {', '.join(textbook) or 'none'}")
    if comm.backend == "rccl":  # RCCL's own (its ring and tree) and the textbook's, said apart, as under NCCL
        from costmodel.cluster.rccl_choice import runs_as_named

        own = [name for name in offered if all(runs_as_named(p, name, comm.layout) for p in primitives)]
        textbook = [name for name in offered if name not in own]
        forced = f", RCCL's own {', '.join(own)}" if own else ""
        raise InputError("algorithm", algorithm, f"one this step's {calls} runs: auto (RCCL's own choice for its "
                                                 f"{calls}){forced}, or one timed on the textbook α-β model: "
                                                 f"{', '.join(textbook) or 'none'}")
    raise InputError("algorithm", algorithm, f"one this step's {calls} runs on the {comm.backend} backend here: "
                                             f"{', '.join(offered) or 'none'}, or auto")



def unquantised_primitives(zero_stage: int, weight_bits: int | None = None,
                           grad_bits: int | None = None) -> tuple[str, ...]:
    """The collectives of :data:`ZERO_PRIMITIVES` whose message is the bucket's own bytes at a
    stage: ZeRO++ (ZeRO-3) shrinks the all-gather's (qwZ) and replaces the reduce-scatter by
    an all-to-all (qgZ), as :func:`sync_plan` builds them."""
    quantised = set()
    if zero_stage == QUANTIZED_STAGE:
        quantised |= {"all-gather"} if weight_bits is not None else set()
        quantised |= {"reduce-scatter"} if grad_bits is not None else set()
    return tuple(p for p in ZERO_PRIMITIVES[zero_stage] if p not in quantised)


@frozen(kw_only=True)
class ShardGroups:
    """Where ZeRO-3's collectives run: ``comm`` over ``ranks`` (the ranks the states are sharded
    over); hybrid sharding adds ``replicas`` (each shard all-reduced across nodes); ZeRO++ hpZ
    adds ``secondary`` (backward weight all-gathers inside the node, over ``secondary_ranks``).
    ``replica_ranks``: how many replicas each shard has (the nodes; None: unknown)."""

    comm: CommFn
    ranks: object
    replicas: CommFn | None = None
    replica_ranks: object = None
    secondary: CommFn | None = None
    secondary_ranks: object = None


@frozen(kw_only=True)
class PhaseTimes:
    """Seconds of the collective(s) for the first, each full and the last partial bucket."""

    first_s: float = 0.0
    full_s: float = 0.0
    last_s: float = 0.0


NO_COLLECTIVES = PhaseTimes()  # a phase without collectives (one value, shared: values are frozen)


@frozen(kw_only=True)
class SyncPlan:
    """Collective times of one synchronisation and how often it happens."""

    backward: PhaseTimes
    forward: PhaseTimes
    post_step_s: float
    every_micro_batch: bool
    # ZeRO-1/2's parameter all-gather after the optimizer, per bucket kind (post_step_s is its
    # total): what an overlapped gather (Megatron --overlap-param-gather) hides behind forward
    after: PhaseTimes = NO_COLLECTIVES
    payload_bytes: float  # sizes handed to collectives per synchronisation (nccl-tests sizes)
    step_bytes: float = 0.0  # and once per optimizer step (ZeRO-1/2's parameter gather after the optimizer)

    def bytes_per_step(self, accumulation_steps: int) -> float:
        """Bytes handed to collectives in one optimizer step of ``accumulation_steps`` micro-batches."""
        return (accumulation_steps if self.every_micro_batch else 1) * self.payload_bytes + self.step_bytes


def no_time(_primitive: str, size):
    """A comm function whose collectives take no time (the shape of ``size`` kept): a group of a
    plan left out of its seconds (what crosses the network, without the node's collectives)."""
    return 0.0 * size


def plan_seconds(plan: SyncPlan, layout: BucketLayout):
    """Every collective of one synchronisation and of the step's end, in seconds; elementwise."""
    return (total_comm_s(layout, plan.backward.first_s, plan.backward.full_s, plan.backward.last_s)
            + total_comm_s(layout, plan.forward.first_s, plan.forward.full_s, plan.forward.last_s)
            + plan.post_step_s)


def _bucket_seconds(parts: list[tuple], size):
    """One bucket's collectives; 0 for an empty bucket (elementwise on arrays). ``parts`` as
    :func:`sync_plan` builds them: (primitive, bytes per gradient byte, extra seconds per
    gradient byte or None, comm function)."""
    total = 0.0
    for primitive, ratio, extra_s, comm in parts:
        seconds = comm(primitive, size * ratio)
        total = total + (seconds if extra_s is None else seconds + size * extra_s)
    if is_array(size) and size.ndim:
        return np.where(size > 0, total, 0.0)
    return total if size > 0 else 0.0


def _bucket_kinds(parts: list[tuple], sizes: tuple) -> list:
    """:func:`_bucket_seconds` of each bucket kind's ``sizes``. Arrays of one shape whose parts
    hold nothing along their last axis (the planner's, over dtype × bucket size) go side by side
    along that axis in one call, so each collective is looked up once, not once per kind."""
    shape = getattr(sizes[0], "shape", ())
    if shape and all(getattr(s, "shape", None) == shape for s in sizes[1:]) and all(
            getattr(value, "shape", ())[-1:] in ((), (1,)) for part in parts for value in part[1:3]):
        width = shape[-1]
        joined = _bucket_seconds(parts, np.concatenate(sizes, axis=-1))
        return [joined[..., k * width:(k + 1) * width] for k in range(len(sizes))]
    return [_bucket_seconds(parts, s) for s in sizes]


def _phase(fields: tuple, parts: list[tuple], mix: tuple = ()) -> tuple[PhaseTimes, float]:
    """Times for each bucket kind of a layout's :func:`_fields`; ``parts`` = (primitive, bytes per
    gradient byte, extra seconds per gradient byte or None (the (de)quantisation kernels of
    quantised communication), the comm function of the group that runs it). ``mix``
    (:attr:`BucketLayout.mix`): the first and full calls are tensors of these sizes, each kind
    timed as the mean of their times."""
    first, bucket, last, count = fields
    sizes = (first, bucket, last)
    times = _bucket_kinds(parts, sizes)
    if mix:
        mean = sum(share * _bucket_seconds(parts, bucket * scale) for scale, share in mix)
        times = [mean, mean, times[2]]
    bucket_counts = (1.0, count, (last > 0) * 1.0)
    payload = sum([count * size * part[1] for count, size in zip(bucket_counts, sizes)
                   for part in parts])
    return PhaseTimes(first_s=times[0], full_s=times[1], last_s=times[2]), payload


# ZeRO++ (Wang et al. 2023, "ZeRO++: Extremely Efficient Collective Communication for Giant Model
# Training"): qwZ all-gathers weights block-quantised to INT8 (§3.1); qgZ replaces the gradients'
# reduce-scatter by an all-to-all of INT4 (or INT8) blocks, dequantised and reduced at the
# receiver (§3.3). The block scales add 1 fp32 per 256 (weights) / 512 (gradients) elements
# (ZeRO++'s default block sizes), negligible here. Each (de)quantisation reads and writes the
# full-precision tensor once: QUANT_HBM_PASSES bytes of HBM traffic per full-precision byte.
WEIGHT_BITS = (8,)
GRAD_BITS = (4, 8)
QUANT_HBM_PASSES = 2.0


def check_quantization(weight_bits: int | None, grad_bits: int | None, zero_stage: int) -> None:
    """qwZ and qgZ quantise ZeRO-3's weight all-gathers and gradient reduction
    (:data:`QUANTIZED_STAGE`). The fields are bit counts (8; the CLI reads ``int8``): ``"int8"`` given to the API was
    shown as ``'intint8'``."""
    for field, bits, allowed, what in (("quantize_weights", weight_bits, WEIGHT_BITS, "ZeRO++ qwZ"),
                                       ("quantize_grads", grad_bits, GRAD_BITS, "ZeRO++ qgZ")):
        if bits is not None and not is_whole(bits):
            raise InputError(field, bits, f"a bit count: {' or '.join(map(str, allowed))} ({what})")
    if weight_bits is not None and weight_bits not in WEIGHT_BITS:
        raise InputError("quantize_weights", f"int{weight_bits}", "int8 (ZeRO++ qwZ)")
    if grad_bits is not None and grad_bits not in GRAD_BITS:
        raise InputError("quantize_grads", f"int{grad_bits}", "int4 or int8 (ZeRO++ qgZ)")
    if (weight_bits or grad_bits) and zero_stage != QUANTIZED_STAGE:
        field = "quantize_weights" if weight_bits else "quantize_grads"
        raise InputError(field, f"int{weight_bits or grad_bits}",
                         "ZeRO-3 (ZeRO++ quantises ZeRO-3's collectives; DeepSpeed reads it at stage 3 alone)")


def _fields(layout: BucketLayout) -> tuple:
    """(first, bucket, last, full count): Python floats for one layout (fast), else arrays."""
    first, bucket, last, count = layout.first_bytes, layout.bucket_bytes, layout.last_bytes, layout.full_count
    if type(first) in SCALAR_TYPES and type(bucket) in SCALAR_TYPES and type(last) in SCALAR_TYPES \
            and type(count) in SCALAR_TYPES:  # one configuration: Python numbers, decided inline
        return float(first), float(bucket), float(last), float(count)
    fields = (first, bucket, last, count)
    if any(is_array(f) and f.ndim for f in fields):
        return fields
    return tuple(float(f) for f in fields)


def check_overlap_param_gather(overlap_param_gather: bool, zero_stage) -> None:
    """Overlapping the parameter all-gather needs a ZeRO-1/2 gather after the optimizer."""
    stage = ew.operand(zero_stage)
    if overlap_param_gather and ew.any_true((stage < 1) | (stage > 2)):
        raise InputError("overlap_param_gather", True,
                         "only with --zero 1 or 2 (ZeRO-3 gathers in forward already; ZeRO-0 gathers nothing)")


def check_topk(topk_fraction: float | None, zero_stage: int, sync: str = "ddp") -> float | None:
    """The top-k fraction, validated (DDP comm hooks only: ZeRO stage 0 under ``--sync ddp``;
    Horovod's compressors cast, they do not sparsify, and a flat or per-tensor all-reduce has no
    hook to run one)."""
    if topk_fraction is None:
        return None
    if not 0.0 < topk_fraction <= 1.0:
        raise InputError("topk", topk_fraction, "a fraction in (0, 1]")
    if zero_stage != 0:
        raise InputError("topk", topk_fraction, "no value with ZeRO (--zero 1/2/3, --sync fsdp): DDP comm hooks only")
    if sync != "ddp":
        raise InputError("topk", topk_fraction, f"no value with --sync {sync}: top-k runs as a DDP comm hook "
                         "(--sync ddp) only")
    return float(topk_fraction)


def syncs_every_micro_batch(zero_stage: int, sync_each_micro_batch: bool) -> bool:
    """Whether a step's gradients are reduced after every micro-batch of its accumulation (ZeRO-2/3
    always, by design; ZeRO-0/1 where the loop skips DDP's ``no_sync``), not once a step."""
    return zero_stage >= 2 or sync_each_micro_batch


def sync_each_is_a_choice(sync: str, zero_stage: int, asynchronous: bool = False) -> bool:
    """Whether synchronising every micro-batch (accumulation without DDP's ``no_sync``) is a choice:
    where the gradients are otherwise reduced once a step (not ``flat``, which reduces the
    accumulated gradients once by definition; not asynchronous updates, pushed once a step; not
    ZeRO-2/3, which reduce every micro-batch already)."""
    return sync != "flat" and not asynchronous and zero_stage < 2


def check_sync_each_micro_batch(each: bool, sync: str, zero_stage: int, asynchronous: bool) -> None:
    """Synchronising every micro-batch (accumulation without DDP's ``no_sync``) is a choice only
    where the gradients are otherwise reduced once a step: refused where it cannot be (``flat``
    all-reduces once after the accumulated backward by definition; asynchronous workers push every
    step) and where it already is (ZeRO-2/3 reduce-scatter every micro-batch)."""
    if not each or sync_each_is_a_choice(sync, zero_stage, asynchronous):
        return
    if sync == "flat":
        raise InputError("sync_each_micro_batch", True, "off with --sync flat (one all-reduce of the accumulated "
                         "gradients per step is what flat means)")
    if asynchronous:
        raise InputError("sync_each_micro_batch", True, "off with asynchronous updates (workers push once a step)")
    if zero_stage >= 2:
        raise InputError("sync_each_micro_batch", True, f"ZeRO-0 or 1 (ZeRO-{zero_stage} reduces every "
                         "micro-batch's gradients already)")


def sync_plan(comm: CommFn, ranks: int, layout: BucketLayout, precision: Precision, *,
              zero_stage: int = 0, topk_fraction: float | None = None,
              asynchronous: bool = False, weight_bits: int | None = None, grad_bits: int | None = None,
              quant_s_per_byte: float = 0.0, offload_s_per_byte=0.0, replicas: CommFn | None = None,
              replica_share=1.0, replica_ranks=None, secondary: CommFn | None = None,
              qgz_node: CommFn | None = None, qgz_rails: CommFn | None = None, qgz_node_ranks=None,
              sync_each_micro_batch: bool = False) -> SyncPlan:
    """The collectives of one step for a ZeRO stage / compression / async configuration.

    ``sync_each_micro_batch``: accumulation without DDP's ``no_sync`` (every micro-batch's backward
    reduces, as ZeRO-2/3 always do; :func:`check_sync_each_micro_batch` says where it may be set).

    Scalar, or elementwise on arrays: the planner passes a bucket layout and precision whose
    fields are arrays (over gradient dtype × bucket size), ``ranks`` as an array over GPU
    layouts and a ``comm`` that returns one row per layout; every time then comes back as an
    array. Layouts with one rank need ``comm`` to return 0 for them. ``offload_s_per_byte``:
    seconds per gradient byte of a bucket to copy this rank's reduced shard to the host
    (optimizer offload, :mod:`costmodel.training.offload`), charged with the bucket's reduction.

    Hybrid sharding (ZeRO-3 only): ``comm`` and ``ranks`` are the shard group (one node's GPUs)
    and ``replicas`` the cross-node group of each shard; after its reduce-scatter each bucket's
    ``replica_share`` (1/G) is all-reduced across the replicas. ``replica_ranks`` (how many
    replicas; None: more than one) drops that all-reduce where there is one replica (one node).

    ZeRO++ hpZ (ZeRO-3 only): ``secondary`` is the node's group; backward all-gathers the
    weights from the secondary partition kept in each node after forward, inside the node.

    ZeRO++ qgZ across nodes (``qgz_node``, ``qgz_rails``: the node's group of ``qgz_node_ranks``
    GPUs and one rail across the nodes): its all-to-all is hierarchical (Wang et al. 2023, §3.3),
    every quantised gradient exchanged inside the node, dequantised, reduced and quantised again,
    then each GPU's 1/G of it exchanged across the nodes, so the network carries 1/G of what one
    flat all-to-all over every rank sends. Without the groups (one node, or a comm function with
    no cluster behind it) the all-to-all runs over ``comm``.
    """
    weight_bits, grad_bits = quantized_bits((weight_bits, grad_bits), zero_stage)  # the planner passes every stage
    if (replicas is not None or secondary is not None) and zero_stage != 3:
        raise InputError("shard", "hybrid" if replicas is not None else "hpz",
                         "only with --zero 3 (FSDP HYBRID_SHARD, DeepSpeed MiCS / ZeRO++ hpZ)")
    if replicas is not None and replica_ranks is not None:  # one replica (one node): no all-reduce across
        replica_share = ew.where(ew.greater(replica_ranks, 1), replica_share, 0.0)
    alone = replicas is None or (replica_ranks is not None and ew.all_true(replica_ranks <= 1))
    if ew.all_true(ranks <= 1) and alone and not ew.any_true(offload_s_per_byte):  # offloading still copies
        return SyncPlan(backward=NO_COLLECTIVES, forward=NO_COLLECTIVES, post_step_s=0.0,
                        every_micro_batch=False, payload_bytes=0.0)
    # each collective: (primitive, bytes per gradient byte, extra seconds per gradient byte or
    # None, the group's comm function), as _phase takes them
    weights_per_grad = precision.weight_bytes / precision.grad_bytes
    gather: tuple = ("all-gather", weights_per_grad, None, comm)
    if weight_bits is not None:  # qwZ: INT8 weights on the wire, (de)quantised on both sides
        gather = ("all-gather", weight_bits / 8 / precision.grad_bytes, quant_s_per_byte * weights_per_grad, comm)
    check_asynchronous(asynchronous, zero_stage)
    if topk_fraction is not None:
        sent = ranks * topk_fraction * (precision.grad_bytes + TOPK_INDEX_BYTES) / precision.grad_bytes
        backward_parts = [("all-gather", sent, None, comm)]
    elif zero_stage == 0:
        backward_parts = [("all-reduce", 1.0, None, comm)]
    else:
        reduce: tuple = ("reduce-scatter", 1.0, offload_s_per_byte, comm)
        reductions = [reduce]
        if grad_bits is not None:  # qgZ: quantised gradient blocks exchanged all-to-all
            wire = grad_bits / 8 / precision.grad_bytes
            if qgz_node is not None and qgz_rails is not None:  # in the node, then 1/G across the nodes
                reductions = [("all-to-all", wire, quant_s_per_byte + offload_s_per_byte, qgz_node),
                              ("all-to-all", wire / qgz_node_ranks, quant_s_per_byte / qgz_node_ranks, qgz_rails)]
            else:  # a group of one exchanges nothing: no (de)quantisation (hybrid on one-GPU nodes)
                quant = ew.where(ew.greater(ranks, 1), quant_s_per_byte, 0.0)
                reductions = [("all-to-all", wire, quant + offload_s_per_byte, comm)]
        backward_gather = gather  # hpZ: from the node's secondary partition, in the node
        if secondary is not None:
            backward_gather = (gather[0], gather[1], 0.0 if gather[2] is None else gather[2], secondary)
        backward_parts = reductions if zero_stage in (1, 2) else [backward_gather, *reductions]
        if replicas is not None:  # hybrid: the reduced shard of every node, across the nodes
            backward_parts.append(("all-reduce", replica_share, 0.0, replicas))
    fields = _fields(layout)
    backward, payload = _phase(fields, backward_parts, layout.mix)
    forward, after, post_step, extra, once = NO_COLLECTIVES, NO_COLLECTIVES, 0.0, 0.0, 0.0
    if zero_stage == 3:  # the forward's gather, every micro-batch
        forward, extra = _phase(fields, [gather])
    elif zero_stage in (1, 2):  # the gather after the optimizer, once a step
        after, once = _phase(fields, [gather])
        post_step = after.first_s + fields[3] * after.full_s + after.last_s
    return SyncPlan(backward=backward, forward=forward, post_step_s=post_step,
                    every_micro_batch=syncs_every_micro_batch(zero_stage, sync_each_micro_batch), payload_bytes=payload + extra,
                    step_bytes=once, after=after)
