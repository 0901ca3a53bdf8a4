"""numpy on first use: one answer computed on Python floats never pays numpy's import (~50 ms).

The step model's formulas serve the scalar API (one configuration, Python floats) and the
planner's sweep (numpy arrays) alike. Modules on that path take ``np`` from here: attribute
access imports numpy the first time, so only code that really touches an array loads it.
A value cannot be an array unless numpy is already loaded, which :func:`is_array` uses.

    >>> import sys
    >>> is_array(1.0), is_scalar(2)
    (False, True)
"""

from __future__ import annotations

import sys
from typing import Any

_PYTHON_SCALARS = (bool, int, float)
SCALAR_TYPES = frozenset(_PYTHON_SCALARS)  # the common case, without isinstance's MRO walk


class _LazyNumpy:
    """A stand-in for the numpy module that imports it on the first attribute access. Each name
    it is asked for is kept in its own ``__dict__``, where later lookups find it without a call
    (the planner asks ~1,600 times a plan): a name replaced in numpy afterwards (a test's
    monkeypatch) is not seen through ``np``."""

    def __getattr__(self, name: str) -> Any:
        import numpy

        value = getattr(numpy, name)
        self.__dict__[name] = value
        return value


np: Any = _LazyNumpy()


def is_array(value: Any) -> bool:
    """Whether ``value`` is a numpy array (False, without importing numpy, when numpy is not loaded)."""
    if type(value) in SCALAR_TYPES:  # the scalar path's common case, decided without numpy
        return False
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.ndarray)


def is_scalar(value: Any) -> bool:
    """A Python or numpy scalar (bool, int, float, numpy.bool_/integer/floating)."""
    if type(value) in SCALAR_TYPES or isinstance(value, _PYTHON_SCALARS):
        return True
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, (numpy.bool_, numpy.integer, numpy.floating))
