"""The planner author's API: predict() on a link or a cluster, sweep() as a DataFrame (issue 16)."""

from __future__ import annotations

import math

import pytest

import hardware
from costmodel.cluster.api import predict, sweep
from costmodel.collectives.prediction import Prediction
from costmodel.collectives.registry import entries
from costmodel.names import REDUCING_PRIMITIVES, primitive_named
from dpbase.errors import InputError, UnitError

FIELDS = list(Prediction.__dataclass_fields__)


def _same(a, b) -> bool:
    """Equal, where pandas' NaN in a float column stands for the record's None."""
    if isinstance(a, float) and math.isnan(a) and (b is None or (isinstance(b, float) and math.isnan(b))):
        return True
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        return (math.isinf(a) and a == b) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-30)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@pytest.mark.parametrize("system", [p.name for p in hardware.list_profiles("system")])
def test_one_result_type_with_one_set_of_keys_on_every_bundled_system(system):
    seen = {}
    for backend in ("auto", "ideal"):
        p = predict("all-reduce", "64MiB", cluster=system, nodes=2, backend=backend)
        assert isinstance(p, Prediction) and p.time_s > 0
        seen[backend] = p
        assert list(p.to_dict()) == FIELDS
    assert seen["ideal"].backend == "ideal"
    assert seen["auto"].backend in ("nccl", "rccl", "ideal")


def test_predict_on_a_bare_link_matches_the_older_call_form():
    new = predict("all-reduce", 4e9, algorithm="ring", ranks=8, alpha_s=0, bandwidth_Bps=1e9)
    old = predict("all-reduce", "ring", ranks=8, size_bytes=4e9, alpha_s=0, bandwidth_Bps=1e9)
    assert new == old and new.time_s == 7.0


def test_predict_takes_units_and_a_link_profile():
    a = predict("all-reduce", "1GiB", algorithm="ring", ranks=8, alpha_s="5us", bandwidth_Bps="25GB/s")
    b = predict("all-reduce", 2**30, algorithm="ring", ranks=8, alpha_s=5e-6, bandwidth_Bps=25e9)
    assert a == b
    assert predict("all-reduce", "1GiB", link="ib-ndr", ranks=16).time_s > 0


def test_predict_refuses_what_it_cannot_answer():
    with pytest.raises(InputError, match="size"):
        predict("all-reduce", cluster="dgx-h100")
    with pytest.raises(InputError, match="ranks"):
        predict("all-reduce", "1GiB", algorithm="ring", alpha_s=1e-6, bandwidth_Bps=1e9)
    with pytest.raises(InputError, match="bogus"):
        predict("all-reduce", "1GiB", cluster="dgx-h100", bogus=3)


def test_cluster_sweep_equals_scalar_predictions_cell_by_cell():
    df = sweep(["all-reduce", "all-gather"], ["4KiB", "1MiB", "1GiB"], clusters=["dgx-h100", "dgx-a100"],
               nodes=[1, 2], backends=["auto", "ideal"])
    assert list(df.columns) == FIELDS and len(df) == 2 * 3 * 2 * 2 * 2
    for row in df.to_dict("records"):
        p = predict(row["primitive"], row["size_bytes"], cluster=row["cluster"], nodes=row["nodes"],
                    backend="ideal" if row["backend"] == "ideal" else "auto")
        for field in FIELDS:
            assert _same(row[field], getattr(p, field)), (field, row[field], getattr(p, field))


def test_vectorised_link_sweep_equals_scalar_predictions_for_every_registered_algorithm():
    names = sorted({(e.primitive.value, e.algorithm.value) for e in entries() if not e.hierarchical})
    for primitive, algorithm in names:
        # a reduction's time where the primitive reduces (a sweep refuses one no primitive takes)
        gamma = 1e-12 if primitive_named(primitive) in REDUCING_PRIMITIVES else 0.0
        df = sweep(primitive, [1.0, 4096.0, 3e6, 1e9], ranks=[1, 2, 7, 64], algorithms=algorithm,
                   alpha_s=3e-6, bandwidth_Bps=2.5e10, gamma_s_per_byte=gamma)
        assert len(df) == 16
        for row in df.to_dict("records"):
            p = predict(primitive, row["size_bytes"], algorithm, ranks=row["ranks"], alpha_s=3e-6,
                        bandwidth_Bps=2.5e10, gamma_s_per_byte=gamma)
            for field in FIELDS:
                assert _same(row[field], getattr(p, field)), (primitive, algorithm, field, row[field],
                                                               getattr(p, field))


