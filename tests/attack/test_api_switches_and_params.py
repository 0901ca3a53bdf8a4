"""The Python API's switches and algorithm parameters, checked as the CLI's are (fuzzing, 2026-11-28).

Text read by truth switched options on: ``colocated="no"`` timed colocated servers,
``iteration(asynchronous="no")`` an asynchronous step, ``plan(asynchronous="no")`` a
parameter-server plan. ``evaluate_grid`` took the parameters unchecked (``chunks=-1``: a negative
time; a node size that does not divide the ranks: an answer ``predict`` refuses), and a single name
given as a swept axis was read letter by letter (``plan(algorithms="ring")``: "got 'r'").
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import costmodel
from costmodel.plots import Hardware, sweep_figure
from dpbase.errors import InputError, NotApplicableError, check_switch

LINK = dict(alpha_s=5e-6, bandwidth_Bps=25e9)


@pytest.mark.parametrize("value", ["no", "false", 1, 0])
def test_an_algorithms_switch_takes_true_or_false_only(value):
    with pytest.raises(InputError, match=r"^colocated: got .*; allowed: True or False$"):
        costmodel.predict("all-reduce", 1e9, "parameter-server", ranks=8, colocated=value, **LINK)
    with pytest.raises(InputError, match=r"^leaders: got .*; allowed: True or False$"):
        costmodel.predict("all-reduce", 1e9, "hierarchical", ranks=16, leaders=value, **LINK)
    with pytest.raises(InputError, match="True or False"):
        costmodel.formula("all-reduce", "parameter-server", colocated=value)


def test_none_is_a_switchs_default_as_iteration_and_plan_read_it():
    default = costmodel.predict("all-reduce", 1e9, "parameter-server", ranks=8, **LINK).time_s
    assert costmodel.predict("all-reduce", 1e9, "parameter-server", ranks=8, colocated=None, **LINK).time_s == default
    # pipelined defaults to True: None read by truth was False (push everything, then pull: 0.64 s)
    assert costmodel.predict("all-reduce", 1e9, "parameter-server", ranks=8, pipelined=None, **LINK).time_s == default
    assert costmodel.predict("all-reduce", 1e9, "parameter-server", ranks=8, pipelined=False, **LINK).time_s > default


def test_true_false_and_numpys_booleans_are_switches():
    colocated = costmodel.predict("all-reduce", 1e9, "parameter-server", ranks=8, colocated=True, **LINK).time_s
    dedicated = costmodel.predict("all-reduce", 1e9, "parameter-server", ranks=8, colocated=False, **LINK).time_s
    assert colocated != dedicated
    assert costmodel.predict("all-reduce", 1e9, "parameter-server", ranks=8, colocated=np.bool_(True),
                             **LINK).time_s == colocated
    assert check_switch("x", np.bool_(False)) is False and check_switch("x", np.array(True)) is True
    with pytest.raises(InputError, match="True or False"):
        check_switch("x", np.array([True]))


@pytest.mark.parametrize("field", ["overlap", "asynchronous", "host_reduce", "flash_attention", "recompute",
                                   "overlap_param_gather", "offload_optimizer", "include_attention"])
def test_a_step_switch_given_as_text_is_refused(field):
    with pytest.raises(InputError, match=rf"^{field}: got 'no'; allowed: True or False$"):
        costmodel.iteration("gpt2", "dgx-h100", micro_batch=8, nodes=2, backend="ideal", **{field: "no"})


@pytest.mark.parametrize("field", ["asynchronous", "explain", "flash_attention", "recompute", "colocated",
                                   "overlap_param_gather", "offload_optimizer"])
def test_a_plan_switch_given_as_text_is_refused(field):
    with pytest.raises(InputError, match=rf"^{field}: got 'no'; allowed: True or False$"):
        costmodel.plan("gpt2", "dgx-h100", global_batch=64, **{field: "no"})


def test_iterations_parameter_server_placement_is_a_switch():
    with pytest.raises(InputError, match="^colocated: got 'no'; allowed: True or False$"):
        costmodel.iteration("gpt2", "dgx-h100", micro_batch=8, nodes=2, algorithm="parameter-server", colocated="no")


@pytest.mark.parametrize(("algorithm", "params", "error"), [
    ("pipelined-chain", {"chunks": -1}, "^chunks: got -1; allowed: an integer >= 1 or 'auto'$"),
    ("pipelined-chain", {"chunks": 0}, "^chunks: got 0;"), ("pipelined-chain", {"chunks": 2.5}, "^chunks: got 2.5;"),
    ("pipelined-chain", {"chunks": "x"}, "^chunks: got 'x';"),
])
def test_the_grid_checks_parameters_as_predict_does(algorithm, params, error):
    with pytest.raises(InputError, match=error):
        costmodel.evaluate_grid("broadcast", algorithm, 8, 1e9, 0.0, 1e9, **params)
    with pytest.raises(InputError, match=error):
        costmodel.predict("broadcast", 1e9, algorithm, ranks=8, **LINK, **params)


def test_the_grid_checks_every_rank_count_against_the_node_size():
    with pytest.raises(NotApplicableError, match=r"^gpus_per_node: got 3; allowed: an integer >= 1 that divides"):
        costmodel.evaluate_grid("all-reduce", "hierarchical", np.array([6, 8]), 1e9, 0.0, 1e9, gpus_per_node=3)
    with pytest.raises(InputError, match="^servers: got 0; allowed: an integer >= 1$"):
        costmodel.evaluate_grid("all-reduce", "parameter-server", 8, 1e9, 0.0, 1e9, servers=0)
    found = costmodel.evaluate_grid("all-reduce", "hierarchical", np.array([6, 12]), 1e9, 0.0, 1e9, gpus_per_node=3)
    assert np.all(found["time_s"] > 0)


def test_one_name_is_an_axis_of_one():
    ring = costmodel.plan("gpt2", "dgx-h100", global_batch=64, algorithms="ring", explain=False)
    assert {row.algorithm for row in ring.candidates} == {"ring"}
    fp16 = costmodel.plan("gpt2", "dgx-h100", global_batch=64, grad_dtypes="fp16", bucket_bytes=25e6, explain=False)
    assert {(row.grad_dtype, row.bucket_bytes) for row in fp16.candidates} == {("fp16", 25e6)}
    figure = sweep_figure("all-reduce", Hardware(ranks=8, alpha="5us", bandwidth="25GB/s"), algorithms="ring")
    assert {trace.name for trace in figure.data} == {"ring"}


@pytest.mark.parametrize(("given", "error"), [
    ({"foo": 3}, "^foo: got 3; allowed: a parameter of an algorithm of all-reduce: "),
    ({"bandwidth_Bps": True}, "^bandwidth_Bps: got True;"), ({"size_bytes": True}, "^size_bytes: got True;"),
    ({"ranks": 8.0}, r"^ranks: got 8.0; allowed: an integer >= 1, given as an int"), ({"alpha_s": 1e300}, "^alpha_s: got 1e\\+300;"),
    ({"size_bytes": None}, "^size_bytes: got None;"),
])
def test_compare_refuses_what_predict_refuses(given, error):
    """compare dropped unknown keywords, read True as 1 B/s and answered α = 1e300 s."""
    with pytest.raises(InputError, match=error):
        costmodel.compare("all-reduce", **({"ranks": 8, "size_bytes": 1e9} | LINK | given))


def test_compare_takes_units_and_numpys_numbers_as_predict_does():
    plain = costmodel.compare("all-reduce", ranks=8, size_bytes=1e9, **LINK)
    typed = costmodel.compare("all-reduce", ranks=np.int64(8), size_bytes="1GB", alpha_s="5us", bandwidth_Bps="25GB/s")
    assert [(p.algorithm, p.time_s) for p in typed] == [(p.algorithm, p.time_s) for p in plain]
    single = costmodel.predict("all-reduce", 1e9, "ring", ranks=8, alpha_s=np.float32(5e-6),
                               bandwidth_Bps=np.int64(25 * 10**9))  # was "a unit is needed"
    assert single.time_s == pytest.approx(costmodel.predict("all-reduce", 1e9, "ring", ranks=8, **LINK).time_s,
                                          rel=1e-6)


@pytest.mark.parametrize(("args", "kwargs", "error"), [
    (([1, 2, 3], [1e-5, 2e-5]), {}, "^measurements: got '3 sizes and 2 times'; allowed: two lists of numbers of equal"),
    ((None, None), {}, "^measurements: got 'sizes and times'; allowed: two lists of numbers"),
    ((["1KB", "2KB"], [1e-5, 2e-5]), {}, "^measurements: got 'sizes and times'; allowed: two lists of numbers"),
    (([1, 2, 4, 8], [1e-5, 2e-5, 3e-5, 4e-5]), {"max_regimes": 2.5}, "^max_regimes: got 2.5;"),
])
def test_fit_times_refuses_in_one_line(args, kwargs, error):
    """An IndexError (lengths checked after indexing), a ValueError and a TypeError before."""
    with pytest.raises(InputError, match=error):
        costmodel.fit_times(*args, **kwargs)


@pytest.mark.parametrize("path", ["/nonexistent/x.log", "/", "", None])
def test_parse_file_refuses_a_path_it_cannot_read_in_one_line(path):
    with pytest.raises(InputError, match="^file: got "):
        costmodel.parse_file(path)


@pytest.mark.parametrize(("hardware", "error"), [
    (Hardware(cluster="dgx-h100", alpha="5us"), "^--alpha: got '5us'; allowed: left out with --cluster"),
    (Hardware(cluster="dgx-h100", ranks=4), "^--ranks: got 4; allowed: left out with --cluster"),
    (Hardware(ranks=8, alpha="5us", bandwidth="25GB/s", nodes=2), "^--nodes: got 2; allowed: only with --cluster"),
    ("dgx-h100", "^hardware: got 'dgx-h100'; allowed: a costmodel.plots.Hardware"),
])
def test_a_chart_refuses_hardware_it_would_not_use(hardware, error):
    """Hardware(cluster=…, alpha=…) drew the cluster and dropped alpha (the CLI refuses it)."""
    with pytest.raises(InputError, match=error):
        sweep_figure("all-reduce", hardware)


@pytest.mark.parametrize(("given", "error"), [
    ({"seq_len": "1024"}, "^seq_len: got '1024'; allowed: an integer"), ({"seq_len": 1.5}, "^seq_len: got 1.5;"),
    ({"mfu": "0.5"}, "^mfu: got '0.5'; allowed: a number$"), ({"mfu": True}, "^mfu: got True;"),
    ({"jitter_cv": "x"}, "^jitter_cv: got 'x';"), ({"topk_fraction": "0.1"}, "^topk_fraction: got '0.1';"),
    ({"memory_reserve_bytes": "1GB"}, "^memory_reserve_bytes: got '1GB';"), ({"nodes": "2"}, "^nodes: got '2';"),
])
def test_iteration_refuses_text_where_a_number_goes(given, error):
    """Each was a TypeError (or True read as 1) from the arithmetic."""
    with pytest.raises(InputError, match=error):
        costmodel.iteration("gpt2", "dgx-h100", micro_batch=8, **({"nodes": 2} | given))


def test_model_and_cluster_are_named_when_missing_and_numpys_counts_are_counts():
    for call in (lambda: costmodel.iteration(None, "dgx-h100", micro_batch=8),
                 lambda: costmodel.plan(None, "dgx-h100", global_batch=64)):
        with pytest.raises(InputError, match="^model: got None;"):
            call()
    for call in (lambda: costmodel.iteration("gpt2", None, micro_batch=8),
                 lambda: costmodel.plan("gpt2", None, global_batch=64)):
        with pytest.raises(InputError, match="^cluster: got None;"):
            call()
    with pytest.raises(InputError, match="^seq_len: got 1.5;"):
        costmodel.plan("gpt2", "dgx-h100", global_batch=64, seq_len=1.5)
    counted = costmodel.iteration(np.int64(124_000_000), "dgx-h100", micro_batch=np.int64(8), nodes=np.int64(2))
    assert counted.total_s == costmodel.iteration(124_000_000, "dgx-h100", micro_batch=8, nodes=2).total_s


@pytest.mark.parametrize(("given", "error"), [
    ({"tokens": "1e9"}, "^tokens: got '1e9'; allowed: a number$"), ({"mfu": "0.5"}, "^mfu: got '0.5';"),
    ({"tie_band": "x"}, "^tie_band: got 'x';"), ({"memory_reserve": "1GB"}, "^memory_reserve: got '1GB';"),
    ({"progress": 5}, "^progress: got 5; allowed: a function"),
    ({"bucket_bytes": "25 bananas"}, r"^bucket_bytes: got '25 bananas'; allowed: a number with B"),  # units: taken
])
def test_plan_refuses_text_where_a_number_goes(given, error):
    with pytest.raises(InputError, match=error):
        costmodel.plan("gpt2", "dgx-h100", global_batch=64, **given)


def test_values_out_of_range_are_named_by_their_own_field():
    """A zero inter-node bandwidth read 'time: got inf', a 1e30-byte bucket 'size: got 1e+30'."""
    with pytest.raises(InputError, match="^bandwidth_inter_Bps: got 0; allowed: a bandwidth > 0"):
        costmodel.predict("all-reduce", 1e9, "hierarchical", ranks=16, gpus_per_node=4, bandwidth_inter_Bps=0, **LINK)
    with pytest.raises(InputError, match="^bucket_bytes: got 1e\\+30; allowed: a size from 4 bytes to 1 ZiB"):
        costmodel.iteration("gpt2", "dgx-h100", micro_batch=8, nodes=2, bucket_bytes=1e30)


def test_review_fixes_of_the_parameter_checks():
    """Colocated servers left out the layouts too small for them in the planner (a fresh refusal
    stopped the plan); one rank count a sweep's grid cannot take is left out alone; sympy symbols
    never stand for a switch; text is not a number of servers."""
    frame = costmodel.sweep("all-reduce", "1MB", ranks=[8, 4], algorithms=["ring", "hierarchical"],
                            alpha_s="5us", bandwidth_Bps="25GB/s")
    assert list(zip(frame["algorithm"], frame["ranks"])) == [("ring", 8), ("ring", 4), ("hierarchical", 8)]
    import sympy

    with pytest.raises(InputError, match="^leaders: got L; allowed: True or False$"):
        costmodel.formula("all-reduce", "hierarchical", leaders=sympy.Symbol("L"))
    with pytest.raises(InputError, match="^servers: got '4'; allowed: an integer >= 1$"):
        costmodel.evaluate_grid("all-reduce", "parameter-server", 8, 1e9, 0.0, 1e9, servers="4")
    assert costmodel.formula("all-reduce", "hierarchical", gpus_per_node=sympy.Symbol("G")).time.has(sympy.Symbol("G"))
    assert costmodel.plan("gpt2", "dgx-h100", global_batch=np.int64(64), nodes=np.int64(2), explain=False).best.gpus
    numpy_best = costmodel.plan("gpt2", "dgx-h100", global_batch=np.int64(64), nodes=np.int64(2), explain=False).best
    plain_best = costmodel.plan("gpt2", "dgx-h100", global_batch=64, nodes=2, explain=False).best
    assert (numpy_best.gpus, numpy_best.total_s) == (plain_best.gpus, plain_best.total_s)


def test_collnet_in_a_sweep_is_still_collnet():
    """The first alias dedupe read NCCL's collnet as in-network and answered NVLS where the
    cluster has no CollNet; repeats are now dropped as answers, names reach the query as typed."""
    from typer.testing import CliRunner

    from cli import app

    result = CliRunner().invoke(app, ["sweep", "all-reduce", "--sizes", "1GiB", "--cluster", "dgx-h100", "--nodes",
                                      "2", "-a", "collnet"])
    assert result.exit_code == 2 and "got 'collnet'" in result.stderr


@pytest.mark.parametrize("size", [float("inf"), 2.0**80])
def test_a_swept_bucket_is_checked_as_iterations_bucket_is(size):
    """The planner's copy had the 4-byte floor only: inf gave 'size_bytes: got nan' after a
    RuntimeWarning (overlap.bucket_size_ok is now the one rule)."""
    with pytest.raises(InputError, match=r"^bucket_bytes: got .*; allowed: one or more sizes of at least 4 bytes .* "
                                         "and at most 1 ZiB$"):
        costmodel.plan("gpt2", "dgx-h100", global_batch=64, bucket_bytes=[size])


def test_an_algorithms_count_is_an_integer_as_the_ranks_are():
    """servers=4.0 was refused by predict but answered by compare and evaluate_grid: the
    collectives take integers alone (dpbase.errors.whole_count), numpy's included; the training
    step and the planner take a whole number in any spelling (dpbase.errors.is_whole)."""
    from costmodel.collectives.evaluate import evaluate_grid

    with pytest.raises(InputError, match=r"^servers: got 4.0; allowed: an integer >= 1, given as an int"):
        costmodel.predict("all-reduce", 1e9, "parameter-server", ranks=8, servers=4.0, **LINK)
    with pytest.raises(InputError, match=r"^servers: got 4.0; allowed: an integer >= 1$"):
        evaluate_grid("all-reduce", "parameter-server", 8, 1e9, 5e-6, 25e9, servers=4.0)
    with pytest.raises(InputError, match=r"^servers: got 4.0;"):
        costmodel.compare("all-reduce", ranks=8, size_bytes=1e9, servers=4.0, **LINK)
    assert costmodel.predict("all-reduce", 1e9, "parameter-server", ranks=8, servers=np.int64(4), **LINK).params[
        "servers"] == 4
    from dpbase.errors import is_whole

    assert [is_whole(v) for v in (4, 4.0, np.int64(4), np.float64(4.0))] == [True] * 4
    assert not any(is_whole(v) for v in (4.5, float("inf"), float("nan"), True, "4", None))


def test_the_training_step_takes_its_counts_as_the_planner_does():
    """iteration(nodes=2.0) was refused by the cluster's integer rule while micro_batch=8.0 and
    plan(nodes=2.0) were taken: the training API takes a whole count in any spelling, and the
    rest still meets the cluster's own message."""
    as_int = costmodel.iteration("gpt2", "dgx-a100", nodes=2, gpus_per_node=8, micro_batch=8, backend="ideal")
    as_float = costmodel.iteration("gpt2", "dgx-a100", nodes=2.0, gpus_per_node=np.float64(8), micro_batch=8.0,
                                   backend="ideal")
    assert as_int.ranks == as_float.ranks == 16 and as_float.total_s == as_int.total_s
    # taken, and answered in Python numbers (review, 2026-11-29: 8.0 gave a global batch of 128.0,
    # and a numpy micro-batch a breakdown json could not write)
    assert type(as_float.micro_batch) is int and type(as_float.global_batch) is int
    import json

    numpy_in = costmodel.iteration("gpt2", "dgx-a100", nodes=2, micro_batch=np.int64(8), mfu=np.float64(0.4),
                                   backend="ideal")
    json.dumps(numpy_in.to_dict())
    assert costmodel.plan("gpt2", "dgx-a100", nodes=2.0, global_batch=64, explain=False).best.gpus <= 16
    for bad in (2.5, True, "2", -1.0):
        with pytest.raises(InputError, match=rf"^nodes: got {bad!r};"):
            costmodel.iteration("gpt2", "dgx-a100", nodes=bad, micro_batch=8)


