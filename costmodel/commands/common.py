"""What every CLI command shares: the error boundary and JSON output."""

from __future__ import annotations

import functools
import json
import math
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from dpbase.errors import DpcostError, InputError

F = TypeVar("F", bound=Callable[..., Any])

EXIT_BAD_INPUT = 2


def fail(message: str) -> None:
    """Print one line ``error: …`` on stderr and exit with code 2."""
    import typer

    from dpbase.text import printable

    typer.echo(f"error: {printable(message)}", err=True)
    raise typer.Exit(EXIT_BAD_INPUT)


def cli_errors(function: F) -> F:
    """Decorate a command: a DpcostError becomes one line on stderr and exit code 2."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except DpcostError as error:
            fail(str(error))
        except BrokenPipeError:  # the reader went away (`dpcost … | head`): not the user's file
            raise
        except OSError as error:  # unreadable file named by the user
            fail(f"{getattr(error, 'filename', '') or 'file'}: {error.strerror or error}")

    return wrapper  # type: ignore[return-value]


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "to_dict") and callable(value.to_dict):  # a result record (Prediction, …)
        return _jsonable(value.to_dict())
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        return _jsonable(value.item())
    if hasattr(value, "value") and isinstance(getattr(value, "value"), str):  # str Enum
        return value.value
    return value


def check_times(data: Any, path: str = "") -> None:
    """Final guard on an answer: every ``…_s`` number (a time) must be finite, and ``time_s``
    must be >= 0; anything else means the inputs were outside the model's range (InputError)."""
    if isinstance(data, dict):
        for key, value in data.items():
            field = f"{path}.{key}" if path else str(key)
            if str(key).endswith("_s") and isinstance(value, float) and (
                    not math.isfinite(value) or (str(key) == "time_s" and value < 0)):
                raise InputError(field, value, "a finite time >= 0: the inputs are outside the range the model "
                                               "can answer (a bandwidth near 0, or a huge size, α or γ)")
            check_times(value, field)
    elif isinstance(data, (list, tuple)):
        for index, value in enumerate(data):
            check_times(value, f"{path}[{index}]")


def print_json(data: Any) -> None:
    """Write ``data`` as indented JSON on stdout (a non-finite time is refused, see
    :func:`check_times`; any other NaN/inf becomes null)."""
    check_times(data)
    sys.stdout.write(json.dumps(_jsonable(data), indent=2, ensure_ascii=False) + "\n")
