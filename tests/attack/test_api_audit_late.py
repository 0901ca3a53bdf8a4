"""The API audit of 2026-11-30. Nothing to move (0 bytes, or one rank) is answered alike on every path:
`predict` and `collective` said 0 for 0 bytes where `compare`, `sweep`, `evaluate_grid`, the comm
model and `nccl_time` still charged the latency (70 µs, 14 steps for a ring of 8), and a 1-GPU
cluster layout carried inf and NaN bandwidths that are not JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import costmodel
from cli import app
from costmodel.collectives.evaluate import evaluate_grid
from costmodel.collectives.registry import entries
from costmodel.nccl import nccl_table_s, nccl_time, topology_for

LINK = {"alpha_s": 5e-6, "bandwidth_Bps": 25e9}


def test_every_path_answers_zero_bytes_with_zero():
    assert costmodel.predict("all-reduce", 0, "ring", ranks=8, **LINK).time_s == 0.0
    ranked = costmodel.compare("all-reduce", ranks=8, size_bytes=0, **LINK)
    assert ranked and all(p.time_s == 0.0 and p.steps == 0 and p.lower_bound_s == 0.0 for p in ranked)
    assert all(p.algbw_Bps is None and p.busbw_Bps is None for p in ranked)
    frame = costmodel.sweep("all-reduce", [0], ranks=8, algorithms="ring", **LINK)
    assert frame["time_s"].tolist() == [0.0] and frame["steps"].tolist() == [0]
    for entry in entries():
        grid = evaluate_grid(entry.primitive.value, entry.algorithm.value, np.array([8]), np.array([0.0, 1e6]),
                             5e-6, 25e9, **({"gpus_per_node": 4} if entry.hierarchical else {}))
        assert grid["time_s"][0] == 0.0 and grid["lower_bound_s"][0] == 0.0, f"{entry.primitive.value}/{entry.algorithm.value}"
        assert np.isnan(grid["busbw_Bps"][0]) and grid["time_s"][1] > 0, f"{entry.primitive.value}/{entry.algorithm.value}"
    for backend in ("nccl", "ideal"):
        model = costmodel.comm_model("dgx-h100", nodes=2, backend=backend)
        assert model.time_s("all-reduce", 0) == 0.0, backend
    topo = topology_for("dgx-h100", 2)
    assert nccl_time("all-reduce", 0, topo).time_s == 0.0
    assert nccl_table_s("all-reduce", [0.0, 1e6], [topo])[0].tolist()[0] == 0.0


def test_the_cli_sweep_agrees_with_collective_at_zero_bytes():
    swept = CliRunner().invoke(app, ["sweep", "all-reduce", "--sizes", "0", "--algorithm", "ring", "--ranks", "8",
                                     "--alpha", "5us", "--bandwidth", "25GB/s", "--json"])
    assert swept.exit_code == 0, swept.output
    rows = json.loads(swept.stdout)
    rows = rows["rows"] if isinstance(rows, dict) else rows
    assert [row["time_s"] for row in rows] == [0.0]


@pytest.mark.parametrize("backend", ["auto", "ideal", "nccl"])
def test_one_gpu_on_a_cluster_has_no_bandwidth_not_inf_or_nan(backend):
    for algorithm in ("auto", "ring"):
        p = costmodel.predict("all-reduce", 1e9, algorithm, cluster="dgx-h100", gpus_per_node=1, backend=backend)
        assert p.time_s == 0.0 and p.algbw_Bps is None and p.busbw_Bps is None
        json.dumps(p.to_dict(), allow_nan=False)  # valid JSON, as the CLI's --json


def test_a_replaced_node_size_is_not_one_nvlink_domain_with_its_neighbour():
    """The load filled a node's NVLink domain into the field (0 -> 8), so a what-if's
    ``replace(system, gpus_per_node=4)`` kept 8 and put two 4-GPU nodes in one NVLink domain
    (NVLS at 4.1 ms over NVLink, where the NICs carry it; API review, 2026-11-30)."""
    import dataclasses

    import hardware
    from costmodel.cluster.mapping import layout

    half = dataclasses.replace(hardware.load_system("dgx-h100"), gpus_per_node=4, nics_per_node=4)
    assert half.domain_gpus == 4 and not layout(half, 2).one_domain
    p = costmodel.predict("all-reduce", "1GB", cluster=half, nodes=2)
    assert p.bottleneck == "ib-ndr" and p.algorithm != "nvls"
    same = costmodel.predict("all-reduce", "1GB", cluster="dgx-h100", nodes=2, gpus_per_node=4)
    assert p.time_s == pytest.approx(same.time_s, rel=0.05)
    odd = dataclasses.replace(hardware.load_system("dgx-h100"), gpus_per_node=3, nics_per_node=3)
    assert costmodel.predict("all-reduce", "1GB", cluster=odd, nodes=2).time_s > 0  # was refused: "scaleup_domain_gpus: got 8"


def test_sweep_reads_a_generator_axis_once_for_every_combination():
    """The axes were re-read per combination: a generator of nodes was empty by the second cluster
    ("nodes: got <generator>; allowed: at least one value"; API review, 2026-11-30)."""
    frame = costmodel.sweep("all-reduce", "1MB", clusters=["dgx-h100", "dgx-a100"], nodes=(n for n in [1, 2]))
    assert sorted(set(zip(frame["cluster"], frame["nodes"]))) == [("dgx-a100", 1), ("dgx-a100", 2),
                                                                  ("dgx-h100", 1), ("dgx-h100", 2)]
    frame = costmodel.sweep("all-reduce", iter(["1MB", "1GB"]), ranks=iter([2, 8]),
                            algorithms=(a for a in ["ring", "double-binary-tree"]), **LINK)
    assert len(frame) == 8


def test_an_explicit_zero_stage_0_with_fsdp_is_refused_as_the_cli_refuses_it():
    from dpbase.errors import InputError

    with pytest.raises(InputError, match="^zero_stage: got 0; allowed: 2 .SHARD_GRAD_OP. or 3"):
        costmodel.iteration("gpt2", "dgx-h100", micro_batch=8, nodes=2, sync="fsdp", zero_stage=0)
    assert costmodel.iteration("gpt2", "dgx-h100", micro_batch=8, nodes=2, sync="fsdp").zero_stage == 3


def test_a_default_node_size_that_does_not_fit_says_it_is_the_default():
    """hierarchical on 12 ranks named gpus_per_node 8, which the user never gave."""
    from dpbase.errors import NotApplicableError

    with pytest.raises(NotApplicableError, match=r"divides ranks \(12\), given: its default 8 does not fit"):
        costmodel.predict("all-reduce", 1e6, "hierarchical", ranks=12, **LINK)
    with pytest.raises(NotApplicableError, match=r"divides ranks \(12\)$"):
        costmodel.predict("all-reduce", 1e6, "hierarchical", ranks=12, gpus_per_node=5, **LINK)
    assert costmodel.predict("all-reduce", 1e6, "hierarchical", ranks=12, gpus_per_node=4, **LINK).time_s > 0


def test_plan_takes_bucket_sizes_with_units_as_predict_and_sweep_take_sizes():
    plan = costmodel.plan("gpt2", "dgx-h100", global_batch=64, bucket_bytes=[1e6, "25MiB"])
    assert {row.bucket_bytes for row in plan.candidates} <= {1e6, 25 * 2**20}
    assert plan.best.bucket_bytes in (1e6, 25 * 2**20)


def test_an_old_nvidia_gpu_is_not_told_to_use_amds_backend():
    import hardware
    from dpbase.errors import NotApplicableError

    with pytest.raises(NotApplicableError) as refused:
        topology_for(hardware.load_system("aws-p2.8xlarge"))
    assert "rccl" not in str(refused.value) and "sm37" in str(refused.value) and "ideal" in str(refused.value)


@pytest.mark.parametrize("args, line", [
    (["--bandwidth", "25GB/s", "--ranks", "8"], "error: --alpha: got 'nothing'; allowed: a value beside 25GB/s"),
    (["--alpha", "5us", "--ranks", "8"], "error: --bandwidth: got 'nothing'; allowed: a value beside 5us"),
    (["--alpha", "5us", "--bandwidth", "25GB/s"], "error: --ranks: got 'nothing'; allowed: an integer >= 1"),
])
def test_a_missing_half_of_the_link_is_named(args, line):
    """`--bandwidth` alone read "hardware: got 'none'", as if nothing was typed; a missing --ranks
    "ranks: got None" (seed audit, 2026-11-30)."""
    result = CliRunner().invoke(app, ["collective", "all-reduce", "--size", "1GB", *args])
    assert result.exit_code == 2 and result.stderr.startswith(line), result.stderr


def test_topk_says_what_it_sends_in_the_text_as_the_json_does():
    args = ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--nodes", "2", "--micro-batch", "8", "--topk",
            "0.01"]
    text = CliRunner().invoke(app, args)
    data = json.loads(CliRunner().invoke(app, [*args, "--json"]).stdout)
    from dpbase.units import format_size

    assert text.exit_code == 0 and f"top-k 0.01: all-gathers {format_size(data['sync_payload_bytes'])} per step" in text.stdout
    # 16 ranks x 1 % of the values, each with its int32 index, gathered by every rank
    assert data["sync_payload_bytes"] == pytest.approx(16 * 0.01 * data["params"] * (2 + 4), rel=1e-6)


def test_step_counts_are_whole_numbers_on_every_path():
    link = costmodel.predict("all-reduce", 1e6, "hierarchical", ranks=16, gpus_per_node=4, **LINK)
    cluster = costmodel.predict("all-reduce", 1e9, "hierarchical", cluster="dgx-h100", nodes=2, backend="ideal")
    counted = costmodel.coefficients("all-reduce", "hierarchical", 16, gpus_per_node=4)
    assert all(type(steps) is int for steps in (link.steps, cluster.steps, counted.steps))


def test_the_charts_api_takes_a_system_as_every_other_entry_does():
    import hardware
    from costmodel.plots import Hardware, best_map_figure, scaling_figure, sweep_figure

    system = hardware.load_system("dgx-h100")
    by_value = sweep_figure("all-reduce", Hardware(cluster=system, nodes=2), min_size="1MiB", max_size="4MiB")
    by_name = sweep_figure("all-reduce", Hardware(cluster="dgx-h100", nodes=2), min_size="1MiB", max_size="4MiB")
    assert [list(t.y) for t in by_value.data] == [list(t.y) for t in by_name.data]
    assert scaling_figure("all-reduce", Hardware(cluster=system), size="1GiB", rank_counts=(8, 16)).data
    assert best_map_figure("all-reduce", Hardware(cluster=system), rank_counts=(8, 16)).data


@pytest.mark.parametrize("args, line", [
    (["sweep", "all-reduce", "--ranks", "1", "--alpha", "5us", "--bandwidth", "25GB/s"], "error: ranks: got 1;"),
    (["sweep", "all-reduce", "--cluster", "dgx-h100", "--gpus-per-node", "1"], "error: gpus_per_node: got 1;"),
    (["scaling", "all-reduce", "--size", "0", "--cluster", "dgx-h100"], "error: size: got '0';"),
    (["best-map", "all-reduce", "--rank-counts", "1", "--alpha", "5us", "--bandwidth", "25GB/s"],
     "error: rank_counts: got [1];"),
])
def test_a_chart_with_nothing_to_draw_is_refused(args, line, tmp_path):
    """They wrote one "none" series at 0 s on a log axis, exit 0 (API audit, 2026-11-30)."""
    out = tmp_path / "chart.html"
    result = CliRunner().invoke(app, ["plot", *args, "-o", str(out)])
    assert result.exit_code == 2 and result.stderr.startswith(line), result.stderr
    assert not out.exists()


def test_plot_plans_refusal_says_which_of_the_advised_options_it_takes(tmp_path):
    result = CliRunner().invoke(app, ["plot", "plan", "--model", "llama2-70b", "--cluster", "dgx-h100", "--nodes", "1",
                                      "--global-batch", "8", "-o", str(tmp_path / "p.html")])
    assert result.exit_code == 2 and "--offload-optimizer" in result.stderr
    assert result.stderr.rstrip().endswith("(plot plan takes --nodes and --global-batch; dpcost plan takes the other "
                                           "options)")


@pytest.mark.parametrize("inputs, message", [
    ([], "one non-empty list of numbers per rank"),
    ([[1, 2], [3]], "all of one length"),
    ([["a"], ["b"]], "one list of numbers per rank"),
    ([[1, 2, 3]] * 4, "a multiple of 4 elements"),
    ([[1]] * 4, "a multiple of 4 elements"),
])
def test_run_schedule_refuses_bad_inputs_in_one_line(inputs, message):
    from dpbase.errors import InputError

    with pytest.raises(InputError, match=message):
        costmodel.run_schedule("all-reduce", "ring", inputs)


def test_chart_titles_read_as_written_and_the_schedule_refuses_sub_byte_cells():
    from costmodel.plots import Hardware, schedule_figure
    from dpbase.errors import InputError

    assert Hardware(ranks=1, alpha=5e-6, bandwidth=25e9).describe() == "1 rank, α = 5 µs, bandwidth 25 GB/s"
    assert Hardware(cluster="dgx-h100", nodes=1, gpus_per_node=1).describe().startswith(
        "dgx-h100 × 1 node (1 GPU),")
    for size in ("0", "3B"):
        with pytest.raises(InputError, match="^size: got .*; allowed: at least 4 B"):
            schedule_figure("all-reduce", "ring", 4, size=size)
    dedicated = schedule_figure("all-reduce", "parameter-server", 4, servers=2)
    assert "intra-node" not in dedicated.layout.title.text  # one level: no level to name
    two_level = schedule_figure("all-reduce", "hierarchical", 4, gpus_per_node=2)
    assert any("intra-node" in frame.layout.title.text for frame in two_level.frames)


def test_a_falling_log_is_not_said_to_be_followed_where_the_fit_misses_it():
    fit = costmodel.fit_times([1e3, 1e6, 1e9], [1e-2, 1e-3, 1e-4])
    note = next(n for n in fit.notes if n.startswith("non-monotonic log"))
    assert "follows the measured points" not in note and "misses measured points by up to 99 %" in note


def test_run_schedule_takes_every_length_its_schedule_cuts_evenly():
    """Seed 001's ring of five blocks on five GPUs was refused for not being a multiple of 20."""
    ring = costmodel.run_schedule("all-reduce", "ring", [[1, 2, 3, 4, 5]] * 5)
    assert ring.correct and ring.outputs[0] == (5.0, 10.0, 15.0, 20.0, 25.0)
    assert costmodel.run_schedule("gather", "binomial", [[1], [2], [3]]).outputs == ((1.0, 2.0, 3.0),)