@pytest.mark.parametrize(("field", "value", "allowed"), [
    ("quantize_weights", "int8", "a bit count: 8 (ZeRO++ qwZ)"), ("quantize_grads", "int4", "a bit count: 4 or 8"),
    ("quantize_weights", True, "a bit count: 8")])
def test_quantisation_bits_given_as_text_are_named_as_given(field, value, allowed):
    """iteration(quantize_weights="int8") said "got 'intint8'; allowed: int8" (review, 2026-11-28)."""
    with pytest.raises(InputError, match=rf"^{field}: got {value!r}; allowed: {re.escape(allowed)}"):
        costmodel.iteration("gpt2", "dgx-h100", micro_batch=1, gpus_per_node=2, zero_stage=3, **{field: value})


def test_iteration_refuses_a_stack_beside_a_library_backend_as_predict_does():
    """iteration(stack="gloo", backend="nccl") answered NCCL's step as if no stack were given, where
    predict refuses the pair (review, 2026-11-28): one rule, stacks.check_stack_backend."""
    from dpbase.errors import NotApplicableError

    message = r"^stack: got 'gloo'; allowed: left out with backend nccl"
    with pytest.raises(NotApplicableError, match=message):
        costmodel.iteration("llama2-7b", "dgx-h100", nodes=2, micro_batch=1, stack="gloo", backend="nccl")
    with pytest.raises(NotApplicableError, match=message):
        costmodel.predict("all-reduce", 1e9, cluster="dgx-h100", nodes=2, stack="gloo", backend="nccl")
    gloo = costmodel.iteration("llama2-7b", "dgx-h100", nodes=2, micro_batch=1, stack="gloo")
    assert gloo.total_s != costmodel.iteration("llama2-7b", "dgx-h100", nodes=2, micro_batch=1).total_s


