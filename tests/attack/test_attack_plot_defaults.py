"""Chart defaults work on every bundled system: rank lists adapt to the cluster (within one
node, then whole nodes), and one rank (a no-op collective) draws instead of crashing."""

from __future__ import annotations

import json

import pytest

from costmodel.plots import Hardware
from hardware import list_profiles
from tests.attack.conftest import safe

SYSTEMS = [p.name for p in list_profiles("system")]


@pytest.mark.parametrize("system", ["dgx-h100", "dgx-a100", *SYSTEMS[:3]])
@pytest.mark.parametrize("kind", ["scaling", "best-map"])
def test_defaults_work_on_bundled_clusters(work, system, kind):
    extra = ["--size", "256MiB"] if kind == "scaling" else ["--min-size", "1KiB", "--max-size", "1MiB"]
    result = safe(["plot", kind, "all-reduce", "--cluster", system, *extra, "-o", "x.html", "--json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["traces"] >= 1


def test_default_rank_counts_fill_a_node_then_whole_nodes():
    assert Hardware(cluster="dgx-h100").default_rank_counts(64) == (2, 4, 8, 16, 32, 64)
    assert Hardware(ranks=8, alpha="1us", bandwidth="1GB/s").default_rank_counts(256) == (2, 4, 8, 16, 32, 64, 128, 256)
    for system in SYSTEMS:
        hw = Hardware(cluster=system)
        per_node = hw.per_node()
        counts = hw.default_rank_counts(256)
        assert all(per_node % c == 0 or c % per_node == 0 for c in counts), (system, counts)
        assert per_node in counts and counts == tuple(sorted(set(counts)))
        for count in counts:
            assert hw.with_ranks(count).total_ranks() == count


def test_within_node_ranks_use_part_of_the_node():
    hw = Hardware(cluster="dgx-h100").with_ranks(2)
    assert hw.total_ranks() == 2 and hw.nodes == 1


@pytest.mark.parametrize("args", [
    ["plot", "scaling", "all-reduce", "--size", "1MB", "--alpha", "5us", "--bandwidth", "25GB/s", "--rank-counts", "1,2"],
    ["plot", "scaling", "all-reduce", "--size", "1MB", "--cluster", "dgx-h100", "--rank-counts", "1,2,8,16"],
    ["plot", "best-map", "all-reduce", "--alpha", "5us", "--bandwidth", "25GB/s", "--rank-counts", "1,2"],
])
def test_one_rank_among_others_draws(work, args):
    result = safe([*args, "-o", "x.html"])
    assert result.exit_code == 0, result.stderr
    assert (work / "x.html").exists()


@pytest.mark.parametrize("args", [
    ["plot", "sweep", "all-reduce", "--ranks", "1", "--alpha", "5us", "--bandwidth", "25GB/s"],
    ["plot", "sweep", "all-reduce", "--cluster", "dgx-h100", "--gpus-per-node", "1"],
])
def test_one_rank_alone_is_refused_in_one_line(work, args):
    """Its chart was one "none" series at 0 s on a log axis (API audit, 2026-11-30): nothing to draw."""
    result = safe([*args, "-o", "x.html"])
    assert result.exit_code == 2 and "one rank has no collective to draw" in result.stderr
    assert not (work / "x.html").exists()
