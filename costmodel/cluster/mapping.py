"""Collectives mapped onto a cluster of nodes × GPUs described by a hardware System profile.

Mapping rules:
- one node: every algorithm runs on the intra-node fabric (α = intra link latency, bandwidth
  = per-GPU intra bandwidth × link efficiency); in-network reduction only with NVLS
  (NVSwitch gen 3+). Dedicated parameter servers there are the node's CPUs, reached over each
  GPU's host link (PCIe, or Grace's NVLink-C2C), not over NVLink.
- one NVLink domain across nodes (GB200/GB300 NVL72 trays: ranks <= the system's
  ``scaleup_domain_gpus``): the trays talk over NVLink, so the cluster maps as one node.
- several nodes, flat algorithm: it is limited by its slowest hop: α = the larger latency,
  bandwidth = min(intra per GPU, network). Neighbour algorithms (ring, pipelined chain) run
  one ring per NIC as NCCL does (G rings, one per channel): of each GPU's ring traffic,
  (G−1)/G goes over the intra-node fabric and 1/G over its NIC, so the rate is
  min(G/(G−1) × intra per GPU, the node's whole NIC bandwidth); on DGX H100 at 2 nodes the
  NICs, not NVLink, limit it. Algorithms whose every rank crosses the network at once
  (recursive doubling, Bruck …) get the per-GPU share. Without rail-optimised NICs the
  traffic crosses the spine and the fabric's oversubscription divides it.
- all-to-all that sends each block straight to its owner (direct, pairwise): of a rank's
  (N−1)/N·n bytes, (G−1)/N·n stay in the node and (N−G)/N·n cross its NIC, on separate
  links at once: the rate is (N−1) / max((G−1)/intra, (N−G)/network per GPU) — at 2 nodes
  only half the bytes leave a node.
- hierarchical: each level uses its own link (intra for the node phases, network for the
  inter-node phase on 1/G of the data, one rail per GPU); with ``leaders`` one GPU per node
  carries the whole buffer over the NICs it reaches (:meth:`hardware.System.nics_reached`).
- double binary tree: NCCL's layout — the tree spans nodes (N = nodes, network α/β) and
  inside each node the ranks form a chain (2(G−1) intra steps); the phases are pipelined,
  so the bandwidth term is the slower of the two.
- in-network across nodes only where the fabric has SHARP, in NCCL's CollNet layout: a ring
  reduce-scatter inside each node over its fabric, the switches reducing each GPU's n/G across
  the nodes over its share of the NICs, a ring all-gather inside the node (the node phases are
  the ring all-reduce over the G GPUs). NCCL pipelines the phases chunk by chunk, so, as for the
  tree, the latencies add and the bandwidth term is the slower phase's.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from costmodel.cluster.counts import layout_counts
from costmodel.collectives.bounds import dedicated_servers
from costmodel.collectives.entry import Entry, Terms
from costmodel.collectives.evaluate import evaluate_grid, predict_entry, resolve, split_seconds
from costmodel.collectives.ops import SCALAR
from costmodel.collectives.prediction import Prediction
from costmodel.collectives.registry import entries, get
from costmodel.names import Algorithm, Primitive, busbw_factor
from dpbase.bounded import evict_oldest
from dpbase.errors import DpcostError, NotApplicableError
from dpbase.values import frozen, replace

if TYPE_CHECKING:
    from hardware import System


@frozen
class Layout:
    """Where the ranks are: ``nodes`` × ``gpus_per_node`` GPUs of ``system``."""

    system: System
    nodes: int
    gpus_per_node: int

    @property
    def ranks(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def intra_alpha_s(self) -> float:
        return self.system.intra_link.latency_s

    @property
    def intra_Bps(self) -> float:
        """Per-GPU intra-node bandwidth of this layout (a subset of a mesh node: its share)."""
        return self.system.achievable_intra_bandwidth_Bps * self.system.intra_share(self.gpus_per_node)

    @property
    def inter_alpha_s(self) -> float:
        return self.system.nic_link.latency_s

    @property
    def node_network_Bps(self) -> float:
        """The network bandwidth a node's ranks of this layout can drive: every NIC on a full node;
        with fewer GPUs used, the NICs they reach (:meth:`hardware.System.nics_reached`, as NCCL's
        graph search counts them): two ranks on DGX H100 nodes, one GPU each, meet over one
        400 Gb/s NIC, not the node's eight."""
        system = self.system
        return system.achievable_node_network_Bps * system.nics_reached(self.gpus_per_node) / system.nics_per_node

    @property
    def leader_Bps(self) -> float:
        """Network bandwidth one GPU of a node drives alone: the NICs one GPU reaches
        (a hierarchy's leader, seed 000)."""
        return replace(self, gpus_per_node=1).node_network_Bps

    @property
    def inter_Bps(self) -> float:
        """Network bandwidth per GPU when every GPU crosses the network at once."""
        return self.node_network_Bps / self.gpus_per_node

    @property
    def one_domain(self) -> bool:
        """Every rank in one NVLink domain: one node, or NVL72-style trays joined by NVLink. The
        nodes used count whole (their GPUs beyond ``gpus_per_node`` idle): two 8-GPU nodes with
        one rank each are two domains joined by their NICs, not one of two GPUs."""
        whole = self.nodes * self.system.gpus_per_node
        return self.nodes == 1 or whole <= self.system.domain_gpus


