"""Which transport carries the inter-node gradients, and what that changes in a training step.

One rule, :func:`link_transport`, reads the link profile's :attr:`hardware.Link.gpu_direct_access`:
its ``gpu_direct`` field where given, otherwise its category — InfiniBand, RoCE and EFA move data
by RDMA (GPUDirect: the NIC reads and writes GPU memory), Ethernet and TCP categories through
kernel sockets — and last its name (``tcp``/``socket`` in it means sockets). GPUDirect-TCPXO
(Google Cloud A3 Mega) is TCP on the wire and GPUDirect at the GPU: its NICs write payloads into
GPU memory, no CPU copies them, so it is ``rdma`` here.

What TCP changes at the iteration level (bandwidth and latency are the comm model's business,
set by the link profile): NCCL's socket transport stages every chunk through pinned host
memory, and its GPU kernels stay resident, spinning on host flags, for the whole transfer
while CPU proxy threads run the ``send``/``recv`` copies (NCCL ``transport/net_socket.cc``;
the NCCL documentation's "NCCL_NET" section). Communication hidden behind backward then
keeps SMs, PCIe and the host cores the input pipeline needs busy for its whole — long —
duration, so over TCP the overlap slowdown is taken as :data:`TCP_OVERLAP_SLOWDOWN`, i.e.
hidden communication is not free at all (an upper bound, stated as an assumption; RDMA keeps
:data:`costmodel.training.losses.OVERLAP_SLOWDOWN`). A host-memory (``--host-reduce``) path —
MPI/gloo reducing on the CPU, tf_cnn_benchmarks' parameter servers — is different: its copies
run on the GPUs' copy engines and its reduction and network exchange on the CPU, with no GPU
kernel resident, so it keeps the RDMA slowdown (memory contention only), on one node and across
nodes over TCP alike; its time is :mod:`costmodel.training.hostreduce`. So does a parameter
server (``--algorithm parameter-server``, synchronous or ``--async``): the framework's own
transport (TensorFlow's gRPC, MXNet's ps-lite) moves the gradients to and from the servers' host
memory through the copy engines and the CPUs, not NCCL's resident kernels.

Inside one node whose GPUs have no peer-to-peer path (a system with ``p2p = false``: GeForce and
other PCIe cards the driver gives no P2P), NCCL's SHM transport stages every chunk through host
memory the same way, and by default its GPU kernels do the copies themselves, reading and writing
mapped host memory over PCIe (``NCCL_SHM_USE_CUDA_MEMCPY`` defaults to 0, NVIDIA/nccl
``src/transport/shm.cc``; copy engines only when it is set): the kernels stay resident for the
whole — long, ~4 GB/s on PCIe 3 — transfer. So ``shm`` hides nothing either
(:data:`TCP_OVERLAP_SLOWDOWN`). The outside set's tf_cnn_benchmarks rows on such cards (Lambda's
VGG16 on RTX 2080 Ti: 28 % lost at two GPUs, against 4 % predicted with the RDMA slowdown) are
what showed it (docs/validation.md); no constant was fitted.
"""

from __future__ import annotations

from costmodel.names import Algorithm
from dpbase.errors import InputError

RDMA = "rdma"
TCP = "tcp"
SHM = "shm"  # one node without peer-to-peer: NCCL's SHM transport through host memory
LOCAL = "local"  # one node: no network transport
TRANSPORTS = (RDMA, TCP, SHM, LOCAL)
# Assumption (see the module docstring): over sockets hidden communication costs its full time.
TCP_OVERLAP_SLOWDOWN = 1.0


def link_transport(link) -> str:
    """``rdma`` (GPUDirect: the NIC reaches GPU memory) or ``tcp`` (sockets through host memory)
    for a network link profile: its :attr:`hardware.Link.gpu_direct_access`, the one rule."""
    return RDMA if link.gpu_direct_access else TCP


def step_transport(system, nodes: int, gpus_per_node: int | None = None) -> str:
    """The transport of a data-parallel group: on one node ``local``, or ``shm`` where its GPUs have
    no peer-to-peer path (the module docstring) and the group holds more than one of them
    (``gpus_per_node`` None: the node's); across nodes the NIC link's."""
    if nodes <= 1:
        alone = (system.gpus_per_node if gpus_per_node is None else gpus_per_node) <= 1
        return LOCAL if alone or getattr(system, "p2p", True) else SHM
    return link_transport(system.nic_link)


def node_slowdown(system, gpus_per_node: int, rdma_slowdown: float) -> float:
    """The overlap slowdown of collectives inside one node of ``system`` (the node level of a
    two-level step: hybrid sharding, hpZ, qgZ): the RDMA one, or full where the node has no
    peer-to-peer (:data:`SHM`). The one rule iteration and the planner read."""
    return overlap_slowdown_for(step_transport(system, 1, gpus_per_node), rdma_slowdown)


def off_the_gpu(algorithm: str, host_reduce: bool) -> bool:
    """Whether the gradients travel by a host-side path that leaves no GPU kernel waiting on the
    network: a host-memory reduction, or a parameter server (the module docstring)."""
    return host_reduce or algorithm == Algorithm.PARAMETER_SERVER.value


def two_level_slowdown(inside: float, network, across_share):
    """The overlap slowdown of collectives at two levels (hybrid sharding, hpZ, qgZ): each hides
    at its own level's, the node's ``inside`` and the network's ``network``, so the step's is
    their mean weighted by ``across_share``, the share of the collectives' seconds that crosses
    the network (an approximation: the hidden part holds the levels in the whole's
    proportions). Elementwise."""
    return inside + (network - inside) * across_share


def hides_nothing(transport: str, host_reduce: bool = False) -> bool:
    """Whether communication hidden behind compute still costs its full time: NCCL's TCP
    sockets and its SHM transport, whose kernels stay resident on the SMs for the whole transfer
    through host memory (see the module docstring). A host-side path (``host_reduce``:
    :func:`off_the_gpu`, a host-memory reduction or a parameter server) does not: its CPUs send,
    receive and reduce, its copies run on the copy engines, and no GPU kernel waits."""
    return transport in (TCP, SHM) and not host_reduce


def check_given_slowdown(transport: str, given: float, where: str, host_reduce: bool = False) -> float:
    """A slowdown the user typed, refused where :func:`overlap_slowdown_for` would raise it to
    :data:`TCP_OVERLAP_SLOWDOWN` (it would be ignored there, silently)."""
    if hides_nothing(transport, host_reduce) and given < TCP_OVERLAP_SLOWDOWN:
        raise InputError("overlap_slowdown", given, f"at least {TCP_OVERLAP_SLOWDOWN:g} (or left out) on {where}: over "
                         "NCCL's TCP sockets or its SHM transport (no peer-to-peer) hidden communication costs its "
                         "full time (a --host-reduce or parameter-server path keeps any slowdown)")
    return given


def overlap_slowdown_for(transport: str, rdma_slowdown: float, host_reduce: bool = False) -> float:
    """The overlap slowdown that applies: :data:`TCP_OVERLAP_SLOWDOWN` where the transport
    hides nothing (:func:`hides_nothing`), else ``rdma_slowdown`` (RDMA, one node, and a
    host-memory reduction, whose copy engines and CPUs leave the SMs free, on any network)."""
    if hides_nothing(transport, host_reduce):
        return max(rdma_slowdown, TCP_OVERLAP_SLOWDOWN)
    return rdma_slowdown
