"""Frozen value classes that are cheap to define: dataclasses with shared ``__eq__``/``__hash__``/``__repr__``.

Every value in dpcost is a frozen dataclass. On Python 3.11, defining one compiles six methods
from generated source (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``,
``__delattr__``); a CLI answer defines ~40 such classes on its way, and parsing generated source
is ~16 % of the instructions a ``dpcost iteration`` run retires. With the three shared methods
below the run retires ~10 % fewer (647 → 579 M; benchmarks/instructions.py, docs/performance.md).
:func:`frozen` keeps the dataclass (``dataclasses.fields``, ``replace``, ``asdict``, slots,
keyword-only ``__init__``, ``FrozenInstanceError``) and lets the standard library generate what
must be per class (``__init__`` and the frozen ``__setattr__``/``__delattr__``), compiled once
per installation (:mod:`dpbase.codecache`; with it and the commands' plain annotations the run
retires 579 → 438 M). It gives the class three shared functions built on one
``operator.attrgetter`` of its fields instead of the generated comparison, hash and repr. They
behave as the generated ones do:

* ``a == b`` compares the fields with ``compare=True`` as tuples, only between instances of the
  same class (``NotImplemented`` otherwise);
* ``hash(a)`` hashes the fields that take part in hashing (``hash=``, else ``compare=``);
* ``repr(a)`` is ``Name(field=value, ...)`` over the fields with ``repr=True``.

A class that defines any of the three itself keeps its own, as with ``dataclass``.

    >>> @frozen(kw_only=True)
    ... class Point:
    ...     x: float
    ...     y: float = 0.0
    >>> Point(x=1.0) == Point(x=1.0, y=0.0), hash(Point(x=1.0)) == hash((1.0, 0.0))
    (True, True)
    >>> Point(x=2.0)
    Point(x=2.0, y=0.0)
"""

from __future__ import annotations

import contextlib
import dataclasses
import operator
from collections.abc import Callable
from typing import Any, TypeVar

from dpbase import codecache

T = TypeVar("T")


def _getter(names: list[str]) -> Callable[[Any], tuple]:
    """The fields' values as a tuple (``attrgetter`` returns a bare value for one name)."""
    if not names:
        return lambda _: ()
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return lambda obj: (one(obj),)
    return operator.attrgetter(*names)


def _shared_methods(cls: type) -> dict[str, Any]:
    fields = dataclasses.fields(cls)
    compared = _getter([f.name for f in fields if f.compare])
    hashed = _getter([f.name for f in fields if (f.compare if f.hash is None else f.hash)])
    shown = [f.name for f in fields if f.repr]
    shown_values = _getter(shown)

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)
        return NotImplemented

    def __hash__(self):
        return hash(hashed(self))

    def __repr__(self):
        pairs = ", ".join(f"{name}={value!r}" for name, value in zip(shown, shown_values(self)))
        return f"{self.__class__.__qualname__}({pairs})"

    return {"__eq__": __eq__, "__hash__": __hash__, "__repr__": __repr__}


_MISSING = object()
# Whose classes have their generated methods cached: dpcost's own, defined the same way in every
# run (a class a test or a user script builds on the fly would only grow the cache file).
CACHED_PACKAGES = frozenset({"costmodel", "hardware", "dpbase", "cli"})


@contextlib.contextmanager
def _compiled_once(module: str):
    """While a class is defined, the standard library's ``exec`` of its generated methods goes
    through :func:`dpbase.codecache.cached_exec` (the same code, compiled once per installation).

    ``dataclasses`` calls the builtin ``exec`` by name from its module; a module global of that
    name is found first. It is restored afterwards, so other dataclasses are not affected."""
    previous = dataclasses.__dict__.get("exec", _MISSING)
    dataclasses.exec = codecache.cached_exec
    try:
        with codecache.grouped(module):
            yield
    finally:
        if previous is _MISSING:
            del dataclasses.exec
        else:
            dataclasses.exec = previous


def frozen(cls: type[T] | None = None, /, *, kw_only: bool = False, slots: bool = True) -> Any:
    """``@dataclass(frozen=True, slots=slots, kw_only=kw_only)`` with the shared comparison,
    hash and repr of the module docstring. Use as ``@frozen`` or ``@frozen(kw_only=True)``."""

    def wrap(klass: type[T]) -> type[T]:
        own = {name for name in ("__eq__", "__hash__", "__repr__") if name in klass.__dict__}
        cached = klass.__module__.partition(".")[0] in CACHED_PACKAGES
        with _compiled_once(klass.__module__) if cached else contextlib.nullcontext():
            made = dataclasses.dataclass(klass, frozen=True, slots=slots, kw_only=kw_only, eq=False, repr=False)
        for name, method in _shared_methods(made).items():
            if name not in own:
                method.__qualname__ = f"{made.__qualname__}.{name}"
                setattr(made, name, method)
        return made

    return wrap if cls is None else wrap(cls)
