"""Find, load and validate hardware profiles: bundled by name, or user TOML files by path.

Nothing is read at import. The bundled catalog (``hardware/data/*.toml``) is read once on
first use; user files are cached by path and modification time.

    >>> from hardware import load_system
    >>> system = load_system("dgx-h100")
    >>> system.gpu.name, system.gpus_per_node, system.intra_bandwidth_Bps / 1e9
    ('h100-sxm', 8, 450.0)
"""

from __future__ import annotations

import functools
import os
from typing import Any

from dpbase.bundled import load_bundled
from dpbase.errors import ProfileError, UnknownNameError
from hardware.profiles import Gpu, Link, Profile, System
from hardware.resolve import REFERENCES, Catalog, build_catalog
from hardware.schema import TABLES

DATA_DIR = os.path.join(os.path.dirname(os.path.realpath(__file__)), "data")
BUNDLED_FILES = ("links.toml", "gpus.toml", "systems.toml")
KINDS = tuple(TABLES)  # ("gpu", "link", "system")


def is_path(name_or_path: str) -> bool:
    """A path ends in ``.toml`` or contains a path separator; anything else is a name."""
    text = str(name_or_path)
    return text.endswith(".toml") or "/" in text or os.sep in text


def _parse_toml(text: str, origin: str) -> dict[str, Any]:
    import tomllib  # only when a file is read

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ProfileError(f"{origin} (TOML syntax)", str(error), "valid TOML (see https://toml.io)") from None
    except RecursionError:  # tomllib recurses once per nesting level of arrays/inline tables
        raise ProfileError(f"{origin} (TOML syntax)", "arrays or tables nested too deeply",
                           "a hardware profile (a few levels of nesting)") from None


def _read_text(path: str) -> str:
    from dpbase.readfile import read_text

    return read_text(path, "path", "a readable UTF-8 TOML file", error_type=ProfileError)


def _read_toml(path: str) -> dict[str, Any]:
    return _parse_toml(_read_text(path), str(path))


def _bundled_document() -> dict[str, Any]:
    merged: dict[str, list[Any]] = {}
    data = DATA_DIR
    for file_name in BUNDLED_FILES:
        document = load_bundled(os.path.join(data, file_name))
        for table, rows in document.items():
            merged.setdefault(table, []).extend(rows)
    return merged


@functools.cache
def bundled_catalog() -> Catalog:
    """All bundled profiles (read once). Raises ProfileError if the bundled data is invalid."""
    catalog, problems = build_catalog(_bundled_document())
    if problems:
        raise problems[0]
    return catalog


@functools.cache
def _bundled_rows() -> dict[str, dict[str, Any]]:
    """Each bundled table's raw TOML rows by name (not yet parsed)."""
    rows: dict[str, dict[str, Any]] = {table: {} for table in KINDS}
    for table, entries in _bundled_document().items():
        for row in entries if table in rows else ():
            if isinstance(row, dict) and isinstance(row.get("name"), str):
                rows[table].setdefault(row["name"], row)
    return rows


def _with_references(table: str, name: str, rows: dict[str, dict[str, Any]], into: dict[str, list[Any]]) -> None:
    """Add the raw row ``name`` of ``table`` and, transitively, the rows it names."""
    row = rows[table].get(name)
    if row is None or any(kept is row for kept in into.setdefault(table, [])):  # each row once
        return
    into[table].append(row)
    for attribute, target in REFERENCES.get(table, {}).items():
        if isinstance(row.get(attribute), str):
            _with_references(target, row[attribute], rows, into)


@functools.cache
def _bundled_profile(table: str, name: str) -> Any:
    """One bundled profile, built from its own row and the rows it references only: a run that
    names one system does not parse the other ~100 profiles. It is the profile
    :func:`bundled_catalog` holds (the same rows through the same :func:`build_catalog`;
    tests/hardware/test_hardware_profiles.py compares every one)."""
    rows = _bundled_rows()
    if name not in rows[table]:
        raise UnknownNameError(table, name, rows[table])
    document: dict[str, list[Any]] = {}
    _with_references(table, name, rows, document)
    catalog, problems = build_catalog(document)
    if problems:
        raise problems[0]
    return catalog.kind(table)[name]


_FILES: dict[tuple[str, bytes], Catalog] = {}  # (path, digest of its text) -> its profiles
_FILES_SIZE = 64


def _file_catalog_cached(path: str, text: str) -> Catalog:
    """The profiles of ``text`` (read from ``path``), parsed once per content: kept under a digest
    of the text, not the text (a cache of texts could hold 64 files of up to 64 MiB each)."""
    import hashlib

    from dpbase.bounded import evict_oldest

    key = (path, hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest())
    found = _FILES.get(key)
    if found is None:
        catalog, problems = build_catalog(_parse_toml(text, path), bundled_catalog())
        if problems:
            first = problems[0]
            raise ProfileError(f"{path}: {first.field}", first.value, first.allowed)
        evict_oldest(_FILES, _FILES_SIZE)
        found = _FILES[key] = catalog
    return found


