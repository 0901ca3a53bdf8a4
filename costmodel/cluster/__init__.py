"""A collective on a real cluster: mapping ranks onto nodes × GPUs and the one backend dispatch.

    mapping  nodes × GPUs → per-level α/β (ideal backend) or NCCL's topology (nccl backend)
    query    one user query (text with units, names) → typed predictions, every backend
"""

from dpbase.lazy import lazy_exports

_EXPORTS = {
    "comm_model": "costmodel.cluster.mapping",
    "layout": "costmodel.cluster.mapping",
    "predict_on_cluster": "costmodel.cluster.mapping",
    "Query": "costmodel.cluster.query",
    "run_query": "costmodel.cluster.query",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