def test_a_pipeline_with_no_cost_per_message_says_why_its_step_count_is_huge():
    """The seeds' α = 0 examples printed "steps (α count) 8e+09" without a word (seed audit)."""
    from costmodel.collectives.evaluate import UNBOUNDED_CHUNKS_NOTE

    free = costmodel.predict("all-reduce", "4GB", "parameter-server", ranks=8, alpha_s=0, bandwidth_Bps=12.5e9)
    assert free.note == UNBOUNDED_CHUNKS_NOTE and free.params["chunks"] == 10**9
    assert costmodel.predict("all-reduce", "4GB", "parameter-server", ranks=8, **LINK).note is None
    assert costmodel.predict("all-reduce", "4GB", "parameter-server", ranks=8, alpha_s=0, bandwidth_Bps=12.5e9,
                             chunks=4).note is None


def test_a_chart_of_algorithms_that_do_not_run_lists_those_that_do(tmp_path):
    result = CliRunner().invoke(app, ["plot", "sweep", "all-reduce", "-a", "nvls", "--cluster", "dgx-h100", "--nodes",
                                      "2", "--backend", "ideal", "-o", str(tmp_path / "x.html")])
    assert result.exit_code == 2 and result.stderr.startswith(
        "error: algorithm: got 'nvls'; allowed: an algorithm of all-reduce on this hardware: ring, ")


