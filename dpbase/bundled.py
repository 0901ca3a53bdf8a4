"""Bundled TOML data, parsed once per installation rather than once per command.

Every CLI answer reads several bundled tables (hardware profiles, models, NCCL's constants);
parsing them with ``tomllib`` costs ~15 ms of CPU a process, more than the answer. Like
Python's own ``__pycache__``, the parsed document is kept in a cache file keyed by the source's
path, size and modification time (and the Python version: ``marshal``'s format is
version-specific), so a changed file is re-parsed. The cache lives in
``$DPCOST_CACHE_DIR`` or ``$XDG_CACHE_HOME/dpcost`` (default ``~/.cache/dpcost``);
``DPCOST_NO_CACHE=1`` turns it off. Any failure to read or write it falls back to parsing:
the cache can make an answer faster, never different. Only the package's own data files use
it; user files are parsed every time (they are small and their errors must be reported).

    >>> from pathlib import Path
    >>> data = load_bundled(Path(__file__).resolve().parent.parent / "costmodel" / "data" / "intervals.toml")
    >>> "interval" in data
    True
"""

from __future__ import annotations

import marshal
import os
import sys
from pathlib import Path
from typing import Any

CACHE_TAG = f"py{sys.version_info[0]}{sys.version_info[1]}-m{marshal.version}"


def cache_dir() -> Path | None:
    """Where parsed bundled files are kept, or None when caching is off."""
    if os.environ.get("DPCOST_NO_CACHE"):
        return None
    explicit = os.environ.get("DPCOST_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "dpcost"


def _stem(path: Path) -> str:
    return str(path).strip(os.sep).replace(os.sep, "_").replace(":", "_")[-120:]


def _key(path: Path, stat: os.stat_result) -> str:
    return f"{_stem(path)}-{stat.st_size}-{stat.st_mtime_ns}-{CACHE_TAG}.marshal"


def _prune(directory: Path, path: Path, keep: Path) -> None:
    """Remove this file's older cache entries (a reinstall or an edit leaves one behind)."""
    for old in directory.glob(f"{_stem(path)}-*.marshal"):
        if old != keep and old.name.endswith(f"-{CACHE_TAG}.marshal"):
            old.unlink(missing_ok=True)


def _parse(path: Path) -> dict[str, Any]:
    import tomllib

    return tomllib.loads(path.read_text(encoding="utf-8"))


def load_bundled(path: Path) -> dict[str, Any]:
    """The parsed TOML document of one of the package's own data files (a fresh dict)."""
    directory = cache_dir()
    if directory is None:
        return _parse(path)
    try:
        cached = directory / _key(path, path.stat())
        return marshal.loads(cached.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        pass
    document = _parse(path)
    try:
        if write_cache(cached, marshal.dumps(document)):
            _prune(directory, path, cached)
    except ValueError:  # marshal cannot serialise it
        pass
    return document


def write_cache(target: Path, data: bytes) -> bool:
    """Write a cache file whole (a temporary file readable by the user only, then a rename: a
    concurrent reader sees the old file or the new one); False when it cannot be written."""
    temporary = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, target)
        return True
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return False
