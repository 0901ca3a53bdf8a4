"""The plot commands' answers to primitives NCCL's model lacks, unknown names and repeated axes:
a chart where one is meaningful, else one stderr line naming the field and exit code 2."""

import pytest
from typer.testing import CliRunner

from cli import app
from costmodel.plots import Hardware, best_map_figure, scaling_figure, sweep_figure
from dpbase.errors import InputError

OUTSIDE_NCCL = ("all-to-all", "send-recv", "gather", "scatter")
SMALL = ["--min-size", "1KiB", "--max-size", "64KiB"]  # keep the grids small: the answer, not the chart, is tested


def _run(*args: str):
    return CliRunner().invoke(app, ["plot", *args])


def _one_error_line(result, field: str) -> str:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith(f"error: {field}: got "), result.stderr
    return result.stderr


@pytest.mark.parametrize("primitive", OUTSIDE_NCCL)
def test_best_map_under_auto_falls_back_to_ideal_where_nccl_has_no_such_collective(primitive, tmp_path):
    html = tmp_path / "map.html"
    result = _run("best-map", primitive, "--cluster", "dgx-h100", "--rank-counts", "2,8,16", *SMALL, "-o", str(html))
    assert result.exit_code == 0, result.stderr
    text = html.read_text()
    assert "fastest algorithm nccl runs (ideal model)" in text and f"NCCL's tuning model has no {primitive}" in text


@pytest.mark.parametrize("primitive", OUTSIDE_NCCL)
def test_best_map_under_nccl_refuses_a_primitive_nccl_does_not_model(primitive, tmp_path):
    html = tmp_path / "map.html"
    result = _run("best-map", primitive, "--cluster", "dgx-h100", "--backend", "nccl", "-o", str(html))
    line = _one_error_line(result, "backend")
    assert f"got 'nccl'; allowed: ideal or auto for {primitive}" in line and "all-reduce" in line
    assert not html.exists()


@pytest.mark.parametrize("kind", ["best-map", "sweep", "scaling"])
@pytest.mark.parametrize("backend", ["auto", "nccl", "ideal"])
def test_unknown_primitive_names_the_primitive(kind, backend, tmp_path):
    extra = ["--size", "1GiB"] if kind == "scaling" else []
    result = _run(kind, "bogus", "--cluster", "dgx-h100", "--backend", backend, *extra, "-o", str(tmp_path / "x.html"))
    line = _one_error_line(result, "primitive")
    assert "got 'bogus'; allowed: one of " in line and "all-to-all" in line


@pytest.mark.parametrize("primitive", OUTSIDE_NCCL)
def test_sweep_and_scaling_draw_a_primitive_nccl_lacks_under_auto(primitive, tmp_path):
    sweep_html, scaling_html = tmp_path / "sweep.html", tmp_path / "scaling.html"
    result = _run("sweep", primitive, "--cluster", "dgx-h100", "--nodes", "2", *SMALL, "-o", str(sweep_html))
    assert result.exit_code == 0, result.stderr
    assert sweep_html.exists() and f"NCCL's tuning model has no {primitive}" in sweep_html.read_text()
    result = _run("scaling", primitive, "--cluster", "dgx-h100", "--size", "1MiB", "--rank-counts", "2,8,16",
                  "-o", str(scaling_html))
    assert result.exit_code == 0, result.stderr
    assert scaling_html.exists()


@pytest.mark.parametrize("kind", ["sweep", "scaling"])
def test_sweep_and_scaling_under_nccl_name_the_backend_not_the_algorithm(kind, tmp_path):
    extra = ["--size", "1GiB"] if kind == "scaling" else ["--nodes", "2"]
    result = _run(kind, "all-to-all", "--cluster", "dgx-h100", "--backend", "nccl", *extra,
                  "-o", str(tmp_path / "x.html"))
    assert "got 'nccl'; allowed: ideal or auto for all-to-all" in _one_error_line(result, "backend")


def test_an_unknown_backend_is_named(tmp_path):
    result = _run("sweep", "all-reduce", "--cluster", "dgx-h100", "--backend", "bogus", "-o", str(tmp_path / "x.html"))
    assert "got 'bogus'; allowed: one of auto, ideal, nccl, rccl" in _one_error_line(result, "backend")


