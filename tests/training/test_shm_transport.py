"""One node without peer-to-peer (NCCL's SHM transport through host memory) hides nothing behind
backward, as NCCL's TCP sockets do (costmodel.training.transport; 2026-11-30)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import costmodel
import hardware
from cli import app
from costmodel.training import losses, transport
from dpbase.errors import InputError


@pytest.mark.parametrize(("system", "nodes", "expected"), [
    ("rtx2080ti-2x-pcie", 1, transport.SHM), ("rtx4090-8x-pcie", 1, transport.SHM),
    ("rtx4090-8x-pcie-p2p", 1, transport.LOCAL), ("dgx-h100", 1, transport.LOCAL), ("dgx-h100", 2, transport.RDMA),
    ("rtx4090-8x-pcie", 2, transport.TCP),  # across nodes the network's rule
])
def test_the_transport_of_a_node_without_peer_to_peer_is_shm(system, nodes, expected):
    assert transport.step_transport(hardware.load_system(system), nodes) == expected


def test_hidden_communication_costs_its_full_time_there():
    args = dict(micro_batch=56, compute_dtype="fp32")
    shm = costmodel.iteration("vgg16", "rtx2080ti-2x-pcie", **args)
    assert shm.transport == transport.SHM and shm.hidden_comm_s > 0.1
    assert shm.interference_s == pytest.approx(shm.hidden_comm_s * transport.TCP_OVERLAP_SLOWDOWN)
    p2p = costmodel.iteration("vgg16", "rtx4090-8x-pcie-p2p", gpus_per_node=2, **args)
    assert p2p.transport == transport.LOCAL
    assert p2p.interference_s == pytest.approx(p2p.hidden_comm_s * losses.OVERLAP_SLOWDOWN)
    # a host-memory reduction leaves no kernel resident: the RDMA slowdown, as over TCP
    import dataclasses

    known = dataclasses.replace(hardware.load_system("rtx2080ti-2x-pcie"), host_memory_bandwidth_Bps=50e9)
    host = costmodel.iteration("vgg16", known, host_reduce=True, **args)
    assert host.interference_s == pytest.approx(host.hidden_comm_s * losses.OVERLAP_SLOWDOWN)


def test_a_smaller_slowdown_given_there_is_refused_naming_why():
    result = CliRunner().invoke(app, ["iteration", "--model", "vgg16", "--cluster", "rtx2080ti-2x-pcie",
                                      "--micro-batch", "56", "--overlap-slowdown", "0.2"])
    assert result.exit_code == 2
    assert "rtx2080ti-2x-pcie (its GPUs have no peer-to-peer path)" in result.output and "SHM transport" in result.output
    with pytest.raises(InputError, match="overlap_slowdown"):
        transport.check_given_slowdown(transport.SHM, 0.2, "a node")


def test_the_planner_applies_the_same_rule():
    from costmodel.planner.recommend import plan

    result = plan("vgg16", "rtx4090-8x-pcie", nodes=1, global_batch=256, compute_dtype="fp32")
    row = result.best
    again = costmodel.iteration("vgg16", "rtx4090-8x-pcie", gpus_per_node=row.gpus_per_node, micro_batch=row.micro_batch,
                                accumulation_steps=row.accumulation_steps, compute_dtype="fp32",
                                zero_stage=row.zero_stage, bucket_bytes=row.bucket_bytes, grad_dtype=row.grad_dtype)
    assert row.total_s == pytest.approx(again.total_s, rel=1e-6)
    # the rule itself, which both sides would share unapplied too (the equality held before it; review)
    assert again.transport == transport.SHM and again.overlap_slowdown == 1.0


def test_one_gpu_has_nothing_to_hide_and_is_local():
    """A lone GPU of a node without peer-to-peer was given the SHM rule and its refusal (review)."""
    assert transport.step_transport(hardware.load_system("rtx4090-8x-pcie"), 1, 1) == transport.LOCAL
    assert costmodel.iteration("gpt2", "dgx-spark", micro_batch=4).transport == transport.LOCAL
    result = CliRunner().invoke(app, ["iteration", "--model", "gpt2", "--cluster", "rtx4090-8x-pcie", "--gpus", "1",
                                      "--micro-batch", "4", "--overlap-slowdown", "0.1"])
    assert result.exit_code == 0, result.output


def test_the_node_level_of_a_two_level_step_keeps_the_nodes_rule():
    """hpZ and qgZ on one node without peer-to-peer mixed the node level in at the RDMA slowdown
    (100 % → 73 %, review); every level of it is SHM, so the slowdown stays full."""
    for extra in ({}, {"shard": "hpz"}, {"shard": "hpz", "quantize_grads": 4}):
        step = costmodel.iteration("gpt2", "rtx4090-8x-pcie", micro_batch=4, zero_stage=3, **extra)
        assert step.overlap_slowdown == pytest.approx(1.0), extra
    assert transport.node_slowdown(hardware.load_system("dgx-h100"), 8, 0.189) == pytest.approx(0.189)
    assert transport.node_slowdown(hardware.load_system("rtx4090-8x-pcie"), 8, 0.189) == pytest.approx(1.0)
