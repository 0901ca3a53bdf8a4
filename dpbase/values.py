"""Frozen value classes that are cheap to define and do not import :mod:`dataclasses`.

Every value in dpcost is a frozen value class: ``@frozen`` (or ``@frozen(kw_only=True)``) on a
class body of annotated fields, as ``@dataclass(frozen=True, slots=True)`` would be used. It
builds what that decorator builds — a keyword-only (or positional) ``__init__`` with the
defaults and default factories of :func:`field`, ``__post_init__`` called after it,
``__slots__``, a frozen ``__setattr__``/``__delattr__`` raising ``FrozenInstanceError``,
``__match_args__`` and pickling — and gives every class three shared functions built on one
``operator.attrgetter`` of its fields instead of a generated comparison, hash and repr:

* ``a == b`` compares the fields with ``compare=True`` as tuples, only between instances of the
  same class (``NotImplemented`` otherwise);
* ``hash(a)`` hashes the fields that take part in hashing (``hash=``, else ``compare=``);
* ``repr(a)`` is ``Name(field=value, ...)`` over the fields with ``repr=True``.

A class that defines any of the three itself keeps its own, as with ``dataclass``.

Why not ``dataclasses`` itself: importing it imports :mod:`inspect` (and with it ``ast``, ``dis``
and ``tokenize``), and ``@dataclass`` spends ~80 µs a class even with its generated code cached.
Without them a scalar ``dpcost collective`` retires 172 → 135 M instructions, an NCCL-mode one
222 → 173 M and ``dpcost iteration`` 270 → 210 M (benchmarks/instructions.py, docs/performance.md). The classes stay dataclasses to every caller:
``dataclasses.fields``, ``replace``, ``asdict`` and ``is_dataclass`` work on them, through a
``__dataclass_fields__`` built (with ``dataclasses``' own :class:`~dataclasses.Field` objects)
the first time one of them asks. dpcost's own code uses :func:`fields`, :func:`replace` and
:func:`asdict` from here, which need no import on the answer path. The ``__init__`` source is
generated per class and compiled once per installation (:mod:`dpbase.codecache`); once a class
with several fields has built a few dozen values, it stores the fields through a mutable twin
class with the same slots instead of one ``object.__setattr__`` per field (``TWIN_MIN_FIELDS``).
tests/test_values.py checks the behaviour against ``@dataclass(frozen=True, slots=True)``.

    >>> @frozen(kw_only=True)
    ... class Point:
    ...     x: float
    ...     y: float = 0.0
    >>> Point(x=1.0) == Point(x=1.0, y=0.0), hash(Point(x=1.0)) == hash((1.0, 0.0))
    (True, True)
    >>> Point(x=2.0)
    Point(x=2.0, y=0.0)
    >>> replace(Point(x=2.0), y=5.0)
    Point(x=2.0, y=5.0)
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from dpbase import codecache

T = TypeVar("T")


class _Missing:
    """No default (``dataclasses.MISSING``'s role)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Field:
    """One field of a value class: the options ``dataclasses.field`` takes, and its name and
    annotation once the class is built."""

    __slots__ = ("name", "type", "default", "default_factory", "init", "repr", "hash", "compare",
                 "metadata", "kw_only")

    def __init__(self, default=MISSING, default_factory=MISSING, init=True, repr=True,  # noqa: A002
                 hash=None, compare=True, metadata=None, kw_only=MISSING):  # noqa: A002
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name: str = ""
        self.type: Any = None
        self.default, self.default_factory = default, default_factory
        self.init, self.repr, self.hash, self.compare = init, repr, hash, compare
        self.metadata = metadata
        self.kw_only = kw_only

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, default={self.default!r}, default_factory={self.default_factory!r})"


def field(*, default=MISSING, default_factory=MISSING, init=True, repr=True, hash=None,  # noqa: A002
          compare=True, metadata=None, kw_only=MISSING) -> Any:
    """A field's options in a class body, as ``dataclasses.field`` takes them."""
    return Field(default, default_factory, init, repr, hash, compare, metadata, kw_only)


