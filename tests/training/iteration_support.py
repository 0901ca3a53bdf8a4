"""Shared helpers for the iteration-model tests: a small GPU and alpha-beta comm lambdas."""

from __future__ import annotations

from dataclasses import dataclass, field

A100_LIKE_PEAKS = {"fp32": 19.5e12, "tf32": 156e12, "bf16": 312e12, "fp16": 312e12}


@dataclass(frozen=True)
class SmallGpu:
    """Duck-typed stand-in for hardware.Gpu (A100-80GB-like numbers)."""

    memory_bytes: float = 80e9
    hbm_bandwidth_Bps: float = 2.0e12
    peak_flops: dict = field(default_factory=lambda: dict(A100_LIKE_PEAKS))
    default_mfu: float = 0.5
    arch: str = "ampere"
    name: str = "small-gpu"


def ring_comm(ranks: int, bandwidth_Bps: float = 25e9, latency_s: float = 5e-6):
    """Ideal ring: all-reduce 2(N-1)(α + n/(Nβ⁻¹)); all-gather/reduce-scatter half of it."""

    def comm(primitive: str, size_bytes: float) -> float:
        steps = 2 * (ranks - 1) if primitive == "all-reduce" else ranks - 1
        return steps * (latency_s + size_bytes / ranks / bandwidth_Bps)

    return comm


def reducer_comm(ranks: int, bandwidth_Bps: float):
    """One rank reduces for all (seed 002): it receives (N-1) buffers over its link."""

    def comm(primitive: str, size_bytes: float) -> float:
        return (ranks - 1) * size_bytes / bandwidth_Bps

    return comm
