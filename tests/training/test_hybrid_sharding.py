"""Hybrid sharding (FSDP HYBRID_SHARD / DeepSpeed MiCS: ZeRO-3 inside each node, replicated
across nodes) and ZeRO++ hpZ (a secondary weight partition per node for backward's gathers) in
iteration and plan (issue 17): their groups, their arithmetic, their memory."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import hardware
from cli import app
from costmodel.cluster.comm import comm_model, hybrid_groups
from costmodel.cluster.mapping import rail_system
from costmodel.planner import emit
from costmodel.planner.recommend import plan
from costmodel.training import memory
from costmodel.training.gradsync import ShardGroups
from costmodel.training.iteration import TrainingConfig, iteration_breakdown
from costmodel.training.oncluster import iteration
from costmodel.training.workloads import load_model
from dpbase.errors import InputError

runner = CliRunner()
GBPS = 1e9 / 8


@pytest.mark.parametrize("system, nics, nic_Bps, domain", [
    ("dgx-h100", 1, 400 * GBPS, 1),  # 8 NICs for 8 rails: one NIC each
    ("aws-p4d", 1, 50 * GBPS, 1),  # 4 x 100G EFA for 8 rails: two rails per NIC, half its bandwidth each
    ("gb200-nvl72-tray", 1, 400 * GBPS, 18),  # 72-GPU NVLink domain of 4-GPU trays: 18 trays per rail
])
def test_a_rail_is_one_gpus_share_of_each_node(system, nics, nic_Bps, domain):
    base = hardware.load_system(system)
    rail = rail_system(base, base.gpus_per_node)
    assert (rail.gpus_per_node, rail.nics_per_node, rail.scaleup_domain_gpus) == (1, nics, domain)
    assert rail.nic_bandwidth_Bps == pytest.approx(nic_Bps) and rail.measured == ()


def test_the_two_groups_of_a_cluster():
    intra, rails = hybrid_groups(comm_model("dgx-h100", 4))
    assert (intra.layout.nodes, intra.layout.gpus_per_node) == (1, 8)
    assert (rails.layout.nodes, rails.layout.gpus_per_node) == (4, 1) and rails.layout.system.nics_per_node == 1


def _rate(bandwidth_Bps):
    """A toy collective: its size at ``bandwidth_Bps``, no latency (sums over buckets exactly)."""
    return lambda primitive, size: size / bandwidth_Bps


def test_the_step_is_its_collectives_in_two_groups():
    """Per micro-batch: weights all-gathered in the node twice (forward, backward), gradients
    reduce-scattered in the node, and each node's 1/G shard all-reduced across the nodes."""
    intra_Bps, inter_Bps, G, k = 400e9, 40e9, 8, 4
    gpu = hardware.load_system("dgx-h100").gpu
    config = TrainingConfig(micro_batch=2, accumulation_steps=k, zero_stage=3, shard="hybrid")
    result = iteration_breakdown(load_model("gpt2-xl"), gpu, _rate(1e9), 32, config,
                                 groups=ShardGroups(comm=_rate(intra_Bps), ranks=G, replicas=_rate(inter_Bps)))
    precision = memory.precision_for("bf16")
    params = load_model("gpt2-xl").params
    weights, grads = params * precision.weight_bytes, params * precision.grad_bytes
    expected = k * ((2 * weights + grads) / intra_Bps + grads / G / inter_Bps)
    assert result.comm_s == pytest.approx(expected, rel=1e-9)
    assert result.shard == "hybrid" and result.shard_ranks == G
    full = iteration_breakdown(load_model("gpt2-xl"), gpu, _rate(1e9), 32,
                               TrainingConfig(micro_batch=2, accumulation_steps=k, zero_stage=3))
    # ZeRO-3 state is sharded over the node's 8 GPUs instead of all 32
    states = memory.optimizer_state_bytes("adamw") + precision.master_bytes
    assert result.memory.optimizer_bytes == pytest.approx(params * states / G)
    assert full.memory.optimizer_bytes == pytest.approx(params * states / 32)
    assert result.memory.weights_bytes == pytest.approx(weights / G)


