"""A collective on a real cluster: mapping ranks onto nodes × GPUs and the one backend dispatch.

    mapping   nodes × GPUs → per-level α/β of each algorithm (ideal backend)
    backends  the one backend dispatch: ideal mapping or NCCL's model → Prediction
    comm      CommModel: the collective times the training step consumes
    query     one user query (text with units, names) → predictions, every backend
"""

from dpbase.lazy import lazy_exports

_EXPORTS = {
    "comm_model": "costmodel.cluster.comm",
    "layout": "costmodel.cluster.mapping",
    "predict_on_cluster": "costmodel.cluster.mapping",
    "Query": "costmodel.cluster.query",
    "run_query": "costmodel.cluster.query",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
