"""Files written by dpcost: never over an input, always whole (temporary file + rename).

Every command that writes a file goes through :func:`write_outputs`: it first refuses (one
:class:`~dpbase.errors.InputError`) an output that names one of the command's inputs or another
output of the same run, then writes each output to a temporary file in the target's directory
and renames it over the target. A rename within one directory is atomic on POSIX and Windows,
so a reader (or a concurrent run writing the same target) sees the old file or a complete new
one, never a mix. A symbolic link keeps pointing at the file written; a FIFO or a device
(``-o /dev/stdout``) is written into, not replaced.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from dpbase.errors import InputError


def _key(path: str | os.PathLike) -> str:
    return os.path.normcase(os.path.realpath(os.fspath(path)))


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether ``a`` and ``b`` name the same file (through links, ``..`` and hard links)."""
    try:
        if os.path.samefile(a, b):
            return True
    except OSError:  # one of them does not exist yet
        pass
    return _key(a) == _key(b)


def check_outputs(outputs: Mapping[str, str | os.PathLike | None], inputs: Iterable[str | os.PathLike | None]) -> None:
    """Refuse an output (field → path) that names an input or another output."""
    sources = [p for p in inputs if p is not None and os.path.exists(p)]
    seen: dict[str, str] = {}
    for field, path in outputs.items():
        if path is None:
            continue
        for source in sources:
            if same_file(path, source):
                raise InputError(field, str(path), f"a file that is not an input of this command ({source} is read)")
        for other_field, other in seen.items():
            if same_file(path, other):
                raise InputError(field, str(path), f"a different file from --{other_field.replace('_', '-')}")
        seen[field] = os.fspath(path)


def write_text_atomic(path: str | os.PathLike, text: str, field: str = "output") -> Path:
    """Write ``text`` (UTF-8) to ``path`` via a temporary file in its directory and a rename.

    A path that cannot be written (a directory, a read-only or virtual file system such as
    /proc, no permission, a full disk) is the user's ``field`` at fault: one
    :class:`InputError` naming the path and the system's reason, never a traceback or the exit
    status of a lost answer (the answer itself is on stdout, not in this file)."""
    target = Path(path)
    if not os.fspath(path):
        raise InputError(field, os.fspath(path), "a file path to write")
    if target.is_dir():
        raise InputError(field, str(target), "a file path, not a directory")
    above = next((parent for parent in target.parents if parent.exists()), None)
    if above is not None and not above.is_dir():  # mkdir said only "File exists"
        raise InputError(field, str(target), f"a path in a directory ({above} is a file)")
    try:
        _write_via_rename(target, text)
    except OSError as error:
        raise InputError(field, str(target), f"a file dpcost can write ({error.strerror or error})") from None
    return target


def _write_via_rename(target: Path, text: str) -> None:
    """:func:`write_text_atomic`'s write: a temporary file beside ``target``, renamed over it.
    A symbolic link is followed (the file it names is replaced, the link kept); an open
    descriptor (``/dev/stdout``) or a target that exists and is no regular file (a FIFO, a
    device) is appended to, as a shell's ``>>`` would: a rename would replace it with a file."""
    if _is_descriptor(target) or (target.exists() and not target.is_file()):
        # appended, as a shell's >> does: /dev/stdout reopens what the shell opened (a pipe, or a
        # file that may already hold output), and a rename over its resolved path replaced that file
        with open(target, "a", encoding="utf-8", newline="") as stream:
            stream.write(text)
        return
    target = Path(os.path.realpath(target))  # a symbolic link: the file it names is replaced
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        if target.exists():  # keep the target's permissions, as an in-place write would
            os.chmod(temporary, target.stat().st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


# An open descriptor named as a file: /dev/stdout, /dev/stderr, /dev/fd/N, /proc/<pid>/fd/N.
_DESCRIPTOR = re.compile(r"^/(?:dev/(?:stdout|stderr|stdin|fd/\d+)|proc/[^/]+/fd/\d+)$")


def _is_descriptor(path: Path) -> bool:
    return bool(_DESCRIPTOR.match(os.path.abspath(path)))


def write_outputs(outputs: Mapping[str, tuple[str | os.PathLike, str] | None],
                  inputs: Iterable[str | os.PathLike | None] = ()) -> dict[str, Path]:
    """Check then write every output: field → (path, text). Nothing is written if one is refused."""
    chosen = {field: value for field, value in outputs.items() if value is not None}
    check_outputs({field: path for field, (path, _) in chosen.items()}, inputs)
    return {field: write_text_atomic(path, text, field) for field, (path, text) in chosen.items()}


def check_html_path(field: str, path) -> None:
    """An HTML output (a chart or report) must end in .html or .htm: ``--html fit.toml`` wrote HTML
    into a file named as a profile."""
    from pathlib import Path

    if Path(path).suffix.lower() not in (".html", ".htm"):
        raise InputError(field, str(path), "a .html path (the output is interactive HTML, e.g. report.html)")
