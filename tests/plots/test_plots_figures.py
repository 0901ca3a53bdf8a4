"""Figure structure of the charts: traces, axes, units, hover, errors."""

from pathlib import Path

import pytest

from costmodel.plots import (
    Hardware,
    StepSetup,
    best_map_figure,
    breakdown_figure,
    scaling_figure,
    step_breakdown,
    sweep_figure,
)
from dpbase.errors import DpcostError

FLAT = Hardware(ranks=8, alpha="5us", bandwidth="25GB/s")
LOG = Path(__file__).parents[1] / "data" / "plots" / "abci_a_2n.txt"


def test_sweep_has_time_and_busbw_per_algorithm_on_log_axes():
    fig = sweep_figure("all-reduce", FLAT, min_size="1KiB", max_size="1GiB", algorithms=("ring", "recursive-doubling"))
    assert sorted(t.name for t in fig.data) == ["recursive-doubling", "recursive-doubling", "ring", "ring"]
    assert len(fig.data[0].x) == 21
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log" and fig.layout.yaxis2.type == "log"
    assert fig.layout.yaxis.title.text == "time (s)" and fig.layout.yaxis2.title.text == "busbw (GB/s)"
    ring_time = next(t for t in fig.data if t.name == "ring").y[-1]
    assert ring_time == pytest.approx(5e-6 * 14 + 2**30 * 1.75 / 25e9)
    assert "GB/s" in fig.data[0].customdata[0][1] and "all-reduce" in fig.layout.title.text


def test_sweep_overlays_a_measured_log():
    fig = sweep_figure("all-reduce", Hardware(cluster="dgx-a100", nodes=2), measured_log=str(LOG), max_size="32MiB")
    measured = [t for t in fig.data if t.name.startswith("measured")]
    assert len(measured) == 2 and len(measured[0].x) == 24


def test_scaling_has_lower_bound_below_every_algorithm():
    fig = scaling_figure("all-reduce", FLAT, size="1GiB", rank_counts=(2, 4, 8, 16))
    bound = next(t for t in fig.data if t.name == "lower bound")
    for trace in fig.data:
        assert all(y >= b * (1 - 1e-9) for y, b in zip(trace.y, bound.y))
    assert fig.layout.xaxis.title.text == "ranks N"


def test_best_map_names_the_winner_on_hover():
    fig = best_map_figure("all-reduce", FLAT, rank_counts=(2, 8, 64), min_size="1KiB", max_size="1MiB")
    heat = fig.data[0]
    assert len(heat.z) == 3 and len(heat.z[0]) == 11
    assert "winner <b>" in heat.text[0][0]
    assert set(heat.colorbar.ticktext) >= {heat.text[0][0].split("<b>")[1].split("</b>")[0]}


def test_best_map_under_nccl_names_algorithm_and_protocol():
    fig = best_map_figure("all-reduce", Hardware(cluster="dgx-h100", backend="nccl"), rank_counts=(8, 16),
                          min_size="1KiB", max_size="16MiB")
    assert all("/" in label for label in fig.data[0].colorbar.ticktext)


def test_breakdown_segments_add_up_to_the_step():
    setups = [StepSetup(model="gpt2", cluster="dgx-h100", nodes=n, micro_batch=4) for n in (1, 2)]
    breakdowns = [step_breakdown(s) for s in setups]
    fig = breakdown_figure(breakdowns, [s.label() for s in setups])
    assert fig.layout.barmode == "stack" and len(fig.data) == 8  # the last: the gradient buffer copies
    for i, b in enumerate(breakdowns):
        assert sum(t.y[i] for t in fig.data) == pytest.approx(b.total_s)


def test_bad_inputs_are_domain_errors():
    with pytest.raises(DpcostError):
        sweep_figure("all-reduce", FLAT, min_size="1GiB", max_size="1KiB")
    with pytest.raises(DpcostError):
        sweep_figure("all-reduce", Hardware(ranks=8, alpha="5us", bandwidth="25GB/s", backend="nccl"))
    with pytest.raises(DpcostError):
        scaling_figure("all-reduce", Hardware(cluster="dgx-h100"), size="1GiB", rank_counts=(12,))


def test_plan_landscape_marks_the_recommendation():
    from costmodel.planner.recommend import plan
    from costmodel.plots import plan_figure

    found = plan("gpt2", "dgx-h100", global_batch=256, nodes=2, top=100_000, explain=False).to_dict()
    fig = plan_figure(found)
    heat, star = fig.data
    best = found["best"]
    assert star.x == (str(best["accumulation_steps"]),) and star.y == (str(best["micro_batch"]),)
    cells = [v for row in heat.z for v in row if v is not None]
    assert max(cells) == pytest.approx(max(r["samples_per_s"] for r in [*found["candidates"], best]))
    assert fig.layout.xaxis.title.text == "accumulation steps k"
    with pytest.raises(DpcostError):
        plan_figure(found, x="bucket")


