"""Nodes used in part (--gpus-per-node below the node's GPUs): separate nodes stay separate NVLink
domains, and a node's few ranks drive only the NICs they reach."""

from __future__ import annotations

import pytest

from costmodel.cluster.api import predict
from costmodel.cluster.mapping import layout


def test_two_nodes_with_one_rank_each_are_two_domains():
    """Two DGX H100 nodes, one GPU each, talk over their NICs: the ideal answer used NVLink
    (2.7 ms, busbw 370 GB/s, bottleneck nvlink4-x18) where one 400 Gb/s NIC carries it."""
    lay = layout("dgx-h100", 2, 1)
    assert not lay.one_domain and layout("dgx-h100", 1, 8).one_domain
    ideal = predict("all-reduce", "1GB", cluster="dgx-h100", nodes=2, gpus_per_node=1, backend="ideal")
    nccl = predict("all-reduce", "1GB", cluster="dgx-h100", nodes=2, gpus_per_node=1)
    assert ideal.bottleneck == nccl.bottleneck == "ib-ndr"
    assert ideal.busbw_Bps < 60e9 and ideal.time_s == pytest.approx(nccl.time_s, rel=0.1)


def test_in_network_reduction_needs_one_domain_or_a_sharp_fabric():
    """NVLS reduces inside one NVLink domain: two nodes used in part are not one."""
    from costmodel.cluster.mapping import applicable
    from costmodel.collectives.registry import get

    assert not applicable(get("all-reduce", "in-network"), layout("dgx-h100", 2, 2))
    assert applicable(get("all-reduce", "in-network"), layout("dgx-h100", 1, 2))


@pytest.mark.parametrize(("system", "per_node", "nics"), [
    ("dgx-h100", 1, 1), ("dgx-h100", 4, 4), ("dgx-h100", 8, 8),   # one NIC per GPU
    ("dgx-1", 1, 1), ("dgx-1", 2, 1), ("dgx-1", 4, 2), ("dgx-1", 8, 4),   # four NICs for eight GPUs
])
def test_a_nodes_ranks_drive_the_nics_they_reach(system, per_node, nics):
    lay = layout(system, 2, per_node)
    one_nic = lay.system.achievable_node_network_Bps / lay.system.nics_per_node
    assert lay.node_network_Bps == pytest.approx(nics * one_nic)
    assert lay.system.nics_reached(per_node) == nics  # the rule NCCL's graph search counts with


def test_one_rank_per_dgx_h100_node_drives_one_400g_nic():
    """In absolute terms: one NDR NIC (50 GB/s) at the link's efficiency, not the node's eight."""
    lay = layout("dgx-h100", 2, 1)
    nic = lay.system.nic_link
    assert lay.node_network_Bps == pytest.approx(50e9 * nic.efficiency / lay.system.spine_oversubscription)
