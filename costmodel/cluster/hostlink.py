"""A GPU's link to its host's memory, as the ideal mapping reaches dedicated servers in one node."""

from __future__ import annotations

from typing import Any


def host_link(lay: Any) -> tuple[float, float, str]:
    """(α, bandwidth, name), for a ``mapping.Layout``, of a GPU's link to its host, where dedicated servers in one node (or
    one NVLink domain) live: the node's CPUs, which no GPU reaches over NVLink or NVSwitch (seed
    002: every NPU sends its gradient to the CPU). Grace's NVLink-C2C where the GPU has one
    (``host_link_bandwidth``), else the GPU's PCIe generation at its efficiency, shared by the GPUs
    behind one switch uplink (``pcie_switch_gpus``), as the host-memory paths count it."""
    from hardware import load_link

    gpu = lay.system.gpu
    pcie = load_link(f"pcie{gpu.pcie_gen}")
    if gpu.host_link_bandwidth_Bps:
        return pcie.latency_s, gpu.host_link_bandwidth_Bps, "nvlink-c2c"
    sharers = min(lay.system.pcie_switch_gpus, lay.gpus_per_node)
    return pcie.latency_s, pcie.bandwidth_Bps * pcie.efficiency / sharers, pcie.name
