"""Derive NCCL's graph-search result (channels, per-channel GB/s) from a hardware System.

A simplified ``ncclTopoCompute`` (reference ``nccl-model.md`` §2.5): NCCL's link constants give
each GPU a total bandwidth (NVLink links × per-link effective GB/s, or the PCIe width × speed,
or a NIC's Gb/s / 8); the search walks its speed ladder from the highest speed the best path
allows, keeps the speed × channels product that is largest, stops when it covers the GPU's
total or when the next speed is under 0.49× the one found, then duplicates channels
(``ncclTopoDupChannels``). NVLS takes one channel per GPU (across nodes, per NIC). Across
nodes a ring on PCIe is still bounded by the node's per-GPU total. On PCIe, NCCL uses peer-to-peer
only up to its P2P level (``ncclTopoCheckP2p``); farther pairs, or GPUs whose driver has no
P2P, go through host memory (SHM): the path then crosses the CPU, Intel host bridges are
charged ×6/5, and GPUs behind one PCIe switch share its uplink. The hardware is read only here.

    >>> from costmodel.nccl.tables import load_tables
    >>> ladder_search(240.0, 240.0, (40.0, 30.0, 20.0), 16, load_tables())
    (6, 40.0)
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

from costmodel.nccl.tables import P2P_LEVELS, NcclTables, load_tables, tables_or_default
from costmodel.nccl.topology import HostMemoryPath, NcclGraph, NcclTopology
from dpbase import elementwise as ew
from dpbase.errors import InputError, NotApplicableError, check_switch, whole_count
from dpbase.limits import MAX_RANKS
from hardware.profiles import TCP_CATEGORIES

if TYPE_CHECKING:
    from hardware import System

_NVLINK_FABRICS = ("nvswitch", "nvlink-mesh", "nvlink-bridge")
_EPSILON = 1e-9
# nvidia-smi's NODE (host bridges of one NUMA node) is one CPU node in NCCL's topology: PATH_PHB.
_NCCL_PATH = {"PIX": "PIX", "PXB": "PXB", "PHB": "PHB", "NODE": "PHB", "SYS": "SYS"}


def _sm_key(cc: int, keys: tuple[str, ...]) -> str:
    """The table column for a compute capability: sm100, sm90, sm86, sm80, sm70, sm60."""
    if cc == 86 and "sm86" in keys:
        return "sm86"
    for floor in (100, 90, 80, 70, 60):
        if cc >= floor and f"sm{floor}" in keys:
            return f"sm{floor}"
    return keys[-1]


def ladder(cc: int, kind: str, t: NcclTables) -> tuple[float, ...]:
    """Search speed ladder (GB/s per channel): ``kind`` is intra or inter."""
    generation = "sm100" if cc >= 100 else "sm90" if cc >= 90 else "sm80"
    return tuple(t.section("search_speeds_GBps")[f"{generation}_{kind}"])


def speeds_within(speeds: tuple[float, ...], path_GBps: float) -> tuple[float, ...]:
    """The ladder's speeds a path carries (the search starts at the path's bandwidth)."""
    return tuple(s for s in speeds if s <= path_GBps + _EPSILON)


def ladder_search(total_GBps: float, max_path_GBps: float, speeds: tuple[float, ...], max_channels: int,
                  t: NcclTables, per_link_GBps: float = math.inf, n_links: int = 0,
                  enough_GBps: float | None = None) -> tuple[int, float]:
    """Best (channels, speed): ``channels(s) = floor(total/s)``, or ``n_links × floor(link/s)``;
    the search stops once channels × speed reaches ``enough_GBps`` (NCCL's ``totalBw``, the GPU's
    own total; default ``total_GBps``)."""
    enough = total_GBps if enough_GBps is None else enough_GBps
    best = (0, 0.0)
    min_ratio = t.section("search_speeds_GBps")["next_speed_min_ratio"]
    for speed in speeds_within(speeds, max_path_GBps):
        if best[0] and speed / best[1] <= min_ratio:
            break
        channels = int(total_GBps / speed + _EPSILON)
        if n_links:
            channels = min(channels, n_links * int(per_link_GBps / speed + _EPSILON))
        channels = min(channels, max_channels)
        if channels and channels * speed > best[0] * best[1] + _EPSILON:
            best = (channels, speed)
        if best[0] * best[1] >= enough - _EPSILON:
            break
    if not best[0]:  # NCCL's fallback: one channel at its slowest speed, but no faster than the links
        carried = min(total_GBps, n_links * per_link_GBps if n_links else math.inf)
        best = (1, min(speeds[-1], carried) if carried > 0 else speeds[-1])
    return best


def dup_channels(channels: int, speed: float, cc: int, t: NcclTables) -> tuple[int, float]:
    """``ncclTopoDupChannels``: double the channels, up to the graph's maximum (``max_channels``),
    and divide the speed by ``ceil(new / old)``, when bw >= 25 (not sm>80, bw<50, >4 ch). A search
    already at the maximum keeps its channels and speed; one above half of it reaches the maximum
    at half its speed, from where NCCL's pass 2 ("increase bw for Ring", search.cc) climbs the
    ladder again for that channel count. dpcost has no ring pass 2: no bundled system reaches it
    (the search passes 16 channels only for one GPU, which has the maximum already)."""
    s = t.section("search_speeds_GBps")
    skip = cc > s["dup_skip_sm"] and speed < s["dup_skip_bw"] and channels > s["dup_skip_channels"]
    if speed < s["dup_min_bw"] or skip:
        return channels, speed
    doubled = min(2 * channels, int(s["max_channels"]))
    return doubled, speed / -(-doubled // channels)


def intra_gpu_bandwidth(system: System, t: NcclTables, ppn: int | None = None) -> tuple[str, float, float]:
    """(intra path, GPU total GB/s, best GPU-to-GPU path GB/s) in NCCL's link constants.

    ``ppn`` GPUs of a mesh node reach only the links among them (:meth:`System.intra_share`).
    """
    cc = system.gpu.compute_capability
    links = t.section("link_bandwidth_GBps")
    if system.intra_fabric in _NVLINK_FABRICS:
        per_link = links["nvlink_per_link"][_sm_key(cc, tuple(links["nvlink_per_link"]))]
        n_links = system.intra_links  # at least one: a profile below one link's rate is capped below
        share = system.intra_share(ppn or system.gpus_per_node)
        # NCCL counts links at its own per-link rate; the profile's bandwidth caps them (a user's
        # slower NVLink, or one below a single link's rate, is not sped up to NCCL's constant)
        physical = system.intra_bandwidth_Bps / 1e9 * share
        total = min(n_links * per_link * share, physical)
        if system.intra_fabric == "nvlink-mesh":
            peers = max(1, system.gpus_per_node - 1)
            return "NVLINK", total, min(max(1, n_links // peers) * per_link, total)
        return "NVLINK", total, total
    pci = gpu_pcie_GBps(system, t)
    return "PCI", pci, pci


def p2p_level(system: System, ppn: int, t: NcclTables, override: str | None = None) -> str:
    """NCCL's P2P level: ``override`` (NCCL_P2P_LEVEL), else SYS on AMD hosts with few GPUs, else PXB."""
    if override is not None:
        level = str(override).upper()
        if level not in P2P_LEVELS:
            raise InputError("p2p_level", override, f"one of {', '.join(P2P_LEVELS)} (NCCL_P2P_LEVEL)")
        return level
    rule = t.section("p2p_level")
    return rule["amd_few_gpus"] if system.cpu_vendor == "amd" and ppn <= rule["amd_few_gpus_max"] else rule["default"]


