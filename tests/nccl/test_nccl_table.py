"""nccl_table_s (every layout × every size in one numpy pass) equals nccl_time call by call."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hardware
from costmodel.nccl import load_tables, nccl_time, topology_for
from costmodel.nccl.model import nccl_table_s, nccl_tables_s
from costmodel.nccl.terms import size_index
from dpbase.errors import InputError, NotApplicableError

TABLES = load_tables()
# Powers of two and their neighbours (NCCL's tree correction index changes there), the bins'
# centres 64·√2·2^k and their neighbours (the measured time's curve turns there), sizes below
# 64 bytes (no correction) and above 2^53 (the exact integer path), and 0.
EDGES = sorted({0.0, 1.0, 3.5, 63.0, 64.0, 65.0, 1000.7, 2.0**53 - 1, 2.0**53, 2.0**56 - 1, 2.0**60}
               | {float(2**k + d) for k in range(6, 40, 3) for d in (-1, 0, 1)}
               | {float(int(64 * 2 ** (k + 0.5)) + d) for k in range(0, 30, 3) for d in (-1, 0, 1)})
COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "broadcast", "reduce")
FORCED = ("auto", "ring", "tree", "nvls", "nvls_tree", "collnet_direct", "pat")


def _topologies(system):
    found = []
    for nodes in (1, 2, 8):
        for per_node in sorted({1, min(2, system.gpus_per_node), system.gpus_per_node}):
            try:
                found.append(topology_for(system, nodes, per_node))
            except NotApplicableError:  # RCCL's systems and Kepler: no NCCL tuning model
                return found
    return found


def _scalar(collective, size, topo, algorithm):
    try:
        return nccl_time(collective, size, topo, TABLES, algorithm).time_s
    except NotApplicableError:
        return math.nan


# Every bundled system NCCL's tuning model covers (not RCCL's, not Kepler's).
NCCL_SYSTEMS = [p.name for p in hardware.list_profiles("system") if _topologies(hardware.load_system(p.name))]


def test_most_bundled_systems_are_nccl_systems():
    assert len(NCCL_SYSTEMS) >= 20


@pytest.mark.parametrize("name", NCCL_SYSTEMS)
def test_table_equals_every_scalar_call_on_every_bundled_system(name):
    topologies = _topologies(hardware.load_system(name))
    for collective in COLLECTIVES:
        for algorithm in FORCED:
            table = nccl_table_s(collective, EDGES, topologies, TABLES, algorithm)
            expected = np.array([[_scalar(collective, s, topo, algorithm) for s in EDGES] for topo in topologies])
            assert np.array_equal(table, expected, equal_nan=True), (name, collective, algorithm)


@pytest.mark.parametrize("name", ["dgx-h100", NCCL_SYSTEMS[0], NCCL_SYSTEMS[-1]])
def test_several_requests_in_one_pass_equal_each_alone(name):
    topologies = _topologies(hardware.load_system(name))
    requests = [(collective, algorithm) for collective in COLLECTIVES for algorithm in FORCED]
    together = nccl_tables_s(requests, EDGES, topologies, TABLES)
    assert len(together) == len(requests)
    for (collective, algorithm), table in zip(requests, together):
        alone = nccl_table_s(collective, EDGES, topologies, TABLES, algorithm)
        assert np.array_equal(table, alone, equal_nan=True), (name, collective, algorithm)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=2.0**62, allow_nan=False), min_size=1, max_size=20))
def test_size_index_on_arrays_is_the_integer_index(sizes):
    assert size_index(np.array(sizes)).tolist() == [size_index(s) for s in sizes]


def test_negative_size_is_refused_like_the_scalar_call():
    topo = topology_for(hardware.load_system("dgx-h100"), 2, 8)
    with pytest.raises(InputError, match="size_bytes"):
        nccl_table_s("all-reduce", [1.0, -2.0], [topo], TABLES)


def test_the_measured_time_has_no_step_at_a_power_of_two():
    """NCCL indexes its tree correction by power-of-two bin, so its own estimate jumps there (a
    third at 4 MiB for LL128); the nccl-tests time reads the table as a curve: one byte more is
    within a part per million, on the system where one byte used to make a tree all-reduce 20 %
    faster, while NCCL's estimate keeps its step, and at a bin's centre the two corrections agree."""
    from costmodel.nccl.terms import corrected, interpolated, size_index

    system = hardware.load_system("dgx-a100")
    topo = topology_for(system, 4, 8)
    for size in (4 * 2**20, 2**20, 64 * 2**20):
        below, at = (nccl_time("all-reduce", s, topo, algorithm="tree") for s in (size - 1, size))
        assert at.time_s == pytest.approx(below.time_s, rel=1e-6)
    below, at = (nccl_time("all-reduce", s, topo, algorithm="tree", protocol="LL128")
                 for s in (4 * 2**20 - 1, 4 * 2**20))
    assert at.model_time_s < 0.9 * below.model_time_s
    factors = (0.9, 0.8, 0.6, 0.7)
    for i in range(len(factors)):
        centre = 64 * 2 ** (i + 0.5)
        assert size_index(centre) == i and interpolated(factors, centre) == pytest.approx(corrected(factors, i))
    assert interpolated(factors, 10.0) == 1.0 and interpolated(factors, 2.0**40) == 1.0
