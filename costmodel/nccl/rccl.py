"""RCCL's own tuning model: the (algorithm, protocol) RCCL picks per call, and its estimate.

RCCL keeps NCCL's formulas (``ncclTopoTuneModel`` / ``ncclTopoGetAlgoTime``) but, on AMD, swaps
NCCL's protocol factors and caps for one of six measured *tuning models* chosen by the node's
topology match: per-hardware latencies, bandwidth ratios per (algorithm, protocol) for two and
for more nodes, and per-size correction factors for tree and multi-node ring. The constants are
data (``costmodel/data/rccl_tuning.toml``, generated from the RCCL source by
``tools/rccl_tables.py``, commit named in the file). What this module does not know is RCCL's
graph search (channels × per-channel speed): the communicator's bus bandwidth is an input, the
way RCCL's own ``baseBw`` topology option sets it.

    >>> topo = RcclTopology(n_ranks=16, n_nodes=2, arch="gfx942", tuning=5, bus_bw_GBps=350.0)
    >>> c = choose("all-reduce", 8 * 2**20, topo)
    >>> c.algorithm, c.protocol, round(c.latency_us, 1)
    ('tree', 'Simple', 99.2)

RCCL's estimate is a ranking device, not a time: its correction factors go down to 0.1, so it
can overstate a time tenfold. dpcost uses it to choose; the time of the chosen algorithm comes
from the measured-efficiency model (:mod:`costmodel.cluster.backends`).
"""

from __future__ import annotations

import functools
import math
import os
from types import MappingProxyType
from typing import Any

from costmodel.nccl.names import n_steps, normalize_collective
from costmodel.nccl.terms import size_index
from dpbase.bundled import load_bundled
from dpbase.errors import InputError, NotApplicableError
from dpbase.values import frozen

RCCL_TABLES_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "data", "rccl_tuning.toml")
ALGORITHMS = ("tree", "ring")  # RCCL's index order: ties go to the first
PROTOCOLS = ("LL", "LL128", "Simple")
_PROTO_INDEX = {p: i for i, p in enumerate(PROTOCOLS)}
_TREE_COLLECTIVES = ("all-reduce",)  # tuning.cc: broadcast, reduce, all-gather, reduce-scatter run rings
_HW = {"xgmi": "nvlink", "nvlink": "nvlink", "pci": "pci"}  # RCCL types xGMI links LINK_NVL


@functools.cache
def rccl_tables() -> MappingProxyType:
    """The bundled RCCL constants (parsed once per process)."""
    return MappingProxyType(load_bundled(RCCL_TABLES_PATH))


@frozen
class RcclTopology:
    """What RCCL's tuning model reads of a communicator.

    ``bus_bw_GBps`` is RCCL's ``busBw`` before the model's ratios (``nChannels × bw`` of its
    graph, or the topology's ``baseBw``); ``intra`` is the link class inside a node.
    """

    n_ranks: int
    n_nodes: int
    arch: str
    tuning: int
    bus_bw_GBps: float
    intra: str = "xgmi"
    cpu_vendor: str = "amd"
    ll128: bool = False
    # graph->sameChannels: 1 when the node matched one of RCCL's topology models (search.cc sets
    # it before the match, which never clears it); 0 assumed otherwise: a searched graph starts at 1
    # and drops it when its first pass is not optimal (search.cc), which the model cannot tell
    same_channels: bool = False

    def __post_init__(self) -> None:
        if not (isinstance(self.n_ranks, int) and self.n_ranks >= 1):
            raise InputError("n_ranks", self.n_ranks, "an integer >= 1")
        if not (isinstance(self.n_nodes, int) and 1 <= self.n_nodes <= self.n_ranks):
            raise InputError("n_nodes", self.n_nodes, f"an integer from 1 to n_ranks ({self.n_ranks})")
        if str(self.tuning) not in rccl_tables()["models"]:
            raise InputError("tuning", self.tuning, f"one of RCCL's tuning models {sorted(rccl_tables()['models'])}")
        if not (math.isfinite(self.bus_bw_GBps) and self.bus_bw_GBps > 0):
            raise InputError("bus_bw_GBps", self.bus_bw_GBps, "a finite bandwidth > 0 GB/s")
        if self.intra not in _HW:
            raise InputError("intra", self.intra, sorted(_HW))

    @property
    def ppn(self) -> int:
        return self.n_ranks // self.n_nodes


@frozen
class RcclChoice:
    """RCCL's pick for one call: the cell's latency and algorithm bandwidth, and its estimate."""

    algorithm: str
    protocol: str
    latency_us: float
    algbw_GBps: float  # after the size's correction factor
    model_time_us: float
    rccl_version: str


# Bytes on the wire per byte of data (RCCL's device.h): an LL line (ncclLLFifoLine) of 16 bytes
# carries 8 of data and their flags; RCCL's LL128 line is 64 bytes (NCCL_LL128_LINESIZE, NCCL's is
# 128), 7 of its 8 words data (NCCL_LL128_DATAELEMS); Simple sends the data alone.
WIRE_FACTOR = {"LL": 2.0, "LL128": 64.0 / 56.0, "Simple": 1.0}


