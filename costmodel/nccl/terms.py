"""One NCCL cell's time as a function of the message size: for one call, or for a whole table.

Everything size-dependent in NCCL mode is a few arithmetic operations on terms that depend only
on the (algorithm, protocol) cell and the communicator:

* NCCL's own estimate (``ncclTopoGetAlgoTime``, reference §1.4): the cell's latency × the
  multi-node Ring/Simple plateau factor, plus the bytes over its bandwidth × the tree correction
  ``treeCorrectionFactor[proto][log2(nBytes >> 6)]`` — :func:`estimate_us`;
* the time nccl-tests reports for that cell: a launch floor, the scaled latency, the bytes over
  the bandwidth × the measured efficiency of the bottleneck link class, and a store-and-forward
  term — :func:`measured_us`.

:class:`CellTerms` holds the size-independent terms (built once per communicator by
:func:`cell_terms`). With Python floats in them the two functions answer one call (the CLI path
imports no numpy); with numpy columns — one row per (communicator, cell) — they answer every
size of a planner's table in one pass (:func:`costmodel.nccl.model.nccl_table_s`). The same
operations in the same order, so the same floats.
"""

from __future__ import annotations

import math
import operator
from itertools import chain
from typing import Any

from costmodel.nccl import hostmem
from costmodel.nccl.names import n_steps
from costmodel.nccl.tables import NcclTables
from costmodel.nccl.topology import NcclTopology
from costmodel.nccl.tuning import CostCell, alg_bw_GBps, graph_for
from dpbase import elementwise as ew
from dpbase.lazynp import is_scalar, np
from dpbase.values import fields, frozen

# Above 2^53 bytes a float no longer holds every integer; such sizes take the exact integer path.
_EXACT_FLOAT_BYTES = float(2**53)
_TINY_GBps = 1e-300  # keeps a division defined where a cell moves nothing (its term is then 0)


@frozen(kw_only=True)
class CellTerms:
    """A cell's size-independent terms on one communicator (floats), or many cells' (numpy
    columns, one row each). ``tree_factors``: the correction row (None: no correction); in
    columns, a matrix padded with 1."""

    latency_us: Any
    algbw_GBps: Any
    tree_factors: Any
    plateau_min_bytes: Any  # per channel and rank; inf: no plateau rule
    plateau_factor: Any
    plateau_divisor: Any  # the communicator's channels × ranks
    pair_factor: Any  # 2 for a 2-rank tree (no inner rank forwards twice), else 1
    link_factor: Any  # nccl-tests' rate per unit of NCCL's graph speed (link_factor)
    uncapped_GBps: Any  # the cell's bandwidth without LL's communicator-wide cap
    graph_channels: Any
    step_divisor: Any  # bytes of one step = size / this
    n_steps: Any


_NUMBER_FIELDS = tuple(field.name for field in fields(CellTerms) if field.name != "tree_factors")
_numbers = operator.attrgetter(*_NUMBER_FIELDS)  # a cell's number fields as one tuple


def tree_factors(cell: CostCell, topo: NcclTopology, t: NcclTables) -> tuple[float, ...] | None:
    """The ``treeCorrectionFactor`` row a cell's bandwidth is scaled by: Tree's first 23 bins
    (ncclTopoGetAlgoTime: ``logSize < 23``, up to 512 MiB), and NVLSTree's 24 on Blackwell with
    an x86 CPU; None for every other cell (1 beyond the row)."""
    blackwell_x86 = (topo.arch == "blackwell" and topo.cpu_vendor in ("intel", "amd")
                     and t.refinement("nvls_tree_correction"))
    if cell.algorithm == "tree":
        return t.tree_correction(cell.protocol)[:int(t.refinement("tree_correction_bins"))]
    if cell.algorithm == "nvls_tree" and blackwell_x86:
        return t.tree_correction(cell.protocol)[:int(t.refinement("nvls_tree_correction_bins"))]
    return None


def plateau_rule(collective: str, cell: CostCell, topo: NcclTopology, t: NcclTables) -> tuple[float, float] | None:
    """(smallest bytes per channel and rank that plateau, latency factor) of the multi-node
    Ring/Simple all-reduce; None for every other cell."""
    if not (cell.algorithm == "ring" and cell.protocol == "Simple" and collective == "all-reduce") or topo.n_nodes == 1:
        return None
    r = t.refinement
    factor = r("ring_plateau_latency_factor_sm80") if topo.compute_capability >= 80 else r(
        "ring_plateau_latency_factor_older")
    return r("ring_plateau_min_bytes_per_channel_rank"), factor


