"""A transformer's default MFU from its width: matmuls at the GPU's measured ceiling, the rest of
the step as HBM traffic that grows with the width.

A transformer layer's matmuls do ~72·h² training FLOPs per token (24·h² forward, Megatron-LM's
count); the rest of its work (norms, activations, residual adds, dropout, mixed precision's casts, and
the gaps between their short kernels; the attention scores, which grow with the sequence, are
their own term, costmodel.training.attention) passes over the token's h-wide
activations a fixed number of times, so it costs ∝ h per token and, per FLOP, ∝ 1/h. A training
FLOP of a 16-bit step then takes

    t = 1 / (peak · ceiling)  +  κ / (h · B)        seconds,

``peak`` the GPU's dense 16-bit peak, ``ceiling`` the largest matmul rate measured on it as a
share of that peak (Bekman's MAMF, ml-engineering; ``hardware.Gpu.matmul_ceiling``, A100 SXM's
0.859 where none was measured), ``B`` its HBM bandwidth, ``h`` the model's width and ``κ`` the
non-matmul traffic in bytes per FLOP at width 1. The MFU is ``1 / (peak · t)``: a wide model
runs near the ceiling, a narrow one is bound by HBM. On an A100 SXM 40GB at κ = 10.5: 19 % at
h = 512 (Transformer-XL base), 31 % at 1,024 (BERT-large), 60 % at 4,096, 70 % at 8,192; the
same models on a V100 run at 25, 39, 66 and 75 % of its lower peak, on an H100 at 14, 23, 50
and 61 %. A width outside the fitted ones (:data:`FITTED_WIDTHS`) is held at the nearer end.
fp32, TF32 and fp8 runs carry the 16-bit step over as the other defaults are carried, with
matmuls at the GPU's own ceiling and a 4-byte step's non-matmul seconds
:data:`FULL_PRECISION_TRAFFIC_RATIO` times the mixed-precision step's
(:func:`costmodel.training.iteration.mfu`).

This replaces, for a model with a transformer's shape, the one MFU per GPU that Megatron-LM's and
Llama 3's runs gave (30 % on V100, 45 % on A100, 40 % on Hopper): those came from models 1.5k-16k
wide, so narrower ones ran faster in dpcost than on any published GPU (Transformer-XL base on an
A100 at 1.6x its published speed) and the widest slower. CNNs keep their measured tables; a
model without a width (a model file giving FLOPs and parameters only) keeps the GPU's default.

κ is one constant, fitted on the published baseline (mostly single-GPU) throughputs of the
transformer tables of the scaling publications (eight of the eleven have such tables;
benchmarks/dp_scaling.py; docs/validation.md, "Compute speed"), each publication predicted with
κ fitted without it: every fold lands on 9.5-10.5, all of them on 10.5. It is an effective constant, not a count: 10.5 bytes per FLOP at width 1 is
~756·h bytes per token and layer, ~22x the 34·h bytes of activations a layer keeps for backward
(Korthikanti et al. 2022), because it also holds what a stream of short kernels loses between
them. The ratio measured / predicted baseline throughput, leave-one-publication-out, is
1.16x (median; 65 % of tables within 1.25x) against 1.26x (48 %) for the per-GPU MFU; on the
four outside publications with transformer tables (46 tables; nothing fitted on them), 1.13x
(78 %) against 1.25x (50 %). Until fp32's non-matmul seconds were counted
(:data:`FULL_PRECISION_TRAFFIC_RATIO`; twice the mixed-precision step's before) κ was 9.5 and
these were 1.20x (59 %) and 1.16x (72 %). The form (1/h) was chosen after looking at the development set and
the first later set; the outside tables are its only clean test.
"""

from __future__ import annotations

