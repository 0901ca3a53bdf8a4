"""Elementwise choices written once for Python scalars and numpy arrays alike.

The step model's formulas and NCCL mode's size-dependent terms serve both the scalar API (one
configuration, one call) and the planner (arrays over every configuration, every size). ``np.where``/``np.maximum`` on scalars cost
microseconds each; these take a plain-Python path when every operand is a scalar, so one
formula stays the single source of truth without making a single answer slow.
"""

from __future__ import annotations

import math

from dpbase.lazynp import SCALAR_TYPES, is_scalar, np

# ``type(x) in SCALAR_TYPES`` first: a Python float/int/bool is the scalar path's common case,
# and the test inline costs a fraction of the call to :func:`is_scalar` (one configuration at a
# time evaluates ~400 of these helpers).


def where(condition, yes, no):
    """``np.where(condition, yes, no)``; a conditional when ``condition`` is a scalar."""
    if type(condition) in SCALAR_TYPES or is_scalar(condition):
        return yes if condition else no
    return np.where(condition, yes, no)


def maximum(a, b):
    """``np.maximum(a, b)``; ``max`` when both are scalars (NaN propagates as in numpy)."""
    if (type(a) in SCALAR_TYPES or is_scalar(a)) and (type(b) in SCALAR_TYPES or is_scalar(b)):
        if a != a or b != b:
            return float("nan")
        return a if a >= b else b
    return np.maximum(a, b)


def greater(a, b):
    """``a > b`` elementwise (an array for array-likes, a bool for scalars)."""
    if type(a) in SCALAR_TYPES or is_scalar(a):
        return a > b
    return np.asarray(a) > b


def less(a, b):
    """``a < b`` elementwise (an array for array-likes, a bool for scalars)."""
    if type(a) in SCALAR_TYPES or is_scalar(a):
        return a < b
    return np.asarray(a) < b


def minimum(a, b):
    """``np.minimum(a, b)``; ``min`` when both are scalars (NaN propagates as in numpy)."""
    if (type(a) in SCALAR_TYPES or is_scalar(a)) and (type(b) in SCALAR_TYPES or is_scalar(b)):
        if a != a or b != b:
            return float("nan")
        return a if a <= b else b
    return np.minimum(a, b)


def floor(a):
    """``np.floor(a)`` (a float for a scalar, as numpy gives)."""
    if type(a) in SCALAR_TYPES or is_scalar(a):
        return float(math.floor(a)) if math.isfinite(a) else float(a)
    return np.floor(a)


def as_float(a):
    """``np.asarray(a, dtype=float)``; ``float(a)`` for a scalar."""
    return float(a) if type(a) in SCALAR_TYPES or is_scalar(a) else np.asarray(a, dtype=float)


def ceil(a):
    """``np.ceil(a)`` (a float for a scalar, as numpy gives)."""
    if type(a) in SCALAR_TYPES or is_scalar(a):
        return float(math.ceil(a)) if math.isfinite(a) else float(a)
    return np.ceil(a)


def any_true(a) -> bool:
    """``np.any(a)``; plain truth for a scalar (numpy stays unloaded)."""
    return bool(a) if type(a) in SCALAR_TYPES or is_scalar(a) else bool(np.any(a))


def all_true(a) -> bool:
    """``np.all(a)``; plain truth for a scalar."""
    return bool(a) if type(a) in SCALAR_TYPES or is_scalar(a) else bool(np.all(a))


def sqrt(a):
    """``np.sqrt(a)``; ``math.sqrt`` for a scalar."""
    return math.sqrt(a) if type(a) in SCALAR_TYPES or is_scalar(a) else np.sqrt(a)


def operand(a):
    """``a`` itself when it is a scalar or an array, else (a list, a tuple) ``np.asarray(a)``:
    what an elementwise formula can compute on."""
    return a if type(a) in SCALAR_TYPES or is_scalar(a) or hasattr(a, "ndim") else np.asarray(a)
