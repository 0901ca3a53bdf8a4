"""The vectorised planner equals a brute-force loop over the scalar iteration API."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import hardware
from costmodel.cluster import mapping as cluster
from costmodel.cluster.comm import CommModel
from costmodel.collectives.registry import algorithms_for, get
from costmodel.planner.choose import TIE_BAND
from costmodel.planner.comm import NCCL_ALGORITHMS, CommCache
from costmodel.planner.recommend import plan
from costmodel.training.iteration import TrainingConfig, iteration_breakdown
from costmodel.training.workloads import load_model
from dpbase.errors import DpcostError

MIB = 2**20


def _brute_force(model, system, nodes_max, global_batch, seq_len, algorithms, buckets, dtypes,
                 recompute=False):
    """min total_s over every feasible configuration, one iteration_breakdown at a time."""
    workload, best = load_model(model), None
    counts = [(1, g) for g in range(1, system.gpus_per_node + 1)]
    counts += [(n, system.gpus_per_node) for n in range(2, nodes_max + 1)]
    for nodes, per_node in counts:
        ranks = nodes * per_node
        if global_batch % ranks:
            continue
        per_gpu = global_batch // ranks
        lay = cluster.layout(system, nodes, per_node)
        for algorithm, micro, zero, dtype, bucket in itertools.product(
                algorithms, range(1, per_gpu + 1), (0, 1, 2, 3), dtypes, buckets):
            if per_gpu % micro or not cluster.applicable(get("all-reduce", algorithm), lay):
                continue
            if zero and not _names_zero_collectives(algorithm):
                continue  # the planner's rule: ZeRO plans need an algorithm naming RS/AG
            config = TrainingConfig(micro_batch=micro, accumulation_steps=per_gpu // micro,
                                    seq_len=seq_len, grad_dtype=dtype, bucket_bytes=bucket,
                                    zero_stage=zero, recompute=recompute)
            comm = CommModel(lay, algorithm, "ideal").time_s
            b = iteration_breakdown(workload, system.gpu, comm, ranks, config)
            plain_fits = b.zero_totals_bytes[0] <= b.memory.capacity_bytes
            if b.memory.fits and (zero == 0 or not plain_fits):
                best = b if best is None or b.total_s < best.total_s else best
    return best


def _names_zero_collectives(algorithm):
    return algorithm in {a.value for p in ("reduce-scatter", "all-gather") for a in algorithms_for(p)}


@pytest.mark.parametrize("model,global_batch,seq_len,algorithms", [
    ("gpt2", 32, 512, ("ring", "double-binary-tree", "recursive-doubling", "hierarchical")),
    ("1.3B", 16, 2048, ("ring", "rabenseifner", "binomial")),
    ("llama2-7b", 8, 1024, ("recursive-doubling", "binomial")),  # needs ZeRO
])
def test_planner_choice_equals_brute_force_argmin(model, global_batch, seq_len, algorithms):
    system = hardware.load_system("dgx-h100")
    buckets, dtypes = (5 * MIB, 25 * MIB), ("bf16", "fp32")
    result = plan(model, system, nodes=2, global_batch=global_batch, seq_len=seq_len, backend="ideal",
                  algorithms=algorithms, bucket_bytes=buckets, grad_dtypes=dtypes,
                  tie_band=0.0, explain=False)
    brute = _brute_force(model, system, 2, global_batch, seq_len, algorithms, buckets, dtypes)
    best = result.best
    assert brute.zero_stage == best.zero_stage
    assert best.total_s == pytest.approx(brute.total_s, rel=1e-12)
    assert (best.gpus, best.micro_batch, best.accumulation_steps, best.zero_stage) == (
        brute.ranks, brute.micro_batch, brute.accumulation_steps, brute.zero_stage)
    assert best.memory_bytes == pytest.approx(brute.memory.total_bytes)
    assert best.scaling_efficiency == pytest.approx(brute.scaling_efficiency, rel=1e-12)


def test_zero_stages_only_when_plain_dp_does_not_fit():
    result = plan("llama2-7b", "dgx-h100", global_batch=16, seq_len=2048, explain=False,
                  tie_band=0.0, top=50)
    assert all(row.zero_stage > 0 for row in result.candidates)  # 7B x 16 B > 80 GB
    small = plan("gpt2", "dgx-h100", global_batch=16, seq_len=512, explain=False, top=50)
    assert all(row.zero_stage == 0 for row in small.candidates)


def test_tie_tolerance_keeps_the_best_within_tolerance_of_the_exact_argmin():
    exact = plan("1.3B", "dgx-h100", nodes=2, global_batch=64, explain=False, tie_band=0.0)
    tolerant = plan("1.3B", "dgx-h100", nodes=2, global_batch=64, explain=False)
    assert tolerant.best.total_s <= exact.best.total_s * (1 + TIE_BAND)
    assert tolerant.best.gpus <= exact.best.gpus


@pytest.mark.parametrize("backend,algorithm,nodes", [
    ("ideal", "ring", 2), ("ideal", "binomial", 4), ("ideal", "double-binary-tree", 1),
    ("nccl", "double-binary-tree", 2), ("nccl", "auto", 1),
])
def test_comm_cache_equals_comm_model(backend, algorithm, nodes):
    system = hardware.load_system("dgx-h100")
    comm = CommCache(system, backend).function(nodes, 8, algorithm)
    model = CommModel(cluster.layout(system, nodes, 8), algorithm, backend)
    for primitive, size in (("all-reduce", 1e6), ("all-reduce", 3e8), ("reduce-scatter", 25 * MIB),
                            ("all-gather", 5e7)):
        assert comm(primitive, size) == pytest.approx(model.time_s(primitive, size), rel=1e-12)


@pytest.mark.parametrize("backend", ["ideal", "nccl"])
@pytest.mark.parametrize("system_name,nodes", [("dgx-h100", 1), ("dgx-h100", 64), ("dgx-a100", 4)])
def test_batched_times_equal_comm_model(system_name, nodes, backend):
    """One batch over several layouts gives, row by row, CommModel's own times."""
    system = hardware.load_system(system_name)
    cache = CommCache(system, backend)
    layouts = [(nodes, 8), (1, 2), (1, 5)] + ([(2, 8), (3, 8)] if nodes > 1 else [])
    sizes = np.array([[1 * MIB, 3.3e6], [25 * MIB, 4e8]])
    names = NCCL_ALGORITHMS if backend == "nccl" else [a.value for a in algorithms_for("all-reduce")]
    for algorithm in names:
        batch = cache.batch(layouts, algorithm, sizes[:1])  # announced sizes: some, not all
        runnable = batch.runnable
        for primitive in ("all-reduce", "reduce-scatter", "all-gather"):
            times = batch(primitive, sizes)
            assert times.shape == (len(layouts), *sizes.shape)
            for row, (n, g) in enumerate(layouts):
                model = CommModel(cluster.layout(system, n, g), algorithm, backend)
                for index in np.ndindex(sizes.shape):
                    try:
                        expected = model.time_s(primitive, sizes[index])
                    except DpcostError:
                        expected = np.nan
                    if not runnable[row]:
                        continue  # the planner marks the whole layout invalid
                    got = times[(row, *index)]
                    if np.isnan(expected):
                        assert np.isnan(got), (algorithm, primitive, n, g)
                    else:
                        assert got == pytest.approx(expected, rel=1e-12), (algorithm, primitive, n, g)
