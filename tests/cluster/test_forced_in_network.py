"""`--algorithm in-network` under NCCL's model is NCCL's in-network family, and a topology
without one says so in the user's words.

Found by a QA pass (2026-11-28): the registry's in-network was forced as NCCL's NVLS alone, so on
two DGX H100 nodes (where NCCL runs NVLS tree) it failed with `algorithm/protocol: got
'nvls/auto'`, the error every topology without NVLS gave too."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import hardware
from cli import app
from costmodel.cluster import comm as cluster_comm
from costmodel.nccl.names import FAMILIES, to_nccl_algorithm
from dpbase.errors import NotApplicableError

runner = CliRunner()


@pytest.mark.parametrize(("nodes", "expected"), [(1, "nvls"), (2, "nvls_tree")])
def test_in_network_runs_what_nccl_runs_in_the_network(nodes, expected):
    model = cluster_comm.comm_model(hardware.load_system("dgx-h100"), nodes, 8, algorithm="in-network",
                                    backend="nccl")
    found = model.choose("all-reduce", 256 * 2**20)
    assert found.algorithm == expected and found.time_s > 0
    auto = cluster_comm.comm_model(hardware.load_system("dgx-h100"), nodes, 8, backend="nccl")
    assert found.time_s >= auto.choose("all-reduce", 256 * 2**20).time_s  # auto takes the fastest of all


def test_the_family_is_nccls_in_network_algorithms():
    assert to_nccl_algorithm("in-network") == "in-network" and set(FAMILIES["in-network"]) == {
        "nvls", "nvls_tree", "collnet_direct", "collnet_chain"}
    assert to_nccl_algorithm("double-binary-tree") == "tree" and to_nccl_algorithm("NVLSTree") == "nvls_tree"


def test_a_topology_without_it_names_the_users_algorithm_and_what_runs():
    model = cluster_comm.comm_model(hardware.load_system("dgx-1-p100"), 1, 8, algorithm="in-network", backend="nccl")
    with pytest.raises(NotApplicableError) as raised:
        model.choose("all-reduce", 2**20)
    assert raised.value.field == "algorithm" and raised.value.value == "in-network"
    assert "dgx-1-p100: auto, double-binary-tree, ring" in str(raised.value)
    result = runner.invoke(app, ["iteration", "--model", "gpt2", "--cluster", "dgx-1-p100", "--micro-batch", "8",
                                 "--algorithm", "in-network"])
    assert result.exit_code == 2 and result.stderr.startswith("error: algorithm: got 'in-network'")
    assert "nvls" not in result.stderr


def test_a_measured_nvls_curve_answers_in_network():
    """A calibrated cluster's NVLS curve answers `--algorithm in-network` (it stopped matching when
    in-network became NCCL's family, review of 2026-11-28)."""
    from dpbase.values import replace
    from hardware.profiles import MeasuredCurve, Regime

    curve = MeasuredCurve(collective="all-reduce", algorithm="nvls", nodes=1, gpus_per_node=8,
                          regimes=(Regime(max_size_bytes=1e12, latency_s=20e-6, bandwidth_Bps=100e9),),
                          min_size_bytes=1e3, max_size_bytes=1e10, median_error=0.02, source="test")
    system = replace(hardware.load_system("dgx-h100"), measured=(curve,))
    found = cluster_comm.comm_model(system, 1, 8, algorithm="in-network", backend="nccl").choose(
        "all-reduce", 256 * 2**20)
    assert found.source == "measured" and found.time_s == pytest.approx(20e-6 + 256 * 2**20 / 100e9, rel=1e-9)


def test_nccls_printed_names_are_accepted():
    """`collective` prints nvls_tree on two DGX H100 nodes; that name is accepted back (it was
    refused with the textbook list, QA pass 2026-11-28): NCCL's in-network family, as in-network."""
    result = runner.invoke(app, ["collective", "all-reduce", "--cluster", "dgx-h100", "--nodes", "2", "--size", "1GB",
                                 "--algorithm", "nvls_tree", "--json"])
    assert result.exit_code == 0, result.output
    assert __import__("json").loads(result.stdout)["algorithm"] == "nvls_tree"


def test_every_member_of_the_family_is_read_as_in_network():
    from costmodel.names import Algorithm, algorithm_named

    for family, members in FAMILIES.items():
        for member in members:
            assert algorithm_named(member) is Algorithm(family), member
