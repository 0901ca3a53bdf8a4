"""NCCL-faithful mode: NCCL's tuning model (2.30.7 constants as data) and its choice per call.

    >>> from costmodel.nccl import NcclGraph, NcclTopology, nccl_time
    >>> g = NcclGraph(n_channels=12, bw_intra_GBps=20.0, bw_inter_GBps=20.0)
    >>> topo = NcclTopology(n_ranks=8, n_nodes=1, compute_capability=80, ring=g, tree=g)
    >>> nccl_time("all-reduce", 1024, topo).algorithm
    'ring'

Modules: ``tables`` (constants + overrides), ``topology`` (NcclTopology), ``search``
(System -> NcclTopology), ``tuning`` and ``latency`` (ncclTopoTuneModel), ``selection``
(the argmin), ``terms`` (a cell's time as a function of the size: ncclTopoGetAlgoTime and the
nccl-tests layer, for one call or a whole table), ``model`` (predictions: one call, or every
layout × size at once), ``hostmem``
(what the SHM transport through host memory sustains), ``rccl`` (RCCL 2.21.5's own tuning model
and choice, its constants as data).
"""

from costmodel.nccl.model import NcclPrediction, cost_table, nccl_table_s, nccl_time
from costmodel.nccl.names import ALGORITHMS, COLLECTIVES, PROTOCOLS
from costmodel.nccl.search import topology_for
from costmodel.nccl.tables import NcclTables, known_versions, load_tables
from costmodel.nccl.topology import HostMemoryPath, NcclGraph, NcclTopology
from costmodel.nccl.tuning import CostCell

__all__ = [
    "ALGORITHMS", "COLLECTIVES", "CostCell", "HostMemoryPath", "NcclGraph", "NcclPrediction", "NcclTables",
    "NcclTopology", "PROTOCOLS", "cost_table", "known_versions", "load_tables", "nccl_table_s", "nccl_time",
    "topology_for",
]