def uses_p2p(system: System, ppn: int, t: NcclTables, override: str | None = None) -> bool:
    """Whether NCCL connects the node's GPUs peer-to-peer (else through host memory, SHM)."""
    level = p2p_level(system, ppn, t, override)
    if system.intra_fabric in _NVLINK_FABRICS:
        if level == "LOC":  # NCCL would fall back to SHM while NVLS/CollNet stay on: not modelled
            raise NotApplicableError("p2p_level", override, "NVL or farther on an NVLink system "
                                     "(LOC, P2P off over NVLink, is not modelled)")
        return True
    return system.p2p and P2P_LEVELS.index(_NCCL_PATH[system.pcie_path]) <= P2P_LEVELS.index(level)


def pcie_ring_bandwidth_GBps(system: System, ppn: int, shm: bool, t: NcclTables) -> float:
    """Per-GPU ring bandwidth NCCL's search can place on PCIe (its ``followPath`` accounting).

    Each ring edge loads its GPUs' links once. Through host memory (``shm``) every edge also
    crosses the sender's switch uplink, which the GPUs behind it share; a path through an
    Intel host bridge (PHB) is charged ×6/5 (``INTEL_P2P_OVERHEAD``).
    """
    links = t.section("link_bandwidth_GBps")
    path = _NCCL_PATH[system.pcie_path]
    if shm and path != "SYS":
        path = "PHB"  # the pair is routed through the CPU
    overhead = links["intel_p2p_through_cpu_factor"] if system.cpu_vendor == "intel" and path == "PHB" else 1.0
    if shm:  # every edge goes through host memory over the GPU's host link (host_link_sharers)
        return host_link_GBps(system, t) / (host_link_sharers(system, ppn) * overhead)
    return gpu_pcie_GBps(system, t) / overhead