def comm_channels(topo: NcclTopology, t: NcclTables) -> int:
    """``comm->nChannels``, what the plateau rule divides by (connect.cc): the ring graph's channels
    doubled up to MAXCHANNELS; with CollNet, half as many again where the chain graph's bwIntra
    exceeds its bwInter (several GPUs a node); on sm90+ across nodes, doubled again below 16 where
    the ring's bwIntra exceeds 45 GB/s."""
    r = t.refinement
    most = int(r("comm_channels_max"))
    channels = min(most, 2 * topo.ring.n_channels)
    # CollNet: connect.cc compares the chain graph's speeds, a tree-pattern search (the tree graph here)
    if topo.collnet is not None and topo.tree.bw_intra_GBps > topo.tree.bw_inter_GBps and topo.ppn > 1:
        channels = min(most, channels + channels // 2)
    if (topo.compute_capability >= 90 and topo.n_nodes > 1 and channels < r("comm_channels_hopper_net_min")
            and topo.ring.bw_intra_GBps > r("comm_channels_hopper_net_bw_intra_GBps")):
        channels = 2 * channels
    return channels


def link_class(topo: NcclTopology) -> str:
    """The bottleneck link class for the efficiency: net across nodes, else the intra path."""
    if topo.n_nodes > 1:
        return "net"
    return "nvlink" if topo.intra_path == "NVLINK" else "pci"


def nvls_one_node_gain(collective: str, cell: CostCell, topo: NcclTopology, t: NcclTables) -> float:
    """How much faster NVLS runs on one node than NCCL's model says: its bwInter there is a
    product of the search's pass 2 (raised up the ladder to at most twice bwIntra; nothing on one
    node carries it), so what the multicast kernels move is the intra term alone: the cell's
    algorithm bandwidth without the graph's bwInter over it with (every other cap kept). 1
    elsewhere, and wherever the intra term binds anyway (a full H100 node: 40 × 0.85 × 7/8 × 2 =
    59.5 against bwInter 60). B200 and a GB200/GB300 rack of 8 GPUs (bwIntra 80, bwInter 90)
    measure 830-840 GB/s busbw, not the model's 697 (NVIDIA/nccl#1807; OCI GB300 2 trays,
    tests/data/validation). NCCL's legacy formula (2.27.5, 2.21.5 here) takes min(bwIntra,
    bwInter) raw, and pass 2 never leaves bwInter below bwIntra: 1 there too, because the cap does
    not bind (not by exemption)."""
    if cell.algorithm != "nvls" or topo.n_nodes != 1:
        return 1.0
    capped = alg_bw_GBps(collective, cell.algorithm, cell.protocol, topo, t)
    return alg_bw_GBps(collective, cell.algorithm, cell.protocol, topo, t, inter_cap=False) / capped if capped > 0 else 1.0


def link_factor(collective: str, cell: CostCell, topo: NcclTopology, t: NcclTables) -> float:
    """What nccl-tests achieves per unit of NCCL's graph speed on this cell's links.

    Through host memory (SHM) the links' own rate replaces NCCL's graph speed
    (:mod:`costmodel.nccl.hostmem`); elsewhere NCCL's graph is the hardware's rate, scaled by the
    measured efficiency of the bottleneck link class. Across nodes that is the network, and on a
    PCIe node also the node's own GPU links: every channel still runs GPU to GPU inside each node
    over the same PCIe (or host-memory) path at the same per-channel speed, so the ring never
    beats what one node's GPUs carry (:func:`_pci_intra_factor`). Over NVLink the channels are
    the NICs' and NVLink carries them with room to spare.
    """
    m = t.section("nccl_tests")
    if topo.n_nodes > 1:  # the network: RDMA's fitted efficiency or the transport's own, on the fabric's share
        rate = topo.net_efficiency if topo.net_efficiency is not None else m[f"efficiency_{link_class(topo)}"]
        if topo.intra_path == "PCI" and topo.ppn > 1:
            return min(rate * topo.net_share, _pci_intra_factor(collective, cell, topo, t))
        return rate * topo.net_share
    if topo.shm is None:  # NVLS on one node is not held to the search's bwInter (nvls_one_node_gain)
        return m[f"efficiency_{link_class(topo)}"] * nvls_one_node_gain(collective, cell, topo, t)
    return _pci_intra_factor(collective, cell, topo, t)


def _pci_intra_factor(collective: str, cell: CostCell, topo: NcclTopology, t: NcclTables) -> float:
    """What a PCIe node's own GPU links achieve per unit of the cell's graph speed: the P2P
    efficiency, or through host memory the links' rate (:mod:`costmodel.nccl.hostmem`) over the
    graph's channels × speed, at the SHM (or streaming) efficiency."""
    m = t.section("nccl_tests")
    if topo.shm is None:
        return m["efficiency_pci"]
    graph = graph_for(cell.algorithm, topo) or topo.ring
    scale = hostmem.bus_bw_GBps(collective, topo) / (graph.n_channels * graph.bw_intra_GBps)
    efficiency = m["efficiency_shm"] if hostmem.duplex(collective, topo.n_ranks) else m["efficiency_pci"]
    return scale * efficiency


def cell_terms(collective: str, cell: CostCell, topo: NcclTopology, t: NcclTables) -> CellTerms:
    """The terms of one applicable cell on one communicator (see the module docstring).

    Store-and-forward: each channel holds at most ``store_and_forward_bytes`` per step, and that
    chunk moves at one channel's own rate — the channels' bandwidth before LL's communicator-wide
    ``llMaxBw`` cap, divided by the channel count. With the total cap instead, a faster NIC (NCCL
    then searches more channels at the same per-channel speed) would lengthen the term.
    """
    rule = plateau_rule(collective, cell, topo, t)
    graph = graph_for(cell.algorithm, topo) or topo.ring
    rooted = collective in ("broadcast", "reduce")
    return CellTerms(
        latency_us=cell.latency_us, algbw_GBps=cell.algbw_GBps, tree_factors=tree_factors(cell, topo, t),
        plateau_min_bytes=math.inf if rule is None else rule[0], plateau_factor=1.0 if rule is None else rule[1],
        plateau_divisor=comm_channels(topo, t) * topo.n_ranks,
        pair_factor=2.0 if cell.algorithm == "tree" and topo.n_ranks == 2 else 1.0,
        link_factor=link_factor(collective, cell, topo, t),
        uncapped_GBps=_uncapped_GBps(collective, cell, topo, t),
        graph_channels=graph.n_channels, step_divisor=graph.n_channels * (1 if rooted else topo.n_ranks),
        n_steps=n_steps(collective, topo.n_ranks))


def _uncapped_GBps(collective: str, cell: CostCell, topo: NcclTopology, t: NcclTables) -> float:
    """The cell's bandwidth without LL's ``llMaxBw`` cap: the cell's own unless it is LL, the only
    protocol the cap applies to (:func:`costmodel.nccl.tuning.bus_bw_GBps`)."""
    if cell.protocol != "LL":
        return cell.algbw_GBps
    return alg_bw_GBps(collective, cell.algorithm, cell.protocol, topo, t, ll_cap=False)


def size_index(size_bytes):
    """``log2(nBytes >> 6)``, the correction tables' index (-1 below 64 bytes: no correction).
    Integer arithmetic (``bit_length``), exact where a float ``log2`` rounds up just below a
    power of two; RCCL's ``log2i`` is the same with 0 for 0 (:func:`costmodel.nccl.rccl.correction`).
    On arrays: the binary exponent (``frexp``) of ``floor(nBytes) / 64``, floored — the same
    integer below 2^53 bytes, element by element through the integer path above."""
    if is_scalar(size_bytes):
        return (int(size_bytes) >> 6).bit_length() - 1
    sizes = np.asarray(size_bytes, dtype=float)
    if sizes.size and sizes.max() >= _EXACT_FLOAT_BYTES:
        return np.array([size_index(float(x)) for x in sizes.ravel()], dtype=int).reshape(sizes.shape)
    shifted = np.floor(np.floor(sizes) / 64.0)
    return np.where(shifted > 0, np.frexp(shifted)[1] - 1, -1)


def corrected(factors, index):
    """The correction at ``index``: 1 outside the row or without one. A tuple and an int (one
    call), or a matrix of rows and a row of indices, shape 1 × sizes (a table: rows × sizes)."""
    if factors is None:
        return 1.0
    if is_scalar(index):
        return factors[index] if 0 <= index < len(factors) else 1.0
    inside = (index >= 0) & (index < factors.shape[-1])
    return np.where(inside, factors[:, np.where(inside, index, 0).reshape(-1)], 1.0)


_SQRT2 = math.sqrt(2.0)
_FIRST_CENTRE = 64.0 * _SQRT2  # the centre of bin 0, in bytes


def interpolated(factors, size_bytes):
    """The correction at ``size_bytes`` read as a curve: linear in the size between the centres
    of its power-of-two bins (bin ``i`` holds ``64·2^i`` to ``64·2^(i+1)`` bytes, its centre
    ``64·√2·2^i``), 1 outside the row. NCCL indexes its table by bin, which makes its estimate
    jump by up to a third at a power of two (ll128: 0.6 at 2-4 MiB, 0.8 above); the tables are
    fitted to measured times, which have no such step, so the nccl-tests time reads the same
    values as a continuous curve (equal to NCCL's at each bin's centre). Only arithmetic, the
    same for a call and a table, so the same floats."""
    if factors is None:
        return 1.0
    if is_scalar(size_bytes):  # one call: plain Python, the same operations as the table's below
        index = size_index(size_bytes / _SQRT2)  # the bin whose centre lies at or below the size
        share = min(max(size_bytes / math.ldexp(_FIRST_CENTRE, index) - 1.0, 0.0), 1.0)
        low = factors[index] if 0 <= index < len(factors) else 1.0
        high = factors[index + 1] if 0 <= index + 1 < len(factors) else 1.0
        return low * (1.0 - share) + high * share
    index = size_index(size_bytes / _SQRT2)
    share = np.minimum(np.maximum(size_bytes / np.ldexp(_FIRST_CENTRE, index) - 1.0, 0.0), 1.0)
    return corrected(factors, index) * (1.0 - share) + corrected(factors, index + 1) * share


def plateau(terms: CellTerms, size_bytes):
    """The latency factor at ``size_bytes``: the plateau factor once a channel's share of every
    rank reaches the rule's bytes, else 1."""
    return ew.where(ew.less(size_bytes / terms.plateau_divisor, terms.plateau_min_bytes), 1.0, terms.plateau_factor)


def estimate_us(terms: CellTerms, size_bytes, index):
    """NCCL's own estimate for a lone call (``latCount = 1``) at ``size_bytes`` (its ``index``)."""
    return (terms.latency_us * plateau(terms, size_bytes)
            + size_bytes / (1000.0 * (terms.algbw_GBps * corrected(terms.tree_factors, index))))


def measured_latency_us(terms: CellTerms, size_bytes, nccl_tests) -> Any:
    """The latency part of the nccl-tests time: NCCL's latency (with the plateau factor) as
    nccl-tests measures it (``hop_latency_scale``)."""
    return nccl_tests["hop_latency_scale"] * terms.latency_us * plateau(terms, size_bytes)


def measured_us(terms: CellTerms, size_bytes, nccl_tests) -> Any:
    """The nccl-tests time: launch + scaled latency + bytes / (efficiency × bandwidth) + store
    and forward (``nccl_tests``: the tables' ``[nccl_tests]`` section). The tree correction is
    read as a curve (:func:`interpolated`), not by bin as :func:`estimate_us` reads it."""
    correction = interpolated(terms.tree_factors, size_bytes)
    bw_GBps = terms.algbw_GBps * correction * terms.pair_factor * terms.link_factor
    channel_GBps = terms.uncapped_GBps * correction * terms.pair_factor * terms.link_factor / terms.graph_channels
    held_bytes = ew.minimum(size_bytes / terms.step_divisor, nccl_tests["store_and_forward_bytes"])
    moves = ew.greater(held_bytes, 0.0) & ew.greater(channel_GBps, 0.0)
    forward = ew.where(moves, terms.n_steps * held_bytes / (1000.0 * ew.maximum(channel_GBps, _TINY_GBps)), 0.0)
    return (nccl_tests["launch_overhead_us"] + measured_latency_us(terms, size_bytes, nccl_tests)
            + size_bytes / (1000.0 * bw_GBps) + forward)


def stack(rows: list[CellTerms]) -> CellTerms:
    """Many cells' terms as numpy columns (shape rows × 1), tree rows padded with 1."""
    names = _NUMBER_FIELDS
    table = np.fromiter(chain.from_iterable(map(_numbers, rows)), dtype=float,
                        count=len(rows) * len(names)).reshape(len(rows), len(names)).T  # one row per field
    columns = {name: column.reshape(-1, 1) for name, column in zip(names, table)}
    width = max((len(r.tree_factors) for r in rows if r.tree_factors is not None), default=0)
    matrix = None
    if width:
        matrix = np.ones((len(rows), width))
        for i, r in enumerate(rows):
            if r.tree_factors is not None:
                matrix[i, :len(r.tree_factors)] = r.tree_factors
    return CellTerms(**columns, tree_factors=matrix)
