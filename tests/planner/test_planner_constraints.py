"""Constraints and cost: deadline, budget, prices and power, cost/energy objectives, partial
nodes, and the scale limits (issue 18)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from cli import app
from costmodel.planner import grid, recommend
from costmodel.planner.economics import economics_for
from dpbase.errors import InputError


def plan(*args, **kwargs):  # the advice in the CLI's words (--nodes, --shard full), as `dpcost plan` prints it
    return recommend.plan(*args, _cli_words=True, **kwargs)


GPU_HOURS = dict(nodes=16, global_batch=1024, objective="gpu-hours", tokens=300e9, explain=False)


def test_gpu_hours_without_a_deadline_takes_one_gpu_and_with_one_meets_it():
    free = plan("1.3B", "dgx-a100", **GPU_HOURS)
    assert free.best.gpus == 1 and free.best.hours_to_train > 14 * 24  # 221 days (193 before attention's matmuls counted)
    bound = plan("1.3B", "dgx-a100", deadline_hours=14 * 24, **GPU_HOURS)
    assert bound.best.hours_to_train <= 14 * 24
    assert all(row.hours_to_train <= 14 * 24 for row in bound.candidates)
    # the deadline costs little: within a few per cent of the unconstrained GPU-hours (6.0 %)
    assert bound.best.gpu_hours <= free.best.gpu_hours * 1.07


def test_an_impossible_deadline_says_what_the_fastest_plan_needs():
    with pytest.raises(InputError, match="deadline.*the fastest plan needs"):
        plan("1.3B", "dgx-a100", deadline_hours=1.0, **GPU_HOURS)


def test_cost_and_energy_are_gpu_hours_times_price_and_power():
    result = plan("1.3B", "dgx-h100", nodes=2, global_batch=128, objective="cost", tokens=1e10,
                  explain=False)
    money = economics_for("h100-sxm")
    assert money.price_per_gpu_hour == pytest.approx(98.32 / 8, rel=1e-3)
    for row in result.candidates:
        assert row.cost == pytest.approx(row.gpu_hours * money.price_per_gpu_hour)
        assert row.energy_kwh == pytest.approx(row.gpu_hours * 700 / 1000)
    assert result.best.objective_value == pytest.approx(result.best.cost)
    mine = plan("1.3B", "dgx-h100", nodes=2, global_batch=128, objective="energy", tokens=1e10,
                power_w=350.0, explain=False)
    assert mine.best.energy_kwh == pytest.approx(mine.best.gpu_hours * 0.35)


def test_a_budget_excludes_plans_that_cost_more():
    kwargs = dict(nodes=4, global_batch=512, objective="throughput", tokens=1e10, explain=False,
                  top=50)
    free = plan("1.3B", "dgx-h100", **kwargs)
    limit = float(np.median([row.cost for row in free.candidates]))
    bound = plan("1.3B", "dgx-h100", budget=limit, **kwargs)
    assert all(row.cost <= limit for row in bound.candidates)
    assert free.best.cost > limit or free.best == bound.best


def test_cost_needs_a_price_where_none_is_bundled():
    with pytest.raises(InputError, match="price_per_gpu_hour"):
        plan("1.3B", "dgx-b200", global_batch=64, objective="cost", tokens=1e9, explain=False)
    got = plan("1.3B", "dgx-b200", global_batch=64, objective="cost", tokens=1e9, explain=False,
               price_per_gpu_hour=6.0)
    assert got.best.cost == pytest.approx(got.best.gpu_hours * 6.0)


def test_partial_nodes_run_as_equal_processes_per_node():
    result = plan("gpt2", "dgx-h100", gpus=20, global_batch=320, explain=False, top=50)
    assert result.best.gpus == 20 and (result.best.nodes, result.best.gpus_per_node) == (4, 5)
    for row in result.candidates:
        assert row.nodes * row.gpus_per_node == row.gpus <= 20 and row.gpus_per_node <= 8
        assert 320 % row.gpus == 0


def test_partial_layouts_pack_each_count_on_the_fewest_nodes():
    layouts = grid.batch_layouts(8, 100, 1, 24, 240, partial=True)
    totals = [n * g for n, g in layouts]
    assert totals == sorted(t for t in range(1, 25) if 240 % t == 0)
    assert (3, 8) in layouts and (4, 5) in layouts and (1, 6) in layouts


@given(st.integers(1, 5000))
def test_divisors_are_every_divisor_in_order(n):
    assert grid.divisors(n) == [d for d in range(1, n + 1) if n % d == 0]


def test_huge_batches_use_divisors_not_every_micro_batch():
    space_cells = grid.cell_count([(1, 8)], 134217728)
    assert space_cells == 25  # 2^24 samples per GPU: 25 divisors, not 16 million micro-batches
    result = plan("llama2-7b", "dgx-h100", global_batch=134217728, explain=False)
    assert result.best.micro_batch * result.best.accumulation_steps * result.best.gpus == 134217728


@pytest.mark.parametrize("args,field", [
    (["--nodes", "1000000000"], "nodes"), (["--global-batch", str(2**50)], "global_batch"),
    (["--gpus", "100000000"], "error: gpus: ")])  # the option typed (it named max_gpus before 2026-11-28)
def test_absurd_scales_are_refused_in_one_line(args, field):
    base = ["plan", "--model", "llama2-7b", "--cluster", "dgx-h100", "--global-batch", "512"]
    result = CliRunner().invoke(app, base + args)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and field in lines[0]


def test_cli_deadline_budget_and_objectives():
    runner = CliRunner()
    result = runner.invoke(app, ["plan", "--model", "1.3B", "--cluster", "dgx-a100", "--nodes", "16",
                                 "--global-batch", "1024", "--objective", "gpu-hours", "--tokens",
                                 "300B", "--deadline", "14d", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["best"]["hours_to_train"] <= 14 * 24 and data["deadline_hours"] == 14 * 24
    bad = runner.invoke(app, ["plan", "--model", "1.3B", "--cluster", "dgx-a100", "--global-batch",
                              "64", "--deadline", "soon", "--tokens", "1B"])
    assert bad.exit_code == 2 and bad.output.startswith("error: deadline")
    reserve = runner.invoke(app, ["plan", "--model", "1.3B", "--cluster", "dgx-a100",
                                  "--global-batch", "64", "--memory-reserve", "150%"])
    assert reserve.exit_code == 2 and reserve.output.startswith("error: memory_reserve")


def test_a_missed_deadline_is_told_in_hours_as_it_was_given():
    """It said "the fastest plan needs 1.688e+06 s (deadline 3.6e+05 s)" for --deadline 100h."""
    with pytest.raises(InputError) as raised:
        plan("llama2-7b", "dgx-h100", nodes=8, global_batch=512, objective="gpu-hours", tokens=1e12,
             deadline_hours=100, explain=False)
    assert "the fastest plan needs 441 hours (deadline 100 hours)" in str(raised.value)


def test_the_constraint_no_plan_meets_is_the_one_named():
    """A deadline every plan meets beside a budget none does was reported under 'deadline'."""
    args = dict(nodes=2, global_batch=64, objective="cost", tokens=1e9, explain=False)
    fast = plan("gpt2", "dgx-h100", **args)
    with pytest.raises(InputError) as raised:
        plan("gpt2", "dgx-h100", deadline_hours=fast.best.hours_to_train * 100, budget=1e-6, **args)
    message = str(raised.value)
    assert message.startswith("budget: got 1e-06") and "the cheapest costs" in message
    assert "the fastest plan needs" not in message


@pytest.mark.parametrize(("kwargs", "field"), [
    (dict(tokens=math.inf), "tokens"), (dict(tokens=1e300), "tokens"),
    (dict(tokens=math.inf, objective="cost"), "tokens"),  # blamed price_per_gpu_hour
    (dict(tokens=1e9, budget=math.inf), "budget"), (dict(tokens=1e9, deadline_hours=math.inf), "deadline")])
def test_infinite_tokens_budgets_and_deadlines_are_refused(kwargs, field):
    """plan(tokens=inf) answered "inf hours, inf GPU-hours, inf USD", and --budget inf read "Meets the
    budget of inf USD" beside a JSON null (review, 2026-11-28): the API takes the CLI's token range."""
    with pytest.raises(InputError, match=rf"^{field}: got "):
        plan("gpt2", "dgx-h100", global_batch=64, explain=False, **kwargs)
    result = CliRunner().invoke(app, ["plan", "--model", "gpt2", "--cluster", "dgx-h100", "--global-batch", "64",
                                      "--tokens", "1e9", "--budget", "inf"])
    assert result.exit_code == 2 and "budget: got inf" in result.stderr


