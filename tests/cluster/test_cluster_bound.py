"""The primitive's lower bound on a cluster (costmodel.cluster.bound), the tree layout's traffic and
dedicated parameter servers inside one node (seed/mission audit, 2026-11-30)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import costmodel
from cli import app
from costmodel.cluster.bound import node_cut_bytes
from costmodel.cluster.mapping import layout, predict_on_cluster
from costmodel.collectives.registry import entries
from costmodel.names import Primitive
from dpbase.errors import DpcostError
from hardware import list_profiles

GB = 1e9
SYSTEMS = sorted(p.name for p in list_profiles("system"))


def _all_on(lay, size_bytes, primitive=None, gamma=0.0):
    for entry in entries():
        if primitive is not None and entry.primitive.value != primitive:
            continue
        variants = ({}, {"colocated": True}) if entry.algorithm.value == "parameter-server" else ({},)
        for params in variants:
            try:
                yield entry, params, predict_on_cluster(entry.primitive.value, entry.algorithm.value, lay,
                                                        size_bytes=size_bytes, gamma_s_per_byte=gamma, **params)
            except DpcostError:  # not applicable on this layout
                continue


@pytest.mark.parametrize("system", SYSTEMS)
def test_no_mapped_algorithm_beats_the_primitives_bound_on_any_bundled_system(system):
    full = layout(system).gpus_per_node
    for nodes in (1, 2, 3):
        for gpn in sorted({1, 2, full}):
            if gpn > full:
                continue
            lay = layout(system, nodes, gpn)
            for size, gamma in ((0.0, 0.0), (8.0, 0.0), (65536.0, 1e-9), (1e9, 0.0), (1e9, 1e-9)):
                for entry, params, p in _all_on(lay, size, gamma=gamma):
                    assert p.time_s >= p.lower_bound_s * (1 - 1e-9), (
                        system, nodes, gpn, f"{entry.primitive.value}/{entry.algorithm.value}", params, size, gamma)


def test_the_bound_is_the_primitives_not_the_algorithms():
    """One bound per (primitive, layout) for every algorithm run on the ranks: recursive halving,
    whose every rank crosses the NICs at once, was bounded at 38.7 ms, 8x the ring's 4.9 ms."""
    lay = layout("dgx-h100", 2)
    bounds = {p.algorithm: p.lower_bound_s for entry, params, p in _all_on(lay, 1e9, "all-reduce")
              if not entry.in_network and not (entry.algorithm.value == "parameter-server" and not params)}
    ring = predict_on_cluster("all-reduce", "ring", lay, size_bytes=1e9)
    assert len(bounds) >= 5 and max(bounds.values()) == pytest.approx(min(bounds.values()))
    assert min(bounds.values()) <= ring.time_s


def test_the_node_cut_sets_the_bound_where_the_nics_are_slow():
    """1 GB all-reduce across two nodes whose network is far slower than NVLink: every node sends
    at least 2(M-1)/M n over its NICs."""
    lay = layout("aws-p3.16xlarge", 2)
    p = predict_on_cluster("all-reduce", "ring", lay, size_bytes=1e9)
    cut_s = node_cut_bytes(Primitive.ALL_REDUCE, 2, lay.gpus_per_node, 1e9, False) / lay.node_network_Bps
    assert p.lower_bound_s >= cut_s and p.lower_bound_s == pytest.approx(cut_s, rel=0.01)


@pytest.mark.parametrize("nodes", [2, 4, 8])
def test_the_tree_layout_moves_what_a_tree_over_every_rank_moves(nodes):
    """NCCL's layout (a tree over the nodes, a chain in each) kept the traffic of the tree over the
    nodes alone: 1 GB sent by the busiest of 16 ranks and 2 GB in all, where any all-reduce moves
    at least 2(N-1)/N n per rank (audit, 2026-11-30)."""
    lay = layout("dgx-h100", nodes)
    n, N = 1e9, lay.ranks
    p = predict_on_cluster("all-reduce", "double-binary-tree", lay, size_bytes=n)
    assert p.bytes_total == pytest.approx(2 * n * (N - 1))  # every rank but the root's sum: up and down
    assert p.bytes_sent_max >= 2 * (N - 1) / N * n and p.bytes_received_max >= 2 * (N - 1) / N * n
    assert p.bytes_sent_max >= 2 * n  # a middle rank of a chain sends n up and n down


