"""One training step on a cluster: the group, its comm model and its GPU come from one place.

:func:`iteration` is what ``dpcost iteration`` computes, as a Python call: the cluster (a
bundled name, a TOML path or a :class:`hardware.System`) gives the GPU, the rank count and the
communication model, so none of them can disagree with another.

    >>> b = iteration("gpt2", "dgx-h100", micro_batch=8, nodes=2, backend="ideal")
    >>> b.ranks, b.total_s > b.compute_s > 0
    (16, True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from costmodel.apiwords import UnknownKeywordError, speaks_keywords
from costmodel.cluster.comm import comm_model, hybrid_groups
from costmodel.training import losses, offload, residuals, transport, workloads
from costmodel.training.gradsync import ShardGroups
from costmodel.training.iteration import Breakdown, TrainingConfig, iteration_breakdown, qgz_runs_in_two_levels
from costmodel.training.workloads import Workload, workload_of
from dpbase.errors import InputError, check_switch, is_whole
from dpbase.values import fields, replace

if TYPE_CHECKING:
    from costmodel.cluster.comm import CommModel
    from costmodel.training.measured_rate import SolvedMfu
    from hardware import System

_CONFIG_FIELDS = frozenset(f.name for f in fields(TrainingConfig))


# The checks speak the CLI's flags (iteration_cmd); this API's caller passed TrainingConfig's
# fields (costmodel.apiwords)
_KEYWORDS = {"zero": "zero_stage", "topk": "topk_fraction", "jitter": "jitter_cv", "bucket": "bucket_bytes",
             "first-bucket": "first_bucket_bytes", "memory-reserve": "memory_reserve_bytes", "accum": "accumulation_steps",
             "async": "asynchronous", "ps-placement": "colocated", "elementwise-traffic": "elementwise_traffic"}


# An asynchronous step's gradients go to parameter servers (what auto is with --async)
ASYNC_ALGORITHM = "parameter-server"


def step_algorithm(algorithm: str, asynchronous: bool, host_reduce: bool) -> str:
    """The algorithm a step's comm model runs: auto is the parameter servers with --async, and
    another named algorithm is refused there; with --host-reduce the host's own all-reduce runs,
    so only auto is taken. One rule for ``dpcost iteration`` and :func:`iteration` (the API timed an
    asynchronous step over an all-reduce, 5x the CLI's speed; API audit, 2026-11-30)."""
    if asynchronous and algorithm not in ("auto", ASYNC_ALGORITHM, "ps"):
        raise InputError("--algorithm", algorithm, f"{ASYNC_ALGORITHM} or auto with --async")
    if host_reduce and algorithm != "auto":  # the host's own all-reduce runs, whatever NCCL would
        raise InputError("--algorithm", algorithm, "auto with --host-reduce (the gradients go through host "
                                                   "memory: PCIe copies, CPU reduction, the CPUs' ring across nodes)")
    return ASYNC_ALGORITHM if asynchronous else algorithm


@speaks_keywords(_KEYWORDS)
def iteration(model: str | Workload, cluster: str | System, config: TrainingConfig | None = None, *,
              nodes: int = 1, gpus_per_node: int | None = None, algorithm: str = "auto",
              backend: str | None = None, stack: str | None = None, servers: int | None = None,
              colocated: bool | None = None, **config_fields: Any) -> Breakdown:
    """Break one data-parallel step down on ``nodes`` × ``gpus_per_node`` GPUs of ``cluster``.

    Give either ``config`` or its fields as keywords (``micro_batch=…, accumulation_steps=…``).
    ``backend`` None/"auto" is the system's realistic backend (NCCL's model on NVIDIA, RCCL's on
    AMD). Unless the config names one, the transport is the cluster's (TCP sockets or RDMA).
    ``servers``/``colocated``: the parameter servers of ``algorithm="parameter-server"``.
    """
    unknown = sorted(set(config_fields) - _CONFIG_FIELDS)
    if unknown:
        raise UnknownKeywordError(unknown[0], config_fields[unknown[0]],
                                  f"a TrainingConfig field: {', '.join(sorted(_CONFIG_FIELDS))}")
    if config is not None and config_fields:
        raise InputError(next(iter(config_fields)), "given with config", "either config or its fields as keywords")
    if config is not None and not isinstance(config, TrainingConfig):  # a dict was an AttributeError
        raise InputError("config", config, "a TrainingConfig, or its fields as keywords (micro_batch=…)")
    given = config_fields if config is None else {"asynchronous": config.asynchronous, "host_reduce": config.host_reduce}
    # as the config reads them: numpy's booleans too (``is True`` let np.bool_(True) past the rule)
    algorithm = step_algorithm(algorithm, bool(check_switch("asynchronous", given.get("asynchronous", False))),
                               bool(check_switch("host_reduce", given.get("host_reduce", False))))
    comm = _comm_model(cluster, nodes, gpus_per_node, algorithm=algorithm, backend=backend, stack=stack,
                       servers=servers, colocated=colocated)
    system = comm.layout.system
    if config is None:
        if "micro_batch" not in config_fields:
            raise InputError("micro_batch", None, "an integer >= 1 (or a TrainingConfig)")
        if config_fields.get("sync") == "fsdp" and "zero_stage" in config_fields and config_fields["zero_stage"] == 0:
            # TrainingConfig's 0 is FSDP's FULL_SHARD default; one typed became ZeRO-3 unsaid (as --zero 0 is refused)
            raise InputError("zero_stage", 0, "2 (SHARD_GRAD_OP) or 3 (FULL_SHARD, the default: leave zero_stage "
                                              "out) with sync='fsdp'; ZeRO-0 is sync='ddp'")
        config_fields.setdefault("transport", transport.step_transport(system, comm.layout.nodes, comm.layout.gpus_per_node))
        config = TrainingConfig(**config_fields)
    return breakdown_on(workload_of(model), system.gpu, comm, _on_layout(config, comm))


def _comm_model(cluster, nodes, gpus_per_node, **options) -> CommModel:
    """:func:`comm_model` with the counts as the training step takes them: a whole number given
    as a float (``nodes=2.0``, as ``micro_batch=8.0`` and ``plan(nodes=2.0)`` are taken) counts as
    that integer; anything else reaches the cluster's own check and its message."""
    def count(value):
        return int(value) if is_whole(value) and value >= 1 else value

    servers = options.pop("servers")
    return comm_model(cluster, count(nodes), count(gpus_per_node), servers=count(servers), **options)


def breakdown_on(workload: Workload, gpu: Any, comm: CommModel, config: TrainingConfig) -> Breakdown:
    """The step of ``config`` on ``comm``'s ``gpu``s with its intervals (:func:`with_interval`): what
    :func:`iteration` answers and ``dpcost iteration`` prints, from one pipeline."""
    name = str(comm.describe().get("algorithm", comm.algorithm))
    return with_interval(iteration_breakdown(workload, gpu, comm, config=config, algorithm=name), workload, gpu,
                         comm, config, name)


def _on_layout(config: TrainingConfig, comm: CommModel) -> TrainingConfig:
    """``config`` with the cluster's transport where it names none (``local``): the network's across
    nodes, ``shm`` on one node without peer-to-peer."""
    found = transport.step_transport(comm.layout.system, comm.layout.nodes, comm.layout.gpus_per_node)
    if config.transport == transport.LOCAL and found != transport.LOCAL:
        return replace(config, transport=found)
    return config


@speaks_keywords(_KEYWORDS)
def measured_mfu(model: str | Workload, cluster: str | System, config: TrainingConfig, rate_samples_per_s: float,
                 *, nodes: int = 1, gpus_per_node: int | None = 1, algorithm: str = "auto",
                 backend: str | None = None, stack: str | None = None, servers: int | None = None,
                 colocated: bool | None = None) -> SolvedMfu:
    """The MFU at which ``config`` (its ``mfu`` ignored) on ``nodes`` × ``gpus_per_node`` GPUs of
    ``cluster`` (default one GPU; None: whole nodes) runs at ``rate_samples_per_s`` for the whole
    group (:mod:`measured_rate`): the speed of a run the user measured, to predict other
    configurations with (:func:`measured_rate.calibrated`: the MFU is calibrated, so the
    micro-batch terms still apply). The transport is the config's, as in :func:`iteration`."""
    from costmodel.training import measured_rate  # only --rate needs it: off every other answer's imports

    rate = measured_rate.check_rate(rate_samples_per_s, "rate_samples_per_s")
    if not isinstance(config, TrainingConfig):  # None was an AttributeError
        raise InputError("config", config, "a TrainingConfig (the measured run's micro_batch, …)")
    comm = _comm_model(cluster, nodes, gpus_per_node, algorithm=algorithm, backend=backend, stack=stack,
                       servers=servers, colocated=colocated)
    config = _on_layout(config, comm)
    workload = workload_of(model)
    gpu, name = comm.layout.system.gpu, str(comm.describe().get("algorithm", algorithm))

    source = config.mfu_calibration or measured_rate.MEASURED_SOURCE

    def breakdown(mfu: float) -> Breakdown:
        return iteration_breakdown(workload, gpu, comm, config=replace(config, mfu=mfu, mfu_calibration=source),
                                   algorithm=name)

    highest = workloads.max_mfu(workload)
    _check_measured_run_fits(breakdown(highest), comm, config)
    return measured_rate.solve_mfu(lambda mfu: breakdown(mfu).samples_per_s, rate, highest_mfu=highest)


def _check_measured_run_fits(result: Breakdown, comm: CommModel, config: TrainingConfig) -> None:
    """A measured run whose weights, gradients, optimizer states and activations alone exceed the
    GPU's memory (the reserve left out: a run that fitted with less headroom than the planner keeps
    still ran) cannot have been measured: its rate would calibrate the speed of a run that never
    was (a 70B model on one 80 GB GPU). The user described the run wrongly."""
    used, capacity = result.memory.total_bytes, result.memory.capacity_bytes
    if used <= capacity:
        return
    gpus = comm.ranks
    raise InputError("rate", f"measured on {gpus} GPU{'s' if gpus > 1 else ''} at micro-batch {config.micro_batch}"
                     f"{f' x {config.accumulation_steps}' if config.accumulation_steps > 1 else ''}, "
                     f"ZeRO-{config.zero_stage}{', recomputed' if config.recompute else ''}",
                     f"a run that fits in memory: that one needs {used / 1e9:,.0f} GB per GPU and the "
                     f"{comm.layout.system.gpu.name} holds {capacity / 1e9:,.0f} GB; describe the run that was measured: "
                     "the GPUs it ran on, its ZeRO stage, micro-batch and recomputation")


def with_interval(result: Breakdown, workload: Workload, gpu: Any, comm: CommModel, config: TrainingConfig,
                  algorithm: str = "") -> Breakdown:
    """The breakdown with its intervals: where published runs of its class landed (80 %,
    :func:`with_published_interval`) and the spread of its collectives alone (10-90 %).

    Every collective of the step is taken at the low end of its own interval, then at the high
    end (:meth:`CommModel.bound_s`), and the whole step is recomputed each time, so overlap
    decides how much of the comm uncertainty reaches the step: hidden comm moves the step only
    where it becomes exposed. The ends are taken together (the calls of one step share a
    fabric), which makes the step's interval the wider, conservative one.
    """
    result = with_published_interval(result, comm, config)
    if not getattr(comm, "has_intervals", False) or result.comm_s <= 0 or config.host_reduce:
        return result  # the host-memory path is not NCCL's: no measured interval covers it
    host = offload.host_path(comm.layout.system, comm.layout.gpus_per_node) if config.offload_optimizer else None
    qgz_groups = qgz_runs_in_two_levels(config, comm.layout)
    intra, rails = hybrid_groups(comm) if config.shard != "full" or qgz_groups else (None, None)

    def qgz(end):  # ZeRO++ qgZ's hierarchical all-to-all at the same end
        if not qgz_groups:
            return None
        return (lambda p, s: intra.bound_s(p, s, end), lambda p, s: rails.bound_s(p, s, end), intra.ranks)

    def groups(end):
        if intra is None or config.shard == "full":
            return None
        inside = lambda p, s: intra.bound_s(p, s, end)  # noqa: E731
        if config.shard == "hpz":
            return ShardGroups(comm=lambda p, s: comm.bound_s(p, s, end), ranks=comm.ranks, secondary=inside,
                               secondary_ranks=intra.ranks)
        return ShardGroups(comm=inside, ranks=intra.ranks, replicas=lambda p, s: rails.bound_s(p, s, end),
                           replica_ranks=rails.ranks)

    ends = [iteration_breakdown(workload, gpu, lambda p, s, e=end: comm.bound_s(p, s, e), comm.ranks, config,
                                algorithm=algorithm, host=host, groups=groups(end), qgz=qgz(end)) for end in (0, 1)]
    if ends[0].comm_s == ends[1].comm_s == result.comm_s:  # every call timed off the backend (bound_s): no band
        return result
    return replace(result, comm_interval_s=(ends[0].comm_s, ends[1].comm_s),
                   total_interval_s=(min(ends[0].total_s, result.total_s), max(ends[1].total_s, result.total_s)))


def with_published_interval(result: Breakdown, comm: CommModel, config: TrainingConfig) -> Breakdown:
    """The breakdown with :func:`residuals.published_interval`: the 80 % interval of published ÷
    predicted step time of published runs of its class, predicted out of sample with the
    realistic backend (none under the ideal one, whose collectives are a textbook bound, nor for
    asynchronous updates: every published run was synchronous)."""
    if comm.backend not in residuals.BACKENDS:  # no published run speaks for it (before the layout is read)
        return result
    found = residuals.published_interval(result.total_s, comm.ranks, comm.layout.nodes,
                                         measured_speed=config.mfu is not None, backend=comm.backend,
                                         synchronous=result.synchronous,
                                         floor_s=losses.input_seconds(config.losses.input_rate,
                                                                      config.micro_batch * config.accumulation_steps))
    if found is None:
        return result
    step, cls = found
    return replace(result, published_interval_s=step, published_class=cls)
