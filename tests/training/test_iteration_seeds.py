"""Each mechanism of the seed notes (shared/seeds 000-004) has a test here."""

from __future__ import annotations

import json

import pytest
from iteration_support import SmallGpu, reducer_comm, ring_comm

from costmodel.training.iteration import TrainingConfig, iteration_breakdown
from costmodel.training.losses import StepLosses
from costmodel.training.workloads import load_model

GPU = SmallGpu()


def _run(model="gpt2-xl", ranks=8, comm=None, gpu=GPU, **config):
    comm = comm or ring_comm(ranks)
    # The seeds state idealised cases: the collective alone, no framework losses.
    return iteration_breakdown(load_model(model), gpu, comm, ranks,
                               TrainingConfig(**{"micro_batch": 4, "losses": StepLosses.none(), **config}))


def test_seed_003_data_parallelism_replicates_weights_grads_and_optimizer():
    small, large = _run(ranks=2).memory, _run(ranks=512).memory
    assert small == large  # nothing per GPU shrinks with more data-parallel ranks


def test_seed_003_all_reduce_runs_after_backward_without_overlap():
    result = _run(overlap=False)
    assert result.exposed_comm_s == pytest.approx(result.comm_s)
    assert result.total_s == pytest.approx(result.compute_s + result.comm_s + result.optimizer_s)


def test_seed_001_ddp_buckets_overlap_communication_with_backward():
    result = _run()
    assert result.bucket_count > 1
    assert 0 < result.exposed_comm_s < result.comm_s
    assert result.hidden_comm_s == pytest.approx(result.comm_s - result.exposed_comm_s)


def test_seed_003_accumulation_amortises_all_reduce_over_k_micro_batches():
    one, eight = _run(), _run(accumulation_steps=8)
    assert eight.sync_s_per_sample == pytest.approx(one.sync_s_per_sample / 8)
    assert eight.comm_share < one.comm_share


def test_seed_002_synchronous_steps_wait_for_the_slowest_of_n():
    results = [_run(ranks=n, comm=ring_comm(n), jitter_cv=0.05) for n in (2, 16, 256)]
    waits = [r.straggler_wait_s for r in results]
    assert 0 < waits[0] < waits[1] < waits[2]
    assert waits[2] == pytest.approx(results[2].compute_s * 0.05 * 2.8, rel=0.05)  # e_256 ≈ 2.8


def test_seed_002_async_updates_do_not_wait_but_are_stale():
    sync = _run(ranks=16, comm=ring_comm(16), jitter_cv=0.05)
    stale = _run(ranks=16, comm=ring_comm(16), jitter_cv=0.05, asynchronous=True)
    assert stale.straggler_wait_s == 0.0 and stale.staleness_updates == 15
    assert sync.staleness_updates == 0 and sync.straggler_wait_s > 0
    assert stale.memory.optimizer_bytes == 0  # the parameter server holds the optimizer


def test_seed_002_one_reducer_slows_each_iteration_linearly():
    # 300M fp32 parameters (1.2 GB) through one reducer at 1 GB/s: +1.2 s at 2 ranks, +10.8 s at 10.
    alone = _run(model="300M", ranks=1, grad_dtype="fp32", overlap=False, micro_batch=1)
    for ranks, extra_s in ((2, 1.2), (10, 10.8)):
        result = _run(model="300M", ranks=ranks, comm=reducer_comm(ranks, 1e9), grad_dtype="fp32",
                      overlap=False, micro_batch=1, bucket_bytes=2e9, first_bucket_bytes=2e9)
        assert result.total_s - alone.total_s == pytest.approx(extra_s)


def test_seed_000_gradient_traffic_of_a_1b_fp32_model_is_4_gb_per_iteration():
    result = _run(model="1B", grad_dtype="fp32", micro_batch=1)
    assert result.sync_payload_bytes == pytest.approx(4e9)


def test_seed_004_fp16_and_fp8_compression_cut_the_bytes():
    # fp8 collectives reduce from sm90 (memory.FP8_REDUCTION_ARCHS): a Hopper-like stand-in
    fp32, fp16, fp8 = (_run(model="1B", grad_dtype=d, micro_batch=1, gpu=SmallGpu(arch="hopper"))
                       for d in ("fp32", "fp16", "fp8"))
    assert fp16.sync_payload_bytes == pytest.approx(fp32.sync_payload_bytes / 2)
    assert fp8.sync_payload_bytes == pytest.approx(fp32.sync_payload_bytes / 4)
    assert fp8.comm_s < fp16.comm_s < fp32.comm_s


def test_seed_004_top_k_sends_values_and_indices_gathered_from_all_ranks():
    result = _run(model="1B", grad_dtype="fp32", micro_batch=1, topk_fraction=0.01)
    assert result.sync_payload_bytes == pytest.approx(8 * 0.01 * 1e9 * (4 + 4))
    dense = _run(model="1B", grad_dtype="fp32", micro_batch=1)
    assert result.comm_s < dense.comm_s


def test_parameter_server_traffic_versus_ring_all_reduce():
    # Seed 000: a PS worker sends 4 GB and receives 4 GB; a ring rank moves 2(N-1)/N of it.
    ranks, gb = 8, 4e9
    ring = ring_comm(ranks, bandwidth_Bps=1e9, latency_s=0.0)("all-reduce", gb)
    assert ring == pytest.approx(2 * 7 / 8 * gb / 1e9)
    ps = reducer_comm(ranks, 1e9)("all-reduce", gb)
    assert ps > ring


@pytest.mark.parametrize(("machines", "seconds"), [(2, 1.2), (10, 10.8)])
def test_seed_002_per_iteration_on_its_own_network(machines, seconds):
    """Seed 002 at the iteration level: 300M fp32 parameters (1.2 GB of gradient), one accelerator per
    machine on a 1 GB/s network (docs/examples/seed002-1gbps.toml, the tutorial's profile), one rank
    reducing for all after backward: each step's communication is (N - 1) x 1.2 s, within the
    pipelined server's fill (a few tens of ms over 10.8 s: its chunks pay the path's µs latency)."""
    from pathlib import Path

    from typer.testing import CliRunner

    from cli import app

    profile = Path(__file__).resolve().parents[2] / "docs" / "examples" / "seed002-1gbps.toml"
    result = CliRunner().invoke(app, [
        "iteration", "--model", "300M", "--grad-dtype", "fp32", "--cluster", str(profile), "--nodes", str(machines),
        "--micro-batch", "1", "--algorithm", "parameter-server", "--ps-placement", "colocated", "--servers", "1",
        "--sync", "flat", "--backend", "ideal", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["sync_payload_bytes"] == pytest.approx(1.2e9, rel=1e-3)
    assert seconds <= data["comm_s"] <= seconds * 1.005
    assert data["exposed_comm_s"] == pytest.approx(data["comm_s"])