def pci_bandwidth_GBps(pcie_gen: int, t: NcclTables) -> float:
    """NCCL's PCIe bandwidth: width × speed / 80 (x16: Gen3 12, Gen4 24, Gen5 48 GB/s)."""
    table = t.section("link_bandwidth_GBps")
    lanes = t.section("graph_assumptions")["pcie_lanes"]
    known = sorted(int(key.removeprefix("gen")) for key in table["pci_x16"])
    gen = min(pcie_gen, known[-1])  # newer generations: the fastest speed code the table knows
    x16 = table["pci_x16"].get(f"gen{gen}", table["pci_default"])
    return x16 * lanes / 16


def pcie_profile_scale(system: System) -> float:
    """A PCIe node's GPU links at the profile's own bandwidth: its intra bandwidth over the nominal
    x16 rate of the GPU's PCIe generation (the bundled ``pcie<gen>`` link; 1 for every bundled
    profile). NCCL's rate for that generation is scaled by it, so a user's slower PCIe (or a
    what-if's faster one) moves the answer, as a profile's NVLink bandwidth caps NCCL's NVLink
    constant. Against the profile's own intra link it read a Gen3 link on a Gen5 GPU as 3x NCCL's
    Gen5 rate (review, 2026-11-29). Other fabrics, and a generation with no bundled link: 1."""
    if system.intra_fabric != "pcie":
        return 1.0
    nominal = _pcie_generation_Bps(system.gpu.pcie_gen)
    return system.intra_bandwidth_Bps / nominal if nominal else 1.0


@functools.cache
def _pcie_generation_Bps(generation: int) -> float:
    """The bundled ``pcie<generation>`` link's nominal x16 rate, 0 where none is bundled."""
    from hardware import load_link
    from hardware.loader import ProfileError

    try:
        return load_link(f"pcie{generation}").bandwidth_Bps
    except (ProfileError, KeyError, LookupError):
        return 0.0


def gpu_pcie_GBps(system: System, t: NcclTables) -> float:
    """A GPU's PCIe link in NCCL's units: its generation's x16 rate, at the profile's scale."""
    return pci_bandwidth_GBps(system.gpu.pcie_gen, t) * pcie_profile_scale(system)


def host_link_GBps(system: System, t: NcclTables) -> float:
    """One GPU's link to host memory per direction: its CPU-GPU link where that is not PCIe
    (``host_link_bandwidth``: Grace's NVLink-C2C), else its PCIe link (:func:`gpu_pcie_GBps`)."""
    c2c = system.gpu.host_link_bandwidth_Bps
    return c2c / 1e9 if c2c else gpu_pcie_GBps(system, t)


def host_link_sharers(system: System, ppn):
    """GPUs sharing one GPU's link to host memory when ``ppn`` of the node's GPUs copy at once: those
    behind its PCIe switch uplink (``pcie_switch_gpus``), none on NVLink-C2C (each GPU's own).
    Elementwise over ``ppn`` (the planner's layouts)."""
    return 1 if system.gpu.host_link_bandwidth_Bps else ew.minimum(system.pcie_switch_gpus, ppn)


