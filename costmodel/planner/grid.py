"""The planner's sweep: every configuration at once, as numpy arrays.

Axes, in this order (the arrays of :class:`Sweep` have this shape):

    algorithm (A) × ZeRO stage (Z) × gradient dtype (D) × bucket size (U) × cell (C)

A *cell* is one (GPU count, micro-batch, accumulation steps) triple with
``micro_batch × accumulation × gpus == global batch`` exactly (every divisor pair).

Collective times depend only on (algorithm, ZeRO stage, dtype, bucket, GPU layout): they are
precomputed by :func:`comm_tables` with one :func:`gradsync.sync_plan` call per (algorithm,
ZeRO stage) on arrays over dtype × bucket × GPU layout — the same function
:func:`iteration.iteration_breakdown` calls with scalars — whose collectives come from
:meth:`planner_comm.CommCache.batch` (one numpy evaluation of the registry formulas per
algorithm and primitive under the ideal backend). The overlap's candidate lines are formed
per GPU layout too and gathered onto the cells. Everything else — compute, overlap,
stragglers, optimizer, memory — is the iteration model's own array-capable functions applied
to whole arrays, so a sweep equals a brute-force loop over
:func:`iteration.iteration_breakdown` (tested, as is every vector path against its scalar one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from costmodel.cluster.mapping import layout_of, rail_system
from costmodel.planner.comm import CommCache, zero_algorithm_ok
from costmodel.training import (
    gradsync,
    losses,
    memory,
    offload,
    overlap,
    stragglers,
    syncmodes,
    transport,
    workloads,
)
from costmodel.training.iteration import (
    backward_seconds,
    micro_batch_forward,
    optimizer_dispatch_seconds,
    qgz_hierarchical,
    scaling_efficiency,
    step_seconds,
)
from dpbase.values import fields, frozen

AXES = ("algorithm", "zero_stage", "grad_dtype", "bucket_bytes", "cell")
ZERO_STAGES = memory.ZERO_STAGES


@frozen(kw_only=True)
class Space:
    """The swept values. ``layouts`` are (nodes, gpus per node); cells index into them."""

    algorithms: tuple[str, ...]
    zero_stages: tuple[int, ...]
    grad_dtypes: tuple[str, ...]
    bucket_bytes: tuple[float, ...]
    layouts: tuple[tuple[int, int], ...]
    cell_layout: np.ndarray
    micro_batch: np.ndarray
    accumulation: np.ndarray

    @property
    def shape(self) -> tuple[int, ...]:
        return (len(self.algorithms), len(self.zero_stages), len(self.grad_dtypes),
                len(self.bucket_bytes), len(self.micro_batch))

    @property
    def gpus(self) -> np.ndarray:
        """GPUs of every cell."""
        per_layout = np.array([n * g for n, g in self.layouts], dtype=float)
        return per_layout[self.cell_layout]


def divisors(n: int) -> list[int]:
    """The divisors of ``n`` in increasing order, found in O(√n) steps."""
    small, large = [], []
    d = 1
    while d * d <= n:
        if n % d == 0:
            small.append(d)
            if d * d != n:
                large.append(n // d)
        d += 1
    return small + large[::-1]


def batch_layouts(gpus_per_node: int, max_nodes: int, min_gpus: int, max_gpus: int, global_batch: int,
            partial: bool) -> tuple[tuple[int, int], ...]:
    """The layouts (:func:`layout_of`) of every GPU count from ``min_gpus`` to ``max_gpus`` that
    divides the global batch, in increasing count."""
    found = (layout_of(total, gpus_per_node, max_nodes, partial) for total in divisors(global_batch)
             if min_gpus <= total <= max_gpus)
    return tuple(layout for layout in found if layout)


def runnable_counts(gpus_per_node: int, nodes: int, partial: bool, low: int, high: int) -> list[int]:
    """The GPU counts from ``low`` to ``high`` some global batch runs on (:func:`layout_of`); the
    batch decides only which of them divide it."""
    high = min(high, nodes * gpus_per_node)
    return [c for c in range(max(low, 1), high + 1) if layout_of(c, gpus_per_node, nodes, partial)]


def dividing_counts(gpus_per_node: int, nodes: int, partial: bool, low: int, high: int,
                    global_batch: int) -> list[int]:
    """The GPU counts from ``low`` to ``high`` that run on the nodes (:func:`layout_of`) and split
    ``global_batch`` evenly (each GPU takes a whole number of samples, one at least), ascending.
    Whichever is shorter is walked: the counts themselves, or the batch's divisors (O(√batch))."""
    span = range(max(low, 1), min(high, global_batch) + 1)
    counts = span if len(span) ** 2 <= global_batch else divisors(global_batch)
    return [c for c in counts if low <= c <= high and global_batch % c == 0
            and layout_of(c, gpus_per_node, nodes, partial)]


