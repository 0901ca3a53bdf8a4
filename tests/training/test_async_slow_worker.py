"""Seed 002: synchronous data parallelism waits for the slowest worker (the barrel effect);
asynchronous workers do not, so a slow one only lands fewer updates. `iteration --async
--slow-node F` refused the pair (its fewer updates were not modelled); it now answers: the others'
cycle is unchanged, the slow worker's takes F times the compute, and the throughput keeps
(N - 1 + cycle / slow cycle) / N of N equal workers', against the synchronous step's
everyone-at-the-slow-pace."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli import app
from costmodel.training.iteration import async_throughput_share

runner = CliRunner()
BASE = ["iteration", "--model", "resnet-50", "--cluster", "dgx-a100", "--nodes", "2", "--micro-batch", "64",
        "--algorithm", "parameter-server", "--json"]


def _run(*extra: str) -> dict:
    result = runner.invoke(app, [*BASE, *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_share_of_throughput_a_slow_worker_leaves():
    assert async_throughput_share(8, 1.0, 2.0) == pytest.approx(7.5 / 8)
    assert async_throughput_share(8, 1.0, 1.0) == 1.0 and async_throughput_share(1, 1.0, 9.0) == 1.0
    # a worker that never finishes leaves the other N - 1
    assert async_throughput_share(16, 1.0, 1e12) == pytest.approx(15 / 16)


def test_async_with_a_slow_node_loses_only_its_missing_updates():
    even, slow = _run("--async"), _run("--async", "--slow-node", "2")
    ranks = even["ranks"]
    assert slow["total_s"] == pytest.approx(even["total_s"])  # the others' cycle: nobody waits
    assert slow["straggler_wait_s"] == 0.0
    compute = slow["forward_s"] + slow["backward_s"]
    # its cycle is built as the synchronous model's slowest rank: compute x 2, the same communication,
    # more of it hidden behind the longer backward, so at most the cycle plus the extra compute
    assert slow["total_s"] < slow["slow_worker_s"] <= slow["total_s"] + compute + 1e-12
    share = (ranks - 1 + slow["total_s"] / slow["slow_worker_s"]) / ranks
    assert slow["samples_per_s"] == pytest.approx(even["samples_per_s"] * share, rel=1e-9)
    assert slow["scaling_efficiency"] == pytest.approx(even["scaling_efficiency"] * share, rel=1e-9)
    assert even["slow_worker_s"] == 0.0 and slow["staleness_updates"] == ranks - 1


def test_the_barrel_effect_is_synchronous_only():
    """The same slow node costs the synchronous step every rank's wait; the asynchronous one far less."""
    sync_even, sync_slow = _run(), _run("--slow-node", "2")
    async_even, async_slow = _run("--async"), _run("--async", "--slow-node", "2")
    sync_loss = 1 - sync_slow["samples_per_s"] / sync_even["samples_per_s"]
    async_loss = 1 - async_slow["samples_per_s"] / async_even["samples_per_s"]
    assert sync_loss > 0.3 and 0 < async_loss < sync_loss / 5


def test_the_text_says_what_the_slow_worker_does():
    result = runner.invoke(app, [*BASE[:-1], "--async", "--slow-node", "3"])
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if line.strip().startswith("slow worker"))
    assert "x3" in line and "do not wait" in line and "updates stale" in line


def test_a_loader_bound_slow_worker_loses_nothing():
    """Every worker waits for its data loader: a slow GPU that still beats the loader lands as many
    updates (the loader's wait was counted twice, which made the asynchronous run lose throughput
    where the synchronous one lost none; review, 2026-11-30)."""
    loader = ("--input-rate", "500")
    even, slow = _run("--async", *loader), _run("--async", *loader, "--slow-node", "1.3")
    assert slow["samples_per_s"] == pytest.approx(even["samples_per_s"], rel=1e-12)
    assert slow["slow_worker_s"] == pytest.approx(slow["total_s"])
    assert _run(*loader, "--slow-node", "1.3")["samples_per_s"] == pytest.approx(slow["samples_per_s"])
