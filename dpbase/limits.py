"""Bounds on what dpcost accepts, so every answer is a finite number (no overflow, no inf).

They are far beyond any machine: the largest training jobs run on ~10^5 GPUs and the largest
GPU memories hold ~10^12 bytes. Inside them, products such as N·(N−1)·n stay below 2^200,
well inside float range; outside them an input is refused with one line, never a traceback.
"""

from __future__ import annotations

MAX_RANKS = 2**30  # ~10^9 ranks: 10^4 × the largest jobs
MAX_SIZE_BYTES = 2.0**70  # 1 ZiB: 10^9 × the largest GPU memory
MAX_COUNT = 2**40  # samples, steps, tokens per sample …: ~10^12
MIN_MFU = 1e-6  # model FLOPs utilisation: 10^4 below any measured training run
MAX_RANK_COUNTS = 64  # rank counts one chart sweeps