def test_python_charts_default_to_the_backend_the_cli_picks():
    """Hardware(...) without a backend is `auto`, resolved per primitive as `dpcost plot` and
    `collective` resolve it: NCCL's model on an NVIDIA cluster, RCCL's on AMD, the ideal model
    (noted) for a collective NCCL's model lacks; a named backend is kept."""
    from costmodel.plots import Hardware, sweep_figure

    def subtitle(primitive, **hw):
        return sweep_figure(primitive, Hardware(**hw), max_size="1MiB").layout.title.text.split("<sup>")[1]

    assert subtitle("all-reduce", cluster="dgx-h100", nodes=2).endswith("NCCL model</sup>")
    assert subtitle("all-reduce", cluster="mi300x-8x", nodes=2).endswith("RCCL ring/tree, α-β</sup>")
    assert "ideal α-β model (NCCL's tuning model has no all-to-all" in subtitle("all-to-all", cluster="dgx-h100")
    assert subtitle("all-reduce", cluster="dgx-h100", backend="ideal").endswith("ideal α-β model</sup>")
    assert subtitle("all-reduce", ranks=8, alpha="5us", bandwidth="25GB/s").startswith("8 ranks")
    # an algorithm NCCL's model lacks draws on the ideal model, noted, as `collective` answers it
    hierarchical = sweep_figure("all-reduce", Hardware(cluster="dgx-h100", nodes=2), max_size="1MiB",
                                algorithms=("hierarchical",))
    assert "hierarchical is not an NCCL algorithm" in hierarchical.layout.title.text
    assert {trace.name for trace in hierarchical.data} >= {"hierarchical"}


