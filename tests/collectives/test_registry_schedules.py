"""Every registered formula is proved by execution: the schedule moves real data among N
virtual ranks, the result is checked, and its step and byte counts must equal the formula."""

from __future__ import annotations

import math

import pytest

from costmodel.collectives.evaluate import evaluate_terms, resolve
from costmodel.collectives.ops import SCALAR
from costmodel.collectives.registry import entries
from costmodel.collectives.schedules import SCHEDULES, execute, whole_blocks

RANKS = list(range(1, 34)) + [64, 100, 128]
ENTRIES = list(entries())


def variants(entry, N):
    if entry.algorithm.value == "parameter-server":
        for S in sorted({1, 2, 3, N}):
            for colocated in (True, False):
                if colocated and S > N:
                    continue
                for pipelined in (True, False):
                    yield {"servers": S, "colocated": colocated, "pipelined": pipelined, "chunks": 3}
    elif entry.hierarchical:
        for G in (1, 2, 3, 4, 8):
            if N % G == 0:
                yield {"gpus_per_node": G}
                yield {"gpus_per_node": G, "leaders": True}
    elif entry.pipelined:
        for k in (1, 2, 3) if N <= 33 else (1, 3):
            yield {"chunks": k}
    else:
        yield {}


def elements_for(N, params):
    return whole_blocks(N, params)


def test_every_entry_has_a_schedule():
    assert {e.key for e in ENTRIES} == set(SCHEDULES)
    assert len(ENTRIES) >= 33


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: f"{e.primitive.value}-{e.algorithm.value}")
def test_schedule_result_and_counts_equal_formula(entry):
    checked = 0
    for N in RANKS:
        for given in variants(entry, N):
            params = resolve(entry, N, given)
            E = elements_for(N, params)
            run = execute(entry.primitive, entry.algorithm, N, E, params, seed=N)
            assert run.correct, (N, given)
            terms, _, _ = evaluate_terms(entry, N, 8.0 * E, params, (1, 1, 1, 1, 1), SCALAR)
            c = run.counts
            got = {"steps": c.steps, "wire": c.wire, "reduce": c.reduce, "steps_inter": c.steps_inter,
                   "wire_inter": c.wire_inter, "sent_max": c.sent[:N].max(), "recv_max": c.received[:N].max(),
                   "total": c.sent.sum(), "aux_max": run.aux_max}
            for name, value in got.items():
                assert math.isclose(value, getattr(terms, name), rel_tol=1e-9, abs_tol=1e-9), (N, given, name)
            checked += 1
    assert checked >= len(RANKS)