def layout(system: str | System, nodes: int = 1, gpus_per_node: int | None = None) -> Layout:
    """Resolve a system name/path/profile and check the node layout (a System as it is: the API's
    entries check a user's, :func:`hardware.system_of`)."""
    from hardware import system_of

    # a name, a path, or a System: the library's own copies (a what-if's, a rail's) as they are;
    # the API's entries check a user's (hardware.system_of)
    sys_profile = system_of(system, check=False)
    return Layout(sys_profile, *layout_counts(sys_profile, nodes, gpus_per_node))


def domain_layout(lay: Layout) -> Layout:
    """``lay`` as the collectives see it: whole nodes whose NVLink spans several of them (NVL72
    trays) beyond one domain run as :meth:`hardware.System.nvlink_domains` domains, each a node of
    its GPUs with all their NICs (the trays inside a domain meet over NVLink, as in NCCL mode).
    Until 2026-11-30 the ideal backend ran 19-54 trays as trays joined by their NICs alone, about
    4x NCCL mode's time for a 1 GiB all-reduce (an audit). Other layouts are returned as they are."""
    system = lay.system
    if lay.one_domain or lay.gpus_per_node != system.gpus_per_node:
        return lay
    domains, per_domain = system.nvlink_domains(lay.nodes)
    if domains == lay.nodes:
        return lay
    from hardware.given import derived_system

    node = derived_system(system, name=f"{system.name}/domain", gpus_per_node=per_domain,
                          nics_per_node=system.nics_reached(per_domain), scaleup_domain_gpus=per_domain,
                          measured=())
    return Layout(node, domains, per_domain)


