"""dpbase.bundled: the parsed-once cache of the package's TOML data can make an answer faster,
never different."""

from __future__ import annotations

import os
import tomllib

import pytest

from dpbase import bundled


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("DPCOST_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("DPCOST_NO_CACHE", raising=False)
    path = tmp_path / "table.toml"
    path.write_text('[a]\nx = 1.5\nnames = ["p", "q"]\n', encoding="utf-8")
    return path


def test_a_second_read_comes_from_the_cache_and_equals_the_parse(data, tmp_path):
    first = bundled.load_bundled(data)
    cached = list((tmp_path / "cache").iterdir())
    assert len(cached) == 1 and cached[0].suffix == ".marshal"
    second = bundled.load_bundled(data)
    assert first == second == tomllib.loads(data.read_text(encoding="utf-8"))
    second["a"]["x"] = 0.0  # every call returns a fresh document
    assert bundled.load_bundled(data)["a"]["x"] == 1.5


def test_a_changed_file_is_parsed_again_and_its_old_entry_removed(data, tmp_path):
    bundled.load_bundled(data)
    data.write_text('[a]\nx = 2.5\nnames = ["p", "q", "r"]\n', encoding="utf-8")
    os.utime(data, ns=(1, 10**18))  # a new modification time, as an edit gives
    assert bundled.load_bundled(data)["a"] == {"x": 2.5, "names": ["p", "q", "r"]}
    assert len(list((tmp_path / "cache").iterdir())) == 1


def test_a_corrupt_cache_file_is_replaced(data, tmp_path):
    bundled.load_bundled(data)
    (cached,) = (tmp_path / "cache").iterdir()
    cached.write_bytes(b"\x00not marshal")
    assert bundled.load_bundled(data)["a"]["x"] == 1.5
    assert bundled.load_bundled(data)["a"]["x"] == 1.5


def test_an_unwritable_cache_and_no_cache_fall_back_to_parsing(data, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("DPCOST_CACHE_DIR", str(blocker / "cache"))
    assert bundled.load_bundled(data)["a"]["x"] == 1.5
    monkeypatch.setenv("DPCOST_NO_CACHE", "1")
    assert bundled.cache_dir() is None
    assert bundled.load_bundled(data)["a"]["names"] == ["p", "q"]


def test_the_bundled_tables_read_through_the_cache_equal_a_fresh_parse(tmp_path, monkeypatch):
    from pathlib import Path

    monkeypatch.setenv("DPCOST_CACHE_DIR", str(tmp_path / "cache"))
    root = Path(bundled.__file__).resolve().parent.parent
    for path in [*(root / "hardware" / "data").glob("*.toml"), *(root / "costmodel" / "data").glob("*.toml")]:
        bundled.load_bundled(path)
        assert bundled.load_bundled(path) == tomllib.loads(path.read_text(encoding="utf-8")), path.name


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_write_cache_is_private_whole_and_leaves_nothing_behind_on_failure(tmp_path):
    target = tmp_path / "sub" / "entry.marshal"
    assert bundled.write_cache(target, b"payload")
    assert target.read_bytes() == b"payload" and target.stat().st_mode & 0o077 == 0
    assert [p.name for p in target.parent.iterdir()] == ["entry.marshal"]  # no temporary left
    (tmp_path / "sub" / "blocked").mkdir()  # a directory where the file should go: the rename fails
    assert not bundled.write_cache(tmp_path / "sub" / "blocked", b"x")
    assert sorted(p.name for p in target.parent.iterdir()) == ["blocked", "entry.marshal"]


def test_a_derived_value_is_kept_per_name_and_computed_again_when_its_file_changes(data, tmp_path):
    """dpbase.bundled.derived: a value computed from a package file (a module's constant table)
    is computed once, kept beside the parsed file without disturbing its entry, and computed
    again after the file changes; a missing file or no cache only means computing it."""
    calls = []

    def compute(value):
        def run():
            calls.append(value)
            return (value, (0.1, 2.5e-300))
        return run

    parsed = bundled.load_bundled(data)
    assert bundled.derived(str(data), "grid", compute(1)) == (1, (0.1, 2.5e-300))
    assert bundled.derived(str(data), "grid", compute(2)) == (1, (0.1, 2.5e-300))  # kept
    assert bundled.derived(str(data), "other", compute(3)) == (3, (0.1, 2.5e-300))  # its own entry
    assert calls == [1, 3] and len(list((tmp_path / "cache").iterdir())) == 3
    os.utime(data, ns=(1, 10**18))
    assert bundled.derived(str(data), "grid", compute(4)) == (4, (0.1, 2.5e-300))
    assert bundled.load_bundled(data) == parsed
    assert len(list((tmp_path / "cache").iterdir())) == 3  # each name's older entry replaced
    assert bundled.derived(str(tmp_path / "gone.py"), "grid", compute(5)) == (5, (0.1, 2.5e-300))


def test_the_straggler_grid_read_through_the_cache_is_the_computed_one(tmp_path, monkeypatch):
    from costmodel.training import stragglers

    monkeypatch.setenv("DPCOST_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("DPCOST_NO_CACHE", raising=False)
    reference = stragglers._compute_normal_grid()
    stragglers._normal_grid.cache_clear()
    try:
        assert stragglers._normal_grid() == reference  # computed, and written
        assert any("normal-grid" in p.name for p in (tmp_path / "cache").iterdir())
        stragglers._normal_grid.cache_clear()

        def not_again():
            raise AssertionError("computed again instead of read from the cache")

        monkeypatch.setattr(stragglers, "_compute_normal_grid", not_again)
        assert stragglers._normal_grid() == reference  # read back, bit for bit
    finally:
        stragglers._normal_grid.cache_clear()
