"""One training step: workloads, memory, overlap with backward, gradient sync, stragglers, iteration."""

from dpbase.lazy import lazy_exports

_EXPORTS = {
    "TrainingConfig": "costmodel.training.iteration",
    "iteration_breakdown": "costmodel.training.iteration",
    "load_model": "costmodel.training.workloads",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