def test_the_tree_layout_reduces_along_its_chains():
    """With γ the tree won a ranking on half the reduction it does: each chain rank adds n bytes
    (review, 2026-11-30)."""
    lay = layout("dgx-h100", 2)
    p = predict_on_cluster("all-reduce", "double-binary-tree", lay, size_bytes=1e6, gamma_s_per_byte=1e-9)
    over_nodes_only = predict_on_cluster("all-reduce", "double-binary-tree", layout("dgx-h100", 2, 1), size_bytes=1e6,
                                         gamma_s_per_byte=1e-9)
    assert p.reduction_s == pytest.approx(over_nodes_only.reduction_s + 1e6 * 1e-9)
    assert p.reduction_s >= (lay.ranks - 1) / lay.ranks * 1e6 * 1e-9


def test_the_host_link_is_the_host_memory_paths_rule_and_every_pcie_generation_has_one():
    from costmodel.cluster.hostlink import host_link
    from costmodel.nccl.search import host_link_GBps, host_link_sharers
    from costmodel.nccl.tables import load_tables

    for name in SYSTEMS:
        lay = layout(name)
        system = lay.system
        expected = host_link_GBps(system, load_tables()) * 1e9 / host_link_sharers(system, lay.gpus_per_node)
        assert host_link(lay)[1] == pytest.approx(expected), name  # gb300's pcie6 raised 'link: got pcie6'


def test_the_bound_of_servers_in_one_node_is_their_host_link():
    p = predict_on_cluster("all-reduce", "parameter-server", layout("dgx-h100"), size_bytes=1e9, servers=8)
    from costmodel.cluster.hostlink import host_link

    assert p.lower_bound_s >= 1e9 / host_link(layout("dgx-h100"))[1] and p.lower_bound_s <= p.time_s


def test_dedicated_servers_in_one_node_are_reached_over_the_host_link_not_nvlink():
    dedicated = predict_on_cluster("all-reduce", "parameter-server", layout("dgx-h100"), size_bytes=1e9)
    colocated = predict_on_cluster("all-reduce", "parameter-server", layout("dgx-h100"), size_bytes=1e9,
                                   colocated=True)
    assert dedicated.bottleneck == "pcie5" and colocated.bottleneck == "nvlink4-x18"
    assert dedicated.time_s > 5 * colocated.time_s
    grace = predict_on_cluster("all-reduce", "parameter-server", layout("jupiter-booster"), size_bytes=1e9)
    assert grace.bottleneck == "nvlink-c2c"


def test_compare_shows_the_servers_load_and_the_smallest_bound():
    result = CliRunner().invoke(app, ["compare", "all-reduce", "--ranks", "8", "--size", "4GB", "--alpha", "5us",
                                      "--bandwidth", "25GB/s"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "server/switch" in lines[0]
    server_line = next(line for line in lines if line.startswith("parameter-server"))
    assert "32 GB" in server_line  # N-fold at the one server: the seeds' bottleneck
    # the ranks' bound, 2 (N-1)/N n / B + 3 α; not that of dedicated servers' machine (each rank
    # sends n and receives n: 160 ms), a machine of its own
    assert "lower bound where the ranks reduce: 280 ms" in result.output


def test_an_ideal_prediction_on_a_cluster_says_how_sure_it_is():
    """Mission §7: every prediction carries an interval. The ideal backend's hierarchical and
    parameter-server answers had none; they borrow the textbook model's own out-of-sample band."""
    for algorithm in ("hierarchical", "parameter-server", "ring"):
        p = costmodel.predict("all-reduce", "1GB", algorithm, cluster="dgx-h100", nodes=2, backend="ideal")
        low, high = p.interval_s
        assert low < p.time_s * 1.0001 and high > 2 * p.time_s  # the textbook model runs fast: measured 1-5x


@pytest.mark.parametrize("system", SYSTEMS)
def test_every_mapped_term_is_its_own_and_never_negative(system):
    """Each answer's latency, bandwidth and reduction are the terms the mapping computed, each
    >= 0, adding up to the time, and with γ = 0 the reduction is exactly 0. The tree layout
    derived its reduction as time − α − β, and printed "reduction (γ) -1.267e-11 ns" for a 1 kB
    all-reduce on 19 NVL72 trays (2026-11-30)."""
    full = layout(system).gpus_per_node
    for nodes in (1, 2, 3, 19):
        lay = layout(system, nodes, full)
        for size, gamma in ((1e3, 0.0), (1e3, 1e-9), (3e8, 0.0), (3e8, 1e-9)):
            for entry, params, p in _all_on(lay, size, gamma=gamma):
                where = (system, nodes, f"{entry.primitive.value}/{entry.algorithm.value}", params, size, gamma)
                assert min(p.latency_s, p.bandwidth_s, p.reduction_s) >= 0.0, where
                if gamma == 0.0:
                    assert p.reduction_s == 0.0, where
                assert p.latency_s + p.bandwidth_s + p.reduction_s == pytest.approx(p.time_s, rel=1e-12), where
