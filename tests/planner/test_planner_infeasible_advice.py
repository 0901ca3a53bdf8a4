"""When nothing fits, the advice is what would make the leanest plan fit.

With ZeRO-3 over every GPU the states shrink as GPUs are added, so the advice names a GPU count,
and that many GPUs do fit. Hybrid sharding splits them over one node's GPUs only, so more
nodes cannot help: the advice there is to shard over every GPU (QA pass, 2026-11-28: it said
"use at least 19 GPUs" with 800 available)."""

from __future__ import annotations

import re

import pytest

from costmodel.planner import recommend
from dpbase.errors import NotApplicableError


def plan(*args, **kwargs):  # the advice in the CLI's words (--nodes, --shard full), as `dpcost plan` prints it
    return recommend.plan(*args, _cli_words=True, **kwargs)


def _advice(**options) -> str:
    with pytest.raises(NotApplicableError) as raised:
        plan("llama2-70b", "dgx-h100", global_batch=800, **options)
    return str(raised.value)


def test_full_sharding_names_a_gpu_count_that_fits():
    advice = _advice(nodes=1)
    needed = int(re.search(r"use at least (\d+) GPUs", advice).group(1))
    # the fewest whole nodes with that many GPUs whose count divides the global batch
    nodes = next(n for n in range(1, 101) if 8 * n >= needed and 800 % (8 * n) == 0)
    assert nodes > 1 and plan("llama2-70b", "dgx-h100", global_batch=800, nodes=nodes).best.gpus >= needed


def test_hybrid_sharding_names_full_sharding_not_more_nodes():
    advice = _advice(nodes=100, shard="hybrid")
    assert "--shard full" in advice and "use at least" not in advice


def test_the_count_asked_for_runs_on_whole_nodes_and_splits_the_batch():
    """About 19 GPUs would fit llama2-70b at batch 64; 19 is no whole number of 8-GPU nodes and
    24 does not divide 64, so the advice asks for 32 (4 nodes), and 4 nodes do give a plan
    (planner review, 2026-11-28: it said "use at least 19 GPUs")."""
    with pytest.raises(NotApplicableError) as raised:
        plan("llama2-70b", "dgx-h100", global_batch=64, nodes=1)
    advice = str(raised.value)
    assert "use at least 32 GPUs (4 nodes: about 19 are needed, and 64 samples split evenly over 32; " \
           "raise --nodes/--max-gpus)" in advice
    assert plan("llama2-70b", "dgx-h100", global_batch=64, nodes=4, explain=False).best.gpus == 32


def test_where_no_whole_node_count_divides_the_batch_the_advice_names_partial_nodes():
    """Batch 100 on 8-GPU nodes: no whole-node count from 19 up divides it; 20 GPUs on part-filled
    nodes do (the advice said "use at least 19 GPUs", and 4 nodes then refused the batch)."""
    with pytest.raises(NotApplicableError) as raised:
        plan("llama2-70b", "dgx-h100", global_batch=100, nodes=1)
    assert "use at least 20 GPUs (about 19 are needed" in str(raised.value) and "--gpus 20)" in str(raised.value)
    assert plan("llama2-70b", "dgx-h100", global_batch=100, gpus=20, explain=False).best.gpus == 20


def test_a_batch_smaller_than_the_gpus_needed_is_the_advice():
    """mpt-30b on 2 P100 DGX-1s at batch 16 needs about 50 GPUs: the advice asked for 50 GPUs, which
    a batch of 16 cannot spread over."""
    with pytest.raises(NotApplicableError) as raised:
        plan("mpt-30b", "dgx-1-p100", nodes=2, global_batch=16)
    assert ("use at least 50 GPUs, with a global batch of at least 50 to spread over them "
            "(raise --global-batch and --nodes/--max-gpus)") in str(raised.value)


def test_batch_errors_name_part_filled_nodes_that_divide_the_batch():
    """llama2-13b on 2 DGX-1 at batch 24: 16 GPUs would fit but 24 is no multiple of 16; 12 GPUs on
    2 nodes x 6 run it as it is (--gpus 12)."""
    from dpbase.errors import InputError

    with pytest.raises(InputError) as raised:
        plan("llama2-13b", "dgx-1", nodes=2, global_batch=24)
    assert "; or --gpus 12 (2 nodes x 6 GPUs, which 24 divides)" in str(raised.value)
    assert plan("llama2-13b", "dgx-1", nodes=2, gpus=12, global_batch=24, explain=False).best.gpus == 12
    with pytest.raises(InputError) as none_divides:
        plan("gpt2", "dgx-h100", nodes=4, min_gpus=9, global_batch=60)
    assert str(none_divides.value).endswith(", or --gpus 20 (part-filled nodes, which 60 divides)")


def test_dividing_counts_walk_the_counts_or_the_divisors_alike():
    from costmodel.planner import grid

    for batch in (1, 24, 60, 97, 1024, 5040):
        for partial in (False, True):
            for low, high in ((1, 64), (9, 40), (20, 5000)):
                brute = [c for c in grid.runnable_counts(8, 1000, partial, low, min(high, batch)) if batch % c == 0]
                assert grid.dividing_counts(8, 1000, partial, low, high, batch) == brute