# bytes of non-matmul HBM traffic per training FLOP, at width 1 (see the module docstring)
ELEMENTWISE_TRAFFIC = 10.5
# The non-matmul bytes per token of one unfused pre-LN transformer layer in PyTorch, in units of
# its width h (reads plus writes; attention scores apart, costmodel.training.attention): (what,
# under autocast, all fp32, all 16-bit). Autocast (PyTorch's op reference) runs layer_norm in
# float32 and matmuls in float16; other ops run in their inputs' type, an fp32 residual plus an
# fp16 branch in fp32 by ordinary type promotion: the residual stream stays at 4 bytes, each
# matmul's input is cast to 2, and each cast has a backward.
LAYER_TRAFFIC_PER_H = (
    ("layer norms (2), forward", 16, 16, 8),
    ("casts to 16 bits before the QKV and first MLP matmuls", 12, 0, 0),
    ("dropouts (2), forward", 8, 16, 8),
    ("residual adds (2), forward", 20, 24, 12),
    ("GELU over 4h, forward", 16, 32, 16),
    ("residual gradients cast to 16 bits for the branches (2)", 12, 0, 0),
    ("dropouts (2), backward", 8, 16, 8),
    ("GELU, backward", 24, 48, 24),
    ("16-bit gradients cast back to 32 bits for the norms (2)", 12, 0, 0),
    ("layer norms (2), backward", 24, 24, 12),
    ("residual gradients summed (2)", 24, 24, 12),
)
# A 4-byte step's (fp32, TF32) non-matmul seconds per FLOP over a mixed-precision step's, the same
# model on the same GPU: counted, not fitted, 200 / 176 = 1.14. Were every value of a
# mixed-precision step 16-bit it would be 2 (200 / 100), the activations' widths. It is one point
# of a range: the bias gradients, dropout masks and head-permute copies left out raise it to
# ~1.24, autocast's casts of the weights (per token ∝ h² / tokens a micro-batch) lower it to
# ~0.95 at BERT-large's 4k tokens, a stack that keeps its memory-bound work 16-bit (apex's O2,
# NVIDIA's fused BERT) is nearer 2 (docs/iteration-model.md, "fp32's non-matmul seconds"). Used
# over the width roofline's step only (iteration._mfu_for_dtype): a GPU's one default, from
# 16-bit runs, keeps the widths' 2.
FULL_PRECISION_TRAFFIC_RATIO = (sum(fp32 for _, _, fp32, _ in LAYER_TRAFFIC_PER_H)
                                / sum(mixed for _, mixed, _, _ in LAYER_TRAFFIC_PER_H))
# a bound on what a user may set: at 1,000 an A100 40GB runs a model 512 wide at 0.25 % of its peak
MAX_ELEMENTWISE_TRAFFIC = 1000.0
# The widths the constant was fitted on: Transformer-XL base (512) to MPT-70B (8,192). A model
# outside them is timed at the nearer end: within llm-foundry's MPT tables (one stack, 768 to
# 8,192 wide) the predicted ÷ published speed rises from 0.64 to 1.08-1.49 with the width, so
# the 1/h law is steeper there than the tables say and not extrapolated (a 16,384-wide model would
# run at 70 % of an H100, where the published runs of that size report 38-43 %).
FITTED_WIDTHS = (512, 8192)
# what a traffic given beside an MFU (--mfu, or --rate's) is told, by check_traffic and the commands
BESIDE_A_GIVEN_SPEED = "left out with --mfu or --rate (they give the compute speed the width roofline would)"
SOURCE = "width roofline"  # how rate16's source (Breakdown.mfu_source) begins

# MAMF of the A100 SXM (ml-engineering, S1 in hardware/data/gpus.toml): the ceiling of a GPU on
# which none was measured (matmul_ceiling)
MATMUL_CEILING = 0.859