def near_batches(global_batch: int, counts) -> str:
    """The nearest global batches below and above ``global_batch`` that one of ``counts`` (GPU
    counts) divides, as text ("240 or 264"): what an error suggests instead of a batch none divides."""
    lower = max((global_batch // c * c for c in counts if c <= global_batch), default=None)
    upper = min(-(-global_batch // c) * c for c in counts)
    return " or ".join(f"{b:,}" for b in sorted({b for b in (lower, upper) if b}))


def batch_cells(layouts, global_batch: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(layout index, micro-batch, accumulation) for every exact split of the global batch."""
    index, micro, accum = [], [], []
    for i, (nodes, per_node) in enumerate(layouts):
        per_gpu = global_batch // (nodes * per_node)
        found = divisors(per_gpu)
        index += [i] * len(found)
        micro += found
        accum += [per_gpu // d for d in found]
    return np.array(index, dtype=int), np.array(micro, dtype=float), np.array(accum, dtype=float)


def cell_count(layouts, global_batch: int) -> int:
    """How many cells :func:`batch_cells` would make (to refuse huge sweeps before building)."""
    return sum(len(divisors(global_batch // (n * g))) for n, g in layouts)


@frozen
class CommTables:
    """Per (A, Z, D, U, layout): one synchronisation's bucket times; ``valid`` marks runnable."""

    backward: tuple[np.ndarray, np.ndarray, np.ndarray]
    forward: tuple[np.ndarray, np.ndarray, np.ndarray]
    post_step_s: np.ndarray
    valid: np.ndarray
    after: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # ZeRO-1/2 gather per bucket kind
    # every time came from NCCL's model, which does not read the links' latency (so scaling the
    # latency changes none): see CommCache.link_latency_used
    link_latency_free: bool = False
    # rows whose collectives run at two levels (hybrid sharding, hpZ, qgZ): the share of their
    # seconds that crosses the network, which sets their overlap slowdown (iteration's
    # _two_level_slowdown); None: every row's collectives cross it (share 1)
    across_share: np.ndarray | None = None


TABLE_ARRAYS = tuple(f.name for f in fields(CommTables) if f.name != "link_latency_free")  # its arrays


@frozen
class _ArrayPrecision:
    """Duck-typed :class:`memory.Precision` whose fields are arrays over the dtype axis."""

    weight_bytes: np.ndarray
    grad_bytes: np.ndarray


def _dtype_precision(space: Space) -> _ArrayPrecision:
    """Weight and gradient bytes per parameter, shaped (D, 1)."""
    precisions = [memory.precision_for(d) for d in space.grad_dtypes]
    return _ArrayPrecision(np.array([[p.weight_bytes] for p in precisions], dtype=float),
                           np.array([[p.grad_bytes] for p in precisions], dtype=float))


def bucket_layouts(space: Space, workload: Any, first_bucket_bytes: float) -> overlap.BucketLayout:
    """DDP bucket layout of every (dtype, bucket size): arrays shaped (D, U), each DDP's cut of the
    workload's whole tensors (:func:`syncmodes.call_layout`)."""
    grads = [workload.params * memory.precision_for(d).grad_bytes for d in space.grad_dtypes]
    return _layouts([[syncmodes.call_layout(syncmodes.sync_setup("ddp", workload, g, bucket_bytes=b,
                                                                 first_bucket_bytes=first_bucket_bytes), workload, g)
                      for b in space.bucket_bytes] for g in grads])


def _layouts(grid_of: list[list[overlap.BucketLayout]]) -> overlap.BucketLayout:
    """Scalar layouts, one per (dtype, bucket size), as one layout of (D, U) arrays. Their call
    mix (per-tensor calls: the model's tensors over their mean) is the same in every cell."""
    mixes = {b.mix for row in grid_of for b in row}
    if len(mixes) != 1:
        raise ValueError(f"layouts of one plan with different call mixes: {sorted(mixes)[:2]}")
    return overlap.BucketLayout(*(np.array([[float(getattr(b, f)) for b in row] for row in grid_of], dtype=float)
                                  for f in ("first_bytes", "full_count", "bucket_bytes", "last_bytes")),
                                mix=mixes.pop())


def stages_allowed(setting: Setting, space: Space) -> np.ndarray:
    """Per ZeRO stage of ``space`` (shaped (1, Z, 1, 1, 1)): whether ``setting`` runs it, by its
    sync mode (:func:`syncmodes.stage_runs`) and, for asynchronous parameter servers (which hold the
    optimizer), ZeRO-0 only."""
    return np.array([syncmodes.stage_runs(setting.sync, z, asynchronous=setting.asynchronous)
                     for z in space.zero_stages]).reshape(1, -1, 1, 1, 1)


@frozen(kw_only=True)
class StageSync:
    """What one ZeRO stage's rows run under a plan's sync mode: :func:`syncmodes.sync_setup`'s
    answer for every (gradient dtype, swept bucket size), as arrays shaped (D, U)."""

    mode: str
    layout: overlap.BucketLayout | None  # None where the mode does not run the stage
    overlap: bool  # overlapped with backward (flat: after it)
    wait_s: float  # a fusion cycle's wait before the last collective (Horovod)
    gather_beside: bool  # weights gathered in the forward (FSDP SHARD_GRAD_OP)

    @property
    def runs(self) -> bool:
        """The mode allows the stage (horovod, flat, per-tensor: ZeRO-0 only; :func:`syncmodes.stage_runs`)."""
        return self.layout is not None

    @property
    def one_size(self) -> bool:
        """The mode sets its own call size (flat, per-tensor, FSDP): only u = 0 is a row."""
        return self.mode not in syncmodes.SIZED_MODES


def _setup(mode: str, setting: Setting, grad_bytes: int, bucket_bytes: float, stage: int) -> syncmodes.SyncSetup:
    """:func:`syncmodes.sync_setup` as ``iteration`` calls it for a row: the swept size is the
    bucket of the modes that take one (DDP's first bucket the setting's)."""
    sized = mode in syncmodes.SIZED_MODES
    return syncmodes.sync_setup(mode, setting.workload, grad_bytes, bucket_bytes=bucket_bytes if sized else None,
                                first_bucket_bytes=setting.first_bucket_bytes if mode == "ddp" else None,
                                zero_stage=stage)


def stage_syncs(setting: Setting, space: Space) -> tuple[StageSync, ...]:
    """Per ZeRO stage of ``space``: how its rows synchronise (:class:`StageSync`)."""
    grads = [setting.workload.params * memory.precision_for(d).grad_bytes for d in space.grad_dtypes]
    out = []
    for stage in space.zero_stages:
        mode = syncmodes.stage_mode(setting.sync, stage)
        if not syncmodes.stage_runs(setting.sync, stage):  # ZeRO with horovod, flat or per-tensor
            out.append(StageSync(mode=mode, layout=None, overlap=True, wait_s=0.0, gather_beside=False))
            continue
        setups = [[_setup(mode, setting, g, b, stage) for b in space.bucket_bytes] for g in grads]
        first = setups[0][0]
        layout = _layouts([[syncmodes.call_layout(x, setting.workload, g) for x in row]
                           for row, g in zip(setups, grads)])
        out.append(StageSync(mode=mode, layout=layout, overlap=first.overlap, wait_s=first.wait_s,
                             gather_beside=first.overlap_param_gather))
    return tuple(out)


def whole_tensor_calls(setting: Setting, row: Any) -> float | None:
    """The mean bytes of a plan row's calls as its step was timed where they hold whole tensors
    (:func:`syncmodes.call_layout`: DDP's and Horovod's buckets and per-tensor calls where the
    model's tensors are listed, a transformer's or a CNN preset's), else None (its calls are its
    bucket's size)."""
    grad = setting.workload.params * memory.precision_for(row.grad_dtype).grad_bytes
    setup = _setup(syncmodes.stage_mode(setting.sync, row.zero_stage), setting, grad, row.bucket_bytes,
                   row.zero_stage)
    if not syncmodes.whole_tensors(setup, setting.workload):
        return None
    return float(grad) / float(syncmodes.call_layout(setup, setting.workload, grad).count)


def row_bucket_bytes(setting: Setting, space: Space, z: int, d: int, u: int) -> float:
    """The bytes each collective of row (z, d, u) carries: the swept bucket, Horovod's fusion
    buffer, or the mode's own size (the whole gradient, one tensor, one FSDP unit)."""
    stage = space.zero_stages[z]
    mode = syncmodes.stage_mode(setting.sync, stage)
    if mode == "ddp":
        return space.bucket_bytes[u]
    grad = setting.workload.params * memory.precision_for(space.grad_dtypes[d]).grad_bytes
    return float(_setup(mode, setting, grad, space.bucket_bytes[u], stage).bucket_bytes)


def _call_sizes(buckets: overlap.BucketLayout, precision: _ArrayPrecision) -> np.ndarray:
    """Every size a synchronisation hands to a collective (bucket sizes × weight/grad ratios)."""
    ratio = precision.weight_bytes / precision.grad_bytes
    mixed = tuple(buckets.bucket_bytes * relative for relative, _ in buckets.mix)  # per-tensor calls
    return np.concatenate([(size * scale).ravel() for size in
                           (buckets.first_bytes, buckets.bucket_bytes, buckets.last_bytes, *mixed)
                           for scale in (1.0, ratio)])


_FIELDS = 10  # backward first/full/last, forward first/full/last, after the optimizer (total, first/full/last)


def _sync_fields(plan: gradsync.SyncPlan, shape) -> np.ndarray:
    fields = (plan.backward.first_s, plan.backward.full_s, plan.backward.last_s,
              plan.forward.first_s, plan.forward.full_s, plan.forward.last_s, plan.post_step_s,
              plan.after.first_s, plan.after.full_s, plan.after.last_s)
    return _stacked(fields, shape)


def _stacked(fields, shape) -> np.ndarray:
    """``np.stack`` of the fields, each broadcast to ``shape``, as floats: one C-level
    assignment per field instead of numpy's Python-level ``broadcast_to`` (~50 calls a plan)."""
    out = np.empty((len(fields), *shape))
    for row, value in zip(out, fields):
        row[...] = value
    return out


class _RailCaches:
    """Hybrid sharding's replica groups: per GPUs-per-node G, a :class:`CommCache` on the rail
    system (one GPU's share of each node); one GPU-per-node layout per sweep layout."""

    def __init__(self, system: Any, backend: str, params: tuple) -> None:
        self.system, self.backend, self.params = system, backend, params
        self._caches: dict[int, CommCache] = {}

    def cache(self, per_node: int) -> CommCache:
        if per_node not in self._caches:
            self._caches[per_node] = CommCache(rail_system(self.system, per_node), self.backend, self.params)
        return self._caches[per_node]

    def batch(self, layouts, algorithm: str) -> _ReplicaBatch:
        return _ReplicaBatch(self, tuple(layouts), algorithm)

    @property
    def link_latency_used(self) -> bool:
        return any(cache.link_latency_used for cache in self._caches.values())


class _ReplicaBatch:
    """``comm(primitive, size)`` across the nodes for every sweep layout, ``size`` per layout
    (its first axis); 0 for a one-node layout (no replicas)."""

    def __init__(self, rails: _RailCaches, layouts: tuple, algorithm: str) -> None:
        self.rails, self.layouts, self.algorithm = rails, layouts, algorithm

    @property
    def runnable(self) -> np.ndarray:
        return np.array([nodes == 1 or self.rails.cache(g).runnable(self.rails.cache(g).layout(nodes, 1),
                                                                    self.algorithm)
                         for nodes, g in self.layouts])

    def __call__(self, primitive: str, size) -> np.ndarray:
        sizes = np.broadcast_to(np.asarray(size, dtype=float), (len(self.layouts), *np.shape(size)[1:]))
        rows = []
        for (nodes, g), row in zip(self.layouts, sizes):
            if nodes == 1:
                rows.append(np.zeros(row.shape))
            else:
                rows.append(self.rails.cache(g).batch([(nodes, 1)], self.algorithm, row)(primitive, row)[0])
        return np.stack(rows)


def comm_tables(system: Any, space: Space, workload: Any, first_bucket_bytes: float,
                backend: str, on_algorithm: Callable[[], None] | None = None,
                comm_params: tuple = (), quantize: tuple = (None, None), offload_host=None,
                shard: str = "full", stages: tuple | None = None) -> CommTables:
    """Collective times of one synchronisation for every (algorithm, stage, dtype, bucket, layout).

    One :func:`gradsync.sync_plan` call per (algorithm, ZeRO stage) on arrays: dtype × bucket
    from the bucket layout, GPU layouts from :meth:`CommCache.batch` (one row each). The
    single-GPU layout has no communication and runs under the first algorithm only.
    ``offload_host`` (an ``offload.HostPath``): ZeRO >= 1 rows copy their gradient shards to the
    host inside each bucket's reduction (one GPU too). ``shard="hybrid"``: ZeRO-3 rows shard in
    each node and all-reduce each shard across the nodes (:func:`gradsync.sync_plan`'s replicas,
    one rail system per GPUs-per-node, :func:`cluster.rail_system`); ``"hpz"``: ZeRO-3 rows
    all-gather their backward weights inside the node (ZeRO++ hpZ). ``stages``
    (:func:`stage_syncs`, None: DDP's buckets for every stage): each stage's layout under the
    plan's sync mode; a stage the mode does not run has no valid row, and a mode that sets its own
    call size (flat, per-tensor, FSDP) is valid at the first bucket size only (the others would
    repeat it). ``on_algorithm`` is called after each algorithm (progress).
    """
    A, Z, D, U, _ = space.shape
    layouts = space.layouts
    out = np.zeros((_FIELDS, A, Z, D, U, len(layouts)))
    across = np.ones((A, Z, D, U, len(layouts)))  # two-level rows' share of seconds across nodes
    # the share sets a slowdown only where the network's rule differs from the node's (NCCL's sockets
    # across nodes, or a node without peer-to-peer)
    sockets = any(transport.hides_nothing(transport.step_transport(system, n, g))
                  != transport.hides_nothing(transport.step_transport(system, 1, g)) for n, g in layouts if n * g > 1)
    valid = np.zeros((A, Z, D, U, len(layouts)), dtype=bool)
    precision = _dtype_precision(space)
    buckets = bucket_layouts(space, workload, first_bucket_bytes)
    cache = CommCache(system, backend, comm_params)
    multi = [i for i, (n, g) in enumerate(layouts) if n * g > 1]
    ranks = np.array([layouts[i][0] * layouts[i][1] for i in multi], dtype=float).reshape(-1, 1, 1)
    if stages is None:
        sizes = _call_sizes(buckets, precision)
    else:  # the sizes of every layout the stages run
        sizes = np.concatenate([_call_sizes(st.layout, precision) for st in stages if st.runs])
    node_gpus = np.array([layouts[i][1] for i in multi], dtype=float).reshape(-1, 1, 1)  # hybrid shard groups
    node_counts = np.array([layouts[i][0] for i in multi], dtype=float).reshape(-1, 1, 1)  # their replicas
    # each multi-GPU layout's host path: its GPUs per node share the node's memory and switch uplinks
    layout_host = offload.host_path(system, node_gpus) if offload_host is not None else None
    # ZeRO++ qgZ's all-to-all runs in the node, then across one rail (gradsync.sync_plan), as hybrid's groups
    qgz = quantize[1] is not None and shard != "hybrid"
    rails = _RailCaches(system, backend, comm_params) if shard == "hybrid" or qgz else None
    if multi:  # the tables the (algorithm, stage) rows below ask of ``cache``, in one pass where NCCL's model answers
        cache.prepare([layouts[i] for i in multi], [(primitive, name) for name in space.algorithms
                                                    for stage in space.zero_stages
                                                    if zero_algorithm_ok(name, stage, backend)
                                                    and not (stage == 3 and shard == "hybrid")
                                                    for primitive in gradsync.unquantised_primitives(
                                                        stage, *quantize)], sizes)
    for a, name in enumerate(space.algorithms):
        comm = cache.batch([layouts[i] for i in multi], name, sizes) if multi else None
        runnable = comm.runnable.reshape(-1, 1, 1) if comm else None
        if (shard != "full" or qgz) and multi:  # the node's group; hybrid and qgZ add the rails across nodes
            node_comm = cache.batch([(1, layouts[i][1]) for i in multi], name, sizes)
            replicas = rails.batch([layouts[i] for i in multi], name) if rails else None
            shard_runnable = (node_comm.runnable & (replicas.runnable if replicas else runnable.ravel())
                              ).reshape(-1, 1, 1)
        for z, stage in enumerate(space.zero_stages):
            if not zero_algorithm_ok(name, stage, backend):
                continue
            stage_sync = None if stages is None else stages[z]
            if stage_sync is not None and not stage_sync.runs:
                continue
            stage_buckets = buckets if stage_sync is None else stage_sync.layout
            sizes_shown = slice(None, 1) if stage_sync is not None and stage_sync.one_size else slice(None)
            offloaded = offload_host is not None and stage >= 1
            for i, (nodes, per_node) in enumerate(layouts):
                if nodes * per_node == 1 and a == 0 and cache.function(nodes, per_node, name):
                    valid[a, z, :, sizes_shown, i] = True  # one GPU: no collectives, all times 0
                    if offloaded:  # but an offloading GPU still copies its gradients to the host
                        alone = gradsync.sync_plan(lambda _p, size: 0.0 * size, 1, stage_buckets, precision,
                                                   zero_stage=stage,
                                                   offload_s_per_byte=offload.d2h_s_per_grad_byte(1, offload_host))
                        out[:, a, z, :, :, i] = _sync_fields(alone, (D, U))
            if comm is None:
                continue
            bits = gradsync.quantized_bits(quantize, stage)
            hybrid_row, hpz_row = stage == 3 and shard == "hybrid", stage == 3 and shard == "hpz"
            qgz_row = bits[1] is not None and not hybrid_row
            if qgz_row:  # two levels where several nodes hold several GPUs each; elsewhere one flat all-to-all
                hier = qgz_hierarchical(node_counts, node_gpus)
                first = (lambda p, s, hier=hier, node=node_comm, full=comm:  # noqa: E731
                         np.where(hier, node(p, s), full(p, s)))
                second = (lambda p, s, hier=hier, rails=replicas:  # noqa: E731
                          np.where(hier, rails(p, s), 0.0))
                second_over = np.where(hier, node_gpus, np.inf)  # 1/G of the quantised bytes, or none
            over = node_gpus if hybrid_row else ranks  # the ranks ZeRO shards over

            def stage_plan(extras=True, inside=None):  # ``inside``: the in-node groups' function instead
                return gradsync.sync_plan(
                    (inside or node_comm) if hybrid_row else comm, over, stage_buckets, precision,
                    zero_stage=stage, weight_bits=bits[0], grad_bits=bits[1],
                    quant_s_per_byte=gradsync.QUANT_HBM_PASSES / system.gpu.hbm_bandwidth_Bps if extras else 0.0,
                    offload_s_per_byte=offload.d2h_s_per_grad_byte(over, layout_host)
                    if offloaded and extras else 0.0,
                    replicas=replicas if hybrid_row else None, replica_share=1.0 / over,
                    replica_ranks=node_counts if hybrid_row else None,
                    secondary=(inside or node_comm) if hpz_row else None,
                    **({"qgz_node": (lambda p, s, i=inside: np.where(hier, i(p, s), first(p, s))) if inside else first,
                        "qgz_rails": second, "qgz_node_ranks": second_over} if qgz_row else {}))

            plan = stage_plan()
            times = _sync_fields(plan, (len(multi), D, U))
            if sockets and (hybrid_row or hpz_row or qgz_row):  # what crosses the network, of the seconds
                shape = (len(multi), D, U)
                whole = np.broadcast_to(gradsync.plan_seconds(stage_plan(extras=False), stage_buckets), shape)
                crossing = np.broadcast_to(gradsync.plan_seconds(stage_plan(extras=False, inside=gradsync.no_time),
                                                                 stage_buckets), shape)
                share = np.where(whole > 0, crossing / np.where(whole > 0, whole, 1.0), 1.0)
                across[a, z][..., multi] = np.minimum(share, 1.0).transpose(1, 2, 0)
            ok = np.isfinite(times).all(axis=0) & (shard_runnable & runnable if qgz_row else shard_runnable
                                                   if hybrid_row or hpz_row else runnable)
            if stage_sync is not None and stage_sync.one_size:  # the mode's own size: u = 0 stands for the row
                ok = ok & (np.arange(U) == 0)
            out[:, a, z][..., multi] = np.where(ok, times, 0.0).transpose(0, 2, 3, 1)
            valid[a, z][..., multi] = ok.transpose(1, 2, 0)
        if on_algorithm:
            on_algorithm()
    latency_free = not cache.link_latency_used and not (rails and rails.link_latency_used)
    return CommTables(tuple(out[0:3]), tuple(out[3:6]), out[6], valid, tuple(out[7:10]), latency_free,
                      across_share=across if (across < 1.0).any() else None)


@frozen(kw_only=True)
class Sweep:
    """Arrays over the whole space (shape ``space.shape``); seconds per optimizer step."""

    space: Space
    total_s: np.ndarray
    compute_s: np.ndarray  # the micro-batches' forward and backward, as iteration's compute_s
    losses_s: np.ndarray  # straggler wait + overlap interference + host overhead + buffer copies
    comm_s: np.ndarray
    exposed_comm_s: np.ndarray
    optimizer_s: np.ndarray
    samples_per_s: np.ndarray
    scaling_efficiency: np.ndarray
    memory_bytes: np.ndarray
    capacity_bytes: float
    reserve_bytes: float
    feasible: np.ndarray
    plain_dp_fits: np.ndarray
    interference_s: np.ndarray  # the part of losses_s the hidden collectives add
    input_wait_s: np.ndarray  # what the step waits for the data loader
    shard: str = "full"  # how ZeRO-3 rows shard ("hybrid", "hpz": see Setting)
    quantize: tuple[int | None, int | None] = (None, None)  # ZeRO++ bits of the ZeRO-3 rows (see Setting)

    @property
    def usable_bytes(self) -> float:
        """The GPU's memory less the reserve: what a configuration must fit in."""
        return self.capacity_bytes - self.reserve_bytes


def comm_free_s(sweep: Sweep) -> np.ndarray:
    """Each configuration's step with every collective at 0 s: its compute, straggler wait, host
    overhead and optimizer. The step adds only non-negative terms to these (the exposed
    communication, the slowdown the hidden part causes, the data loader's wait), none of which
    the links can make negative, so this bounds the step from below on any links (the
    what-if's pruning, :mod:`costmodel.planner.explain`)."""
    return sweep.compute_s + sweep.losses_s - sweep.interference_s + sweep.optimizer_s


def recomputed_floor_s(sweep: Sweep) -> np.ndarray:
    """Each configuration's step with activation recomputation at least, from a sweep without it
    (every cell, whether it fits or not): the same micro-batches' forward and backward with each
    forward run again (:func:`backward_seconds`), their straggler wait no shorter, and every
    collective at 0 s (:func:`comm_free_s`). The planner skips the sweep with recomputation where
    no configuration's floor could beat the best plan without it."""
    per_forward = 1.0 + backward_seconds(1.0, False)
    again = (1.0 + backward_seconds(1.0, True)) / per_forward - 1.0
    return comm_free_s(sweep) + again * sweep.compute_s


def samples_per_s(space: Space, step_s) -> np.ndarray:
    """Samples per second of a step of ``step_s`` for every configuration of ``space``."""
    return space.gpus * space.micro_batch * space.accumulation / step_s


def _per_dtype(space: Space, params: int, optimizer: str, hbm_Bps: float) -> dict[str, np.ndarray]:
    """Per-dtype constants, shaped (1, 1, D, 1, 1) for broadcasting."""
    rows = []
    for dtype in space.grad_dtypes:
        p = memory.precision_for(dtype)
        rows.append((p.weight_bytes, p.grad_bytes, memory.optimizer_state_bytes(optimizer)
                     + p.master_bytes, memory.optimizer_step_bytes_per_param(p, optimizer)))
    table = np.array(rows, dtype=float).T.reshape(4, 1, 1, -1, 1, 1)
    return {"weight": table[0], "grad": table[1], "states": table[2], "step_bytes": table[3],
            "optimizer_1gpu_s": table[3] * params / hbm_Bps}


def model_states(setting: Setting, precision, states_per_param, zero, ranks, per_node):
    """(weights, gradients, optimizer) bytes per rank for ``setting``'s ZeRO variants, as
    iteration_breakdown counts them: offloaded optimizer states live on the host (ZeRO >= 1),
    asynchronous workers hold none (the parameter servers do),
    hybrid ZeRO-3 shards over the node's GPUs, hpZ adds its secondary weight partition."""
    zero = np.asarray(zero)
    states = np.where(setting.asynchronous, 0.0, memory.states_on_gpu(states_per_param, zero, setting.offload_optimizer))
    secondary = per_node if setting.shard == "hpz" else None
    return memory.model_state_bytes(setting.workload.params, precision, states, zero,
                                    shard_ranks(setting, zero, ranks, per_node), secondary)


def _buffer_copies(setting: Setting, space: Space, zero, grad_bytes, gpu, ranks, shard, syncs):
    """Each row's copies of the gradient into its stage's sync-mode buffers and back (iteration's
    term: :func:`syncmodes.buffer_copy_passes` per ZeRO stage, then one elementwise formula)."""
    if not setting.losses.buffer_copies:
        return 0.0
    passes = np.array([syncmodes.buffer_copy_passes(syncmodes.stage_mode(setting.sync, stage),
                                                    asynchronous=setting.asynchronous,
                                                    offloaded=setting.offload_optimizer and stage >= 1)
                       for stage in space.zero_stages], dtype=float)
    into, back = (column.reshape(1, -1, 1, 1, 1) for column in passes.T)
    return syncmodes.buffer_copy_seconds(into, back, grad_bytes, gpu.hbm_bandwidth_Bps, ranks,
                                         np.where(zero >= 1, shard, 1), syncs)


def shard_ranks(setting: Setting, zero, ranks, per_node):
    """The ranks ZeRO shards over: the node's GPUs for hybrid ZeRO-3 rows, else every rank."""
    return np.where((zero == 3) & (setting.shard == "hybrid"), per_node, ranks)


def irregular(setting: Setting, precision, zero, ranks, per_node, states, transient):
    """The bytes a row allocates irregularly (memory.irregular_bytes), of its model ``states``
    and ``transient`` tensors (activations, logits)."""
    streamed = memory.streamed_bytes(setting.workload.params, precision, shard_ranks(setting, zero, ranks, per_node))
    return memory.irregular_bytes(zero, states, transient, streamed, setting.recompute, setting.offload_optimizer)


def _memory(setting, per_dtype, zero, ranks, per_node, activations, logits):
    """Everything a rank holds (memory.total_bytes), as iteration_breakdown counts it."""
    precision = _ArrayPrecision(per_dtype["weight"], per_dtype["grad"])
    parts = model_states(setting, precision, per_dtype["states"], zero, ranks, per_node)
    states = parts[0] + parts[1] + parts[2]
    return memory.total_bytes(states, activations, logits, ranks, setting.overheads,
                              irregular(setting, precision, zero, ranks, per_node, states, activations + logits))


def _gathered_lines(phase, buckets, grad_bytes, pick, readiness=overlap.UNIFORM) -> overlap.FinishLines:
    """``phase``'s candidate lines (:func:`overlap.finish_lines`), computed per GPU layout and
    gathered onto the cells (the last axis)."""
    lines = overlap.finish_lines(grad_bytes, buckets, *phase, readiness)
    shape = phase[0].shape
    return overlap.FinishLines(lines.slopes, tuple(np.take(o if getattr(o, "shape", None) == shape
                                                           else np.broadcast_to(o, shape), pick, axis=-1)
                                                   for o in lines.offsets))


def _exposed(phase, buckets, grad_bytes, compute_s, pick, readiness=overlap.UNIFORM):
    """The part of ``phase``'s collectives outlasting ``compute_s`` (overlap.exposed_comm_s):
    the candidate lines are per GPU layout (:func:`_gathered_lines`); only their evaluation at
    each cell's compute time is per cell."""
    return overlap.exposed_after(compute_s, _gathered_lines(phase, buckets, grad_bytes, pick, readiness))


def _sync_times(tables: CommTables, buckets, grad_bytes, forward_s, backward_s, pick, readiness=overlap.UNIFORM):
    """(collective time, exposed part) of one synchronisation, as in iteration._sync_times. The
    backward and forward phases' bucket times go side by side on a new leading axis through one
    :func:`_gathered_lines` (their lines' slopes depend on the bucket layout only)."""
    phases = tuple(np.stack(kind) for kind in zip(tables.backward, tables.forward))
    lines = _gathered_lines(phases, buckets, grad_bytes, pick, readiness)
    totals = overlap.total_comm_s(buckets, *phases)[..., pick]
    comm, exposed = 0.0, 0.0
    for k, compute_s in enumerate((backward_s, forward_s)):
        comm = comm + totals[k]
        exposed = exposed + overlap.exposed_after(
            compute_s, overlap.FinishLines(lines.slopes, tuple(offset[k] for offset in lines.offsets)))
    return comm, exposed


@frozen(kw_only=True)
class Setting:
    """Everything a sweep holds fixed: the model, compute rate and training options."""

    workload: Any
    seq_len: int
    peak_flops: float
    mfu: float  # or an array over the cells (elementwise: the sensitivity's variants, whatif.sensitivity)
    compute_dtype: str
    optimizer: str = "adamw"
    optimizer_impl: str = "multi-tensor"  # the script's optimizer: multi-tensor kernels or a per-tensor loop
    jitter_cv: float = 0.0
    first_bucket_bytes: float = overlap.DDP_FIRST_BUCKET_BYTES
    backend: str = "ideal"
    flash_attention: bool = True
    recompute: bool = False
    overheads: memory.Overheads = memory.DEFAULT_OVERHEADS
    memory_reserve_bytes: float | None = None  # None: memory.DEFAULT_RESERVE_FRACTION
    losses: losses.StepLosses = losses.StepLosses()
    mfu_given: bool = False  # the user's own MFU (measured at their micro-batch): no roofline factor
    mfu_calibration: str | None = None  # where a calibrated MFU came from (--rate); the micro-batch terms apply
    elementwise_traffic: float | None = None  # the width roofline's constant (--elementwise-traffic); None: the default
    comm_params: tuple = ()  # parameters of the swept algorithms, e.g. (('servers', 4),) for parameter servers
    quantize: tuple[int | None, int | None] = (None, None)  # ZeRO++ (qwZ weight bits, qgZ gradient bits)
    overlap_param_gather: bool = False  # ZeRO-1/2 rows: the parameter gather beside the next forward
    offload_optimizer: bool = False  # ZeRO >= 1 rows: optimizer on the host CPU (training.offload)
    shard: str = "full"  # ZeRO-3 rows: "hybrid" = in each node, replicated across; "hpz" = ZeRO++ hpZ
    asynchronous: bool = False  # asynchronous parameter-server updates (ZeRO-0 rows, no barrier)
    sync: str = "ddp"  # the framework's sync mode (iteration --sync): ddp, horovod, flat, per-tensor, fsdp

    @property
    def user_mfu(self) -> float | None:
        """The MFU the user gave (--mfu) or calibrated (--rate), None for the default: what a
        TrainingConfig of one of the plans carries, and whether its speed was measured."""
        return self.mfu if self.mfu_given or self.mfu_calibration is not None else None


def _node_host(setting: Setting, system: Any):
    """One rank's host path alone on its node when the setting offloads the optimizer, else None
    (refused where the system does not say its host memory bandwidth): a one-GPU row's, and the
    sign that the layouts' own (:func:`offload.host_path` of their GPUs per node) are needed."""
    return offload.host_path(system, 1) if setting.offload_optimizer else None


def setting_tables(setting: Setting, system: Any, space: Space,
                   on_algorithm: Callable[[], None] | None = None) -> CommTables:
    """:func:`comm_tables` for what ``setting`` holds fixed (algorithm parameters, ZeRO++ bits,
    optimizer offload)."""
    return comm_tables(system, space, setting.workload, setting.first_bucket_bytes, setting.backend,
                       on_algorithm=on_algorithm, comm_params=setting.comm_params, quantize=setting.quantize,
                       offload_host=_node_host(setting, system), shard=setting.shard,
                       stages=None if setting.sync == "ddp" else stage_syncs(setting, space))


def overlap_slowdowns(setting: Setting, system: Any, space: Space) -> np.ndarray:
    """Each algorithm's and GPU layout's overlap slowdown (algorithms × layouts), by the transport
    rule iteration applies (:func:`transport.overlap_slowdown_for` of
    :func:`transport.step_transport`): NCCL over TCP sockets hides nothing across nodes, a
    parameter server's host-side path does not hold the GPU; one node is local."""
    return np.array([[transport.overlap_slowdown_for(transport.step_transport(system, nodes, per_node),
                                                     setting.losses.overlap_slowdown,
                                                     transport.off_the_gpu(algorithm, False))
                      for nodes, per_node in space.layouts] for algorithm in space.algorithms])


def _row_slowdowns(setting: Setting, system: Any, space: Space, tables: CommTables, pick) -> np.ndarray:
    """The overlap slowdown of every row: its algorithm's and layout's (:func:`overlap_slowdowns`),
    and for rows whose collectives run at two levels, the node's slowdown plus the network's excess
    in the share of seconds that crosses the network (iteration's ``_two_level_slowdown``)."""
    by_layout = overlap_slowdowns(setting, system, space)[:, pick][:, None, None, None, :]
    if tables.across_share is None:
        return by_layout
    inside = np.array([transport.node_slowdown(system, g, setting.losses.overlap_slowdown)
                       for _, g in space.layouts])[pick][None, None, None, None, :]
    return transport.two_level_slowdown(inside, by_layout, tables.across_share[..., pick])


def _expand(array: np.ndarray) -> np.ndarray:
    """(D, U) → (1, 1, D, U, 1), the sweep's axes."""
    return np.asarray(array)[None, None, :, :, None]


def _stage_layouts(setting: Setting, space: Space, stages: tuple | None) -> overlap.BucketLayout:
    """The bucket layout on the sweep's axes: (1, 1, D, U, 1) for DDP's buckets (``stages``
    None), else (1, Z, D, U, 1), each stage's from :func:`stage_syncs` (a stage its mode does
    not run takes DDP's: its rows are not valid). For the overlap lines and call counts only: it
    has no call ``mix``, so no collective is timed from it (:func:`comm_tables` times each
    stage's own layout)."""
    layouts = _layout_fields(bucket_layouts(space, setting.workload, setting.first_bucket_bytes))
    if stages is None:
        return overlap.BucketLayout(*(_expand(f) for f in layouts))
    per_stage = [_layout_fields(st.layout) if st.runs else layouts for st in stages]
    return overlap.BucketLayout(*(np.stack([np.asarray(fields[k]) for fields in per_stage])[None, :, :, :, None]
                                  for k in range(4)))


def _layout_fields(layout: overlap.BucketLayout) -> tuple:
    return layout.first_bytes, layout.full_count, layout.bucket_bytes, layout.last_bytes


@frozen(kw_only=True)
class Fit:
    """What each configuration of a space holds per rank and whether it runs (arrays that
    broadcast to the space's shape): none of it depends on the step's times."""

    memory_bytes: np.ndarray
    usable_bytes: float  # the GPU's memory less the reserve
    plain_dp_fits: np.ndarray  # whether the configuration fits without ZeRO
    feasible: np.ndarray  # runs, fits, and shards only where plain data parallelism does not fit
    setting: Any  # the Setting it was computed under (a sweep takes it only under the same one)


def fits(setting: Setting, system: Any, space: Space, tables: CommTables,
         per_dtype: dict[str, np.ndarray] | None = None) -> Fit:
    """Memory and feasibility of every configuration of ``space`` (a :class:`Sweep`'s, without
    its step times: what decides whether a sweep with recomputation is needed); ``per_dtype``:
    :func:`_per_dtype` of the same arguments, where the caller (:func:`sweep`) has it."""
    workload, gpu = setting.workload, system.gpu
    pick, b = space.cell_layout, space.micro_batch
    ranks = space.gpus
    zero = np.array(space.zero_stages).reshape(1, -1, 1, 1, 1)
    if per_dtype is None:
        per_dtype = _per_dtype(space, workload.params, setting.optimizer, gpu.hbm_bandwidth_Bps)
    per_node = np.array([g for _, g in space.layouts], dtype=float)[pick]
    activations = memory.activation_bytes(workload, b, setting.seq_len,
                                          memory.ACTIVATION_BYTES[setting.compute_dtype],
                                          setting.flash_attention, setting.recompute)
    logits = memory.logits_bytes(workload, b, setting.seq_len,
                                 memory.ACTIVATION_BYTES[setting.compute_dtype])
    usable = gpu.memory_bytes - memory.reserve_bytes(gpu.memory_bytes, setting.memory_reserve_bytes)
    mem = _memory(setting, per_dtype, zero, ranks, per_node, activations, logits)
    plain_fits = _memory(setting, per_dtype, 0, ranks, per_node, activations, logits) <= usable
    feasible = tables.valid[..., pick] & (mem <= usable) & ((zero == 0) | ~plain_fits) & stages_allowed(setting, space)
    return Fit(memory_bytes=mem, usable_bytes=usable, plain_dp_fits=plain_fits, feasible=feasible,
               setting=setting)


def sweep(setting: Setting, system: Any, space: Space, tables: CommTables | None = None,
          fit: Fit | None = None) -> Sweep:
    """Evaluate every configuration of ``space`` on ``system`` (see the module docstring);
    ``fit``: :func:`fits` of the same arguments, where the caller has it (one computed under
    another setting, e.g. before recomputation was turned on, is refused)."""
    if fit is not None and fit.setting is not setting:
        raise ValueError("grid.sweep: the Fit was computed under another setting")
    workload, gpu = setting.workload, system.gpu
    tables = tables or setting_tables(setting, system, space)
    pick, b, k = space.cell_layout, space.micro_batch, space.accumulation
    ranks = space.gpus
    zero = np.array(space.zero_stages).reshape(1, -1, 1, 1, 1)
    every = zero >= 2
    flops = workloads.training_flops_per_sample(workload, setting.seq_len)
    forward = micro_batch_forward(workload, gpu, compute_dtype=setting.compute_dtype, peak=setting.peak_flops,
                                  mfu=setting.mfu, mfu_given=setting.mfu_given, flops_per_sample=flops,
                                  seq_len=setting.seq_len, micro_batch=b,
                                  flash_attention=setting.flash_attention,
                                  mfu_default=setting.user_mfu is None,
                                  traffic=setting.elementwise_traffic).forward_s
    backward = backward_seconds(forward, setting.recompute)
    factor = 1.0 if setting.asynchronous else stragglers.slowest_rank_factor(  # async: nobody waits
        setting.jitter_cv, ranks, np.where(every, 1.0, k), setting.losses.speed_cv, setting.losses.slow_node_factor)
    per_dtype = _per_dtype(space, workload.params, setting.optimizer, gpu.hbm_bandwidth_Bps)
    grad_bytes = workload.params * per_dtype["grad"]
    stages = None if setting.sync == "ddp" else stage_syncs(setting, space)
    buckets = _stage_layouts(setting, space, stages)
    sync_comm, sync_exposed = _sync_times(tables, buckets, grad_bytes, forward * factor,
                                          backward * factor, pick, workload.readiness)
    if stages is not None:  # the mode's overlap (flat: after backward) and fusion-cycle wait
        after = np.array([not st.overlap for st in stages]).reshape(1, -1, 1, 1, 1)
        if after.any():
            sync_exposed = np.where(after, sync_comm, sync_exposed)
        wait = np.array([st.wait_s for st in stages]).reshape(1, -1, 1, 1, 1)
        if wait.any():  # iteration: added where more than one rank synchronises
            sync_comm, sync_exposed = (np.where(ranks > 1, t + wait, t) for t in (sync_comm, sync_exposed))
    per_node = np.array([g for _, g in space.layouts], dtype=float)[pick]
    shard = shard_ranks(setting, zero, ranks, per_node)
    optimizer_s = per_dtype["optimizer_1gpu_s"] / np.where(zero >= 1, shard, 1)
    # a per-tensor loop over the rank's tensors (its share at ZeRO-1); 0 for multi-tensor kernels
    optimizer_s = optimizer_s + optimizer_dispatch_seconds(syncmodes.tensor_count(workload), setting.optimizer,
                                                           setting.optimizer_impl, zero, shard)
    if setting.offload_optimizer:  # ZeRO >= 1 rows: the step on the node's CPUs, shared by its ranks
        layout_host = offload.host_path(system, per_node)
        host_s = offload.step_seconds(workload.params, per_dtype["step_bytes"], per_dtype["weight"], shard,
                                      layout_host.memory_Bps, layout_host.host_link_Bps)
        optimizer_s = np.where(zero >= 1, host_s[0] + host_s[1], optimizer_s)
    if setting.asynchronous:  # the servers run the optimizer
        optimizer_s = np.zeros_like(optimizer_s)
    post_step = tables.post_step_s[..., pick]
    post_exposed = post_step
    # the parameter gather beside the next forward: every row with overlap_param_gather, and
    # FSDP's ZeRO-2 rows (SHARD_GRAD_OP gathers in the forward); ZeRO-3/0 rows have none
    beside = np.array([setting.overlap_param_gather or st.gather_beside for st in stages] if stages is not None
                      else [setting.overlap_param_gather] * len(space.zero_stages))
    if beside.any() and tables.after is not None:
        overlapped = _exposed(tables.after, buckets, grad_bytes, forward * factor, pick, workload.readiness)
        post_exposed = overlapped if beside.all() else np.where(beside.reshape(1, -1, 1, 1, 1), overlapped, post_step)
    input_s = losses.input_seconds(setting.losses.input_rate, b * k)  # the rank's loader, for the step
    copies = _buffer_copies(setting, space, zero, grad_bytes, gpu, ranks, shard, np.where(every, k, 1))
    step = step_seconds(forward_s=forward, backward_s=backward, accumulation_steps=k,
                        straggler_factor=factor, sync_comm_s=sync_comm, post_step_exposed_s=post_exposed,
                        sync_exposed_s=sync_exposed, post_step_s=post_step,
                        every_micro_batch=every, optimizer_s=optimizer_s,
                        overlap_slowdown=_row_slowdowns(setting, system, space, tables, pick),
                        host_overhead_s=losses.host_overhead_seconds(
                            0.0 if setting.asynchronous else setting.losses.host_overhead_s, ranks),
                        input_s=input_s, buffer_copy_s=copies)
    samples = samples_per_s(space, step.total_s)
    fitted = fit if fit is not None else fits(setting, system, space, tables, per_dtype)
    shape = space.shape
    return Sweep(space=space, total_s=np.broadcast_to(step.total_s, shape),
                 compute_s=np.broadcast_to(step.compute_s, shape),
                 losses_s=np.broadcast_to(step.straggler_wait_s + step.interference_s + step.host_overhead_s
                                          + step.buffer_copy_s, shape),
                 comm_s=np.broadcast_to(step.comm_s, shape),
                 exposed_comm_s=np.broadcast_to(step.exposed_comm_s, shape),
                 optimizer_s=np.broadcast_to(optimizer_s, shape),
                 samples_per_s=np.broadcast_to(samples, shape),
                 scaling_efficiency=np.broadcast_to(scaling_efficiency(step, optimizer_s, input_s), shape),
                 memory_bytes=np.broadcast_to(fitted.memory_bytes, shape), capacity_bytes=float(gpu.memory_bytes),
                 reserve_bytes=float(gpu.memory_bytes - fitted.usable_bytes),
                 feasible=np.broadcast_to(fitted.feasible, shape),
                 plain_dp_fits=np.broadcast_to(fitted.plain_dp_fits, shape), shard=setting.shard,
                 quantize=tuple(setting.quantize),
                 interference_s=np.broadcast_to(step.interference_s, shape),
                 input_wait_s=np.broadcast_to(step.input_wait_s, shape))
