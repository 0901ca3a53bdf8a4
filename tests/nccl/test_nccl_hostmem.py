"""NCCL's transport choice on PCIe (P2P or SHM through host memory) and what SHM sustains."""

import pytest

from costmodel.nccl import HostMemoryPath, NcclGraph, NcclTopology, load_tables, nccl_time, topology_for
from costmodel.nccl.hostmem import bus_bw_GBps, duplex, uplink_senders
from dpbase.errors import InputError
from hardware import load_system

GIB = 2**30


@pytest.mark.parametrize(("system", "gpus", "level", "transport"), [
    ("dgx-h100", 8, None, "p2p"),                # NVLink: always peer-to-peer
    ("rtx2080ti-2x-pcie", 2, None, "shm"),       # driver has no P2P
    ("rtx2080ti-2x-pcie", 2, "SYS", "shm"),      # ... whatever the P2P level
    ("l40s-4x-pcie", 4, None, "shm"),            # NODE pairs are beyond NCCL's default PXB
    ("l40s-4x-pcie", 4, "PHB", "p2p"),           # NCCL_P2P_LEVEL=PHB lets them through
    ("rtx4090-8x-pcie-p2p", 8, None, "shm"),     # AMD host, 8 GPUs: default level stays PXB
    ("rtx4090-8x-pcie-p2p", 2, None, "p2p"),     # AMD host, at most 2 GPUs: level SYS
    ("rtx4090-8x-pcie-p2p", 8, "SYS", "p2p"),
    ("rtx4090-8x-pcie-p2p", 2, "LOC", "shm"),    # NCCL_P2P_DISABLE-like
])
def test_transport_follows_nccl_p2p_rule(system, gpus, level, transport):
    topo = topology_for(load_system(system), 1, gpus, p2p_level=level)
    assert topo.transport == transport
    assert ("SHM" in topo.description) == (transport == "shm")


def test_bad_p2p_level_names_the_field():
    with pytest.raises(InputError, match="p2p_level"):
        topology_for(load_system("l40s-4x-pcie"), p2p_level="NVLINK")


def test_shm_uplink_shared_by_gpus_behind_one_switch():
    topo = topology_for(load_system("rtx2080ti-2x-pcie"))
    assert topo.shm == HostMemoryPath(link_GBps=12.0, gpus_per_uplink=2)
    assert uplink_senders("all-reduce", topo) == 2 and uplink_senders("broadcast", topo) == 1
    assert bus_bw_GBps("all-gather", topo) == 6.0 and bus_bw_GBps("reduce", topo) == 12.0
    direct = topology_for(load_system("l40s-4x-pcie"))
    assert uplink_senders("all-reduce", direct) == 1 and bus_bw_GBps("all-reduce", direct) == 24.0


def test_duplex_ranks():
    assert duplex("all-reduce", 2) and duplex("all-gather", 2) and duplex("broadcast", 4)
    assert not duplex("broadcast", 2) and not duplex("reduce", 2)


def test_shm_large_message_busbw_is_link_share_times_efficiency():
    t = load_tables()
    eff_shm, eff_pci = (t.section("nccl_tests")[k] for k in ("efficiency_shm", "efficiency_pci"))
    pair = topology_for(load_system("rtx2080ti-2x-pcie"))
    assert nccl_time("all-reduce", GIB, pair).busbw_Bps / 1e9 == pytest.approx(6.0 * eff_shm, rel=0.02)
    assert nccl_time("broadcast", GIB, pair).busbw_Bps / 1e9 == pytest.approx(12.0 * eff_pci, rel=0.02)
    # NCCL's own estimate keeps its graph (1 ch x 5 GB/s) for both
    assert nccl_time("broadcast", GIB, pair).model_time_s == pytest.approx(GIB / 5e9, rel=0.01)
    box = topology_for(load_system("rtx4090-8x-pcie"))
    assert nccl_time("all-reduce", GIB, box).busbw_Bps / 1e9 == pytest.approx(24.0 * eff_shm, rel=0.02)


def test_p2p_beats_shm_on_the_same_box():
    system = load_system("rtx4090-8x-pcie-p2p")
    shm = nccl_time("all-reduce", GIB, topology_for(system))
    p2p = nccl_time("all-reduce", GIB, topology_for(system, p2p_level="SYS"))
    assert p2p.time_s < 0.8 * shm.time_s


def test_two_rank_tree_moves_each_byte_once_per_direction():
    g = NcclGraph(n_channels=2, bw_intra_GBps=12.0, bw_inter_GBps=12.0)
    pair = NcclTopology(n_ranks=2, n_nodes=1, compute_capability=89, ring=g, tree=g, intra_path="PCI")
    quad = NcclTopology(n_ranks=4, n_nodes=1, compute_capability=89, ring=g, tree=g, intra_path="PCI")
    # at 2 GiB, past the tree correction table (read as a curve, it still corrects 1 GiB by 0.94)
    tree2, ring2 = (nccl_time("all-reduce", 2 * GIB, pair, algorithm=a).time_s for a in ("tree", "ring"))
    assert tree2 == pytest.approx(ring2 / 0.92, rel=0.02)  # only NCCL's 0.92 tree derating remains
    tree4 = nccl_time("all-reduce", 2 * GIB, quad, algorithm="tree")
    assert tree4.time_s > 1.9 * tree2                    # inner ranks forward twice
    own2 = nccl_time("all-reduce", 2 * GIB, pair, algorithm="tree").model_time_s
    assert tree4.model_time_s == pytest.approx(own2, rel=0.01)     # NCCL's own estimate is unchanged


def test_host_memory_path_validation():
    with pytest.raises(InputError, match="shm.link_GBps"):
        HostMemoryPath(link_GBps=0.0)
    with pytest.raises(InputError, match="shm.gpus_per_uplink"):
        HostMemoryPath(link_GBps=12.0, gpus_per_uplink=0)


def test_p2p_level_nvl_and_loc():
    import hardware
    from costmodel.nccl import topology_for
    from dpbase.errors import NotApplicableError

    pcie = hardware.load_system("rtx4090-8x-pcie-p2p")
    assert "SHM" not in topology_for(pcie, p2p_level="SYS").description
    assert "SHM" in topology_for(pcie, p2p_level="NVL").description  # NVLink-only P2P: PCIe goes through host memory
    nvswitch = hardware.load_system("dgx-h100")
    assert "SHM" not in topology_for(nvswitch, p2p_level="NVL").description
    with pytest.raises(NotApplicableError):
        topology_for(nvswitch, p2p_level="LOC")
