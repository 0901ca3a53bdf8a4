"""RCCL's choice on a layout: its tuning model's (algorithm, protocol) and the registry
algorithm that runs it.

The rccl backend is two parts, each from what is known of it:
- **which algorithm** runs a call is RCCL's own decision (:func:`costmodel.nccl.rccl.choose`,
  RCCL's constants as data), made on the communicator RCCL would build here: the node's
  topology match gives the tuning model, and the bus bandwidth is the ring's on this layout
  (RCCL's ``baseBw``), from the profiles' measured efficiencies;
- **how long it takes** is that algorithm's time under the measured-efficiency α-β mapping:
  RCCL's estimate is a ranking device (its per-size factors go down to 0.1, its network
  latencies up to 320 µs a step), not a time; it is reported beside the time.

    >>> from costmodel.cluster.mapping import layout
    >>> pick("all-reduce", 2**33, layout("mi300x-8x", 2)).algorithm
    'ring'
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from costmodel.cluster.mapping import Layout, LayoutCache, predict_on_cluster
from costmodel.collectives.prediction import Prediction
from costmodel.nccl.names import FROM_REGISTRY, REGISTRY_MIRROR
from costmodel.nccl.rccl import (
    ALGORITHMS,
    WIRE_FACTOR,
    MscclSchedule,
    RcclChoice,
    RcclTopology,
    choose,
    msccl_enabled,
    msccl_schedule,
    topology_rule,
)
from dpbase.values import replace

TUNED = ("all-reduce", "all-gather", "reduce-scatter", "broadcast", "reduce")
_ASYMPTOTE_BYTES = 2**34  # large enough that the ring's latency is < 0.1 % of its time


_TOPOLOGIES = LayoutCache(256)


def _topology(lay: Layout) -> RcclTopology:
    system, nodes, per_node = lay.system, lay.nodes, lay.gpus_per_node
    from costmodel.cluster.stacks import Stack, default_stack

    if default_stack(system) is not Stack.RCCL:  # as NCCL's model refuses AMD systems (costmodel.nccl.search)
        from dpbase.errors import NotApplicableError

        raise NotApplicableError("system", system.name, "an AMD GPU system for RCCL's model; on "
                                 f"{system.gpu.vendor} GPUs use --backend auto (NCCL's model) or ideal")
    # a one-node job holding every GPU of an all-xGMI node has its NICs trimmed before the topology
    # match (ncclTopoTrimSystem, RCCL src/graph/paths.cc): it matches as a node with none
    whole_xgmi_node = nodes == 1 and per_node == system.gpus_per_node and system.intra_fabric == "xgmi"
    rule = topology_rule(system.gpu.name, per_node, 0 if whole_xgmi_node else system.nics_per_node)
    bus_GBps = rule["base_bw_GBps"]
    if bus_GBps is None:
        ring = predict_on_cluster("all-reduce", "ring", lay, size_bytes=_ASYMPTOTE_BYTES)
        bus_GBps = ring.busbw_Bps / 1e9
    intra = "xgmi" if system.intra_fabric in ("xgmi", "nvlink-mesh", "nvlink-bridge", "nvswitch") else "pci"
    vendor = system.cpu_vendor if system.cpu_vendor in ("intel", "amd") else "other"
    return RcclTopology(n_ranks=lay.ranks, n_nodes=nodes, arch=rule["arch"] or "unknown", tuning=rule["tuning"],
                        bus_bw_GBps=bus_GBps, intra=intra, cpu_vendor=vendor, ll128=rule["ll128"],
                        same_channels=rule["matched"])


def rccl_topology(lay: Layout) -> RcclTopology:
    """The communicator RCCL's tuning model sees on this layout (cached by the system's value,
    :class:`LayoutCache`)."""
    return _TOPOLOGIES.get(lay, _topology)


@functools.lru_cache(maxsize=65536)
def _choose(primitive: str, size_bytes: float, topo: RcclTopology, algorithm: str) -> RcclChoice:
    return choose(primitive, size_bytes, topo, algorithm)


def pick(primitive: str, size_bytes: float, lay: Layout, algorithm: str = "auto") -> RcclChoice | None:
    """RCCL's choice for one call (``algorithm`` "auto", or a registry name RCCL runs: ring,
    double-binary-tree), or None where its tuning model does not decide: all-to-all and
    send/recv (point-to-point), algorithms RCCL does not have, one rank."""
    rccl_name = "auto" if algorithm == "auto" else FROM_REGISTRY.get(algorithm)
    if primitive not in TUNED or lay.ranks < 2 or rccl_name not in ("auto", *ALGORITHMS):
        return None
    if rccl_name == "tree" and primitive != "all-reduce":
        return None
    return _choose(primitive, float(size_bytes), rccl_topology(lay), rccl_name)


def runs_as_named(primitive: str, algorithm: str, lay: Layout | None = None) -> bool:
    """Whether RCCL runs ``algorithm`` (a registry name or auto) for ``primitive``'s calls: its own
    ring and tree, and two-shot where MSCCL's all-pairs schedule may take the all-reduce (a
    layout ``lay`` MSCCL is enabled on: one node of 8 gfx942 GPUs; :func:`msccl` decides per
    call); a collective its tuning model does not decide (all-to-all, send/recv) is its
    point-to-point path whatever is named. Another named algorithm is the textbook model's
    (ideal backend)."""
    if algorithm == "auto" or primitive not in TUNED:
        return True
    if algorithm == MSCCL_ALGORITHM:  # across nodes, or on another GPU, two-shot is the textbook's
        return primitive == "all-reduce" and lay is not None and lay.ranks > 1 and msccl_enabled(rccl_topology(lay))
    rccl_name = FROM_REGISTRY.get(algorithm)
    return rccl_name in ALGORITHMS and not (rccl_name == "tree" and primitive != "all-reduce")


def registry_algorithm(choice: RcclChoice) -> str:
    """The formula-registry algorithm that runs RCCL's choice (the one NCCL's mirrors)."""
    return REGISTRY_MIRROR[choice.algorithm]


# MSCCL's all-pairs schedule is the registry's two-shot all-reduce (a direct reduce-scatter, then a
# direct all-gather): its traffic and bandwidth terms are two-shot's; its latency is not the
# single-port (2N − 2)·α, since each phase sends on all N − 1 links at once (one thread block a
# peer), but RCCL's base latency and one hop a phase (:class:`costmodel.nccl.rccl.MscclSchedule`).
MSCCL_ALGORITHM = "two-shot"
MSCCL_NOTE = ("rccl backend: RCCL runs MSCCL's all-pairs schedule {file} (8 xGMI-connected gfx942 GPUs on one "
              "node, RCCL {version}), two hops on every link at once: RCCL's latency for them ({latency_us:g} µs), "
              "two-shot's bytes{wire}")


def msccl(primitive: str, size_bytes: float, lay: Layout, algorithm: str = "auto") -> MscclSchedule | None:
    """The MSCCL schedule RCCL runs this call with under ``auto`` or two-shot named (the schedule
    is a two-shot), or None (ring or tree named is RCCL's own, as ``NCCL_ALGO`` forces it past
    MSCCL's schedules)."""
    if algorithm not in ("auto", MSCCL_ALGORITHM) or lay.ranks < 2:
        return None
    return msccl_schedule(primitive, float(size_bytes), rccl_topology(lay))


def msccl_prediction(schedule: MscclSchedule, lay: Layout, size_bytes: float, gamma_s_per_byte: float = 0.0) -> Prediction:
    """The MSCCL call's answer: two-shot's on the α-β mapping (its bytes, bandwidth and reduction
    terms, the bandwidth term times the protocol's wire factor) with MSCCL's latency and steps."""
    p = predict_on_cluster("all-reduce", MSCCL_ALGORITHM, lay, size_bytes=size_bytes, gamma_s_per_byte=gamma_s_per_byte)
    latency_s = schedule.latency_us * 1e-6
    bandwidth_s = p.bandwidth_s + wire_excess_s(p.bandwidth_s, schedule.protocol)
    time_s = latency_s + bandwidth_s + p.reduction_s
    algbw = size_bytes / time_s
    wire = "" if schedule.wire_factor == 1 else f" x {schedule.wire_factor:g} on the wire ({schedule.protocol})"
    return replace(p, time_s=time_s, latency_s=latency_s, bandwidth_s=bandwidth_s, steps=2, algbw_Bps=algbw,
                   busbw_Bps=None if p.busbw_Bps is None else p.busbw_Bps * p.time_s / time_s,
                   backend="rccl", protocol=schedule.protocol, nccl_model_time_s=None,
                   nccl_version=schedule.rccl_version, nccl_choice=True, stack_runs=True,
                   note=MSCCL_NOTE.format(file=schedule.file, version=schedule.rccl_version,
                                          latency_us=schedule.latency_us, wire=wire))


def wire_excess_s(bandwidth_s: float, protocol: str) -> float:
    """What ``protocol`` adds to an α-β bandwidth term: its bytes on the wire per byte of data
    (:data:`~costmodel.nccl.rccl.WIRE_FACTOR`: LL 2, LL128 8/7) less the data's own, as
    MSCCL's schedules are timed."""
    return (WIRE_FACTOR[protocol] - 1.0) * bandwidth_s


def on_the_wire(p: Prediction, protocol: str) -> Prediction:
    """An α-β answer of an algorithm RCCL runs with ``protocol``, its bandwidth term at the
    protocol's bytes on the wire (:func:`wire_excess_s`)."""
    extra = wire_excess_s(p.bandwidth_s, protocol)
    if not extra > 0:
        return p
    time_s = p.time_s + extra
    return replace(p, time_s=time_s, bandwidth_s=p.bandwidth_s + extra, algbw_Bps=p.size_bytes / time_s,
                   busbw_Bps=None if p.busbw_Bps is None else p.busbw_Bps * p.time_s / time_s)


def rccl_call(primitive: str, size_bytes: float, lay: Layout, algorithm: str,
              alpha_beta_s: Callable[[str], float]) -> tuple[float, RcclChoice | None] | None:
    """(time, RCCL's choice) of one call under the rccl backend, None where RCCL's model does
    not decide (the caller keeps its α-β answer). The time is the chosen algorithm's on the
    measured-efficiency α-β mapping (``alpha_beta_s(registry name)``), its bandwidth term at the
    chosen protocol's bytes on the wire (:func:`wire_excess_s`); where MSCCL's schedule runs the
    call (:func:`msccl`) its time, with no tuning-model choice.

    Why not RCCL's own estimate: its constants steer the choice, they are not physical times
    (model 5 charges 320 µs per network step of a Simple ring, and gives a two-node Simple tree
    11 % of the bus bandwidth). As the time, the estimate halves the error on one 2-node log
    and multiplies it by 7 on the other; docs/validation.md has the comparison.
    """
    schedule = msccl(primitive, size_bytes, lay, algorithm)
    if schedule is not None:  # MSCCL's schedule, past RCCL's tuning model
        return msccl_prediction(schedule, lay, size_bytes).time_s, None
    choice = pick(primitive, size_bytes, lay, algorithm)
    if choice is None:
        return None
    name = registry_algorithm(choice)
    time_s = alpha_beta_s(name)
    if WIRE_FACTOR[choice.protocol] != 1.0 and size_bytes > 0:  # at the algorithm's default parameters, as
        # the rccl backend runs RCCL's choices (it refuses a parameter where RCCL's model answers)
        time_s += wire_excess_s(predict_on_cluster(primitive, name, lay, size_bytes=size_bytes).bandwidth_s,
                                choice.protocol)
    return time_s, choice
