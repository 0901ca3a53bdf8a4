"""Seed 002 lists the reductions a reduce or all-reduce applies: SUM, MIN, MAX, PROD and LOR. Every
executable schedule now runs with any of them (``run_schedule(..., op="max")``): the one place a
schedule reduces (the machine's delivery) applies the operation, and the result is checked against
the operation folded over the ranks' inputs. Only sum ran before (a seeds audit, 2026-11-30:
"op: got 'max'; allowed: a parameter of binomial reduce: it has none")."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from costmodel.collectives.api import run_schedule
from costmodel.collectives.registry import entries
from costmodel.names import Primitive
from dpbase.errors import InputError

REDUCING = (Primitive.ALL_REDUCE, Primitive.REDUCE, Primitive.REDUCE_SCATTER)
FOLDS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
         "lor": np.logical_or, "land": np.logical_and}


def _cases():
    for entry in entries():
        if entry.primitive in REDUCING:
            params = {"gpus_per_node": 2} if entry.hierarchical else {}
            yield pytest.param(entry.primitive.value, entry.algorithm.value, params,
                               id=f"{entry.primitive.value}-{entry.algorithm.value}")


@pytest.mark.parametrize("op", sorted(FOLDS))
@pytest.mark.parametrize(("primitive", "algorithm", "params"), list(_cases()))
def test_every_reducing_schedule_applies_the_operation(primitive, algorithm, params, op):
    ranks, length = 6, 24
    rng = np.random.default_rng(7)
    values = rng.integers(-3, 4, size=(ranks, length)).astype(float)
    if op in ("lor", "land"):
        values = (values > 0).astype(float)
    if op == "land":  # mostly true, so the and is not all zeros
        values = np.where(rng.random((ranks, length)) < 0.9, 1.0, values)
    out = run_schedule(primitive, algorithm, values.tolist(), op=op, **params)
    folded = functools.reduce(FOLDS[op], list(values)).astype(float)
    want = folded if primitive != "reduce-scatter" else np.split(folded, ranks)[0]
    assert out.correct and out.expected[0] == tuple(want)
    assert out.outputs[0] == tuple(want)  # what the schedule computed (integers: exact in any order)


def test_the_seeds_operations_on_a_worked_example():
    four = [[1, 5, 2, 0], [4, 2, 7, 0], [3, 3, 3, 1], [2, 8, 1, 0]]
    assert run_schedule("all-reduce", "ring", four, op="max").outputs[0] == (4.0, 8.0, 7.0, 1.0)
    assert run_schedule("all-reduce", "ring", four, op="min").outputs[3] == (1.0, 2.0, 1.0, 0.0)
    assert run_schedule("reduce", "binomial", four, op="prod").outputs[0] == (24.0, 240.0, 42.0, 0.0)
    assert run_schedule("all-reduce", "recursive-doubling", four, op="lor").outputs[1] == (1.0, 1.0, 1.0, 1.0)
    # the default is the sum, as before
    assert run_schedule("all-reduce", "ring", four).outputs[0] == (10.0, 18.0, 13.0, 1.0)


def test_the_cost_does_not_depend_on_the_operation():
    four = [[1, 5, 2, 0]] * 4
    runs = [run_schedule("all-reduce", "rabenseifner", four, op=op) for op in FOLDS]
    assert len({(r.steps, r.elements_sent_max, r.elements_received_max) for r in runs}) == 1


@pytest.mark.parametrize(("primitive", "algorithm", "op", "allowed"), [
    ("all-reduce", "ring", "avg", "sum, prod, max, min, lor or land"),
    ("all-reduce", "ring", 3, "sum, prod, max, min, lor or land"),
    ("broadcast", "binomial", "max", "broadcast reduces nothing"),
])
def test_an_operation_it_cannot_apply_is_refused(primitive, algorithm, op, allowed):
    with pytest.raises(InputError) as refused:
        run_schedule(primitive, algorithm, [[1, 2, 3, 4]] * 4, op=op)
    assert refused.value.field == "op" and allowed in str(refused.value)


def test_floating_point_data_is_checked_to_rounding_not_refused():
    """A sum of 0.1, 0.2, 0.3 in another order differs in the last bit: the run was refused as a
    buffer the schedule could not cut."""
    values = [[0.1, 0.7, 0.1, 0.2], [0.2, 0.3, 0.7, 0.1], [0.3, 0.9, 0.2, 0.3], [0.4, 1e-17, 0.3, 0.6]]
    out = run_schedule("all-reduce", "ring", values)
    assert out.correct and out.outputs[0] == pytest.approx((1.0, 1.9, 1.3, 1.2))
    # a sum that cancels: 5.6e-17 one way, 2.8e-17 the other; the tolerance follows the inputs' size
    cancelling = run_schedule("all-reduce", "ring", [[0.1] * 6, [0.2] * 6, [-0.3] * 6])
    assert cancelling.correct and max(map(abs, cancelling.outputs[0])) < 1e-16
    # a wrong result is still caught by run()'s own check: the machine's sum replaced by a max
    from costmodel.collectives.schedules import SCHEDULES, _expected, matches
    from costmodel.collectives.schedules.machine import Machine
    from costmodel.names import Algorithm
    from costmodel.names import Primitive as P

    x = [np.array(v, dtype=float) for v in values]
    wrong = SCHEDULES[(P.ALL_REDUCE, Algorithm.RING)](Machine(4, combine=np.maximum), x, {})
    assert not np.allclose(wrong[0], _expected(P.ALL_REDUCE, x, 4)[0])
    assert not matches(P.ALL_REDUCE, wrong, _expected(P.ALL_REDUCE, x, 4), x)
    right = SCHEDULES[(P.ALL_REDUCE, Algorithm.RING)](Machine(4), x, {})
    assert matches(P.ALL_REDUCE, right, _expected(P.ALL_REDUCE, x, 4), x)


def test_the_production_check_catches_a_result_off_by_more_than_rounding(monkeypatch):
    """run()'s own tolerance, pinned from both sides: a schedule whose result is off by 1e-9 of the
    sum (or that takes the max for a sum) is not correct, and run_schedule refuses it; the same
    schedule left alone is correct (the check could accept anything and every other test pass)."""
    from costmodel.collectives import schedules
    from costmodel.names import Algorithm
    from costmodel.names import Primitive as P

    values = [[0.1] * 4, [0.2] * 4, [-0.3] * 4, [0.4] * 4]
    x = [np.array(v) for v in values]
    ring = schedules.SCHEDULES[(P.ALL_REDUCE, Algorithm.RING)]
    assert schedules.run(P.ALL_REDUCE, Algorithm.RING, x, {}).correct

    def off(machine, data, params):
        return [out * (1 + 1e-9) for out in ring(machine, data, params)]

    monkeypatch.setitem(schedules.SCHEDULES, (P.ALL_REDUCE, Algorithm.RING), off)
    assert not schedules.run(P.ALL_REDUCE, Algorithm.RING, x, {}).correct
    with pytest.raises(InputError):
        run_schedule("all-reduce", "ring", values)

    def maximum(machine, data, params):
        machine.combine = np.maximum
        return ring(machine, data, params)

    monkeypatch.setitem(schedules.SCHEDULES, (P.ALL_REDUCE, Algorithm.RING), maximum)
    integers = [np.array([1.0, 2.0, 3.0, 4.0]) * (rank + 1) for rank in range(4)]  # max 16 is not the sum 40
    assert not schedules.run(P.ALL_REDUCE, Algorithm.RING, integers, {}).correct


def test_non_finite_inputs_are_named_as_such():
    with pytest.raises(InputError) as refused:
        run_schedule("all-reduce", "ring", [[float("nan"), 1.0, 2.0, 3.0]] * 4)
    assert refused.value.field == "inputs" and "finite" in str(refused.value)


def test_chunks_auto_is_the_default_wherever_it_is_typed():
    """``chunks="auto"`` is the formula's default in predict as in sweep and the CLI: predict refused
    it while sweep took it (one reading now, ``query.chunks_of``; a review, 2026-11-30)."""
    import costmodel
    from costmodel.cluster.query import chunks_of

    common = dict(ranks=4, alpha_s="5us", bandwidth_Bps="10GB/s")
    auto = costmodel.predict("all-reduce", "1MB", "parameter-server", chunks=" Auto ", **common)
    assert auto.time_s == costmodel.predict("all-reduce", "1MB", "parameter-server", **common).time_s
    assert costmodel.predict("all-reduce", "1MB", "parameter-server", chunks="4", **common).time_s == \
        costmodel.predict("all-reduce", "1MB", "parameter-server", chunks=4, **common).time_s
    assert chunks_of("AUTO") is None and chunks_of("8") == 8 and chunks_of(3) == 3
    with pytest.raises(InputError) as error:
        chunks_of("many")
    assert error.value.field == "chunks"
