"""Optimizer CPU offload (ZeRO-Offload) in iteration and plan (issue 17): the step's arithmetic
from its sourced pieces, the memory it frees, and where it is refused."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import hardware
from cli import app
from costmodel.nccl.search import pci_bandwidth_GBps
from costmodel.nccl.tables import load_tables
from costmodel.planner.recommend import plan
from costmodel.training import memory
from costmodel.training.offload import host_path
from costmodel.training.oncluster import iteration
from costmodel.training.workloads import load_model
from dpbase.errors import InputError
from dpbase.values import replace

runner = CliRunner()
ARGS = dict(micro_batch=2, seq_len=4096, accumulation_steps=4, nodes=4)


def test_the_host_path_of_a_dgx_h100_rank():
    system = hardware.load_system("dgx-h100")
    host = host_path(system)
    assert host.memory_Bps == pytest.approx(563.2e9 / 8)  # 2 x 8 channels DDR5-4400 (two DIMMs each), shared by 8 GPUs
    assert host.host_link_Bps == pytest.approx(48e9)  # NCCL's Gen5 x16 estimate
    assert pci_bandwidth_GBps(5, load_tables()) == 48
    assert host_path(system, 1).memory_Bps == pytest.approx(563.2e9)  # one rank per node has it all


def test_grace_blackwell_offloads_over_nvlink_c2c_and_dgx_a100_pairs_share_a_switch():
    """GB200/GB300 reach Grace memory over NVLink-C2C (223.6 GB/s per GPU per direction, NCCL's
    topology of a GB300 tray), not PCIe Gen5/6; DGX A100 GPUs share each PCIe switch in pairs
    (a DGX A100's nvidia-smi topo, NVIDIA/nccl issue 1505), halving what each rank copies at."""
    for name in ("gb200-nvl72-tray", "gb300-nvl72-tray"):
        assert host_path(hardware.load_system(name)).host_link_Bps == pytest.approx(223.6e9)
    assert host_path(hardware.load_system("dgx-a100")).host_link_Bps == pytest.approx(24e9 / 2)
    assert host_path(hardware.load_system("dgx-h100")).host_link_Bps == pytest.approx(48e9)  # own switch
    assert pci_bandwidth_GBps(6, load_tables()) == pytest.approx(96.0)  # topo.cc: 64 GT/s -> 480 x 16 / 80


@pytest.mark.parametrize("zero", [1, 2, 3])
def test_the_step_from_its_pieces(zero):
    off = iteration("llama2-7b", "dgx-h100", zero_stage=zero, **ARGS)
    on = iteration("llama2-7b", "dgx-h100", zero_stage=zero, offload_optimizer=True, **ARGS)
    params, ranks = load_model("llama2-7b").params, 32
    precision = memory.precision_for("bf16")
    shard = params / ranks
    cpu = memory.optimizer_step_bytes_per_param(precision, "adamw") * shard / (563.2e9 / 8)
    copy = shard * precision.weight_bytes / 48e9
    assert on.optimizer_host_s == pytest.approx(cpu) and on.optimizer_copy_s == pytest.approx(copy)
    assert on.optimizer_s == pytest.approx(cpu + copy)
    # each bucket's reduced gradient shard crosses PCIe inside the bucket's communication: the
    # whole gradient / N per synchronisation (ZeRO-2/3 synchronise on each of the 4 micro-batches)
    syncs = 4 if zero >= 2 else 1
    assert on.comm_s - off.comm_s == pytest.approx(syncs * params * precision.grad_bytes / ranks / 48e9, rel=1e-6)
    assert on.memory.optimizer_bytes == 0 < off.memory.optimizer_bytes
    # the tensors shrink, and so does everything: offload fragments at the irregular share (15 %,
    # GMLake) only the shard it streams, the gradients' out and the weights' back, ZeRO-3 all
    # the states (training.memory.irregular_bytes)
    tensors = lambda m: m.total_bytes - m.fragmentation_bytes  # noqa: E731
    assert tensors(on.memory) < tensors(off.memory) and on.memory.total_bytes < off.memory.total_bytes
    counted = lambda m: m.weights_bytes + m.gradients_bytes + m.optimizer_bytes + m.activations_bytes \
        + m.logits_bytes  # noqa: E731
    states = lambda m: m.weights_bytes + m.gradients_bytes + m.optimizer_bytes  # noqa: E731
    extra = memory.IRREGULAR_FRAGMENTATION_FRACTION - memory.FRAGMENTATION_FRACTION
    streamed = params * (precision.weight_bytes + precision.grad_bytes) / ranks
    assert on.memory.fragmentation_bytes == pytest.approx(memory.FRAGMENTATION_FRACTION * counted(on.memory)
                                                          + extra * (states(on.memory) if zero == 3 else streamed))
    assert off.memory.fragmentation_bytes == pytest.approx(memory.FRAGMENTATION_FRACTION * counted(off.memory)
                                                           + extra * (states(off.memory) if zero == 3 else 0.0))


def test_one_gpu_offloading_still_copies_its_gradients():
    on = iteration("gpt2-xl", "dgx-h100", micro_batch=8, zero_stage=1, nodes=1, gpus_per_node=1,
                   offload_optimizer=True)
    grads = load_model("gpt2-xl").params * 2
    assert on.comm_s == pytest.approx(grads / 48e9)
    assert on.exposed_comm_s < on.comm_s  # overlapped with backward, bucket by bucket


def test_refused_without_zero_or_without_a_known_host():
    with pytest.raises(InputError, match="zero_stage 1, 2 or 3"):  # the API's keyword (the CLI says --zero)
        iteration("gpt2", "dgx-h100", micro_batch=1, offload_optimizer=True)
    with pytest.raises(InputError, match="host_memory_bandwidth"):
        iteration("gpt2", "l40s-4x-pcie", micro_batch=1, zero_stage=1, offload_optimizer=True)
    bad = runner.invoke(app, ["iteration", "--model", "gpt2", "--cluster", "l40s-4x-pcie", "--micro-batch", "1",
                              "--zero", "1", "--offload-optimizer"])
    assert bad.exit_code == 2 and "host_memory_bandwidth" in bad.output
    refused = runner.invoke(app, ["plan", "--model", "gpt2", "--cluster", "l40s-4x-pcie", "--global-batch", "8",
                                  "--offload-optimizer"])
    assert refused.exit_code == 2 and "host_memory_bandwidth" in refused.output


def _iteration_of(row, model, system):
    """`iteration` of a plan row's settings, offloading (seq 2048)."""
    return iteration(model, system, micro_batch=row.micro_batch, seq_len=2048,
                     accumulation_steps=row.accumulation_steps, zero_stage=row.zero_stage,
                     nodes=row.nodes, gpus_per_node=row.gpus_per_node, algorithm=row.algorithm,
                     bucket_bytes=row.bucket_bytes, grad_dtype=row.grad_dtype, offload_optimizer=True)


def test_plan_applies_it_to_its_zero_rows_with_iterations_numbers():
    system = hardware.load_system("dgx-h100")
    result = plan("llama2-13b", system, nodes=1, global_batch=64, seq_len=2048, offload_optimizer=True, top=50)
    rows = [c for c in result.candidates if c.zero_stage >= 1]
    assert rows and all(c.offload_optimizer for c in rows)
    for row in rows[:3]:
        alone = _iteration_of(row, "llama2-13b", system)
        assert row.total_s == pytest.approx(alone.total_s, rel=1e-3)
        assert row.memory_bytes == pytest.approx(alone.memory.total_bytes, rel=1e-6)


def test_a_one_gpu_plan_counts_the_gradient_copy():
    system = hardware.load_system("dgx-h100")
    result = plan("llama2-7b", system, gpus=1, global_batch=8, seq_len=2048, offload_optimizer=True, top=5)
    row = result.best
    assert row.gpus == 1 and row.zero_stage >= 1
    alone = iteration("llama2-7b", system, micro_batch=row.micro_batch, seq_len=2048,
                      accumulation_steps=row.accumulation_steps, zero_stage=row.zero_stage, nodes=1,
                      gpus_per_node=1, bucket_bytes=row.bucket_bytes, grad_dtype=row.grad_dtype,
                      offload_optimizer=True)
    assert alone.comm_s > 0 and row.total_s == pytest.approx(alone.total_s, rel=1e-3)


def test_cli_reports_it():
    out = runner.invoke(app, ["iteration", "--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "4",
                              "--micro-batch", "2", "--seq-len", "4096", "--zero", "2", "--offload-optimizer",
                              "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["offload_optimizer"] is True and data["optimizer_host_s"] > 0 and data["optimizer_copy_s"] > 0
    text = runner.invoke(app, ["iteration", "--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "4",
                               "--micro-batch", "2", "--seq-len", "4096", "--zero", "2", "--offload-optimizer"])
    assert "on the host: CPU step" in text.output and "ZeRO-Offload" in text.output


def test_one_rule_shares_a_host_link_for_offload_and_nccls_host_memory_path():
    """search.host_link_sharers: the GPUs behind a PCIe switch share its uplink, for the
    optimizer's copies and for NCCL's host-memory transport alike; NVLink-C2C is each GPU's own,
    whatever pcie_switch_gpus says (a user's Grace node on a switched PCIe fabric)."""
    from costmodel.nccl.search import _host_memory_path

    pcie = replace(hardware.load_system("rtx2080ti-2x-pcie"), host_memory_bandwidth_Bps=500e9)  # 2 GPUs, 1 switch
    assert pcie.pcie_switch_gpus == 2
    assert _host_memory_path(pcie, 2, load_tables()).gpus_per_uplink == 2
    assert host_path(pcie).host_link_Bps == pytest.approx(pci_bandwidth_GBps(pcie.gpu.pcie_gen, load_tables()) * 1e9 / 2)
    grace = replace(pcie, gpu=replace(pcie.gpu, host_link_bandwidth_Bps=200e9))
    assert _host_memory_path(grace, 2, load_tables()).gpus_per_uplink == 1
    assert _host_memory_path(grace, 2, load_tables()).link_GBps == pytest.approx(200)
    assert host_path(grace).host_link_Bps == pytest.approx(200e9)
    # and NCCL's ring search on that node prices its host-memory edges by the same rule (it charged
    # every GPU PCIe / 2 there: 1 channel of 5 GB/s against a 200 GB/s C2C link)
    from costmodel.nccl.search import host_link_GBps, pcie_ring_bandwidth_GBps

    t = load_tables()
    shared, own = pcie_ring_bandwidth_GBps(pcie, 2, True, t), pcie_ring_bandwidth_GBps(grace, 2, True, t)
    assert own / shared == pytest.approx(host_link_GBps(grace, t) / (pci_bandwidth_GBps(pcie.gpu.pcie_gen, t) / 2))
    assert host_link_GBps(grace, t) == pytest.approx(200)  # both carry the same Intel PHB overhead


def test_a_partial_node_shares_its_host_links_by_the_gpus_it_uses():
    """On a DGX A100 two GPUs share each PCIe switch: one rank per node copies at the full 24 GB/s,
    as NCCL's host-memory path says, a full node at 12 (the offload path took 12 whatever the
    ranks); and the planner's partial-node rows take iteration's numbers."""
    from costmodel.nccl.search import _host_memory_path

    system = hardware.load_system("dgx-a100")
    t = load_tables()
    one, full = host_path(system, 1), host_path(system, 8)
    assert one.host_link_Bps == pytest.approx(2 * full.host_link_Bps)
    memory = _host_memory_path(system, 1, t)
    assert one.host_link_Bps == pytest.approx(memory.link_GBps * 1e9 / memory.gpus_per_uplink)
    result = plan("llama2-7b", system, gpus=3, global_batch=24, seq_len=2048, offload_optimizer=True, top=40)
    rows = [c for c in result.candidates if c.zero_stage >= 1 and c.gpus_per_node in (1, 3)]
    assert {c.gpus_per_node for c in rows} & {1, 3}
    for row in rows[:4]:
        assert row.total_s == pytest.approx(_iteration_of(row, "llama2-7b", system).total_s, rel=1e-3)


def test_every_layout_of_a_plan_shares_its_host_links_by_its_own_gpus_per_node():
    """With four GPUs behind each PCIe switch a 2-GPU node shares a link by 2, a 4- or 8-GPU one
    by 4: the sweep takes each layout's sharing (it once charged every layout the last one's, so
    the 2-GPU rows' copies were 95 % slower than iteration's while bundled systems, at most two
    GPUs per switch, could not show it)."""
    system = replace(hardware.load_system("dgx-a100"), pcie_switch_gpus=4)
    result = plan("llama2-7b", system, nodes=2, global_batch=64, seq_len=2048, offload_optimizer=True, top=400)
    seen = set()
    for row in result.candidates:
        if row.zero_stage >= 1 and row.gpus > 1 and (row.nodes, row.gpus_per_node) not in seen:
            seen.add((row.nodes, row.gpus_per_node))
            expected = _iteration_of(row, "llama2-7b", system)
            assert row.total_s == pytest.approx(expected.total_s, rel=1e-6), (row.nodes, row.gpus_per_node)
            assert row.comm_s == pytest.approx(expected.comm_s, rel=1e-6), (row.nodes, row.gpus_per_node)
    assert {(1, 2), (1, 4), (2, 8)} <= seen