def _nic_path_GBps(system: System, max_path_GBps: float, t: NcclTables) -> float:
    """A GPU's path to its NIC: the NIC, the GPU's PCIe link and its best intra path, whichever is
    slowest (the ring's and NVLS's searches across nodes start there)."""
    return min(system.nic_bandwidth_Bps / 1e9, gpu_pcie_GBps(system, t), max_path_GBps)


def _intra_paths(system: System, ppn: int, shm: bool, t: NcclTables) -> tuple[str, float, float]:
    """(path, GPU total, best GPU-to-GPU path) GB/s that the graphs' searches inside a node carry:
    :func:`intra_gpu_bandwidth`, on PCIe the ring's bandwidth through switches or host memory."""
    path, total, max_path = intra_gpu_bandwidth(system, t, ppn)
    if path == "PCI":
        total = max_path = pcie_ring_bandwidth_GBps(system, ppn, shm, t)
    return path, total, max_path


def _ring_graph(system: System, n_nodes: int, ppn: int, shm: bool, t: NcclTables) -> NcclGraph:
    """Ring graph after duplication."""
    cc = system.gpu.compute_capability
    search = t.section("search_speeds_GBps")
    path, total, max_path = _intra_paths(system, ppn, shm, t)
    if ppn == 1:
        total = max_path = t.section("link_bandwidth_GBps")["local"]
    if n_nodes == 1:
        channels, speed = ladder_search(total, max_path, ladder(cc, "intra", t), search["max_channels"], t)
    else:
        # Across nodes every channel runs NET -> GPU -> ... -> GPU -> NET (search.cc
        # ncclTopoSearchRecNet / ncclTopoSearchRecGpu): each NIC carries its channels once
        # (n_links x floor(nic / s)), and every channel still loads each GPU's intra-node path
        # (ncclTopoFollowPath). On PCIe (P2P or through host memory) a GPU's NIC traffic crosses
        # its own PCIe link too, so the node's per-GPU total bounds the ring as on one node
        # (NCCL stops at nChannels x bw >= totalBw, the GPU's PCIe rate). Over NVLink the NICs
        # bound it (n_links x floor(nic / s) below), and so does each GPU's NVLink total: a
        # channel leaves every GPU over NVLink but its last, which sends to its NIC over PCIe
        # (ncclTopoFollowPath charges the GPU -> NVSwitch link once per channel it carries). With a
        # NIC for each GPU every GPU is a channel's last in 1 of ppn channels, so its links carry
        # (ppn - 1) / ppn of them; with fewer NICs some GPU is never last and carries them all.
        # H100's 18 links then carry its 8 NICs' 8 channels at 48 GB/s (7 x 48 of 370.8) as
        # before; an H800's or A800's 8 links do not. Until 2026-11-30 the NVLink total was
        # raised to the NICs' aggregate here, so two H800 nodes ran a ring at 2.4x one node's.
        nic = system.nic_bandwidth_Bps / 1e9
        max_path = _nic_path_GBps(system, max_path, t)
        nics = system.nics_reached(ppn)
        enough = total  # NCCL stops at the GPU's own total (system->totalBw), not at what the NICs add
        if ppn == 1:
            total = enough = max(total, nics * nic)
        elif path == "NVLINK" and nics >= ppn:
            total = total * ppn / (ppn - 1)
        channels, speed = ladder_search(total, max_path, ladder(cc, "inter", t), search["max_channels"], t,
                                        per_link_GBps=nic, n_links=nics, enough_GBps=enough)
    dup_ch, dup_speed = dup_channels(channels, speed, cc, t)
    return NcclGraph(n_channels=dup_ch, bw_intra_GBps=dup_speed, bw_inter_GBps=dup_speed)


