"""The schedule animation comes from the executor: frames, holdings and messages."""

import pytest

from costmodel.plots import schedule_figure
from costmodel.plots.trace import record
from dpbase.errors import DpcostError

ALGORITHMS = [("ring", {}), ("double-binary-tree", {}), ("recursive-doubling", {}),
              ("parameter-server", {"servers": 2}), ("hierarchical", {"gpus_per_node": 2})]


@pytest.mark.parametrize("ranks", [4, 6])
@pytest.mark.parametrize("algorithm,params", ALGORITHMS)
def test_every_rank_ends_with_the_full_sum(algorithm, params, ranks):
    fig = schedule_figure("all-reduce", algorithm, ranks, **params)
    final = fig.frames[-1].data[0]
    assert all(count == ranks for row in final.z[:ranks] for count in row)
    assert "result correct" in fig.layout.title.text


def test_ring_reduce_scatter_partial_sums_grow_one_rank_per_step():
    trace = record("all-reduce", "ring", 4, {})
    assert len(trace.steps) == 2 * (4 - 1)
    for s, step in enumerate(trace.steps[:3]):
        assert len(step.messages) == 4
        assert all(len(m.contributors) == s + 1 and m.reduce for m in step.messages)
        assert all(m.dst == (m.src + 1) % 4 for m in step.messages)


def test_frames_show_messages_and_executor_matches_formula():
    fig = schedule_figure("all-reduce", "ring", 8, size="4GB")
    assert len(fig.frames) == 15 and len(fig.layout.sliders[0].steps) == 15
    arrows = fig.frames[0].data[1]
    assert sum(1 for y in arrows.y if y is not None) == 16
    assert "executor: 14 steps (latency terms), busiest rank sends 7 GB" in fig.layout.title.text
    assert "formula: 14 steps, 7 GB" in fig.layout.title.text


def test_parameter_server_rows_include_servers():
    fig = schedule_figure("all-reduce", "parameter-server", 3, servers=1)
    assert list(fig.layout.yaxis.ticktext) == ["rank 0", "rank 1", "rank 2", "server 0"]


def test_too_many_ranks_is_refused():
    with pytest.raises(DpcostError):
        schedule_figure("all-reduce", "ring", 64)


@pytest.mark.parametrize(("primitive", "algorithm"), [("all-reduce", "double-binary-tree"),
                                                      ("all-reduce", "parameter-server"),
                                                      ("broadcast", "pipelined-chain")])
def test_record_fills_in_the_algorithms_defaults(primitive, algorithm):
    """record() ran the schedule with the parameters as given: the double binary tree's chunks were a
    KeyError unless passed (a seeds audit, 2026-11-30); it now runs as the chart draws it."""
    trace = record(primitive, algorithm, 8, {})
    assert trace.params.get("chunks") == 1 and trace.steps
    if primitive == "all-reduce":  # every rank ends with the sum of the 8 ranks' bits
        assert (trace.final[:8] == 2**8 - 1).all()