def load_file(path: str | os.PathLike[str]) -> Catalog:
    """Profiles defined in a user TOML file (references resolved against bundled names). Parsed
    once per content: a file rewritten to the same length with its modification time restored
    (``cp -p``, ``rsync -t``, tar) was answered from the old profiles while keyed by path, time and
    size (review, 2026-11-29); the same text again is the same profile objects."""
    resolved = os.path.expanduser(os.fspath(_path(path)))
    try:
        os.stat(resolved)
    except OSError as error:
        raise ProfileError("path", str(path), f"an existing TOML file ({error.strerror})") from None
    return _file_catalog_cached(resolved, _read_text(resolved))


def _load(table: str, name_or_path: str | os.PathLike[str]) -> Any:
    if isinstance(name_or_path, os.PathLike) or is_path(str(name_or_path)):
        found = load_file(name_or_path).kind(table)
        if len(found) != 1:
            shown = ", ".join(found) or "none"
            raise ProfileError(f"{name_or_path}", f"{len(found)} [[{table}]] tables ({shown})",
                               f"a file defining exactly one [[{table}]]")
        return next(iter(found.values()))
    return _bundled_profile(table, str(name_or_path))


def load_gpu(name_or_path: str | os.PathLike[str]) -> Gpu:
    """A bundled GPU by name (``"h100-sxm"``) or the single ``[[gpu]]`` of a TOML file."""
    return mark_checked(_load("gpu", name_or_path))


def load_link(name_or_path: str | os.PathLike[str]) -> Link:
    """A bundled link by name (``"ib-ndr"``) or the single ``[[link]]`` of a TOML file."""
    return _load("link", name_or_path)


def load_system(name_or_path: str | os.PathLike[str]) -> System:
    """A bundled system by name (``"dgx-h100"``) or the single ``[[system]]`` of a TOML file."""
    system = mark_checked(_load("system", name_or_path))
    mark_checked(system.gpu)  # its GPU too: iteration_breakdown is handed system.gpu (hardware.given.gpu_of)
    return system


# Profiles (systems, GPUs) already checked, by identity (each kept alive here, so an id is never reused while it is
# a key): what the loader built, and what :func:`system_of` checked once.
_CHECKED: dict[int, System | Gpu] = {}
_CHECKED_MAX = 4096  # a plan adds 6-9 copies; a bundled system evicted is checked again (~1 ms)


def mark_checked(profile: Any) -> Any:
    """Record ``profile`` as checked (:mod:`hardware.given`); returns it."""
    from dpbase.bounded import evict_oldest

    evict_oldest(_CHECKED, _CHECKED_MAX)  # safe when threads race (two popped the same oldest key)
    _CHECKED[id(profile)] = profile
    return profile


def is_checked(profile: Any) -> bool:
    """Whether this very object was loaded or checked (by identity: an equal copy is not)."""
    return _CHECKED.get(id(profile)) is profile


def load_profile(name_or_path: str | os.PathLike[str], kind: str | None = None) -> Profile:
    """A profile of any kind: the first kind (system, gpu, link) that has this name or file."""
    kinds = _kinds(kind)
    if isinstance(name_or_path, os.PathLike) or is_path(str(name_or_path)):
        catalog = load_file(name_or_path)
        for table in ("system", "gpu", "link"):
            if table in kinds and len(catalog.kind(table)) == 1:
                return next(iter(catalog.kind(table).values()))
        counts = ", ".join(f"{len(catalog.kind(table))} [[{table}]]" for table in kinds)
        raise ProfileError(str(name_or_path), counts, "a file with exactly one profile of a kind")
    rows = _bundled_rows()
    for table in ("system", "gpu", "link"):
        if table in kinds and name_or_path in rows[table]:
            return _bundled_profile(table, name_or_path)
    raise UnknownNameError("profile", name_or_path, [name for table in kinds for name in rows[table]])


def _kinds(kind: str | None) -> tuple[str, ...]:
    if kind is None:
        return KINDS
    if kind not in KINDS:
        raise UnknownNameError("kind", kind, KINDS)
    return (kind,)


def list_profiles(kind: str | None = None) -> list[Profile]:
    """Bundled profiles of one kind (``gpu``, ``link``, ``system``) or of all kinds."""
    catalog = bundled_catalog()
    return [profile for table in _kinds(kind) for profile in catalog.kind(table).values()]


def _path(path: Any) -> str | os.PathLike[str]:
    """A path as text or a ``pathlib.Path``; anything else one error naming it (3 or None was a
    TypeError: API review, 2026-11-29)."""
    if not isinstance(path, (str, os.PathLike)):
        raise ProfileError("path", path, "a TOML file's path (text or a pathlib.Path)")
    return path


def validate_file(path: str | os.PathLike[str]) -> list[str]:
    """Every problem in a user TOML file, one message each (empty list = valid)."""
    try:
        document = _read_toml(os.path.expanduser(os.fspath(_path(path))))
    except ProfileError as error:
        return [str(error)]
    return [str(problem) for problem in build_catalog(document, bundled_catalog())[1]]
