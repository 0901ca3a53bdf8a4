"""Command parameters declared once, without importing typer.

A function command annotates each parameter ``Annotated[T, Option("--name", help=…)]`` (or
``Argument(help=…)``), with the same arguments ``typer.Option`` / ``typer.Argument`` take. Two
readers use that one declaration:

* :func:`for_typer` hands typer the equivalent ``typer.Option`` objects when the command is
  built (``cli.LazyCommands``): help, shell completion and every usage error come from click, as
  before;
* :mod:`costmodel.commands.argv` parses a command line whose arguments are all well-formed
  straight from these declarations, so a plain answer does not import typer and click (about
  three times Python's own start-up; docs/performance.md).

    >>> from typing import Annotated
    >>> def greet(name: Annotated[str, Option("--name", "-n", help="Who.")] = "world") -> None: ...
    >>> spec = parameter_specs(greet)[0]
    >>> spec.name, spec.switches, spec.default
    ('name', ('--name', '-n'), 'world')
"""

from __future__ import annotations

import collections
import enum
import functools
import types
import typing
from typing import Annotated, Any

EMPTY = object()  # a parameter without a default


class Option:
    """What ``typer.Option(*decls, **settings)`` would be, as a plain record."""

    __slots__ = ("decls", "settings")

    def __init__(self, *decls: str, **settings: Any) -> None:
        self.decls = decls
        self.settings = settings

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(map(repr, self.decls))})"


class Argument(Option):
    """What ``typer.Argument(**settings)`` would be: a positional parameter."""

    __slots__ = ()


ParameterSpec = collections.namedtuple(
    "ParameterSpec", "name positional switches off_switches is_flag convert required default plain listed")
ParameterSpec.__doc__ = """One parameter as a command line gives it.

``switches`` are the option strings that set it (for a flag, those that set it True) and
``off_switches`` those that set a flag False (``--x/--no-x``); an argument has neither.
``listed``: an option whose help says it takes comma-separated values (given twice, a user means
both: :func:`costmodel.commands.argv.repeated_option`).
``convert`` turns the text into the value (``str``, ``int``, ``float`` or an Enum class; None
for a flag). ``plain`` is False where click would do more than that (another type, a callback,
an environment variable, bounds, …): such a command is left to click. (A plain namedtuple:
``typing.NamedTuple`` compiled a ``ForwardRef`` per field, ~1 ms of every command's start-up.)
"""


# Settings that change only help and completion, not what a command line parses to.
PRESENTATION = frozenset({"help", "autocompletion", "show_default", "metavar", "rich_help_panel", "hidden"})


def _split(annotation: Any) -> tuple[Any, Option | None]:
    """``Annotated[T, Option(...)]`` → ``(T, the Option)``; anything else → ``(annotation, None)``."""
    if typing.get_origin(annotation) is typing.Annotated:
        base, *extras = typing.get_args(annotation)
        found = [extra for extra in extras if isinstance(extra, Option)]
        return base, (found[0] if found else None)
    return annotation, None


def _base_type(annotation: Any) -> Any:
    """``T | None`` / ``Optional[T]`` → ``T``."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        return members[0] if len(members) == 1 else None
    return annotation


def _switches(name: str, declared: Option, is_flag: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The option strings as typer derives them: the declared ones, else ``--name`` (and, for a
    flag declared without names, ``--no-name``); ``--on/--off`` declares both."""
    on: list[str] = []
    off: list[str] = []
    for decl in declared.decls:
        first, _, second = decl.partition("/")
        on.append(first.strip())
        if second:
            off.append(second.strip())
    if not on:
        dashed = "--" + name.replace("_", "-")
        on.append(dashed)
        if is_flag:
            off.append("--no-" + name.replace("_", "-"))
    return tuple(on), tuple(off)


def _unwrapped(function: Any) -> Any:
    """The function a decorator (``functools.wraps``) wraps."""
    while hasattr(function, "__wrapped__"):
        function = function.__wrapped__
    return function


def _parameters(function: Any) -> list[tuple[str, Any, Any]]:
    """``(name, annotation, default or EMPTY)`` of each parameter, in order, read from the
    function's code object (``inspect.signature`` would import ``inspect`` and ``ast``)."""
    code = function.__code__
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    positional = names[:code.co_argcount]
    defaults = dict(zip(positional[len(positional) - len(function.__defaults__ or ()):], function.__defaults__ or ()))
    defaults |= function.__kwdefaults__ or {}
    annotations = function.__annotations__
    if any(isinstance(value, str) for value in annotations.values()):  # `from __future__ import annotations`
        annotations = typing.get_type_hints(function, include_extras=True)
    return [(name, annotations.get(name), defaults.get(name, EMPTY)) for name in names]


