"""NCCL's pass 2 for trees across nodes (search.cc ``ncclTopoCompute``, "increase bwIntra for trees
(2 nodes or collnet)"): bwIntra climbs the ladder to twice bwInter where the node carries it, and
the tuning reads bwIntra on up to two nodes. Published two-node GH200 trees run at 126-159 GB/s
busbw, above the 100 GB/s a ring through four 200 Gb/s NICs allows (docs/validation.md)."""

from __future__ import annotations

import pytest

import hardware
from costmodel.nccl.model import nccl_time
from costmodel.nccl.search import derive_topology, ladder, tree_intra_speed
from costmodel.nccl.tables import load_tables

T = load_tables()
HOPPER = ladder(90, "inter", T)
GiB = 2**30


@pytest.mark.parametrize(("inter", "channels", "total", "path", "ppn", "expected"), [
    (24.0, 4, 370.8, 123.6, 4, 48.0),   # quad GH200: NV6 pairs carry 48, twice the NIC share
    (17.5, 4, 1e9, 1e9, 4, 30.0),       # the ladder's next step (40) would pass 2 x 17.5: NCCL goes on, here not
    (24.0, 16, 370.8, 370.8, 8, 24.0),  # 16 channels x 30 exceed the GPU's NVLink x 8/7: no step
    (24.0, 14, 370.8, 370.8, 8, 30.0),  # 14 x 30 = 420 fit in 370.8 x 8/7 = 423.8 (NCCL's raise for trees)
    (24.0, 4, 370.8, 24.0, 4, 24.0),    # the best GPU-to-GPU path carries no more
    (0.1, 1, 370.8, 370.8, 4, 0.1),     # below NCCL's ladder (dpcost's fallback for slow NICs): unchanged
])
def test_tree_intra_speed(inter, channels, total, path, ppn, expected):
    assert tree_intra_speed(channels, inter, total, path, ppn, HOPPER) == expected


def test_two_node_tree_on_quad_gh200_beats_the_ring_and_stays_within_the_nics():
    system = hardware.load_system("hpe-cray-ex254n")
    two, four = derive_topology(system, nodes=2, tables=T), derive_topology(system, nodes=4, tables=T)
    assert (two.tree.bw_intra_GBps, two.tree.bw_inter_GBps, two.ring.bw_intra_GBps) == (48.0, 24.0, 24.0)
    tree = nccl_time("all-reduce", 8 * GiB, two, T, "tree", "Simple")
    ring = nccl_time("all-reduce", 8 * GiB, two, T, "ring", "Simple")
    assert tree.time_s < ring.time_s
    # each byte crosses the NICs once each way: the tree's algbw stays under the node's four NICs
    assert 8 * GiB / tree.time_s <= system.nics_per_node * system.nic_bandwidth_Bps
    # beyond two nodes NCCL's tuning reads bwInter: the tree is no faster than the ring there
    assert nccl_time("all-reduce", 8 * GiB, four, T, "tree", "Simple").time_s >= \
        nccl_time("all-reduce", 8 * GiB, four, T, "ring", "Simple").time_s
