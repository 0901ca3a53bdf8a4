"""NCCL mode honours the link's transport: sockets are CPU-bound far below line rate (issue 13)."""

from __future__ import annotations

import dataclasses

import hardware
from costmodel.nccl.model import nccl_time
from costmodel.nccl.search import derive_topology
from hardware.profiles import TCP_CATEGORIES

GIB = 2**30


def test_socket_transport_runs_at_the_links_own_efficiency():
    system = hardware.load_system("l40s-tcp-1x")
    assert system.nic_link.category in TCP_CATEGORIES
    topo = derive_topology(system, 2)
    assert topo.net_efficiency == system.nic_link.efficiency == 0.3
    p = nccl_time("all-reduce", GIB, topo)
    line_rate = system.nic_bandwidth_Bps
    assert p.busbw_Bps < 0.35 * line_rate  # kernel TCP: roughly a third of 200 Gb/s at most


def test_the_same_box_over_rdma_is_not_charged_the_socket_rate():
    system = hardware.load_system("l40s-tcp-1x")
    rdma = dataclasses.replace(system, nic_link=hardware.load_link("roce-200"))
    sockets, verbs = derive_topology(system, 2), derive_topology(rdma, 2)
    assert verbs.net_efficiency is None
    assert nccl_time("all-reduce", GIB, verbs).time_s < 0.5 * nccl_time("all-reduce", GIB, sockets).time_s


def test_one_node_ignores_the_nic_transport():
    assert derive_topology(hardware.load_system("l40s-tcp-1x"), 1).net_efficiency is None
