"""Every algorithm `compare` lists can be asked for by that name in `collective`, with the
same answer (NCCL's names included: its ring broadcast, PAT)."""

from __future__ import annotations

import pytest

from costmodel.cluster.query import Query, run_query

CASES = [("dgx-h100", 1), ("dgx-h100", 2), ("dgx-a100", 2), ("dgx-spark", 2), ("l40s-4x-pcie", 1)]
PRIMITIVES = ("all-reduce", "all-gather", "reduce-scatter", "broadcast", "reduce")


@pytest.mark.parametrize(("system", "nodes"), CASES)
@pytest.mark.parametrize("backend", ["nccl", "ideal"])
def test_each_listed_algorithm_runs_by_its_name(system, nodes, backend):
    for primitive in PRIMITIVES:
        listed = run_query(Query(primitive=primitive, algorithm="all", size="64MB", cluster=system, nodes=nodes,
                                 backend=backend))
        assert listed
        for each in listed:
            alone = run_query(Query(primitive=primitive, algorithm=each.algorithm, size="64MB", cluster=system,
                                    nodes=nodes, backend=backend))
            assert alone[0].time_s == pytest.approx(each.time_s), (primitive, each.algorithm)


def test_errors_name_the_value_as_given():
    """--nodes 999999999 was reported as 'ranks: got 7999999992', --bandwidth 0GB/s as 'got 0.0'."""
    from dpbase.errors import InputError

    with pytest.raises(InputError, match=r"^nodes: got 999999999; allowed: at most 134,217,728 nodes of 8 GPUs"):
        run_query(Query(primitive="all-reduce", size="1MB", cluster="dgx-h100", nodes=999999999))
    with pytest.raises(InputError, match=r"^bandwidth: got '0GB/s'; allowed: a bandwidth > 0"):
        run_query(Query(primitive="all-reduce", size="1MB", ranks=8, alpha="1us", bandwidth="0GB/s"))
