"""A transformer's default MFU from its width (costmodel.training.roofline): matmuls at the GPU's
measured ceiling, the rest HBM traffic per FLOP falling as 1/width; its constant fitted
leave-one-publication-out on published baseline throughputs (benchmarks/dp_scaling.py)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import hardware
from cli import app
from costmodel.training import iteration, roofline
from costmodel.training.workloads import load_model
from dpbase.values import replace

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import dp_scaling  # noqa: E402

runner = CliRunner()
ROOFLINE_GPUS = ("v100-sxm2", "a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-80gb", "h100-sxm", "gh200",
                 "b200", "mi250x", "mi300x", "l40s", "rtx-4090", "p100-sxm2")


@settings(max_examples=60, deadline=None)
@given(gpu=st.sampled_from(ROOFLINE_GPUS), hidden=st.integers(1024, 4096), traffic=st.floats(0.1, 100.0))
def test_the_mfu_rises_with_the_width_toward_the_measured_ceiling(gpu, hidden, traffic):
    profile = hardware.load_gpu(gpu)
    workload = replace(load_model("gpt2"), hidden_size=hidden)
    rate, _ = roofline.rate16(workload, profile, traffic)
    wider, _ = roofline.rate16(replace(workload, hidden_size=2 * hidden), profile, traffic)
    ceiling = roofline.matmul_ceiling(profile)
    assert 0 < rate < wider < ceiling
    # what is left beyond the matmuls is the traffic over the width through HBM, κ / (h · B)
    peak = roofline.peak16(profile)
    left = 1 / (peak * rate) - 1 / (peak * ceiling)
    assert left * hidden * profile.hbm_bandwidth_Bps == pytest.approx(traffic, rel=1e-9)
    # twice the traffic costs what half the width does
    assert roofline.rate16(workload, profile, 2 * traffic)[0] == pytest.approx(
        roofline.rate16(replace(workload, hidden_size=hidden / 2), profile, traffic)[0], rel=1e-12)


def test_widths_outside_the_fitted_ones_are_held_at_the_nearer_end():
    """Fitted on 512-8,192: a narrower model runs as a 512-wide one, a wider one as 8,192 (within
    MPT's tables the ratio already rises with the width: the law is not extrapolated)."""
    gpu, base = hardware.load_gpu("h100-sxm"), load_model("gpt2")
    low, high = roofline.FITTED_WIDTHS
    rate = {h: roofline.rate16(replace(base, hidden_size=h), gpu)[0] for h in (128, low, 4096, high, 16384)}
    assert rate[128] == rate[low] < rate[4096] < rate[high] == rate[16384]
    assert "held at 8192" in roofline.rate16(replace(base, hidden_size=16384), gpu)[1]
    assert "held at" not in roofline.rate16(replace(base, hidden_size=4096), gpu)[1]


def test_no_traffic_runs_at_the_measured_ceiling_and_faster_hbm_helps():
    bert = load_model("bert-large")
    h100 = hardware.load_gpu("h100-sxm")
    assert roofline.rate16(bert, h100, 0.0)[0] == pytest.approx(0.801)  # MAMF: 792.1 of 989 TFLOP/s
    a100_40, a100_80 = hardware.load_gpu("a100-sxm4-40gb"), hardware.load_gpu("a100-sxm4-80gb")
    assert a100_40.peak_flops == a100_80.peak_flops and a100_80.hbm_bandwidth_Bps > a100_40.hbm_bandwidth_Bps
    assert roofline.rate16(bert, a100_80)[0] > roofline.rate16(bert, a100_40)[0]
    # a GPU with no measured ceiling takes A100 SXM's, and says so
    l40s = hardware.load_gpu("l40s")
    assert l40s.matmul_ceiling is None and roofline.matmul_ceiling(l40s) == roofline.MATMUL_CEILING
    assert "none measured on this GPU" in roofline.rate16(bert, l40s)[1]


def test_it_applies_to_models_with_a_width_on_gpus_with_16_bit_math():
    a100, k80, p100 = (hardware.load_gpu(name) for name in ("a100-sxm4-80gb", "k80", "p100-sxm2"))
    assert roofline.applies(load_model("bert-base"), a100) and roofline.applies(load_model("vit-l-16"), a100)
    assert roofline.applies(load_model("transformer-xl-base"), p100)  # Pascal's FP16 at twice FP32
    assert not roofline.applies(load_model("resnet-50"), a100)  # CNNs: their measured tables
    assert not roofline.applies(load_model("bert-base"), k80)  # no 16-bit math: the profile's default
    assert not roofline.applies(replace(load_model("bert-base"), hidden_size=0), a100)
    assert iteration.mfu(k80, None, load_model("bert-base"), "fp32")[0] == k80.default_mfu


def test_narrow_models_run_slower_and_wide_ones_faster_than_the_one_mfu_per_gpu():
    """The published cases the roofline was built for: Transformer-XL base (512 wide) ran at 0.6
    of the old default's speed on an A100, MPT-30B (7,168) at 1.5x."""
    a100 = hardware.load_gpu("a100-sxm4-40gb")
    narrow, _ = iteration.mfu(a100, None, load_model("transformer-xl-base"), "fp16")
    wide, _ = iteration.mfu(a100, None, load_model("mpt-30b"), "bf16")
    assert narrow < 0.5 * a100.default_mfu and wide > 1.4 * a100.default_mfu


def _iteration(*extra):
    return runner.invoke(app, ["iteration", "--model", "bert-large", "--cluster", "dgx-a100", "--gpus", "8",
                               "--micro-batch", "8", "--json", *extra])


def test_the_option_moves_the_default_speed_and_is_refused_where_it_does_nothing():
    base, heavier = (json.loads(_iteration(*extra).stdout) for extra in ((), ("--elementwise-traffic", "20")))
    assert heavier["mfu"] < base["mfu"] and heavier["total_s"] > base["total_s"]
    assert base["mfu_source"].startswith("width roofline") and " 20 B/FLOP" in heavier["mfu_source"]
    text = runner.invoke(app, ["iteration", "--model", "bert-large", "--cluster", "dgx-a100", "--micro-batch", "8"])
    assert "(width roofline)" in text.stdout
    for extra, words in ((("--mfu", "0.4"), "left out with --mfu or --rate"),
                         (("--rate", "300"), "left out with --mfu or --rate"),
                         (("--elementwise-traffic", "-1"), "from 0 to 1000")):
        args = ["iteration", "--model", "bert-large", "--cluster", "dgx-a100", "--micro-batch", "8", *extra]
        if "--elementwise-traffic" not in extra:
            args += ["--elementwise-traffic", "5"]
        refused = runner.invoke(app, args)
        assert refused.exit_code == 2 and words in refused.stderr and "Traceback" not in refused.output
    cnn = runner.invoke(app, ["iteration", "--model", "resnet-50", "--cluster", "dgx-a100", "--micro-batch", "64",
                              "--elementwise-traffic", "5"])
    assert cnn.exit_code == 2 and "only a model with a transformer's width" in cnn.stderr


def test_the_api_refuses_what_the_cli_refuses_naming_its_keyword():
    from costmodel import iteration as run
    from dpbase.errors import InputError

    common = dict(cluster="dgx-a100", micro_batch=8)
    for extra, words in ((dict(model="bert-large", mfu=0.4), "left out with"),
                         (dict(model="resnet-50"), "only a model with a transformer's width"),
                         (dict(model="bert-large", elementwise_traffic=float("nan")), "from 0 to 1000")):
        with pytest.raises(InputError, match="elementwise_traffic") as refused:
            run(**{"elementwise_traffic": 5.0, **common, **extra})
        assert words in str(refused.value)


# The fit (benchmarks/dp_scaling.py): the shipped constant, its folds and the docs' table.
EVERY = dp_scaling.every_publication()


def test_the_shipped_constant_is_the_fit_on_every_publication_and_every_fold_lands_near_it():
    assert dp_scaling.fit_traffic(EVERY) == roofline.ELEMENTWISE_TRAFFIC
    folds = {group: dp_scaling.fit_traffic(EVERY, exclude=group)
             for group in sorted({dp_scaling.publication(r) for r in EVERY})}
    assert all(8.5 <= value <= 10.5 for value in folds.values()), folds


def test_left_out_publications_are_predicted_closer_than_with_no_traffic():
    """Each publication's baselines with the constant fitted without it: the median factor off
    is 1.20x, against the matmuls alone at the ceiling (traffic 0), which is far too fast."""
    baselines = dp_scaling._roofline_baselines(tuple(EVERY))
    left_out = [abs(dp_scaling.speed_log_ratio(base, dp_scaling.fit_traffic(EVERY, exclude=group)))
                for group, base in baselines]
    alone = [abs(dp_scaling.speed_log_ratio(base, 0.0)) for _, base in baselines]
    median = sorted(left_out)[len(left_out) // 2]
    assert math.exp(median) < 1.25 < math.exp(sorted(alone)[len(alone) // 2])


def test_the_speed_section_of_the_docs_is_what_the_harness_prints():
    text = (Path(__file__).resolve().parents[2] / "docs" / "validation.md").read_text(encoding="utf-8")
    section = text.split("<!-- dp-scaling-speed:begin -->", 1)[1].split("<!-- dp-scaling-speed:end -->", 1)[0]
    assert section.strip() == dp_scaling.speed_report(EVERY, dp_scaling.table_rows(dp_scaling.OUTSIDE, [])).strip()


def test_plan_takes_the_option_and_times_its_plans_as_iteration_does():
    from costmodel import iteration as run
    from costmodel.planner.recommend import plan
    from dpbase.errors import InputError

    common = dict(nodes=1, global_batch=64, seq_len=512, explain=False)
    base, heavier = plan("bert-large", "dgx-a100", **common), plan("bert-large", "dgx-a100", elementwise_traffic=20.0,
                                                                   **common)
    assert heavier.elementwise_traffic == 20.0 and base.elementwise_traffic is None
    assert heavier.best.samples_per_s < base.best.samples_per_s
    best = heavier.best
    again = run(model="bert-large", cluster="dgx-a100", nodes=best.nodes, gpus_per_node=best.gpus_per_node,
                micro_batch=best.micro_batch, accumulation_steps=best.accumulation_steps, seq_len=512,
                zero_stage=best.zero_stage, grad_dtype=best.grad_dtype, bucket_bytes=best.bucket_bytes,
                elementwise_traffic=20.0)
    assert again.compute_s == pytest.approx(best.compute_s, rel=1e-9)
    for extra, words in ((dict(model="bert-large", mfu=0.4), "left out with"),
                         (dict(model="resnet-50"), "only a model with a transformer's width"),
                         (dict(model="bert-large", elementwise_traffic="heavy"), "from 0 to 1000")):
        with pytest.raises(InputError, match="elementwise_traffic") as refused:
            plan(cluster="dgx-a100", **{"elementwise_traffic": 5.0, **common, "seq_len": None, **extra})
        assert words in str(refused.value)
    cli = runner.invoke(app, ["plan", "--model", "bert-large", "--cluster", "dgx-a100", "--global-batch", "64",
                              "--seq-len", "512", "--elementwise-traffic", "20", "--json"])
    assert cli.exit_code == 0 and json.loads(cli.stdout)["elementwise_traffic"] == 20.0
    refused = runner.invoke(app, ["plan", "--model", "bert-large", "--cluster", "dgx-a100", "--global-batch", "64",
                                  "--mfu", "0.4", "--elementwise-traffic", "20"])
    assert refused.exit_code == 2 and "elementwise-traffic: got 20" in refused.stderr
