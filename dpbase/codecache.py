"""Generated source compiled once per installation, as Python's ``__pycache__`` does for modules.

Defining a dataclass makes the standard library write its ``__init__`` (and, for a frozen
class, ``__setattr__``/``__delattr__``) as source text and ``exec`` it: the interpreter parses
and compiles that text every time the class is defined, in every process. A ``dpcost
iteration`` run defines ~40 value classes on its way; their ~80,000 characters of generated
source were ~16 % of the instructions it retires (benchmarks/instructions.py). The text is a
pure function of the class (field names, defaults, options), so :func:`cached_exec` keeps the
compiled code object of each text it has seen in one cache file and runs that instead: the
same code, without the parse. :func:`dpbase.values.frozen` routes the standard library's
``exec`` through it while it defines a class.

The file sits beside the parsed-TOML cache (:func:`dpbase.bundled.cache_dir`: ``$DPCOST_CACHE_DIR``,
``$XDG_CACHE_HOME/dpcost`` or ``~/.cache/dpcost``; ``DPCOST_NO_CACHE=1`` turns both off) and is
keyed by the Python version and ``marshal`` format. It holds code, so it is read only when the
current user owns it and no one else can write to it; any failure to read or write it falls
back to compiling. Texts first seen in a run are added when the process exits.

    >>> namespace = {}
    >>> cached_exec("def twice(x):\\n    return 2 * x", None, namespace)
    >>> namespace["twice"](21)
    42
"""

from __future__ import annotations

import marshal
import os
from typing import Any

from dpbase.bundled import _TAG, cache_dir

FILE_NAME = f"generated-code-{_TAG}.marshal"
MAX_BYTES = 4 << 20  # a file grown past this (many versions' classes) starts again from this run's texts

_codes: dict[str, Any] | None = None
_used: set[str] = set()
_pending = False


def _trusted(stat: os.stat_result) -> bool:
    """Owned by the current user and writable by no one else (it holds code to run)."""
    getuid = getattr(os, "getuid", None)
    owner_ok = getuid is None or stat.st_uid == getuid()
    return owner_ok and not stat.st_mode & 0o022 and stat.st_size <= MAX_BYTES


def _load() -> dict[str, Any]:
    global _codes
    if _codes is None:
        _codes = {}
        directory = cache_dir()
        if directory is not None:
            try:
                path = directory / FILE_NAME
                if _trusted(path.stat()):
                    loaded = marshal.loads(path.read_bytes())
                    if isinstance(loaded, dict):
                        _codes = loaded
            except (OSError, ValueError, EOFError, TypeError):
                pass
    return _codes


def _write() -> None:
    """Save the texts compiled so far (at exit, when this run compiled any)."""
    directory = cache_dir()
    if directory is None or _codes is None:
        return
    try:
        data = marshal.dumps(_codes)
        if len(data) > MAX_BYTES:
            data = marshal.dumps({text: _codes[text] for text in _used})
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / FILE_NAME
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with open(temporary, "wb") as handle:  # private to the user: the file holds code
            os.chmod(temporary, 0o600)
            handle.write(data)
        os.replace(temporary, path)  # atomic: a concurrent reader sees the old file or the new one
    except (OSError, ValueError):
        pass


def cached_exec(source, globals=None, locals=None) -> None:  # noqa: A002  (exec's own parameter names)
    """``exec(source, globals, locals)``, with the code compiled from a text kept across runs."""
    global _pending
    if not isinstance(source, str):
        exec(source, globals, locals)  # noqa: S102
        return
    codes = _load()
    code = codes.get(source)
    if code is None:
        code = compile(source, "<string>", "exec")  # what exec(source) compiles
        codes[source] = code
        if not _pending:
            import atexit

            atexit.register(_write)
            _pending = True
    _used.add(source)
    exec(code, globals, locals)  # noqa: S102