def test_figures_refuse_nccl_for_a_primitive_it_lacks():
    nccl = Hardware(cluster="dgx-h100", backend="nccl")
    with pytest.raises(InputError, match="^backend: got 'nccl'"):
        best_map_figure("all-to-all", nccl, rank_counts=(8,))
    with pytest.raises(InputError, match="^backend: got 'nccl'"):
        sweep_figure("gather", nccl)
    with pytest.raises(InputError, match="^backend: got 'nccl'"):
        scaling_figure("scatter", nccl, size="1MiB", rank_counts=(8,))
    with pytest.raises(InputError, match="^primitive: got 'bogus'"):
        best_map_figure("bogus", nccl, rank_counts=(8,))


PLAN = ["plan", "--model", "llama2-7b", "--cluster", "dgx-h100", "--global-batch", "512"]


def test_plan_refuses_the_same_axis_twice(tmp_path):
    html = tmp_path / "p.html"
    result = _run(*PLAN, "--x", "gpus", "--y", "gpus", "-o", str(html))
    line = _one_error_line(result, "y")
    assert "got 'gpus'; allowed: an axis other than --x (one of micro_batch, accumulation_steps)" in line
    assert not html.exists()


@pytest.mark.parametrize(("flag", "field"), [("--x", "x"), ("--y", "y")])
def test_plan_names_the_axis_at_fault(flag, field, tmp_path):
    result = _run(*PLAN, flag, "bucket", "-o", str(tmp_path / "p.html"))
    assert "got 'bucket'; allowed: one of micro_batch, accumulation_steps, gpus" in _one_error_line(result, field)


def test_a_breakdown_bar_refuses_an_algorithm_its_all_reduce_lacks(cli_error, tmp_path):
    """`plot breakdown -a bruck` drew auto's bar under the name bruck (its step is ZeRO-0: one all-reduce)."""
    line = cli_error(["plot", "breakdown", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "4",
                      "-a", "bruck", "-o", str(tmp_path / "b.html")])
    assert line.startswith("error: algorithm: got 'bruck'; allowed: one this step's all-reduce runs: auto (NCCL's own "
                           "choice for its all-reduce), NCCL's own double-binary-tree, in-network, ring, or one timed on "
                           "the textbook α-β model:")
    assert not (tmp_path / "b.html").exists()


@pytest.mark.parametrize("kind", ["sweep", "scaling"])
def test_an_unknown_algorithm_among_known_ones_is_the_one_named(cli_error, kind, tmp_path):
    """`-a tree -a bogus` made the chart's backend ideal (bogus is not NCCL's), which has no 'tree',
    and the error blamed tree; the unknown name is refused first, as `collective` refuses it."""
    extra = ["--size", "1GiB"] if kind == "scaling" else []
    line = cli_error(["plot", kind, "all-reduce", "--cluster", "dgx-h100", "-a", "tree", "-a", "bogus", *extra,
                      "-o", str(tmp_path / "x.html")])
    assert line.startswith("error: algorithm: got 'bogus'; allowed: one of ")
    assert not (tmp_path / "x.html").exists()


def test_a_measured_log_of_another_collective_is_refused(cli_error, tmp_path):
    """An all-gather log was overlaid on all-reduce curves with nothing said; the log's collective is
    read as calibrate reads it (its text, its file name, else its columns)."""
    from pathlib import Path

    raw = Path(__file__).resolve().parents[1] / "data" / "calibration" / "raw"
    gather = str(raw / "rtx2080ti_2x_pcie3_nop2p_allgather.txt")
    line = cli_error(["plot", "sweep", "all-reduce", "--alpha", "5us", "--bandwidth", "25GB/s", "-N", "8",
                      "--measured", gather, "-o", str(tmp_path / "x.html")])
    assert line == f"error: measured: got '{gather}'; allowed: a log of all-reduce (this one measured all-gather)"
    assert not (tmp_path / "x.html").exists()
    result = _run("sweep", "all-gather", "--alpha", "5us", "--bandwidth", "25GB/s", "-N", "2",
                  "--measured", gather, "-o", str(tmp_path / "y.html"))
    assert result.exit_code == 0, result.output


