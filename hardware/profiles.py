"""Hardware profiles as frozen values: GPUs, links, systems (nodes).

Every quantity is in base units named in the field: bytes (``_bytes``), bytes per second
(``_Bps``), seconds (``_s``), FLOP/s (``peak_flops``). Profiles are built by
:mod:`hardware.loader` from TOML text with units (``"80GB"``, ``"400Gbps"``, ``"1.3us"``);
nothing here parses text.

    >>> link = Link(name="ib-ndr", description="", source="", category="infiniband",
    ...             bandwidth_Bps=50e9, efficiency=0.97, latency_s=1.5e-6)
    >>> round(link.achievable_bandwidth_Bps / 1e9, 2)
    48.5
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dpbase.values import ReadOnlyDict, frozen

# "calibrated": a link fitted by `dpcost calibrate` to nccl-tests measurements (any fabric).
GPU_DIRECT_CATEGORIES = ("infiniband", "roce", "efa", "slingshot")  # RDMA NICs: GPUDirect unless a profile says not
# TCP on the wire (kernel sockets, or a TCP-based plugin): through host memory unless a profile
# says not (gpu_direct, GCP's TCPXO), and NCCL's achieved rate is the link profile's own efficiency
TCP_CATEGORIES = ("ethernet", "tcp")
LINK_CATEGORIES = ("nvlink", "pcie", "infiniband", "roce", "ethernet", "tcp", "efa", "slingshot", "xgmi", "calibrated")
ARCHITECTURES = ("kepler", "maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell", "cdna2", "cdna3", "cdna4")
INTRA_FABRICS = ("nvswitch", "nvlink-mesh", "nvlink-bridge", "pcie", "xgmi")
# Direct GPU-to-GPU meshes (no switch): each GPU's links are spread over its peers, so a job on
# k of the node's G GPUs uses only the links among them (System.intra_share).
MESH_FABRICS = ("nvlink-mesh", "xgmi")
IN_NETWORK_REDUCTIONS = ("", "nvls", "sharp")
CPU_VENDORS = ("intel", "amd", "arm")
# PCIe path between two GPUs of a node as `nvidia-smi topo -m` prints it, nearest first:
# one switch, several switches, one CPU host bridge, host bridges of one NUMA node, across CPUs.
PCIE_PATHS = ("PIX", "PXB", "PHB", "NODE", "SYS")
DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8", "fp4")
NO_LINK = "none"
# NCCL's NVLS (NVLink SHARP) needs NVSwitch gen3 or newer (H100/H200 HGX and later).
NVLS_MIN_NVSWITCH_GEN = 3


@frozen(kw_only=True)
class Regime:
    """One calibrated piece of a link's cost curve: messages up to ``max_size_bytes``.

    ``flat``: the measured collective's time held level across the regime (a library adding
    channels as messages grow), so the bandwidth grows with the message: ``bandwidth_Bps`` is
    the rate at ``max_size_bytes`` and :meth:`bandwidth_at` scales it by size. Every algorithm's
    bandwidth term is then what it is at ``max_size_bytes``; the latency stays per hop.
    """

    max_size_bytes: float  # math.inf for the last regime
    latency_s: float
    bandwidth_Bps: float
    flat: bool = False

    def bandwidth_at(self, size_bytes: float) -> float:
        """The bandwidth for a message of ``size_bytes`` (scaled by size in a flat regime)."""
        if self.flat and 0 < size_bytes <= self.max_size_bytes:
            return self.bandwidth_Bps * size_bytes / self.max_size_bytes
        return self.bandwidth_Bps


def regime_covering(regimes: Sequence[Regime], size_bytes: float) -> Regime | None:
    """The first regime whose ``max_size_bytes`` reaches ``size_bytes``; the last covers any larger
    size (None without regimes). The one size-to-regime lookup of links, calibrations and
    measured curves."""
    for regime in regimes:
        if size_bytes <= regime.max_size_bytes:
            return regime
    return regimes[-1] if regimes else None


@frozen(kw_only=True)
class Link:
    """A point-to-point link or network port, per direction.

    ``bandwidth_Bps`` is the nominal per-direction rate; ``efficiency`` the fraction a
    collective library achieves at large sizes; ``latency_s`` the one-way small-message
    latency. ``regimes`` (optional, written by calibration) refine the curve by size.
    """

    name: str
    description: str
    source: str
    category: str
    bandwidth_Bps: float
    efficiency: float
    latency_s: float
    sharp: bool = False
    gpu_direct: bool | None = None  # None: by category (gpu_direct_access)
    regimes: tuple[Regime, ...] = ()
    notes: str = ""

    @property
    def gpu_direct_access(self) -> bool:
        """Whether the NIC moves data straight to and from GPU memory (GPUDirect RDMA on
        InfiniBand, RoCE and EFA; GPUDirect-TCPX/TCPXO over TCP) rather than through host memory
        and CPU copies (kernel sockets): the profile's ``gpu_direct`` where given, else its
        category (``infiniband``, ``roce``, ``efa`` yes; ``tcp``, ``ethernet`` no), else its name
        (``tcp`` or ``socket`` in it: no). The one rule the step model's transport and NCCL's
        network path read."""
        if self.gpu_direct is not None:
            return self.gpu_direct
        if self.category in GPU_DIRECT_CATEGORIES:
            return True
        if self.category in TCP_CATEGORIES:
            return False
        return not ("tcp" in self.name.lower() or "socket" in self.name.lower())

    @property
    def achievable_bandwidth_Bps(self) -> float:
        """Bandwidth a collective can sustain: nominal × efficiency."""
        return self.bandwidth_Bps * self.efficiency

    def regime_for(self, size_bytes: float) -> Regime | None:
        """The calibrated regime covering ``size_bytes``, or None without regimes."""
        return regime_covering(self.regimes, size_bytes)


@frozen(kw_only=True)
class Gpu:
    """One accelerator: memory, HBM bandwidth, dense peak FLOP/s per dtype.

    ``peak_flops`` holds only the dtypes the hardware supports (FLOP/s, dense, no sparsity).
    ``scaleup_link`` is the per-link scale-up fabric (None for PCIe-only cards) and
    ``scaleup_bandwidth_Bps`` the per-GPU, per-direction aggregate over it.
    """

    name: str
    description: str
    source: str
    vendor: str
    arch: str
    compute_capability: int
    memory_bytes: float
    hbm_bandwidth_Bps: float
    peak_flops: Mapping[str, float]
    scaleup_link: Link | None
    scaleup_bandwidth_Bps: float
    pcie_gen: int
    default_mfu: float
    mfu_source: str
    notes: str = ""
    host_link_bandwidth_Bps: float = 0.0  # to host memory per direction when not PCIe (NVLink-C2C)
    # names the part is reported under that state another memory than its own (nvidia-smi's
    # "NVIDIA GH200 120GB": the 120 GB is the Grace's LPDDR5X, the GPU's HBM3 is 96 GB)
    product_names: tuple[str, ...] = ()
    # the largest matmul FLOP/s measured on the part as a fraction of its dense 16-bit peak (Bekman's
    # MAMF, ml-engineering); None: not measured (costmodel.training.roofline takes A100 SXM's)
    matmul_ceiling: float | None = None

    def __post_init__(self) -> None:
        if type(self.peak_flops) is not ReadOnlyDict:  # frozen all the way down (dpbase.values)
            object.__setattr__(self, "peak_flops", ReadOnlyDict(self.peak_flops))

    def peak_flops_for(self, dtype: str) -> float | None:
        """Dense peak FLOP/s for ``dtype``, or None when the GPU lacks it."""
        return self.peak_flops.get(dtype)


@frozen(kw_only=True)
class MeasuredCurve:
    """One collective measured on this system (nccl-tests), written by ``dpcost calibrate``.

    ``regimes`` are the fitted pieces of the whole call's time, ``latency_s + n / bandwidth_Bps``
    for messages of ``n`` bytes up to each ``max_size_bytes`` (nccl-tests' size convention;
    ``bandwidth_Bps`` is algbw-like: bytes of ``n`` per second, not per hop). ``algorithm`` is
    what ran: ``auto`` (the stack's own choice) or the forced one (``NCCL_ALGO``), in registry
    or NCCL spelling. ``median_error`` is the fit's cross-validated median |relative error|.
    """

    collective: str
    algorithm: str
    nodes: int
    gpus_per_node: int
    regimes: tuple[Regime, ...]
    min_size_bytes: float
    max_size_bytes: float
    median_error: float
    source: str = ""

    @property
    def covered_bytes(self) -> tuple[float, float]:
        """The sizes the curve answers: the measured ones and a factor of 2 beyond either end."""
        return self.min_size_bytes / 2, 2 * self.max_size_bytes

    def covers(self, size_bytes: float) -> bool:
        """Within :attr:`covered_bytes`."""
        low, high = self.covered_bytes
        return low <= size_bytes <= high

    def regime_for(self, size_bytes: float) -> Regime:
        """The fitted piece covering ``size_bytes`` (the last one beyond the largest)."""
        return regime_covering(self.regimes, size_bytes)

    def time_s(self, size_bytes: float) -> float:
        regime = self.regime_for(size_bytes)
        return regime.latency_s + size_bytes / regime.bandwidth_Bps


@frozen(kw_only=True)
class System:
    """A node: ``gpus_per_node`` GPUs on an intra-node fabric plus NICs to the network.

    ``intra_bandwidth_Bps`` is per GPU per direction (nominal); ``nic_bandwidth_Bps`` per
    NIC per direction. ``in_network_reduction`` is "nvls" (NVSwitch gen3+), "sharp" (an
    InfiniBand fabric with SHARP) or "" (none). ``pcie_path`` is the farthest PCIe path
    between two GPUs of the node (one of :data:`PCIE_PATHS`) and ``pcie_switch_gpus`` the GPUs
    that share one PCIe switch's uplink to the CPU (1 = every GPU on its own root port); NCCL
    uses them to decide between peer-to-peer and host-memory (SHM) transport on PCIe.
    """

    name: str
    description: str
    source: str
    gpu: Gpu
    gpus_per_node: int
    intra_fabric: str
    nvswitch_gen: int
    intra_link: Link
    intra_bandwidth_Bps: float
    nics_per_node: int
    nic_link: Link
    nic_bandwidth_Bps: float
    rail_optimized: bool
    in_network_reduction: str
    oversubscription: float
    cpu_vendor: str
    p2p: bool
    scaleup_domain_gpus: int = 0  # 0 = one node (as given; domain_gpus reads it)
    pcie_path: str = "PXB"
    pcie_switch_gpus: int = 1
    # the node's CPU memory bandwidth, all sockets (theoretical: channels × transfer rate × 8 B);
    # 0 = unknown. Optimizer offload (ZeRO-Offload) runs the optimizer step on it.
    host_memory_bandwidth_Bps: float = 0.0
    notes: str = ""
    # a mesh node's links between each pair of its GPUs (nvidia-smi topo -m's NV#, GPU order; the
    # intra bandwidth is the fewest-linked GPU's); () = the links spread evenly over the peers
    mesh_links: tuple[tuple[int, ...], ...] = ()
    # other names of the whole machine: a cloud instance's as its provider writes them ("ND96asr_v4"
    # for the ND A100 v4 series' VM size), a site's ("Perlmutter"); tables name a machine by them
    instance_names: tuple[str, ...] = ()
    measured: tuple[MeasuredCurve, ...] = ()  # calibrated curves (dpcost calibrate --system)

    @property
    def domain_gpus(self) -> int:
        """GPUs in one NVLink domain: ``scaleup_domain_gpus`` where the profile gives one (NVL72
        trays), else one node's. Read here, not filled into the field at load: a what-if's
        ``dataclasses.replace(system, gpus_per_node=4)`` kept the filled-in 8, so two 4-GPU nodes
        were one NVLink domain (API review, 2026-11-30)."""
        return self.scaleup_domain_gpus or self.gpus_per_node

    @property
    def nic_bandwidth_per_gpu_Bps(self) -> float:
        """Nominal network bandwidth per GPU per direction (node NICs shared evenly)."""
        return self.node_network_Bps / self.gpus_per_node

    @property
    def node_network_Bps(self) -> float:
        """Nominal network bandwidth of the whole node per direction."""
        return self.nics_per_node * self.nic_bandwidth_Bps

    def intra_share(self, gpus: int) -> float:
        """The share of a GPU's intra-node links that ``gpus`` of the node's GPUs can use.

        A switch (NVSwitch) gives any subset every link. On a mesh whose links between each
        pair are given (``mesh_links``: DGX-1's hybrid cube-mesh), a job on k GPUs runs on the
        first k (the default devices 0 … k − 1), and the one of them with the fewest links to the
        others sets the share of the links behind the intra bandwidth (the fewest-linked GPU's,
        where GPUs differ: a p3.8xlarge's quad): GPUs 0 and 1 of a DGX-1 V100 share one of their six NVLinks
        (measured 21.9 GB/s busbw on that NV1 pair, 42.4 on an NV2 pair), GPUs 0–3 are a quad in
        which each has 4 or 5 of its six (a P100 3 of its 4). Otherwise each GPU's links are
        spread over its G − 1 peers, so k GPUs reach (k − 1)/(G − 1) of them, and never less
        than the one link a pair of neighbours shares: exact on a fully connected mesh (MI300X:
        one xGMI link per peer; HGX A100/H100 4-GPU boards).
        """
        if self.intra_fabric not in MESH_FABRICS or not 1 < gpus < self.gpus_per_node:
            return 1.0
        if self.mesh_links:  # a share of the links behind the intra bandwidth: the fewest-linked GPU's
            fewest = min(sum(self.mesh_links[i][j] for j in range(gpus)) for i in range(gpus))
            return max(fewest, 1) / min(sum(row) for row in self.mesh_links)
        return max((gpus - 1) / (self.gpus_per_node - 1), 1.0 / self.intra_links)

    @property
    def intra_links(self) -> int:
        """Scale-up links per GPU (the intra bandwidth over one link's)."""
        link = self.gpu.scaleup_link or self.intra_link
        return max(1, round(self.intra_bandwidth_Bps / link.bandwidth_Bps))

    @property
    def achievable_intra_bandwidth_Bps(self) -> float:
        """Per-GPU intra-node bandwidth derated by the intra link's efficiency."""
        return self.intra_bandwidth_Bps * self.intra_link.efficiency

    @property
    def spine_oversubscription(self) -> float:
        """What divides the network's rate for traffic between nodes: the fabric's
        oversubscription where that traffic crosses the spine; rail-optimised NICs keep it under
        their leaf switch (1). Every backend reads it here."""
        return 1.0 if self.rail_optimized else self.oversubscription

    def nvlink_domains(self, nodes: int) -> tuple[int, int]:
        """(domains, GPUs in each) of ``nodes`` whole nodes whose NVLink spans several nodes
        (NVL72 trays: ``scaleup_domain_gpus`` beyond ``gpus_per_node``): as few domains as hold
        them, the nodes spread evenly over them (the placement a scheduler packing racks makes).
        Where the GPUs do not divide evenly (19 trays of NVL72 racks: 10 + 9), the largest domain
        stands for all (2 x 40 GPUs for 76: a few ranks more than the job has, which the answers do
        not report). NCCL sees one node per domain (MNNVL cliques). The one rule for NCCL's graph
        search and the ideal mapping; (nodes, gpus_per_node) where NVLink stays inside a node.
        Until 2026-11-30 counts that did not divide fell back to one node per tray, their NICs
        alone: 37 or 40 trays took 4.4x 36 trays' time, 73 trays 3.7x 72 trays'."""
        if self.domain_gpus <= self.gpus_per_node or nodes <= 1:
            return nodes, self.gpus_per_node
        ranks = nodes * self.gpus_per_node
        domains = -(-ranks // self.domain_gpus)
        return domains, -(-ranks // domains)

    def nics_reached(self, gpus: int) -> int:
        """The NICs ``gpus`` of a node's GPUs reach: their share of the node's NICs, at least one
        (NCCL drives the NICs nearest each GPU). The one rule for NCCL's graph search and the
        ideal mapping of a node used in part."""
        return max(1, round(self.nics_per_node * gpus / self.gpus_per_node))

    @property
    def achievable_node_network_Bps(self) -> float:
        """The node's network bandwidth derated by NIC efficiency and the spine's oversubscription."""
        return self.node_network_Bps * self.nic_link.efficiency / self.spine_oversubscription

    @property
    def achievable_nic_bandwidth_per_gpu_Bps(self) -> float:
        """:attr:`achievable_node_network_Bps` per GPU (node NICs shared evenly)."""
        return self.achievable_node_network_Bps / self.gpus_per_node


Profile = Gpu | Link | System

