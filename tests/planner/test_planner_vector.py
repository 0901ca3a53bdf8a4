"""The planner's vectorised precompute equals the scalar paths it replaces, number for number."""

from __future__ import annotations

import numpy as np
import pytest

import hardware
from costmodel.cluster import mapping as cluster
from costmodel.collectives.registry import entries
from costmodel.planner import grid
from costmodel.planner.comm import CommCache, all_reduce_algorithms, zero_algorithm_ok
from costmodel.planner.recommend import build_space
from costmodel.training import gradsync, memory, overlap, syncmodes
from costmodel.training.workloads import load_model
from dpbase.errors import DpcostError

MIB = 2**20
SYSTEMS = ("dgx-1", "dgx-a100", "dgx-h100", "l40s-tcp-1x", "gb200-nvl72-tray", "aws-p4d")
SIZES = np.array([0.0, 1.0, 7.0, 1024.0, 3.3e6, 25 * MIB, 4e8, 2.0**34])


def _layouts(system):
    per_node = system.gpus_per_node
    single = [cluster.layout(system, 1, g) for g in range(1, per_node + 1)]
    return single + [cluster.layout(system, n, per_node) for n in (2, 3, 5, 64)]


def _scalar_time(entry, lay, size):
    try:
        return cluster.predict_on_cluster(entry.primitive.value, entry.algorithm.value, lay,
                                          size_bytes=float(size)).time_s
    except DpcostError:
        return np.nan


@pytest.mark.parametrize("system_name", SYSTEMS)
def test_times_on_cluster_equals_predict_on_cluster_for_every_entry(system_name):
    system = hardware.load_system(system_name)
    lays = _layouts(system)
    for entry in entries():
        vector = cluster.times_on_cluster(entry.primitive.value, entry.algorithm.value, lays, SIZES)
        scalar = np.array([[_scalar_time(entry, lay, s) for s in SIZES] for lay in lays])
        assert np.array_equal(np.isnan(vector), np.isnan(scalar)), entry.key
        np.testing.assert_allclose(vector, scalar, rtol=1e-12, atol=0, err_msg=str(entry.key))


def _scalar_tables(system, space, workload, backend):
    """The planner's collective tables, one scalar sync_plan per configuration."""
    A, Z, D, U, _ = space.shape
    out = np.zeros((7, A, Z, D, U, len(space.layouts)))
    valid = np.zeros((A, Z, D, U, len(space.layouts)), dtype=bool)
    cache = CommCache(system, backend)
    for li, (nodes, per_node) in enumerate(space.layouts):
        for a, name in enumerate(space.algorithms):
            comm = cache.function(nodes, per_node, name)
            for z, stage in enumerate(space.zero_stages):
                if comm is None or (nodes * per_node == 1 and a > 0) or not zero_algorithm_ok(
                        name, stage, backend):
                    continue
                for d, dtype in enumerate(space.grad_dtypes):
                    precision = memory.precision_for(dtype)
                    for u, bucket in enumerate(space.bucket_bytes):
                        grad = workload.params * precision.grad_bytes
                        layout = syncmodes.call_layout(syncmodes.sync_setup("ddp", workload, grad, bucket_bytes=bucket),
                                                       workload, grad)
                        try:
                            plan = gradsync.sync_plan(comm, nodes * per_node, layout, precision,
                                                      zero_stage=stage)
                        except DpcostError:
                            continue
                        out[:, a, z, d, u, li] = [
                            plan.backward.first_s, plan.backward.full_s, plan.backward.last_s,
                            plan.forward.first_s, plan.forward.full_s, plan.forward.last_s,
                            plan.post_step_s]
                        valid[a, z, d, u, li] = True
    return out, valid


@pytest.mark.parametrize("system_name,nodes,backend", [
    ("dgx-h100", 3, "ideal"), ("dgx-a100", 2, "ideal"), ("dgx-1", 2, "ideal"),
    ("l40s-tcp-1x", 4, "ideal"), ("dgx-h100", 2, "nccl"), ("dgx-a100", 2, "nccl"),
])
def test_vector_comm_tables_equal_the_scalar_loop(system_name, nodes, backend):
    system = hardware.load_system(system_name)
    workload = load_model(1_300_000_000)
    space = build_space(system, nodes=nodes, global_batch=48, min_gpus=1,
                        max_gpus=nodes * system.gpus_per_node,
                        algorithms=all_reduce_algorithms(system, nodes, backend),
                        bucket_bytes=(1 * MIB, 25 * MIB, 3e9), grad_dtypes=("bf16", "fp32", "fp8"))
    tables = grid.comm_tables(system, space, workload, overlap.DDP_FIRST_BUCKET_BYTES, backend)
    out, valid = _scalar_tables(system, space, workload, backend)
    assert np.array_equal(tables.valid, valid)
    vector = np.stack([*tables.backward, *tables.forward, tables.post_step_s])
    np.testing.assert_allclose(vector, out, rtol=1e-12, atol=0)
    assert valid.any() and (~valid).any()


def test_comm_tables_report_progress_once_per_algorithm():
    system = hardware.load_system("dgx-h100")
    space = build_space(system, nodes=2, global_batch=16, min_gpus=1, max_gpus=16,
                        algorithms=("ring", "binomial", "double-binary-tree"),
                        bucket_bytes=(25 * MIB,), grad_dtypes=("bf16",))
    calls = []
    grid.comm_tables(system, space, load_model(10**9), overlap.DDP_FIRST_BUCKET_BYTES, "ideal",
                     on_algorithm=lambda: calls.append(1))
    assert len(calls) == 3


def test_finish_lines_equal_the_event_simulation():
    """The lines form of the closed form against the explicit per-bucket simulation."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        grad = float(rng.uniform(1e6, 5e9))
        bucket = float(rng.choice([1e6, 25 * MIB, 1e8, 4e9]))
        first = float(rng.choice([MIB, 5e6]))
        backward = float(rng.uniform(1e-3, 2.0))
        c1, c, cr = (float(x) for x in rng.uniform(1e-5, 0.5, 3))
        layout = overlap.bucket_layout(grad, bucket, first)
        sizes = overlap.bucket_sizes(grad, bucket, first)
        comm = [c1] + [c] * int(layout.full_count) + ([cr] if layout.last_bytes > 0 else [])
        end = overlap.simulate_bucket_schedule(backward, sizes, comm)[-1][2]
        lines = overlap.finish_lines(grad, layout, c1, c, cr)
        assert overlap.finish_at(backward, lines) == pytest.approx(end, rel=1e-9)
