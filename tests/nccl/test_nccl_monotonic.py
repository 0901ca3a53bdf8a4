"""NCCL mode is monotone where physics is (issue 18), with NCCL's choice held fixed.

With the algorithm and protocol forced (NCCL_ALGO / NCCL_PROTO), a larger message never takes
less time, and a faster NIC never makes a call slower. Before the store-and-forward term was
charged per channel, doubling the NIC bandwidth raised the time in 1,339 of these cells: NCCL's
search then picks more channels, and the held chunk was charged at LL's capped total rate.
Where NCCL's *own* choice changes between neighbouring sizes, the answer says so.
"""

from __future__ import annotations

import dataclasses
import functools

import pytest

import hardware
from costmodel.cluster.query import Query, run_query
from costmodel.nccl.model import nccl_time
from costmodel.nccl.search import derive_topology
from costmodel.nccl.tables import load_tables
from costmodel.nccl.tuning import tune_collective

COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "broadcast", "reduce")
SIZES = [2**k for k in range(3, 35)]  # 8 B .. 16 GiB


@functools.cache
def _systems() -> tuple[hardware.System, ...]:
    return tuple(s for s in hardware.list_profiles("system")
                 if s.gpu.vendor == "nvidia" and s.gpu.compute_capability >= 60)


def _applicable(collective, topo, tables):
    return [key for key, cell in tune_collective(collective, topo, tables).items() if cell.applicable]


@pytest.mark.parametrize("nodes", [1, 2, 4])
def test_time_never_falls_as_size_grows_with_the_choice_fixed(nodes):
    tables, checked = load_tables(), 0
    for system in _systems():
        topo = derive_topology(system, nodes, tables=tables)
        for collective in COLLECTIVES:
            for algo, proto in _applicable(collective, topo, tables):
                times = [nccl_time(collective, s, topo, tables, algo, proto).time_s for s in SIZES]
                for small, large, size in zip(times, times[1:], SIZES[1:], strict=False):
                    assert large >= small * (1 - 1e-12), (system.name, nodes, collective, algo, proto, size)
                checked += 1
    assert checked > 100


@pytest.mark.parametrize("nodes", [2, 4])
def test_faster_nics_never_slow_a_call_with_the_choice_fixed(nodes):
    """One exception, bounded: where the faster NICs give a graph more channels at a lower
    per-channel speed (eight HDR NICs on two DGX A100s: the ring's 8 channels become 16, and the
    tree's pass 2 can no longer raise bwIntra from 24 to 30 GB/s within the GPU's NVLink), LL's
    capped rate stays and each step's store-and-forward chunk lands at the slower channel's
    rate. Since the ring's channels across nodes are bounded by the GPUs' NVLink (2026-11-30),
    faster NICs can also regroup the same NVLink into other channels: more at the speed that
    leaves the trees' pass 2 no room (DGX-1 P100: 4 x 12 GB/s rings become 6, the trees' intra
    speed falls from 18 to 12: LL 9 % longer at 16 MiB; DGX-2H from 15 to 12: 12 %), or fewer
    and faster once they cover the GPU's total (OCI's H100 nodes: 16 x 24 GB/s become 8 x 48,
    and LL128's per-channel cap holds them back: up to 42 % at 8 GiB). Both are NCCL's own
    search. Such a call is bounded by what its channels lost: the tree's intra speed ratio, or
    the ring's channel count ratio."""
    tables, checked = load_tables(), 0
    for system in _systems():
        fast = dataclasses.replace(system, nic_bandwidth_Bps=2 * system.nic_bandwidth_Bps)
        slow_topo, fast_topo = derive_topology(system, nodes, tables=tables), derive_topology(fast, nodes, tables=tables)
        for collective in COLLECTIVES:
            both = set(_applicable(collective, slow_topo, tables)) & set(_applicable(collective, fast_topo, tables))
            for algo, proto in sorted(both):
                for size in SIZES[::3]:
                    before = nccl_time(collective, size, slow_topo, tables, algo, proto).time_s
                    after = nccl_time(collective, size, fast_topo, tables, algo, proto).time_s
                    bound = 1 + 1e-12
                    if algo == "tree" and fast_topo.tree.bw_intra_GBps < slow_topo.tree.bw_intra_GBps:
                        bound = slow_topo.tree.bw_intra_GBps / fast_topo.tree.bw_intra_GBps
                    if fast_topo.ring.n_channels < slow_topo.ring.n_channels:
                        bound = max(bound, slow_topo.ring.n_channels / fast_topo.ring.n_channels)
                    assert after <= before * bound, (system.name, nodes, collective, algo, proto, size)
                    checked += 1
    assert checked > 1000


def test_dgx1_four_nodes_more_channels_do_not_lengthen_ll():
    """The diagnosed case: a faster NIC gives DGX-1 at 4 nodes more channels (LL stays capped)."""
    tables = load_tables()
    system = hardware.load_system("dgx-1")
    fast = dataclasses.replace(system, nic_bandwidth_Bps=2 * system.nic_bandwidth_Bps)
    slow_topo, fast_topo = derive_topology(system, 4, tables=tables), derive_topology(fast, 4, tables=tables)
    assert fast_topo.ring.n_channels > slow_topo.ring.n_channels
    for size in (2**18, 2**19, 2**20):
        before = nccl_time("broadcast", size, slow_topo, tables, "ring", "LL").time_s
        after = nccl_time("broadcast", size, fast_topo, tables, "ring", "LL").time_s
        assert after <= before


def test_a_change_of_nccls_choice_is_said():
    """gcp-a3-mega at 4 nodes: NCCL moves broadcast from LL to LL128 between 128 and 256 KiB (its
    GPUDirect-TCPXO NICs sit near the GPUs, so LL128 runs across nodes)."""
    q = dict(primitive="broadcast", cluster="gcp-a3-mega", nodes=4, backend="nccl")
    larger = run_query(Query(size="256KiB", **q))[0]
    smaller = run_query(Query(size="128KiB", **q))[0]
    assert (smaller.protocol, larger.protocol) == ("LL", "LL128")
    assert "NCCL's choice changes" in larger.note and smaller.protocol in larger.note
    if smaller.time_s > larger.time_s:
        assert "smaller message takes longer" in larger.note
    assert smaller.time_s < larger.time_s and "smaller message takes longer" not in larger.note  # the case here


def test_no_note_when_the_choice_holds():
    p = run_query(Query(primitive="all-reduce", cluster="dgx-h100", nodes=2, size="8GiB", backend="nccl"))[0]
    half = run_query(Query(primitive="all-reduce", cluster="dgx-h100", nodes=2, size="4GiB", backend="nccl"))[0]
    assert (p.algorithm, p.protocol) == (half.algorithm, half.protocol)
    assert p.note is None or "NCCL's choice changes" not in p.note


def test_a_change_that_makes_the_smaller_message_slower_is_said():
    """DGX H100, one node: NCCL broadcasts 1 MiB with LL and 2 MiB with Simple, and its own estimate
    picks LL where LL measures slower (35.04 µs against 29.87 µs): the note says so (the test
    above only meets the other case, where the branch that says it never ran)."""
    q = dict(primitive="broadcast", cluster="dgx-h100", nodes=1, backend="nccl")
    larger = run_query(Query(size="2MiB", **q))[0]
    smaller = run_query(Query(size="1MiB", **q))[0]
    assert (smaller.protocol, larger.protocol) == ("LL", "Simple")
    assert smaller.time_s > larger.time_s
    assert "the smaller message takes longer" in larger.note
