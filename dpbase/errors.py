"""Errors raised by dpcost.

Library code raises these; only the CLI turns them into one line on stderr and exit code 2.

    DpcostError(Exception)            anything dpcost itself reports
    ├── InputError(DpcostError, ValueError)
    │     a user's value is not allowed: names the field, the value and what is allowed
    │     ├── UnknownNameError(InputError, KeyError)   unknown primitive/algorithm/profile/...
    │     └── UnitError(InputError)                    a size/time/bandwidth with a bad unit
    ├── ProfileError(InputError)      a hardware profile (TOML) is malformed or invalid
    ├── ParseError(InputError)        a nccl-tests log cannot be read (names the line)
    └── NotApplicableError(InputError)
          the algorithm does not implement the primitive, or the hardware lacks a feature
"""

from __future__ import annotations

from collections.abc import Iterable

MAX_SHOWN_CHARS = 200  # longest value an error message quotes in full
FILE_ALLOWED = "a file that can be read or written"  # what a path that cannot be opened is refused for


class DpcostError(Exception):
    """Base class of every error dpcost reports on purpose."""


class InputError(DpcostError, ValueError):
    """A user-supplied value is not allowed.

    >>> str(InputError("ranks", 0, "an integer >= 1"))
    'ranks: got 0; allowed: an integer >= 1'
    """

    def __init__(self, field: str, value: object, allowed: str) -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        shown = repr(value)
        if len(shown) > MAX_SHOWN_CHARS:  # a 300-digit number or a whole file row: keep the line readable
            shown = f"{shown[:MAX_SHOWN_CHARS // 2]}…({len(shown)} characters)"
        super().__init__(f"{field}: got {shown}; allowed: {allowed}")

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return self.args[0]


class UnknownNameError(InputError, KeyError):
    """A name (primitive, algorithm, profile, preset …) that dpcost does not know; where it is a
    known name spelt otherwise (case, dashes, spaces, dots), the line says which.

    >>> str(UnknownNameError("model", "ResNet50", ["resnet-50", "resnet-152"]))
    "model: got 'ResNet50'; allowed: one of resnet-152, resnet-50 (did you mean 'resnet-50'?)"
    >>> str(UnknownNameError("cluster", "dgx-h10", ["dgx-a100", "dgx-h100"]))  # one close typo
    "cluster: got 'dgx-h10'; allowed: one of dgx-a100, dgx-h100 (did you mean 'dgx-h100'?)"
    """

    def __init__(self, field: str, value: object, known: Iterable[str]) -> None:
        known = sorted(known)
        meant = [name for name in known if _squashed(name) == _squashed(value)]
        if not meant and isinstance(value, str) and value:  # a typo: dgx-h10 (an audit, 2026-11-30)
            import difflib

            squashed = {_squashed(name): name for name in known}
            close = difflib.get_close_matches(_squashed(value), list(squashed), n=2, cutoff=0.85)
            meant = [squashed[name] for name in close]  # two as close: no guess
        hint = f" (did you mean {meant[0]!r}?)" if len(meant) == 1 and meant[0] != value else ""
        super().__init__(field, value, f"one of {', '.join(known)}{hint}")


def _squashed(name: object) -> str:
    """A name without case and separators: "ResNet50", "resnet_50" and "resnet-50" alike."""
    return "".join(char for char in str(name).lower() if char.isalnum())


class UnitError(InputError):
    """A quantity whose number or unit cannot be read."""


class ProfileError(InputError):
    """A hardware profile file is malformed or fails validation."""


class ParseError(InputError):
    """A measurement log cannot be parsed; the message names the line."""


class NotApplicableError(InputError):
    """The algorithm does not implement the primitive, or the hardware lacks what it needs."""


def check_switch(field: str, value: object) -> bool:
    """``value`` as a switch: ``True`` or ``False`` (numpy's booleans too), else one
    :class:`InputError` naming ``field``. Text such as ``"no"`` is refused: read as Python's truth
    it would switch the option on.

    >>> check_switch("colocated", False)
    False
    >>> try:
    ...     check_switch("colocated", "no")
    ... except InputError as error:
    ...     print(error)
    colocated: got 'no'; allowed: True or False
    """
    if isinstance(value, bool):
        return value
    if type(value).__module__ == "numpy" and getattr(getattr(value, "dtype", None), "kind", "") == "b" \
            and getattr(value, "ndim", None) == 0:  # numpy's booleans, scalars or 0-d arrays
        return bool(value)
    raise InputError(field, value, "True or False")


def is_real(value: object) -> bool:
    """A real number: a Python int or float, or numpy's (a 0-d integer or float), never a bool.
    The ``numbers`` ABCs would answer the same, but importing them costs every answer's start-up."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    kind = getattr(getattr(value, "dtype", None), "kind", "")
    return type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0 and kind != "" and kind in "iuf"


def is_whole(value: object) -> bool:
    """A real number (:func:`is_real`) holding a whole value: 4, numpy's 4, 4.0; not 1.5, inf, NaN
    or a bool. What the training step and the planner take for a count given as a number (the
    collectives' ranks and parameters take integers alone: :func:`whole_count`)."""
    return is_real(value) and value == value and abs(value) != float("inf") and int(value) == value


def whole_count(field: str, value: object) -> int:
    """``value`` as a Python integer: a whole number (a numpy integer is one; 1.5, "2", True or
    None are not), else one InputError naming ``field``. Its range is checked where it is used."""
    import operator

    if value is not None and not isinstance(value, bool):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise InputError(field, value, "an integer >= 1, given as an int (2, not 2.0: the collectives' counts are "
                                   "integers; the training step and the planner also take 2.0)")