def tree_intra_speed(channels: int, inter_GBps: float, total_GBps: float, max_path_GBps: float, ppn: int,
                     speeds: tuple[float, ...]) -> float:
    """A tree graph's bwIntra across nodes after NCCL's pass 2 (search.cc ``ncclTopoCompute``,
    "increase bwIntra for trees (2 nodes or collnet)"): from the ring's speed, bwIntra climbs the
    ladder one step at a time while it is below ``2 · bwInter`` and the node still carries the same
    channels at the next speed: ``channels · s`` within the GPU's intra total, which NCCL raises by
    ``ppn / (ppn − 1)`` for every pattern but the ring ("algo other than RING do not need to close
    to the starting NET"), and ``s`` within the best GPU-to-GPU path. NCCL's tuning reads bwIntra
    for trees on up to two nodes, where a tree keeps every NIC busy both ways. NCCL checks the
    2 · bwInter bound before a step and may overshoot it by one (from bwInter 17.5 on Hopper's
    ladder NCCL ends at 40, here 30); a
    two-node tree moves each byte once each way through the NICs, so its channels cannot run
    faster than twice their NIC share: bwIntra stops at 2 · bwInter here (a user's slow NICs at
    the ladder's coarse bottom would otherwise go 0.24 → 1.2)."""
    intra = inter_GBps
    capacity = total_GBps * ppn / (ppn - 1)
    if not any(abs(s - inter_GBps) <= _EPSILON for s in speeds):
        return intra  # below NCCL's ladder (a user's slow link, dpcost's fallback): no pass 2 to follow
    for speed in sorted(s for s in speeds if s > intra + _EPSILON):
        if speed > 2 * inter_GBps + _EPSILON or channels * speed > capacity + _EPSILON \
                or speed > max_path_GBps + _EPSILON:
            break
        intra = speed
    return intra


def _tree_graph(system: System, n_nodes: int, ppn: int, shm: bool, ring: NcclGraph, t: NcclTables) -> NcclGraph:
    """The tree graph: NCCL searches it with the ring's channels (init.cc: min = max = the ring's),
    where pass 1 lands on the ring's speed; across nodes pass 2 then raises its bwIntra
    (:func:`tree_intra_speed`)."""
    intra = ring.bw_intra_GBps
    if n_nodes > 1 and ppn > 1:
        _, total, max_path = _intra_paths(system, ppn, shm, t)
        intra = tree_intra_speed(ring.n_channels, ring.bw_inter_GBps, total, max_path, ppn,
                                 ladder(system.gpu.compute_capability, "inter", t))
    # search.cc: a node of one GPU searches pattern TREE (not BALANCED_TREE), which tuning.cc derates
    return NcclGraph(n_channels=ring.n_channels, bw_intra_GBps=intra, bw_inter_GBps=ring.bw_inter_GBps,
                     pattern="tree" if ppn == 1 else "balanced_tree")


def nvls_speeds(total_GBps: float, heads: int, speeds: tuple[float, ...]) -> tuple[float, float] | None:
    """(bwIntra, bwInter) of NCCL's NVLS search (search.cc ncclTopoSearchTryNvls and pass 2), or
    None when no speed fits (NCCL then has no NVLS graph). Every channel pulls through the
    NVSwitch from every GPU, and its head GPU twice, so ``(heads + 1) · s`` must fit in one GPU's
    NVLink total: bwIntra is the fastest ladder speed that does. Pass 2 then raises bwInter up
    the ladder while it is below ``2 · bwIntra``. ``speeds``: the intra ladder on one node (nothing
    there carries bwInter); across nodes the inter ladder up to the GPU's NIC path, which then
    carries both. H100 × 8 (370.8 GB/s): 40 / 60 on one node, as NCCL's own dump shows, 40 / 48
    across nodes with 400G NICs; B200 (721.8 GB/s): 80 / 90 with 8 heads, 40 / 80 with 16."""
    intra = next((s for s in speeds if (heads + 1) * s <= total_GBps + _EPSILON), None)
    if intra is None:
        return None
    inter = intra
    for s in sorted(x for x in speeds if x > intra):
        if inter >= 2 * intra:
            break
        inter = s
    return intra, inter


