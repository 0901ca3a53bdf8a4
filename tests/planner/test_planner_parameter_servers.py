"""Parameter servers with S servers (dedicated or colocated) in iteration and plan (issue 17)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import hardware
from cli import app
from costmodel.cluster.api import predict
from costmodel.planner import recommend
from costmodel.training.oncluster import iteration
from dpbase.errors import InputError


def plan(*args, **kwargs):  # the advice in the CLI's words (--nodes, --shard full), as `dpcost plan` prints it
    return recommend.plan(*args, _cli_words=True, **kwargs)


runner = CliRunner()


def _step(servers=None, colocated=None):
    import hardware
    from costmodel.cluster.comm import comm_model
    from costmodel.training.iteration import TrainingConfig, iteration_breakdown
    from costmodel.training.workloads import load_model

    comm = comm_model("dgx-a100", 2, algorithm="parameter-server", backend="ideal", servers=servers,
                      colocated=colocated)
    return iteration_breakdown(load_model("gpt2"), hardware.load_system("dgx-a100").gpu, comm,
                               config=TrainingConfig(micro_batch=8))


def test_iteration_comm_is_the_collectives_ps_with_s_servers():
    for servers in (1, 4, 16):
        b = _step(servers)
        one_bucket = predict("all-reduce", 25 * 2**20, algorithm="parameter-server", cluster="dgx-a100", nodes=2,
                             backend="ideal", servers=servers).time_s
        assert b.comm_s >= one_bucket  # at least one full bucket's push + pull
    assert _step(16).comm_s < _step(4).comm_s < _step(1).comm_s  # more servers, less load on each


def test_colocated_servers_differ_from_dedicated_ones():
    assert _step(4, True).comm_s != _step(4, False).comm_s


def test_servers_need_the_parameter_server_algorithm():
    from costmodel.cluster.comm import comm_model

    with pytest.raises(InputError, match="servers"):
        comm_model("dgx-a100", 2, algorithm="ring", servers=4)
    with pytest.raises(InputError, match="colocated"):
        comm_model("dgx-a100", 2, algorithm="parameter-server", servers=32, colocated=True)


def test_plan_sweeps_parameter_servers_with_s_servers():
    few = plan("gpt2", "dgx-a100", nodes=2, global_batch=256, algorithms=["parameter-server"], servers=1,
               backend="ideal")
    many = plan("gpt2", "dgx-a100", nodes=2, global_batch=256, algorithms=["parameter-server"], servers=16,
                backend="ideal")
    assert few.best.algorithm == many.best.algorithm == "parameter-server"
    assert many.best.total_s < few.best.total_s


def test_plan_runs_parameter_servers_beside_nccl():
    p = plan("gpt2", "dgx-a100", nodes=2, global_batch=256, algorithms=["auto", "parameter-server"], servers=4)
    assert p.backend == "nccl" and {c.algorithm for c in p.candidates} >= {"auto"}


def test_cli_options_and_their_refusal():
    ok = runner.invoke(app, ["plan", "--model", "gpt2", "--cluster", "dgx-a100", "--nodes", "2", "--global-batch",
                             "256", "--algorithms", "parameter-server", "--servers", "16", "--backend", "ideal"])
    assert ok.exit_code == 0 and "parameter-server" in ok.stdout
    bad = runner.invoke(app, ["plan", "--model", "gpt2", "--cluster", "dgx-a100", "--global-batch", "64",
                              "--servers", "4"])
    assert bad.exit_code == 2 and "--algorithms" in bad.output
    it = runner.invoke(app, ["iteration", "--model", "gpt2", "--cluster", "dgx-a100", "--nodes", "2",
                             "--micro-batch", "8", "--algorithm", "parameter-server", "--servers", "4",
                             "--ps-placement", "colocated", "--backend", "ideal"])
    assert it.exit_code == 0, it.output
    assert iteration("gpt2", "dgx-a100", micro_batch=8, nodes=2).ranks == 16


def test_plan_sweeps_asynchronous_parameter_servers_as_iteration_computes_them():
    """--async in plan: parameter servers alone, ZeRO-0, no barrier (no straggler wait), the
    servers hold the optimizer; each row equals iteration --async for the same configuration."""
    system = hardware.load_system("dgx-a100")
    result = plan("gpt2", system, nodes=2, global_batch=256, asynchronous=True, servers=16, jitter_cv=0.05, top=20)
    assert {c.algorithm for c in result.candidates} <= {"parameter-server", "none"}
    assert all(c.asynchronous and c.zero_stage == 0 for c in result.candidates if c.gpus > 1)
    for row in [c for c in result.candidates if c.gpus > 1][:3]:
        alone = iteration("gpt2", system, micro_batch=row.micro_batch, accumulation_steps=row.accumulation_steps,
                          nodes=row.nodes, gpus_per_node=row.gpus_per_node, algorithm="parameter-server",
                          servers=16, asynchronous=True, bucket_bytes=row.bucket_bytes,
                          grad_dtype=row.grad_dtype, jitter_cv=0.05)
        assert row.total_s == pytest.approx(alone.total_s, rel=1e-9)
        assert alone.straggler_wait_s == 0 and alone.optimizer_s == 0
    assert "asynchronous updates, staleness" in result.reason
    with pytest.raises(InputError, match="parameter-server alone"):
        plan("gpt2", system, nodes=2, global_batch=256, asynchronous=True, algorithms=("ring",))
    for option in (dict(shard="hybrid"), dict(offload_optimizer=True), dict(overlap_param_gather=True),
                   dict(quantize_grads=4)):  # ZeRO options would be silently ignored: refused
        with pytest.raises(InputError, match="with --async"):
            plan("gpt2", system, nodes=2, global_batch=256, asynchronous=True, **option)


def test_asynchronous_updates_need_a_peer():
    """On one GPU an asynchronous step dropped the push, the pull and the servers' optimizer (gpt2
    at 7.7 ms, faster than plain training's 9.1 ms), and the planner recommended it: iteration
    refuses it, and the planner's asynchronous plans start at 2 GPUs (review, 2026-11-28)."""
    with pytest.raises(InputError, match=r"^asynchronous: got True; allowed: 2 or more GPUs"):
        iteration("gpt2", "dgx-h100", gpus_per_node=1, micro_batch=4, asynchronous=True)
    two = iteration("gpt2", "dgx-h100", gpus_per_node=2, micro_batch=4, asynchronous=True, backend="ideal")
    assert two.comm_s > 0
    chosen = plan("gpt2", "dgx-h100", global_batch=64, asynchronous=True, tokens=1e9, objective="gpu-hours")
    assert chosen.best.gpus >= 2 and all(row.gpus >= 2 for row in chosen.candidates)
    with pytest.raises(InputError, match=r"^asynchronous: got True; allowed: 2 or more GPUs \(at most 1 here"):
        plan("gpt2", "dgx-h100", global_batch=64, asynchronous=True, max_gpus=1, explain=False)
    result = runner.invoke(app, ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--gpus", "1",
                                 "--micro-batch", "4", "--async"])
    assert result.exit_code == 2 and "2 or more GPUs" in result.stderr


def test_asynchronous_updates_need_two_samples():
    """--async with a global batch of 1 advised "a wider --min-gpus/--max-gpus", which cannot help:
    asynchronous plans need two workers, each a sample (review, 2026-11-28)."""
    with pytest.raises(InputError, match=r"^global_batch: got 1; allowed: 2 or more with asynchronous updates"):
        plan("gpt2", "dgx-h100", global_batch=1, asynchronous=True, explain=False)
    assert plan("gpt2", "dgx-h100", global_batch=2, asynchronous=True, explain=False).best.gpus == 2