def test_a_query_without_a_size_is_refused_not_answered_at_zero_bytes():
    """Query's size defaulted to 0: a Query built without one answered a 0-byte collective (18.8 µs
    on dgx-h100) as if asked (API review, 2026-11-29). A size of 0 stated is still a query, whose
    answer is 0: NCCL discards an empty collective without a kernel (src/enqueue.cc), where it was
    timed at the latency (review, 2026-11-30); a size below one byte is refused."""
    with pytest.raises(InputError, match=r"^size: got None; allowed: a message size"):
        costmodel.run_query(costmodel.Query(primitive="all-reduce", cluster="dgx-h100"))
    stated = costmodel.run_query(costmodel.Query(primitive="all-reduce", cluster="dgx-h100", size=0))[0]
    assert stated.size_bytes == 0.0 and stated.time_s == 0.0 and "nothing to move" in stated.note
    ring = costmodel.run_query(costmodel.Query(primitive="all-reduce", cluster="dgx-h100", size=0, algorithm="ring"))
    assert ring[0].algorithm == "ring" and ring[0].time_s == 0.0
    with pytest.raises(InputError, match=r"^size: got 0.5; allowed: 0, or at least 1 byte"):
        costmodel.run_query(costmodel.Query(primitive="all-reduce", cluster="dgx-h100", size=0.5))


