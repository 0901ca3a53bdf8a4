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
not a free choice. No constant is fitted; CNNs (no transformer shape) get 1.

    >>> round(matmul_efficiency(tokens=128, hidden=1024, peak_flops=989e12, hbm_Bps=3.35e12, element_bytes=2), 3)
    0.375
    >>> matmul_efficiency(tokens=4096, hidden=4096, peak_flops=989e12, hbm_Bps=3.35e12, element_bytes=2)
    1.0
"""

from __future__ import annotations


def intensity_flop_per_byte(tokens, hidden, element_bytes):
    """Arithmetic intensity of the ``tokens × h`` by ``h × 4h`` GEMM (floats or numpy arrays)."""
    return 8.0 * tokens * hidden * hidden / (element_bytes * (5.0 * tokens * hidden + 4.0 * hidden * hidden))


def matmul_efficiency(*, tokens, hidden, peak_flops, hbm_Bps, element_bytes):
    """``min(1, intensity / ridge)``: the share of the peak the layer's GEMMs can reach.

    Written with ``abs`` so the same expression serves floats and numpy arrays.
    """
    ratio = intensity_flop_per_byte(tokens, hidden, element_bytes) * hbm_Bps / peak_flops
    return (ratio + 1.0 - abs(ratio - 1.0)) / 2.0


def workload_efficiency(workload, micro_batch, seq_len, gpu, peak_flops: float, element_bytes: int):
    """The factor for one workload: 1 for models without a transformer shape (CNNs)."""
    if workload.kind == "cnn" or workload.hidden_size <= 0 or not seq_len:
        return 1.0
    return matmul_efficiency(tokens=micro_batch * seq_len, hidden=workload.hidden_size, peak_flops=peak_flops,
                             hbm_Bps=gpu.hbm_bandwidth_Bps, element_bytes=element_bytes)