def test_the_alpha_zero_note_only_where_the_split_was_the_models_own():
    given = costmodel.predict("all-reduce", "4MB", "parameter-server", ranks=8, alpha_s=0, bandwidth_Bps=12.5e9,
                              chunks=10**6)
    unpipelined = costmodel.predict("all-reduce", "7B", "parameter-server", ranks=8, alpha_s=0, bandwidth_Bps=12.5e9,
                                    pipelined=False)
    tiny = costmodel.predict("all-reduce", "7B", "parameter-server", ranks=8, alpha_s=0, bandwidth_Bps=12.5e9)
    assert given.note is None and unpipelined.note is None and tiny.note is None


@pytest.mark.parametrize("system, backend", [("dgx-h100", "ideal"), ("mi300x-8x", "rccl"), ("dgx-h100", "nccl")])
def test_every_backend_answers_zero_bytes_itself_not_through_the_querys_patch(system, backend):
    """The tree layout's chains kept 2(G-1) steps of latency and RCCL its own estimate at 0 bytes,
    which only the query's answer zeroed; the backends answer 0 themselves now."""
    from costmodel.cluster.backends import predict_collective
    from costmodel.cluster.mapping import layout

    for p in predict_collective("all-reduce", 0.0, layout(system, 2), algorithm="all", backend=backend):
        assert p.time_s == p.latency_s == 0.0 and p.steps in (0, None) and p.interval_s is None
        assert p.nccl_model_time_s in (0.0, None) and p.lower_bound_s in (0.0, None), p.algorithm
