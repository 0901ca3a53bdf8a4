"""A read-only audit of the Python API's bad input (2026-12-01) found these; each test fails on the
code before the fix: bare TypeErrors, options silently dropped, a sum past float's range called
correct, numpy scalars refused or leaking float32 into the step."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import costmodel
from costmodel.cluster import predict_on_cluster
from costmodel.collectives.evaluate import evaluate_grid
from costmodel.training.losses import StepLosses
from dpbase.errors import DpcostError, InputError


@pytest.mark.parametrize(("field", "value"), [
    ("host_overhead_s", "x"), ("overlap_slowdown", None), ("speed_cv", [1]), ("slow_node_factor", "2"),
    ("host_overhead_s", True), ("input_rate", True),
])
def test_loss_terms_of_the_wrong_type_are_refused(field, value):
    """A string or None was a TypeError; True was read as 1 (a 1 s host overhead, 1 sample/s)."""
    losses = dataclasses.replace(StepLosses(), **{field: value})
    with pytest.raises(InputError):
        costmodel.iteration("gpt2", "dgx-h100", micro_batch=8, nodes=2, losses=losses)


def test_a_numpy_rate_is_taken_as_a_python_float():
    """np.float32(100) was refused by plan ("allowed: from 0.001 to 1e+12") and made iteration's
    step a float32 (0.0799999982 s for 0.08)."""
    losses = dataclasses.replace(StepLosses(), input_rate=np.float32(100))
    result = costmodel.iteration("gpt2", "dgx-h100", micro_batch=8, nodes=2, losses=losses)
    assert result.total_s == 0.08 and type(result.total_s) is float
    plan = costmodel.plan("gpt2", "dgx-h100", global_batch=64, nodes=1, input_rate=np.float64(1e4))
    assert plan.best.samples_per_s > 0


@pytest.mark.parametrize("name", ["ps", "Parameter_Server", "parameter-server"])
def test_plan_reads_the_parameter_server_in_any_spelling(name):
    """sync="fsdp" beside algorithms=["ps"] was dropped (every row DDP's); asynchronous=True with
    ["ps"] was refused as not parameter-server."""
    with pytest.raises(InputError, match="parameter server does not run"):
        costmodel.plan("gpt2", "dgx-h100", global_batch=64, nodes=1, sync="fsdp", algorithms=[name])
    assert costmodel.plan("gpt2", "dgx-h100", global_batch=64, nodes=1, asynchronous=True, algorithms=[name]).best


def test_a_reduction_time_reaching_no_row_is_refused():
    """compare on a bare link and predict_on_cluster took a γ for an all-gather or a scatter and
    dropped it; a cluster sweep whose reducing rows NCCL refuses returned the scatter row alone.
    (evaluate_grid, the formulas' evaluator, takes γ as predict_entry does: a hardware constant
    whose term is 0 where nothing reduces, as the registry's property tests check.)"""
    with pytest.raises(InputError, match="all-gather reduces nothing"):
        costmodel.compare("all-gather", "1MiB", ranks=8, alpha_s=5e-6, bandwidth_Bps=25e9, gamma_s_per_byte=1e-9)
    with pytest.raises(InputError, match="scatter reduces nothing"):
        predict_on_cluster("scatter", "linear", "dgx-h100", size_bytes=1e6, gamma_s_per_byte=1e-9)
    with pytest.raises(DpcostError, match="gamma"):
        costmodel.sweep(["scatter", "all-reduce"], "1MiB", clusters="dgx-h100", gamma_s_per_byte="1ns")
    assert predict_on_cluster("all-reduce", "ring", "dgx-h100", size_bytes=1e6, gamma_s_per_byte=1e-9).time_s > \
        predict_on_cluster("all-reduce", "ring", "dgx-h100", size_bytes=1e6).time_s


@pytest.mark.parametrize("gamma", ["x", None, True, 1e300])
def test_predict_on_cluster_checks_its_reduction_time(gamma):
    """"x" and None were TypeErrors, True was 1 s a byte, 1e300 a 8.75e305 s all-reduce."""
    with pytest.raises(InputError, match="gamma_s_per_byte"):
        predict_on_cluster("all-reduce", "ring", "dgx-h100", size_bytes=1e6, gamma_s_per_byte=gamma)


def test_evaluate_grid_refuses_inter_node_rates_a_flat_algorithm_does_not_read():
    with pytest.raises(InputError, match="alpha_inter_s"):
        evaluate_grid("all-reduce", "ring", 8, 1e6, 5e-6, 25e9, alpha_inter_s=1.0)


def test_an_optimizer_that_is_not_a_name_is_refused():
    with pytest.raises(InputError, match="optimizer"):
        costmodel.iteration("gpt2", "dgx-h100", micro_batch=8, optimizer=[1])


def test_a_schedule_whose_sum_leaves_float_range_is_refused():
    """Its outputs were (inf, inf) with correct=True."""
    with pytest.raises(InputError, match="within float range"):
        costmodel.run_schedule("all-reduce", "ring", [[1e308, 1e308]] * 2)
    assert costmodel.run_schedule("all-reduce", "ring", [[1e300, 1.0]] * 2).correct


def test_nccl_s_topology_stops_at_the_rank_limit_every_other_path_has():
    """topology_for answered 8e9 ranks (10^9 nodes of 8)."""
    import hardware
    from costmodel.nccl import topology_for

    with pytest.raises(InputError, match=r"^nodes: got 1000000000; allowed: an integer from 1 to 134217728"):
        topology_for(hardware.load_system("dgx-h100"), 10**9)
    assert topology_for(hardware.load_system("dgx-h100"), 2**27).n_ranks == 2**30


def test_sweep_checks_its_cli_words_switch():
    with pytest.raises(InputError, match="cli_words"):
        costmodel.sweep("all-reduce", "1MiB", ranks=8, alpha_s=1e-6, bandwidth_Bps=1e9, cli_words="yes")


def test_comm_model_names_its_own_keywords_and_the_command_its_flags():
    """costmodel.comm_model's parameter-server check named the CLI's flags (``--servers``,
    ``--ps-placement``, ``--algorithm``) to a Python caller (left from the second API audit,
    2026-12-01); ``dpcost iteration`` keeps them."""
    for given, field in ((dict(servers=4), "servers"), (dict(colocated=True), "colocated")):
        with pytest.raises(InputError) as refused:
            costmodel.comm_model("dgx-h100", 2, 8, algorithm="ring", **given)
        assert refused.value.field == field and "--" not in str(refused.value)
        assert "only with algorithm parameter-server" in str(refused.value)
    from typer.testing import CliRunner

    from cli import app

    result = CliRunner().invoke(app, ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--nodes", "2",
                                      "--micro-batch", "8", "--algorithm", "ring", "--servers", "4"])
    assert result.exit_code == 2 and "--servers: got 4" in result.output and "--algorithm parameter-server" in result.output