def test_on_sixteen_dgx_h100_nodes_hybrid_moves_less_across_nodes_and_holds_more():
    args = dict(micro_batch=2, seq_len=4096, zero_stage=3, nodes=16)
    full = iteration("llama2-7b", "dgx-h100", **args)
    hybrid = iteration("llama2-7b", "dgx-h100", shard="hybrid", **args)
    assert hybrid.comm_s < full.comm_s
    assert hybrid.memory.total_bytes > full.memory.total_bytes
    assert hybrid.total_interval_s[0] <= hybrid.total_s <= hybrid.total_interval_s[1]


def test_refused_outside_zero3_or_without_groups():
    with pytest.raises(InputError, match="zero_stage 3"):
        iteration("gpt2", "dgx-h100", micro_batch=1, zero_stage=2, nodes=2, shard="hybrid")
    with pytest.raises(InputError, match="full or hybrid or hpz"):
        iteration("gpt2", "dgx-h100", micro_batch=1, zero_stage=3, nodes=2, shard="half")
    gpu = hardware.load_system("dgx-h100").gpu
    with pytest.raises(InputError, match="cluster"):
        iteration_breakdown(load_model("gpt2"), gpu, _rate(1e9), 16,
                            TrainingConfig(micro_batch=1, zero_stage=3, shard="hybrid"))
    bad = runner.invoke(app, ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "1",
                              "--zero", "1", "--shard", "hybrid"])
    assert bad.exit_code == 2 and "--zero 3" in bad.output


def _assert_iteration_agrees(row, system):
    """A llama2-13b seq-4096 plan row's step and memory equal iteration's for its configuration."""
    alone = iteration("llama2-13b", system, micro_batch=row.micro_batch, seq_len=4096,
                      accumulation_steps=row.accumulation_steps, zero_stage=row.zero_stage, nodes=row.nodes,
                      gpus_per_node=row.gpus_per_node, algorithm=row.algorithm, bucket_bytes=row.bucket_bytes,
                      grad_dtype=row.grad_dtype, shard=row.shard)
    assert row.total_s == pytest.approx(alone.total_s, rel=1e-6)
    assert row.memory_bytes == pytest.approx(alone.memory.total_bytes, rel=1e-9)


def test_plan_applies_it_to_its_zero3_rows_with_iterations_numbers():
    system = hardware.load_system("dgx-h100")
    result = plan("llama2-13b", system, nodes=16, global_batch=512, seq_len=4096, shard="hybrid", top=80)
    rows = [c for c in result.candidates if c.zero_stage == 3]
    assert rows and all(c.shard == "hybrid" for c in rows)
    assert all(c.shard == "full" for c in result.candidates if c.zero_stage != 3)
    for row in rows[:3]:
        _assert_iteration_agrees(row, system)


def test_hybrid_plans_emit_hsdp_and_mics():
    candidates = plan("llama2-13b", "dgx-h100", explain=False, nodes=2, global_batch=64, seq_len=4096,
                      shard="hybrid", top=100).candidates
    best = next(c for c in candidates if c.zero_stage == 3)
    assert best.shard == "hybrid"
    torch = {k.name: k.value for k in emit.knobs(best, "torch")}
    assert torch["sharding_strategy"] == "ShardingStrategy.HYBRID_SHARD"
    config = json.loads(emit.render(best, "deepspeed"))
    assert config["zero_optimization"]["mics_shard_size"] == best.gpus_per_node