def test_a_sweep_gives_the_reduction_time_to_the_primitives_that_reduce():
    """A γ goes to the swept primitives that reduce (an all-gather row is the one without it); one
    no swept primitive takes is refused, as predict refuses it for one that reduces nothing."""
    link = dict(ranks=8, algorithms="ring", alpha_s=1e-6, bandwidth_Bps=1e9)
    mixed = sweep(["all-reduce", "all-gather"], "1MiB", gamma_s_per_byte=1e-9, **link)
    plain = sweep(["all-reduce", "all-gather"], "1MiB", **link)
    times = {p: (a, b) for p, a, b in zip(mixed["primitive"], mixed["time_s"], plain["time_s"], strict=True)}
    assert times["all-reduce"][0] > times["all-reduce"][1] and times["all-gather"][0] == times["all-gather"][1]
    with pytest.raises(InputError, match="none of the swept primitives reduces"):
        sweep("all-gather", "1MiB", gamma_s_per_byte=1e-9, **link)


def test_sweep_leaves_out_combinations_an_algorithm_cannot_answer():
    df = sweep(["all-reduce", "all-to-all"], "1MiB", ranks=8, algorithms=["ring", "bruck"], alpha_s=1e-6,
               bandwidth_Bps=1e9)
    pairs = set(zip(df["primitive"], df["algorithm"], strict=True))
    assert ("all-reduce", "ring") in pairs and ("all-to-all", "bruck") in pairs
    assert ("all-to-all", "ring") not in pairs
    with pytest.raises(InputError):
        sweep("all-reduce", "1MiB", ranks=8, algorithms="bruck", alpha_s=1e-6, bandwidth_Bps=1e9)


def test_iteration_on_a_cluster_derives_ranks_and_converts_to_a_frame():
    from costmodel.training.oncluster import iteration

    b = iteration("gpt2", "dgx-h100", micro_batch=4, nodes=2)
    assert b.ranks == 16
    frame = b.to_frame()
    assert len(frame) == 1 and frame.loc[0, "total_s"] == b.total_s and "memory_fits" in frame.columns


def test_iteration_breakdown_refuses_ranks_that_disagree_with_its_comm_model():
    from costmodel.cluster.comm import comm_model
    from costmodel.training.iteration import TrainingConfig, iteration_breakdown
    from costmodel.training.workloads import load_model

    comm = comm_model("dgx-h100", 2)
    gpu = hardware.load_system("dgx-h100").gpu
    config = TrainingConfig(micro_batch=4)
    derived = iteration_breakdown(load_model("gpt2"), gpu, comm, config=config)
    assert derived.ranks == 16
    with pytest.raises(InputError, match="ranks"):
        iteration_breakdown(load_model("gpt2"), gpu, comm.time_s, 8, config)


BARE = {"ranks": 8, "alpha_s": 5e-6, "bandwidth_Bps": 25e9}


@pytest.mark.parametrize(("extra", "field", "reason"), [
    ({"stack": "nccl"}, "stack", "only with algorithm auto"),
    ({"alpha_inter_s": 1e-5}, "alpha_inter_s", "only with algorithm hierarchical"),
    ({"backend": "nccl"}, "backend", "together with cluster SYSTEM"),
    ({"pipelined": False}, "pipelined", "a parameter of ring all-reduce"),
])
def test_a_bare_link_query_uses_every_argument_or_refuses_it_in_the_apis_words(extra, field, reason):
    """A bare α/β query runs the query's own checks (it used to skip them: a stack or an
    inter-node rate given with ring was silently dropped), and the error names the keyword the
    caller typed, not the CLI's flag."""
    with pytest.raises(InputError) as raised:
        predict("all-reduce", "1MiB", "ring", **BARE, **extra)
    assert raised.value.field == field and reason in raised.value.allowed
    assert "--" not in str(raised.value)


