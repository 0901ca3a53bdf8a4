"""The API called from a thread pool: no raw KeyError/RuntimeError from the caches, and the
answers of the sequential calls (review, 2026-11-29: 379-1,043 of 20,000 pooled predict calls
raised from the bounded caches' evictions)."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

import costmodel
import hardware
from costmodel.cluster import comm as comm_module
from dpbase.bounded import evict_oldest
from dpbase.values import replace


def test_pooled_predictions_equal_the_sequential_ones():
    """800 distinct layouts against caches of 64 (NCCL's topologies), 32 threads switching as
    often as the interpreter allows: the old evictions failed about 1 call in 300 here."""
    old = sys.getswitchinterval()
    base = hardware.load_system("dgx-h100")
    systems = [replace(base, nic_bandwidth_Bps=base.nic_bandwidth_Bps * (1 + i / 1000)) for i in range(200)]

    def one(i):
        return costmodel.predict("all-reduce", "64MiB", cluster=systems[i % 200], nodes=1 + i % 4).time_s

    sys.setswitchinterval(1e-6)
    try:
        with ThreadPoolExecutor(32) as pool:
            pooled = list(pool.map(one, range(3000)))
    finally:
        sys.setswitchinterval(old)
    sequential = {i % 800: one(i % 800) for i in range(800)}  # the 800 distinct questions, one thread
    assert pooled == [sequential[i % 800] for i in range(3000)]


def test_an_eviction_that_loses_a_race_is_a_no_op():
    cache = {"a": 1}
    evict_oldest(cache, 1)
    evict_oldest(cache, 0)  # nothing left to drop: no KeyError, no StopIteration
    assert cache == {}


def test_one_comm_model_keeps_a_bounded_memo(monkeypatch):
    """(review, 2026-11-29: 500,000 distinct sizes on one model grew a process to 550 MB)"""
    monkeypatch.setattr(comm_module, "MEMO_SIZE", 64)
    model = costmodel.comm_model("dgx-h100", nodes=2, backend="ideal")
    for i in range(comm_module.MEMO_SIZE + 10):
        model.time_s("all-reduce", 1e3 + i)
    assert len(model._seconds) <= comm_module.MEMO_SIZE and len(model._answers) <= comm_module.MEMO_SIZE
    assert model.time_s("all-reduce", 1e3) == pytest.approx(
        costmodel.comm_model("dgx-h100", nodes=2, backend="ideal").time_s("all-reduce", 1e3), rel=1e-15)


def test_a_sweep_keeps_every_answerable_row():
    """(review, 2026-11-29) backends ideal and nccl over all-to-all failed whole (NCCL's tuning
    model has no all-to-all: now a left-out row); --algorithm all gave one row; b'1GiB' was read
    as a sequence of four byte values."""
    frame = costmodel.sweep("all-to-all", "1MiB", clusters="dgx-h100", nodes=2, backends=["ideal", "nccl"])
    assert frame.backend.tolist() == ["ideal"] and "no all-to-all" in frame.attrs["left_out"][0]
    link = dict(ranks=64, alpha_s="5us", bandwidth_Bps="25GB/s")
    every = costmodel.sweep("all-reduce", "1MB", algorithms="all", **link)
    ranked = costmodel.compare("all-reduce", size_bytes="1MB", **link)
    assert every.algorithm.tolist() == [q.algorithm for q in ranked] and len(every) > 3
    assert costmodel.predict("all-reduce", "1MB", "all", **link).algorithm == every.algorithm.iloc[0]
    with pytest.raises(Exception, match="^sizes: got b'1GiB'"):
        costmodel.sweep("all-reduce", b"1GiB", clusters="dgx-h100", nodes=2)
