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