def _getter(names: list[str]) -> Callable[[Any], tuple]:
    """The fields' values as a tuple (``attrgetter`` returns a bare value for one name)."""
    if not names:
        return lambda _: ()
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return lambda obj: (one(obj),)
    return operator.attrgetter(*names)


def _shared_methods(specs: tuple[Field, ...]) -> dict[str, Any]:
    compared = _getter([f.name for f in specs if f.compare])
    hashed = _getter([f.name for f in specs if (f.compare if f.hash is None else f.hash)])
    shown = [f.name for f in specs if f.repr]
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


# Whose classes have their generated methods cached: dpcost's own, defined the same way in every
# run (a class a test or a user script builds on the fly would only grow the cache file).
CACHED_PACKAGES = frozenset({"costmodel", "hardware", "dpbase", "cli"})
_MUTABLE_DEFAULTS = (list, dict, set)


def _is_classvar(annotation: Any) -> bool:
    """``ClassVar[...]`` (an annotation string, as ``from __future__ import annotations`` leaves it,
    or the object): a class attribute, not a field."""
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar"))
    return annotation is ClassVar or getattr(annotation, "__origin__", None) is ClassVar


def _as_field(value: Any) -> Field:
    """A class attribute as a :class:`Field`: ours, a ``dataclasses.field(...)``, or a default."""
    if isinstance(value, Field):
        made = Field(value.default, value.default_factory, value.init, value.repr, value.hash, value.compare,
                     value.metadata, value.kw_only)
        return made
    standard = sys.modules.get("dataclasses")
    if standard is not None and isinstance(value, standard.Field):
        def own(option):
            return MISSING if option is standard.MISSING else option

        return Field(own(value.default), own(value.default_factory), value.init, value.repr, value.hash,
                     value.compare, value.metadata, own(value.kw_only))
    if isinstance(value, _MUTABLE_DEFAULTS):
        raise ValueError(f"mutable default {type(value)} is not allowed: use default_factory")
    return Field(default=value)


def _collect(cls: type, kw_only: bool) -> tuple[Field, ...]:
    specs = []
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if _is_classvar(annotation):
            continue
        spec = _as_field(cls.__dict__.get(name, MISSING))
        spec.name, spec.type = name, annotation
        if spec.kw_only is MISSING:
            spec.kw_only = kw_only
        specs.append(spec)
    return tuple(specs)


# A slotted class with at least TWIN_MIN_FIELDS fields to store, once built TWIN_AFTER times,
# stores them through a mutable twin of the class (same bases and slots, plain ``__setattr__``):
# two ``__class__`` assignments (~1.6k instructions each, through the descriptor's setter) and
# plain attribute stores instead of one ``object.__setattr__`` call per field (~1.5k each); a
# 60-field value: ~88k -> ~31k instructions. The twin is made only then: making a class costs
# ~90-230k instructions, more than a value built a few times saves (a one-answer CLI run builds
# most classes once).
TWIN_MIN_FIELDS = 3
TWIN_AFTER = 32


