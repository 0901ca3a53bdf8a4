"""Executable schedules: every registered algorithm run step by step on N virtual ranks.

:func:`execute` runs one (primitive, algorithm) on random integer-valued data, checks the
result is right (every rank holds the sum, the gathered blocks in order, the transposed
blocks …) and returns the counted steps and bytes, which the tests compare with the
registry's formula for the same N, n and parameters.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from costmodel.collectives.schedules import aggregators, flat, recursive, trees
from costmodel.collectives.schedules.machine import Counts, Machine
from costmodel.names import REDUCING_PRIMITIVES
from costmodel.names import Algorithm as A
from costmodel.names import Primitive as P
from dpbase.values import frozen

SCHEDULES = {
    (P.ALL_REDUCE, A.RING): flat.ring_allreduce,
    (P.ALL_REDUCE, A.DOUBLE_BINARY_TREE): trees.dbt_allreduce,
    (P.ALL_REDUCE, A.RECURSIVE_DOUBLING): recursive.rd_allreduce,
    (P.ALL_REDUCE, A.RABENSEIFNER): recursive.rabenseifner_allreduce,
    (P.ALL_REDUCE, A.BINOMIAL): trees.binomial_allreduce,
    (P.ALL_REDUCE, A.PARAMETER_SERVER): aggregators.ps_allreduce,
    (P.ALL_REDUCE, A.DIRECT): flat.direct_allreduce,
    (P.ALL_REDUCE, A.TWO_SHOT): flat.two_shot_allreduce,
    (P.ALL_REDUCE, A.IN_NETWORK): aggregators.in_network_allreduce,
    (P.ALL_REDUCE, A.HIERARCHICAL): aggregators.hierarchical_allreduce,
    (P.ALL_GATHER, A.RING): flat.ring_allgather,
    (P.ALL_GATHER, A.RECURSIVE_DOUBLING): recursive.rd_allgather,
    (P.ALL_GATHER, A.BRUCK): recursive.bruck_allgather,
    (P.ALL_GATHER, A.DIRECT): flat.direct_allgather,
    (P.ALL_GATHER, A.GATHER_BROADCAST): trees.gather_broadcast_allgather,
    (P.REDUCE_SCATTER, A.RING): flat.ring_reduce_scatter,
    (P.REDUCE_SCATTER, A.RECURSIVE_HALVING): recursive.rh_reduce_scatter,
    (P.REDUCE_SCATTER, A.PAIRWISE): flat.pairwise_reduce_scatter,
    (P.REDUCE_SCATTER, A.DIRECT): flat.direct_reduce_scatter,
    (P.BROADCAST, A.BINOMIAL): trees.binomial_broadcast,
    (P.BROADCAST, A.SCATTER_ALLGATHER): trees.scatter_allgather_broadcast,
    (P.BROADCAST, A.PIPELINED_CHAIN): flat.chain_broadcast,
    (P.BROADCAST, A.DOUBLE_BINARY_TREE): trees.dbt_broadcast,
    (P.REDUCE, A.BINOMIAL): trees.binomial_reduce,
    (P.REDUCE, A.RABENSEIFNER): recursive.rabenseifner_reduce,
    (P.REDUCE, A.PIPELINED_CHAIN): flat.chain_reduce,
    (P.ALL_TO_ALL, A.PAIRWISE): flat.pairwise_alltoall,
    (P.ALL_TO_ALL, A.BRUCK): recursive.bruck_alltoall,
    (P.ALL_TO_ALL, A.DIRECT): flat.direct_alltoall,
    (P.SCATTER, A.LINEAR): flat.linear_scatter,
    (P.SCATTER, A.BINOMIAL): trees.binomial_scatter,
    (P.GATHER, A.LINEAR): flat.linear_gather,
    (P.GATHER, A.BINOMIAL): trees.binomial_gather,
    (P.SEND_RECV, A.DIRECT): flat.send_recv,
}

# The reductions a schedule applies where it reduces (seed 002: SUM, MIN, MAX, PROD, LOR; MPI's
# names, LAND beside LOR), each a numpy ufunc the machine's delivery and the expected result fold with.
OPS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum, "lor": np.logical_or,
       "land": np.logical_and}

# Primitives whose input per rank is one block of the full buffer (n/N), not the full buffer.
_BLOCK_INPUT = {P.ALL_GATHER, P.GATHER}


@frozen(slots=False)
class Execution:
    counts: Counts
    correct: bool
    size_bytes: float
    aux_max: float


def _expected(primitive: P, x: list[np.ndarray], N: int, combine: Any = np.add) -> list[np.ndarray]:
    total = functools.reduce(combine, x).astype(float)
    split = lambda a: np.split(a, N)  # noqa: E731
    table = {
        P.ALL_REDUCE: lambda: [total] * N,
        P.REDUCE: lambda: [total],
        P.REDUCE_SCATTER: lambda: split(total),
        P.BROADCAST: lambda: [x[0]] * N,
        P.SCATTER: lambda: split(x[0]),
        P.ALL_GATHER: lambda: [np.concatenate(x)] * N,
        P.GATHER: lambda: [np.concatenate(x)],
        P.ALL_TO_ALL: lambda: [np.concatenate([split(x[j])[i] for j in range(N)]) for i in range(N)],
        P.SEND_RECV: lambda: [x[(i - 1) % N] for i in range(N)] if N > 1 else [np.zeros_like(x[0])],
    }
    return table[primitive]()


def auxiliary_nodes(algorithm: A, params: dict[str, Any]) -> tuple[int, bool]:
    """(auxiliary nodes, whether their load counts): dedicated servers count, a switch port does not."""
    if algorithm is A.IN_NETWORK:
        return 1, False
    if algorithm is A.PARAMETER_SERVER and not params.get("colocated"):
        return int(params.get("servers", 0)), True
    return 0, True


def whole_blocks(ranks: int, params: dict[str, Any]) -> int:
    """The buffer lengths (elements) every schedule cuts evenly are multiples of this: N blocks,
    the largest power of two below N (recursive halving folds the rest in), two trees' halves or S
    servers' shares in k chunks each, and G ranks per node."""
    import math

    p2 = 1 << (ranks.bit_length() - 1)
    k, servers, per_node = (int(params.get(name) or 1) for name in ("chunks", "servers", "gpus_per_node"))
    return math.lcm(ranks, p2, 2 * k * servers, per_node)


