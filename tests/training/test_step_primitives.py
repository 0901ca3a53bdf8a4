"""step_primitives (what the named-algorithm check asks of a step) against the collectives
sync_plan really calls, over every setting: the two lists had drifted (top-k at ZeRO-0 runs an
all-gather, not the all-reduce the check asked about; qgZ's all-to-all replaces the
reduce-scatter), so `--algorithm ring --topk 0.01` under NCCL timed auto under ring's name."""

from __future__ import annotations

import itertools

import pytest

import costmodel
from costmodel.training import gradsync, memory, overlap
from dpbase.errors import InputError


def _called(zero, topk, grad_bits, hybrid) -> set[str]:
    calls: set[str] = set()

    def comm(primitive, size):
        calls.add(primitive)
        return 1e-3

    gradsync.sync_plan(comm, 8, overlap.bucket_layout(1e9), memory.precision_for("bf16"), zero_stage=zero,
                       topk_fraction=0.01 if topk else None, grad_bits=grad_bits,
                       replicas=comm if hybrid else None, replica_ranks=2 if hybrid else None)
    return calls


@pytest.mark.parametrize(("zero", "topk", "qgz", "hybrid"), [
    case for case in itertools.product((0, 1, 2, 3), (False, True), (False, True), (False, True))
    if not (case[1] and case[0]) and not (case[2] and case[0] == 0) and not (case[3] and case[0] != 3)])
def test_step_primitives_are_the_collectives_sync_plan_calls(zero, topk, qgz, hybrid):
    called = _called(zero, topk, 8 if qgz else None, hybrid)
    assert set(gradsync.step_primitives(zero, qgz, hybrid, topk)) == called


def test_a_named_algorithm_is_asked_of_top_ks_all_gather():
    """Under NCCL's model ring is forced on the all-reduce alone, which top-k never runs."""
    with pytest.raises(InputError, match="^algorithm: got 'ring'; allowed: ring forces NCCL's all-reduce, which this step does not issue"):
        costmodel.iteration("gpt2", "dgx-a100", nodes=2, micro_batch=8, algorithm="ring", topk_fraction=0.01)
    ideal = costmodel.iteration("gpt2", "dgx-a100", nodes=2, micro_batch=8, algorithm="bruck", topk_fraction=0.01,
                                backend="ideal")  # refused before: Bruck's all-gather runs top-k's exchange
    auto = costmodel.iteration("gpt2", "dgx-a100", nodes=2, micro_batch=8, topk_fraction=0.01, backend="ideal")
    assert ideal.comm_s != auto.comm_s


def test_the_configs_switches_and_numbers_are_read_from_its_fields():
    """iteration checks every bool field as a switch and every float field as a number; the lists
    are read from TrainingConfig's declared types, so a new field cannot go unchecked."""
    from costmodel.training.iteration import NUMBERS, SWITCHES

    assert set(SWITCHES) == {"overlap", "host_reduce", "asynchronous", "flash_attention",
                             "recompute", "overlap_param_gather", "offload_optimizer", "sync_each_micro_batch"}
    # include_attention is a switch or None (the model's own: on for token-rule models), checked apart
    import pytest

    from costmodel import iteration
    from dpbase.errors import InputError

    with pytest.raises(InputError, match="include_attention"):
        iteration(model="gpt2", cluster="dgx-h100", micro_batch=1, include_attention="no")
    assert set(NUMBERS) == {"topk_fraction", "mfu", "bucket_bytes", "first_bucket_bytes", "memory_reserve_bytes",
                            "jitter_cv", "elementwise_traffic"}
