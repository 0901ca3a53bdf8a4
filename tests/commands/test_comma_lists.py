"""Comma-separated options: one reader (commands.common.comma_list) for plan, sweep and plot.

Fuzzing found `sweep --sizes 1MB,1MB,2MB` (and `--ranks 8,8`, `-a ring,ring`) printing the same
row twice, and `plot best-map --rank-counts 2,,8` dropping the empty item that `sweep` and `plan`
refuse. Every list now refuses an empty item and answers a value given twice once, compared after
parsing (1MB and 1000KB are one size; in a sweep an alias's answer is its algorithm's, shown once).
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli import app

LINK = ["--alpha", "5us", "--bandwidth", "25GB/s"]
SWEEP = ["sweep", "all-reduce", "--ranks", "8", *LINK]
PLAN = ["plan", "--model", "gpt2", "--cluster", "dgx-h100", "--global-batch", "64"]


@pytest.mark.parametrize(("argv", "line"), [
    (["plot", "best-map", "all-reduce", *LINK, "--rank-counts", "2,,8", "-o", "x.html"],
     "error: rank_counts: got '2,,8'; allowed: comma-separated values without empty items, e.g. 2,4,8"),
    (["plot", "best-map", "all-reduce", *LINK, "--rank-counts", "2,x", "-o", "x.html"],
     "error: rank_counts: got 'x'; allowed: comma-separated integers, e.g. 2,4,8"),
    ([*SWEEP, "--sizes", "1MB,,2MB"],
     "error: sizes: got '1MB,,2MB'; allowed: comma-separated values without empty items, e.g. 1MiB,1GiB"),
    (["sweep", "all-reduce", *LINK, "--sizes", "1MB", "--ranks", "8,"],
     "error: ranks: got '8,'; allowed: comma-separated values without empty items, e.g. 8,16"),
])
def test_a_list_with_an_empty_or_bad_item_is_refused(cli_error, argv, line, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli_error(argv) == line
    assert not (tmp_path / "x.html").exists()


def _rows(argv):
    result = CliRunner().invoke(app, [*argv, "--json"])
    assert result.exit_code == 0, result.output
    return [(row["ranks"], row["size_bytes"], row["algorithm"]) for row in json.loads(result.stdout)]


@pytest.mark.parametrize("repeated", [
    ["--sizes", "1MB,2MB,1MB", "--ranks", "8", "-a", "ring,double-binary-tree"],
    ["--sizes", "1MB,2MB,1000KB", "--ranks", "8,8", "-a", "ring,double-binary-tree,ring"],
])
def test_a_repeated_value_is_answered_once(repeated):
    """Each row once, as the planner counts a repeated swept value once."""
    once = _rows(["sweep", "all-reduce", *LINK, "--sizes", "1MB,2MB", "--ranks", "8", "-a", "ring,double-binary-tree"])
    assert len(once) == len(set(once)) == 4
    assert _rows(["sweep", "all-reduce", *LINK, *repeated]) == once


def test_the_sweep_api_answers_a_repeated_value_once():
    import costmodel

    frame = costmodel.sweep("all-reduce", ["1MB", 1e6, "2MB"], ranks=[8, 8], algorithms=["ring", "ring"],
                            alpha_s="5us", bandwidth_Bps="25GB/s")
    assert list(frame["size_bytes"]) == [1e6, 2e6]


def test_plot_rank_counts_are_read_once(tmp_path, monkeypatch):
    from costmodel.commands.plot_cmd import _rank_counts

    assert _rank_counts("2,8,2", None, 64) == (2, 8)


@pytest.mark.parametrize("extra", [["--factor", "2"], ["--min-size", "1KiB"], ["--max-size", "1GiB"]])
def test_a_list_of_sizes_refuses_the_range_options(cli_error, extra):
    """`--sizes 1MiB --factor 2` answered the list and dropped the factor (--min-size was refused)."""
    line = cli_error([*SWEEP, "--sizes", "1MiB", *extra])
    assert line == "error: --sizes: got 'given with --min-size/--max-size/--factor'; allowed: either a list or a range"


def test_a_range_takes_its_factor():
    found = _rows(["sweep", "all-reduce", *LINK, "--ranks", "8", "-a", "ring", "--min-size", "1KiB",
                   "--max-size", "1MiB", "--factor", "32"])
    assert [size for _, size, _ in found] == [1024.0, 32768.0, 1048576.0]
    assert len(_rows(["sweep", "all-reduce", *LINK, "--ranks", "8", "-a", "ring", "--min-size", "1KiB",
                      "--max-size", "1MiB"])) == 6  # the default factor, 4


def test_an_alias_is_its_algorithm_and_primitive():
    """`-a ring,Ring,double-binary-tree,tree` gave four rows, `all-reduce,allreduce` each row twice."""
    found = _rows(["sweep", "all-reduce,allreduce", *LINK, "--ranks", "16", "--sizes", "1MB",
                   "-a", "ring,Ring,double-binary-tree,tree"])
    assert sorted(found) == [(16, 1e6, "double-binary-tree"), (16, 1e6, "ring")]


def test_distinct_inputs_keep_their_rows_when_their_answers_agree():
    """The sweep merged rows by their answer: two links of equal rates gave one row (NVLink 2 and
    3 at the same size and ranks), and auto's row vanished beside the algorithm it picks. Now
    each axis value is named once (aliases under the registry's name) and every row stays."""
    import costmodel

    links = costmodel.sweep("all-reduce", "1MB", links=["nvlink2", "nvlink3"], ranks=8, algorithms="ring")
    assert len(links) == 2
    both = costmodel.sweep("all-reduce", "1MB", clusters="dgx-h100", algorithms=["auto", "ring"])
    assert len(both) == 2 and list(both.nccl_choice) == [True, None]
    aliases = costmodel.sweep(["all-reduce", "allreduce"], "1MB", alpha_s=5e-6, bandwidth_Bps=25e9, ranks=16,
                              algorithms=["ring", "Ring", "double-binary-tree", "tree"])
    assert list(aliases.algorithm) == ["ring", "double-binary-tree"]
