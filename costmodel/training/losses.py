"""Scaling losses beyond the collective: what a data-parallel step loses besides the all-reduce.

Six named terms, each with a default and a CLI option (docs/iteration-model.md):

* **host overhead** ``host_overhead_s`` — seconds the framework spends per optimizer step
  only because the step is data-parallel (DDP/Horovod bookkeeping: hooks, negotiation, the
  extra processes' launch and data-loader stalls on a shared host; the gradient's copies into
  the buffers are their own term, :func:`costmodel.training.syncmodes.buffer_copy_seconds`). Paid on
  every synchronised step with more than one rank, never by a lone GPU. The default is fitted
  on the published scaling tables (benchmarks/dp_scaling.py; see docs/validation.md): no
  measurement isolates it.
* **overlap slowdown** ``overlap_slowdown`` — compute running next to communication kernels
  shares SMs and HBM, so every second of communication hidden behind compute lengthens that
  compute by this fraction. Default 0.189: the *average computational slowdown of 18.9 %*
  measured while overlapping on A100/H100/MI250/MI210 (Lee et al. 2025, "Characterizing
  Compute-Communication Overlap in GPU-Accelerated Distributed Deep Learning",
  arXiv:2507.03114, abstract).
* **GPU speed spread** ``speed_cv`` — identical GPUs do not run at identical speed (power
  management, manufacturing): a persistent per-GPU coefficient of variation that, unlike
  per-micro-batch jitter, does not average out over accumulation. The slowest of N sets the
  pace (:mod:`costmodel.training.stragglers`). The spread is one-sided (half-normal): a GPU runs
  at most at its clock ceiling and power management slows each by its own amount below it, so
  the loss grows with N like h_N − h_1 (h_N the expected maximum of N |standard normals|).
  Default 0.0225, fitted with the host overhead on the published scaling tables. It lies inside
  what Sinha et al. 2022 ("Not All GPUs Are Created Equal", SC'22, arXiv:2208.11035) measured
  across the thousands of same-SKU GPUs of a cluster: an average 8 % performance variation
  (slowest to fastest), at most 22 %, with outliers up to 1.5× slower than the median. Read as
  the range of ~2000 half-normal draws (the fastest at the ceiling, the slowest h_2000 ≈ 3.62
  scales below it: ≈ 6.0 σ), that is σ ≈ 0.013 on average and up to 0.037.
* **slow node** ``slow_node_factor`` — one persistently slow rank (thermal throttling, a bad
  NIC, a noisy neighbour) whose compute takes this multiple of the others'; the group waits
  for it. Default 1 (none); Sinha et al. report outliers up to 1.5 × slower than the median.
* **buffer copies** ``buffer_copies`` — the gradient copied into the sync mode's communication
  buffers and back, in HBM, on the compute stream (:func:`costmodel.training.syncmodes.buffer_copy_seconds`:
  DDP's buckets, a flat buffer; nothing to copy for a per-tensor all-reduce or FSDP, and
  Horovod's fusion-buffer copies run on its own stream, not counted). Sourced, not fitted
  (PyTorch's reducer.cpp). On by default; off (``--no-buffer-copies``) for a run that reduces the gradient where
  it lies, e.g. PyTorch DDP with ``gradient_as_bucket_view=True``, which PyTorch documents as
  avoiding "the overhead of copying between gradients and allreduce communication buckets".
* **input pipeline** ``input_rate`` — samples per second one rank's data loader sustains (its
  CPU workers decoding and augmenting, e.g. JPEG decode for vision models). Loaders prefetch
  concurrently with the step, so a step takes at least ``micro-batch × accumulation / rate``;
  the rank waits for the difference. Default None (not limiting: token streams of language
  models are cheap to load); no default can be sourced for a user's CPUs and pipeline, so the
  user gives the rate they measure. NVIDIA's ResNet-50 tables (DeepLearningExamples, PyTorch
  AMP on 8 GPUs) are the documented case where it binds: 6.7-7.0× on 8 GPUs, attributed to
  the CPU data pipeline (SOURCES.md of the scaling development set).
"""

from __future__ import annotations

from dpbase.errors import InputError, check_switch, is_real
from dpbase.limits import MAX_INPUT_RATE, MIN_INPUT_RATE
from dpbase.values import frozen, replace

