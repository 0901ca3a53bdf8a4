"""A GPU's link to its host's memory, as the ideal mapping reaches dedicated servers in one node."""

from __future__ import annotations

from typing import Any


def host_link(lay: Any) -> tuple[float, float, str]:
    """(α, bandwidth, name), for a ``mapping.Layout``, of a GPU's link to its host, where dedicated
    servers in one node (or one NVLink domain) live: the node's CPUs, which no GPU reaches over
    NVLink or NVSwitch (seed 002: every NPU sends its gradient to the CPU). The bandwidth is the one
    rule the host-memory paths use (:func:`costmodel.nccl.search.host_link_GBps` shared by
    :func:`~costmodel.nccl.search.host_link_sharers`: Grace's NVLink-C2C, else the GPU's PCIe link
    as NCCL counts it); the latency a PCIe hop's (generations beyond the bundled links' take the
    newest, as NCCL's table caps them)."""
    from hardware import load_link

    system = lay.system
    bandwidth_Bps = host_link_Bps(system, lay.gpus_per_node)
    pcie = load_link(f"pcie{min(max(int(system.gpu.pcie_gen), MIN_PCIE_GEN), MAX_PCIE_GEN)}")
    name = "nvlink-c2c" if system.gpu.host_link_bandwidth_Bps else f"pcie{system.gpu.pcie_gen}"
    return pcie.latency_s, float(bandwidth_Bps), name


MIN_PCIE_GEN, MAX_PCIE_GEN = 3, 5  # the PCIe links hardware/data/links.toml holds


def host_link_Bps(system: Any, sharing: Any) -> Any:
    """One GPU's link to host memory per direction when ``sharing`` of a node's GPUs copy at once
    (elementwise over ``sharing``): NCCL's estimate of the GPU's host link
    (:func:`costmodel.nccl.search.host_link_GBps`) over the GPUs behind one switch uplink
    (:func:`~costmodel.nccl.search.host_link_sharers`). The one rule for optimizer offload, the
    host-memory all-reduce and dedicated servers in one node."""
    from costmodel.nccl.search import host_link_GBps, host_link_sharers
    from costmodel.nccl.tables import load_tables

    return host_link_GBps(system, load_tables()) * 1e9 / host_link_sharers(system, sharing)

