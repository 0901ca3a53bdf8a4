"""NCCL mode on a user's links slower than NCCL's constants: the time follows the profile.

NCCL's search counts links at its own per-link rate and, where no ladder speed fits, falls back
to one channel at its slowest speed; a profile with 1e-4 GB/s NICs gave the same 15.64 s as one
with 0.1 GB/s (faster than the 8 NICs carry together), and an intra bandwidth of 1e-6, 1 or 12
GB/s the same 90.31 ms on one node (review, 2026-11-28)."""

from __future__ import annotations

import pytest

import hardware
from costmodel.cluster.comm import comm_model
from dpbase.values import replace

SIZE = 1e9


def _time(system, nodes: int, backend: str = "auto") -> float:
    return comm_model(system, nodes, backend=backend).time_s("all-reduce", SIZE)


def test_a_slower_network_is_never_faster():
    system = hardware.load_system("dgx-h100")
    rates = (1e5, 1e6, 1e7, 1e8, 1e9, 12.5e9, 50e9)
    times = [_time(replace(system, nic_bandwidth_Bps=rate), 2) for rate in rates]
    assert all(slow > fast for slow, fast in zip(times, times[1:]))
    for rate, seconds in zip(rates, times):  # a ring across 2 nodes sends ~the size through the NICs
        assert seconds >= SIZE / (system.nics_per_node * rate) * 0.99


@pytest.mark.parametrize("cluster", ["dgx-h100", "dgx-1"])
def test_a_slower_nvlink_is_never_faster(cluster):
    system = hardware.load_system(cluster)
    rates = (1e3, 1e9, 12e9, 25e9, 100e9, system.intra_bandwidth_Bps)
    times = [_time(replace(system, intra_bandwidth_Bps=rate), 1) for rate in rates]
    assert all(slow > fast for slow, fast in zip(times, times[1:]))
    for rate, seconds in zip(rates, times):  # every GPU sends its data once, even through NVLS's switch
        assert seconds >= SIZE / rate * 0.99


@pytest.mark.parametrize("cluster", ["l40s-4x-pcie", "rtx4090-8x-pcie", "rtx4090-8x-pcie-p2p", "rtx2080ti-2x-pcie"])
def test_a_pcie_node_follows_its_profile_bandwidth(cluster):
    """A PCIe node's intra bandwidth scales NCCL's rate for the GPU's generation (review,
    2026-11-29: 8 GB/s gave the same 103.3 ms for 1 GiB as the bundled 31.5 GB/s, so a what-if
    on intra bandwidth said "unchanged"); the bundled value keeps NCCL's own rate."""
    from costmodel.nccl.search import gpu_pcie_GBps, pci_bandwidth_GBps
    from costmodel.nccl.tables import load_tables

    system = hardware.load_system(cluster)
    t = load_tables()
    assert gpu_pcie_GBps(system, t) == pci_bandwidth_GBps(system.gpu.pcie_gen, t)
    nominal = system.intra_bandwidth_Bps
    rates = (nominal / 4, nominal / 2, nominal, 2 * nominal)
    times = [_time(replace(system, intra_bandwidth_Bps=rate), 1) for rate in rates]
    assert all(slow > fast for slow, fast in zip(times, times[1:]))
    # halving the PCIe links at least nearly doubles the bandwidth-bound 1 GB all-reduce
    assert times[1] / times[2] > 1.8
