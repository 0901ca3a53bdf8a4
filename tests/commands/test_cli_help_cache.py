"""`dpcost --help` is click's text; once printed it is kept (costmodel.commands.helpcache) and
printed again without typer while nothing it depends on changes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import cli
from costmodel.commands import helpcache

CLI = os.path.realpath(cli.__file__)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DPCOST_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("DPCOST_NO_CACHE", raising=False)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/dpcost", "--help"])  # as the console script runs
    monkeypatch.setattr(sys.modules["__main__"], "__package__", None, raising=False)
    return tmp_path


def _click_help(capsys) -> str:
    assert cli._answer_with_typer(["--help"]) == 0
    return capsys.readouterr().out


def test_the_kept_text_is_what_click_printed(cache, capsys):
    assert helpcache.cached_help(CLI) is None
    printed = _click_help(capsys)
    assert printed.startswith("Usage: dpcost") and "nccl-table" in printed
    assert helpcache.cached_help(CLI) == printed
    assert cli.answer_plainly(["--help"]) == 0 and capsys.readouterr().out == printed
    assert cli.answer_plainly([]) == 0 and capsys.readouterr().out == printed  # bare `dpcost`: its help


def test_another_width_is_built_again(cache, capsys, monkeypatch):
    wide = _click_help(capsys)
    monkeypatch.setenv("COLUMNS", "56")
    assert helpcache.cached_help(CLI) is None
    narrow = _click_help(capsys)
    assert narrow != wide and max(map(len, narrow.splitlines())) <= 56
    assert helpcache.cached_help(CLI) == narrow
    monkeypatch.setenv("COLUMNS", "80")
    assert helpcache.cached_help(CLI) == wide  # each width keeps its own text


def test_a_reinstall_or_an_edited_command_list_invalidates_it(cache, capsys, monkeypatch, tmp_path):
    _click_help(capsys)
    fake_cli = str(tmp_path / "cli.py")
    with open(fake_cli, "w") as stream:
        stream.write("# another command list\n")
    assert helpcache.cached_help(fake_cli) is None  # not the cli.py the text was built from
    helpcache.keep_help("Usage: dpcost (kept)\n", fake_cli)
    assert helpcache.cached_help(fake_cli) == "Usage: dpcost (kept)\n"
    stat = os.stat(fake_cli)
    os.utime(fake_cli, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert helpcache.cached_help(fake_cli) is None
    typer_site = os.path.dirname(os.path.dirname(os.path.realpath(sys.modules["typer"].__file__)))
    helpcache.keep_help("Usage: dpcost (kept)\n", fake_cli)
    real_stat = os.stat

    def touched(path, *args, **kwargs):  # a package installed beside typer (e.g. shellingham)
        result = real_stat(path, *args, **kwargs)
        if os.fspath(path) == typer_site:
            return os.stat_result(tuple(result[:8]) + (result.st_mtime + 1, result.st_ctime))
        return result

    monkeypatch.setattr(helpcache.os, "stat", touched)
    assert helpcache.cached_help(fake_cli) is None


@pytest.mark.parametrize("damage", [b"", b"\0\0", b"x\x00not-a-number\x00", b"\xff\xfe"])
def test_a_damaged_file_falls_back_to_click(cache, capsys, damage):
    _click_help(capsys)
    (kept,) = [name for name in os.listdir(cache) if name.startswith("help-")]
    (cache / kept).write_bytes(damage)
    assert helpcache.cached_help(CLI) is None


def test_under_python_m_nothing_is_kept(cache, capsys, monkeypatch):
    """click names the module in the usage line then (``python -m cli``)."""
    monkeypatch.setattr(sys.modules["__main__"], "__package__", "cli")
    _click_help(capsys)
    assert helpcache.cached_help(CLI) is None and list(cache.iterdir()) == []


def test_no_cache_means_click_every_time(cache, capsys, monkeypatch):
    monkeypatch.setenv("DPCOST_NO_CACHE", "1")
    _click_help(capsys)
    assert helpcache.cached_help(CLI) is None and list(cache.iterdir()) == []


def test_a_second_help_loads_neither_typer_nor_click(tmp_path):
    env = {**os.environ, "DPCOST_CACHE_DIR": str(tmp_path), "COLUMNS": "72"}
    env.pop("DPCOST_NO_CACHE", None)
    code = ("import sys; from cli import main; sys.argv = ['dpcost', '--help']\n"
            "try:\n    main()\nexcept SystemExit as done:\n    assert not done.code\n"
            "sys.stderr.write('LOADED=' + ','.join(m for m in ('typer', 'click') if m in sys.modules))")
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert first.stderr.endswith("LOADED=typer,click") and second.stderr.endswith("LOADED="), second.stderr
    assert second.stdout == first.stdout and first.stdout.startswith("Usage: dpcost")