@frozen
class MscclSchedule:
    """The MSCCL schedule RCCL runs a call with instead of its tuning model's choice
    (``rccl_tuning.toml`` ``[msccl]``): its protocol, XML file and latency. ``latency_us`` is RCCL's
    own base latency of the protocol plus one intra-node hop latency of the topology's tuning
    model per phase (each phase sends on every link at once: one hop, not N − 1)."""

    protocol: str
    file: str
    latency_us: float
    rccl_version: str

    @property
    def wire_factor(self) -> float:
        """The bytes on the wire per byte of data of its protocol (:data:`WIRE_FACTOR`)."""
        return WIRE_FACTOR[self.protocol]


def msccl_enabled(topo: RcclTopology) -> bool:
    """Whether MSCCL's schedules can take calls on this topology (``[msccl]``: one node of 8 fully
    xGMI-connected gfx942 GPUs); which calls, :func:`msccl_schedule` says."""
    table = rccl_tables()["msccl"]
    return (topo.n_nodes == 1 and topo.n_ranks == table["ranks"] and topo.arch in table["arch"]
            and topo.intra == "xgmi")


def msccl_size_range() -> tuple[float, float]:
    """(smallest, largest) bytes an MSCCL schedule takes (``[msccl]``): the smallest count any
    schedule divides, and the largest ``max_bytes``; read from the table, not restated."""
    table = rccl_tables()["msccl"]
    rows = table["schedule"]
    smallest = min(max(row["min_bytes"], row["chunks_per_loop"] * table["element_bytes"]) for row in rows)
    return float(smallest), float(max(row["max_bytes"] for row in rows))


def msccl_schedule(collective: str, size_bytes: float, topo: RcclTopology) -> MscclSchedule | None:
    """The MSCCL schedule RCCL takes for this call (``[msccl]``: one node of 8 fully xGMI-connected
    gfx942 GPUs, an all-reduce whose element count the schedule divides, within its byte range),
    or None where RCCL's tuning model decides (:func:`choose`).

        >>> one_node = RcclTopology(n_ranks=8, n_nodes=1, arch="gfx942", tuning=5, bus_bw_GBps=300.0)
        >>> found = msccl_schedule("all-reduce", 8192, one_node)
        >>> found.protocol, found.latency_us, found.wire_factor
        ('LL', 13.6, 2.0)
        >>> msccl_schedule("all-reduce", 512, one_node) is None  # 128 floats: no schedule divides them
        True
    """
    table = rccl_tables()["msccl"]
    if not msccl_enabled(topo) or not size_bytes > 0:
        return None
    from costmodel.names import primitive_named

    # every primitive is asked (an all-to-all on one MI300X node was refused as NCCL's model's: audit 2026-11-30)
    if primitive_named(collective).value != table["collective"]:
        return None
    count, whole = divmod(size_bytes, table["element_bytes"])
    for row in table["schedule"]:
        if row["min_bytes"] <= size_bytes <= row["max_bytes"] and whole == 0 and count % row["chunks_per_loop"] == 0:
            p = _PROTO_INDEX[row["protocol"]]
            hop = _model(topo)["hw_latency_us"][_HW[topo.intra]]["ring"][p]
            latency = rccl_tables()["base_latency_us"]["ring"][p] + table["hops"] * hop
            return MscclSchedule(row["protocol"], row["file"], round(latency, 9),
                                 str(rccl_tables()["version"]))
    return None


def topology_rule(gpu: str, gpus_per_node: int, nics_per_node: int) -> dict[str, Any]:
    """RCCL's topology match for a node: tuning model, LL128, baseBw (model 0 when none matches)."""
    tables = rccl_tables()
    arch = tables["gpu_arch"].get(gpu.lower(), "")
    for rule in tables["topology"]:
        if rule["arch"] == arch and rule["gpus_per_node"] == gpus_per_node and nics_per_node in rule["nics_per_node"]:
            return {"arch": arch, "tuning": rule["tuning"], "ll128": rule.get("ll128", False),
                    "base_bw_GBps": rule.get("base_bw_GBps"), "models": rule["models"], "matched": True}
    return {"arch": arch, "tuning": 0, "ll128": False, "base_bw_GBps": None, "models": "none (default model 0)",
            "matched": False}


def _model(topo: RcclTopology) -> Any:
    return rccl_tables()["models"][str(topo.tuning)]


def _enabled(collective: str, algorithm: str, proto: str, topo: RcclTopology) -> bool:
    if topo.n_ranks < 2 or (algorithm == "tree" and collective not in _TREE_COLLECTIVES):
        return False
    single_node = topo.n_nodes == 1
    if algorithm == "tree" and proto == "Simple" and topo.arch.startswith("gfx94") and single_node:
        return False  # tuning.cc: Tree/Simple skipped on one gfx94 node
    if proto == "LL128" and not topo.ll128:
        return False  # LL128 only where the topology match enables it (MI250 models)
    return not (proto == "LL" and topo.arch.startswith("gfx12"))


