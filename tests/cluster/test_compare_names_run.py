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


def test_a_switch_is_echoed_as_given_on_the_cli_and_in_the_api(cli_error):
    """`--no-pipeline` was echoed 'got False' on the CLI; the API's pipelined=False stays False."""
    import costmodel
    from dpbase.errors import InputError

    line = cli_error(["collective", "all-reduce", "-a", "ring", "--no-pipeline", "--ranks", "8", "--size", "1MB",
                      "--alpha", "1us", "--bandwidth", "1GB/s"])
    assert line.startswith("error: --no-pipeline: got True;")
    with pytest.raises(InputError, match=r"^pipelined: got False;"):
        costmodel.predict("all-reduce", "1MB", "ring", ranks=8, alpha_s=1e-6, bandwidth_Bps=1e9, pipelined=False)


def test_a_parameter_beside_an_algorithm_the_primitive_lacks_names_the_algorithm(cli_error):
    """`-a bruck --chunks 2` for an all-reduce on a bare link was called 'NCCL's' (the NCCL-only
    branch caught every name the registry lacks); it is the registry's error, as without --chunks."""
    line = cli_error(["collective", "all-reduce", "-a", "bruck", "--chunks", "2", "--ranks", "8", "--alpha", "1us",
                      "--bandwidth", "1GB/s", "--size", "1MB"])
    assert line.startswith("error: algorithm: got 'bruck'; allowed: for all-reduce: one of")
