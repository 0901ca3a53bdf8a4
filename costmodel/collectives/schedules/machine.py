"""A step-synchronous machine of N virtual ranks (plus auxiliary servers/switches) moving numpy data.

A *round* is a set of messages posted at once: payloads are copied when sent and delivered
when the round closes, so every rank reads its pre-round state. The round costs, at its
busiest counted endpoint, max(messages sent, messages received) α and max(bytes sent, bytes
received) β (full duplex), plus the most bytes any counted endpoint reduced, γ.

A *pipeline* of rounds over k chunks is clocked by its busiest rank: each of its rounds costs
that rank's per-chunk messages and bytes (its phase totals divided by k).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Counts:
    """What an executed schedule cost, in the registry's terms (see registry.Terms)."""

    steps: float = 0.0
    wire: float = 0.0
    reduce: float = 0.0
    steps_inter: float = 0.0
    wire_inter: float = 0.0
    sent: np.ndarray = field(default_factory=lambda: np.zeros(0))
    received: np.ndarray = field(default_factory=lambda: np.zeros(0))
    rounds: int = 0


class Machine:
    """Ranks 0..N−1, then auxiliary nodes; ``counted_aux`` aux nodes enter the round maxima."""

    def __init__(self, ranks: int, aux: int = 0, counted_aux: bool = True, combine: Any = np.add) -> None:
        self.ranks = ranks
        self.combine = combine  # the reduction a reducing delivery applies (a numpy ufunc: add, maximum …)
        self.nodes = ranks + aux
        self.counted = self.nodes if counted_aux else ranks
        self.counts = Counts(sent=np.zeros(self.nodes), received=np.zeros(self.nodes))
        self._pipeline: _Phase | None = None

    @contextmanager
    def round(self, level: str = "intra") -> Iterator["_Round"]:
        r = _Round(self.nodes, self.combine)
        yield r
        r.deliver()
        self._account(r, level)

    @contextmanager
    def pipeline(self, chunks: int, level: str = "intra") -> Iterator[None]:
        self._pipeline = _Phase(self.nodes, chunks)
        yield
        phase, self._pipeline = self._pipeline, None
        c = self.counts
        per_chunk = phase.traffic[: self.counted] / chunks
        msgs = phase.messages[: self.counted] / chunks
        red = phase.reduced[: self.counted] / chunks
        steps, wire = phase.rounds * msgs.max(initial=0), phase.rounds * per_chunk.max(initial=0)
        c.reduce += phase.rounds * red.max(initial=0)
        self._add_level(level, steps, wire)

    def _account(self, r: "_Round", level: str) -> None:
        c = self.counts
        c.sent += r.bytes_out
        c.received += r.bytes_in
        c.rounds += 1
        if self._pipeline is not None:
            self._pipeline.add(r)
            return
        k = self.counted
        steps = np.maximum(r.msgs_out[:k], r.msgs_in[:k]).max(initial=0)
        wire = np.maximum(r.bytes_out[:k], r.bytes_in[:k]).max(initial=0)
        c.reduce += r.reduced[:k].max(initial=0)
        self._add_level(level, steps, wire)

    def _add_level(self, level: str, steps: float, wire: float) -> None:
        if level == "inter":
            self.counts.steps_inter += steps
            self.counts.wire_inter += wire
        else:
            self.counts.steps += steps
            self.counts.wire += wire


class _Round:
    def __init__(self, nodes: int, combine: Any = np.add) -> None:
        self.combine = combine
        self.pending: list[tuple[np.ndarray, np.ndarray, Any, bool]] = []
        self.bytes_out, self.bytes_in = np.zeros(nodes), np.zeros(nodes)
        self.msgs_out, self.msgs_in = np.zeros(nodes), np.zeros(nodes)
        self.reduced = np.zeros(nodes)

    def send(self, src: int, dst: int, payload: np.ndarray, target: np.ndarray, index: Any,
             reduce: bool = False) -> None:
        """Post ``payload`` (copied now) from src to dst: on delivery ``target[index]`` is set, or
        combined with it by the machine's reduction (the sum unless another was asked)."""
        data = np.array(payload, copy=True)
        self.pending.append((data, target, index, reduce))
        self.bytes_out[src] += data.nbytes
        self.bytes_in[dst] += data.nbytes
        self.msgs_out[src] += 1
        self.msgs_in[dst] += 1
        if reduce:
            self.reduced[dst] += data.nbytes

    def deliver(self) -> None:
        for data, target, index, reduce in self.pending:
            if reduce:
                target[index] = self.combine(target[index], data)
            else:
                target[index] = data


class _Phase:
    def __init__(self, nodes: int, chunks: int) -> None:
        self.chunks = chunks
        self.rounds = 0
        self.traffic = np.zeros(nodes)
        self.messages = np.zeros(nodes)
        self.reduced = np.zeros(nodes)
        self._out, self._in = np.zeros(nodes), np.zeros(nodes)
        self._mout, self._min = np.zeros(nodes), np.zeros(nodes)

    def add(self, r: _Round) -> None:
        self.rounds += 1
        self._out += r.bytes_out
        self._in += r.bytes_in
        self._mout += r.msgs_out
        self._min += r.msgs_in
        self.reduced += r.reduced
        self.traffic = np.maximum(self._out, self._in)
        self.messages = np.maximum(self._mout, self._min)
