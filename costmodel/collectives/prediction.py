"""The result of one prediction: time, its parts and the traffic, as a frozen value."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class Prediction:
    """One collective on N ranks of n bytes (nccl-tests' size) under the α-β-γ model.

    ``steps`` is the α count (message steps at the busiest endpoint, both levels);
    ``bytes_*`` are per busiest rank (``bytes_aux_max``: busiest dedicated server or switch);
    ``algbw_Bps = size/time`` and ``busbw_Bps = algbw × factor`` as nccl-tests reports them.
    """

    primitive: str
    algorithm: str
    ranks: int
    size_bytes: float
    time_s: float
    latency_s: float
    bandwidth_s: float
    reduction_s: float
    steps: float
    bytes_sent_max: float
    bytes_received_max: float
    bytes_total: float
    bytes_aux_max: float
    algbw_Bps: float
    busbw_Bps: float
    lower_bound_s: float
    alpha_s: float
    bandwidth_Bps: float
    gamma_s_per_byte: float
    params: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        extra = data.pop("extra")
        data.update(extra)
        return data