def test_cli_reports_it():
    out = runner.invoke(app, ["iteration", "--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "4",
                              "--micro-batch", "2", "--zero", "3", "--shard", "hybrid", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["shard"] == "hybrid" and data["shard_ranks"] == 8
    planned = runner.invoke(app, ["plan", "--model", "llama2-13b", "--cluster", "dgx-h100", "--nodes", "2",
                                  "--global-batch", "64", "--seq-len", "4096", "--shard", "hybrid"])
    assert planned.exit_code == 0, planned.output


def test_hpz_gathers_backward_weights_inside_the_node_and_keeps_a_secondary_copy():
    """hpZ: forward all-gather and gradient reduce-scatter over every rank, backward all-gather
    inside the node; the weights cost 1/N (primary) + 1/G (secondary) per GPU."""
    all_Bps, node_Bps, N, G, k = 40e9, 400e9, 32, 8, 2
    gpu = hardware.load_system("dgx-h100").gpu
    config = TrainingConfig(micro_batch=2, accumulation_steps=k, zero_stage=3, shard="hpz")
    result = iteration_breakdown(load_model("gpt2-xl"), gpu, _rate(all_Bps), N, config,
                                 groups=ShardGroups(comm=_rate(all_Bps), ranks=N, secondary=_rate(node_Bps),
                                                    secondary_ranks=G))
    precision = memory.precision_for("bf16")
    params = load_model("gpt2-xl").params
    weights, grads = params * precision.weight_bytes, params * precision.grad_bytes
    assert result.comm_s == pytest.approx(k * ((weights + grads) / all_Bps + weights / node_Bps), rel=1e-9)
    assert result.memory.weights_bytes == pytest.approx(weights / N + weights / G)
    assert result.shard == "hpz" and result.shard_ranks == N


def test_hpz_on_a_cluster_sits_between_full_and_hybrid():
    args = dict(micro_batch=2, seq_len=4096, accumulation_steps=4, zero_stage=3, nodes=16)
    full, hpz, hybrid = (iteration("llama2-7b", "dgx-h100", shard=s, **args) for s in ("full", "hpz", "hybrid"))
    assert hybrid.comm_s < hpz.comm_s < full.comm_s
    assert full.memory.total_bytes < hpz.memory.total_bytes < hybrid.memory.total_bytes


def test_plan_hpz_rows_match_iteration_and_emit_deepspeed_and_fsdp2():
    system = hardware.load_system("dgx-h100")
    result = plan("llama2-13b", system, nodes=16, global_batch=512, seq_len=4096, shard="hpz", top=80)
    row = next(c for c in result.candidates if c.zero_stage == 3)
    assert row.shard == "hpz"
    _assert_iteration_agrees(row, system)
    config = json.loads(emit.render(row, "deepspeed"))
    assert config["zero_optimization"]["zero_hpz_partition_size"] == row.gpus_per_node
    assert f"reshard_after_forward={row.gpus_per_node}" in emit.render(row, "torch")


@pytest.mark.parametrize("gpus", [1, 2, 8])
def test_on_one_node_hybrid_is_full_sharding_payload_included(gpus):
    """One node has one replica of each shard: nothing is all-reduced across nodes, so the bytes
    handed to collectives are full sharding's (1 GPU: none), as the step times already were."""
    runs = {shard: iteration("gpt2", "dgx-h100", nodes=1, gpus_per_node=gpus, micro_batch=4,
                             accumulation_steps=2, zero_stage=3, shard=shard) for shard in ("full", "hybrid")}
    assert runs["hybrid"].sync_payload_bytes == runs["full"].sync_payload_bytes
    assert runs["hybrid"].total_s == runs["full"].total_s
    if gpus == 1:
        assert runs["hybrid"].sync_payload_bytes == 0.0
    two = iteration("gpt2", "dgx-h100", nodes=2, micro_batch=4, accumulation_steps=2, zero_stage=3, shard="hybrid")
    full = iteration("gpt2", "dgx-h100", nodes=2, micro_batch=4, accumulation_steps=2, zero_stage=3)
    assert two.sync_payload_bytes > full.sync_payload_bytes  # two replicas: each shard all-reduced across them
