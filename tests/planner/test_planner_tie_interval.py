"""Ties from the model's own uncertainty (issue 17; planner review 2026-11-28).

Plans within 2 % of the best are tied. Where the fastest plan's 10-90 % step interval is wider
than that, a plan is tied only if it stays within 2 % of the best in every scenario (every
collective at the low end of its interval, at its prediction, and at the high end, for every
plan at once: the errors come from the links and the library all plans share), and the fastest
always is. The band used to be half the fastest plan's relative interval width, up to 25 %,
which tied plans the shared errors never bring together: gpt2 on 8 p4d nodes chose 32 GPUs, and
with --max-gpus 32 (which that plan meets) 16 GPUs, 22 % slower, for 2 % fewer bytes sent. A
first version tied plans within 2 % in *any one* scenario: the pessimistic one tied plans 50 %
slower, even one GPU (no collective, no uncertainty).
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import hardware
from cli import app
from costmodel.planner import choose
from costmodel.planner.recommend import plan, step_interval

runner = CliRunner()
COMM_BOUND = dict(nodes=4, global_batch=64)  # gpt2 on 4 x p4d (4 x 100G EFA): a comm-bound sweep


def test_interval_band_arithmetic():
    assert choose.interval_band((0.9, 1.3), 1.0) == pytest.approx(0.2)
    assert choose.interval_band((0.99, 1.01), 1.0) == choose.TIE_BAND  # narrower than the floor
    assert choose.interval_band((0.5, 2.5), 1.0) == choose.MAX_INTERVAL_BAND
    assert choose.interval_band(None, 1.0) == choose.TIE_BAND  # ideal backend, one GPU


def test_scenario_ties_arithmetic():
    """Throughput scores (-samples/s) of five plans within 2 % of the fastest A at their
    predictions: B stays within 2 % in both other scenarios, C falls behind where collectives run
    faster (less to gain), D where they run slower (more to lose), E is one GPU (certain)."""
    steps = [10.0, 10.1, 10.15, 10.1, 10.19]
    lows = [8.0, 8.1, 9.5, 8.0, 10.19]
    highs = [14.0, 14.1, 14.0, 15.0, 10.19]
    scores = [-100.0 / s for s in steps]  # one batch of 100 samples
    four = slice(0, 4)
    tied = choose.scenario_tied([0, 1, 2, 3], scores[four], steps[four], lows[four], highs[four], True, 0.02, 0)
    assert tied.tolist() == [0, 1]
    totals = choose.scenario_tied([0, 1, 2, 3], steps[four], steps[four], lows[four], highs[four], False, 0.02, 0)
    assert totals.tolist() == [0, 1]  # totals (hours, cost) scale with the step: the same plans
    # E, certain, is the best where collectives run slow, so B is no longer within 2 % there, and E
    # is more than 2 % behind where they run fast: the fastest alone, which is always in
    assert choose.scenario_tied([0, 1, 2, 3, 4], scores, steps, lows, highs, True, 0.02, 0).tolist() == [0]
    # the fastest is the one named (choose.fastest, which orders scores equal to 1 ppb by the rules)
    assert choose.scenario_tied([0, 1, 2, 3, 4], scores, steps, lows, highs, True, 0.02, 1).tolist() == [1]
    # no uncertainty: the floor alone
    assert choose.scenario_tied([0, 1, 2, 3, 4], scores, steps, steps, steps, True, 0.02, 0).tolist() == [0, 1, 2, 3, 4]


def test_the_chosen_plan_is_never_more_than_the_floor_behind_the_fastest():
    """bert-large on 16 single-L40S nodes over TCP chose 1 GPU, 46 % slower than the fastest
    (217.2 ms), under the any-scenario rule; mpt-30b on 8 A3 Mega nodes 32 GPUs at 2.224 s over 64
    at 1.547 s."""
    others = 0
    for model, cluster, nodes, batch in (("bert-large", "l40s-tcp-1x", 16, 32), ("mpt-30b", "gcp-a3-mega", 8, 64),
                                         ("gpt2", "rtx2080ti-2x-pcie", 16, 32), ("vit-l-16", "dgx-1", 8, 64),
                                         ("resnet-50", "aws-p4d", 16, 512), ("resnet-152", "aws-p4d", 16, 256)):
        chosen = plan(model, cluster, nodes=nodes, global_batch=batch, explain=False)
        fastest = plan(model, cluster, nodes=nodes, global_batch=batch, tie_band=0.0, explain=False)
        assert chosen.best.samples_per_s >= fastest.best.samples_per_s * (1 - choose.TIE_BAND)
        assert chosen.best.gpus > 1
        others += chosen.best.total_s != fastest.best.total_s
    assert others  # a tie-break chose another plan than the fastest at least once: the bound is tested


def test_a_comm_bound_plan_is_tied_with_the_fastest_in_every_scenario():
    """resnet-152 at batch 256 on 16 p4d nodes: the tie-break chose 64 GPUs over the fastest 128
    (resnet-50 at 512 did until the gradient's buffer copies were counted)."""
    system = hardware.load_system("aws-p4d")
    auto = plan("resnet-152", system, nodes=16, global_batch=256)
    exact = plan("resnet-152", system, nodes=16, global_batch=256, tie_band=0.0)
    fastest, chosen = exact.best, auto.best
    assert (chosen.gpus, fastest.gpus) == (64, 128)  # two plans: the scenario checks compare them
    setting = _setting_of(auto, system, "resnet-152")
    spread = choose.interval_band(step_interval(fastest, *setting), fastest.total_s)
    assert spread > choose.TIE_BAND and auto.tie_band == choose.TIE_BAND
    assert auto.findings["tie_band_source"] == "scenarios"
    # within the floor of the fastest at its prediction, and of each scenario's best, which scores
    # at least as well as the fastest there
    assert chosen.samples_per_s >= fastest.samples_per_s * (1 - choose.TIE_BAND)
    ends = [(lo, mid, hi) for (lo, hi), mid in ((step_interval(row, *setting), row.total_s)
                                                  for row in (fastest, chosen))]
    assert all(c <= f / (1 - choose.TIE_BAND) for f, c in zip(*ends))  # throughput within 2 %: the step within 1/0.98


@pytest.mark.parametrize(("model", "cluster", "nodes", "batch"), [
    ("gpt2", "aws-p4d", 8, 64), ("gpt2-xl", "l40s-4x-pcie", 8, 64), ("resnet-50", "aws-p4d", 8, 512)])
def test_a_limit_the_chosen_plan_meets_does_not_change_it(model, cluster, nodes, batch):
    """--max-gpus set to the chosen plan's GPUs used to move the band with the fastest plan it
    removed: gpt2 on 8 p4d nodes went from 32 GPUs at 32.06 ms to 16 GPUs at 39.27 ms."""
    found = plan(model, cluster, nodes=nodes, global_batch=batch, explain=False)
    limited = plan(model, cluster, nodes=nodes, global_batch=batch, max_gpus=found.best.gpus, explain=False)
    assert (limited.best.gpus, limited.best.total_s) == (found.best.gpus, found.best.total_s)


def test_more_nodes_no_longer_give_a_slower_plan():
    """resnet-50 at batch 512 on p4d: 64 GPUs at 28.64 ms on 8 nodes, but 32 GPUs at 30.90 ms on 16
    (resnet-152 at batch 256 is the case a tie decides since the buffer copies were counted)."""
    eight = plan("resnet-152", "aws-p4d", nodes=8, global_batch=256, explain=False)
    sixteen = plan("resnet-152", "aws-p4d", nodes=16, global_batch=256)
    assert sixteen.best.total_s <= eight.best.total_s
    assert "tied with the fastest (step" in sixteen.reason and "in every scenario of the model's uncertainty" in sixteen.reason


def test_the_what_if_agrees_with_planning_on_the_scaled_links():
    """gpt2 on 8 DGX-1: 'with 0.5x inter-node bandwidth the choice stays the same (23.8 % lower)'
    while planning on those links chose 32 GPUs at 39 % lower."""
    from costmodel.planner.explain import CHANGED_FIELDS
    from costmodel.planner.whatif import scaled_system

    system = hardware.load_system("dgx-1")
    found = plan("gpt2", system, nodes=8, global_batch=64)
    for change in found.findings["what_if"]:
        factor = 0.5 if "0.5x" in change["label"] else 2.0
        again = plan("gpt2", scaled_system(system, inter_bandwidth=factor), nodes=8, global_batch=64, explain=False)
        # the plan of today stays while it is tied with the re-plan's best (within the plan's tie
        # band: at 2x, ring with 25 MiB buckets 0.25 % behind auto with 100 MiB ones)
        assert change["samples_per_s"] == pytest.approx(again.best.samples_per_s, rel=found.tie_band + 1e-9)
        if change["samples_per_s"] == pytest.approx(again.best.samples_per_s, rel=1e-9):  # not kept by a tie
            moved = [name for field, name in CHANGED_FIELDS if getattr(again.best, field) != getattr(found.best, field)]
            assert [name for name, _, _ in change["changes"]] == moved


def _setting_of(result, system, model="gpt2"):
    """What step_interval needs besides the row: the plan's setting, system and backend."""
    from costmodel.planner.recommend import training_setting
    from costmodel.training.workloads import load_model

    setting = training_setting(load_model(model), system, seq_len=None, compute_dtype="bf16", mfu=None,
                               optimizer="adamw", jitter_cv=0.0, backend=result.backend, recompute=False,
                               memory_reserve=None)
    return setting, system, result.backend


def test_a_compute_bound_plan_keeps_the_floor_and_a_given_band_wins():
    system = hardware.load_system("dgx-h100")
    readme = plan("llama2-7b", system, nodes=4, global_batch=512, seq_len=4096)
    assert readme.tie_band == choose.TIE_BAND and readme.findings["tie_band_source"] == "floor"
    given = plan("gpt2", hardware.load_system("aws-p4d"), tie_band=0.05, **COMM_BOUND)
    assert given.tie_band == 0.05 and given.findings["tie_band_source"] == "given"


def test_cli_default_and_override():
    base = ["plan", "--model", "resnet-152", "--cluster", "aws-p4d", "--nodes", "16", "--global-batch", "256"]
    auto = runner.invoke(app, base)
    assert auto.exit_code == 0 and "scenario of the model's uncertainty" in auto.output
    fixed = runner.invoke(app, [*base, "--tie-band", "0.02"])
    assert fixed.exit_code == 0 and "scenario" not in fixed.output and "within the 2.0% tie band" in fixed.output
    data = __import__("json").loads(runner.invoke(app, [*base, "--tie-band", "0.02", "--json"]).output)
    assert data["tie_band"] == 0.02