@pytest.mark.parametrize(("cluster", "nodes"), [("dgx-h100", 4), ("l40s-tcp-1x", 2)])
def test_a_breakdown_bar_is_what_iteration_answers(cluster, nodes):
    """step_breakdown defaulted to the ideal backend and left the cluster's transport out, while
    `dpcost plot breakdown` and `dpcost iteration` take the realistic backend and the transport
    (over TCP sockets hidden communication is not free): one answer, the API's."""
    import json

    from typer.testing import CliRunner

    from cli import app
    from costmodel.plots import StepSetup, step_breakdown

    bar = step_breakdown(StepSetup(model="gpt2", cluster=cluster, nodes=nodes, micro_batch=4, accumulation_steps=2))
    result = CliRunner().invoke(app, ["iteration", "--model", "gpt2", "--cluster", cluster, "--nodes", str(nodes),
                                      "--micro-batch", "4", "--accum", "2", "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert (bar.total_s, bar.interference_s, bar.transport) == (
        pytest.approx(found["total_s"], rel=1e-12), pytest.approx(found["interference_s"], rel=1e-12), found["transport"])


def test_a_breakdown_bar_that_does_not_fit_says_so_and_zero_makes_it_fit():
    """The documented example drew llama2-7b unsharded on H100s (135 GB of 85 GB) as a 2.07 s step
    with no word of memory, and the chart had no --zero to draw one that fits (review, 2026-11-30)."""
    from costmodel.plots import StepSetup, breakdown_figure, step_breakdown

    setups = [StepSetup(model="llama2-7b", cluster="dgx-h100", micro_batch=1, accumulation_steps=4, zero_stage=zero)
              for zero in (0, 3)]
    bars = [step_breakdown(setup) for setup in setups]
    assert [b.memory.fits for b in bars] == [False, True] and bars[1].zero_stage == 3
    figure = breakdown_figure(bars, [setup.label() for setup in setups])
    notes = [a.text for a in figure.layout.annotations]
    assert notes == ["does not fit: 135.4 GB of 85.0 GB"] and figure.layout.annotations[0].x == setups[0].label()
    assert "ZeRO-3" in setups[1].label() and "ZeRO" not in setups[0].label()


def test_a_value_given_twice_is_one_point_and_one_curve():
    """The CLI's comma lists drop repeats, the chart API did not: x went 2, 8, 2 and ring was drawn twice."""
    fig = scaling_figure("all-reduce", FLAT, size="1GiB", rank_counts=(2, 8, 2), algorithms=["ring", "ring"])
    rings = [t for t in fig.data if t.name == "ring"]
    assert len(rings) == 1 and list(rings[0].x) == [2, 8]


def _cell(fig, row: int, column: int) -> tuple[str, float]:
    """(winner label, its time in µs as the hover prints it) of one best-map cell."""
    text = fig.data[0].text[row][column]
    label = text.split("<b>")[1].split("</b>")[0]
    return label, text.split("</b>: ")[1].split("<br>")[0]


@pytest.mark.parametrize(("hardware", "primitive"), [
    (Hardware(cluster="dgx-h100", backend="ideal"), "all-reduce"),  # the fastest NCCL runs, not recursive doubling
    (Hardware(cluster="dgx-h100"), "all-reduce"),  # NCCL's choice
    (Hardware(cluster="mi300x-8x"), "all-reduce"),  # RCCL's choice, not the faster of ring and tree
    (Hardware(cluster="mi300x-8x"), "all-gather"),
    (Hardware(alpha="5us", bandwidth="25GB/s"), "all-reduce"),  # a bare link: every algorithm
])
def test_every_best_map_cell_is_what_collective_answers(hardware, primitive):
    """Review F (2026-11-29): the map named recursive doubling at 7.6 µs on dgx-h100 under the ideal
    model where `collective` answers the double binary tree at 29.6 µs, and under RCCL the faster of
    ring and tree where RCCL chooses the other (23 of 90 cells)."""
    from costmodel.cluster.query import Query, run_query
    from dpbase.units import format_time

    ranks = (2, 8, 16, 32)
    fig = best_map_figure(primitive, hardware, rank_counts=ranks, min_size="8B", max_size="4GiB")
    seen = set()
    for row, n in enumerate(ranks):
        for column in range(0, 30, 3):  # every third of the map's 30 sizes, 8 B (2**3) to 4 GiB
            size = 2.0 ** (column + 3)
            on = hardware.with_ranks(n)
            answer = run_query(Query(primitive=primitive, size=size, cluster=on.cluster, nodes=on.nodes,
                                     gpus_per_node=on.gpus_per_node, alpha=on.alpha, bandwidth=on.bandwidth,
                                     ranks=on.ranks, backend=hardware.backend))[0]
            expected = f"{answer.algorithm}/{answer.protocol}" if answer.protocol else answer.algorithm
            assert _cell(fig, row, column) == (expected, format_time(answer.time_s)), (n, size)
            seen.add(expected)
    assert len(seen) >= 2  # the grid crosses at least one change of answer


def test_best_map_hover_names_what_the_library_did_not_choose():
    """Under a library's own choice the other algorithm can time faster on the model: the hover
    says 'fastest not chosen', not 'runner-up'."""
    fig = best_map_figure("all-reduce", Hardware(cluster="mi300x-8x"), rank_counts=(16,), min_size="128MiB",
                          max_size="128MiB")
    text = fig.data[0].text[0][0]
    assert "winner <b>double-binary-tree/Simple</b>" in text and "fastest not chosen ring/Simple" in text
    ideal = best_map_figure("all-reduce", FLAT, rank_counts=(8,), min_size="1KiB", max_size="1KiB")
    assert "runner-up" in ideal.data[0].text[0][0]


@pytest.mark.parametrize(("hardware", "name"), [
    (Hardware(cluster="dgx-h100"), "double-binary-tree"),  # NCCL's model, in the registry's words
    (Hardware(cluster="dgx-h100"), "in-network"),
    (Hardware(cluster="mi300x-8x", nodes=2), "rabenseifner"),  # RCCL backend, an algorithm RCCL's auto skips
    (Hardware(cluster="mi300x-8x", nodes=2), "auto"),
])
def test_charts_take_every_algorithm_name_collective_takes(hardware, name):
    """Review F: `-a double-binary-tree` on dgx-h100 and rabenseifner on mi300x were refused by the
    charts and answered by `collective`; each point is now `collective`'s answer for the name."""
    from costmodel.cluster.query import Query, run_query

    fig = sweep_figure("all-reduce", hardware, min_size="1MiB", max_size="1GiB", algorithms=(name,))
    times = next(t for t in fig.data if t.name == name).y
    for size, drawn in zip((2.0**e for e in range(20, 31)), times):
        answer = run_query(Query(primitive="all-reduce", algorithm=name, size=size, cluster=hardware.cluster,
                                 nodes=hardware.nodes))[0]
        assert drawn == pytest.approx(answer.time_s, rel=1e-9), size
        if name == "rabenseifner":  # and, below the query, the α-β mapping RCCL's backend times it on
            from costmodel.cluster import predict_on_cluster

            mapped = predict_on_cluster("all-reduce", name, hardware.cluster, nodes=hardware.nodes, size_bytes=size)
            assert drawn == pytest.approx(mapped.time_s, rel=1e-12), size


def test_a_backend_that_cannot_answer_here_is_said_as_collective_says_it():
    """Review of the change: asking names one by one, the charts skipped any refusal, so RCCL's
    backend on an NVIDIA system read "rank_counts: got 8" (best-map) or "algorithm: got 'ring'"."""
    nvidia = Hardware(cluster="dgx-h100", backend="rccl")
    for draw in (lambda: best_map_figure("all-reduce", nvidia, rank_counts=(8, 16), min_size="1KiB", max_size="1MiB"),
                 lambda: sweep_figure("all-reduce", nvidia, min_size="1KiB", max_size="1MiB", algorithms=("ring",))):
        with pytest.raises(DpcostError, match="^system: got 'dgx-h100'; allowed: an AMD GPU system"):
            draw()


def test_auto_is_drawn_on_a_bare_link_as_collective_answers_it():
    from costmodel.cluster.query import Query, run_query

    fig = sweep_figure("all-reduce", FLAT, min_size="1MiB", max_size="1MiB", algorithms=("auto",))
    answer = run_query(Query(primitive="all-reduce", size=2**20, ranks=8, alpha="5us", bandwidth="25GB/s"))[0]
    assert next(t for t in fig.data if t.name == "auto").y[0] == pytest.approx(answer.time_s, rel=1e-12)