def test_a_bare_link_errors_name_the_apis_keywords():
    with pytest.raises(InputError, match=r"^bandwidth_Bps: .*\(alpha_s and bandwidth_Bps go together\), or link, or cluster$"):
        predict("all-reduce", "1MiB", "ring", ranks=8, alpha_s=5e-6)
    with pytest.raises(InputError, match=r"^hardware: .*alpha_s and bandwidth_Bps, or link, or cluster$"):
        predict("all-reduce", "1MiB", "ring", ranks=8)
    with pytest.raises(UnitError, match=r"^alpha_s: "):
        predict("all-reduce", "1MiB", "ring", ranks=8, alpha_s=-5e-6, bandwidth_Bps=25e9)
    with pytest.raises(InputError, match=r"^ranks: got 'nothing'; allowed: an integer >= 1 on a link or alpha_s/bandwidth_Bps \(cluster gives its own\)$"):
        predict("all-reduce", "1MiB", "ring", alpha_s=5e-6, bandwidth_Bps=25e9)


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"cluster": "dgx-h100", "nodes": 1.5}, "nodes"), ({"cluster": "dgx-h100", "nodes": "2"}, "nodes"),
    ({"cluster": "dgx-h100", "nodes": None}, "nodes"), ({"cluster": 5}, "cluster"),
    ({"cluster": "dgx-h100", "gpus_per_node": 4.5}, "gpus_per_node"),
])
def test_counts_and_clusters_of_the_wrong_type_are_refused_by_name(kwargs, field):
    """They raised TypeError or AttributeError, or named n_nodes for gpus_per_node."""
    with pytest.raises(InputError) as raised:
        predict("all-reduce", "1MiB", **kwargs)
    assert raised.value.field == field


def test_predict_and_sweep_take_the_same_ranks():
    """A numpy integer is a whole number in both (predict refused it); "8" and True in neither
    (sweep's vectorised path accepted them)."""
    import numpy as np

    assert predict("all-reduce", "1MiB", "ring", ranks=np.int64(8), **{k: v for k, v in BARE.items() if k != "ranks"}).ranks == 8
    for bad in ("8", True):
        with pytest.raises(InputError, match="^ranks: "):
            sweep("all-reduce", "1MB", ranks=[bad], algorithms="ring", alpha_s="5us", bandwidth_Bps="25GB/s")
        with pytest.raises(InputError, match="^ranks: "):
            predict("all-reduce", "1MiB", "ring", ranks=bad, alpha_s="5us", bandwidth_Bps="25GB/s")


def test_the_api_sweep_refuses_nodes_on_a_link_as_predict_does():
    with pytest.raises(InputError, match="^nodes: "):
        sweep("all-reduce", ["1MB"], ranks=[8], nodes=[2], links="ib-ndr")
    with pytest.raises(InputError, match="^ranks: got 8.0; allowed: an integer >= 1, given as an int"):
        sweep("all-reduce", ["1MB"], ranks=[8.0], algorithms="ring", alpha_s="5us", bandwidth_Bps="25GB/s")


def test_the_sweeps_node_size_is_read_as_a_count_first():
    """sweep(..., gpus_per_node="8") was a TypeError from a comparison before any check."""
    with pytest.raises(InputError, match="^gpus_per_node: got '8'; allowed: an integer >= 1, given as an int"):
        sweep("all-reduce", "1MB", ranks=16, algorithms="hierarchical", gpus_per_node="8",
              alpha_s="5us", bandwidth_Bps="25GB/s")
    rows = sweep("all-reduce", "1MB", ranks=16, algorithms="hierarchical", gpus_per_node=8,
                 alpha_s="5us", bandwidth_Bps="25GB/s")
    assert len(rows) == 1