# HOST_OVERHEAD_S and SPEED_CV: fitted together by benchmarks/dp_scaling.py on all eleven
# publications of published scaling tables (the development set and the two later sets), with
# each table's compute speed from its published baseline; leave-one-publication-out figures in
# docs/validation.md "Data-parallel scaling (training step)" (every fold: 4-8 ms, 2-2.5 %).
HOST_OVERHEAD_S = 0.004
SPEED_CV = 0.0225
# Lee et al. 2025 (arXiv:2507.03114), abstract: average compute slowdown while overlapped.
OVERLAP_SLOWDOWN = 0.189
MAX_SLOW_NODE_FACTOR = 10.0


@frozen(kw_only=True)
class StepLosses:
    """The scaling-loss terms of one configuration (see the module docstring)."""

    host_overhead_s: float = HOST_OVERHEAD_S
    overlap_slowdown: float = OVERLAP_SLOWDOWN
    speed_cv: float = SPEED_CV
    slow_node_factor: float = 1.0
    input_rate: float | None = None  # samples/s one rank's data loader sustains; None: not limiting
    # the gradient copied into the sync mode's buffers and back (syncmodes.buffer_copy_seconds);
    # False: none (PyTorch DDP's gradient_as_bucket_view=True, a framework reducing in place)
    buffer_copies: bool = True

    @classmethod
    def none(cls) -> StepLosses:
        """No loss beyond the collective (the model before these terms existed)."""
        return cls(host_overhead_s=0.0, overlap_slowdown=0.0, speed_cv=0.0, buffer_copies=False)


def _within(field: str, value, low: float, high: float, allowed: str) -> None:
    """``value`` a real number (not a bool, a string or None: they were TypeErrors or read as 1;
    API audit, 2026-12-01) in [low, high]."""
    if not (is_real(value) and low <= value <= high):
        raise InputError(field, value, allowed)


def check(losses: StepLosses) -> StepLosses:
    """The terms, validated (InputError naming the CLI option)."""
    _within("host_overhead", losses.host_overhead_s, 0.0, 10.0, "seconds in [0, 10]")
    _within("overlap_slowdown", losses.overlap_slowdown, 0.0, 1.0, "a fraction in [0, 1]")
    _within("speed_cv", losses.speed_cv, 0.0, 1.0, "a coefficient of variation in [0, 1]")
    _within("slow_node", losses.slow_node_factor, 1.0, MAX_SLOW_NODE_FACTOR,
            f"a slowdown factor in [1, {MAX_SLOW_NODE_FACTOR:g}] (1 = none)")
    check_switch("buffer_copies", losses.buffer_copies)
    if losses.input_rate is not None:
        _within("input_rate", losses.input_rate, MIN_INPUT_RATE, MAX_INPUT_RATE,
                f"samples per second per rank, from {MIN_INPUT_RATE:g} to {MAX_INPUT_RATE:g}")
    # numpy scalars as Python floats (an np.float32 rate made the step a float32)
    return replace(losses, host_overhead_s=float(losses.host_overhead_s), overlap_slowdown=float(losses.overlap_slowdown),
                   speed_cv=float(losses.speed_cv), slow_node_factor=float(losses.slow_node_factor),
                   input_rate=None if losses.input_rate is None else float(losses.input_rate))


def input_seconds(input_rate: float | None, samples_per_step):
    """Seconds one rank's data loader needs for a step's samples (0 when it does not limit);
    elementwise."""
    return 0.0 if input_rate is None else samples_per_step / input_rate


def host_overhead_seconds(host_overhead_s: float, ranks):
    """Per-step framework overhead of data parallelism: 0 for one rank; elementwise on arrays
    (numpy only then: the scalar CLI path stays free of it)."""
    if isinstance(ranks, (int, float)):
        return host_overhead_s if ranks > 1 else 0.0
    import numpy as np

    return np.where(np.asarray(ranks) > 1, host_overhead_s, 0.0)


def interference_seconds(hidden_comm_s, overlap_slowdown: float):
    """Compute lengthened by communication hidden behind it; elementwise."""
    return overlap_slowdown * hidden_comm_s
