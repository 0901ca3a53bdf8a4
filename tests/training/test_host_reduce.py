"""--host-reduce: the gradient all-reduce through host memory (costmodel.training.hostreduce),
by hand and through the iteration model on a real cluster."""

from __future__ import annotations

import pytest

import hardware
from costmodel.cluster.comm import comm_model
from costmodel.collectives.api import predict
from costmodel.training import hostreduce, losses, overlap
from costmodel.training.iteration import TrainingConfig, iteration_breakdown
from costmodel.training.memory import precision_for
from costmodel.training.offload import HostPath, host_path
from costmodel.training.workloads import load_model
from dpbase.errors import InputError


def test_one_bucket_by_hand():
    """8 GPUs, two behind each PCIe Gen3 switch (12/2 GB/s each way), 153.6 GB/s of host memory:
    1 GB takes max(d2h 1/6, h2d 1/6, cpu 25/153.6) s = 1/6 s: PCIe bound."""
    host = HostPath(memory_Bps=153.6e9 / 8, host_link_Bps=6e9)
    assert hostreduce.host_allreduce_s(1e9, host, 8, 1) == pytest.approx(1 / 6)
    slow_memory = HostPath(memory_Bps=20e9 / 8, host_link_Bps=6e9)  # (3·8 + 1) GB over 20 GB/s
    assert hostreduce.host_allreduce_s(1e9, slow_memory, 8, 1) == pytest.approx(25 / 20)
    assert hostreduce.host_allreduce_s(0.0, host, 8, 1) == 0.0


def test_across_nodes_the_cpus_run_a_ring_on_every_nic():
    system = hardware.load_system("dgx-1")
    network = hostreduce.network_ring_s(system, 4)
    bandwidth = system.node_network_Bps * system.nic_link.efficiency / system.oversubscription  # dgx-1: not rail-optimised
    expected = predict("all-reduce", "ring", ranks=4, size_bytes=2e9, alpha_s=system.nic_link.latency_s,
                       bandwidth_Bps=bandwidth).time_s
    assert network(2e9) == pytest.approx(expected)
    host = host_path(system, 8)
    assert hostreduce.host_allreduce_s(2e9, host, 8, 4, network) == pytest.approx(
        max(2e9 / host.host_link_Bps, 25 * 2e9 / (host.memory_Bps * 8), expected))


def test_iteration_on_dgx1_sums_the_buckets_and_keeps_the_rdma_slowdown():
    system = hardware.load_system("dgx-1")
    workload = load_model("resnet-50")
    config = TrainingConfig(micro_batch=64, compute_dtype="fp32", grad_dtype="fp32", optimizer="sgd",
                            host_reduce=True)
    comm = comm_model(system, 1)
    result = iteration_breakdown(workload, system.gpu, comm.time_s, comm.ranks, config)
    host = host_path(system, 8)
    grads = workload.params * precision_for("fp32").grad_bytes
    sizes = overlap.bucket_sizes(grads, result.bucket_bytes, result.first_bucket_bytes)
    assert result.comm_s == pytest.approx(sum(hostreduce.host_allreduce_s(s, host, 8, 1) for s in sizes))
    assert result.interference_s == pytest.approx(losses.OVERLAP_SLOWDOWN * result.hidden_comm_s)
    nccl = iteration_breakdown(workload, system.gpu, comm.time_s, comm.ranks,
                               TrainingConfig(micro_batch=64, compute_dtype="fp32", grad_dtype="fp32",
                                              optimizer="sgd"))
    assert result.comm_s > 3 * nccl.comm_s  # PCIe at 6 GB/s against NVLink


def test_host_reduce_is_refused_where_it_means_nothing():
    system = hardware.load_system("dgx-1")
    comm = comm_model(system, 1)
    with pytest.raises(InputError, match="host_reduce"):
        iteration_breakdown(load_model("gpt2"), system.gpu, comm.time_s, comm.ranks,
                            TrainingConfig(micro_batch=4, host_reduce=True, zero_stage=1))
    with pytest.raises(InputError, match="host path"):
        iteration_breakdown(load_model("gpt2"), system.gpu, lambda p, s: 1e-3, 8,
                            TrainingConfig(micro_batch=4, host_reduce=True))