def layout_of(total: int, gpus_per_node: int, nodes: int, partial: bool) -> tuple[int, int] | None:
    """(nodes, GPUs per node) that ``total`` GPUs run as on at most ``nodes`` nodes of
    ``gpus_per_node``, or None where they cannot: the one rule of which GPU counts run.

    Whole nodes (``partial`` False): up to one node, then whole nodes. With ``partial``, the
    count is packed on the fewest nodes with as many GPUs on each (launchers start the same
    number of processes on every node): ``total / g`` nodes × ``g`` GPUs, ``g`` the largest
    divisor of ``total`` that fits in a node, so 20 GPUs on 8-GPU nodes are 4 nodes × 5 GPUs.
    """
    if total < 1:
        return None
    if total <= gpus_per_node:
        return 1, total
    if partial:
        per_node = next(d for d in range(gpus_per_node, 0, -1) if total % d == 0)
    elif total % gpus_per_node == 0:
        per_node = gpus_per_node
    else:
        return None
    return (total // per_node, per_node) if total // per_node <= nodes else None


def rail_system(system: System, sharing: int) -> System:
    """One GPU's share of each node of ``system`` when ``sharing`` GPUs per node each run their
    own cross-node group at once (hybrid sharding: FSDP HYBRID_SHARD / DeepSpeed MiCS run one
    all-reduce per local rank, the "rails"): a one-GPU node with ``nics // sharing`` of the NICs
    the ``sharing`` GPUs reach (all of them on a whole node; on a node used in part, their share,
    as :meth:`System.nics_reached` gives the layout: one GPU of eight had all eight NICs to itself,
    review 2026-11-29), or, with fewer NICs than GPUs, one NIC at ``nics / sharing`` of its
    bandwidth. Inside an NVLink domain of several nodes (NVL72 trays) the rails stay on NVLink,
    each GPU with its own ports: the domain holds as many rail nodes as it holds physical nodes,
    ``domain // gpus_per_node`` (``// sharing`` counted two DGX boxes used four GPUs each as one
    domain: review, 2026-11-29). Measured curves do not apply."""
    share = max(int(sharing), 1)
    nics, per_nic = system.nics_reached(share), system.nic_bandwidth_Bps
    if nics >= share:
        nics //= share
    else:
        nics, per_nic = 1, per_nic * nics / share
    from hardware.given import derived_system

    return derived_system(system, name=f"{system.name}/rail", gpus_per_node=1, nics_per_node=nics,
                   nic_bandwidth_Bps=per_nic, pcie_switch_gpus=1, measured=(),
                   scaleup_domain_gpus=max(system.domain_gpus // system.gpus_per_node, 1))


class LayoutCache:
    """Per-layout results keyed by the system's *value* (compared with ``==``: a user profile
    reusing a bundled name never gets the bundled system's answer), looked up first by the
    system object's identity (the entry keeps the object). Systems are unhashable (their peak
    table is a dict), so equal values are found among the entries of the same name and layout.
    At most ``size`` answers, the oldest dropped first, and ``size`` identity shortcuts."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._by_value: dict[tuple[str, int, int], list[tuple[Any, Any]]] = {}
        self._order: collections.deque[tuple[str, int, int]] = collections.deque()  # keys, oldest answer first
        self._by_identity: dict[tuple[int, int, int], tuple[Any, Any]] = {}

    def get(self, lay: Layout, build: Callable[[Layout], Any]) -> Any:
        """The cached answer for ``lay``, built with ``build(lay)`` the first time."""
        system = lay.system
        fast = (id(system), lay.nodes, lay.gpus_per_node)
        hit = self._by_identity.get(fast)
        if hit is not None and hit[0] is system:
            return hit[1]
        key = (system.name, lay.nodes, lay.gpus_per_node)
        answer = next((found for other, found in self._by_value.get(key, ()) if other == system), _MISSING)
        if answer is _MISSING:
            if len(self._order) >= self.size:  # the oldest answer is the first of its key's
                self._evict()
            answer = build(lay)
            self._by_value.setdefault(key, []).append((system, answer))
            self._order.append(key)
        evict_oldest(self._by_identity, self.size)
        self._by_identity[fast] = (system, answer)
        return answer

    def _evict(self) -> None:
        """Drop the oldest answer; one another thread dropped meanwhile is left (dpbase.bounded)."""
        try:
            oldest = self._order.popleft()
        except IndexError:
            return
        found = self._by_value.get(oldest)
        if found:
            found.pop(0)
        if not found:
            self._by_value.pop(oldest, None)


_MISSING = object()


def applicable(entry: Entry, lay: Layout) -> bool:
    """Whether the hardware can run the algorithm at all (in-network needs a reducing switch)."""
    if entry.in_network:
        kind = lay.system.in_network_reduction
        return kind == "nvls" if lay.one_domain else kind == "sharp"
    return True


NEIGHBOUR_ALGORITHMS = (Algorithm.RING, Algorithm.PIPELINED_CHAIN)


# All-to-all algorithms that send every block straight to its owner (no forwarding through other ranks).
DIRECT_ALL_TO_ALL = (Algorithm.DIRECT, Algorithm.PAIRWISE)


def ring_rates_Bps(lay: Layout) -> tuple[float, float]:
    """(intra, network) rates a ring across nodes sees per GPU, as whole-ring bandwidths.

    One ring per NIC (channel): (G−1)/G of a GPU's ring bytes go over the intra-node fabric and
    1/G over its NIC, so each link's share is scaled up by the inverse of its fraction. Not on a
    PCIe node: there a GPU reaches its NIC through the same x16 link it reaches its neighbour
    by, so that link carries all of its ring bytes (a second node made a ring faster than PCIe
    allows: 28.7 GB/s busbw on 25.2 GB/s links; NCCL's model got it right).
    """
    g = lay.gpus_per_node
    if g <= 1:
        return float("inf"), lay.node_network_Bps
    shared = lay.system.intra_fabric == "pcie"  # the NIC hangs off the same PCIe link
    return lay.intra_Bps * (1.0 if shared else g / (g - 1)), lay.node_network_Bps


def all_to_all_rates_Bps(lay: Layout) -> tuple[float, float]:
    """(intra, network) rates of a direct all-to-all across nodes, as whole-exchange bandwidths.

    A rank sends (G−1) blocks inside its node and (N−G) across the network, both at once.
    """
    n, g = lay.ranks, lay.gpus_per_node
    intra = lay.intra_Bps * (n - 1) / (g - 1) if g > 1 else float("inf")
    return intra, lay.inter_Bps * (n - 1) / (n - g)


def _flat(lay: Layout, entry: Entry, params: dict | None = None) -> tuple[float, float, str]:
    if lay.one_domain:
        if dedicated_servers(entry, params):
            from costmodel.cluster.hostlink import host_link  # the ideal mapping's servers alone need it

            return host_link(lay)
        return lay.intra_alpha_s, lay.intra_Bps, lay.system.intra_link.name
    alpha = max(lay.intra_alpha_s, lay.inter_alpha_s)
    if entry.algorithm in NEIGHBOUR_ALGORITHMS:
        intra, network = ring_rates_Bps(lay)
    elif entry.primitive is Primitive.ALL_TO_ALL and entry.algorithm in DIRECT_ALL_TO_ALL:
        intra, network = all_to_all_rates_Bps(lay)
    else:
        intra, network = lay.intra_Bps, lay.inter_Bps
    if network <= intra:
        return alpha, network, lay.system.nic_link.name
    return alpha, intra, lay.system.intra_link.name


def _pipelined(latency_s, bandwidth_s, reduction_s, o) -> tuple:
    """(latency, bandwidth, reduction) of phases pipelined chunk by chunk (each argument: one
    value per phase): latencies and reductions add, the slowest phase's bandwidth term sets the
    pace. NCCL's tree (its chains inside the nodes) and CollNet (its node phases around the
    switches) both run so. Floats (``o`` = SCALAR) or numpy arrays (the vector namespace)."""
    return sum(latency_s), o.max(*bandwidth_s), sum(reduction_s)


def _chain_with_tree(over_latency_s, over_bandwidth_s, over_reduction_s, size_bytes, gpus_per_node,
                     intra_alpha_s, intra_Bps, o, gamma_s_per_byte=0.0):
    """(latency, bandwidth, chain bandwidth, reduction, time) seconds of the tree over nodes plus the
    chains.

    Inside each node the G ranks form a chain: 2(G−1) intra steps, 2·n bytes over the intra link
    when G > 1, and each rank up the chain adds the n bytes coming from below (n·γ, pipelined
    along the chain); the phases are pipelined, so the bandwidth term is the slower of the two
    and the reductions add. Written once for floats (``o`` = SCALAR) and numpy arrays (``o`` =
    the vector namespace).
    """
    moves = o.min(size_bytes, 1)  # a 0-byte call runs no chain (a size is 0 or at least 1 byte)
    chain_steps = 2 * (gpus_per_node - 1) * moves
    chained = o.min(gpus_per_node - 1, 1)
    chain_bw_s = 2 * size_bytes * chained / intra_Bps
    chain_reduction_s = size_bytes * chained * gamma_s_per_byte
    latency_s, bandwidth_s, reduction_s = _pipelined((over_latency_s, chain_steps * intra_alpha_s),
                                                     (over_bandwidth_s, chain_bw_s),
                                                     (over_reduction_s, chain_reduction_s), o)
    return latency_s, bandwidth_s, chain_bw_s, reduction_s, latency_s + bandwidth_s + reduction_s


def _tree_mapped(entry: Entry, lay: Layout) -> bool:
    """NCCL's double-binary-tree layout applies: a DBT all-reduce across several nodes."""
    return (entry.algorithm is Algorithm.DOUBLE_BINARY_TREE and not lay.one_domain
            and entry.primitive is Primitive.ALL_REDUCE)


def _tree_across_nodes(entry: Entry, lay: Layout, size_bytes: float, gamma_s_per_byte: float, params: dict) -> Prediction:
    """NCCL's layout: a double binary tree over nodes with an intra-node chain in each node."""
    over_nodes = predict_entry(entry, lay.nodes, size_bytes, lay.inter_alpha_s, lay.node_network_Bps, gamma_s_per_byte,
                               **params)
    latency_s, bandwidth_s, chain_bw_s, reduction_s, time_s = _chain_with_tree(
        over_nodes.latency_s, over_nodes.bandwidth_s, over_nodes.reduction_s, size_bytes,
        lay.gpus_per_node, lay.intra_alpha_s, lay.intra_Bps, SCALAR, gamma_s_per_byte)
    sent_max, received_max, chain_total = _chain_traffic(over_nodes, size_bytes, lay.gpus_per_node)
    result = replace(over_nodes, ranks=lay.ranks, time_s=time_s, latency_s=latency_s, bandwidth_s=bandwidth_s,
                     reduction_s=reduction_s,  # the term itself: time − α − β left float residue (−1e-20 s)
                     steps=over_nodes.steps + (2 * (lay.gpus_per_node - 1) if size_bytes > 0 else 0),
                     bytes_sent_max=sent_max,
                     bytes_received_max=received_max, bytes_total=over_nodes.bytes_total + lay.nodes * chain_total)
    slower = lay.system.nic_link.name if over_nodes.bandwidth_s >= chain_bw_s else lay.system.intra_link.name
    return _finish(result, lay, slower, size_bytes)


def _chain_traffic(over_nodes: Prediction, size_bytes: float, gpus_per_node: int) -> tuple[float, float, float]:
    """(bytes sent by the busiest rank, received by the busiest, total over one node's chain) of the
    tree's layout. Inside a node the chain reduces n bytes up to its head and broadcasts n back
    down: a middle rank sends and receives 2n, the head adds n each way to its tree traffic
    across the nodes, the chain's G−1 hops carry 2n each."""
    G, n = gpus_per_node, size_bytes
    if G == 1:
        return over_nodes.bytes_sent_max, over_nodes.bytes_received_max, 0.0
    middle = 2 * n if G > 2 else n
    return (max(over_nodes.bytes_sent_max + n, middle), max(over_nodes.bytes_received_max + n, middle),
            2 * n * (G - 1))


def _sharp_mapped(entry: Entry, lay: Layout) -> bool:
    """NCCL's CollNet layout applies: in-network reduction by the network's switches (SHARP)."""
    return entry.in_network and not lay.one_domain


def _sharp_rates(lay: Layout) -> tuple[float, float]:
    """(α, bandwidth) of a GPU's exchange with the reducing switches: its share of the NICs."""
    return lay.inter_alpha_s, min(lay.inter_Bps, lay.intra_Bps)


def _sharp_across_nodes(entry: Entry, lay: Layout, size_bytes: float, gamma: float, params: dict) -> Prediction:
    """NCCL's CollNet layout (module docstring): the ring all-reduce's two phases inside each
    node around the switches' reduction of every GPU's n/G."""
    G = lay.gpus_per_node
    alpha, bandwidth = _sharp_rates(lay)
    across = predict_entry(entry, lay.ranks, size_bytes / G, alpha, bandwidth, gamma, **params)
    inside = predict_entry(get("all-reduce", "ring"), G, size_bytes, lay.intra_alpha_s, lay.intra_Bps, gamma)
    latency_s, bandwidth_s, reduction_s = _pipelined(
        *([getattr(p, term) for p in (across, inside)] for term in ("latency_s", "bandwidth_s", "reduction_s")), SCALAR)
    result = replace(across, size_bytes=size_bytes, time_s=latency_s + bandwidth_s + reduction_s, latency_s=latency_s,
                     bandwidth_s=bandwidth_s, reduction_s=reduction_s, steps=across.steps + inside.steps,
                     bytes_sent_max=across.bytes_sent_max + inside.bytes_sent_max,
                     bytes_received_max=across.bytes_received_max + inside.bytes_received_max,
                     bytes_total=across.bytes_total + lay.nodes * inside.bytes_total)
    slower = lay.system.nic_link.name if across.bandwidth_s >= inside.bandwidth_s else lay.system.intra_link.name
    return _finish(result, lay, slower, size_bytes)


def _finish(result: Prediction, lay: Layout, bottleneck: str, size_bytes: float) -> Prediction:
    """Where it ran, and nccl-tests' bandwidths for the whole layout's rank count (None where nothing
    moves, one rank or 0 bytes, as :func:`predict_entry` gives them: a 1-GPU layout's were inf and NaN)."""
    if lay.ranks == 1 or size_bytes == 0:
        algbw = busbw = None
    else:
        algbw = size_bytes / result.time_s if result.time_s > 0 else float("inf")
        busbw = algbw * busbw_factor(Primitive(result.primitive), lay.ranks)
    return replace(result, algbw_Bps=algbw, busbw_Bps=busbw,
                   nodes=lay.nodes, gpus_per_node=lay.gpus_per_node, bottleneck=bottleneck, cluster=lay.system.name)


@frozen
class Mapping:
    """How a (non-tree) entry maps onto a layout: its α/β per level, the bottleneck link, params."""

    alpha_s: float
    bandwidth_Bps: float
    alpha_inter_s: float | None
    bandwidth_inter_Bps: float | None
    bottleneck: str
    params: dict


def mapping(entry: Entry, lay: Layout, params: dict | None = None) -> Mapping:
    """The mapping rules of the module docstring for flat, in-network and hierarchical entries
    (``params``: the algorithm's, where they change the links: a hierarchy's ``leaders``)."""
    if entry.hierarchical:
        if lay.one_domain and lay.nodes > 1:  # NVLink between the trays too
            return Mapping(lay.intra_alpha_s, lay.intra_Bps, lay.intra_alpha_s, lay.intra_Bps,
                           lay.system.intra_link.name, {"gpus_per_node": lay.gpus_per_node})
        # one rail per GPU, or one leader per node driving the NICs one GPU reaches
        inter = lay.leader_Bps if (params or {}).get("leaders") else lay.inter_Bps
        slower = lay.system.nic_link.name if lay.nodes > 1 and inter < lay.intra_Bps else lay.system.intra_link.name
        return Mapping(lay.intra_alpha_s, lay.intra_Bps, lay.inter_alpha_s, inter, slower,
                       {"gpus_per_node": lay.gpus_per_node})
    alpha, bandwidth, bottleneck = _flat(lay, entry, params)
    return Mapping(alpha, bandwidth, None, None, bottleneck, {})


def _not_applicable(entry: Entry, lay: Layout) -> NotApplicableError:
    """In-network reduction where the layout has none: NVLS reduces inside one NVSwitch domain,
    SHARP across nodes (it read "dgx-h100 has 'nvls' on 2 node(s)", as if that were allowed)."""
    kind, name = lay.system.in_network_reduction or "none", lay.system.name
    if kind == "nvls":
        why = f"{name}'s NVLS reduces inside one node's NVSwitch, not across {lay.nodes} nodes (that takes SHARP)"
    elif kind == "sharp":
        why = f"{name}'s SHARP reduces in the network switches across nodes, not inside one node (that takes NVLS)"
    else:
        why = f"{name} has no in-network reduction"
    return NotApplicableError("algorithm", entry.algorithm.value,
                              f"a layout whose fabric reduces in the network (nvls and nvls_tree name it too): {why}")


def predict_on_cluster(primitive: str, algorithm: str, system: str | System, nodes: int = 1,
                       gpus_per_node: int | None = None, size_bytes: float = 0.0,
                       gamma_s_per_byte: float = 0.0, **params: Any) -> Prediction:
    """One collective on the cluster under the ideal model (``size_bytes`` bytes or text with a unit,
    as :func:`costmodel.predict` reads it; "1GB" was a TypeError)."""
    if type(size_bytes) is not float:  # the library's own calls pass floats: parsed only for a user's value
        from dpbase.units import parse_message_size

        size_bytes = parse_message_size(size_bytes, "size_bytes")
    if type(gamma_s_per_byte) is not float or gamma_s_per_byte:  # a user's γ: checked as predict checks it
        from costmodel.names import check_reduction_time
        from dpbase.units import parse_time

        gamma_s_per_byte = parse_time(gamma_s_per_byte, "gamma_s_per_byte")  # "x", None, True, 1e300 got through
        check_reduction_time(primitive, gamma_s_per_byte, "gamma_s_per_byte")
    if isinstance(system, Layout):
        lay = system
    else:  # a user's System, checked as its TOML would be
        from hardware import system_of

        lay = layout(system_of(system), nodes, gpus_per_node)
    entry = get(primitive, algorithm)
    if not applicable(entry, lay):
        raise _not_applicable(entry, lay)
    asked, lay = lay, domain_layout(lay)
    if _tree_mapped(entry, lay):
        result = _tree_across_nodes(entry, lay, size_bytes, gamma_s_per_byte, params)
    elif _sharp_mapped(entry, lay):
        result = _sharp_across_nodes(entry, lay, size_bytes, gamma_s_per_byte, params)
    else:
        m = mapping(entry, lay, params)
        result = _finish(predict_entry(entry, lay.ranks, size_bytes, m.alpha_s, m.bandwidth_Bps, gamma_s_per_byte,
                                       m.alpha_inter_s, m.bandwidth_inter_Bps, **{**m.params, **params}),
                         lay, m.bottleneck, size_bytes)
    # the primitive's bound on these nodes, the same whatever the algorithm (off the NCCL-mode path's imports)
    from costmodel.cluster.bound import cluster_bound_s

    bound_s = cluster_bound_s(entry, lay, size_bytes, gamma_s_per_byte, result.params or params)
    return _as_asked(replace(result, lower_bound_s=bound_s), asked)


def _as_asked(result: Prediction, asked: Layout) -> Prediction:
    """A prediction on :func:`domain_layout`'s domains, reported on the nodes and ranks asked for
    (the even domains may hold a few ranks more)."""
    return replace(result, ranks=asked.ranks, nodes=asked.nodes, gpus_per_node=asked.gpus_per_node,
                   cluster=asked.system.name)


def _runnable(entry: Entry, lay: Layout, given: dict | None = None) -> bool:
    """Applicable, and the entry's parameters — the layout's and those ``given`` (colocated
    servers) — accept the rank count (as predict_entry checks)."""
    if not applicable(entry, lay):
        return False
    taken = entry.taken(given or {})
    ranks, params = (lay.nodes, {}) if _tree_mapped(entry, lay) else \
        (lay.ranks, {**taken, **mapping(entry, lay, taken).params})
    try:
        resolve(entry, ranks, params)
    except DpcostError:
        return False
    return True


def _column(values) -> Any:
    import numpy as np

    return np.asarray(values, dtype=float).reshape(-1, 1)


def _flat_times(entry: Entry, lays: list[Layout], sizes, **given: Any) -> Any:
    maps = [mapping(entry, lay, given) for lay in lays]
    inter = entry.hierarchical
    params = {"gpus_per_node": _column([m.params["gpus_per_node"] for m in maps])} if inter else {}
    params.update(given)
    return evaluate_grid(entry.primitive.value, entry.algorithm.value, _column([lay.ranks for lay in lays]),
                         sizes, _column([m.alpha_s for m in maps]), _column([m.bandwidth_Bps for m in maps]),
                         0.0, _column([m.alpha_inter_s for m in maps]) if inter else None,
                         _column([m.bandwidth_inter_Bps for m in maps]) if inter else None,
                         **params)["time_s"]


def _tree_times(entry: Entry, lays: list[Layout], sizes) -> Any:
    from costmodel.collectives.ops import vector_ops

    alpha = _column([lay.inter_alpha_s for lay in lays])
    bandwidth = _column([lay.node_network_Bps for lay in lays])
    over = evaluate_grid(entry.primitive.value, entry.algorithm.value, _column([lay.nodes for lay in lays]),
                         sizes, alpha, bandwidth)
    terms = Terms(**{name: over[name] for name in Terms._fields})  # predict_entry's split, γ = 0 as
    over_latency, over_bandwidth, over_reduction = split_seconds(  # in times_on_cluster's contract
        terms, alpha, 1.0 / bandwidth, 0.0, alpha, 1.0 / bandwidth)
    return _chain_with_tree(over_latency, over_bandwidth, over_reduction, sizes,
                            _column([lay.gpus_per_node for lay in lays]),
                            _column([lay.intra_alpha_s for lay in lays]),
                            _column([lay.intra_Bps for lay in lays]), vector_ops())[4]


def _sharp_times(entry: Entry, lays: list[Layout], sizes, **given: Any) -> Any:
    """:func:`_sharp_across_nodes`' time for every layout (rows) × size (columns)."""
    G = _column([lay.gpus_per_node for lay in lays])
    rates = [_sharp_rates(lay) for lay in lays]
    across = evaluate_grid(entry.primitive.value, entry.algorithm.value, _column([lay.ranks for lay in lays]),
                           sizes / G, _column([a for a, _ in rates]), _column([b for _, b in rates]), **given)
    inside = evaluate_grid("all-reduce", "ring", G, sizes, _column([lay.intra_alpha_s for lay in lays]),
                           _column([lay.intra_Bps for lay in lays]))
    from costmodel.collectives.ops import vector_ops

    return sum(_pipelined(*([phase[term] for phase in (across, inside)]
                            for term in ("latency_s", "bandwidth_s", "reduction_s")), vector_ops()))


def times_on_cluster(primitive: str, algorithm: str, lays, sizes, **params: Any) -> Any:
    """``predict_on_cluster(...).time_s`` for every layout (rows) × size (columns) at once.

    The same mapping (:func:`mapping`, :func:`_chain_with_tree`) and formulas, evaluated by
    :func:`costmodel.collectives.evaluate.evaluate_grid` over numpy arrays; rows where the algorithm cannot
    run (not applicable, or its parameters reject the rank count) are NaN.
    """
    import numpy as np

    entry = get(primitive, algorithm)
    lays = [domain_layout(lay) for lay in lays]  # as predict_on_cluster maps them (applicability unchanged)
    sizes = np.asarray(sizes, dtype=float).reshape(1, -1)
    out = np.full((len(lays), sizes.shape[1]), np.nan)
    scalars = {k: v for k, v in params.items() if not getattr(v, "ndim", 0)}  # once, not per layout
    runnable = [i for i, lay in enumerate(lays) if _runnable(entry, lay, scalars)]
    def kind(lay: Layout) -> str:
        return "tree" if _tree_mapped(entry, lay) else "sharp" if _sharp_mapped(entry, lay) else "flat"

    for name in ("flat", "tree", "sharp"):
        rows = [i for i in runnable if kind(lays[i]) == name]
        if rows:
            chosen = [lays[i] for i in rows]
            out[rows] = _tree_times(entry, chosen, sizes) if name == "tree" else \
                (_sharp_times if name == "sharp" else _flat_times)(entry, chosen, sizes, **params)
    return out


def cluster_candidates(primitive: str, lay: Layout) -> list[Entry]:
    """Entries of the primitive the cluster can run."""
    prim = Primitive(primitive) if not isinstance(primitive, Primitive) else primitive
    return [e for e in entries() if e.primitive is prim and applicable(e, lay)]


def regimes_unused_note(system: Any, nodes: int) -> str | None:
    """Said where a cluster's link carries calibrated regimes: they are a fitted collective's
    cost on one layout (``--link`` uses them), not a link's, so a cluster prediction cannot and
    does not use them. Not said of a cluster calibrated as a whole (its measured curves answer
    where they were measured)."""
    if getattr(system, "measured", ()):
        return None
    links = [system.intra_link] + ([system.nic_link] if nodes > 1 else [])
    named = sorted({link.name for link in links if link.regimes})
    if not named:
        return None
    return (f"the calibrated regimes of {', '.join(named)} apply to --link predictions, not to a cluster's: "
            "this one uses the link's nominal bandwidth and latency (a cluster is calibrated as a whole from "
            "its own logs: dpcost calibrate LOGS --system BASE -o FILE, docs/calibration.md)")
