"""How busy a micro-batch keeps the GPU: the roofline of a transformer layer's matrix multiplies.

A layer's work is dominated by its MLP GEMMs: ``M × h`` activations (``M`` = tokens in the
micro-batch = micro-batch × sequence length) times an ``h × 4h`` weight (Vaswani et al. 2017;
Megatron-LM's layer shapes). Such a GEMM does ``2·M·h·4h`` FLOPs and moves at least
``e·(M·h + h·4h + M·4h)`` bytes of HBM (``e`` bytes per element of the compute dtype), so its
arithmetic intensity is

    I = 8·M·h² / (e·(5·M·h + 4·h²))       FLOP per byte,

and the roofline (Williams, Waterman & Patterson, CACM 2009) caps it at ``min(1, I / ridge)`` of
the peak, with ``ridge = peak FLOP/s / HBM B/s`` of the GPU. At the token counts the MFU
defaults were measured at (thousands per micro-batch) the factor is 1, so it scales those
defaults only where a micro-batch is too small to feed the tensor cores: a small micro-batch is
not a free choice. No constant is fitted here; CNNs (no transformer shape) get 1, and a fixed
time per micro-batch instead (below), whose one constant is the median of published steps.

    >>> round(matmul_efficiency(tokens=128, hidden=1024, peak_flops=989e12, hbm_Bps=3.35e12, element_bytes=2), 3)
    0.375
    >>> matmul_efficiency(tokens=4096, hidden=4096, peak_flops=989e12, hbm_Bps=3.35e12, element_bytes=2)
    1.0
"""

from __future__ import annotations

from dpbase import elementwise as ew


def intensity_flop_per_byte(tokens, hidden, element_bytes):
    """Arithmetic intensity of the ``tokens × h`` by ``h × 4h`` GEMM (floats or numpy arrays)."""
    return 8.0 * tokens * hidden * hidden / (element_bytes * (5.0 * tokens * hidden + 4.0 * hidden * hidden))


def matmul_efficiency(*, tokens, hidden, peak_flops, hbm_Bps, element_bytes):
    """``min(1, intensity / ridge)``: the share of the peak the layer's GEMMs can reach (floats or
    numpy arrays)."""
    return ew.minimum(intensity_flop_per_byte(tokens, hidden, element_bytes) * hbm_Bps / peak_flops, 1.0)


def workload_efficiency(workload, micro_batch, seq_len, gpu, peak_flops: float, element_bytes: int):
    """The factor for one workload: 1 for models without a transformer shape (CNNs)."""
    if workload.kind == "cnn" or workload.hidden_size <= 0 or not seq_len:
        return 1.0
    return matmul_efficiency(tokens=micro_batch * seq_len, hidden=workload.hidden_size, peak_flops=peak_flops,
                             hbm_Bps=gpu.hbm_bandwidth_Bps, element_bytes=element_bytes)


# --- CNNs: a fixed time per micro-batch ---------------------------------------------------------
#
# A CNN training step on one GPU takes ``a + b·micro_batch``: besides the per-image work, each
# micro-batch pays a fixed ``a`` for its hundreds of kernel launches and for the kernels a small
# batch cannot fill (a ResNet-50's 7×7 layers hold 49 positions per image). Published single-GPU
# training throughputs at several batch sizes, none of them in the validation sets, fit the line
# within ±2.2 ms (the pieces, per gradient tensor of the model, behind CNN_FIXED_S_PER_TENSOR):
#   ResNet-50, V100, FP32, PyTorch eager (pytorch/benchmark PR 706, batch 8-64): a = 12.6 ms
#     (13.2 ms captured in a CUDA graph: mostly GPU-side, not the Python dispatch) -> 78 µs/tensor
#   ResNet-50, V100, MXNet 1.2 (apache/mxnet docs/faq/perf.md, batch 1-128): a = 25.1 ms -> 156 µs
#   SSD300 (ResNet-50 backbone to layer3, 5 extra blocks, 12 head convs: 183 tensors), PyTorch
#     22.10 (DeepLearningExamples README): A100 TF32 12.0, A100 AMP 16.4, V100 AMP 17.4 ms
#     -> 66, 90, 95 µs
# Median 90 µs; each source predicted from the others' median is off by +19 % (PyTorch), −46 %
# (MXNet) and +23 to +77 % (SSD300). The fixed part was 7-30 % of those steps at their largest
# batch, so it is capped at half the reference step (an MFU borrowed for a much faster GPU could
# otherwise make the per-image slope negative).
#
# The CNN MFU defaults (models.toml [mfu_by_kind.cnn]) were measured at one micro-batch each
# (``micro_batch`` there: DeepLearningExamples' 256 or 112, MXNet's 32), so the step there is
# what the MFU gives and the line passes through it: a micro-batch ``m`` takes
# ``m·s + a·(1 − m/m_ref)`` for a per-image time ``s`` at the MFU. Smaller micro-batches cost
# more per image, larger ones less: CNN micro-batches no longer tie. Transformers keep the GEMM
# roofline above (their MFU defaults come from whole runs, with no micro-batch of reference).
CNN_FIXED_S_PER_TENSOR = 90e-6
CNN_FIXED_MAX_SHARE = 0.5


def cnn_fixed_seconds(tensors: int, per_sample_s, reference_micro_batch: int):
    """``a``: the fixed seconds of one training micro-batch (forward and backward) of a CNN with
    ``tensors`` gradient tensors, at most half of the reference micro-batch's step."""
    return ew.minimum(tensors * CNN_FIXED_S_PER_TENSOR, CNN_FIXED_MAX_SHARE * per_sample_s * reference_micro_batch)


def fixed_shift_seconds(fixed_s, micro_batch, reference_micro_batch):
    """``a·(1 − m/m_ref)``: what a training micro-batch of ``m`` takes beyond ``m`` × the
    per-sample time at the MFU measured at ``m_ref`` (negative above it); floats or arrays."""
    return fixed_s * (1.0 - micro_batch / reference_micro_batch)
