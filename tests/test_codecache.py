"""dpbase.codecache: generated source compiled once, the same code run, an untrusted file ignored."""

from __future__ import annotations

import dataclasses
import os

import pytest

from dpbase import codecache, values

SOURCE = "def area(w, h):\n    return w * h\n"


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """The cache module as a new process sees it, with its file under ``tmp_path``."""
    monkeypatch.setenv("DPCOST_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("DPCOST_NO_CACHE", raising=False)
    monkeypatch.setattr(codecache, "_codes", {})
    monkeypatch.setattr(codecache, "_used", {})
    monkeypatch.setattr(codecache, "_added", set())
    monkeypatch.setattr(codecache, "_pending", True)  # no atexit hook from tests: _write is called by hand
    monkeypatch.setattr(values, "CACHED_PACKAGES", values.CACHED_PACKAGES | {__name__.partition(".")[0]})
    return tmp_path


def _define() -> dict:
    namespace: dict = {}
    codecache.cached_exec(SOURCE, {}, namespace)
    return namespace


def _no_compiling(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("compiled although the cache holds the text")

    monkeypatch.setattr(codecache, "compile", refuse, raising=False)


def test_same_code_as_exec(fresh):
    plain: dict = {}
    exec(SOURCE, {}, plain)  # noqa: S102
    cached = _define()
    assert cached["area"](3, 4) == plain["area"](3, 4) == 12
    assert cached["area"].__code__.co_code == plain["area"].__code__.co_code


def test_a_later_process_runs_the_saved_code_without_compiling(fresh, monkeypatch):
    _define()
    codecache._write()
    assert (fresh / codecache.file_name("default")).stat().st_mode & 0o077 == 0  # private: it holds code
    monkeypatch.setattr(codecache, "_codes", {})  # the next process
    _no_compiling(monkeypatch)
    assert _define()["area"](2, 5) == 10


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_file_others_can_write_is_not_trusted(fresh, monkeypatch):
    _define()
    codecache._write()
    path = fresh / codecache.file_name("default")
    path.chmod(0o666)
    monkeypatch.setattr(codecache, "_codes", {})
    assert codecache._load("default") == {}


def test_a_corrupt_file_falls_back_to_compiling(fresh, monkeypatch):
    (fresh / codecache.file_name("default")).write_bytes(b"\x00not marshal")
    (fresh / codecache.file_name("default")).chmod(0o600)
    assert codecache._load("default") == {}  # read, found unreadable, ignored
    assert _define()["area"](1, 1) == 1


def test_switched_off(fresh, monkeypatch):
    monkeypatch.setenv("DPCOST_NO_CACHE", "1")
    _define()
    codecache._write()
    assert not (fresh / codecache.file_name("default")).exists()


def test_a_value_class_init_is_compiled_once(fresh, monkeypatch):
    @values.frozen(kw_only=True)
    class Box:
        width: float
        height: float = 1.0

    assert any("width" in text for text in codecache._used[__name__])  # grouped by defining module
    box = Box(width=2.0)
    assert (box.width, box.height) == (2.0, 1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        box.width = 3.0

    codecache._write()
    assert (fresh / codecache.file_name(__name__)).exists()  # the defining module's own file
    monkeypatch.setattr(codecache, "_codes", {})
    _no_compiling(monkeypatch)

    @values.frozen(kw_only=True)
    class Box:  # the same class again, as the next process defines it: nothing compiled
        width: float
        height: float = 1.0

    assert Box(width=5.0) == Box(width=5.0, height=1.0)


def test_only_dpcost_classes_are_cached(fresh, monkeypatch):
    monkeypatch.setattr(values, "CACHED_PACKAGES", frozenset({"costmodel", "hardware", "dpbase", "cli"}))

    @values.frozen
    class Elsewhere:
        a: int

    assert not codecache._used  # a class of this test module, outside dpcost's packages
    assert Elsewhere(2).a == 2


def test_defining_a_class_leaves_the_standard_library_alone(fresh):
    """dataclasses' own classes compile as usual: nothing of it is patched."""
    before = dict(vars(dataclasses))

    @values.frozen
    class Pair:
        a: int

    assert vars(dataclasses) == before and Pair(1).a == 1
