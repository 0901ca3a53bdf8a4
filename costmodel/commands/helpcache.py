"""``dpcost --help`` as click last printed it, kept beside the other caches.

The top-level help is click's text (typer adds its completion options). Building it means
importing typer and click, ~5× Python's own start-up, for a screen that changes only when dpcost,
typer or click is reinstalled or the terminal's width changes. After click prints it, the text is
kept with what it depends on:

* the program's name in the usage line (the script's name, as click derives it; under
  ``python -m`` nothing is kept) and the terminal's width as ``shutil.get_terminal_size``
  (click's source of it) reads it: the raw ``COLUMNS`` variable and the width of the terminal on
  stdout, if any;
* the modification times of ``cli.py`` (the command list and summaries) and of the
  directories typer and click were imported from (installing, upgrading or removing any package
  there, e.g. ``shellingham``, which changes typer's completion options, touches them);
* the Python version.

A later ``dpcost --help`` prints the kept text only if all of these are unchanged, else click
builds it again. The file is plain text with NUL-separated fields (the context, each path and its
time, the text); it lives in the parsed-TOML
cache directory (:func:`dpbase.bundled.cache_dir`, ``DPCOST_NO_CACHE=1`` turns it off) and any
failure to read or write it falls back to click.
"""

from __future__ import annotations

import os
import sys

from dpbase.bundled import CACHE_TAG, cache_dir, read_bytes, write_cache

SEPARATOR = "\0"
# The packages whose installation shapes the text: their directories' modification times.
SHAPERS = ("typer", "click")


def _program() -> str | None:
    """The name the usage line shows, as click derives it: the script's name; None when run as
    ``python -m …`` (click names the module then, and the text is not kept)."""
    if getattr(sys.modules.get("__main__"), "__package__", None) not in (None, ""):
        return None
    return os.path.basename(sys.argv[0]) if sys.argv else None


def _context() -> str | None:
    """The program's name and everything ``shutil.get_terminal_size`` reads, raw (so equal
    inputs give equal widths); None when the text is not kept."""
    program = _program()
    if program is None:
        return None
    try:
        columns = str(os.get_terminal_size(sys.__stdout__.fileno()).columns)
    except (AttributeError, ValueError, OSError):
        columns = "none"
    return f"prog={program!r} COLUMNS={os.environ.get('COLUMNS')!r} tty={columns}"


def _path(directory: str, context: str) -> str:
    import zlib

    return os.path.join(directory, f"help-{zlib.crc32(context.encode()):08x}-{CACHE_TAG}.txt")


def _stamp(paths: list[str]) -> list[str]:
    """Each path, then its modification time."""
    return [field for path in paths for field in (path, str(os.stat(path).st_mtime_ns))]


def cached_help(source: str) -> str | None:
    """The kept help text if nothing it depends on has changed, else None. ``source``: the file
    that defines the command list (``cli.py``)."""
    directory, context = cache_dir(), _context()
    if directory is None or context is None:
        return None
    try:
        kept_context, *recorded, text = read_bytes(_path(directory, context)).decode("utf-8").split(SEPARATOR)
        paths = recorded[0::2]
        if kept_context != context or source not in paths or _stamp(paths) != recorded:
            return None
        return text
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def keep_help(text: str, source: str) -> bool:
    """Keep ``text`` (what click just printed for ``dpcost --help``; ``source``: the file that
    defines the command list); False if it cannot be."""
    directory, context = cache_dir(), _context()
    if directory is None or context is None or SEPARATOR in text:
        return False
    try:
        shapers = [os.path.dirname(os.path.dirname(os.path.realpath(sys.modules[name].__file__)))
                   for name in SHAPERS]
        paths = [source, *dict.fromkeys(shapers)]
        fields = [context, *_stamp(paths), text]  # the text holds no separator (checked above)
    except (KeyError, OSError, TypeError):
        return False
    return write_cache(_path(directory, context), SEPARATOR.join(fields).encode("utf-8"))
