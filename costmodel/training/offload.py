"""Optimizer CPU offload (ZeRO-Offload): the optimizer states and step live on the host.

Ren et al. 2021, "ZeRO-Offload: Democratizing Billion-Scale Model Training" (USENIX ATC), §4,
and DeepSpeed's ``zero_optimization.offload_optimizer: {device: cpu}`` (ZeRO stage >= 1): each
rank keeps its shard of the fp32 master weights and optimizer states in host memory. Per
optimizer step it

1. copies its gradient shard to the host as each bucket is reduce-scattered (device to host
   over its host link: PCIe, NVLink-C2C on Grace), inside the bucket's communication, so it
   overlaps with backward like the collective itself: ``bucket / N`` bytes per bucket;
2. runs the optimizer step on the CPU (DeepSpeed's SIMD ``DeepSpeedCPUAdam``): it streams the
   same bytes per parameter as the GPU step (``memory.optimizer_step_bytes_per_param``)
   through the host memory, whose bandwidth the node's ``G`` ranks share. At the CPUs'
   theoretical memory bandwidth this is a floor, as the GPU optimizer's HBM time is;
3. copies its updated parameter shard back (host to device, ``P/N`` weights), before the
   parameter all-gather.

Steps 2 and 3 sit on the critical path between backward and the next forward (DeepSpeed's
default; its "delayed parameter update" that overlaps them is not modelled). The GPU no longer
holds optimizer states or master weights.

PCIe bandwidth per GPU: NCCL's own estimate of a x16 link of the GPU's PCIe generation
(``nccl.search.pci_bandwidth_GBps``: Gen3 12, Gen4 24, Gen5 48, Gen6 96 GB/s, from NCCL's topo.cc),
at the profile's own PCIe bandwidth on a PCIe node (``nccl.search.gpu_pcie_GBps``), shared by the
GPUs behind one switch uplink (``pcie_switch_gpus``). A Grace-Blackwell GPU
reaches host memory over NVLink-C2C instead (``host_link_bandwidth``, 223.6 GB/s per GPU per
direction, ~4.7x its PCIe Gen5): ``nccl.search.host_link_GBps`` picks whichever the GPU has.
"""

from __future__ import annotations

from typing import Any

from dpbase.errors import InputError
from dpbase.values import frozen


@frozen(kw_only=True)
class HostPath:
    """What one rank gets of its node's host: memory and host-link (PCIe or NVLink-C2C) bandwidth, B/s."""

    memory_Bps: float  # the node's host memory bandwidth / the ranks per node sharing it
    host_link_Bps: float  # device <-> host per GPU per direction: PCIe, or NVLink-C2C on Grace
    system: str = ""


def host_path(system: Any, gpus_per_node=None, field: str = "offload_optimizer") -> HostPath:
    """The host path of one rank of ``system`` when ``gpus_per_node`` ranks (default: all its
    GPUs) share each node's host memory (refused, naming ``field``, where that memory's
    bandwidth is unknown). Elementwise over ``gpus_per_node`` (the planner's layouts): the
    fields are then arrays."""
    from costmodel.cluster.hostlink import host_link_Bps

    if not getattr(system, "host_memory_bandwidth_Bps", 0.0):
        raise InputError(field, True,
                         f"a system with host_memory_bandwidth set ({system.name} does not say its CPUs' "
                         "memory bandwidth; add host_memory_bandwidth = \"...GB/s\" to its TOML)")
    # the ranks copying at once: they share switch uplinks
    sharing = system.gpus_per_node if gpus_per_node is None else gpus_per_node
    link = host_link_Bps(system, sharing)
    return HostPath(memory_Bps=system.host_memory_bandwidth_Bps / sharing, host_link_Bps=link,
                    system=system.name)


def check(offload: bool, zero_stage, host: HostPath | None) -> None:
    """Offload needs ZeRO >= 1 (DeepSpeed offloads the partitioned optimizer) and a host path."""
    if not offload:
        return
    if zero_stage == 0:
        raise InputError("offload_optimizer", True, "only with --zero 1, 2 or 3 (DeepSpeed offloads ZeRO's shards)")
    if host is None:
        raise InputError("offload_optimizer", True, "a cluster (its host memory and PCIe bandwidth)")


def d2h_s_per_grad_byte(ranks, host: HostPath):
    """Seconds per gradient byte of a bucket to copy this rank's shard (1/N of it) to the host."""
    return 1.0 / (ranks * host.host_link_Bps)


def step_seconds(params, step_bytes_per_param, weight_bytes, ranks, memory_Bps, host_link_Bps):
    """(CPU optimizer step, host-to-device copy of the updated weights) of this rank's shard;
    elementwise on arrays. ``step_bytes_per_param``: :func:`memory.optimizer_step_bytes_per_param`."""
    shard = params / ranks
    return step_bytes_per_param * shard / memory_Bps, shard * weight_bytes / host_link_Bps
