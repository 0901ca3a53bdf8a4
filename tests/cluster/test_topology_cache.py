"""NCCL topologies are cached by the system's value, never by its name.

A user TOML that reuses a bundled name (here: a DGX H100 whose NICs run at 50 Gb/s instead of 400)
must get its own topology and a slower multi-node all-reduce, in the same process as the bundled one.
"""

from __future__ import annotations

import dataclasses

import hardware
from costmodel.cluster.comm import CommModel
from costmodel.cluster.mapping import Layout
from costmodel.cluster.query import Query, run_query

GIB = 2**30


def _slow_nics(system: hardware.System) -> hardware.System:
    return dataclasses.replace(system, nic_bandwidth_Bps=system.nic_bandwidth_Bps / 8)


def test_same_name_different_value_gets_its_own_topology():
    bundled = hardware.load_system("dgx-h100")
    user = _slow_nics(bundled)
    assert user.name == bundled.name and user != bundled
    fast = CommModel(Layout(bundled, 2, 8), backend="nccl").time_s("all-reduce", GIB)
    slow = CommModel(Layout(user, 2, 8), backend="nccl").time_s("all-reduce", GIB)
    again = CommModel(Layout(bundled, 2, 8), backend="nccl").time_s("all-reduce", GIB)
    assert slow > 3 * fast  # NICs 8x slower: the network term grows several-fold
    assert again == fast


def test_user_toml_reusing_a_bundled_name_through_the_cli_query(tmp_path):
    bundled = hardware.load_system("dgx-h100")
    text = hardware.to_toml(_slow_nics(bundled))
    path = tmp_path / "dgx-h100.toml"
    path.write_text(text, encoding="utf-8")
    args = dict(primitive="all-reduce", size=GIB, nodes=2, backend="nccl")
    first = run_query(Query(cluster="dgx-h100", **args))[0].time_s
    mine = run_query(Query(cluster=str(path), **args))[0].time_s
    assert mine > 3 * first
    assert run_query(Query(cluster="dgx-h100", **args))[0].time_s == first


def test_an_equal_copy_shares_the_search_and_the_planner_uses_the_same_cache(monkeypatch):
    from costmodel.cluster import backends
    from costmodel.cluster.backends import nccl_topology
    from costmodel.cluster.mapping import LayoutCache
    from costmodel.planner.comm import CommCache

    monkeypatch.setattr(backends, "_TOPOLOGIES", LayoutCache(64))  # empty: other tests fill and evict it

    bundled = hardware.load_system("dgx-h100")
    copy = dataclasses.replace(bundled)
    assert copy is not bundled and copy == bundled
    first = nccl_topology(Layout(bundled, 2, 8))
    assert nccl_topology(Layout(copy, 2, 8)) is first  # found by value, not rebuilt
    assert CommCache(copy, "nccl")._topology(Layout(copy, 2, 8)) is first  # the planner's searches too
    user = _slow_nics(bundled)
    assert nccl_topology(Layout(user, 2, 8)) is not first
    assert nccl_topology(Layout(user, 2, 8)).ring != first.ring


def test_the_cache_holds_at_most_its_size_and_drops_the_oldest_answer_first():
    from costmodel.cluster.mapping import LayoutCache

    bundled = hardware.load_system("dgx-h100")
    variants = [dataclasses.replace(bundled, nic_bandwidth_Bps=bundled.nic_bandwidth_Bps * (i + 1)) for i in range(5)]
    cache, built = LayoutCache(3), []

    def build(lay):
        built.append(lay.system.nic_bandwidth_Bps)
        return lay.system.nic_bandwidth_Bps

    for system in variants:  # one name and layout: every variant under one key
        assert cache.get(Layout(system, 2, 8), build) == system.nic_bandwidth_Bps
    assert len(built) == 5 and sum(len(v) for v in cache._by_value.values()) == 3
    copies = [dataclasses.replace(v) for v in variants]  # equal values, new objects: no identity shortcut
    assert [cache.get(Layout(c, 2, 8), build) for c in copies[2:]] == [v.nic_bandwidth_Bps for v in variants[2:]]
    assert len(built) == 5  # the three newest were kept
    assert cache.get(Layout(copies[0], 2, 8), build) == variants[0].nic_bandwidth_Bps
    assert len(built) == 6  # the oldest had been dropped: built again
    assert sum(len(v) for v in cache._by_value.values()) == 3