def test_a_zero_byte_answer_agrees_everywhere():
    """A CLI audit (2026-11-30) found the 0-byte answer at 0 ns beside a 15 µs lower bound and 6
    steps, and nccl-table still predicting 18.8 µs for it: no step runs, no bound is above 0, and
    nccl-table says so too (text and JSON), for NCCL and RCCL."""
    import json

    from typer.testing import CliRunner

    from cli import app

    ideal = costmodel.run_query(costmodel.Query(primitive="all-reduce", ranks=8, alpha="5us", bandwidth="25GB/s",
                                                size=0))[0]
    assert ideal.time_s == 0.0 and ideal.lower_bound_s == 0.0 and ideal.steps == 0
    for cluster, stack in (("dgx-h100", "NCCL"), ("mi300x-8x", "RCCL")):
        text = CliRunner().invoke(app, ["nccl-table", "--cluster", cluster, "--size", "0"])
        assert text.exit_code == 0, text.output
        assert text.output.rstrip().endswith(f"all-reduce 0: nothing to move ({stack} discards an empty collective "
                                             "without a kernel)")
        found = CliRunner().invoke(app, ["nccl-table", "--cluster", cluster, "--size", "0", "--json"])
        prediction = json.loads(found.stdout)["prediction"]
        assert prediction["time_s"] == 0.0 and "nothing to move" in prediction["note"]
        # as `collective` gives it (a review found steps 14, a 5.7 µs bound and ring/LL beside time 0)
        assert prediction["algorithm"] == "none" and prediction["latency_s"] == 0.0
        assert prediction["busbw_Bps"] is None and prediction.get("steps", 0) == 0
        assert prediction.get("lower_bound_s") in (None, 0.0)
        same = json.loads(CliRunner().invoke(app, ["collective", "all-reduce", "--cluster", cluster, "--size", "0",
                                                   "--json"]).stdout)
        assert same["note"] == prediction["note"] and same["nccl_model_time_s"] == 0.0  # it was NCCL's 15 µs
        if stack == "RCCL":  # the same Prediction, through query.empty_answer
            keys = ("algorithm", "steps", "lower_bound_s", "interval_s", "nccl_model_time_s", "launch_overhead_s")
            assert {k: prediction[k] for k in keys} == {k: same[k] for k in keys}
        else:  # NCCL's own JSON shape: its estimate and launch 0 too (they kept the model's)
            assert prediction["model_time_s"] == 0.0 and prediction["launch_overhead_s"] == 0.0