def algbw_GBps(collective: str, algorithm: str, proto: str, topo: RcclTopology) -> float:
    """RCCL's algorithm bandwidth of a cell before the per-size correction (0 = not enabled)."""
    if not _enabled(collective, algorithm, proto, topo):
        return 0.0
    column = "two_nodes" if topo.n_nodes <= 2 else "more_nodes"
    bus = topo.bus_bw_GBps * _model(topo)["bw_ratio"][column][algorithm][_PROTO_INDEX[proto]]
    if (algorithm == "ring" and proto == "LL" and collective in ("broadcast", "reduce")
            and topo.arch.startswith("gfx94") and topo.n_nodes == 1):
        bus *= 1.65
    if algorithm == "ring":
        return bus * topo.n_ranks / n_steps(collective, topo.n_ranks)
    return bus * 0.5


def _net_overhead_us(topo: RcclTopology, proto: str) -> float:
    if topo.n_nodes == 1:
        return 0.0
    table = rccl_tables()["net_overhead_us"]
    overhead = float(table.get(topo.cpu_vendor, table["other"]))
    return 3.0 * overhead if proto == "Simple" else overhead


def latency_us(collective: str, algorithm: str, proto: str, topo: RcclTopology) -> float:
    """RCCL's latency of a cell (µs): base + per-step intra-node and network latencies.

    Rooted rings (broadcast, reduce) charge one hop latency in all where the channels are the
    same (``sameChannels = 1``: a node of one of RCCL's topology models), else one per step,
    Simple at the tree's hop latency (tuning.cc).
    """
    model, p = _model(topo), _PROTO_INDEX[proto]
    lat = rccl_tables()["base_latency_us"][algorithm][p]
    intra_hw = _HW[topo.intra]
    intra = model["hw_latency_us"][intra_hw][algorithm][p]
    inter = model["hw_latency_us"]["net"][algorithm][p]
    hw = intra_hw if topo.n_nodes == 1 else "net"
    steps = n_steps(collective, topo.n_ranks)
    if algorithm == "tree":
        return lat + 2 * ((topo.ppn - 1) * intra + int(math.log2(topo.n_nodes)) * inter)
    if collective in ("broadcast", "reduce"):
        if topo.same_channels:
            return lat + model["hw_latency_us"][hw]["ring"][p]
        hop = model["hw_latency_us"][hw]["tree" if proto == "Simple" else "ring"][p]
        return lat + steps * hop
    if collective == "all-reduce":
        inter_steps = 2 * topo.n_nodes if topo.n_nodes > 1 else 0
    else:
        inter_steps = topo.n_nodes - 1
    return lat + (steps - inter_steps) * max(intra, _net_overhead_us(topo, proto)) + inter_steps * inter


def correction(algorithm: str, proto: str, size_bytes: float, topo: RcclTopology) -> float:
    """``tree/ringCorrectionFactor[proto][log2i(nBytes >> 6)]`` (index capped at 26); rings only
    across nodes."""
    if algorithm == "ring" and topo.n_nodes == 1:
        return 1.0
    index = min(max(size_index(size_bytes), 0), 26)  # RCCL's log2i(0) is 0
    return _model(topo)[f"{algorithm}_correction"][proto.lower()][index]


def choose(collective: str, size_bytes: float, topo: RcclTopology, algorithm: str = "auto") -> RcclChoice:
    """RCCL's argmin over its enabled cells (ties to the first in index order), or the fastest
    protocol of a forced ``algorithm`` (``NCCL_ALGO``)."""
    coll = normalize_collective(collective)
    if not size_bytes >= 0:
        raise InputError("size_bytes", size_bytes, "a size >= 0 bytes")
    best: RcclChoice | None = None
    for algo in ALGORITHMS:
        if algorithm not in ("auto", algo):
            continue
        for proto in PROTOCOLS:
            bw = algbw_GBps(coll, algo, proto, topo)
            if bw <= 0:
                continue
            bw *= correction(algo, proto, size_bytes, topo)
            if bw <= 0:
                continue
            lat = latency_us(coll, algo, proto, topo)
            time_us = lat + size_bytes / (1000.0 * bw)
            if best is None or time_us < best.model_time_us:
                best = RcclChoice(algo, proto, lat, bw, time_us, str(rccl_tables()["version"]))
    if best is None:
        raise NotApplicableError("algorithm", algorithm, f"an algorithm RCCL's model enables for {coll} "
                                 f"on {topo.n_ranks} ranks (ring; tree for all-reduce)")
    return best


def cost_table(collective: str, topo: RcclTopology) -> list[Any]:
    """RCCL's (algorithm, protocol) cells for a collective, as ``NCCL_DEBUG_SUBSYS=TUNING`` prints
    them: latency and algorithm bandwidth before the per-size correction (0 = disabled)."""
    from costmodel.nccl.tuning import CostCell

    coll = normalize_collective(collective)
    cells = []
    for algo in ALGORITHMS:
        for proto in PROTOCOLS:
            bw = algbw_GBps(coll, algo, proto, topo)
            cells.append(CostCell(algo, proto, latency_us(coll, algo, proto, topo) if bw > 0 else 0.0, bw))
    return cells
