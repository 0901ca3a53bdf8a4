"""The published data-parallel scaling tables, predicted (benchmarks/dp_scaling.py)."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import dp_scaling  # noqa: E402

from costmodel.training import workloads  # noqa: E402
from costmodel.training.losses import StepLosses  # noqa: E402
from costmodel.training.workloads import load_model  # noqa: E402

ROWS = dp_scaling.read_rows()


def test_every_row_maps_to_a_model_system_and_baseline():
    assert len(ROWS) == 215  # 217 rows, two without a baseline in their table
    for row in ROWS:
        assert dp_scaling.baseline_of(row, ROWS).gpus == row.baseline_gpus


def test_the_copy_derives_efficiency_as_the_source_does():
    for row in ROWS:
        base = dp_scaling.baseline_of(row, ROWS)
        derived = row.value / (base.value * row.gpus / base.gpus)
        assert derived == pytest.approx(row.efficiency, abs=6e-4)


def _multi_node_errors(losses):
    multi = [r for r in ROWS if r.nodes > 1 or r.gpus == r.baseline_gpus]
    preds = [p for p in dp_scaling.predict(multi, losses, measured=True) if p.row.nodes > 1]
    return [abs(p.predicted - p.published) * 100 for p in preds], preds


def test_default_terms_halve_the_always_100_percent_error_on_multi_node_rows():
    errors, preds = _multi_node_errors(StepLosses())
    naive = statistics.median(abs(1 - p.published) * 100 for p in preds)
    assert statistics.median(errors) <= 2.5 and statistics.median(errors) <= naive / 2
    ranked = dp_scaling.spearman([p.predicted for p in preds], [p.published for p in preds])
    assert ranked >= 0.6


def _single_node_errors(losses):
    single = [r for r in ROWS if r.nodes == 1]
    preds = [p for p in dp_scaling.predict(single, losses, measured=True) if p.row.gpus > p.row.baseline_gpus]
    return [abs(p.predicted - p.published) * 100 for p in preds]


def test_the_loss_terms_are_what_closes_the_gap_inside_a_node():
    """Under the default (NCCL) comm model the collective alone explains little of the single-node
    loss (6.2 points, as 'always 100 %'); the loss terms close most of it. Across nodes the NCCL
    collective already carries most of the loss, and the terms must not make it worse by > 1 point."""
    assert statistics.median(_single_node_errors(StepLosses())) < \
        statistics.median(_single_node_errors(StepLosses.none())) - 2.0
    with_terms, _ = _multi_node_errors(StepLosses())
    without, _ = _multi_node_errors(StepLosses.none())
    assert statistics.median(with_terms) <= statistics.median(without) + 1.0


@given(st.lists(st.integers(-1000, 1000), min_size=3, max_size=30, unique=True))
def test_spearman_is_one_for_any_increasing_transform(values):
    assert dp_scaling.spearman(values, [v**3 + 5 for v in values]) == pytest.approx(1.0)
    assert dp_scaling.spearman(values, [-v for v in values]) == pytest.approx(-1.0)


def test_the_refit_shortcut_is_the_model():
    """The fit scores host overheads on cached loss-free parts (dp_scaling._fast_rate); those
    predictions must be the full model's, or the fitted constant is fitted to another model (it
    was: the transport probe read every transport as TCP, charging all hidden communication)."""
    pairs = [(r, dp_scaling.baseline_of(r, ROWS)) for r in ROWS
             if r.gpus != r.baseline_gpus]
    losses = StepLosses(host_overhead_s=0.004)
    fast = {p.row.row_id: p.predicted for p in dp_scaling._fast_errors(pairs, losses, True)}
    full = dp_scaling.predict(ROWS, losses, measured=True)
    assert len(full) == len(fast) > 150
    for p in full:
        assert fast[p.row.row_id] == pytest.approx(p.predicted, abs=1e-9), p.row.row_id


def test_measured_mfu_reproduces_each_baseline_it_can():
    """Only the matmul part scales with MFU, so the MFU is solved for, not scaled by a ratio;
    where even the model's highest MFU is too slow it stays there. A CNN's nominal FLOPs may run
    past the peak (Winograd): S8's AlexNet and VGG16 on P100, kept at MFU 1 until 2026-11-28, are
    reproduced at 1.08 and 1.35 within their ceilings (3.0)."""
    seen, past_one, capped = 0, 0, 0
    for row in ROWS:
        if row.gpus != row.baseline_gpus:
            continue
        mfu = dp_scaling.measured_mfu(row)
        rate, _ = dp_scaling.predict_throughput(row, row.gpus, row.micro_batch, row.accumulation,
                                                StepLosses.none(), mfu)
        published = dp_scaling.published_samples_per_s(row, row.value)
        if mfu < workloads.max_mfu(load_model(row.model)):
            seen += 1
            past_one += mfu > 1.0
            assert rate == pytest.approx(published, rel=1e-6), row.row_id
        else:
            capped += 1
            assert rate <= published * (1 + 1e-9)
    assert seen >= 30 and past_one == 2
    assert capped == 0  # no baseline in these tables is beyond its model's ceiling (the branch above guards one)


HELDOUT = dp_scaling.read_rows(dp_scaling.HELDOUT)


def test_every_held_out_row_maps_and_derives_its_efficiency_as_the_source_does():
    assert len(HELDOUT) == 299 and all(row.held_out for row in HELDOUT)
    assert not any(row.held_out for row in ROWS)
    for row in HELDOUT:
        base = dp_scaling.baseline_of(row, HELDOUT)
        assert base.value == row.baseline_value
        assert row.value / (base.value * row.gpus / base.gpus) == pytest.approx(row.efficiency, abs=6e-4)


def test_no_held_out_measurement_is_in_the_development_set():
    development = {(row.model, row.value) for row in ROWS}
    assert not any((row.model, row.value) in development for row in HELDOUT)


# (source, model, precision's first word) -> (sync mode, compute dtype, gradient dtype, NCCL over
# sockets), as HELDOUT_SOURCES.md states each framework; a reordered or widened rule shows here.
HELD_OUT_SETUP = {
    ("H1 NGC PyTorch", "bert-base", "FP32"): ("flat", "fp32", "fp32", False),
    ("H1 NGC PyTorch", "bert-base", "mixed"): ("flat", "fp16", "fp16", False),  # apex O2, one bucket
    ("H1 NGC PyTorch", "resnet-50", "mixed"): ("ddp", "fp16", "fp32", False),  # apex O1
    ("H1 NGC TF1", "bert-base", "mixed"): ("horovod", "fp16", "fp16", False),  # Compression.fp16
    ("H1 NGC TF1", "resnet-50", "mixed"): ("horovod", "fp16", "fp32", False),
    ("H1 NGC MXNet", "resnet-50", "fp16"): ("horovod", "fp16", "fp16", False),  # --dtype float16
    ("H1 MXNet", "bert-base", "fp16"): ("horovod", "fp16", "fp16", False),
    ("H1 TF2", "resnet-50", "mixed"): ("flat", "fp16", "fp32", False),  # MirroredStrategy
    ("H1 PyTorch", "resnet-50", "FP32"): ("ddp", "fp32", "fp32", False),
    ("H1 OneFlow", "bert-base", "mixed"): ("ddp", "fp16", "fp32", False),
    ("H1 Paddle", "bert-base", "mixed"): ("ddp", "fp16", "fp32", True),  # NCCL_IB_DISABLE=1
    ("H1 Paddle", "resnet-50", "mixed"): ("ddp", "fp16", "fp32", False),
    ("H2", "bert-large", "mixed"): ("flat", "fp16", "fp16", False),  # accumulated, compressed
    ("H2", "bert-large", "TF32"): ("flat", "tf32", "fp32", False),
    ("H3", "bert-large", "mixed"): ("flat", "fp16", "fp32", False),  # gradient merge
}


def test_each_held_out_table_runs_as_its_source_states():
    seen = set()
    for row in HELDOUT:
        key = (row.source, row.model, row.precision.split()[0])
        if key not in HELD_OUT_SETUP:
            continue
        seen.add(key)
        sync, compute, grads, sockets = HELD_OUT_SETUP[key]
        assert dp_scaling._sync(row)[0] == sync, row.row_id
        assert dp_scaling._dtypes(row) == (compute, grads), row.row_id
        assert (dp_scaling.NCCL_SOCKETS in row.framework) == sockets, row.row_id
    assert seen == set(HELD_OUT_SETUP)


def test_a_stated_nic_count_and_nccl_over_sockets_reach_the_system():
    """DLPerf's nodes have one EDR NIC (the DGX-1 profile has four); Paddle's BERT script
    disables InfiniBand verbs, so NCCL runs its socket transport."""
    profile = dp_scaling.system_for("V100-SXM2-16GB", 8, "")
    one_nic = [r for r in HELDOUT if r.source == "H1 OneFlow" and r.nodes > 1][0]
    system = dp_scaling.system_for(one_nic.gpu_type, one_nic.gpus_per_node, one_nic.inter_node)
    assert (profile.nics_per_node, system.nics_per_node) == (4, 1)
    assert system.nic_bandwidth_Bps == 100e9 / 8
    paddle = [r for r in HELDOUT if r.source == "H1 Paddle" and r.model == "bert-base" and r.nodes > 1][0]
    _, result = dp_scaling.predict_throughput(paddle, paddle.gpus, paddle.micro_batch, paddle.accumulation,
                                              StepLosses())
    assert result.transport == "tcp"
    _, rdma = dp_scaling.predict_throughput(one_nic, one_nic.gpus, one_nic.micro_batch, one_nic.accumulation,
                                            StepLosses())
    assert rdma.transport == "rdma"


def test_the_terms_help_on_each_later_publication_fitted_without_it():
    """Each later publication predicted (default flags) with the constants fitted on the ten
    others must be better with the loss terms than with the collective alone, inside nodes and
    across them, pooled over each later set. Only that is asserted, not a margin: a tighter gate
    on these rows would push later changes to please them."""
    every = dp_scaling.every_publication()
    for later in (HELDOUT, dp_scaling.read_rows(dp_scaling.HELDOUT2)):
        preds = {True: [], False: []}
        for group in sorted({dp_scaling.publication(r) for r in later}):
            rows = [r for r in later if dp_scaling.publication(r) == group]
            preds[True] += dp_scaling.predict(rows, dp_scaling.fit(every, exclude=group, measured=True),
                                              measured=False)
            preds[False] += dp_scaling.predict(rows, StepLosses.none(), measured=False)
        for multi in (False, True):
            def median(with_terms, multi=multi, preds=preds):
                return statistics.median(abs(p.predicted - p.published) * 100
                                         for p in preds[with_terms] if (p.row.nodes > 1) == multi)
            assert median(True) < median(False)


def test_a_fit_without_a_publication_is_the_fit_on_the_rows_without_it():
    """Leaving a publication out of the fit is fitting on the others' rows alone (no leak
    through the cached grid), S1b goes with S1 (one README at two commits) and DLPerf's
    frameworks together, and a source label that is not a publication is refused."""
    every = dp_scaling.every_publication()
    for group in sorted({dp_scaling.publication(r) for r in every}):
        rest = [r for r in every if dp_scaling.publication(r) != group]
        assert dp_scaling.fit(every, exclude=group, measured=True) == dp_scaling.fit(rest, measured=True), group
    assert dp_scaling.publication(next(r for r in every if r.source == "S1b")) == "S1"
    assert {dp_scaling.publication(r) for r in every if r.source.startswith("H1 ")} == {"H1"}
    for label in ("S1b", "H1 Paddle", "S7"):
        with pytest.raises(ValueError, match="not a publication"):
            dp_scaling.fit(every, exclude=label, measured=True)


def test_the_shipped_constants_are_the_fit_on_every_publication():
    """losses.HOST_OVERHEAD_S and SPEED_CV are what benchmarks/dp_scaling.py fits on all eleven
    publications with their measured speed; every publication left out moves them little
    (4-8 ms, 2-2.5 %, since the spread is one-sided; 4-8 ms and 2.25-3.5 % with the normal spread,
    the widest without S1 and S1b, the one README at two commits: the two constants are fixed by
    the data, not by one table; 5-8 ms and 2.25-3.75 % until the gradient's buffer copies, part of
    the overhead before, were their own term). The two trade against each
    other along a flat valley, so a fold may land on either end of the range."""
    every = dp_scaling.every_publication()
    assert dp_scaling.fit(every, measured=True) == StepLosses()
    for group in sorted({dp_scaling.publication(r) for r in every}):
        fitted = dp_scaling.fit(every, exclude=group, measured=True)
        assert 0.004 <= fitted.host_overhead_s <= 0.008 and 0.02 <= fitted.speed_cv <= 0.025, group


HELDOUT2 = dp_scaling.read_rows(dp_scaling.HELDOUT2)


def test_every_second_held_out_row_maps_and_is_new():
    assert len(HELDOUT2) == 214 and {row.source for row in HELDOUT2} == {"H4", "H5", "H6"}
    for row in HELDOUT2:
        base = dp_scaling.baseline_of(row, HELDOUT2)
        assert base.value == row.baseline_value
        assert row.value / (base.value * row.gpus / base.gpus) == pytest.approx(row.efficiency, abs=6e-4)
    earlier = {(row.model, row.value) for row in ROWS + HELDOUT}
    assert not any((row.model, row.value) in earlier for row in HELDOUT2 if row.gpus != row.baseline_gpus)


# (source, sharding text, precision mode, activation checkpointing, all-reduce of the accumulated
# gradients) -> (sync mode, ZeRO stage, recompute, compute dtype, gradient dtype), as
# HELDOUT2_SOURCES.md states each framework: every row of the set has its key here.
HELD_OUT2_SETUP = {
    ("H4", "FULL_SHARD", "PURE", True, False): ("fsdp", 3, True, "bf16", "bf16"),
    ("H4", "FULL_SHARD", "PURE", False, False): ("fsdp", 3, False, "bf16", "bf16"),
    ("H4", "FULL_SHARD", "DEFAULT", True, False): ("fsdp", 3, True, "bf16", "fp32"),
    ("H4", "FULL_SHARD", "DEFAULT", False, False): ("fsdp", 3, False, "bf16", "fp32"),
    ("H4", "SHARD_GRAD_OP", "DEFAULT", False, False): ("fsdp", 2, False, "bf16", "fp32"),
    ("H5", "", "mixed", False, True): ("flat", 0, False, "fp16", "fp16"),  # pre-training, compressed
    ("H5", "", "FP32", False, True): ("flat", 0, False, "fp32", "fp32"),
    ("H5", "", "TF32", False, True): ("flat", 0, False, "tf32", "fp32"),
    ("H5", "", "mixed", False, False): ("horovod", 0, False, "fp16", "fp16"),  # SQuAD, compressed
    ("H5", "", "FP32", False, False): ("horovod", 0, False, "fp32", "fp32"),
    ("H5", "", "TF32", False, False): ("horovod", 0, False, "tf32", "fp32"),
    ("H6", "", "mixed", False, False): ("horovod", 0, False, "fp16", "fp32"),  # no compression
    ("H6", "", "FP32", False, False): ("horovod", 0, False, "fp32", "fp32"),
    ("H6", "", "TF32", False, False): ("horovod", 0, False, "tf32", "fp32"),
}


def test_each_second_held_out_table_runs_as_its_source_states():
    seen = set()
    for row in HELDOUT2:
        sharding = next((s for s in ("FULL_SHARD", "SHARD_GRAD_OP") if s in row.framework), "")
        mode = next((m for m in ("PURE", "DEFAULT") if m in row.precision), row.precision.split()[0])
        key = (row.source, sharding, mode, "activation_checkpointing True" in row.framework,
               "accumulated gradients" in row.framework)
        assert key in HELD_OUT2_SETUP, (row.row_id, key)
        seen.add(key)
        sync, stage, recompute, compute, grads = HELD_OUT2_SETUP[key]
        assert dp_scaling._sync(row)[0] == sync, row.row_id
        assert dp_scaling._sharding(row) == (stage, recompute), row.row_id
        assert dp_scaling._dtypes(row) == (compute, grads), row.row_id
        _, result = dp_scaling.predict_throughput(row, row.gpus, row.micro_batch, row.accumulation, StepLosses())
        assert (result.sync, result.zero_stage, result.recompute) == (sync, stage, recompute), row.row_id
    assert seen == set(HELD_OUT2_SETUP)


def test_fsdp_at_512_gpus_is_not_latency_bound():
    """MPT-70B with FSDP on 512 H100s scaled to 95.1 % of its 128-GPU rate (llm-foundry). With
    one all-gather per transformer block the model agrees within a few points; in DDP's 25 MiB
    buckets (the first run of this set) it predicted 52.6 %."""
    row = next(r for r in HELDOUT2 if r.model == "mpt-70b" and r.gpus == 512)
    pred = next(p for p in dp_scaling.predict(HELDOUT2, StepLosses(), measured=False) if p.row is row)
    assert row.efficiency == pytest.approx(0.951) and abs(pred.predicted - row.efficiency) < 0.06
