"""The planner: sweep every configuration, rank, explain (what-ifs, crossovers) and say why.

    grid       the vectorised sweep over layouts × micro-batch × accumulation × bucket × dtype × ZeRO
    comm       collective times for the sweep (ideal or NCCL backend), computed once per plan
    rank       objectives, constraints (deadline, budget), feasibility, rows (collapsed)
    choose     the tie band and the tie-break rules (headroom, bytes sent, ZeRO stage, GPUs)
    economics  price per GPU-hour and power per GPU (hardware/data/prices.toml)
    emit       runnable settings: NCCL environment, PyTorch DDP/FSDP, DeepSpeed JSON
    whatif     the same sweep under changed hardware
    explain    findings: bound, runner-up crossover, what-ifs
    text       findings → sentences
    recommend  ``plan()``: the entry point
"""

from dpbase.lazy import lazy_exports

_EXPORTS = {"Plan": "costmodel.planner.recommend", "plan": "costmodel.planner.recommend"}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
