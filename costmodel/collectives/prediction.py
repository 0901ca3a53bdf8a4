"""The result of one collective prediction, the same record for every backend.

Built by :func:`costmodel.collectives.evaluate.predict_entry` (the α-β-γ model on one link),
completed by :mod:`costmodel.cluster` (where it ran: cluster, nodes, bottleneck) or built
there from NCCL's model (protocol, launch overhead, NCCL's own estimate). Fields a backend
cannot know are ``None`` (NCCL mode has no Chan et al. lower bound; an algorithm with no
registry mirror, such as PAT, has no step or byte counts); ``to_dict`` keeps every key, so a
JSON consumer sees one shape whatever the backend.
"""

from __future__ import annotations

from typing import Any

from dpbase.values import ReadOnlyDict, asdict, field, frozen


@frozen(kw_only=True)
class Prediction:
    """One collective on N ranks of n bytes (nccl-tests' size).

    ``steps`` is the α count (message steps at the busiest endpoint, both levels);
    ``bytes_*`` are per busiest rank (``bytes_aux_max``: busiest dedicated server or switch);
    ``algbw_Bps = size/time`` and ``busbw_Bps = algbw × factor`` as nccl-tests reports them
    (``None`` for one rank, which moves nothing).
    """

    primitive: str
    algorithm: str
    ranks: int
    size_bytes: float
    time_s: float
    latency_s: float
    bandwidth_s: float
    reduction_s: float
    algbw_Bps: float | None
    busbw_Bps: float | None
    backend: str = "ideal"
    protocol: str | None = None
    # traffic (the registry formula's, or the registry mirror of NCCL's algorithm)
    steps: float | None = None
    bytes_sent_max: float | None = None
    bytes_received_max: float | None = None
    bytes_total: float | None = None
    bytes_aux_max: float | None = None
    # the α-β-γ rates used and the algorithm's lower bound (ideal backend)
    lower_bound_s: float | None = None
    alpha_s: float | None = None
    bandwidth_Bps: float | None = None
    gamma_s_per_byte: float | None = None
    params: dict[str, Any] = field(default_factory=dict)
    # where it ran (cluster predictions)
    cluster: str | None = None
    nodes: int | None = None
    gpus_per_node: int | None = None
    bottleneck: str | None = None
    # NCCL mode
    launch_overhead_s: float | None = None
    nccl_model_time_s: float | None = None
    nccl_version: str | None = None
    nccl_choice: bool | None = None
    # realistic backends: 10th–90th percentile of measured/predicted out of sample, times time_s
    interval_s: tuple[float, float] | None = None
    stack_runs: bool | None = None  # whether the cluster's stack (NCCL, RCCL, MPI, Gloo) runs this algorithm
    note: str | None = None
    source: str | None = None  # on a cluster: "measured" (a calibrated curve) or "model"

    def __post_init__(self) -> None:
        if type(self.params) is not ReadOnlyDict:  # frozen all the way down: hashable, not changed in place
            object.__setattr__(self, "params", ReadOnlyDict(self.params))

    @property
    def has_traffic(self) -> bool:
        """Whether step and byte counts are known (not for NCCL algorithms without a registry mirror)."""
        return self.steps is not None

    def to_dict(self) -> dict[str, Any]:
        """Every field, ``None`` where the backend has no value (JSON ``null``)."""
        return asdict(self)