@functools.cache  # a command's declarations do not change: read once per process (parse, repeated_option)
def parameter_specs(function: Any) -> tuple[ParameterSpec, ...]:
    """Every parameter of a command declared with :class:`Option` / :class:`Argument`."""
    specs = []
    function = _unwrapped(function)
    for name, annotation, default in _parameters(function):
        annotation, declared = _split(annotation)
        if declared is None:
            raise TypeError(f"{function.__name__}: parameter {name!r} has no Option/Argument")
        base = _base_type(annotation)
        positional = isinstance(declared, Argument)
        is_flag = base is bool and not positional
        convert = base if base in (str, int, float) or (isinstance(base, type) and issubclass(base, enum.Enum)) else None
        on, off = ((), ()) if positional else _switches(name, declared, is_flag)
        required = default is EMPTY
        plain = (is_flag or convert is not None) and set(declared.settings) <= PRESENTATION
        listed = not positional and not is_flag and "comma-separated" in str(declared.settings.get("help", "")).lower()
        specs.append(ParameterSpec(name, positional, on, off, is_flag, convert,  # None for a flag
                                   required, None if required else default, plain, listed))
    return tuple(specs)


def for_typer(function: Any) -> Any:
    """Give typer the command's parameters as ``typer.Option`` / ``typer.Argument`` objects.

    Sets ``__signature__`` (which ``inspect.signature``, and so typer, reads first) to the
    function's own signature with each :class:`Option` record replaced by the typer object the
    same arguments build; the function's code is unchanged, and it is returned.
    """
    import inspect

    import typer

    signature = inspect.signature(_unwrapped(function))
    parameters = []
    for parameter in signature.parameters.values():
        annotation, declared = _split(parameter.annotation)
        if declared is not None:
            made = getattr(typer, type(declared).__name__)(*declared.decls, **declared.settings)  # typer.Option/Argument
            parameter = parameter.replace(annotation=typing.Annotated[annotation, made])
        parameters.append(parameter)
    function.__signature__ = signature.replace(parameters=parameters)
    return function


# Parameters several commands declare alike (one declaration each, one help text).
ALPHA = Annotated[str | None, Option("--alpha", help="Latency per message, e.g. 5us.")]
NODES = Annotated[int, Option("--nodes", help="Nodes of --cluster.")]
GPUS_PER_NODE = Annotated[int | None, Option("--gpus-per-node", help="GPUs per node (default: the system's).")]
JSON = Annotated[bool, Option("--json", help="Print JSON.")]
MEMORY_RESERVE = Annotated[str | None, Option("--memory-reserve", help="Memory to keep free per GPU: a size (6GB) or a share (10%). Default 5% of the GPU.")]
MICRO_BATCH = Annotated[int, Option("--micro-batch", help="Samples per GPU per micro-batch.")]
SEQ_LEN = Annotated[int | None, Option("--seq-len", help="Tokens per sample (transformers; default from the preset).")]
COMPUTE_DTYPE = Annotated[str, Option("--compute-dtype", help="Matmul dtype: fp32, tf32, bf16, fp16, fp8 (on a GPU without it bf16 runs as fp16, then fp32, and tf32 as fp32, as PyTorch does before Ampere; the dtype that runs is printed).")]
MFU = Annotated[float | None, Option(help="Model FLOPs utilisation, a fraction of the --compute-dtype's peak (fp8's with fp8: an fp8 run's MFU quoted against the bf16 peak is twice this on H100) (default: measured for the model kind where known, e.g. CNNs, else the GPU profile's); a CNN's may pass 1 in nominal FLOPs, up to its Winograd ceiling.")]
# The algorithm parameters (costmodel.cluster.query.PARAMETERS), declared once for every command
# that asks a formula: collective, compare, formula, sweep and the charts
SERVERS = Annotated[int | None, Option("--servers", help="Parameter server: servers S (default 1).")]
COLOCATED = Annotated[bool, Option("--colocated", help="Parameter server: the servers are ranks (else dedicated machines).")]
NO_PIPELINE = Annotated[bool, Option("--no-pipeline", help="Parameter server: push everything, then pull.")]
CHUNKS = Annotated[str | None, Option("--chunks", help="Pipeline chunks k: an integer, or auto (the optimum, the default).")]
LEADERS = Annotated[bool, Option("--leaders", help="Hierarchical: reduce to one leader GPU per node, all-reduce the whole buffer across the leaders, broadcast in the node (seed 000); default: each GPU's 1/G on its own rail.")]
PS_PLACEMENT = Annotated[str | None, Option("--ps-placement", help="Parameter servers on dedicated machines (default) or colocated on ranks 0..S-1.")]
NO_FLASH_ATTENTION = Annotated[bool, Option("--no-flash-attention", help="No fused attention kernel: every layer materialises its scores (their memory and HBM traffic); Transformer-XL's relative attention always does.")]
OPTIMIZER = Annotated[str, Option(help="sgd (momentum), adam or adamw.")]
OPTIMIZER_IMPL = Annotated[str, Option("--optimizer-impl", help="multi-tensor (apex fused, PyTorch foreach/fused optimizers) or per-tensor: a loop over the parameter tensors (PyTorch's single-tensor optimizers before 2.0), which adds ~6-114 us per tensor the rank steps.")]