def _init_source(specs: tuple[Field, ...], post_init: bool, twin: bool = False) -> str:
    """The ``__init__`` text (a pure function of the field options: cached by text).

    ``twin``: once ``_classes`` = [class, twin, count] has a twin (:func:`_count`), the fields are
    stored through it when the instance is exactly the class (a subclass's instance may have
    another layout: it takes ``object.__setattr__``, as a class without a twin does)."""
    positional, keyword, stores = [], [], []
    for index, spec in enumerate(specs):
        name = spec.name
        if spec.init:
            if spec.default is not MISSING:
                parameter = f"{name}=_d{index}"
            elif spec.default_factory is not MISSING:
                parameter = f"{name}=_HAS_FACTORY"
            else:
                parameter = name
            (keyword if spec.kw_only else positional).append(parameter)
        if spec.default_factory is not MISSING:
            value = f"_f{index}() if {name} is _HAS_FACTORY else {name}" if spec.init else f"_f{index}()"
        elif spec.init:
            value = name
        elif spec.default is not MISSING:
            value = f"_d{index}"
        else:
            continue
        stores.append((name, value))
    body = [f"  _object_setattr(self, {name!r}, {value})" for name, value in stores]
    if twin and len(stores) >= TWIN_MIN_FIELDS:
        # A default factory may raise: the factories run before the switch, so no failure can
        # leave a twin (a mutable value) behind.
        made = [(f"_v{index}", value) for index, (_, value) in enumerate(stores) if _calls_factory(value)]
        held = dict(made)
        local = {value: name for name, value in made}
        body = ["  if _classes[1] is not None and self.__class__ is _classes[0]:",
                *(f"    {name} = {held[name]}" for name, _ in made),
                "    _set_class(self, _classes[1])",
                *(f"    self.{name} = {local.get(value, value)}" for name, value in stores),
                "    _set_class(self, _classes[0])",
                "  else:", *(f"  {line}" for line in body),
                "    _count(_classes)"]
    if post_init:
        body.append("  self.__post_init__()")
    parameters = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    return f"def __init__({parameters}):\n" + ("\n".join(body) or "  pass") + "\n"


def _calls_factory(expression: str) -> bool:
    """Whether a store's expression calls a default factory (``_f<index>() …``)."""
    head, bracket, _ = expression.partition("(")
    return bool(bracket) and head.startswith("_f") and head[2:].isdigit()


_SET_CLASS = object.__dict__["__class__"].__set__  # ``obj.__class__ = cls`` past a frozen __setattr__


def _make_init(cls: type, specs: tuple[Field, ...], classes: list | None = None) -> Any:
    """The generated ``__init__``; ``classes`` (slotted classes): the list [class, twin, values
    built] that :func:`_build` and :func:`_count` fill."""
    names: dict[str, Any] = {"_object_setattr": object.__setattr__, "_HAS_FACTORY": _HAS_FACTORY,
                             "_classes": classes, "_count": _count, "_set_class": _SET_CLASS}
    for index, spec in enumerate(specs):
        names[f"_d{index}"] = spec.default
        names[f"_f{index}"] = spec.default_factory
    namespace: dict[str, Any] = {}
    source = _init_source(specs, hasattr(cls, "__post_init__"), twin=classes is not None)
    if cls.__module__.partition(".")[0] in CACHED_PACKAGES:
        with codecache.grouped(cls.__module__):
            codecache.cached_exec(source, names, namespace)
    else:
        exec(source, names, namespace)  # noqa: S102
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _count(classes: list) -> None:
    """One more value of ``classes[0]`` built without a twin; at TWIN_AFTER, make the twin: the
    same bases and slots (an instance may switch ``__class__`` between the two) with the plain
    ``__setattr__``. Being a subclass of the bases, it would reach a base's ``__init_subclass__``
    (no dpcost class has one)."""
    classes[2] += 1
    if classes[2] >= TWIN_AFTER and classes[1] is None:  # >=: two threads may both pass TWIN_AFTER
        made = classes[0]
        classes[1] = type(made)(made.__name__, made.__bases__,
                                {"__slots__": made.__slots__, "__setattr__": object.__setattr__,
                                 "__delattr__": object.__delattr__, "__module__": made.__module__,
                                 "__qualname__": f"{made.__qualname__}.<mutable twin>"})


class _HasFactory:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


_HAS_FACTORY = _HasFactory()


def _frozen_error(name: str) -> Exception:
    import dataclasses  # only when a caller tries to assign: the error type callers catch

    return dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_setattr(self, name: str, value: Any) -> None:
    raise _frozen_error(name)


def _frozen_delattr(self, name: str) -> None:
    raise _frozen_error(name)


