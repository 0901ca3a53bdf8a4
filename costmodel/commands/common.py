"""What every CLI command shares: the error boundary and JSON output."""

from __future__ import annotations

import errno
import functools
import math
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from dpbase.errors import FILE_ALLOWED, DpcostError, InputError

F = TypeVar("F", bound=Callable[..., Any])

EXIT_BAD_INPUT = 2
# errno values of a write that lost its output (a full disk, an I/O error): not a file the user
# named, so no user-input error; cli.main makes them one line and exit status 120.
OUTPUT_LOST = (errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG)


JSON_FLAGS = ("json_", "json_output", "as_json")  # the parameter names of the commands' --json option


def echo(text: str, err: bool = False) -> None:
    """Write one line on stdout (stderr with ``err``), as ``typer.echo`` does for plain text."""
    stream = sys.stderr if err else sys.stdout
    stream.write(f"{text}\n")
    stream.flush()


def comma_list(text: str, field: str, example: str, parse: Callable[[str], Any] = str) -> tuple:
    """A comma-separated option's values, each parsed by ``parse`` (which names a bad item in its
    own error), each value once: a repeat is answered once, compared after parsing (``1MB,1000KB``
    is one size), as the planner counts a repeated swept value once. An empty item ("25MiB,") is
    refused in one line. plan, sweep and plot read their lists here."""
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise InputError(field, text, f"comma-separated values without empty items, e.g. {example}")
    return tuple(dict.fromkeys(parse(item) for item in items))


def comma_counts(text: str, field: str, example: str) -> tuple[int, ...]:
    """:func:`comma_list` of whole numbers (sweep's --nodes/--ranks, plot's --rank-counts)."""
    def count(item: str) -> int:
        try:
            return int(item)
        except ValueError:
            raise InputError(field, item, f"comma-separated integers, e.g. {example}") from None

    return comma_list(text, field, example, count)


def parse_chunks(text: str | None) -> int | None:
    """--chunks as the formulas take it: a whole number, or 'auto' (None: the formula's default, the
    optimum); anything else is refused here, and a bad count by the formula's own check
    (:func:`costmodel.cluster.query.chunks_of`, what every entry point reads)."""
    if text is None:
        return None
    from costmodel.cluster.query import chunks_of

    return chunks_of(text)


def algorithm_fields(servers: int | None, colocated: bool, no_pipeline: bool, chunks: str | None,
                     leaders: bool) -> dict[str, Any]:
    """The algorithm parameters typed on the command line, as the query's fields (only those given:
    :func:`costmodel.cluster.query.given_fields`)."""
    from costmodel.cluster.query import given_fields

    return given_fields(servers=servers, colocated=colocated, pipelined=not no_pipeline, chunks=parse_chunks(chunks),
                        leaders=leaders)


def server_placement(ps_placement: str | None, colocated: bool) -> bool | None:
    """Whether the parameter servers are ranks: ``--ps-placement dedicated|colocated``, or
    ``--colocated`` as `collective` spells it (a seeds audit: one flag had two names); None when
    neither is given (the default: dedicated)."""
    from dpbase.errors import InputError

    if ps_placement not in (None, "dedicated", "colocated"):
        raise InputError("--ps-placement", ps_placement, "dedicated or colocated")
    if colocated and ps_placement == "dedicated":
        raise InputError("--colocated", True, "left out with --ps-placement dedicated (one placement: --colocated is "
                                              "--ps-placement colocated)")
    return True if colocated else None if ps_placement is None else ps_placement == "colocated"


def parse_bits(text: str | None, field: str) -> int | None:
    """``int8`` / ``int4`` (or 8 / 4) as a bit count; None stays None."""
    if text is None:
        return None
    digits = text.lower().removeprefix("int")
    if not digits.isdigit():
        raise InputError(field, text, "int8 or int4")
    return int(digits)


def parse_reserve(text: str | None) -> tuple[float | None, float | None]:
    """``--memory-reserve``: a size ("6GB") → (bytes, None) or a share ("10%") → (None, 0.1)."""
    from dpbase.errors import InputError, UnitError
    from dpbase.units import parse_size

    if text is None:
        return None, None
    text = text.strip()
    if not text.endswith("%"):
        try:
            return parse_size(text, "memory_reserve", unit_needed=True), None
        except UnitError as error:  # a size or a share
            raise InputError("memory_reserve", text, f"{error.allowed}, or a share such as 10%") from None
    try:
        share = float(text[:-1]) / 100
    except ValueError:
        share = -1.0
    if not 0 <= share < 1:
        raise InputError("memory_reserve", text, "a size (6GB) or a share from 0% to below 100% (10%)")
    return None, share


def reserve_bytes_of(text: str | None, capacity_bytes: float) -> float | None:
    """``--memory-reserve`` in bytes of a GPU of ``capacity_bytes`` (a share taken of it); None unset.
    A size the GPU does not hold is refused with the text typed, not its bytes."""
    from costmodel.training.memory import reserve_given

    reserve = reserve_given(capacity_bytes, *parse_reserve(text))
    if reserve is not None and not reserve < capacity_bytes:
        raise InputError("memory_reserve", text, f"a size below the GPU's {capacity_bytes / 1e9:.0f} GB, "
                         "or a share from 0% to below 100% (10%)")
    return reserve


