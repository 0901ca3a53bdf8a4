"""dpbase.values.frozen: the same behaviour as @dataclass(frozen=True, slots=True), checked against it."""

from __future__ import annotations

import dataclasses
import math
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpbase.values import frozen

VALUES = st.one_of(st.floats(allow_nan=True), st.integers(), st.text(max_size=3), st.none(),
                   st.tuples(st.integers(), st.floats(allow_nan=False)))


def _both(body, kw_only: bool = False, slots: bool = True):
    """``body(decorate)``'s class through the standard library and through ``frozen``."""
    standard = body(lambda cls: dataclasses.dataclass(cls, frozen=True, slots=slots, kw_only=kw_only))
    return standard, body(frozen(kw_only=kw_only, slots=slots))


def _pair(kw_only: bool = True):
    """The same class body through the stdlib and through ``frozen``."""

    def body(decorate):
        @decorate
        class Value:
            """A value with every kind of field option."""

            a: object
            b: object = None
            hidden: object = dataclasses.field(default=0, repr=False)
            ignored: object = dataclasses.field(default=0, compare=False)
            hashed_only: object = dataclasses.field(default=0, compare=True, hash=False)

        return Value

    return _both(body, kw_only=kw_only)


@given(st.lists(VALUES, min_size=5, max_size=5), st.lists(VALUES, min_size=5, max_size=5))
def test_eq_hash_repr_match_the_standard_dataclass(left, right):
    standard, ours = _pair()
    names = ("a", "b", "hidden", "ignored", "hashed_only")
    s1, s2 = (standard(**dict(zip(names, v))) for v in (left, right))
    o1, o2 = (ours(**dict(zip(names, v))) for v in (left, right))
    assert (o1 == o2) == (s1 == s2)
    assert (o1 != o2) == (s1 != s2)
    assert repr(o1).replace("_pair.<locals>.body.<locals>.", "") == \
        repr(s1).replace("_pair.<locals>.body.<locals>.", "")
    try:
        expected = hash(s1)
    except TypeError:  # an unhashable field value: both refuse
        with pytest.raises(TypeError):
            hash(o1)
    else:
        assert hash(o1) == expected


def test_nan_field_equals_itself_by_identity_as_in_a_tuple():
    _, ours = _pair()
    nan = math.nan
    assert ours(a=nan) == ours(a=nan)
    assert ours(a=float("nan")) != ours(a=float("nan"))


def test_other_classes_and_frozenness():
    standard, ours = _pair()
    value = ours(a=1)
    assert value != standard(a=1)  # another class: NotImplemented both ways, then identity
    assert value.__eq__(standard(a=1)) is NotImplemented
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.a = 2
    with pytest.raises(TypeError):
        ours(1)  # keyword-only
    assert dataclasses.replace(value, b=3) == ours(a=1, b=3)
    assert dataclasses.asdict(value)["a"] == 1
    assert not hasattr(value, "__dict__")  # slots


@frozen(kw_only=True)
class Pickled:
    x: float
    y: tuple = ()


def test_pickle_round_trip():
    value = Pickled(x=1.5, y=(1, 2))
    assert pickle.loads(pickle.dumps(value)) == value


def test_small_and_positional_classes_and_own_methods_kept():
    @frozen
    class One:
        x: int

    @frozen
    class Empty:
        pass

    @frozen(slots=False)
    class Shown:
        x: int

        def __repr__(self) -> str:
            return "mine"

    assert One(1) == One(1) and One(1) != One(2) and hash(One(1)) == hash((1,))
    assert repr(One(1)).endswith("One(x=1)")
    assert Empty() == Empty() and hash(Empty()) == hash(())
    assert repr(Shown(1)) == "mine" and Shown(1) == Shown(1)


def _nested_pair():
    @frozen(kw_only=True)
    class Inner:
        x: object
        tags: tuple = ()

    @dataclasses.dataclass(frozen=True)
    class Foreign:
        y: object

    @frozen
    class Outer:
        inner: object
        items: list = dataclasses.field(default_factory=list)
        table: dict = dataclasses.field(default_factory=dict)

    return Inner, Foreign, Outer


LEAVES = st.one_of(st.floats(allow_nan=False), st.integers(), st.text(max_size=3), st.none(), st.booleans())


@given(LEAVES, st.lists(LEAVES, max_size=3), st.dictionaries(st.text(max_size=2), LEAVES, max_size=3))
def test_asdict_replace_fields_are_the_standard_ones(leaf, items, table):
    from collections import namedtuple

    from dpbase.values import asdict, fields, replace

    Inner, Foreign, Outer = _nested_pair()
    pair = namedtuple("pair", "a b")
    value = Outer(Inner(x=leaf, tags=(pair(leaf, items), Foreign(y=[leaf]))), [Inner(x=items)] + items,
                  {"k": Inner(x=table), **table})
    assert asdict(value) == dataclasses.asdict(value)
    assert [f.name for f in fields(value)] == [f.name for f in dataclasses.fields(value)] == ["inner", "items", "table"]
    assert replace(value, items=[1]) == dataclasses.replace(value, items=[1])
    copied = asdict(value)
    copied["items"].append("changed")  # a copy, as dataclasses.asdict makes
    assert "changed" not in value.items