# API review (2026-11-29): silent wrong numbers and raw exceptions on inputs the API takes.
DGX = "dgx-h100"


@pytest.mark.parametrize(("change", "field"), [
    ({"nic_bandwidth_Bps": math.nan}, "cluster ('dgx-h100').nic_bandwidth"),  # answered 16.79 s for 1 GiB
    ({"nic_bandwidth_Bps": 0.0}, "cluster ('dgx-h100').nic_bandwidth"),
    ({"nic_bandwidth_Bps": -1.0}, "cluster ('dgx-h100').nic_bandwidth"),
    ({"intra_bandwidth_Bps": math.inf}, "cluster ('dgx-h100').intra_bandwidth"),  # was an OverflowError
    ({"gpus_per_node": "8"}, "cluster ('dgx-h100').gpus_per_node"),  # read back as 8: a TypeError later
    ({"nics_per_node": 0}, "cluster ('dgx-h100').nics_per_node"),
])
def test_a_system_built_in_python_is_checked_as_a_toml_files_entry(change, field):
    import dataclasses

    built = dataclasses.replace(hardware.load_system(DGX), **change)
    for call in (lambda: predict("all-reduce", "1GiB", cluster=built, nodes=2),
                 lambda: iteration_of("gpt2", built)):
        with pytest.raises(InputError) as error:
            call()
        assert error.value.field == field, str(error.value)


def iteration_of(model, cluster, **options):
    from costmodel.training.oncluster import iteration

    return iteration(model, cluster, micro_batch=8, nodes=2, **options)


def test_a_gpus_negative_peak_is_refused_not_a_faster_step():
    import dataclasses

    from costmodel.planner.recommend import plan

    system = hardware.load_system(DGX)
    gpu = dataclasses.replace(system.gpu, peak_flops={**system.gpu.peak_flops, "bf16": -1.0})
    built = dataclasses.replace(system, gpu=gpu)
    for call in (lambda: iteration_of("gpt2", built), lambda: plan("gpt2", built, global_batch=64)):
        with pytest.raises(InputError, match=r"^cluster \('dgx-h100'\)\.gpu\.peak_tflops\.bf16: "):
            call()


def test_a_valid_system_built_in_python_answers_as_its_toml_would():
    import dataclasses

    half = dataclasses.replace(hardware.load_system(DGX), nic_bandwidth_Bps=25e9)
    slower = predict("all-reduce", "1GiB", cluster=half, nodes=2).time_s
    assert slower > predict("all-reduce", "1GiB", cluster=DGX, nodes=2).time_s
    for system in hardware.list_profiles("system"):  # a copy of every bundled system passes
        assert hardware.system_of(dataclasses.replace(system)) == system


def test_an_error_about_a_profile_file_keeps_its_path_and_names(tmp_path):
    """The API wrote the CLI's flags as keywords by turning '-' into '_' in the whole field: a
    file my-lab-box.toml was named my_lab_box.toml."""
    path = tmp_path / "my-lab-box.toml"
    path.write_text('[[system]]\nname = "lab-box"\ngpu = "h100-sxm"\ngpu_per_node = 4\n')
    with pytest.raises(InputError) as error:
        predict("all-reduce", "1GiB", cluster=str(path), nodes=2)
    assert "my-lab-box.toml" in str(error.value) and "my_lab_box" not in str(error.value)


def test_predict_refuses_a_value_given_twice():
    bare = {"ranks": 8, "alpha_s": 5e-6, "bandwidth_Bps": 25e9}
    with pytest.raises(InputError, match="^size_bytes: got 2000000.0; allowed: left out when size is given"):
        predict("all-reduce", 1e6, size_bytes=2e6, **bare)  # 1e6 answered
    with pytest.raises(InputError, match="^algorithm: got 'tree'"):
        predict("all-reduce", "ring", algorithm="tree", size_bytes=2e6, **bare)  # ring answered
    assert predict("all-reduce", "ring", size_bytes=2e6, **bare).algorithm == "ring"  # the older form stays