@pytest.mark.parametrize(("call", "name"), [
    (lambda: costmodel.plan("gpt2", "dgx-h100", global_batch=64, nodez=2), "nodez"),
    (lambda: costmodel.sweep("all-reduce", "1MiB", cluster="dgx-h100"), "cluster"),
    (lambda: costmodel.measured_mfu("gpt2", "dgx-h100", costmodel.TrainingConfig(micro_batch=8), 100.0, gpus=8),
     "gpus"),
])
def test_a_keyword_an_entry_does_not_take_is_named(call, name):
    """plan, sweep and measured_mfu raised Python's TypeError for a misspelt keyword, where
    iteration and predict named it (review, 2026-11-30)."""
    with pytest.raises(InputError, match=f"^{name}: got .*allowed: a keyword of "):
        call()


def test_measured_mfu_speaks_its_keywords():
    """Its errors named the CLI's flags (--zero, --rate-gpus) and its rate "rate"."""
    config = costmodel.TrainingConfig(micro_batch=8, zero_stage=2, shard="hybrid")
    with pytest.raises(InputError, match="only with zero_stage 3") as found:
        costmodel.measured_mfu("gpt2", "dgx-h100", config, 100.0)
    assert "--" not in str(found.value)
    with pytest.raises(InputError, match="^rate_samples_per_s: got -1"):
        costmodel.measured_mfu("gpt2", "dgx-h100", costmodel.TrainingConfig(micro_batch=8), -1)
    with pytest.raises(InputError, match="fits in memory") as found:
        costmodel.measured_mfu("llama2-70b", "dgx-h100", costmodel.TrainingConfig(micro_batch=1, seq_len=4096), 2.0)
    assert "--" not in str(found.value)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: costmodel.sweep("all-reduce", [], clusters="dgx-h100"), "^sizes: got \\[\\]"),
    (lambda: costmodel.sweep([], "1MiB", clusters="dgx-h100"), "^primitives: got \\[\\]"),
    (lambda: costmodel.sweep("all-reduce", "1MiB", clusters=[]), "^clusters: got \\[\\]"),
    # (None is the default sweep since the buckets a mode would ignore are refused: an object is not an axis)
    (lambda: costmodel.plan("gpt2", "dgx-h100", global_batch=64, bucket_bytes=object()), "^bucket_bytes: got <object"),
    (lambda: costmodel.compare("all-reduce", ranks=8, size_bytes=1e9, alpha_s=5e-6, bandwidth_Bps=0),
     "^bandwidth_Bps: got 0.0"),
    (lambda: costmodel.predict("all-reduce", "1GiB", cluster="dgx-h100", alpha_s=1e-6),
     "^alpha_s: got 1e-06; allowed: left out with cluster"),
    (lambda: costmodel.predict("all-reduce", "1GiB", ranks=8, link="ib-hdr", bandwidth_Bps=1e9),
     "^bandwidth_Bps: got 1000000000.0; allowed: left out with link"),
])
def test_errors_name_the_argument_as_it_was_given(call, message):
    """An empty axis was "sweep axis", plan's buckets "axis", compare's bandwidth "bandwidth", and
    a rate given beside a cluster or link was 'given with --cluster' (review, 2026-11-30)."""
    with pytest.raises(InputError, match=message):
        call()
