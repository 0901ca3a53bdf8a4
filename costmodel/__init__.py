"""dpcost's cost model: symbolic α-β-γ formulas of collectives and what is built on them.

Nothing heavy is imported here: attributes load their module on first use, so a scalar
prediction never imports sympy or pandas.

>>> import costmodel
>>> costmodel.predict("all-reduce", "ring", ranks=8, size_bytes=4e9, alpha_s=0, bandwidth_Bps=1e9).time_s
7.0
"""

from __future__ import annotations

from dpbase.lazy import lazy_exports

_EXPORTS = {
    "Algorithm": "costmodel.names",
    "Coefficients": "costmodel.collectives.api",
    "DpcostError": "dpbase.errors",
    "Entry": "costmodel.collectives.entry",
    "Formula": "costmodel.collectives.symbolic",
    "InputError": "dpbase.errors",
    "Plan": "costmodel.planner.recommend",
    "Prediction": "costmodel.collectives.prediction",
    "Primitive": "costmodel.names",
    "Query": "costmodel.cluster.query",
    "Terms": "costmodel.collectives.entry",
    "TrainingConfig": "costmodel.training.iteration",
    "algorithms_for": "costmodel.collectives.registry",
    "coefficients": "costmodel.collectives.api",
    "comm_model": "costmodel.cluster.comm",
    "compare": "costmodel.collectives.api",
    "cross_validate": "costmodel.calibrate.fit",
    "entries": "costmodel.collectives.registry",
    "evaluate_grid": "costmodel.collectives.evaluate",
    "fit_times": "costmodel.calibrate.fit",
    "formula": "costmodel.collectives.symbolic",
    "get": "costmodel.collectives.registry",
    "iteration_breakdown": "costmodel.training.iteration",
    "load_model": "costmodel.training.workloads",
    "measured_mfu": "costmodel.training.oncluster",
    "nccl_time": "costmodel.nccl.model",
    "parse_file": "costmodel.calibrate.parse",
    "plan": "costmodel.planner.recommend",
    "predict": "costmodel.cluster.api",
    "predict_on_cluster": "costmodel.cluster.mapping",
    "run_query": "costmodel.cluster.query",
    "run_schedule": "costmodel.collectives.api",
    "sweep": "costmodel.cluster.api",
    "iteration": "costmodel.training.oncluster",
    "topology_for": "costmodel.nccl.search",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
