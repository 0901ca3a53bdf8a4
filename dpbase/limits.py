"""Bounds on what dpcost accepts, so every answer is a finite number (no overflow, no inf).

They are far beyond any machine: the largest training jobs run on ~10^5 GPUs and the largest
GPU memories hold ~10^12 bytes. Inside them, products such as N·(N−1)·n stay below 2^200,
well inside float range; outside them an input is refused with one line, never a traceback.
"""

from __future__ import annotations

MAX_RANKS = 2**30  # ~10^9 ranks: 10^4 × the largest jobs
MAX_SIZE_BYTES = 2.0**70  # 1 ZiB: 10^9 × the largest GPU memory
MAX_COUNT = 2**40  # samples, steps, tokens per sample …: ~10^12
MAX_TIME_S = 1e6  # a latency, reduction time per byte or overhead: ~11.6 days, 10^6 × a WAN round trip
MIN_BANDWIDTH_Bps = 1.0  # a non-zero bandwidth: 1 B/s, 10^9 below a 10 Gb/s NIC
MAX_BANDWIDTH_Bps = 1e18  # 1000 PB/s: ~10^5 × NVLink 5's 1.8 TB/s per GPU
MIN_MFU = 1e-6  # model FLOPs utilisation: 10^4 below any measured training run
MIN_INPUT_RATE = 1e-3  # samples/s a rank's data loader sustains: one sample in 1,000 s (below, steps overflow)
MAX_INPUT_RATE = 1e12
MAX_RANK_COUNTS = 64  # rank counts one chart sweeps