def test_a_missed_budget_is_not_told_to_add_gpus():
    """A missed budget advised "allow more GPUs (--nodes/--gpus)", but more GPUs cost as many GPU-hours
    (mpt-7b: the cheapest plan is 35,430 USD on 2 nodes and on 16; planner scan, 2026-11-28; 29,636
    USD since the width roofline, 2026-11-30); a
    missed deadline still is."""
    args = dict(global_batch=512, objective="gpu-hours", tokens=1e11, explain=False)
    with pytest.raises(InputError) as budget:
        plan("mpt-7b", "dgx-h100", nodes=2, budget=28344, **args)
    assert "a larger --budget or a lower --price-per-gpu-hour or train on fewer --tokens" in str(budget.value)
    assert "more GPUs" not in str(budget.value)
    with pytest.raises(InputError) as deadline:
        plan("mpt-7b", "dgx-h100", nodes=2, deadline_hours=1.0, **args)
    assert "allow more GPUs (--nodes/--gpus) or train on fewer --tokens" in str(deadline.value)
    # where the cheapest plan already uses every GPU, more can be cheaper: mpt-30b on one A3 Mega
    # node costs 363 USD (recomputing), on 4 nodes 302 (review, 2026-11-28); 259 and 220 since the
    # width roofline (2026-11-30)
    money = dict(global_batch=64, objective="cost", tokens=1e9, price_per_gpu_hour=2.0, explain=False)
    with pytest.raises(InputError) as full:
        plan("mpt-30b", "gcp-a3-mega", nodes=1, budget=240, **money)
    assert "allow more GPUs (--nodes/--gpus)" in str(full.value)
    assert plan("mpt-30b", "gcp-a3-mega", nodes=4, budget=240, **money).best.gpus > 8
