"""A job on k of a mesh node's G GPUs uses only the links among them (hardware.System.intra_share):
both backends, with the arithmetic and DGX-1's measured GPU pair."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

import hardware
from costmodel.cluster.backends import predict_collective
from costmodel.cluster.mapping import layout, predict_on_cluster

VALIDATION = Path(__file__).resolve().parents[1] / "data" / "validation"


def test_share_arithmetic():
    dgx1, mi300x, h100 = (hardware.load_system(n) for n in ("dgx-1", "mi300x-8x", "dgx-h100"))
    assert dgx1.intra_links == 6 and mi300x.intra_links == 7
    assert dgx1.intra_share(2) == pytest.approx(1 / 6)  # one NVLink: at least the pair's own link
    # GPUs 0-3 are a quad of DGX-1's hybrid cube-mesh (mesh_links): GPUs 0 and 1 have 4 of their 6
    # links in it, 2 and 3 have 5 (the even spread over 7 peers gave 3/7: the mean over groups)
    assert dgx1.intra_share(4) == pytest.approx(4 / 6)
    assert dgx1.intra_share(6) == pytest.approx(3 / 6)  # GPU 4 reaches 0 (NV2) and 5 (NV1) among 0-5
    p100 = hardware.load_system("dgx-1-p100")
    assert p100.intra_share(4) == pytest.approx(3 / 4) and p100.intra_share(2) == pytest.approx(1 / 4)
    # GPUs with unequal links (a p3.8xlarge's quad: 4, 4, 5, 5): the share is of the fewest-linked GPU's
    # links, which the intra bandwidth is; GPUs 0 and 1 share one of GPU 0's four
    p3 = hardware.load_system("aws-p3.8xlarge")
    assert p3.intra_links == 4 and p3.intra_share(2) == pytest.approx(1 / 4) and p3.intra_share(3) == pytest.approx(2 / 4)
    abci = hardware.load_system("v100-abci-4x")  # no matrix: a fully connected mesh, spread evenly
    assert abci.intra_share(2) == pytest.approx(1 / 3) and abci.intra_share(3) == pytest.approx(2 / 3)
    assert dgx1.intra_share(8) == 1.0 and dgx1.intra_share(1) == 1.0
    assert mi300x.intra_share(2) == pytest.approx(1 / 7) and mi300x.intra_share(4) == pytest.approx(3 / 7)
    assert h100.intra_share(2) == 1.0  # NVSwitch: any subset gets every link


def test_alpha_beta_ring_on_two_mi300x_gets_one_xgmi_link():
    system = hardware.load_system("mi300x-8x")
    two = predict_on_cluster("all-reduce", "ring", layout(system, 1, 2), size_bytes=2**34)
    assert two.busbw_Bps == pytest.approx(system.achievable_intra_bandwidth_Bps / 7, rel=1e-3)
    eight = predict_on_cluster("all-reduce", "ring", layout(system, 1, 8), size_bytes=2**34)
    assert eight.busbw_Bps > 6 * two.busbw_Bps


def _nv1_pair_busbw_GBps() -> float:
    with (VALIDATION / "v100sxm2_2gpu_pairs_nvlink1_2_none_allreduce_32MB.csv").open() as handle:
        for row in csv.DictReader(handle):
            if "CUDA_VISIBLE_DEVICES=0,2, NCCL_P2P_DISABLE=0" in row["source"]:
                return float(row["busbw_gbs_oop"])
    raise AssertionError("the NV1 pair row is missing")


def test_nccl_mode_on_two_dgx1_gpus_is_one_nvlink_as_measured():
    """GPUs 0 and 1 of a DGX-1V share one NVLink (NV1), like the measured pair 0-2: 21.9 GB/s
    busbw at 32 MB. Before the share, NCCL mode gave the pair all six links (116 GB/s)."""
    system = hardware.load_system("dgx-1")
    found = predict_collective("all-reduce", 32 * 2**20, layout(system, 1, 2), backend="nccl")[0]
    assert found.busbw_Bps / 1e9 == pytest.approx(_nv1_pair_busbw_GBps(), rel=0.15)
    four = predict_collective("all-reduce", 32 * 2**20, layout(system, 1, 4), backend="nccl")[0]
    eight = predict_collective("all-reduce", 32 * 2**20, layout(system, 1, 8), backend="nccl")[0]
    assert found.busbw_Bps < four.busbw_Bps < eight.busbw_Bps


def test_a_p100_mesh_counts_four_nvlink1_links():
    """P100 has four NVLink 1.0 links of 20 GB/s (NCCL: 18 GB/s effective at SM60); with the
    NVLink 2.0 profile a DGX-1 P100's 80 GB/s counted as three 25 GB/s links."""
    import dataclasses

    from costmodel.nccl import load_tables
    from costmodel.nccl.search import intra_gpu_bandwidth

    p100 = hardware.load_gpu("p100-sxm2")
    assert p100.scaleup_link.name == "nvlink1"
    system = dataclasses.replace(hardware.load_system("dgx-1"), gpu=p100, intra_bandwidth_Bps=80e9,
                                 intra_link=hardware.load_link("nvlink1-x4"),
                                 mesh_links=hardware.load_system("dgx-1-p100").mesh_links)  # the P100 board's
    assert system.intra_links == 4
    assert system.intra_share(2) == pytest.approx(1 / 4)
    path, total, _ = intra_gpu_bandwidth(system, load_tables(), 8)
    assert (path, total) == ("NVLINK", pytest.approx(4 * 18.0))


@pytest.mark.parametrize(("matrix", "fabric", "needle"), [
    ([[0, 1], [1, 0]], "nvlink-mesh", "one row per GPU (4)"),
    ([[1, 1, 1, 1], [1, 0, 1, 1], [1, 1, 0, 1], [1, 1, 1, 0]], "nvlink-mesh", "no links from a GPU to itself"),
    ([[0, 2, 1, 1], [1, 0, 1, 1], [1, 1, 0, 1], [1, 1, 1, 0]], "nvlink-mesh", "a symmetric matrix"),
    ([[0, 1, 1, 1], [1, 0, 1, 1], [1, 1, 0, 1], [1, 1, 1, 0]], "pcie", "a mesh fabric"),
    ([[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]], "nvlink-mesh", "at least one link on every GPU"),
    ([[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]], "nvlink-mesh", "at least one link on every GPU"),
    ([[0, -1], [-1, 0]], "nvlink-mesh", "a square list of lists of link counts >= 0"),
])
def test_a_mesh_matrix_that_cannot_be_a_node_is_refused_naming_the_field(tmp_path, matrix, fabric, needle):
    from dpbase.errors import ProfileError

    rows = ", ".join("[" + ", ".join(map(str, row)) + "]" for row in matrix)
    path = tmp_path / "mine.toml"
    path.write_text(f'''[[system]]
name = "my-mesh"
description = "four V100s"
source = "test"
gpu = "v100-sxm2-16gb"
gpus_per_node = 4
intra_fabric = "{fabric}"
nvswitch_gen = 0
intra_link = "nvlink2-x6"
intra_bandwidth = "75GB/s"
nics_per_node = 1
nic_link = "ib-edr"
nic_bandwidth = "100Gbps"
rail_optimized = false
in_network_reduction = ""
cpu_vendor = "intel"
p2p = true
mesh_links = [{rows}]
''', encoding="utf-8")
    with pytest.raises(ProfileError, match="mesh_links") as raised:
        hardware.load_system(str(path))
    assert needle in str(raised.value)
