"""Compute speed from a measured run (``--rate``, issue 15): the MFU that reproduces a throughput
the user measured, then the target predicted at it, as with ``--mfu``."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from cli import app
from costmodel.training import measured_rate
from costmodel.training.iteration import TrainingConfig
from costmodel.training.oncluster import iteration, measured_mfu
from dpbase.errors import InputError
from dpbase.values import replace

runner = CliRunner()

RN50_AMP = TrainingConfig(micro_batch=256, compute_dtype="fp16", grad_dtype="fp16", optimizer="sgd")
RN50_ARGS = ["--model", "resnet-50", "--cluster", "dgx-1", "--micro-batch", "256", "--compute-dtype", "fp16",
             "--grad-dtype", "fp16", "--optimizer", "sgd"]


def _json(*args: str) -> dict:
    out = runner.invoke(app, ["iteration", *args, "--json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


CASES = [  # (model, cluster, config, nodes, GPUs per node of the measured run, its samples/s)
    ("resnet-50", "dgx-1", RN50_AMP, 1, 1, 1200.0),
    ("gpt2", "dgx-h100", TrainingConfig(micro_batch=8, accumulation_steps=4), 1, 1, 40.0),
    ("transformer-xl-large", "dgx-2h", TrainingConfig(micro_batch=4, compute_dtype="fp16", grad_dtype="fp16"),
     1, 16, 154950 / 384),
    ("llama2-7b", "dgx-a100", TrainingConfig(micro_batch=1, zero_stage=3, sync="fsdp"), 1, 8, 8.0),
    ("resnet-50", "dgx-1", replace(RN50_AMP, transport="tcp"), 2, 8, 15000.0),  # two nodes, an explicit transport
]


@pytest.mark.parametrize(("model", "cluster", "config", "nodes", "per_node", "rate"), CASES)
def test_the_solved_mfu_reproduces_the_measured_rate(model, cluster, config, nodes, per_node, rate):
    """The measured setup run at the solved MFU gives the measured rate (to 1e-9), with its own
    collectives (and the config's transport) when the measurement spans several GPUs."""
    solved = measured_mfu(model, cluster, config, rate, nodes=nodes, gpus_per_node=per_node)
    assert not solved.capped and not solved.floored and 1e-4 < solved.mfu < 1.0
    again = iteration(model, cluster, measured_rate.calibrated(config, solved), nodes=nodes, gpus_per_node=per_node)
    assert again.samples_per_s == pytest.approx(rate, rel=1e-9)
    assert solved.floor_samples_per_s < rate < solved.ceiling_samples_per_s


FLAG_SETS = [  # flags the measured run shares with the target, on both (--gpus K and --rate-gpus K)
    (["--sync", "horovod"], 8, 9000),
    (["--zero", "1", "--rate-zero", "1"], 8, 8000),
    (["--zero", "3", "--sync", "fsdp", "--rate-zero", "3"], 8, 8000),
    (["--input-rate", "1500"], 8, 9000),
    (["--jitter", "0.05", "--slow-node", "1.2", "--accum", "2", "--rate-accum", "2"], 16, 15000),  # two dgx-1 nodes
    (["--backend", "ideal"], 16, 16000),
    # 10 GbE TCP between nodes (AWS p2.8xlarge): the measured node runs without it, the target with it
    (["--cluster", "aws-p2.8xlarge", "--compute-dtype", "fp32", "--grad-dtype", "fp32", "--micro-batch", "64"], 8, 300),
]


@pytest.mark.parametrize(("flags", "gpus", "rate"), FLAG_SETS)
def test_cli_rate_is_reproduced_by_the_measured_setup(flags, gpus, rate):
    """Through the CLI: the measured setup itself (K GPUs, the flags: algorithm, servers, sync,
    loss terms) predicted from its own rate runs at that rate; a target on 4 nodes (its own
    transport) gets the same MFU, which depends on the measured run alone."""
    measured = _json(*RN50_ARGS, *flags, "--gpus", str(gpus), "--rate", str(rate), "--rate-gpus", str(gpus))
    assert measured["samples_per_s"] == pytest.approx(rate, rel=1e-9) and measured["ranks"] == gpus
    target = _json(*RN50_ARGS, *flags, "--nodes", "4", "--rate", str(rate), "--rate-gpus", str(gpus))
    assert target["transport"] == ("tcp" if "aws-p2.8xlarge" in flags else "rdma") and target["ranks"] == 32
    assert target["mfu"] == measured["mfu"]


PLAIN = ["--model", "gpt2-xl", "--cluster", "dgx-h100", "--nodes", "2", "--micro-batch", "1", "--seq-len", "1024",
         "--rate", "200", "--rate-gpus", "16"]  # a run that fits on an 80 GB GPU without sharding


@pytest.mark.parametrize(("extra", "same_as"), [
    (["--algorithm", "parameter-server", "--servers", "2"], []), (["--host-reduce"], []), (["--topk", "0.01"], []),
    (["--bucket", "4MiB"], []), (["--first-bucket", "64MiB"], []), (["--no-overlap"], []), (["--async"], []),
    (["--algorithm", "ring"], []), (["--grad-dtype", "fp32"], []), (["--recompute"], []), (["--accum", "8"], []),
    (["--zero", "3"], []), (["--zero", "3", "--sync", "fsdp"], []),
    (["--zero", "1", "--offload-optimizer", "--rate-zero", "1"], ["--zero", "1", "--rate-zero", "1"]),
    (["--zero", "1", "--overlap-param-gather", "--rate-zero", "1"], ["--rate-zero", "1"]),
    (["--zero", "3", "--quantize-grads", "int8", "--rate-zero", "3"], ["--rate-zero", "3"]),
    (["--zero", "3", "--shard", "hybrid", "--rate-zero", "3"], ["--rate-zero", "3"]),
])
def test_the_measured_run_is_plain_data_parallelism(extra, same_as):
    """What the target does beyond plain data parallelism (algorithm, servers, host reduction,
    compression, buckets, overlap, asynchronous updates, gradient dtype, recomputation,
    accumulation, ZeRO and its extras) is not what the measured run did: the MFU is the plain
    run's, set by the --rate-* options alone."""
    assert _json(*PLAIN, *extra)["mfu"] == _json(*PLAIN, *same_as)["mfu"]


@pytest.mark.parametrize("option", [["--rate-zero", "3"], ["--rate-recompute"], ["--rate-accum", "4"],
                                    ["--compute-dtype", "fp8"]])
def test_the_rate_options_describe_the_measured_run(option):
    assert _json(*PLAIN, *option)["mfu"] != _json(*PLAIN)["mfu"]


def test_a_rate_out_of_reach_is_flagged_with_its_limits():
    config = TrainingConfig(micro_batch=8)
    high = measured_mfu("gpt2", "dgx-1", config, 1e6)
    low = measured_mfu("gpt2", "dgx-1", config, 1e-6)
    assert high.capped and high.mfu == 1.0 and low.floored and low.mfu == measured_rate.LOW_MFU
    source = measured_rate.MEASURED_SOURCE
    at_one = iteration("gpt2", "dgx-1", replace(config, mfu=1.0, mfu_calibration=source), nodes=1, gpus_per_node=1)
    at_low = iteration("gpt2", "dgx-1", replace(config, mfu=measured_rate.LOW_MFU, mfu_calibration=source),
                       nodes=1, gpus_per_node=1)
    assert high.ceiling_samples_per_s == pytest.approx(at_one.samples_per_s, rel=1e-12)
    assert low.floor_samples_per_s == pytest.approx(at_low.samples_per_s, rel=1e-12)
    for bad in (float("nan"), -5.0, 0.0, float("inf")):
        with pytest.raises(InputError, match="rate"):
            measured_mfu("gpt2", "dgx-1", config, bad)
    for out_of_reach in (high, low):  # not put in a config as if it were solved
        with pytest.raises(InputError, match="a measured rate the model can reach"):
            measured_rate.calibrated(config, out_of_reach)


def test_a_measured_run_that_cannot_fit_in_memory_is_refused():
    """A 70B model on one 85 GB GPU without sharding needs over a terabyte: no rate was measured
    on that run, so the description is wrong; sharded over 32 GPUs with recomputation it fits."""
    args = ["iteration", "--model", "llama2-70b", "--cluster", "dgx-h100", "--nodes", "8", "--zero", "3",
            "--micro-batch", "1", "--seq-len", "4096", "--rate", "8000 tok/s"]
    out = runner.invoke(app, args)
    assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1, out.output
    assert "rate: got 'measured on 1 GPU at micro-batch 1, ZeRO-0'" in out.output
    assert "a run that fits in memory" in out.output and "the GPUs it ran on" in out.output
    sharded = runner.invoke(app, [*args, "--rate-gpus", "32", "--rate-zero", "3", "--rate-recompute", "--json"])
    assert sharded.exit_code == 0, sharded.output
    assert json.loads(sharded.stdout)["mfu_source"].startswith("solved from the measured rate")
    with pytest.raises(InputError, match="fits in memory"):  # the API refuses it too
        measured_mfu("llama2-70b", "dgx-h100", TrainingConfig(micro_batch=1, seq_len=4096), 2.0)


def test_published_transformer_xl_scaling_from_its_measured_node():
    """NVIDIA DeepLearningExamples PyTorch Transformer-XL large, DGX-2H (16 V100), AMP, local batch
    4 (README "Training performance: 8x NVIDIA DGX-2H"; tests/data/dp_scaling/results.csv): one node
    154,950 tokens/s, 4 nodes 605,620 (97.7 %). From the node's rate alone the 4-node efficiency
    is predicted within 3.5 points: 96.1 % (the development set's leave-one-publication-out
    median is 2.2 across nodes, docs/validation.md; 94.5 % while DDP's buckets split tensors, 95.1 %
    while the GPU speed spread was 1.2 %)."""
    data = _json("--model", "transformer-xl-large", "--cluster", "dgx-2h", "--nodes", "4", "--micro-batch", "4",
                 "--compute-dtype", "fp16", "--grad-dtype", "fp16", "--rate", "154950 tok/s", "--rate-gpus", "16")
    efficiency = data["samples_per_s"] / (4 * 154950 / 384)
    assert efficiency == pytest.approx(0.977, abs=0.035)  # the published figure
    assert efficiency == pytest.approx(0.961, abs=0.005)  # what the model gives (a regression pin)
    assert data["mfu_source"] == "solved from the measured rate 404 samples/s on 16 GPUs at micro-batch 4, ZeRO-0"


def test_rate_calibrates_the_default_mfu():
    """At the micro-batch the CNN default was measured at (256 on an A100) the calibrated MFU and
    the same value given as --mfu agree, interval included; at micro-batch 64 they do not: the
    calibrated one keeps the fixed time per micro-batch (the reported MFU is the base one), and
    still reproduces the rate measured there."""
    base = ["--model", "resnet-50", "--cluster", "dgx-a100", "--compute-dtype", "fp16", "--grad-dtype", "fp16",
            "--optimizer", "sgd"]
    by_rate = _json(*base, "--micro-batch", "256", "--rate", "2470/s")
    by_mfu = _json(*base, "--micro-batch", "256", "--mfu", repr(by_rate["mfu"]))
    for key in ("total_s", "samples_per_s", "published_interval_s", "compute_s"):
        assert by_rate[key] == pytest.approx(by_mfu[key], rel=1e-12), key
    assert by_mfu["mfu_source"] == "given by the user"
    small = _json(*base, "--micro-batch", "64", "--gpus", "1", "--rate", "1500")
    assert small["samples_per_s"] == pytest.approx(1500, rel=1e-9)
    as_given = _json(*base, "--micro-batch", "64", "--gpus", "1", "--mfu", repr(small["mfu"]))
    assert as_given["samples_per_s"] > 1.1 * 1500 and small["fixed_s_per_micro_batch"] > 0
    text = runner.invoke(app, ["iteration", *base, "--micro-batch", "256", "--rate", "2470 img/s"]).output
    assert "compute speed from --rate" in text and "(solved from the measured rate 2,470 samples/s on 1 GPU" in text


def test_the_measured_run_is_not_the_target_s_accumulation_or_zero():
    """The measured run is one micro-batch per step at ZeRO-0 unless --rate-accum/--rate-zero
    say otherwise: the target's --accum and --zero do not move the MFU (so accumulation still
    amortises the step's fixed costs), the --rate-* options do."""
    base = ["--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "1", "--seq-len", "128", "--rate", "300"]
    mfus = {_json(*base, *extra)["mfu"] for extra in ([], ["--accum", "4"], ["--accum", "16"], ["--zero", "1"])}
    assert len(mfus) == 1
    one, sixteen = _json(*base), _json(*base, "--accum", "16")
    # 16 micro-batches share one step's fixed costs: the step is 16 one-micro-batch steps less
    # 15 of each per-step term (host overhead, the gradient's buffer copies, optimizer, exposed
    # all-reduce and its interference)
    per_step = sum(one[key] for key in ("host_overhead_s", "buffer_copy_s", "optimizer_s", "exposed_comm_s",
                                        "interference_s"))
    assert one["host_overhead_s"] > 0 and one["optimizer_s"] > 0 and one["exposed_comm_s"] > 0
    assert sixteen["total_s"] == pytest.approx(16 * one["total_s"] - 15 * per_step, rel=1e-9)
    stated = _json(*base, "--accum", "16", "--rate-accum", "16")
    assert stated["mfu"] != one["mfu"] and stated["mfu_source"].endswith("at micro-batch 1 x 16, ZeRO-0")
    measured = _json(*base, "--accum", "16", "--rate-accum", "16", "--gpus", "1", "--rate-gpus", "1")
    assert measured["samples_per_s"] == pytest.approx(300, rel=1e-9)  # the run it describes, reproduced
    zero3 = _json(*base, "--rate-zero", "3", "--rate-gpus", "8")
    assert zero3["mfu_source"].endswith("on 8 GPUs at micro-batch 1, ZeRO-3")
    assert _json(*base, "--zero", "3", "--gpus", "8", "--rate-zero", "3", "--rate-gpus", "8")["samples_per_s"] == \
        pytest.approx(300, rel=1e-9)


@pytest.mark.parametrize("option", [["--rate-gpus", "8"], ["--rate-micro-batch", "128"]])
def test_the_measured_setup_options_change_the_answer(option):
    """The same total rate on 8 GPUs is an eighth of the speed per GPU (a little more: their
    all-reduce and host overhead take time); at half the micro-batch, a slower one."""
    alone = _json(*RN50_ARGS, "--rate", "1200")
    varied = _json(*RN50_ARGS, "--rate", "1200", *option)
    if option[0] == "--rate-gpus":
        assert 1 / 8 < varied["mfu"] / alone["mfu"] < 1.1 / 8
    else:  # 128 images at 1,200/s: each micro-batch pays the CNN's fixed time twice as often per image
        assert varied["mfu"] > alone["mfu"]
    assert varied["total_s"] != alone["total_s"]


def test_tokens_are_divided_by_the_sequence_length():
    base = ["--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "8"]
    assert _json(*base, "--rate", "40960 tok/s")["mfu"] == _json(*base, "--rate", "40")["mfu"]  # 1,024 tokens
    assert _json(*base, "--seq-len", "512", "--rate", "20480 tokens/s")["mfu"] == \
        _json(*base, "--seq-len", "512", "--rate", "40")["mfu"]
    assert measured_rate.parse_rate("1,200 samples/s", 0) == 1200.0
    assert measured_rate.parse_rate("1,234,567.5/s", 0) == 1234567.5
    assert measured_rate.parse_rate("1_000", 0) == 1000.0
    assert measured_rate.parse_rate(" 450 SEQ / S ", 1024) == 450.0
    # the unit names what a sample is: images for a CNN, sequences for a model with a sequence
    assert measured_rate.parse_rate("1200 img/s", 0, kind="cnn") == 1200.0
    assert measured_rate.parse_rate("3000 img/s", 197, kind="vit") == 3000.0  # a ViT's tokens are its patches
    for text, tokens, kind in (("1200 img/s", 1024, "transformer"), ("450 seq/s", 0, "cnn"), ("450 seq/s", 197, "vit")):
        with pytest.raises(InputError, match="model's samples are"):
            measured_rate.parse_rate(text, tokens, kind=kind)
    assert measured_rate.parse_rate(2048, 512) == 2048.0  # a number is samples/s
    assert measured_rate.parse_rate("2048 tokens/s", 512) == 4.0


@pytest.mark.parametrize("text", ["0", "-5", "nan", "inf", "1e400", "12x", "1200 GB/s", "", "1e13", "1,5",
                                  "1,,,2", "12,34", "1,2345", "١٢٠٠", "1200 tok/s/s"])
def test_a_malformed_rate_is_refused(text):
    with pytest.raises(InputError, match="rate"):
        measured_rate.parse_rate(text, 1024)


def test_a_token_rate_needs_a_sequence():
    with pytest.raises(InputError, match="a token rate needs a model with a sequence"):
        measured_rate.parse_rate("1000 tok/s", 0)


@pytest.mark.parametrize(("extra", "needle"), [
    (["--rate", "1200", "--mfu", "0.3"], "rate: got '1200'; allowed: either --rate or --mfu"),
    (["--rate", "12x"], "rate: got '12x'"),
    (["--rate", "1,5"], "rate: got '1,5'"),
    (["--rate", "1200", "--rate-gpus", "0"], "rate_gpus: got 0"),
    (["--rate", "1200", "--rate-gpus", "80000000000"], "rate_gpus: got 80000000000"),
    (["--rate", "1200", "--rate-micro-batch", "0"], "rate_micro_batch: got 0"),
    (["--rate-gpus", "8"], "rate_gpus: got 8; allowed: only with --rate"),
    (["--rate-micro-batch", "0"], "rate_micro_batch: got 0; allowed: only with --rate"),
    (["--rate-accum", "2"], "rate_accum: got 2; allowed: only with --rate"),
    (["--rate-zero", "1"], "rate_zero: got 1; allowed: only with --rate"),
    (["--rate", "1200", "--rate-zero", "5"], "rate_zero: got 5; allowed: 0, 1, 2 or 3"),
    (["--rate", "1200", "--rate-accum", "0"], "rate_accum: got 0"),
    (["--rate", "1200", "--sync", "horovod", "--rate-zero", "1"],
     "rate_zero: got 1; allowed: 0 with --sync horovod (ZeRO needs --sync ddp or fsdp)"),
    (["--rate-recompute"], "rate_recompute: got True; allowed: only with --rate"),
    (["--rate", "1200", "--compute-dtype", "fp4"], "compute_dtype"),
    (["--rate", "5e6"], "allowed: at most 6,924 samples/s: resnet-50 on 1 v100-sxm2 at micro-batch 256 at MFU 1.38"),  # ResNet-50's Winograd ceiling
    (["--micro-batch", "0", "--rate", "10"], "micro_batch: got 0"),
    (["--rate", "0.1"], "allowed: at least 0.509 samples/s"),  # the rate at MFU 1e-4
    (["--rate", "1200", "--input-rate", "500"], "at most 500 samples/s"),
    (["--rate", "10 tok/s"], "a token rate needs a model with a sequence"),
])
def test_cli_refuses_bad_rates_in_one_line(extra, needle):
    out = runner.invoke(app, ["iteration", *RN50_ARGS, *extra])
    assert out.exit_code == 2, out.output
    assert needle in out.output and len(out.output.strip().splitlines()) == 1 and "Traceback" not in out.output
    as_json = runner.invoke(app, ["iteration", *RN50_ARGS, *extra, "--json"])
    assert as_json.exit_code == 2 and needle in json.loads(as_json.stdout)["error"]["message"]


def test_gpus_without_nodes_pack_on_the_fewest_nodes_as_the_planner_lays_them_out():
    """--gpus alone runs as the planner's layouts do (cluster.mapping.layout_of): as many GPUs
    on each node, the fewest nodes. 20 on 8-GPU nodes are 4 × 5 (refused before, as 20 does not
    split over ⌈20/8⌉ = 3 nodes, while `plan --gpus 20` recommended 4 × 5), 12 are 2 × 6, 9 are 3 × 3."""
    for gpus, nodes, per_node in ((20, 4, 5), (12, 2, 6), (9, 3, 3), (8, 1, 8), (16, 2, 8)):
        found = _json(*RN50_ARGS, "--gpus", str(gpus))
        assert (found["ranks"], found["nodes"], found["gpus_per_node"]) == (gpus, nodes, per_node)
    out = runner.invoke(app, ["iteration", *RN50_ARGS, "--gpus", "20", "--nodes", "3"])  # given nodes stay a rule
    assert out.exit_code == 2 and "a multiple of --nodes 3" in out.output


PLAN = ["plan", "--model", "resnet-50", "--cluster", "dgx-a100", "--global-batch", "2048", "--compute-dtype",
        "fp16", "--optimizer", "sgd", "--json"]


def _split(plan: dict, micro_batch: int) -> dict:
    """The fastest 8-GPU row of a plan at ``micro_batch``."""
    rows = [c for c in plan["candidates"] if c["gpus"] == 8 and c["micro_batch"] == micro_batch]
    return min(rows, key=lambda c: c["total_s"])


def test_plan_takes_the_rate_as_a_calibrated_mfu():
    """The plan at --rate runs at the MFU solved for plain data parallelism on the measured GPUs
    (fp16 gradients, ZeRO-0), calibrated: a split of the batch into smaller micro-batches still
    pays the CNN's fixed time per micro-batch (under --mfu at the same value the splits tie), and
    the recommended row's step is what `iteration --rate` gives for it."""
    rate = ["--rate", "2470 img/s", "--rate-micro-batch", "256"]
    by_rate = json.loads(runner.invoke(app, [*PLAN, *rate, "--top", "200"]).output)
    mfu = by_rate["compute_speed"]["base_mfu"]
    assert mfu == measured_mfu("resnet-50", "dgx-a100", RN50_AMP, 2470.0).mfu
    by_mfu = json.loads(runner.invoke(app, [*PLAN, "--mfu", repr(mfu), "--top", "200"]).output)
    assert "compute_speed" not in by_mfu
    whole, split = _split(by_rate, 256), _split(by_rate, 64)
    assert split["accumulation_steps"] == 4 and split["total_s"] > 1.2 * whole["total_s"]
    assert _split(by_mfu, 64)["total_s"] == pytest.approx(_split(by_mfu, 256)["total_s"], rel=0.01)
    best = by_rate["best"]
    assert (best["gpus"], best["micro_batch"], best["accumulation_steps"]) == (8, 256, 1)
    step = _json("--model", "resnet-50", "--cluster", "dgx-a100", "--micro-batch", "256", "--compute-dtype", "fp16",
                 "--optimizer", "sgd", "--grad-dtype", best["grad_dtype"], "--bucket", f"{best['bucket_bytes']:.0f}B",
                 *rate)
    assert best["total_s"] == pytest.approx(step["total_s"], rel=1e-6)
    assert by_rate["compute_speed"]["source"] == ("solved from the measured rate 2,470 samples/s on 1 GPU at "
                                                  "micro-batch 256, ZeRO-0")
    text = runner.invoke(app, [*PLAN[:-1], *rate]).output
    assert f"; compute speed: base MFU {mfu:.1%} solved from the measured rate 2,470 samples/s" in text


def test_plan_measured_run_ignores_the_swept_gradient_dtypes_order_and_fsdp():
    """The measured run's gradients are the compute dtype's width and it is DDP also under
    --sync fsdp: neither the order of --grad-dtypes nor the sync of the swept plans moves the MFU."""
    args = ["plan", "--model", "gpt2-xl", "--cluster", "aws-p4d", "--nodes", "2", "--global-batch", "64",
            "--rate", "60", "--rate-gpus", "16", "--rate-micro-batch", "2", "--json"]
    mfus = {json.loads(runner.invoke(app, [*args, *extra]).output)["compute_speed"]["base_mfu"]
            for extra in (["--grad-dtypes", "bf16,fp32"], ["--grad-dtypes", "fp32,bf16"], ["--sync", "fsdp"])}
    assert len(mfus) == 1
    config = TrainingConfig(micro_batch=2, grad_dtype="bf16")
    assert mfus == {measured_mfu("gpt2-xl", "aws-p4d", config, 60.0, nodes=2, gpus_per_node=8).mfu}


def test_plan_measured_run_keeps_the_loader_and_jitter_and_recomputes_when_told():
    base = [*PLAN, "--rate", "2000", "--rate-micro-batch", "256"]
    loader = runner.invoke(app, [*base, "--input-rate", "1900"])
    assert loader.exit_code == 2 and "at most 1,900 samples/s" in loader.output
    gpt = ["plan", "--model", "gpt2", "--cluster", "dgx-a100", "--global-batch", "64", "--rate", "100",
           "--rate-micro-batch", "8", "--json"]
    plain = json.loads(runner.invoke(app, gpt).output)["compute_speed"]["base_mfu"]
    assert json.loads(runner.invoke(app, [*gpt, "--recompute"]).output)["compute_speed"]["base_mfu"] == plain
    assert json.loads(runner.invoke(app, [*gpt, "--rate-recompute"]).output)["compute_speed"]["base_mfu"] > plain
    jittery = json.loads(runner.invoke(app, [*gpt, "--jitter", "0.1", "--rate-gpus", "8"]).output)
    steady = json.loads(runner.invoke(app, [*gpt, "--rate-gpus", "8"]).output)
    assert jittery["compute_speed"]["base_mfu"] > steady["compute_speed"]["base_mfu"]  # the wait is not compute


PLAN_ROWS = [  # (plan arguments, --rate flags): a transformer with accumulation, ZeRO plans, a CNN
    (["--model", "gpt2", "--cluster", "dgx-h100", "--seq-len", "128", "--global-batch", "16", "--grad-dtypes", "bf16"],
     ["--rate", "300", "--rate-micro-batch", "1"]),
    (["--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "2", "--seq-len", "4096", "--global-batch", "256",
      "--grad-dtypes", "bf16"], ["--rate", "20", "--rate-gpus", "8", "--rate-micro-batch", "2", "--rate-zero", "1"]),
    (["--model", "vgg16", "--cluster", "dgx-a100", "--global-batch", "1024", "--compute-dtype", "fp16",
      "--grad-dtypes", "fp16", "--optimizer", "sgd"], ["--rate", "900", "--rate-micro-batch", "64"]),
    (["--model", "llama2-7b", "--cluster", "aws-p4d", "--nodes", "2", "--seq-len", "4096", "--global-batch", "64",
      "--grad-dtypes", "fp32"], ["--rate", "6", "--rate-gpus", "16", "--rate-micro-batch", "1", "--rate-zero", "3"]),
    (["--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "2", "--seq-len", "4096", "--global-batch", "128",
      "--grad-dtypes", "bf16", "--offload-optimizer"], ["--rate", "20", "--rate-gpus", "16", "--rate-micro-batch", "1",
                                                          "--rate-zero", "1"]),
    (["--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "2", "--seq-len", "4096", "--global-batch", "128",
      "--grad-dtypes", "bf16", "--shard", "hybrid"], ["--rate", "20", "--rate-gpus", "16", "--rate-micro-batch", "1",
                                                       "--rate-zero", "3"]),
    # a per-tensor optimizer loop, in the measured run and in ZeRO-0, 1 and 2 rows
    (["--model", "gpt2-large", "--cluster", "dgx-a100", "--global-batch", "512", "--grad-dtypes", "bf16",
      "--optimizer-impl", "per-tensor"], ["--rate", "40", "--rate-gpus", "8", "--rate-micro-batch", "8"]),
    # rows the planner recomputes by itself (llama2-70b fits no other way on 32 A100s)
    (["--model", "llama2-70b", "--cluster", "dgx-a100", "--nodes", "4", "--seq-len", "4096", "--global-batch", "64",
      "--grad-dtypes", "bf16"], ["--rate", "0.5", "--rate-gpus", "32", "--rate-micro-batch", "1", "--rate-zero", "3",
                                 "--rate-recompute"]),
]


@pytest.mark.parametrize(("args", "rate"), PLAN_ROWS)
def test_plan_rows_are_what_iteration_gives_under_the_same_rate(args, rate):
    """For the same --rate flags, every listed plan row takes the step `dpcost iteration` gives
    for that row (one definition of the measured run for both commands)."""
    plan = json.loads(runner.invoke(app, ["plan", *args, *rate, "--top", "4", "--json"]).output)
    for row in plan["candidates"]:
        nodes = ["--nodes", str(row["nodes"])] if row["nodes"] > 1 else []
        extras = [*(["--recompute"] if row["recompute"] else []),
                  *(["--offload-optimizer"] if row["offload_optimizer"] else []),
                  *(["--shard", row["shard"]] if row["shard"] != "full" else [])]
        step = _json(*_without(args, ("--global-batch", "--grad-dtypes", "--nodes", "--offload-optimizer", "--shard")),
                     *nodes, "--gpus", str(row["gpus"]), "--micro-batch", str(row["micro_batch"]),
                     "--accum", str(row["accumulation_steps"]), "--grad-dtype", row["grad_dtype"],
                     "--zero", str(row["zero_stage"]), "--bucket", f"{row['bucket_bytes']:.0f}B",
                     "--algorithm", row["algorithm"], "--sync", row["sync"], *extras, *rate)
        assert row["total_s"] == pytest.approx(step["total_s"], rel=1e-6), row


FLAGS = ("--offload-optimizer",)  # options without a value


def _without(args: list[str], options: tuple[str, ...]) -> list[str]:
    """``args`` without the given options and their values."""
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in options:
            skip = arg not in FLAGS
            continue
        out.append(arg)
    return out


@pytest.mark.parametrize(("extra", "needle"), [
    (["--rate", "2470"], "error: rate_micro_batch: got None"),
    (["--rate", "2470", "--mfu", "0.3"], "error: rate: got '2470'; allowed: either --rate or --mfu"),
    (["--rate-gpus", "8"], "error: rate_gpus: got 8; allowed: only with --rate"),
    (["--rate-zero", "2"], "error: rate_zero: got 2; allowed: only with --rate"),
    (["--grad-dtypes", "", "--rate", "2470", "--rate-micro-batch", "256"], "error: grad_dtypes: got ''"),
    (["--grad-dtypes", "fp33", "--rate", "2470", "--rate-micro-batch", "256"], "error: grad_dtypes: got"),
])
def test_plan_refuses_bad_rates_in_one_line(extra, needle):
    out = runner.invoke(app, [*PLAN[:-1], *extra])
    assert out.exit_code == 2 and out.output.startswith(needle) and len(out.output.strip().splitlines()) == 1


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(["gpt2", "bert-large", "resnet-50", "vgg16", "llama2-7b"]),
       micro_batch=st.sampled_from([1, 2, 8, 32]), accumulation=st.integers(1, 4),
       layout=st.sampled_from([(1, 1), (1, 8), (2, 8)]), zero=st.sampled_from([0, 1, 3]),
       mfu=st.floats(0.02, 0.9), dtype=st.sampled_from(["bf16", "fp32"]))
def test_solving_inverts_the_rate(model, micro_batch, accumulation, layout, zero, mfu, dtype):
    """For any setup that fits in memory, the rate the model gives at a calibrated MFU, solved
    back, is that MFU (to 1e-9): the rate rises with the MFU and the bisection finds it,
    collectives included; one that does not fit is refused (no rate was measured on it)."""
    nodes, per_node = layout
    config = TrainingConfig(micro_batch=micro_batch, accumulation_steps=accumulation, zero_stage=zero,
                            compute_dtype=dtype, grad_dtype=dtype,
                            optimizer="sgd" if model in ("resnet-50", "vgg16") else "adamw")
    forward = iteration(model, "dgx-a100", replace(config, mfu=mfu, mfu_calibration=measured_rate.MEASURED_SOURCE),
                        nodes=nodes, gpus_per_node=per_node)
    if forward.memory.total_bytes > forward.memory.capacity_bytes:  # no run was measured there: refused
        with pytest.raises(InputError, match="a run that fits in memory"):
            measured_mfu(model, "dgx-a100", config, forward.samples_per_s, nodes=nodes, gpus_per_node=per_node)
        return
    solved = measured_mfu(model, "dgx-a100", config, forward.samples_per_s, nodes=nodes, gpus_per_node=per_node)
    assert not solved.capped and not solved.floored
    assert solved.mfu == pytest.approx(mfu, rel=1e-9)


def test_one_rule_says_where_an_mfu_came_from():
    """iteration and the planner read the same rule: a calibration without an MFU is refused by
    both, and an empty calibration text is still a calibration (the planner once dropped it in
    its step interval and refused its own plan)."""
    from costmodel.planner.recommend import plan

    with pytest.raises(InputError, match="mfu_calibration"):
        plan("gpt2", "dgx-h100", global_batch=256, mfu_calibration="x")
    with pytest.raises(InputError, match="mfu_calibration"):
        iteration("gpt2", "dgx-h100", TrainingConfig(micro_batch=8, mfu_calibration="x"))
    # ResNet-50 at batch 64: the micro-batch terms (a CNN's fixed time) decide the step, so a
    # calibrated MFU and the same MFU given differ, and "" must read as calibrated
    calibrated = plan("resnet-50", "dgx-h100", global_batch=64, mfu=0.4, mfu_calibration="")
    labelled = plan("resnet-50", "dgx-h100", global_batch=64, mfu=0.4, mfu_calibration="from a run")
    given = plan("resnet-50", "dgx-h100", global_batch=64, mfu=0.4)
    assert calibrated.best == labelled.best and labelled.best != given.best
    # the Plan says where its speed came from (the CLI's JSON compute_speed is this)
    assert labelled.compute_speed == {"base_mfu": 0.4, "source": "from a run"} and given.compute_speed is None
