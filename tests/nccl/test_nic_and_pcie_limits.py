"""NCCL mode respects a node's NIC count (NVLS-tree) and its PCIe links (rings across nodes).

Two reviewer profiles that validate with ``dpcost hardware validate``:

* ``h100_one_nic.toml``: a DGX H100 copied with ``nics_per_node = 1``. NCCL's multi-node NVLS
  search makes one head (channel) per NIC (search.cc ``ncclTopoSearchRecNet``: a channel only
  while ``nChannels < netCount``, from a NIC's local GPU), and its tuning drops NVLS/NVLS-tree
  below two channels (tuning.cc ``ncclTopoTuneModel``). The model used to give NVLS-tree 8
  channels and 450 GB/s busbw, as with 8 NICs.
* ``l40s_8x_pcie_4nic.toml`` (P2P, PXB) and ``..._shm.toml`` (``pcie_path = "NODE"``: SHM
  through host memory): 8 x L40S on PCIe Gen4 with 4 x 400G NICs. A ring across nodes still
  runs GPU to GPU inside each node over the same PCIe links, so it never beats one node; the
  model used to search 8 x 24 GB/s channels (16 x 12 through host memory) and run 8x faster on
  two nodes than on one.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from costmodel.nccl import load_tables, nccl_time, topology_for
from costmodel.nccl.search import pci_bandwidth_GBps
from costmodel.nccl.tuning import tune_collective
from hardware import load_system

DATA = Path(__file__).resolve().parents[1] / "data" / "hardware"
GiB = 2**30
T = load_tables()


def _system(name):
    return load_system(DATA / name)


def _busbw_GBps(system, nodes, algorithm="auto"):
    return nccl_time("all-reduce", GiB, topology_for(system, nodes), T, algorithm).busbw_Bps / 1e9


def test_one_nic_leaves_nvls_tree_one_channel_so_nccl_drops_it():
    topo = topology_for(_system("h100_one_nic.toml"), nodes=2)
    assert topo.nvls is not None and topo.nvls.n_channels == 1
    assert not topo.nvls_capable
    assert not tune_collective("all-reduce", topo, T)[("nvls_tree", "Simple")].applicable


@pytest.mark.parametrize("nodes", [2, 4])
def test_one_nic_all_reduce_busbw_within_one_nic(nodes):
    system = _system("h100_one_nic.toml")
    prediction = nccl_time("all-reduce", GiB, topology_for(system, nodes), T)
    assert prediction.algorithm != "nvls_tree"
    # A ring's busbw is what each node's one NIC carries: 50 GB/s, not the 450 GB/s of eight NICs.
    # A tree on two nodes (NCCL's pass 2 raises its bwIntra to twice the NIC's share) moves each
    # byte once each way through the NIC: its algbw, not its busbw, is the NIC's.
    if prediction.algorithm == "tree" and nodes == 2:
        assert prediction.size_bytes / prediction.time_s <= system.nic_bandwidth_Bps
    else:
        assert prediction.busbw_Bps <= system.nic_bandwidth_Bps


@pytest.mark.parametrize("nics", [2, 4, 8])
def test_nvls_tree_channels_and_busbw_follow_the_nic_count(nics):
    system = dataclasses.replace(_system("h100_one_nic.toml"), nics_per_node=nics)
    topo = topology_for(system, nodes=2)
    assert topo.nvls.n_channels == nics and topo.nvls_capable
    busbw = _busbw_GBps(system, 2, "nvls_tree")
    # Two nodes: each node sends and receives the reduced buffer over its NICs once, so
    # busbw = 2 (N-1)/N x size / time stays under twice the node's NIC rate.
    assert busbw <= 2 * nics * system.nic_bandwidth_Bps / 1e9
    if nics > 2:
        fewer = dataclasses.replace(system, nics_per_node=nics // 2)
        assert busbw > _busbw_GBps(fewer, 2, "nvls_tree")


def test_bundled_dgx_h100_nvls_heads_unchanged():
    dgx = load_system("dgx-h100")
    assert topology_for(dgx, nodes=2).nvls.n_channels == 8
    assert topology_for(dgx, nodes=2, gpus_per_node=4).nvls.n_channels == 4


PCIE = ["l40s_8x_pcie_4nic.toml", "l40s_8x_pcie_4nic_shm.toml"]


@pytest.mark.parametrize("name", PCIE)
def test_pcie_ring_graph_across_nodes_within_the_node_total(name):
    system = _system(name)
    one = topology_for(system, 1).ring
    for nodes in (2, 4):
        ring = topology_for(system, nodes).ring
        assert ring.n_channels * ring.bw_inter_GBps <= one.n_channels * one.bw_intra_GBps + 1e-9
        assert ring.n_channels * ring.bw_inter_GBps <= pci_bandwidth_GBps(system.gpu.pcie_gen, T)


@pytest.mark.parametrize("name", PCIE)
def test_pcie_all_reduce_no_faster_on_more_nodes(name):
    system = _system(name)
    one = nccl_time("all-reduce", GiB, topology_for(system, 1), T)
    one_busbw = one.busbw_Bps / 1e9
    for nodes in (2, 4):
        more = nccl_time("all-reduce", GiB, topology_for(system, nodes), T)
        assert more.time_s >= one.time_s
        # Never above the node's own intra-node per-GPU rate (nor the GPU's PCIe x16 link).
        assert more.busbw_Bps / 1e9 <= one_busbw * (1 + 1e-9)
        assert more.busbw_Bps / 1e9 <= pci_bandwidth_GBps(system.gpu.pcie_gen, T)


def test_pcie_two_nodes_not_faster_than_the_ideal_backend():
    path = str(DATA / "l40s_8x_pcie_4nic.toml")
    runner = CliRunner()

    def run(*extra):
        result = runner.invoke(app, ["collective", "all-reduce", "--cluster", path, "--nodes", "2",
                                     "--size", "1GiB", "--json", *extra])
        assert result.exit_code == 0, result.output
        return json.loads(result.output)

    nccl, ideal = run(), run("--backend", "ideal")
    assert nccl["backend"] == "nccl" and nccl["time_s"] >= ideal["time_s"]


def _nvlink_systems():
    import hardware

    return [s for s in hardware.list_profiles("system") if s.gpu.vendor.lower() == "nvidia"
            and s.gpu.compute_capability >= 60 and s.gpus_per_node > 1
            and s.intra_fabric in ("nvswitch", "nvlink-mesh", "nvlink-bridge")]


@pytest.mark.parametrize("system", _nvlink_systems(), ids=lambda s: s.name)
def test_ring_across_nodes_within_each_gpus_nvlink(system):
    """Every channel of a ring across nodes leaves each GPU over NVLink but its last (which sends to
    its NIC): with a NIC per GPU a GPU's links carry (ppn - 1) / ppn of the channels, otherwise all.
    An audit (2026-11-30) found two H800 nodes' ring at 365 GB/s busbw, 2.4x one node's: the
    NVLink total had been raised to the NICs' aggregate."""
    from costmodel.nccl.search import intra_gpu_bandwidth

    ppn = system.gpus_per_node
    _, nvlink, _ = intra_gpu_bandwidth(system, T, ppn)
    ring = topology_for(system, 2).ring
    share = (ppn - 1) / ppn if system.nics_reached(ppn) >= ppn else 1.0
    assert ring.n_channels * ring.bw_intra_GBps * share <= nvlink + 1e-6, (system.name, ring, nvlink)


def test_two_h800_nodes_ring_bounded_by_their_nvlink():
    one, two = (nccl_time("all-reduce", GiB, topology_for(load_system("hgx-h800-8x"), nodes), T, algorithm="ring")
                for nodes in (1, 2))
    # the NICs add a path out of each GPU (1 in 8 channels): never more than 8/7 of one node's rate
    assert two.busbw_Bps <= one.busbw_Bps * 8 / 7 * (1 + 1e-9)
    assert two.busbw_Bps / 1e9 < 200