class _StandardFields:
    """``__dataclass_fields__``, built with ``dataclasses``' own ``Field`` objects the first time
    ``dataclasses.fields``/``replace``/``asdict``/``is_dataclass`` asks for it."""

    def __get__(self, instance: Any, owner: type) -> dict[str, Any]:
        import dataclasses

        built = {}
        for spec in owner.__value_fields__:
            made = dataclasses.field(
                default=dataclasses.MISSING if spec.default is MISSING else spec.default,
                default_factory=dataclasses.MISSING if spec.default_factory is MISSING else spec.default_factory,
                init=spec.init, repr=spec.repr, hash=spec.hash, compare=spec.compare, metadata=spec.metadata,
                kw_only=spec.kw_only)
            made.name, made.type = spec.name, spec.type
            made._field_type = dataclasses._FIELD  # what @dataclass marks a regular field with
            built[spec.name] = made
        type.__setattr__(owner, "__dataclass_fields__", built)
        return built


def _getstate(self) -> list:
    return [getattr(self, spec.name) for spec in self.__value_fields__]


def _setstate(self, state: list) -> None:
    for spec, value in zip(self.__value_fields__, state):
        object.__setattr__(self, spec.name, value)


def _build(cls: type, kw_only: bool, slots: bool) -> type:
    inherited = [base.__name__ for base in cls.__mro__[1:] if "__value_fields__" in base.__dict__]
    if inherited:  # @dataclass would merge the base's fields; this builder reads the class body only
        raise TypeError(f"{cls.__name__}: a value class cannot extend value class {inherited[0]} "
                        "(its fields would be lost); compose it instead")
    specs = _collect(cls, kw_only)
    positional_defaults = [spec for spec in specs if spec.init and not spec.kw_only]
    for before, after in zip(positional_defaults, positional_defaults[1:]):
        if (before.default is not MISSING or before.default_factory is not MISSING) and \
                after.default is MISSING and after.default_factory is MISSING:
            raise TypeError(f"non-default argument {after.name!r} follows default argument")
    namespace = dict(cls.__dict__)
    own = {name for name in ("__eq__", "__hash__", "__repr__") if name in namespace}
    classes: list | None = [] if slots and "__init__" not in namespace else None  # a class's own __init__ is kept
    methods: dict[str, Any] = {"__setattr__": _frozen_setattr,
                               "__delattr__": _frozen_delattr,
                               "__match_args__": tuple(s.name for s in specs if s.init and not s.kw_only),
                               "__value_fields__": specs, "__dataclass_fields__": _StandardFields()}
    if "__init__" not in namespace:
        methods["__init__"] = _make_init(cls, specs, classes)
    for name, method in _shared_methods(specs).items():
        if name not in own:
            method.__qualname__ = f"{cls.__qualname__}.{name}"
            methods[name] = method
    if not namespace.get("__doc__"):
        methods["__doc__"] = f"{cls.__name__}({', '.join(spec.name for spec in specs)})"
    if slots:
        methods |= {"__getstate__": _getstate, "__setstate__": _setstate}
    for name in ("__setattr__", "__delattr__"):  # as @dataclass(frozen=True) refuses
        if name in namespace:
            raise TypeError(f"cannot overwrite attribute {name} in class {cls.__name__}")
    for name in ("__init__", "__match_args__", "__getstate__", "__setstate__"):  # a class's own is kept
        if name in namespace:
            methods.pop(name, None)
    if slots:
        for spec in specs:
            namespace.pop(spec.name, None)
        namespace.pop("__dict__", None)
        namespace.pop("__weakref__", None)
        namespace["__slots__"] = tuple(spec.name for spec in specs)
        namespace |= methods
        made = type(cls)(cls.__name__, cls.__bases__, namespace)
        made.__qualname__ = cls.__qualname__
        if classes is not None:
            classes[:] = [made, None, 0]
    else:  # as @dataclass leaves the class: a plain default as the class attribute, no Field objects
        for spec in specs:
            if spec.name in cls.__dict__:
                delattr(cls, spec.name)
            if spec.default is not MISSING:
                setattr(cls, spec.name, spec.default)
        for name, value in methods.items():
            setattr(cls, name, value)
        made = cls
    return made


