"""A list option (its help says comma-separated) given twice is refused in one line (click kept the
last silently: `sweep --algorithm ring --algorithm tree` gave the tree rows alone; API review,
2026-11-30); other options keep click's last-one-wins."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import cli
from cli import app

LINK = ["--ranks", "8", "--alpha", "5us", "--bandwidth", "25GB/s", "--sizes", "1MB"]


@pytest.mark.parametrize("args, option", [
    (["sweep", "all-reduce", *LINK, "--algorithm", "ring", "--algorithm", "double-binary-tree"], "--algorithm"),
    (["sweep", "all-reduce", *LINK, "--sizes=1GB"], "--sizes"),
    (["sweep", "all-reduce", "--sizes", "1MB", "--cluster", "dgx-h100", "--cluster", "dgx-a100"], "--cluster"),
    (["plan", "--model", "gpt2", "--cluster", "dgx-h100", "--global-batch", "64", "--algorithms", "ring",
      "--algorithms", "tree"], "--algorithms"),
])
def test_a_repeated_option_is_refused_on_both_paths(args, option, capsys):
    result = CliRunner().invoke(app, args)  # click's path
    assert result.exit_code == 2 and result.stderr.startswith(f"error: {option}: got ")
    assert "allowed: once" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert cli.answer_plainly(args) == 2  # the fast path, without typer
    assert capsys.readouterr().err.startswith(f"error: {option}: got ")


def test_a_repeated_option_with_json_is_a_json_error_too():
    result = CliRunner().invoke(app, ["sweep", "all-reduce", *LINK, "--algorithm", "ring", "--algorithm", "tree",
                                      "--json"])
    assert result.exit_code == 2 and json.loads(result.stdout)["error"]["field"] == "--algorithm"


def test_a_single_value_option_keeps_the_last_one_as_click_does():
    """An alias with defaults overrides them by repeating an option: that stays."""
    base = ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "8", "--json"]
    twice = CliRunner().invoke(app, [*base, "--nodes", "2", "--nodes", "4"])
    once = CliRunner().invoke(app, [*base, "--nodes", "4"])
    assert twice.exit_code == once.exit_code == 0 and json.loads(twice.stdout) == json.loads(once.stdout)


def test_flags_and_collected_options_may_repeat(tmp_path):
    assert CliRunner().invoke(app, ["sweep", "all-reduce", *LINK[:-2], "--sizes", "1MB", "--json", "--json"]).exit_code == 0
    out = tmp_path / "s.html"
    result = CliRunner().invoke(app, ["plot", "sweep", "all-reduce", "-a", "ring", "-a", "double-binary-tree",
                                      "--ranks", "8", "--alpha", "5us", "--bandwidth", "25GB/s", "-o", str(out)])
    assert result.exit_code == 0, result.output


def test_attached_short_values_help_and_a_missing_value_are_read_as_click_reads_them():
    attached = CliRunner().invoke(app, ["sweep", "all-reduce", *LINK, "-aring", "-a", "double-binary-tree"])
    assert attached.exit_code == 2 and attached.stderr.startswith("error: -a: got ['ring', 'double-binary-tree']")
    helped = CliRunner().invoke(app, ["sweep", "all-reduce", "-a", "ring", "-a", "tree", "--help"])
    assert helped.exit_code == 0 and "Usage" in helped.stdout
    missing = CliRunner().invoke(app, ["sweep", "all-reduce", *LINK, "-a", "ring", "--algorithm"])
    assert missing.exit_code == 2 and "requires an argument" in missing.stderr

