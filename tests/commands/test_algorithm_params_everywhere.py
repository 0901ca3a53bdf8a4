"""The algorithm parameters (--servers, --colocated, --no-pipeline, --chunks, --leaders) reach every
command that asks a formula: `compare`, `sweep` and the `plot sweep` / `plot scaling` charts took
none, so seed 002's linear growth ((N - 1) x 1.2 s at the one rank that reduces for all) could be
typed only one `collective` per N, and the charts drew a dedicated server (a seeds audit,
2026-11-30). Each parameter goes to the algorithms that take it; one no asked algorithm takes is
refused with exit 2, never dropped."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli import app
from costmodel.cluster.api import sweep
from costmodel.collectives.api import predict
from costmodel.plots import Hardware, scaling_figure, sweep_figure

runner = CliRunner()
LINK = ["--alpha", "0s", "--bandwidth", "1GB/s"]
SEED_002 = [*LINK, "--sizes", "1.2GB", "--ranks", "2,3,10"]


def _ps(ranks: int, **params) -> float:
    return predict("all-reduce", "parameter-server", ranks=ranks, size_bytes=1.2e9, alpha_s=0.0,
                   bandwidth_Bps=1e9, **params).time_s


def test_sweep_draws_seed_002s_linear_growth_at_the_colocated_server():
    result = runner.invoke(app, ["sweep", "all-reduce", "-a", "parameter-server", *SEED_002, "--colocated",
                                 "--servers", "1", "--json"])
    assert result.exit_code == 0, result.output
    times = [row["time_s"] for row in json.loads(result.stdout)]
    assert times == pytest.approx([1.2, 2.4, 10.8], rel=1e-8)  # (N - 1) x 1.2 s
    # without the flag the server is a machine of its own: N x 1.2 s, which the sweep gave before
    dedicated = runner.invoke(app, ["sweep", "all-reduce", "-a", "parameter-server", *SEED_002, "--json"])
    assert [row["time_s"] for row in json.loads(dedicated.stdout)] == pytest.approx([2.4, 3.6, 12.0], rel=1e-8)


def test_each_swept_algorithm_gets_its_own_share_of_the_parameters():
    frame = sweep("all-reduce", "1.2GB", ranks=[2, 10], algorithms=["ring", "parameter-server"], alpha_s=0,
                  bandwidth_Bps="1GB/s", colocated=True, servers=2)
    ps = frame[frame.algorithm == "parameter-server"]
    ring = frame[frame.algorithm == "ring"]
    assert ps.time_s.tolist() == pytest.approx([_ps(2, colocated=True, servers=2), _ps(10, colocated=True, servers=2)])
    assert ring.time_s.tolist() == pytest.approx([1.2, 2.16])  # 2 (N - 1) / N x 1.2 s, untouched
    assert ps.params.tolist()[1]["colocated"] is True and ps.params.tolist()[1]["servers"] == 2
    # the grid path (bare α/β, one named algorithm) and the per-point path (a link profile) agree
    pointwise = sweep("all-reduce", "1.2GB", ranks=[10], algorithms="parameter-server", links="ib-hdr",
                      colocated=True, pipelined=False)
    assert pointwise.params.tolist()[0]["pipelined"] is False and pointwise.params.tolist()[0]["colocated"] is True
    from costmodel.cluster.api import predict as on_link

    used = on_link("all-reduce", "1.2GB", "parameter-server", link="ib-hdr", ranks=10, colocated=True, pipelined=False)
    pipelined = on_link("all-reduce", "1.2GB", "parameter-server", link="ib-hdr", ranks=10, colocated=True)
    assert pointwise.time_s.tolist()[0] == pytest.approx(used.time_s, rel=1e-12) != pipelined.time_s


@pytest.mark.parametrize(("args", "flag", "allowed"), [
    (["-a", "ring"], "--colocated", "parameter-server"),
    (["-a", "auto"], "--colocated", "parameter-server"),
    (["-a", "ring,parameter-server", "--leaders"], "--leaders", "hierarchical"),
])
def test_a_parameter_no_swept_algorithm_takes_is_refused(args, flag, allowed):
    extra = [] if "--leaders" in args else ["--colocated"]
    result = runner.invoke(app, ["sweep", "all-reduce", *SEED_002, *args, *extra])
    assert result.exit_code == 2
    line = result.output.strip()
    assert line.count("\n") == 0 and flag in line and allowed in line, line


def test_compare_ranks_the_colocated_server_and_refuses_a_parameter_none_takes():
    result = runner.invoke(app, ["compare", "all-reduce", "--ranks", "10", "--size", "1.2GB", *LINK, "--colocated",
                                 "--servers", "1", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["algorithm"]: row for row in json.loads(result.stdout)}
    assert rows["parameter-server"]["time_s"] == pytest.approx(10.8, rel=1e-8)
    assert rows["ring"]["time_s"] == pytest.approx(2.16)
    refused = runner.invoke(app, ["compare", "broadcast", "--ranks", "8", "--size", "1GB", *LINK, "--colocated"])
    assert refused.exit_code == 2 and "--colocated" in refused.output and "broadcast" in refused.output
    # collective --algorithm all is the same query: it dropped the flag silently
    also = runner.invoke(app, ["collective", "broadcast", "-a", "all", "--ranks", "8", "--size", "1GB", *LINK,
                               "--colocated"])
    assert also.exit_code == 2 and "--colocated" in also.output


def test_the_charts_draw_the_parameters_and_say_so():
    hw = Hardware(alpha="0s", bandwidth="1GB/s", params=(("colocated", True), ("servers", 1)))
    fig = scaling_figure("all-reduce", hw, size="1.2GB", rank_counts=(2, 4, 10),
                         algorithms=("parameter-server", "ring"))
    drawn = {trace.name: list(trace.y) for trace in fig.data}
    assert drawn["parameter-server"] == pytest.approx([1.2, 3.6, 10.8], rel=1e-8)
    assert drawn["ring"] == pytest.approx([1.2, 1.8, 2.16])
    assert "colocated, servers=1" in fig.layout.title.text
    swept = sweep_figure("all-reduce", Hardware(ranks=10, alpha="0s", bandwidth="1GB/s", params=(("colocated", True),)),
                         min_size="1GiB", max_size="1GiB", algorithms=("parameter-server",))
    assert swept.data[0].y[0] == pytest.approx(_ps(10, colocated=True) * 2**30 / 1.2e9, rel=1e-6)


def test_the_chart_commands_take_the_flags(tmp_path):
    out = tmp_path / "scaling.html"
    result = runner.invoke(app, ["plot", "scaling", "all-reduce", "--size", "1.2GB", *LINK, "-a", "parameter-server",
                                 "--colocated", "--servers", "1", "--rank-counts", "2,10", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.exists()
    html = out.read_text(encoding="utf-8").replace("\\u003d", "=")  # plotly's JSON escapes '='
    assert "servers=1, colocated" in html  # the flags reached the chart's title, not only the CLI
    # NCCL's model takes no parameters: refused, not drawn without them
    refused = runner.invoke(app, ["plot", "sweep", "all-reduce", "--cluster", "dgx-h100", "--colocated",
                                  "-o", str(tmp_path / "s.html")])
    assert refused.exit_code == 2 and "--colocated" in refused.output


# --- the review of this change (2026-11-30) ---

def test_no_pipeline_with_chunks_is_refused_under_all_too():
    """-a all took both and reported chunks 4 on a row timed with one chunk."""
    for command in (["compare", "all-reduce", "--size", "1MB"], ["sweep", "all-reduce", "-a", "all", "--sizes", "1MB"]):
        result = runner.invoke(app, [*command, "--ranks", "4", *LINK, "--no-pipeline", "--chunks", "4"])
        assert result.exit_code == 2 and "--chunks" in result.output and "--no-pipeline" in result.output


def test_a_size_or_rank_count_a_parameter_cannot_fit_is_left_out_alone():
    """On the grid path a chunk count too large for 8 B, or colocated servers beyond 4 ranks, ended the
    whole sweep; the per-point path left that combination out."""
    frame = sweep("all-reduce", ["8B", "1MB"], ranks=8, algorithms="double-binary-tree", alpha_s="1us",
                  bandwidth_Bps="1GB/s", chunks=4)
    assert frame.size_bytes.tolist() == [1e6] and "chunks" in frame.attrs["left_out"][0]
    frame = sweep("all-reduce", "1MB", ranks=[4, 16], algorithms="parameter-server", alpha_s="1us",
                  bandwidth_Bps="1GB/s", servers=8, colocated=True)
    assert frame.ranks.tolist() == [16] and "servers" in frame.attrs["left_out"][0]


def test_the_grid_and_the_per_point_paths_give_the_same_rows():
    grid = sweep("all-reduce", ["64KB", "1GB"], ranks=[4, 12], algorithms="parameter-server", alpha_s="2us",
                 bandwidth_Bps="25GB/s", servers=2, colocated=True, chunks="auto")
    for row in grid.to_dict("records"):
        one = predict("all-reduce", "parameter-server", ranks=row["ranks"], size_bytes=row["size_bytes"],
                      alpha_s=2e-6, bandwidth_Bps=25e9, servers=2, colocated=True)
        assert row["time_s"] == pytest.approx(one.time_s, rel=1e-12) and row["steps"] == one.steps
    hier = sweep("all-reduce", "1MB", ranks=[8, 16], algorithms="hierarchical", alpha_s="1us",
                 bandwidth_Bps="1GB/s", leaders=True)
    notes = dict(zip(hier.ranks, hier.note))
    assert "one node" in notes[8] and not isinstance(notes[16], str)  # the 8-rank note rode on the 16-rank row


def test_an_amd_chart_draws_what_collective_answers():
    """parameter-server is an algorithm RCCL does not run: collective answers it with the textbook
    model; the chart refused it."""
    hw = Hardware(cluster="mi300x-8x", params=(("colocated", True),))
    fig = scaling_figure("all-reduce", hw, size="1GB", rank_counts=(8,), algorithms=("parameter-server",))
    from costmodel.cluster.api import predict as cluster_predict

    one = cluster_predict("all-reduce", "1GB", "parameter-server", cluster="mi300x-8x", colocated=True)
    assert fig.data[0].y[0] == pytest.approx(one.time_s)


@pytest.mark.parametrize("params", [(("foo", 1),), 5, (("servers",),)])
def test_chart_parameters_are_checked(params):
    from dpbase.errors import InputError

    with pytest.raises(InputError) as refused:
        scaling_figure("all-reduce", Hardware(alpha="0s", bandwidth="1GB/s", params=params), size="1GB",
                       rank_counts=(2,), algorithms=("parameter-server",))
    assert refused.value.field == "params"