def bucket_bytes_of(text: str, field: str) -> float:
    """A bucket size typed with its unit (``--bucket``, ``--first-bucket``, each of ``--buckets``), in
    bytes; one the model refuses (:func:`costmodel.training.overlap.bucket_size_ok`) is refused with
    the text typed ("got '0MB'", not "got 0.0")."""
    from costmodel.training.overlap import MIN_BUCKET_BYTES, bucket_size_ok
    from dpbase.units import parse_size

    size = parse_size(text, field, unit_needed=True)  # `--bucket 25` (bucket_cap_mb=25) needs its unit
    if not bucket_size_ok(size):
        raise InputError(field, text, f"a size from {MIN_BUCKET_BYTES} bytes (one fp32 gradient element) to 1 ZiB")
    return size


def gpu_group(system, nodes: int | None, gpus: int | None, field: str = "gpus") -> tuple[int, int]:
    """(nodes, GPUs per node) from --nodes and a total GPU count (``field``: the option that gave it);
    without --nodes the count packs on the fewest nodes (:func:`costmodel.cluster.mapping.layout_of`)."""
    from dpbase.limits import MAX_RANKS

    per_node_max = system.gpus_per_node
    if nodes is not None and not 1 <= nodes <= MAX_RANKS:  # 0 is not "the default"
        raise InputError("nodes", nodes, f"an integer from 1 to {MAX_RANKS} (or leave it out)")
    if gpus is None:
        return (nodes or 1), per_node_max
    if isinstance(gpus, bool) or not 1 <= gpus <= MAX_RANKS:
        raise InputError(field, gpus, f"an integer from 1 to {MAX_RANKS}")
    if nodes is None:  # packed on the fewest nodes with as many GPUs on each, as the planner's layouts
        from costmodel.cluster.mapping import layout_of

        nodes, _ = layout_of(gpus, per_node_max, MAX_RANKS, partial=True)
    if gpus % nodes or gpus // nodes > per_node_max:
        raise InputError(field, gpus, f"a multiple of --nodes {nodes} with at most "
                         f"{per_node_max} GPUs per node on {system.name}")
    return nodes, gpus // nodes


def error_object(error: BaseException) -> dict[str, Any]:
    """The JSON shape of a refused input: ``{"error": {"field", "got", "allowed", "message"}}``."""
    message = str(error) if not isinstance(error, OSError) else _os_message(error)
    if isinstance(error, InputError):
        got = error.value if isinstance(error.value, (int, float, str, bool)) or error.value is None else repr(error.value)
        fields = {"field": error.field, "got": got, "allowed": error.allowed}
    elif isinstance(error, OSError):
        fields = {"field": "file", "got": getattr(error, "filename", None), "allowed": FILE_ALLOWED}
    else:
        fields = {"field": None, "got": None, "allowed": None}
    return {"error": {**fields, "message": message}}


def _os_message(error: OSError) -> str:
    """An unreadable or unwritable file in the one-line form of every refused input: the field
    (``file``), the path and what is allowed, with the system's reason."""
    name = getattr(error, "filename", None)
    got = repr(str(name)) if name is not None else "an unnamed file"
    return f"file: got {got}; allowed: {FILE_ALLOWED} ({error.strerror or error})"


def fail(message: str, error: BaseException | None = None, as_json: bool = False) -> None:
    """Print one line ``error: …`` on stderr and exit with code 2; with ``--json`` also print the
    error as a JSON object on stdout (:func:`error_object`), so a script parses one shape."""
    from dpbase.text import printable

    if as_json and error is not None:
        import json

        data = _jsonable(error_object(error))
        if isinstance(data["error"]["got"], float) and not math.isfinite(data["error"]["got"]):
            data["error"]["got"] = repr(data["error"]["got"])
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=repr) + "\n")
    echo(f"error: {printable(message)}", err=True)
    raise SystemExit(EXIT_BAD_INPUT)


# The library's name of a field whose option a command spells otherwise: (the command's parameter,
# its flag). An error on it names the flag typed (`--accum 0` read "accumulation_steps: got 0").
FIELD_FLAGS = {"accumulation_steps": ("accum", "--accum"), "zero_stage": ("zero", "--zero")}


def _as_typed(error: DpcostError, parameters: Any) -> DpcostError:
    """``error`` naming the command's own flag where the library named its field (:data:`FIELD_FLAGS`)."""
    from dpbase.errors import InputError

    found = FIELD_FLAGS.get(getattr(error, "field", ""))
    if found is None or found[0] not in parameters or type(error) is not InputError:
        return error
    return InputError(found[1], error.value, error.allowed)


def cli_errors(function: F) -> F:
    """Decorate a command: a DpcostError becomes one line on stderr and exit code 2 (and, with
    ``--json``, a JSON error object on stdout)."""
    code = function.__code__  # its parameter names (inspect costs every start-up its import)
    parameters = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        as_json = any(bool(kwargs.get(flag)) for flag in JSON_FLAGS)
        try:
            return function(*args, **kwargs)
        except DpcostError as error:
            error = _as_typed(error, parameters)
            fail(str(error), error, as_json)
        except BrokenPipeError:  # the reader went away (`dpcost … | head`): not the user's file
            raise
        except OSError as error:  # unreadable file named by the user, unless the answer was lost
            if error.errno in OUTPUT_LOST:
                raise
            fail(_os_message(error), error, as_json)

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
    import json  # only for --json: a text answer does not load it

    check_times(data)
    sys.stdout.write(json.dumps(_jsonable(data), indent=2, ensure_ascii=False) + "\n")
