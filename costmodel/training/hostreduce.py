"""Gradient all-reduce through host memory (``--host-reduce``): MPI/gloo CPU all-reduce and
CPU parameter servers (tf_cnn_benchmarks ``variable_update=parameter_server`` with
``local_parameter_device=cpu``; Horovod/gloo CPU ops).

Each rank copies its gradient to the host over its host link (device to host), the node's CPUs reduce the
node's G copies in host memory, the nodes exchange their node-reduced gradient over the network
(the CPUs' own all-reduce: a ring across the M nodes on every NIC of the node), and each rank
copies the result back (host to device). For one bucket of ``S`` bytes, per rank:

- ``d2h = S / link`` and ``h2d = S / link``, the GPU's host link per direction: PCIe (NCCL's
  x16 estimate of the GPU's generation, shared by the GPUs behind one switch) or, on Grace,
  NVLink-C2C (:class:`offload.HostPath`);
- ``cpu = (3G + 1) S / host_memory``: the G copies written, read and reduced, the sum written
  once and read back by the G ranks, over the node's memory bandwidth (all ranks share it);
- ``net = 2 (M − 1)/M · S / node_network + 2 (M − 1) α`` across M > 1 nodes (ring all-reduce
  of the node-reduced gradient, the formula registry's ring on the NIC link's rates).

The transfers are chunked and pipelined (copy engines, CPU threads and NICs work on different
chunks at once), so a bucket takes its slowest stage plus one chunk's latency: ``max(d2h, h2d,
cpu, net)``. An assumption, stated as such: the stages' sum would bound it from above.
Copies run on the GPUs' copy engines, not on SMs, so hidden host reduction slows compute only
through memory contention, like RDMA (:mod:`costmodel.training.transport`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from costmodel.training.offload import HostPath
from dpbase.errors import InputError

CommFn = Callable[[str, float], float]


def host_allreduce_s(size_bytes: float, host: HostPath, gpus_per_node: int, nodes: int,
                     network_s: Callable[[float], float] | None = None) -> float:
    """One rank's time to all-reduce ``size_bytes`` through host memory (see the module docstring)."""
    if size_bytes <= 0:
        return 0.0
    g = gpus_per_node
    d2h = h2d = size_bytes / host.host_link_Bps
    cpu = (3 * g + 1) * size_bytes / (host.memory_Bps * g)  # memory_Bps is one rank's share
    net = network_s(size_bytes) if nodes > 1 and network_s is not None else 0.0
    return max(d2h, h2d, cpu, net)


def network_ring_s(system: Any, nodes: int) -> Callable[[float], float]:
    """The nodes' CPU ring all-reduce on every NIC of a node (the registry's ring formula)."""
    from costmodel.cluster.mapping import layout
    from costmodel.collectives.api import predict

    link = system.nic_link
    bandwidth = layout(system, nodes).node_network_Bps  # every NIC, at its efficiency, through the fabric

    def seconds(size_bytes: float) -> float:
        return predict("all-reduce", "ring", ranks=nodes, size_bytes=size_bytes, alpha_s=link.latency_s,
                       bandwidth_Bps=bandwidth).time_s

    return seconds


def host_comm(system: Any, gpus_per_node: int, nodes: int, host: HostPath) -> CommFn:
    """``comm(primitive, size)`` for a ZeRO-0 gradient sync through host memory."""
    network = network_ring_s(system, nodes) if nodes > 1 else None

    def comm(primitive: str, size_bytes: float) -> float:
        if primitive != "all-reduce":
            raise InputError("host_reduce", True, "only the all-reduce of ZeRO-0 data parallelism "
                                                  f"(a host-memory reduction has no {primitive})")
        return host_allreduce_s(size_bytes, host, gpus_per_node, nodes, network)

    return comm