def test_a_misspelt_keyword_is_named_as_one():
    with pytest.raises(InputError, match=r"^nodez: got 2; allowed: a keyword of predict \(cluster, nodes, "):
        predict("all-reduce", "1GiB", cluster=DGX, nodez=2)


def test_the_api_sweep_refuses_ranks_on_a_cluster_as_the_cli_does():
    with pytest.raises(InputError, match="^ranks: got 16; allowed: left out with clusters"):
        sweep("all-reduce", "1MB", clusters=DGX, ranks=16)  # one row at 8 ranks


def test_coefficients_take_numpy_integers_as_predict_does():
    import numpy as np

    from costmodel.collectives.api import coefficients

    assert coefficients("all-reduce", "ring", np.int64(8)) == coefficients("all-reduce", "ring", 8)


@pytest.mark.parametrize("answer", [math.nan, math.inf, -1.0, None, "1ms", [1e-3]])
def test_iteration_breakdown_checks_what_a_users_comm_function_answers(answer):
    from costmodel.training.iteration import TrainingConfig, iteration_breakdown

    with pytest.raises(InputError, match=r"^comm: got .*; allowed: seconds >= 0 \(finite\) from comm\('all-reduce'"):
        iteration_breakdown("gpt2", "h100-sxm", lambda primitive, size: answer, 16, TrainingConfig(micro_batch=8))


def test_iteration_breakdown_takes_names_for_the_model_and_the_gpu():
    from costmodel.training.iteration import TrainingConfig, iteration_breakdown
    from costmodel.training.workloads import load_model

    def comm(primitive, size):
        return 1e-3

    config = TrainingConfig(micro_batch=8)
    by_name = iteration_breakdown("gpt2", "h100-sxm", comm, 16, config)
    assert by_name == iteration_breakdown(load_model("gpt2"), hardware.load_gpu("h100-sxm"), comm, 16, config)
    with pytest.raises(InputError, match="^gpu: "):
        iteration_breakdown("gpt2", 3, comm, 16, config)


def test_predictions_and_systems_are_values_that_hash():
    """The frozen values held dicts (a Prediction's params, a GPU's peak FLOP/s), so they could not
    go in a set, a dict key or an lru_cache, and params could be changed in place (API review)."""
    first = predict("all-reduce", "1GiB", algorithm="parameter-server", ranks=8, alpha_s="5us",
                    bandwidth_Bps="25GB/s", servers=2)
    again = predict("all-reduce", "1GiB", algorithm="parameter-server", ranks=8, alpha_s="5us",
                    bandwidth_Bps="25GB/s", servers=2)
    assert first == again and hash(first) == hash(again) and len({first, again}) == 1
    with pytest.raises(TypeError, match="read-only"):
        first.params["servers"] = 4
    assert len({hardware.load_system("dgx-h100"), hardware.load_system("dgx-a100")}) == 2


@pytest.mark.parametrize(("call", "expected"), [
    (lambda: iteration_of("gpt2", DGX, topk_fraction=2.0), "^topk_fraction: got 2.0"),  # was 'topk'
    (lambda: iteration_of("gpt2", DGX, zero_stage=2, shard="hybrid"), "only with zero_stage 3"),  # '--zero 3'
    (lambda: iteration_of("gpt2", DGX, memory_reserve_bytes=1e12), "^memory_reserve_bytes: "),
])
def test_iterations_errors_name_its_keywords(call, expected):
    """API review: iteration's and plan's errors named the CLI's flags and fields (--zero 3,
    topk, deadline, --price-per-gpu-hour) where the caller passed keywords (costmodel.apiwords)."""
    with pytest.raises(InputError, match=expected):
        call()


