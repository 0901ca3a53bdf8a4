"""Properties of the iteration model that must hold for every configuration."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from iteration_support import SmallGpu, ring_comm

from costmodel.training import losses, stragglers
from costmodel.training.gradsync import ShardGroups
from costmodel.training.iteration import TrainingConfig, iteration_breakdown, step_seconds
from costmodel.training.losses import StepLosses
from costmodel.training.offload import HostPath
from costmodel.training.workloads import load_model
from dpbase.errors import InputError

GPU = SmallGpu(arch="hopper")  # fp8 gradients among the drawn dtypes: their collectives need sm90
INPUT_KEYS = {f.name for f in dataclasses.fields(TrainingConfig)} | {
    "model", "params", "ranks", "algorithm", "global_batch", "topk_fraction", "synchronous",
    "mfu_source", "bucket_count", "seq_len", "compute_dtype", "mfu", "speed_cv", "slow_node_factor",
    "overlap_slowdown"}


def _run(model="gpt2-xl", ranks=16, bandwidth=25e9, latency=5e-6, host=None, groups=None, **config):
    base = dict(micro_batch=4)
    base.update(config)
    return iteration_breakdown(load_model(model), GPU, ring_comm(ranks, bandwidth, latency), ranks,
                               TrainingConfig(**base), host=host, groups=groups)


def _outputs(result) -> dict:
    return {k: v for k, v in result.to_dict().items() if k not in INPUT_KEYS}


configs = st.fixed_dictionaries({
    "model": st.sampled_from(["gpt2", "gpt2-xl", "llama2-7b", "resnet-50", "bert-large"]),
    "ranks": st.sampled_from([2, 8, 64, 512]),
    "micro_batch": st.integers(1, 8),
    "accumulation_steps": st.integers(1, 8),
    "zero_stage": st.sampled_from([0, 1, 2, 3]),
    "grad_dtype": st.sampled_from(["fp32", "bf16", "fp8"]),
    "jitter_cv": st.sampled_from([0.0, 0.05]),
    "bandwidth": st.floats(1e8, 1e11),
})


@settings(max_examples=60, deadline=None)
@given(configs)
def test_overlap_never_makes_a_step_slower(config):
    on = _run(**config)
    off = _run(**config, overlap=False)
    assert on.total_s <= off.total_s * (1 + 1e-12)
    assert 0 <= on.exposed_comm_s <= on.comm_s * (1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(configs, st.floats(1.0, 100.0))
def test_a_faster_link_never_makes_a_step_slower(config, speedup):
    slow = _run(**config)
    fast = _run(**{**config, "bandwidth": config["bandwidth"] * speedup})
    assert fast.total_s <= slow.total_s * (1 + 1e-12)


@settings(max_examples=80, deadline=None)
@given(configs, st.booleans(), st.booleans())
def test_scaling_efficiency_never_exceeds_one(config, asynchronous, recompute):
    if asynchronous:
        config = {**config, "zero_stage": 0}
    if config["model"] == "resnet-50":
        recompute = False
    result = _run(**config, asynchronous=asynchronous, recompute=recompute)
    assert 0 < result.scaling_efficiency <= 1.0
    reference = result.compute_s + result.optimizer_s
    assert result.scaling_efficiency == pytest.approx(reference / result.total_s, rel=1e-12)


@pytest.mark.parametrize("zero", [0, 1])
@pytest.mark.parametrize("k", [2, 4, 16])
def test_accumulation_divides_sync_cost_per_sample_by_k(zero, k):
    one = _run(zero_stage=zero, accumulation_steps=1)
    many = _run(zero_stage=zero, accumulation_steps=k)
    assert many.sync_s_per_sample == pytest.approx(one.sync_s_per_sample / k)
    assert many.comm_s == pytest.approx(one.comm_s)


def test_zero2_and_zero3_synchronise_every_micro_batch():
    for zero in (2, 3):
        one, four = _run(zero_stage=zero), _run(zero_stage=zero, accumulation_steps=4)
        assert four.sync_s_per_sample > 1.5 * one.sync_s_per_sample / 4
        assert four.sync_payload_bytes > one.sync_payload_bytes
    one, four = _run(zero_stage=3), _run(zero_stage=3, accumulation_steps=4)
    assert four.sync_s_per_sample == pytest.approx(one.sync_s_per_sample)


@pytest.mark.parametrize("zero", [0, 1, 2, 3])
def test_one_gpu_has_zero_communication(zero):
    result = _run(ranks=1, zero_stage=zero, jitter_cv=0.1)
    assert result.comm_s == result.exposed_comm_s == result.hidden_comm_s == 0.0
    assert result.straggler_wait_s == 0.0
    assert result.scaling_efficiency == pytest.approx(1.0)


VARIATIONS = {
    "model": {"model": "gpt2-large"},
    "ranks": {"ranks": 32},
    "link": {"bandwidth": 5e9},
    "micro_batch": {"micro_batch": 8},
    "seq_len": {"seq_len": 512},
    "accumulation_steps": {"accumulation_steps": 2},
    "grad_dtype": {"grad_dtype": "fp32"},
    "compute_dtype": {"compute_dtype": "fp16", "mfu": 0.3},
    "topk_fraction": {"topk_fraction": 0.01},
    "mfu": {"mfu": 0.3},
    "optimizer": {"optimizer": "adam"},
    "optimizer_impl": {"optimizer_impl": "per-tensor"},
    "bucket_bytes": {"bucket_bytes": 4e6},
    # gpt2-xl's tensors are 10-41 MB: a first bucket must hold several to change the cut
    "first_bucket_bytes": {"first_bucket_bytes": 100e6},
    "overlap": {"overlap": False},
    "zero_stage": {"zero_stage": 1},
    "asynchronous": {"asynchronous": True},
    "jitter_cv": {"jitter_cv": 0.05},
    "include_attention": {"include_attention": False},
    "flash_attention": {"flash_attention": False},
    "recompute": {"recompute": True},
    "sync": {"sync": "flat"},
    "transport": {"transport": "tcp"},
    # one node of the run's ranks through this host; its arithmetic: tests/training/test_host_reduce.py
    "host_reduce": {"host_reduce": True, "host": HostPath(memory_Bps=50e9, host_link_Bps=12e9)},
    "losses": {"losses": StepLosses(host_overhead_s=0.05)},
    # ZeRO++ needs ZeRO >= 1; its own effect against ZeRO-3 alone: tests/training/test_quantized_comm.py
    "quantize_weights": {"zero_stage": 3, "quantize_weights": 8},
    "quantize_grads": {"zero_stage": 3, "quantize_grads": 4},
    # needs ZeRO-1/2; its own effect against ZeRO-1 alone: tests/training/test_overlap_param_gather.py
    "overlap_param_gather": {"zero_stage": 1, "overlap_param_gather": True},
    # needs ZeRO >= 1 and a host; its own arithmetic: tests/training/test_optimizer_offload.py
    "offload_optimizer": {"zero_stage": 1, "offload_optimizer": True,
                          "host": HostPath(memory_Bps=50e9, host_link_Bps=24e9)},
    # ZeRO-3 only, in groups of 8 with a slower cross-node ring: tests/training/test_hybrid_sharding.py
    # what is kept free: the memory's reserve and headroom (against plan: test_iteration_review_fixes.py)
    "memory_reserve_bytes": {"memory_reserve_bytes": 20e9},
    # every micro-batch all-reduces (no no_sync); its own arithmetic: tests/training/test_sync_each_micro_batch.py
    "sync_each_micro_batch": {"accumulation_steps": 4, "sync_each_micro_batch": True},
    "shard": {"zero_stage": 3, "shard": "hybrid",
              "groups": ShardGroups(comm=ring_comm(8, 100e9, 2e-6), ranks=8, replicas=ring_comm(2, 12.5e9, 5e-6))},
}


@pytest.mark.parametrize("name", sorted(VARIATIONS))
def test_every_input_changes_some_output(name):
    base = _outputs(_run(bandwidth=2e9, mfu=0.6))
    varied = _outputs(_run(**{"bandwidth": 2e9, "mfu": 0.6, **VARIATIONS[name]}))
    assert varied != base, f"{name} has no effect on any output"


def test_a_calibrated_mfu_keeps_the_micro_batch_terms():
    """A given MFU holds at any micro-batch; a calibrated one (--rate) is the base speed, which
    the GEMM roofline slows where a micro-batch (64 tokens) cannot feed the tensor cores, and not
    where it can (4 × 1,024 tokens)."""
    small = dict(micro_batch=1, seq_len=64, mfu=0.6)
    given, calibrated = _run(**small), _run(**small, mfu_calibration="solved from a measured rate")
    assert given.matmul_efficiency == 1.0 and calibrated.matmul_efficiency < 0.5
    assert calibrated.compute_s == pytest.approx(given.compute_s / calibrated.matmul_efficiency)
    assert calibrated.mfu_source == "solved from a measured rate" and given.mfu_source == "given by the user"
    large = _run(mfu=0.6, mfu_calibration="solved from a measured rate")
    assert large.matmul_efficiency == 1.0 and large.compute_s == _run(mfu=0.6).compute_s
    with pytest.raises(InputError, match="mfu_calibration"):
        _run(mfu_calibration="solved from a measured rate")  # a calibration of no MFU


def test_the_elementwise_traffic_sets_the_default_speed_and_nothing_else():
    """The width roofline's constant moves the default MFU (the variations' base gives an MFU,
    which it leaves alone)."""
    default, heavier = _run(), _run(elementwise_traffic=20.0)
    assert heavier.mfu < default.mfu and heavier.compute_s > default.compute_s
    for wrong in (dict(mfu=0.6), dict(model="resnet-50"), dict()):  # beside a given MFU, on a CNN, below 0
        with pytest.raises(InputError, match="elementwise-traffic"):
            _run(**{"elementwise_traffic": -1.0 if not wrong else 20.0, **wrong})


# Fields whose effect shows only against a base that differs from the variations' (the roofline
# must bite; no MFU given): each has its own test here.
OWN_TESTS = {"mfu_calibration": "test_a_calibrated_mfu_keeps_the_micro_batch_terms",
             "elementwise_traffic": "test_the_elementwise_traffic_sets_the_default_speed_and_nothing_else"}


def test_every_config_field_is_covered_by_a_variation():
    fields = {f.name for f in dataclasses.fields(TrainingConfig)}
    assert fields <= set(VARIATIONS) | set(OWN_TESTS)
    assert all(name in globals() for name in OWN_TESTS.values())


def test_step_seconds_is_vectorised_and_matches_the_scalar_path():
    configs = [dict(accumulation_steps=k, zero_stage=z) for k, z in ((1, 0), (4, 0), (2, 3))]
    results = [_run(**c) for c in configs]
    forward = np.array([r.forward_s / r.accumulation_steps for r in results])
    factor = stragglers.slowest_rank_factor(0.0, 16, np.array([1, 4, 1]), losses.SPEED_CV)
    step = step_seconds(
        forward_s=forward, backward_s=2 * forward,
        accumulation_steps=np.array([1, 4, 2]), straggler_factor=factor,
        overlap_slowdown=losses.OVERLAP_SLOWDOWN, host_overhead_s=losses.HOST_OVERHEAD_S,
        sync_comm_s=np.array([r.comm_s for r in results]) / np.array([1, 1, 2]),
        sync_exposed_s=np.array([r.exposed_comm_s for r in results]) / np.array([1, 1, 2]),
        post_step_s=np.zeros(3), every_micro_batch=np.array([False, False, True]),
        optimizer_s=np.array([r.optimizer_s for r in results]),
        buffer_copy_s=np.array([r.buffer_copy_s for r in results]))
    assert all(r.buffer_copy_s > 0 for r in results)
    assert np.all(step.total_s == pytest.approx([r.total_s for r in results]))
    assert np.all(step.compute_s == pytest.approx([r.compute_s for r in results]))


def test_breakdown_json_has_the_required_keys():
    data = _run().to_dict()
    for key in ("compute_s", "comm_s", "hidden_comm_s", "exposed_comm_s", "optimizer_s", "total_s",
                "samples_per_s", "tokens_per_s", "scaling_efficiency", "comm_share"):
        assert isinstance(data[key], float)
    for key in ("weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes",
                "total_bytes", "capacity_bytes", "fits"):
        assert key in data["memory"]
    for key in ("model", "params", "ranks", "micro_batch", "accumulation_steps", "grad_dtype",
                "zero_stage", "algorithm"):
        assert key in data
