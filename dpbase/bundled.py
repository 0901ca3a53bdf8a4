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
Paths are strings (``os.path``): ``pathlib`` and what it imports (``urllib.parse``,
``ipaddress``) were ~6 % of a scalar answer's start-up.

    >>> import os
    >>> data = load_bundled(os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))),
    ...                                  "costmodel", "data", "intervals.toml"))
    >>> "interval" in data
    True
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Callable
from typing import Any

CACHE_TAG = f"py{sys.version_info[0]}{sys.version_info[1]}-m{marshal.version}"


def cache_dir() -> str | None:
    """Where parsed bundled files are kept, or None when caching is off."""
    if os.environ.get("DPCOST_NO_CACHE"):
        return None
    explicit = os.environ.get("DPCOST_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "dpcost")


def _stem(path: str, name: str = "") -> str:
    stem = path.strip(os.sep).replace(os.sep, "_").replace(":", "_")[-120:]
    return f"{stem}-{name}" if name else stem


def _key(path: str, stat: os.stat_result, name: str = "") -> str:
    return f"{_stem(path, name)}-{stat.st_size}-{stat.st_mtime_ns}-{CACHE_TAG}.marshal"


def _prune(directory: str, path: str, keep: str, name: str = "") -> None:
    """Remove this file's older cache entries (a reinstall or an edit leaves one behind)."""
    prefix, suffix = f"{_stem(path, name)}-", f"-{CACHE_TAG}.marshal"
    for entry in os.listdir(directory):
        old = os.path.join(directory, entry)
        if entry.startswith(prefix) and entry.endswith(suffix) and old != keep \
                and entry[len(prefix):].partition("-")[0].isdigit():  # not another name's entry
            try:
                os.unlink(old)
            except FileNotFoundError:
                pass


def read_bytes(path: str) -> bytes:
    """The whole file."""
    with open(path, "rb") as stream:
        return stream.read()


def _parse(path: str) -> dict[str, Any]:
    import tomllib

    return tomllib.loads(read_bytes(path).decode("utf-8"))


def load_bundled(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The parsed TOML document of one of the package's own data files (a fresh dict)."""
    path = os.fspath(path)
    return derived(path, "", lambda: _parse(path))


def derived(path: str, name: str, compute: Callable[[], Any]) -> Any:
    """``compute()``, a value ``marshal`` can store that depends on the package file ``path``
    alone (a parsed data file; a table of constants a module computes, ``name`` telling several
    apart), kept in the cache beside the parsed files and computed again when ``path`` changes."""
    directory = cache_dir()
    try:
        cached = os.path.join(directory, _key(path, os.stat(path), name)) if directory else None
    except OSError:  # no such file: nothing to key the value by
        cached = None
    if cached is None:
        return compute()
    try:
        return marshal.loads(read_bytes(cached))
    except (OSError, ValueError, EOFError, TypeError):
        pass
    value = compute()
    try:
        if write_cache(cached, marshal.dumps(value)):
            _prune(directory, path, cached, name)
    except ValueError:  # marshal cannot serialise it
        pass
    return value


def write_cache(target: str | os.PathLike[str], data: bytes) -> bool:
    """Write a cache file whole (a temporary file readable by the user only, then a rename: a
    concurrent reader sees the old file or the new one); False when it cannot be written."""
    target = os.fspath(target)
    temporary = f"{target}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
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
