"""An algorithm named under the rccl backend (2026-11-30, the last session's "left" list): RCCL's
ring and tree are RCCL's; two-shot is MSCCL's all-pairs schedule where that schedule takes the call
(it is a two-shot); any other named algorithm is the textbook model's. Before, `--algorithm two-shot`
at 8 KiB on one MI300X node timed the textbook two-shot (26.6 µs, 14 α steps) beside auto's MSCCL
13.7 µs, and every named algorithm carried the note "RCCL's own tuning model picks the algorithm"
and RCCL's interval class."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from cli import app
from costmodel.cluster.backends import predict_collective
from costmodel.cluster.comm import CommModel
from costmodel.cluster.mapping import layout
from costmodel.cluster.rccl_choice import runs_as_named
from costmodel.planner.comm import outside_backend
from hardware import load_system

ONE_NODE = layout(load_system("mi300x-8x"), 1, 8)


def _one(algorithm: str, size: float):
    return predict_collective("all-reduce", size, ONE_NODE, algorithm=algorithm)[0]


def test_two_shot_named_where_msccl_runs_is_msccls_answer():
    auto, named = _one("auto", 8192), _one("two-shot", 8192)
    assert named.time_s == auto.time_s and named.interval_s == auto.interval_s
    assert named.backend == "rccl" and "MSCCL's all-pairs schedule" in named.note
    assert named.time_s < 15e-6  # both MI300X logs measure 13.1-13.8 µs here


@pytest.mark.parametrize(("algorithm", "size"), [("two-shot", 512), ("recursive-doubling", 8192),
                                                 ("rabenseifner", 64 * 2**20)])
def test_an_algorithm_rccl_does_not_run_is_the_textbooks_and_says_what_rccl_runs(algorithm, size):
    p, auto = _one(algorithm, size), _one("auto", size)
    assert p.backend == "ideal"
    runs = f"MSCCL's all-pairs two-shot ({auto.protocol})" if "MSCCL" in auto.note else f"{auto.algorithm} ({auto.protocol})"
    assert p.note == (f"{algorithm} is not an RCCL algorithm: textbook α-β-γ model (ideal backend); "
                      f"RCCL itself would run {runs} here")
    # the ideal backend's (wide) interval class, not RCCL's measured one (the check here held either
    # way: a disjunction any interval met; review, 2026-11-30)
    from costmodel.cluster.intervals import interval_s

    system = ONE_NODE.system
    assert p.interval_s == interval_s(system, 1, size, p.time_s, ideal=True)
    assert p.interval_s != interval_s(system, 1, size, p.time_s, ideal=False)


def test_rings_and_trees_named_stay_rccls():
    for algorithm in ("ring", "double-binary-tree"):
        p = _one(algorithm, 64 * 2**20)
        assert p.backend == "rccl" and p.note.startswith("rccl backend: RCCL's own tuning model")


def test_the_rule_is_one_for_collective_iteration_and_plan():
    assert [runs_as_named("all-reduce", a, ONE_NODE) for a in ("auto", "ring", "double-binary-tree", "two-shot",
                                                               "recursive-doubling", "parameter-server")] == \
        [True, True, True, True, False, False]
    # two-shot is RCCL's only where MSCCL's schedule may take the call: one node of 8 gfx942 GPUs
    two_nodes = layout(load_system("mi300x-8x"), 2, 8)
    assert not runs_as_named("all-reduce", "two-shot", two_nodes) and not runs_as_named("all-reduce", "two-shot")
    assert CommModel(two_nodes, algorithm="two-shot", backend="rccl").describe()["backend"] == "ideal"
    assert runs_as_named("all-to-all", "direct")  # RCCL's point-to-point path, whatever is named
    comm = CommModel(ONE_NODE, algorithm="recursive-doubling", backend="rccl")
    assert comm.describe()["backend"] == "ideal"
    # the step leaves the textbook band of an off-backend call out of its comm interval
    assert comm.bound_s("all-reduce", 8192, 0) == comm.bound_s("all-reduce", 8192, 1) == comm.time_s("all-reduce", 8192)
    assert outside_backend(["recursive-doubling", "ring"], "rccl").startswith(
        "recursive-doubling is not an RCCL algorithm: its rows are timed on the textbook α-β-γ model (ideal backend), "
        "not RCCL's; RCCL itself would run ring or tree")
    assert outside_backend(["two-shot", "ring"], "rccl") == (
        "two-shot is RCCL's only where MSCCL's all-pairs schedule takes the call (one node of 8 MI300-class GPUs, "
        "1 KiB-16 MiB); its other rows are timed on the textbook α-β-γ model")


def test_the_cli_header_names_the_backend_that_times_the_calls():
    shown = CliRunner().invoke(app, ["iteration", "--model", "gpt2", "--cluster", "mi300x-8x", "--micro-batch", "8",
                                     "--algorithm", "recursive-doubling"]).output
    assert "algorithm recursive-doubling (ideal backend)" in shown.splitlines()[0]


def test_a_refusal_under_rccl_says_which_names_are_rccls():
    """The refusal listed direct, pairwise, bruck … as running "on the rccl backend", where they
    are timed on the textbook model (review, 2026-11-30)."""
    result = CliRunner().invoke(app, ["iteration", "--model", "gpt2", "--cluster", "mi300x-8x", "--nodes", "2",
                                      "--micro-batch", "8", "--algorithm", "tree", "--zero", "1"])
    assert result.exit_code == 2
    assert ("allowed: one this step's reduce-scatter, all-gather runs: auto (RCCL's own choice for its "
            "reduce-scatter, all-gather), RCCL's own ring, or one timed on the textbook α-β model: ") in result.output