def test_a_measured_logs_collective_is_read_from_its_columns_where_nothing_names_it(cli_error, tmp_path):
    """The same all-gather log under a neutral name: its redop column (none) leaves all-gather or
    all-to-all; a -J log with times alone names nothing, and is drawn as it is."""
    import json
    from pathlib import Path

    raw = Path(__file__).resolve().parents[1] / "data" / "calibration" / "raw"
    neutral = tmp_path / "run.txt"
    neutral.write_text((raw / "rtx2080ti_2x_pcie3_nop2p_allgather.txt").read_text(encoding="utf-8"), encoding="utf-8")
    line = cli_error(["plot", "sweep", "all-reduce", "--alpha", "5us", "--bandwidth", "25GB/s", "-N", "8",
                      "--measured", str(neutral), "-o", str(tmp_path / "x.html")])
    assert line.endswith("allowed: a log of all-reduce (this one measured all-gather or all-to-all)")
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({"results": [{"size": 2**k, "out_of_place": {"time": 10 + 2**k / 1e4}}
                                            for k in range(10, 20)]}), encoding="utf-8")
    result = _run("sweep", "gather", "--alpha", "5us", "--bandwidth", "25GB/s", "-N", "8", "--measured", str(bare),
                  "-o", str(tmp_path / "y.html"))
    assert result.exit_code == 0, result.output


def test_a_measured_log_on_other_ranks_is_refused_and_an_in_place_one_is_drawn(cli_error, tmp_path):
    """A 16-rank log was drawn over an 8-rank prediction with nothing said, and a log with
    in-place times only drew two empty traces (review, 2026-11-29)."""
    from pathlib import Path

    raw = Path(__file__).resolve().parents[1] / "data" / "calibration" / "raw"
    two_nodes = str(raw / "abci_a_2n.txt")  # 16 ranks, read from busbw / algbw
    line = cli_error(["plot", "sweep", "all-reduce", "--alpha", "5us", "--bandwidth", "25GB/s", "-N", "8",
                      "--measured", two_nodes, "-o", str(tmp_path / "x.html")])
    assert line.endswith("allowed: a log run on the chart's 8 ranks (this one ran on 16; give "
                         "--nodes/--gpus-per-node or --ranks to match it)")
    assert _run("sweep", "all-reduce", "--alpha", "5us", "--bandwidth", "25GB/s", "-N", "16",
                "--measured", two_nodes, "-o", str(tmp_path / "ok.html")).exit_code == 0
    rows = []
    for text in (raw / "abci_a_2n.txt").read_text(encoding="utf-8").splitlines():
        tokens = text.split()
        if tokens and tokens[0].isdigit() and len(tokens) == 12:  # blank the out-of-place block
            tokens[4:8] = ["N/A", "N/A", "N/A", "N/A"]
            text = " ".join(tokens)
        rows.append(text)
    in_place = tmp_path / "in_place.txt"
    in_place.write_text("\n".join(rows) + "\n", encoding="utf-8")
    from costmodel.plots.common import Hardware
    from costmodel.plots.curves import _measured_traces

    traces = _measured_traces(str(in_place), "all-reduce", Hardware(alpha="5us", bandwidth="25GB/s", ranks=16))
    assert len(traces[0].x) >= 20 and all(t > 0 for t in traces[0].y)


def test_scaling_rank_counts_are_drawn_in_order_and_checked(tmp_path):
    """64,2,16 drew each curve back across the log axis; a lone 1 wrote an empty chart whose traces
    were named "none"; a count that is not a list of whole numbers was a TypeError inside the
    chart (review, 2026-11-30)."""
    hw = Hardware(alpha="5us", bandwidth="25GB/s", ranks=8)
    figure = scaling_figure("all-reduce", hw, size="1GiB", rank_counts=[64, 2, 16, 2])
    assert all(tuple(trace.x) == (2, 16, 64) for trace in figure.data)
    for bad in (8, None, [2.5], ["8"], [], [1]):
        with pytest.raises(InputError, match="rank_counts"):
            scaling_figure("all-reduce", hw, size="1GiB", rank_counts=bad)
    for bad in (8, None):
        with pytest.raises(InputError, match="rank_counts"):
            best_map_figure("all-reduce", hw, rank_counts=bad)
    _one_error_line(_run("scaling", "all-reduce", "--size", "1GiB", "--alpha", "5us", "--bandwidth", "25GB/s",
                         "--rank-counts", "1", "-o", str(tmp_path / "s.html")), "rank_counts")
