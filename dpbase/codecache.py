"""Generated source compiled once per installation, as Python's ``__pycache__`` does for modules.

A value class's ``__init__`` is generated as source text (:func:`dpbase.values.frozen`, as
``@dataclass`` does) and ``exec``-ed: the interpreter would parse and compile that text every
time the class is defined, in every process. A ``dpcost iteration`` run defines ~40 value
classes on its way; compiling their generated source was ~16 % of the instructions it retired
(benchmarks/instructions.py). The text is a pure function of the class (field names, defaults,
options), so :func:`cached_exec` keeps the compiled code object of each text it has seen in a
cache file and runs that instead: the same code, without the parse.

The files sit beside the parsed-TOML cache (:func:`dpbase.bundled.cache_dir`: ``$DPCOST_CACHE_DIR``,
``$XDG_CACHE_HOME/dpcost`` or ``~/.cache/dpcost``; ``DPCOST_NO_CACHE=1`` turns both off),
keyed by the Python version and ``marshal`` format, one file per defining module (a run reads
the files of the modules it imports). They hold code, so a file is read only when the current
user owns it and no one else can write to it; any failure to read or write it falls back to
compiling. Texts first seen in a run are added when the process exits.

    >>> namespace = {}
    >>> cached_exec("def twice(x):\\n    return 2 * x", None, namespace)
    >>> namespace["twice"](21)
    42
"""

from __future__ import annotations

import contextlib
import marshal
import os
from typing import Any

from dpbase.bundled import CACHE_TAG, cache_dir, read_bytes, write_cache

MAX_BYTES = 1 << 20  # a file grown past this (many versions' classes) starts again from this run's texts

# One file per defining module ("group"), read when that module first defines a class: a process
# loads the code of the modules it imports, not of every command's.
_codes: dict[str, dict[str, Any]] = {}
_used: dict[str, set[str]] = {}
_added: set[str] = set()
_pending = False
_group = "default"


def file_name(group: str) -> str:
    """The cache file of one group (a module name)."""
    return f"generated-code-{group}-{CACHE_TAG}.marshal"


@contextlib.contextmanager
def grouped(group: str):
    """Texts executed inside the block are kept in ``group``'s file (the defining module)."""
    global _group
    previous, _group = _group, group
    try:
        yield
    finally:
        _group = previous


def _trusted(stat: os.stat_result) -> bool:
    """Owned by the current user and writable by no one else (it holds code to run)."""
    getuid = getattr(os, "getuid", None)
    owner_ok = getuid is None or stat.st_uid == getuid()
    return owner_ok and not stat.st_mode & 0o022 and stat.st_size <= MAX_BYTES


def _load(group: str) -> dict[str, Any]:
    if group not in _codes:
        codes: dict[str, Any] = {}
        directory = cache_dir()
        if directory is not None:
            try:
                path = os.path.join(directory, file_name(group))
                if _trusted(os.stat(path)):
                    loaded = marshal.loads(read_bytes(path))
                    if isinstance(loaded, dict):
                        codes = loaded
            except (OSError, ValueError, EOFError, TypeError):
                pass
        _codes[group] = codes
    return _codes[group]


def _write() -> None:
    """Save the groups that compiled texts in this run (at exit)."""
    directory = cache_dir()
    if directory is None:
        return
    for group in sorted(_added):
        codes = _codes.get(group, {})
        data = marshal.dumps(codes)  # code objects and str keys: always serialisable
        if len(data) > MAX_BYTES:
            data = marshal.dumps({text: codes[text] for text in _used.get(group, ())})
        write_cache(os.path.join(directory, file_name(group)), data)  # written 0600: the file holds code
    _added.clear()


def cached_exec(source, globals=None, locals=None) -> None:  # noqa: A002  (exec's own parameter names)
    """``exec(source, globals, locals)``, with the code compiled from a text kept across runs."""
    global _pending
    if not isinstance(source, str):
        exec(source, globals, locals)  # noqa: S102
        return
    group = _group
    codes = _load(group)
    code = codes.get(source)
    if code is None:
        code = compile(source, "<string>", "exec")  # what exec(source) compiles
        codes[source] = code
        _added.add(group)
        if not _pending:
            import atexit

            atexit.register(_write)
            _pending = True
    _used.setdefault(group, set()).add(source)
    exec(code, globals, locals)  # noqa: S102
