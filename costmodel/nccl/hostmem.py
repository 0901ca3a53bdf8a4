"""What NCCL's SHM transport (GPU to GPU through host memory) sustains on PCIe.

Without peer-to-peer, the sender writes each chunk into a buffer in the receiver's host memory
and the receiver reads it back (NCCL ``src/transport/shm.cc``): every byte crosses PCIe twice,
once up from the sender, once down to the receiver. NCCL's graph search prices such a path
like a P2P path through the CPU (×6/5 on an Intel host bridge, then its speed ladder); that
decides NCCL's choice. The data rate is set by the PCIe links instead:

* the busiest link is a switch uplink when several GPUs sit behind one switch, since every
  GPU behind it sends its data up through it: ``link / senders`` (a chain, as in broadcast
  and reduce, has one sender fewer than a ring);
* a GPU that writes its outgoing data to host memory while it reads its incoming data from
  host memory (every rank of a ring collective, the inner ranks of a chain) sustains
  ``efficiency_shm`` of its link; a pure sender or pure receiver (the two ends of a chain)
  streams like a P2P link (``efficiency_pci``).

    >>> from costmodel.nccl.topology import HostMemoryPath, NcclGraph, NcclTopology
    >>> g = NcclGraph(n_channels=1, bw_intra_GBps=5.0, bw_inter_GBps=5.0)
    >>> topo = NcclTopology(n_ranks=2, n_nodes=1, compute_capability=75, ring=g, tree=g,
    ...                     intra_path="PCI", shm=HostMemoryPath(link_GBps=12.0, gpus_per_uplink=2))
    >>> bus_bw_GBps("all-reduce", topo), bus_bw_GBps("broadcast", topo), duplex("broadcast", 2)
    (6.0, 12.0, False)
"""

from __future__ import annotations

from costmodel.nccl.topology import NcclTopology

_ROOTED = ("broadcast", "reduce")


def uplink_senders(collective: str, topo: NcclTopology) -> int:
    """Ranks whose outgoing data share the busiest PCIe link (a switch uplink, else their own)."""
    if topo.shm is None:
        return 1
    senders = topo.n_ranks - 1 if collective in _ROOTED else topo.n_ranks
    return max(1, min(topo.shm.gpus_per_uplink, senders))


def bus_bw_GBps(collective: str, topo: NcclTopology) -> float:
    """Per-rank bus bandwidth the PCIe links carry through host memory, before efficiency."""
    if topo.shm is None:
        raise ValueError("bus_bw_GBps needs a topology with an SHM path")
    return topo.shm.link_GBps / uplink_senders(collective, topo)


def duplex(collective: str, n_ranks: int) -> bool:
    """Whether some rank writes to and reads from host memory at the same time."""
    return collective not in _ROOTED or n_ranks > 2