@frozen(slots=False)
class ScheduleRun:
    """One schedule run on the user's data: every rank's output and what the run moved, counted in
    elements (the registry's bytes divided by the element size)."""

    outputs: tuple[tuple[float, ...], ...]
    expected: tuple[tuple[float, ...], ...]
    correct: bool
    steps: int
    elements_sent_max: float
    elements_received_max: float


def run(primitive: P, algorithm: A, inputs: list[np.ndarray], params: dict[str, Any], op: str = "sum") -> ScheduleRun:
    """Run the schedule on ``inputs`` (one array per rank: the whole buffer, or a gather's and an
    all-gather's own block) and return every rank's output beside what the primitive means, with
    the reduction ``op`` (:data:`OPS`; a logical one reads a non-zero input as true). The user's
    numbers are compared to rounding: a sum in another order differs in its last bits, by up to
    N rounding errors of the largest partial sum (0.1 + 0.2 − 0.3 is 5.6e-17 one way, 2.8e-17 the
    other), so the tolerance scales with the sum of the inputs' magnitudes."""
    ranks = len(inputs)
    x = [np.asarray(a, dtype=float) for a in inputs]
    if op in ("lor", "land"):
        x = [(a != 0).astype(float) for a in x]
    aux, counted = auxiliary_nodes(algorithm, params)
    machine = Machine(ranks, aux=aux, counted_aux=counted, combine=OPS[op])
    result = SCHEDULES[(primitive, algorithm)](machine, x, params)
    expected = _expected(primitive, x, ranks, OPS[op])
    correct = matches(primitive, result, expected, x)
    c, size = machine.counts, x[0].itemsize
    return ScheduleRun(outputs=tuple(tuple(map(float, out)) for out in result[:len(expected)]),
                       expected=tuple(tuple(map(float, out)) for out in expected), correct=correct,
                       steps=int(c.steps + c.steps_inter), elements_sent_max=float(c.sent[:ranks].max()) / size,
                       elements_received_max=float(c.received[:ranks].max()) / size)


def matches(primitive: P, result: list[np.ndarray], expected: list[np.ndarray], inputs: list[np.ndarray]) -> bool:
    """:func:`run`'s check: every rank's output is what the primitive means, to rounding. A sum in
    another order errs by up to N rounding errors of the largest sum of magnitudes (0 where nothing
    is reduced)."""
    atol = 4 * len(inputs) * np.finfo(float).eps * float(np.max(np.abs(np.stack(inputs)).sum(axis=0))) \
        if primitive in REDUCING_PRIMITIVES else 0.0
    return len(result) >= len(expected) and all(
        np.shape(result[i]) == np.shape(expected[i]) and np.allclose(result[i], expected[i], rtol=1e-12, atol=atol)
        for i in range(len(expected)))


def execute(primitive: P, algorithm: A, ranks: int, elements: int, params: dict[str, Any],
            seed: int = 0) -> Execution:
    """Run the schedule on ``ranks`` ranks holding ``elements`` float64 values each (n = 8·elements)."""
    rng = np.random.default_rng(seed)
    per_rank = elements // ranks if primitive in _BLOCK_INPUT else elements
    x = [rng.integers(-1000, 1000, per_rank).astype(float) for _ in range(ranks)]
    aux, counted = auxiliary_nodes(algorithm, params)
    machine = Machine(ranks, aux=aux, counted_aux=counted)
    result = SCHEDULES[(primitive, algorithm)](machine, x, params)
    expected = _expected(primitive, x, ranks)
    correct = len(result) >= len(expected) and all(
        np.array_equal(result[i], expected[i]) for i in range(len(expected)))
    c = machine.counts
    aux_max = float(np.maximum(c.sent[ranks:], c.received[ranks:]).max(initial=0))
    return Execution(counts=c, correct=correct, size_bytes=8.0 * elements, aux_max=aux_max)