def test_plans_errors_name_its_keywords_and_the_cli_keeps_its_flags():
    from typer.testing import CliRunner

    from cli import app
    from costmodel.planner.recommend import plan

    with pytest.raises(InputError, match="^deadline_hours: got -1"):
        plan("gpt2", DGX, global_batch=64, deadline_hours=-1)
    with pytest.raises(InputError, match=r"raise nodes/max_gpus\), keep the optimizer states on the host "
                                         r"\(offload_optimizer\)"):
        plan("llama2-70b", DGX, global_batch=64, nodes=1)
    cli = CliRunner().invoke(app, ["plan", "--model", "llama2-70b", "--cluster", DGX, "--global-batch", "64"])
    assert cli.exit_code == 2 and "raise --nodes/--max-gpus), keep the optimizer states on the host " \
                                  "(--offload-optimizer)" in cli.output


# Review of the 2026-11-29 change itself.
def test_a_comm_model_of_the_callers_own_is_checked_too():
    """Only a lambda was checked: an object with time_s, or a bound method, passed NaN through
    (a NaN step) or a negative time (a ZeroDivisionError)."""
    from costmodel.training.iteration import TrainingConfig, iteration_breakdown

    class Other:
        ranks = 16

        def time_s(self, primitive, size):
            return float("nan")

        def seconds(self, primitive, size):
            return -1.0

    for comm in (Other(), Other().seconds):
        with pytest.raises(InputError, match="^comm: got "):
            iteration_breakdown("gpt2", "h100-sxm", comm, 16, TrainingConfig(micro_batch=4))


@pytest.mark.parametrize(("change", "field"), [
    ({"gpus_per_node": True}, "cluster ('dgx-h100').gpus_per_node"),  # TOML syntax, not the field
    ({"description": None}, "cluster ('dgx-h100').description"),
    ({"rail_optimized": "yes"}, "cluster ('dgx-h100').rail_optimized"),
])
def test_a_value_toml_cannot_hold_is_named_by_its_field(change, field):
    import dataclasses

    with pytest.raises(InputError) as error:
        hardware.system_of(dataclasses.replace(hardware.load_system(DGX), **change))
    assert error.value.field == field and "TOML syntax" not in str(error.value)


def test_every_public_entry_checks_a_python_built_profile():
    """topology_for took a System with a negative NIC bandwidth (4.1 ms); iteration_breakdown a
    GPU with negative peaks (a faster step)."""
    import dataclasses

    from costmodel.nccl import topology_for
    from costmodel.training.iteration import TrainingConfig, iteration_breakdown

    system = hardware.load_system(DGX)
    with pytest.raises(InputError, match=r"^system \('dgx-h100'\)\.nic_bandwidth: "):
        topology_for(dataclasses.replace(system, nic_bandwidth_Bps=-1.0), nodes=2)
    gpu = dataclasses.replace(system.gpu, peak_flops={dtype: -peak for dtype, peak in system.gpu.peak_flops.items()})
    with pytest.raises(InputError, match=r"^gpu \('h100-sxm'\)\.peak_tflops\."):
        iteration_breakdown("gpt2", gpu, lambda primitive, size: 1e-3, 16, TrainingConfig(micro_batch=4))
    assert "derived_system" not in hardware.__all__  # the library's own copies: not a way around the check


def test_checking_systems_from_many_threads_at_once():
    """Two threads evicting the oldest checked system at once raised KeyError (8 threads, 4,000
    systems built in Python)."""
    import dataclasses
    from concurrent.futures import ThreadPoolExecutor

    base = hardware.load_system(DGX)
    built = [dataclasses.replace(base, nic_bandwidth_Bps=25e9 + i) for i in range(600)]
    from hardware import loader

    before = loader._CHECKED_MAX
    loader._CHECKED_MAX = 64  # evictions on almost every call
    try:
        with ThreadPoolExecutor(8) as pool:
            found = list(pool.map(hardware.system_of, built))
    finally:
        loader._CHECKED_MAX = before
    assert found == built


def test_asynchronous_is_named_as_the_keyword():
    from costmodel.planner.recommend import plan

    with pytest.raises(InputError, match="unset with asynchronous"):
        plan("gpt2", DGX, global_batch=64, asynchronous=True, quantize_grads=4)
    with pytest.raises(InputError, match="^algorithms: got 'foo'"):
        plan("gpt2", DGX, global_batch=64, algorithms=("foo",))
