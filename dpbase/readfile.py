"""Files dpcost reads from a user: bounded, and one error line when they cannot be read.

A hardware profile, a model or a tuning table is read whole, up to :data:`MAX_INPUT_BYTES`, an
nccl-tests log up to :data:`MAX_LOG_BYTES`. A larger file is refused naming the limit: a 3 GB profile ended in a
``MemoryError`` traceback, and ``--cluster /dev/zero`` never returned. Reading stops one byte
past the limit, so an endless stream (a device, a pipe) is refused too.
"""

from __future__ import annotations

import os

from dpbase.errors import InputError

# 64 MiB for a profile, a model or a tuning table (the bundled ones are kilobytes); 1 GiB for an
# nccl-tests log (calibrate reads a 198 MB log of 1.7 M rows: docs/performance.md).
MAX_INPUT_BYTES = 64 * 2**20
MAX_LOG_BYTES = 2**30


def read_text(path: str | os.PathLike, field: str, allowed: str, *, errors: str = "strict",
              error_type: type[InputError] = InputError, log: bool = False) -> str:
    """The UTF-8 text of ``path``. A path that cannot be opened, a file over
    :data:`MAX_INPUT_BYTES` (``log``: :data:`MAX_LOG_BYTES`) or
    (with ``errors="strict"``) one that is not UTF-8 is one ``error_type`` naming ``field``, the
    path and ``allowed`` (what the field takes, e.g. "a readable UTF-8 TOML file")."""
    limit = MAX_LOG_BYTES if log else MAX_INPUT_BYTES
    try:
        with open(path, "rb") as stream:
            data = stream.read(limit + 1)
    except OSError as error:
        raise error_type(field, str(path), f"{allowed} ({error.strerror or error})") from None
    if len(data) > limit:
        raise error_type(field, str(path), f"{allowed} of at most {_size(limit)} (this one is larger)")
    try:
        text = data.decode("utf-8", errors=errors)
    except UnicodeDecodeError:
        raise error_type(field, str(path), f"{allowed} (this one is not UTF-8 text)") from None
    # a byte-order mark (Windows editors write one) is not text: TOML's parser read it as
    # "Invalid statement (at line 1, column 1)"
    return text.removeprefix("\ufeff")


def _size(count: int) -> str:
    if count >= 2**30:
        return f"{count / 2**30:g} GiB"
    return f"{count / 2**20:g} MiB" if count >= 2**20 else f"{count:,} bytes"