def frozen(cls: type[T] | None = None, /, *, kw_only: bool = False, slots: bool = True) -> Any:
    """``@dataclass(frozen=True, slots=slots, kw_only=kw_only)`` with the shared comparison,
    hash and repr of the module docstring. Use as ``@frozen`` or ``@frozen(kw_only=True)``."""

    def wrap(klass: type[T]) -> type[T]:
        return _build(klass, kw_only, slots)

    return wrap if cls is None else wrap(cls)


def fields(class_or_instance: Any) -> tuple[Field, ...]:
    """The fields of a value class (or of an instance), in order (``dataclasses.fields``)."""
    specs = getattr(class_or_instance, "__value_fields__", None)
    if specs is None:
        import dataclasses

        return dataclasses.fields(class_or_instance)
    return specs


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of ``obj`` with ``changes`` (``dataclasses.replace``: through ``__init__``)."""
    specs = getattr(type(obj), "__value_fields__", None)
    if specs is None:
        import dataclasses

        return dataclasses.replace(obj, **changes)
    for spec in specs:
        if not spec.init:
            if spec.name in changes:
                raise ValueError(f"field {spec.name} is declared with init=False, it cannot be specified with replace()")
            continue
        if spec.name not in changes:
            changes[spec.name] = getattr(obj, spec.name)
    return obj.__class__(**changes)


_ATOMIC = (int, float, str, bool, type(None))  # what copy.deepcopy returns as is


def asdict(obj: Any) -> dict[str, Any]:
    """``dataclasses.asdict(obj)``: the fields as a dict, recursing into value classes, lists,
    tuples and dicts, and deep-copying anything else (the same rules, in the same order)."""
    if getattr(type(obj), "__value_fields__", None) is None:
        import dataclasses

        return dataclasses.asdict(obj)
    return _asdict_inner(obj)


def _asdict_inner(obj: Any) -> Any:
    kind = type(obj)
    if kind in _ATOMIC:
        return obj
    specs = getattr(kind, "__value_fields__", None)
    if specs is not None:
        return {spec.name: _asdict_inner(getattr(obj, spec.name)) for spec in specs}
    if hasattr(kind, "__dataclass_fields__"):  # another library's dataclass
        import dataclasses

        return dataclasses.asdict(obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a named tuple
        return kind(*[_asdict_inner(value) for value in obj])
    if isinstance(obj, (list, tuple)):
        return kind(_asdict_inner(value) for value in obj)
    if isinstance(obj, dict):
        return kind((_asdict_inner(key), _asdict_inner(value)) for key, value in obj.items())
    import copy

    return copy.deepcopy(obj)


class ReadOnlyDict(dict):
    """A dict a frozen value holds: read as any dict (json, ``asdict``, ``==``, ``.get``), never
    changed in place. A frozen Gpu handed out its bundled, cached ``peak_flops`` dict, so one
    caller's ``gpu.peak_flops["bf16"] = 1.0`` changed every later answer in the process (review,
    2026-11-29); a changed value is built with :func:`replace` instead.

        >>> peaks = ReadOnlyDict(bf16=989e12)
        >>> peaks["bf16"], dict(peaks) == peaks
        (989000000000000.0, True)
        >>> try:
        ...     peaks["bf16"] = 1.0
        ... except TypeError as error:
        ...     print(error)
        ReadOnlyDict is read-only: build a changed value with dpbase.values.replace
    """

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(f"{type(self).__name__} is read-only: build a changed value with dpbase.values.replace")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __hash__(self) -> int:  # a frozen value holding one hashes (a Prediction, a System: API review)
        return hash(frozenset(self.items()))

    def __reduce__(self) -> tuple:
        return type(self), (dict(self),)

    def __copy__(self) -> ReadOnlyDict:
        return self

    def __deepcopy__(self, memo: dict) -> ReadOnlyDict:
        return self
