"""What NCCL's topology search hands its tuning model: channels and per-channel bandwidths.

:class:`NcclTopology` is the input of :func:`costmodel.nccl.model.nccl_time`: the rank layout,
the compute capability, the intra-node path class (NVLINK or PCI), the intra-node transport
(peer-to-peer, or through host memory when ``shm`` is set), and per graph (ring, tree, NVLS,
CollNet) the channel count and per-channel ``bwIntra``/``bwInter`` in GB/s, as NCCL's
``ncclTopoCompute`` would find them. Build one directly, or derive it from a hardware System
with :func:`topology_for` (the search lives in :mod:`costmodel.nccl.search`).

    >>> ring = NcclGraph(n_channels=12, bw_intra_GBps=20.0, bw_inter_GBps=20.0)
    >>> topo = NcclTopology(n_ranks=8, n_nodes=1, compute_capability=80, ring=ring, tree=ring)
    >>> topo.arch, topo.ppn, topo.ll128_enabled
    ('ampere', 8, True)
"""

from __future__ import annotations

from dpbase.errors import InputError
from dpbase.values import frozen

INTRA_PATHS = ("NVLINK", "PCI")
# GPU -> NIC path types, best first (src/graph/topo.h PATH_*); NET = the NIC is not near.
INTER_PATHS = ("PIX", "PXB", "PXN", "PHB", "SYS")
TREE_PATTERNS = ("balanced_tree", "tree")
CPU_VENDORS = ("intel", "amd", "arm", "power")


@frozen(kw_only=True)
class NcclGraph:
    """One searched graph: ``n_channels`` channels of ``bw_intra_GBps``/``bw_inter_GBps`` each."""

    n_channels: int
    bw_intra_GBps: float
    bw_inter_GBps: float
    pattern: str = "ring"

    def __post_init__(self) -> None:
        if self.n_channels < 1:
            raise InputError("n_channels", self.n_channels, "an integer >= 1")
        for name in ("bw_intra_GBps", "bw_inter_GBps"):
            if not getattr(self, name) > 0:
                raise InputError(name, getattr(self, name), "a bandwidth > 0 GB/s")


@frozen(kw_only=True)
class HostMemoryPath:
    """NCCL's SHM transport: GPUs without peer-to-peer exchange data through host memory.

    The sender writes into a buffer in the receiver's host memory and the receiver reads it
    (NCCL ``src/transport/shm.cc``, ``NCCL_SHM_LOCALITY`` = receiver side), so every byte
    crosses PCIe twice. ``link_GBps`` is each GPU's PCIe bandwidth in NCCL's constants and
    ``gpus_per_uplink`` the GPUs whose host-memory traffic shares one PCIe switch uplink.
    """

    link_GBps: float
    gpus_per_uplink: int = 1

    def __post_init__(self) -> None:
        if not self.link_GBps > 0:
            raise InputError("shm.link_GBps", self.link_GBps, "a bandwidth > 0 GB/s")
        if self.gpus_per_uplink < 1:
            raise InputError("shm.gpus_per_uplink", self.gpus_per_uplink, "an integer >= 1")


