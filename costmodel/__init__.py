"""dpcost's cost model: symbolic α-β-γ formulas of collectives and what is built on them.

Nothing heavy is imported here: attributes load their module on first use, so a scalar
prediction never imports sympy or pandas.

>>> import costmodel
>>> costmodel.predict("all-reduce", "ring", ranks=8, size_bytes=4e9, alpha_s=0, bandwidth_Bps=1e9).time_s
7.0
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "Algorithm": "costmodel.names",
    "Coefficients": "costmodel.api",
    "DpcostError": "costmodel.errors",
    "Entry": "costmodel.registry",
    "Formula": "costmodel.symbolic",
    "InputError": "costmodel.errors",
    "Plan": "costmodel.planner",
    "Prediction": "costmodel.prediction",
    "Primitive": "costmodel.names",
    "Terms": "costmodel.registry",
    "algorithms_for": "costmodel.registry",
    "coefficients": "costmodel.api",
    "compare": "costmodel.api",
    "entries": "costmodel.registry",
    "evaluate_grid": "costmodel.evaluate",
    "formula": "costmodel.symbolic",
    "get": "costmodel.registry",
    "plan": "costmodel.planner",
    "predict": "costmodel.api",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'costmodel' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