def check_traffic(traffic, mfu, workload, gpu) -> None:
    """A user's ``traffic`` (None: the default), refused where it would do nothing or is out of
    range: beside a given or calibrated ``mfu``, for a model or GPU the roofline does not time.
    The one check of ``dpcost iteration``, ``dpcost plan`` and their APIs."""
    from dpbase.errors import InputError, is_real

    if traffic is None:
        return
    if not is_real(traffic) or not 0.0 <= traffic <= MAX_ELEMENTWISE_TRAFFIC:  # NaN fails both bounds
        raise InputError("elementwise-traffic", traffic, f"bytes per FLOP at width 1, from 0 to {MAX_ELEMENTWISE_TRAFFIC:g}")
    if mfu is not None:
        raise InputError("elementwise-traffic", traffic, BESIDE_A_GIVEN_SPEED)
    if not applies(workload, gpu):
        raise InputError("elementwise-traffic", traffic,
                         f"left out for {workload.name} on {getattr(gpu, 'name', 'this GPU')}: only a model with a "
                         "transformer's width, on a GPU with 16-bit math, takes its MFU from the width roofline")


def matmul_ceiling(gpu) -> float:
    """The GPU's largest measured matmul rate over its dense 16-bit peak (A100 SXM's where none)."""
    return float(gpu.matmul_ceiling) if ceiling_measured(gpu) else MATMUL_CEILING


def ceiling_measured(gpu) -> bool:
    """Whether :func:`matmul_ceiling` is the GPU's own (or its die's), not A100 SXM's."""
    return bool(getattr(gpu, "matmul_ceiling", None))


def peak16_of(peaks) -> float | None:
    """The dense 16-bit peak (fp16, else bf16) of a GPU's ``peak_flops``, or None."""
    return (peaks or {}).get("fp16") or (peaks or {}).get("bf16")


def peak16(gpu) -> float | None:
    """The GPU's dense 16-bit peak (fp16, else bf16), or None."""
    return peak16_of(getattr(gpu, "peak_flops", None))


def applies(workload, gpu) -> bool:
    """True for a model with a transformer's width on a GPU with a 16-bit rate at least its
    FP32 one (every tensor-core part, and Pascal's double-rate FP16); CNNs have their own tables."""
    if workload is None or workload.kind == "cnn" or workload.hidden_size <= 0:
        return False
    fast = peak16(gpu)
    peaks = getattr(gpu, "peak_flops", None) or {}
    return bool(fast) and fast >= peaks.get("fp32", 0.0) and getattr(gpu, "hbm_bandwidth_Bps", 0.0) > 0


def fitted_width(hidden: float) -> float:
    """``hidden`` held inside :data:`FITTED_WIDTHS`."""
    return min(max(float(hidden), FITTED_WIDTHS[0]), FITTED_WIDTHS[1])


def seconds_per_flop(hidden: float, peak_flops: float, hbm_Bps: float, ceiling: float,
                     traffic: float = ELEMENTWISE_TRAFFIC) -> float:
    """``t`` of the module docstring: one 16-bit training FLOP of a model ``hidden`` wide."""
    return 1.0 / (peak_flops * ceiling) + traffic / (hidden * hbm_Bps)


def rate16(workload, gpu, traffic: float = ELEMENTWISE_TRAFFIC) -> tuple[float, str]:
    """(the 16-bit MFU of ``workload`` on ``gpu``, its source); :func:`applies` must hold."""
    peak, ceiling, width = peak16(gpu), matmul_ceiling(gpu), fitted_width(workload.hidden_size)
    rate = 1.0 / (peak * seconds_per_flop(width, peak, gpu.hbm_bandwidth_Bps, ceiling, traffic))
    named = "" if ceiling_measured(gpu) else " (A100 SXM's: none measured on this GPU)"
    held = "" if width == workload.hidden_size else f" (held at {width:g}, the widths it was fitted on)"
    return rate, (f"{SOURCE}: matmuls at {ceiling:.1%} of the 16-bit peak (MAMF{named}), the rest "
                  f"{traffic:g} B/FLOP over width {workload.hidden_size}{held} at {gpu.hbm_bandwidth_Bps / 1e9:,.0f} "
                  f"GB/s of HBM -> {rate:.0%} (docs/iteration-model.md)")