def test_defining_and_using_a_value_class_does_not_import_dataclasses():
    """dataclasses imports inspect and ast: a CLI answer does without (dpbase.values)."""
    import subprocess
    import sys

    code = ("import sys\nfrom dpbase.values import frozen, field, replace, fields\n"
            "@frozen(kw_only=True)\nclass P:\n    x: float\n    tags: dict = field(default_factory=dict)\n"
            "p = replace(P(x=1.0), x=2.0)\nassert p == P(x=2.0) and fields(p)[1].name == 'tags' and repr(p) == 'P(x=2.0, tags={})'\n"
            "print(' '.join(m for m in ('dataclasses', 'inspect', 'ast') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.strip() == "", result.stdout + result.stderr


def test_unslotted_class_attributes_are_the_dataclass_ones():
    def body(decorate):
        @decorate
        class Plain:
            a: int
            b: int = 2
            c: list = dataclasses.field(default_factory=list)
            d: int = dataclasses.field(default=4)

        return Plain

    standard, ours = _both(body, slots=False)
    for name in ("a", "b", "c", "d"):
        assert (name in vars(ours)) == (name in vars(standard)), name
        assert getattr(ours, name, None) == getattr(standard, name, None), name
    assert ours(1).__dict__ == {"a": 1, "b": 2, "c": [], "d": 4} == standard(1).__dict__
    assert ours.__match_args__ == standard.__match_args__


def test_class_variables_are_not_fields():
    from typing import ClassVar

    @frozen
    class Counted:
        x: int
        unit: ClassVar[str] = "B"

    assert [f.name for f in dataclasses.fields(Counted)] == ["x"] and Counted(3).unit == "B"
    assert Counted.__init__.__code__.co_varnames[:2] == ("self", "x")


def test_own_init_is_kept_and_own_setattr_refused_as_by_dataclass():
    for decorate in (lambda cls: dataclasses.dataclass(cls, frozen=True, slots=True), frozen):
        @decorate
        class Custom:
            x: int

            def __init__(self, text):
                object.__setattr__(self, "x", int(text))

        assert Custom("7").x == 7
        with pytest.raises(TypeError):
            @decorate
            class Mutable:
                x: int

                def __setattr__(self, name, value):
                    object.__setattr__(self, name, value)


def test_values_built_through_the_mutable_twin_are_the_standard_ones():
    """Past TWIN_AFTER values a class with TWIN_MIN_FIELDS or more fields stores them through its
    mutable twin: every value built before and after equals the standard dataclass's field by
    field, is exactly the class, stays frozen, gets its own default factory's object and sees
    itself frozen in ``__post_init__``; a subclass's values (another layout) keep their class."""
    from dpbase import values

    seen_in_post_init = []

    def body(decorate):
        @decorate
        class Wide:
            a: object
            b: object = 1
            c: list = dataclasses.field(default_factory=list)
            d: object = dataclasses.field(default=2, init=False)
            e: object = None

            def __post_init__(self):
                seen_in_post_init.append(type(self))

        return Wide

    standard, ours = _both(body, kw_only=True)
    assert len(dataclasses.fields(ours)) >= values.TWIN_MIN_FIELDS
    built = [ours(a=i, e=str(i)) for i in range(3 * values.TWIN_AFTER)]
    assert ours.__init__.__globals__["_classes"][1] is not None  # the twin exists and was used
    for i, value in enumerate(built):
        reference = standard(a=i, e=str(i))
        assert type(value) is ours
        assert [getattr(value, f.name) for f in dataclasses.fields(ours)] == \
            [getattr(reference, f.name) for f in dataclasses.fields(standard)]
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.a = 0
    assert built[0].c is not built[-1].c
    assert set(seen_in_post_init) == {ours, standard}  # never the twin

    class Wider(ours):
        __slots__ = ("extra",)

    wider = Wider(a=1)
    assert type(wider) is Wider and wider.c == [] and wider.d == 2
    reduced = built[-1].__reduce_ex__(2)  # what pickle stores: the class and the fields' state
    restored = ours.__new__(ours)
    restored.__setstate__(reduced[2])
    assert reduced[1][0] is ours and restored == built[-1] and type(restored) is ours


def test_a_failing_default_factory_leaves_no_mutable_twin_behind():
    """The twin path runs the default factories before it switches class: a factory that raises
    leaves the half-built value as the frozen class, as ``object.__setattr__`` would."""
    from dpbase import values

    calls = []

    def factory():
        calls.append(1)
        if len(calls) > values.TWIN_AFTER + 1:
            raise RuntimeError("no more")
        return []

    @frozen(kw_only=True)
    class Held:
        a: object
        b: list = dataclasses.field(default_factory=factory)
        c: object = None

    for i in range(values.TWIN_AFTER + 1):
        Held(a=i)
    assert Held.__init__.__globals__["_classes"][1] is not None  # the twin path is the one taken
    half = Held.__new__(Held)
    with pytest.raises(RuntimeError):
        half.__init__(a=1)
    assert type(half) is Held
    with pytest.raises(dataclasses.FrozenInstanceError):
        half.a = 5


def test_a_value_class_cannot_extend_another():
    """``dataclass`` would merge the base's fields; ``frozen`` reads the class body only, so it
    refuses rather than drop them silently."""
    @frozen
    class Base:
        x: int

    with pytest.raises(TypeError, match="cannot extend value class Base"):
        @frozen
        class Derived(Base):
            y: int
