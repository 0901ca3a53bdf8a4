"""Elementwise choices written once for Python scalars and numpy arrays alike.

The step model's formulas serve both the scalar API (one configuration) and the planner's
sweep (arrays over every configuration). ``np.where``/``np.maximum`` on scalars cost
microseconds each; these take a plain-Python path when every operand is a scalar, so one
formula stays the single source of truth without making a single answer slow.
"""

from __future__ import annotations

import numpy as np

_SCALARS = (bool, int, float, np.bool_, np.integer, np.floating)


def where(condition, yes, no):
    """``np.where(condition, yes, no)``; a conditional when ``condition`` is a scalar."""
    if isinstance(condition, _SCALARS):
        return yes if condition else no
    return np.where(condition, yes, no)


def maximum(a, b):
    """``np.maximum(a, b)``; ``max`` when both are scalars (NaN propagates as in numpy)."""
    if isinstance(a, _SCALARS) and isinstance(b, _SCALARS):
        if a != a or b != b:
            return float("nan")
        return a if a >= b else b
    return np.maximum(a, b)


def greater(a, b):
    """``a > b`` elementwise (an array for array-likes, a bool for scalars)."""
    if isinstance(a, _SCALARS):
        return a > b
    return np.asarray(a) > b