@frozen(kw_only=True)
class NcclTopology:
    """NCCL's view of a communicator, as its tuning model consumes it.

    ``latency_inter_us`` is the network plugin's reported latency (0 for IB/RoCE verbs,
    tens of µs for AWS EFA). ``nvls``/``collnet`` are None when unavailable. ``shm`` is set
    when the GPUs of a node reach each other through host memory instead of peer-to-peer.
    ``net_efficiency`` is the achieved fraction of the NIC's line rate where the transport is
    not RDMA (NCCL's socket transport copies every byte through the CPU); None on RDMA.
    ``net_share`` scales the network's rate where an oversubscribed spine carries less than the
    ring pushes (a fabric NCCL cannot see).
    """

    n_ranks: int
    n_nodes: int
    compute_capability: int
    ring: NcclGraph
    tree: NcclGraph
    intra_path: str = "NVLINK"
    inter_path: str = "PXB"
    nvls: NcclGraph | None = None
    collnet: NcclGraph | None = None
    latency_inter_us: float = 0.0
    cpu_vendor: str = "intel"
    same_channels: bool = True
    nvswitch: bool = False  # the node's GPUs meet in an NVSwitch (tuning.cc: CollNet Direct needs one)
    shm: HostMemoryPath | None = None
    net_efficiency: float | None = None  # None: an RDMA transport (IB, RoCE, EFA), fitted efficiency_net
    net_share: float = 1.0  # of the ring's network rate, what an oversubscribed spine carries (search._spine_share)
    description: str = ""

    def __post_init__(self) -> None:
        if self.n_ranks < 1:
            raise InputError("n_ranks", self.n_ranks, "an integer >= 1")
        if self.n_nodes < 1 or self.n_ranks % self.n_nodes:
            raise InputError("n_nodes", self.n_nodes, f"a divisor of n_ranks={self.n_ranks}")
        _check_choice("intra_path", self.intra_path, INTRA_PATHS)
        _check_choice("inter_path", self.inter_path, INTER_PATHS)
        _check_choice("cpu_vendor", self.cpu_vendor, CPU_VENDORS)
        _check_choice("tree.pattern", self.tree.pattern, ("ring", *TREE_PATTERNS))
        if self.compute_capability < 60:
            raise InputError("compute_capability", self.compute_capability, "an integer >= 60 (sm60)")

    @property
    def transport(self) -> str:
        """Intra-node transport between GPUs: ``p2p`` or ``shm`` (through host memory)."""
        return "shm" if self.shm is not None else "p2p"

    @property
    def ppn(self) -> int:
        """Ranks (GPUs) per node."""
        return self.n_ranks // self.n_nodes

    @property
    def arch(self) -> str:
        """NCCL's compCapIndex class: volta, ampere, hopper or blackwell."""
        cc = self.compute_capability
        return "blackwell" if cc >= 100 else "hopper" if cc >= 90 else "ampere" if cc >= 80 else "volta"

    @property
    def n_channels(self) -> int:
        """Channels the model uses for Ring/Tree (NCCL forces both to the same count)."""
        return self.ring.n_channels

    @property
    def bw_intra_GBps(self) -> float:
        """Ring graph's per-channel intra-node bandwidth."""
        return self.ring.bw_intra_GBps

    @property
    def bw_inter_GBps(self) -> float:
        """Ring graph's per-channel inter-node bandwidth."""
        return self.ring.bw_inter_GBps

    @property
    def nvls_capable(self) -> bool:
        """NVLS needs an NVLS graph (NVSwitch gen3+, sm90+) with at least 2 channels."""
        return self.nvls is not None and self.compute_capability >= 90 and self.nvls.n_channels >= 2

    @property
    def collnet_capable(self) -> bool:
        """CollNet (SHARP) needs a CollNet graph and more than one node."""
        return self.collnet is not None and self.n_nodes > 1

    @property
    def ll128_enabled(self) -> bool:
        """NCCL enables LL128 by default only on NVLink paths (and near NICs), sm70+: the graph's
        intra path at most NVB, which a node of one GPU (PATH_LOC) passes whatever its link."""
        if self.compute_capability < 70 or (self.intra_path != "NVLINK" and self.ppn > 1):
            return False
        if self.n_nodes == 1:
            return True
        limit = "PXN" if self.compute_capability >= 90 else "PXB"
        return INTER_PATHS.index(self.inter_path) <= INTER_PATHS.index(limit)

    @property
    def pat_capable(self) -> bool:
        """PAT runs only with one GPU per node (nNodes == nRanks > 1), sm60+."""
        return self.n_nodes == self.n_ranks and self.n_ranks > 1


def _check_choice(field: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise InputError(field, value, f"one of {', '.join(allowed)}")
