"""Bad input a CLI fuzz audit found accepted, or refused under another field's name
(2026-11-30, 4,875 invocations): each now one error line naming the option the user typed."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from cli import app

LINK = ["--alpha", "5us", "--bandwidth", "25GB/s"]
LOG = """# nThread 1 nGpus 1 minBytes 1024 maxBytes 8192 step: 2(factor) warmup iters: 5 iters: 20
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
        1024           256     float     sum      -1    30.10    0.03    0.06      0    30.00    0.03    0.06      0
        2048           512     float     sum      -1    31.20    0.07    0.12      0    31.00    0.07    0.12      0
{bad}          1024     float     sum      -1    33.40    0.12    0.23      0    33.10    0.12    0.23      0
        8192          2048     float     sum      -1    36.80    0.22    0.42      0    36.50    0.22    0.42      0
"""


def run(*args):
    return CliRunner().invoke(app, list(args))


def _error(result):
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.output
    return lines[0]


def test_compare_on_a_bare_link_refuses_an_unknown_stack_and_applies_a_known_one():
    assert _error(run("compare", "all-reduce", "-n", "1MB", "-N", "8", *LINK, "--stack", "abc")).startswith(
        "error: stack: got 'abc'")
    shown = run("compare", "all-reduce", "-n", "1MB", "-N", "8", *LINK, "--stack", "nccl").output
    rows = {line.split()[0]: line for line in shown.splitlines() if line and line.split()[0] in ("ring", "rabenseifner")}
    assert "*" in rows["ring"].split()[1] and "†" in rows["rabenseifner"]  # NCCL's ring wins, as collective picks it


def test_nccl_table_takes_the_node_counts_and_sizes_collective_takes():
    assert "nodes: got 200000000" in _error(run("nccl-table", "--cluster", "dgx-h100", "--nodes", "200000000"))
    for size in ("0.5B", "1e-400GB"):
        assert _error(run("nccl-table", "--cluster", "dgx-h100", "--size", size)).startswith(f"error: size: got '{size}'")
    assert _error(run("nccl-table", "--cluster", "mi300x-8x", "--size", "0.5B")).startswith("error: size: got '0.5B'")


@pytest.mark.parametrize(("args", "start"), [
    (["--min-size", ""], "error: min_size: got ''"), (["--max-size", ""], "error: max_size: got ''"),
    (["--max-size", "512"], "error: max_size: got '512'; allowed: a size >= --min-size (1KiB)"),
    (["--min-size", "2GiB"], "error: min_size: got '2GiB'; allowed: a size <= --max-size (1GiB)"),
    (["--min-size", "0.5B"], "error: min_size: got '0.5B'"), (["--sizes", "0.5B"], "error: sizes: got '0.5B'"),
])
def test_sweep_names_the_range_option_given_and_refuses_empty_text(args, start):
    assert _error(run("sweep", "all-reduce", "-N", "8", *LINK, *args)).startswith(start)


def test_a_number_below_float_range_is_refused_not_read_as_zero():
    assert "reads as 0" in _error(run("collective", "all-reduce", "-n", "1e-400GB", "-N", "8", *LINK))
    assert run("collective", "all-reduce", "-n", "0e5GB", "-N", "8", *LINK).exit_code == 0  # a real zero stays


def test_calibrate_refuses_empty_names_and_a_damaged_size_cell(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text(LOG.format(bad="        4096"), encoding="utf-8")
    assert run("calibrate", str(good), "--ranks", "2").exit_code == 0
    for option in ("--collective", "--algorithm"):
        assert _error(run("calibrate", str(good), "--ranks", "2", option, "")).startswith(
            f"error: {option[2:]}: got ''")
    damaged = tmp_path / "damaged.txt"
    damaged.write_text(LOG.format(bad="         4Ki"), encoding="utf-8")  # dropped without a word: 3 points, not 4
    assert "line 5 column size: got '4Ki'; allowed: an integer (bytes)" in _error(run("calibrate", str(damaged), "--ranks", "2"))


def test_plot_sweep_names_the_node_count_and_plan_the_rate_first(tmp_path):
    out = str(tmp_path / "q.html")
    for nodes in ("-1", "0"):
        assert _error(run("plot", "sweep", "all-reduce", "--cluster", "dgx-h100", "--nodes", nodes, "-o", out)) == (
            f"error: nodes: got {nodes}; allowed: an integer >= 1")
    assert _error(run("plan", "--model", "gpt2", "--cluster", "dgx-h100", "--global-batch", "64", "--rate", "abc")
                  ).startswith("error: rate: got 'abc'")


def test_parameter_server_placement_is_echoed_as_typed():
    line = _error(run("iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "4",
                      "--ps-placement", "dedicated"))
    assert line.startswith("error: --ps-placement: got 'dedicated'")


def test_sweep_output_path_is_escaped_in_its_message(tmp_path):
    result = run("sweep", "all-reduce", "--sizes", "1MiB", "-N", "8", *LINK, "-o", str(tmp_path / "r\nerror: fake.csv"))
    assert result.exit_code == 0 and not any(line.startswith("error:") for line in result.output.splitlines())
    assert "\\x0aerror: fake.csv" in result.output


def test_compare_says_whose_bound_it_prints_beside_an_in_network_winner():
    shown = run("compare", "all-reduce", "-n", "64MB", "--cluster", "dgx-h100", "--backend", "ideal").output
    assert "in-network *" in shown and "lower bound where the ranks reduce:" in shown
