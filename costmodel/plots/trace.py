"""Record a schedule as it runs: who sends which cells to whom in each round, and what each node holds.

A :class:`RecordingMachine` is a :class:`~costmodel.collectives.schedules.machine.Machine` whose rounds
note every ``send`` before passing it on, so the pictures come from the same executor that
proves the formulas. Rank i starts with the value 2**i in every element, so any value a
node holds is the bitmask of the ranks whose data it contains (partial sums included).
Each node is drawn as its main buffer (the first full-length buffer it receives into);
shorter buffers it receives into (a hierarchical shard) are drawn at the offset where their
content sat in the main buffer when they first received.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from costmodel.collectives.schedules.machine import Machine
from dpbase.values import frozen


@frozen
class Message:
    src: int
    dst: int
    cells: tuple[int, ...]       # cells of dst's drawn buffer written
    contributors: tuple[int, ...]  # ranks whose data the payload carries
    reduce: bool
    elements: int


@frozen
class Step:
    level: str                   # "intra" or "inter"
    messages: tuple[Message, ...]
    holdings: np.ndarray         # nodes × cells bitmasks held when the round starts


@frozen
class Trace:
    primitive: str
    algorithm: str
    ranks: int
    nodes: int
    cells: int
    params: dict
    steps: tuple[Step, ...]
    final: np.ndarray            # nodes × cells after the last round


def contributors(mask: float) -> tuple[int, ...]:
    value = int(mask)
    return tuple(i for i in range(value.bit_length()) if value >> i & 1)


class _RecordingRound:
    def __init__(self, inner: Any, machine: "RecordingMachine") -> None:
        self.inner, self.machine, self.messages = inner, machine, []

    def send(self, src: int, dst: int, payload: np.ndarray, target: np.ndarray, index: Any,
             reduce: bool = False) -> None:
        offset = self.machine.register(dst, target)
        cells = tuple(int(c) + offset for c in np.atleast_1d(np.arange(len(target))[index]))
        data = np.atleast_1d(np.asarray(payload))
        mask = int(np.bitwise_or.reduce(data.astype(np.int64))) if data.size else 0
        self.messages.append(Message(src, dst, cells, contributors(mask), reduce, int(data.size)))
        self.inner.send(src, dst, payload, target, index, reduce)


class RecordingMachine(Machine):
    """A Machine that keeps, per round, the messages and the holdings before delivery."""

    def __init__(self, ranks: int, initial: np.ndarray, aux: int = 0, counted_aux: bool = True) -> None:
        super().__init__(ranks, aux=aux, counted_aux=counted_aux)
        self.display = initial.astype(np.int64)
        self.main: dict[int, np.ndarray] = {}
        self.extra: dict[int, list[tuple[np.ndarray, int]]] = {}
        self.steps: list[Step] = []

    def register(self, node: int, target: np.ndarray) -> int:
        """Offset of ``target`` in ``node``'s drawn buffer (registering it on first sight)."""
        width = self.display.shape[1]
        if node not in self.main and len(target) == width:
            self.main[node] = target
        if self.main.get(node) is target:
            return 0
        for array, offset in self.extra.get(node, []):
            if array is target:
                return offset
        now = self.holdings()[node]
        size = len(target)
        starts = [o for o in range(0, width - size + 1, max(size, 1)) if np.array_equal(now[o:o + size], target)]
        offset = starts[0] if starts else 0
        self.extra.setdefault(node, []).append((target, offset))
        return offset

    def holdings(self) -> np.ndarray:
        """What every node holds now (bitmask per cell); cells never written keep their last value."""
        for node, array in self.main.items():
            row = self.display[node]
            self.display[node] = np.where(array != 0, array.astype(np.int64), row)
        for node, arrays in self.extra.items():
            for array, offset in arrays:
                part = self.display[node, offset:offset + len(array)]
                part[:] = np.where(array != 0, array.astype(np.int64), part)
        return self.display.copy()

    @contextmanager
    def round(self, level: str = "intra") -> Iterator[_RecordingRound]:
        with super().round(level) as inner:
            recorder = _RecordingRound(inner, self)
            yield recorder
            before = self.holdings()
        self.steps.append(Step(level, tuple(recorder.messages), before))


def _cells(ranks: int, params: dict) -> int:
    """Elements so every block, half, shard and chunk of every schedule is whole."""
    p2 = 1 << (ranks.bit_length() - 1)
    chunks = int(params.get("chunks", 1))
    parts = (ranks, p2, 2 * chunks, int(params.get("servers", 1)) * chunks, int(params.get("gpus_per_node", 1)))
    return math.lcm(*parts)


def resolved_params(primitive: str, algorithm: str, ranks: int, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with the algorithm's defaults, checked for ``ranks`` (the registry's), and a
    pipeline's optimal chunk count drawn as one chunk: what a recorded schedule runs with."""
    from costmodel.collectives.evaluate import resolve
    from costmodel.collectives.registry import get

    resolved = resolve(get(primitive, algorithm), ranks, params)
    if resolved.get("chunks") == "auto":
        resolved["chunks"] = 1
    return resolved


def record(primitive: str, algorithm: str, ranks: int, params: dict[str, Any]) -> Trace:
    """Run the registered schedule on ``ranks`` ranks, recording every round (``params`` as the
    formula takes them, defaults filled in: the double binary tree's chunks were a KeyError)."""
    from costmodel.collectives.schedules import SCHEDULES, auxiliary_nodes
    from costmodel.names import algorithm_named, primitive_named

    prim, algo = primitive_named(primitive), algorithm_named(algorithm)
    params = resolved_params(prim.value, algo.value, ranks, params)
    cells = _cells(ranks, params)
    block_input = prim.value in ("all-gather", "gather")
    per_rank = cells // ranks if block_input else cells
    x = [np.full(per_rank, float(2**i)) for i in range(ranks)]
    aux, counted = auxiliary_nodes(algo, params)
    initial = np.zeros((ranks + aux, cells), dtype=np.int64)
    for i in range(ranks):
        rooted = prim.value in ("broadcast", "scatter") and i > 0
        start = i * per_rank if block_input else 0
        initial[i, start:start + per_rank] = 0 if rooted else 2**i
    machine = RecordingMachine(ranks, initial, aux=aux, counted_aux=counted)
    SCHEDULES[(prim, algo)](machine, x, params)
    return Trace(primitive=prim.value, algorithm=algo.value, ranks=ranks, nodes=ranks + aux, cells=cells,
                 params=dict(params), steps=tuple(machine.steps), final=machine.holdings())