def _nvls_graph(system: System, n_nodes: int, ppn: int, t: NcclTables) -> NcclGraph | None:
    """NVLS heads, one per GPU (at most NCCL_MAX_NVLS_ARITY), at :func:`nvls_speeds`: on one node
    on the intra ladder; across nodes on the inter ladder up to the GPU's path to its NIC (NCCL
    then searches only the NIC:GPU heads, at one speed for both).

    Across nodes a head is a NIC's local GPU, one channel per NIC: search.cc
    ``ncclTopoSearchRecNet`` adds an NVLS channel only while ``nChannels < netCount``, from a NIC's
    ``localGpu`` not yet a head. With one NIC per node the graph has one channel, and NCCL's
    tuning drops NVLS and NVLS-tree below two (tuning.cc ``ncclTopoTuneModel``: "NVLS/NVLStree
    needs at least 2 channels"; here :attr:`NcclTopology.nvls_capable`)."""
    has_nvls = system.in_network_reduction == "nvls" and system.intra_fabric == "nvswitch"
    if not has_nvls or system.gpu.compute_capability < 90 or ppn < 2:
        return None
    cc = system.gpu.compute_capability
    channels = min(ppn, t.section("search_speeds_GBps")["nvls_max_channels"])
    _, total, max_path = intra_gpu_bandwidth(system, t, ppn)
    if n_nodes == 1:
        speeds = ladder(cc, "intra", t)
    else:
        channels = min(channels, system.nics_reached(ppn))
        speeds = speeds_within(ladder(cc, "inter", t), _nic_path_GBps(system, max_path, t))
    found = nvls_speeds(total, channels, speeds)
    if found is None:
        return None
    return NcclGraph(n_channels=channels, bw_intra_GBps=found[0], bw_inter_GBps=found[1], pattern="nvls")


def _layout(system: System, nodes: int, gpus_per_node: int | None) -> tuple[int, int]:
    ppn = system.gpus_per_node if gpus_per_node is None else gpus_per_node
    if nodes < 1:
        raise InputError("nodes", nodes, "an integer >= 1")
    if not 1 <= ppn <= system.gpus_per_node:
        raise InputError("gpus_per_node", ppn, f"an integer from 1 to {system.gpus_per_node} ({system.name})")
    if nodes * ppn > MAX_RANKS:  # 8e9 ranks were answered here, where every other path stops at 2^30 (API audit)
        raise InputError("nodes", nodes, f"an integer from 1 to {MAX_RANKS // ppn} ({ppn} GPUs a node, at most "
                                         f"{MAX_RANKS} ranks)")
    if ppn == system.gpus_per_node:
        # NVLink domains (MNNVL): NCCL sees one node per domain (clique), System.nvlink_domains.
        # Until 2026-11-30 trays that did not split into equal whole domains fell back to every
        # tray a node of its own, its NICs alone: 37 or 40 trays took 4.4x 36 trays' time.
        return system.nvlink_domains(nodes)
    return nodes, ppn


def _host_memory_path(system: System, ppn: int, t: NcclTables) -> HostMemoryPath:
    return HostMemoryPath(link_GBps=host_link_GBps(system, t), gpus_per_uplink=host_link_sharers(system, ppn))


# Two properties of a network link, read apart. Its wire protocol: NCCL reaches TCP and Ethernet
# categories through its socket transport (kernel TCP, every byte copied by a CPU proxy thread) or
# a TCP-based plugin (GPUDirect-TCPXO), whose achieved fraction of line rate is the link
# profile's own efficiency (a property of the transport: hardware/data/links.toml, sourced there),
# not the RDMA efficiency fitted on IB/RoCE logs. Its data path (hardware.Link.gpu_direct_access):
# whether the NIC reaches GPU memory, which sets the network path NCCL sees (PXB or PHB). The
# wire protocol's categories are hardware.profiles.TCP_CATEGORIES, whatever the data path.


def _spine_share(system: System, n_nodes: int, ppn: int, ring: NcclGraph) -> float:
    """The share of the ring's network rate an oversubscribed spine carries (NCCL sees the NICs'
    line rate and cannot know the fabric): the NICs' rate over the spine's oversubscription
    against what the ring's channels push through them, at most 1 — a ring its node limits (PCIe,
    host memory) below the fabric's share is not slowed."""
    oversubscription = system.spine_oversubscription
    if n_nodes == 1 or oversubscription == 1.0:
        return 1.0
    carried = system.nics_reached(ppn) * system.nic_bandwidth_Bps / 1e9 / oversubscription
    pushed = ring.n_channels * ring.bw_inter_GBps
    return min(1.0, carried / pushed) if pushed > 0 else 1.0


def derive_topology(system: System, nodes: int = 1, gpus_per_node: int | None = None,
                    tables: NcclTables | None = None, *, collnet: bool = False,
                    p2p_level: str | None = None) -> NcclTopology:
    """NCCL's graph-search result for ``nodes`` × ``gpus_per_node`` GPUs of ``system``.

    ``p2p_level`` plays NCCL_P2P_LEVEL (LOC, NVL, PIX, PXB, PHB, SYS); None keeps NCCL's default.
    """
    t = tables or load_tables()
    if system.gpu.vendor.lower() != "nvidia":
        raise NotApplicableError("system", system.name, "an NVIDIA GPU system (sm60+) for NCCL's model; on AMD GPUs "
                                 "use --backend rccl (RCCL's tuning model) or auto")
    if system.gpu.compute_capability < 60:  # a K80 is NVIDIA but outside the model (sm60+): not an AMD GPU
        raise NotApplicableError("system", system.name, f"an NVIDIA GPU system of sm60 or later for NCCL's model "
                                 f"({system.gpu.name} is sm{system.gpu.compute_capability}: --backend ideal or "
                                 "auto times it)")
    n_nodes, ppn = _layout(system, nodes, gpus_per_node)
    path, _, _ = intra_gpu_bandwidth(system, t)
    shm = ppn > 1 and not uses_p2p(system, ppn, t, p2p_level)
    ring = _ring_graph(system, n_nodes, ppn, shm, t)
    tree = _tree_graph(system, n_nodes, ppn, shm, ring, t)
    category = system.nic_link.category if n_nodes > 1 else "infiniband"
    plugin = t.section("graph_assumptions")["net_plugin_latency_us"]
    sharp = collnet and n_nodes > 1 and system.in_network_reduction == "sharp"
    return NcclTopology(
        n_ranks=n_nodes * ppn, n_nodes=n_nodes, compute_capability=system.gpu.compute_capability,
        ring=ring, tree=tree, intra_path=path if ppn > 1 else "NVLINK" if path == "NVLINK" else "PCI",
        # a GPUDirect NIC sits near its GPUs (PXB: LL128 stays on); sockets reach it through the CPU
        inter_path="PXB" if n_nodes == 1 or system.nic_link.gpu_direct_access else "PHB",
        nvls=_nvls_graph(system, n_nodes, ppn, t), collnet=ring if sharp else None,
        shm=_host_memory_path(system, ppn, t) if shm else None,
        latency_inter_us=float(plugin.get(category, 0.0)),
        net_efficiency=system.nic_link.efficiency if n_nodes > 1 and category in TCP_CATEGORIES else None,
        net_share=_spine_share(system, n_nodes, ppn, ring),
        cpu_vendor=system.cpu_vendor if system.cpu_vendor in ("intel", "amd", "arm") else "intel",
        nvswitch=system.nvswitch_gen > 0,
        description=f"{system.name}: {n_nodes} node(s) x {ppn} GPU(s)" + ("; SHM through host memory" if shm else ""),
    )


def topology_for(system: System, nodes: int = 1, gpus_per_node: int | None = None,
                 tables: object = None, *, collnet: bool = False, p2p_level: str | None = None) -> NcclTopology:
    """NCCL's graph-search result for a hardware System (or a system's name or TOML path).

    ``p2p_level`` is NCCL_P2P_LEVEL (LOC, NVL, PIX, PXB, PHB or SYS); None keeps NCCL's default rule.
    """
    import os

    from hardware import System, system_of

    if isinstance(system, (str, os.PathLike, System)):  # a name raised AttributeError (review, 2026-11-29);
        system = system_of(system, "system")  # a System built in Python is checked as its TOML would be
    elif not hasattr(system, "gpu"):
        raise InputError("system", system, "a hardware.System, a system name or a TOML path")
    nodes = whole_count("nodes", nodes)  # 2.0 was kept a float, and nccl_time then failed on it
    gpus_per_node = None if gpus_per_node is None else whole_count("gpus_per_node", gpus_per_node)
    collnet = check_switch("collnet", collnet)  # "false" was true (API audit, 2026-11-30)
    tables = None if tables is None else tables_or_default(tables)  # derive_topology loads the default itself
    return derive_topology(system, nodes, gpus_per_node, tables, collnet=collnet,  # type: ignore[arg-type]
                           p2p_level=p2p_level)
