"""CNN default MFU (models.toml ``[mfu_by_kind.cnn]``) against published ResNet-50 throughput.

PyTorch rows (the ones the defaults are derived from): NVIDIA DeepLearningExamples, PyTorch
ResNet-50 v1.5 README, "Training performance results", pytorch-21.03 container. The default
is the mean of the 1-GPU and the per-GPU 8-GPU rate, so each row must be within 15 %.

MXNet rows (not used for the defaults; another framework, container and batch size): the same
repository's MxNet/Classification/RN50v1.5 README, mxnet-20.12, DGX A100 batch 256, DGX-1
V100 16GB batch 192 (AMP) / 96 (FP32). MXNet's AMP runs 15 % (DGX-1) faster than PyTorch
21.03's on V100 (its README: NHWC not yet supported in PyTorch AMP), so the band is 25 % (the
transformer defaults missed the A100 rows by +160 %).
"""

from __future__ import annotations

import json

import pytest
from iteration_support import SmallGpu, ring_comm
from typer.testing import CliRunner

from cli import app
from costmodel.training import iteration, workloads
from costmodel.training.iteration import TrainingConfig, iteration_breakdown
from hardware.profiles import ARCHITECTURES

runner = CliRunner()
RESNET = workloads.load_model("resnet-50")


def rate_of(arch: str, dtype: str) -> float:
    """The MFU of one measured (architecture, dtype) entry."""
    return workloads.measured_mfu(workloads._data()["mfu_by_kind"]["cnn"]["measured"][arch][dtype])


def _per_gpu(cluster: str, gpus: int, dtype: str, *extra: str, micro_batch: int = 256) -> dict:
    """One row, run at the micro-batch its table was measured at (a CNN micro-batch's fixed time
    makes it matter: costmodel.training.gemm)."""
    layout = ["--nodes", "1"] if gpus == 8 else ["--gpus", str(gpus)]
    result = runner.invoke(app, ["iteration", "--model", "resnet-50", "--cluster", cluster, *layout,
                                 "--micro-batch", str(micro_batch), "--compute-dtype", dtype, *extra, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["ranks"] == gpus
    return {**data, "per_gpu": data["samples_per_s"] / gpus}


@pytest.mark.parametrize(("cluster", "dtype", "gpus", "published_total"), [
    ("dgx-a100", "bf16", 8, 16_621), ("dgx-a100", "bf16", 1, 2_470),
    ("dgx-a100", "tf32", 8, 7_248), ("dgx-a100", "tf32", 1, 938),
    ("dgx-1", "fp16", 8, 8_322), ("dgx-1", "fp16", 1, 1_200),
    ("dgx-1", "fp32", 8, 2_855), ("dgx-1", "fp32", 1, 367),
])
def test_pytorch_resnet50_throughput_within_15_percent(cluster, dtype, gpus, published_total):
    data = _per_gpu(cluster, gpus, dtype, micro_batch=112 if dtype == "fp32" else 256)  # its configs.yml
    assert data["per_gpu"] == pytest.approx(published_total / gpus, rel=0.15)
    assert data["mfu_source"].startswith("cnn default for ")
    assert "DeepLearningExamples" in data["mfu_source"]


def test_dgx1_32gb_rows_are_also_within_15_percent():
    # dgx-1 carries the 32 GB V100; the defaults come from the 16 GB table. 32 GB table, AMP.
    assert _per_gpu("dgx-1", 1, "bf16")["per_gpu"] == pytest.approx(1_156, rel=0.15)
    assert _per_gpu("dgx-1", 8, "bf16")["per_gpu"] == pytest.approx(8_056 / 8, rel=0.15)


@pytest.mark.parametrize(("cluster", "dtype", "gpus", "published_total"), [
    ("dgx-a100", "bf16", 1, 2_180), ("dgx-a100", "bf16", 8, 16_925),
    ("dgx-a100", "tf32", 1, 1_022), ("dgx-a100", "tf32", 8, 8_001),
    ("dgx-1", "fp16", 1, 1_376), ("dgx-1", "fp16", 8, 10_723),
    ("dgx-1", "fp32", 1, 384), ("dgx-1", "fp32", 8, 3_005),
])
def test_mxnet_resnet50_throughput_within_25_percent(cluster, dtype, gpus, published_total):
    micro_batch = 256 if cluster == "dgx-a100" else {"fp16": 192, "fp32": 96}[dtype]  # the README's batches
    data = _per_gpu(cluster, gpus, dtype, micro_batch=micro_batch)
    assert data["per_gpu"] == pytest.approx(published_total / gpus, rel=0.25)


def test_the_cnn_default_is_far_below_the_transformer_default():
    data = _per_gpu("dgx-a100", 8, "bf16")
    assert data["mfu"] == pytest.approx((2_470 + 16_621 / 8) / 2 * 24.54e9 / 312e12, rel=1e-9)
    assert data["mfu"] < 0.5 * 0.45  # the A100 profile's transformer default


def test_a_user_mfu_wins_over_the_cnn_default():
    data = _per_gpu("dgx-a100", 8, "bf16", "--mfu", "0.3")
    assert data["mfu"] == 0.3 and data["mfu_source"] == "given by the user"


@pytest.mark.parametrize("model", ["gpt2", "vit-l-16", "bert-large", "7B"])
def test_other_kinds_take_the_width_roofline_and_without_a_width_the_gpu_profile_default(model):
    import hardware
    from costmodel.training import roofline
    from dpbase.values import replace

    gpu = hardware.load_system("dgx-a100").gpu
    workload = workloads.load_model(model)
    assert workloads.default_mfu_for_kind(workload.kind, "ampere", "bf16") is None
    assert iteration.mfu(gpu, None, workload, "bf16") == roofline.rate16(workload, gpu)
    assert iteration.mfu(gpu, None, replace(workload, hidden_size=0), "bf16") == (gpu.default_mfu, gpu.mfu_source)


def test_an_unmeasured_architecture_borrows_the_nearest_measured_one():
    rate, source = workloads.default_mfu_for_kind("cnn", "hopper", "bf16")
    assert rate == workloads.default_mfu_for_kind("cnn", "ampere", "bf16")[0]
    assert "borrowed from ampere" in source
    rate, source = workloads.default_mfu_for_kind("cnn", "turing", "fp16")
    assert rate == workloads.default_mfu_for_kind("cnn", "volta", "fp16")[0]
    assert "borrowed from volta" in source
    assert workloads.default_mfu_for_kind("cnn", "not-an-arch", "bf16")[0] == rate_of("ampere", "fp16")
    # fp32 on Ampere: the nearest architecture measured in fp32 is Volta.
    assert workloads.default_mfu_for_kind("cnn", "ampere", "fp32")[0] == rate_of("volta", "fp32")


def test_fp8_runs_a_cnn_at_the_16_bit_speed():
    h100 = SmallGpu(peak_flops={"bf16": 989e12, "fp16": 989e12, "fp8": 1979e12}, arch="hopper")
    config = dict(micro_batch=256)
    comm = ring_comm(8)
    bf16 = iteration_breakdown(RESNET, h100, comm, 8, TrainingConfig(**config, compute_dtype="bf16"))
    fp8 = iteration_breakdown(RESNET, h100, comm, 8, TrainingConfig(**config, compute_dtype="fp8"))
    assert fp8.compute_dtype == "fp8" and fp8.forward_s == pytest.approx(bf16.forward_s)
    assert fp8.mfu == pytest.approx(bf16.mfu * 989 / 1979) and "fp8 measured nowhere" in fp8.mfu_source


def test_every_architecture_has_a_search_order_of_measured_architectures():
    table = workloads._data()["mfu_by_kind"]["cnn"]
    measured, nearest = table["measured"], table["nearest"]
    assert set(nearest) == {*ARCHITECTURES, "unknown"}
    for arch, order in nearest.items():
        assert order and set(order) <= set(measured) and len(set(order)) == len(order)
        assert order[0] == arch or arch not in measured
        assert any(workloads.MFU_FALLBACK_DTYPE in measured[candidate] for candidate in order)
    for arch, by_dtype in measured.items():
        for dtype, entry in by_dtype.items():
            assert 0.05 < workloads.measured_mfu(entry) < 1.0, (arch, dtype)
            assert len(entry["gpus"]) == len(entry["images_per_s"]) and entry["source"]
            # the micro-batch it was measured at: without it the CNN's fixed time per micro-batch
            # (gemm.cnn_fixed_seconds) would silently be off for this architecture and dtype
            assert isinstance(entry.get("micro_batch"), int) and entry["micro_batch"] >= 1, (arch, dtype)
            if arch == workloads.SHARED_FP32:  # read by a GPU whose FP32 lanes are half shared (GA102: 8.6)
                assert workloads.mfu_reference_micro_batch("cnn", "ampere", dtype, compute_capability=86) \
                    == entry["micro_batch"]
            else:
                assert workloads.mfu_reference_micro_batch("cnn", arch, dtype) == entry["micro_batch"]


def test_a_measurement_with_unpaired_rows_is_refused():
    with pytest.raises(ValueError):
        workloads.measured_mfu({"model": "resnet-50", "gpus": [1, 8], "images_per_s": [100],
                                "peak_tflops": 100})


def test_kepler_runs_cnns_at_its_own_measured_mfu_not_voltas():
    """MXNet's training benchmark (ResNet-50 at 45.52 images/s on one GK210, batch 32) gives
    Kepler its own fp32 entry: MFU 45.52 x 24.54 GFLOP / 4.37 TFLOP/s, about half of Volta's."""
    rate, source = workloads.default_mfu_for_kind("cnn", "kepler", "fp32")
    assert rate == pytest.approx(45.52 * 24.54e9 / 4.37e12)
    assert "borrowed" not in source and "MXNet" in source
    assert rate < 0.5 * rate_of("volta", "fp32")
    # Pascal has its own entry from the same page (P100, 181.53 images/s); Turing borrows Volta's
    assert workloads.default_mfu_for_kind("cnn", "pascal", "fp32")[0] == pytest.approx(181.53 * 24.54e9 / 10.6e12)
    assert workloads.default_mfu_for_kind("cnn", "turing", "fp32")[0] == rate_of("volta", "fp32")
    # a 16-bit run on Kepler (no tensor cores) reads Kepler's own FP32 measurement, not Volta's tensor cores
    rate16, source16 = workloads.default_mfu_for_kind("cnn", "kepler", "fp16")
    assert rate16 == rate and "borrowed" not in source16 and "FP32 paths" in source16


@pytest.mark.parametrize("arch", workloads.NO_TENSOR_CORES)
def test_without_tensor_cores_a_16bit_cnn_runs_at_the_fp32_speed(arch):
    """Kepler and Pascal run 16-bit convolutions on their FP32 paths: the FP32 measurement at the
    FP32 speed (Dell EMC measured a P100 in FP16 at 1.0-1.3x its FP32 speed), not Volta's
    tensor-core MFU at the FP16 peak (a P100 at 0.97x its FP32 speed before, by coincidence)."""
    peaks = {"fp32": 10.6e12, "fp16": 21.2e12, "bf16": 21.2e12}
    fp32 = workloads.kind_mfu("cnn", arch, "fp32", peaks)
    for dtype in ("fp16", "bf16"):
        half = workloads.kind_mfu("cnn", arch, dtype, peaks)
        assert half.rate * peaks[dtype] == pytest.approx(fp32.rate * peaks["fp32"])
        assert half.entry == fp32.entry and "volta" not in half.source and "no tensor cores" in half.source
    # a tensor-core architecture keeps its own 16-bit measurement
    assert workloads.kind_mfu("cnn", "volta", "fp16", peaks).entry != workloads.kind_mfu("cnn", "volta", "fp32", peaks).entry


def test_a_k80_resnet_step_takes_the_kepler_measurement_time():
    """On the bundled AWS p2.8xlarge, one ResNet-50 micro-batch of 32 runs at MXNet's K80
    rate (45.52 images/s, forward + backward), not at Volta's MFU."""
    result = runner.invoke(app, ["iteration", "--model", "resnet-50", "--cluster", "aws-p2.8xlarge",
                                 "--gpus", "1", "--micro-batch", "32", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert 32 / data["compute_s"] == pytest.approx(45.52, rel=1e-6)
    # the default bf16 ran as fp32 (the K80 has no 16-bit math); an explicit fp16 is refused
    assert data["compute_dtype"] == "fp32"
    refused = runner.invoke(app, ["iteration", "--model", "resnet-50", "--cluster", "aws-p2.8xlarge",
                                  "--gpus", "1", "--micro-batch", "32", "--compute-dtype", "fp16"])
    assert refused.exit_code == 2 and "compute_dtype" in refused.output and "fp32" in refused.output


def test_fp32_on_lanes_shared_with_int32_reads_its_own_measurement():
    """GA10x and AD10x count INT32-shared lanes in their FP32 peak: an FP32 CNN reads Lambda's
    GA102 measurement (0.351), not Volta's 0.566, which put an RTX 4090 in FP32 1.6x past its own
    bf16 (1,571 against 985.5 images/s at micro-batch 64). Cards with dedicated FP32 lanes (A100,
    V100, H100) keep their architecture's entry; the RTX 3090 and RTX 3080 rows of the same tables
    are predicted within 10 % from it."""
    shared = workloads.default_mfu_for_kind("cnn", "ada", "fp32", {"fp32": 82.6, "tf32": 82.6}, 89)
    assert shared[0] == pytest.approx(554 * 6 * 4.09e9 / 38.7e12, rel=1e-3) and "half shared" in shared[1]
    assert workloads.default_mfu_for_kind("cnn", "ampere", "fp32", None, 80)[0] == pytest.approx(0.566, abs=0.001)
    assert workloads.default_mfu_for_kind("cnn", "ampere", "bf16", None, 86) == \
        workloads.default_mfu_for_kind("cnn", "ampere", "bf16", None, 80)
    for images_per_s, peak_tflops in ((554, 35.58), (426, 29.77)):  # RTX 3090, RTX 3080 (Lambda @080a6b7f)
        predicted = shared[0] * peak_tflops * 1e12 / (6 * 4.09e9)
        assert predicted == pytest.approx(images_per_s, rel=0.10)
    rates = {dtype: _throughput("rtx4090-8x-pcie", dtype) for dtype in ("bf16", "tf32", "fp32")}
    assert rates["fp32"] <= 1.02 * rates["bf16"] and rates["tf32"] >= rates["fp32"]


def test_tf32_is_never_slower_than_fp32_on_the_same_gpu():
    """TF32 is a math mode cuDNN may use, not one it must: where the GPU's FP32 measurement is the
    faster (a TF32 tensor peak no higher than the FP32 peak), a TF32 run takes the FP32 speed."""
    import hardware

    checked = 0
    for gpu in hardware.list_profiles("gpu"):
        peaks = dict(gpu.peak_flops)
        if not (peaks.get("tf32") and peaks.get("fp32")):
            continue
        cc = getattr(gpu, "compute_capability", None)
        tf32 = workloads.default_mfu_for_kind("cnn", gpu.arch, "tf32", peaks, cc)[0] * peaks["tf32"]
        fp32 = workloads.default_mfu_for_kind("cnn", gpu.arch, "fp32", peaks, cc)[0] * peaks["fp32"]
        assert tf32 >= fp32 * (1 - 1e-12), gpu.name
        checked += 1
    assert checked >= 10
    tf32 = workloads.default_mfu_for_kind("cnn", "ada", "tf32", {"fp32": 82.6, "tf32": 82.6}, 89)
    assert "at the FP32 speed" in tf32[1] and tf32[0] == pytest.approx(0.351, abs=0.001)


@pytest.mark.parametrize("model", ["alexnet", "vgg16", "inception-v3", "resnet-152", "resnet-50"])
def test_every_cnn_is_no_slower_in_tf32_than_in_fp32(model):
    """The model's own relative MFU counts in the choice: a TF32 run at the FP32 speed reads the
    FP32 ratio (AlexNet on an RTX 4090 ran at 5,850 images/s in TF32 against 8,448 in FP32 when the
    FP32 base rate took the tensor-core ratio)."""
    import hardware
    from costmodel.training.iteration import mfu

    workload = workloads.load_model(model)
    checked = 0
    for gpu in hardware.list_profiles("gpu"):
        if not (gpu.peak_flops.get("tf32") and gpu.peak_flops.get("fp32")):
            continue
        tf32 = mfu(gpu, None, workload, "tf32")[0] * gpu.peak_flops["tf32"]
        fp32 = mfu(gpu, None, workload, "fp32")[0] * gpu.peak_flops["fp32"]
        assert tf32 >= fp32 * (1 - 1e-12), gpu.name
        checked += 1
    assert checked >= 10
    rates = {dtype: _throughput_of(model, dtype) for dtype in ("tf32", "fp32")}
    assert rates["tf32"] >= rates["fp32"] * (1 - 1e-12)


def _throughput(cluster: str, dtype: str) -> float:
    return _throughput_of("resnet-50", dtype, cluster)


def _throughput_of(model: str, dtype: str, cluster: str = "rtx4090-8x-pcie") -> float:
    from costmodel.training.oncluster import iteration

    return iteration(model, cluster, gpus_per_node=1, micro_batch=64, compute_dtype=dtype).samples_per_s


def test_the_shared_fp32_entry_is_lambdas_a6000_row():
    """The GA10x/AD10x FP32 entry and the relative-MFU table quote the same Lambda CSV at the same
    commit: its ResNet-50 images/s is the table's RTX A6000 FP32 cell, and both name the commit."""
    cnn = workloads._data()["mfu_by_kind"]["cnn"]
    entry, table = cnn["measured"][workloads.SHARED_FP32]["fp32"], cnn["relative"]
    row = table["fp32"]["RTX A6000"]
    assert entry["images_per_s"] == [row[table["columns"].index(entry["model"])]]
    assert "080a6b7f" in entry["source"] and "080a6b7f" in table["source"]


def _forward_both_ways(workload, gpu, micro, flops, seq_len) -> dict:
    """dtype -> forward seconds over the ``micro`` array at TF32 and FP32 (default MFUs), each
    checked equal to the scalar calls (the planner's vectorised sweep and iteration agree)."""
    import numpy as np

    from costmodel.training.iteration import mfu, micro_batch_forward

    times = {}
    for dtype in ("tf32", "fp32"):
        rate, _ = mfu(gpu, None, workload, dtype)
        kwargs = dict(compute_dtype=dtype, peak=gpu.peak_flops[dtype], mfu=rate, mfu_given=False,
                      flops_per_sample=flops, seq_len=seq_len, mfu_default=True)
        vector = micro_batch_forward(workload, gpu, micro_batch=micro, **kwargs).forward_s
        scalar = [micro_batch_forward(workload, gpu, micro_batch=int(m), **kwargs).forward_s for m in micro]
        assert np.allclose(vector, scalar, rtol=1e-12), (gpu.name, dtype)
        times[dtype] = vector
    return times


@pytest.mark.parametrize("model", ["alexnet", "resnet-50", "resnet-152"])
def test_a_tf32_micro_batch_is_never_slower_than_an_fp32_one(model):
    """The per-image choice above can be overturned by the fixed time per micro-batch, which sits
    around each measurement's own micro-batch (FP32 112, TF32 256): ResNet-50 on an MI300X took
    66 ms in TF32 at micro-batch 256 against 50 ms in FP32. Each micro-batch now runs at the faster
    option, in iteration and in the planner's vectorised sweep alike."""
    import numpy as np

    import hardware

    workload = workloads.load_model(model)
    flops = workloads.training_flops_per_sample(workload, 0)
    micro = np.array([1, 8, 32, 64, 112, 128, 256, 512])
    checked = 0
    for gpu in hardware.list_profiles("gpu"):
        if not (gpu.peak_flops.get("tf32") and gpu.peak_flops.get("fp32")):
            continue
        times = _forward_both_ways(workload, gpu, micro, flops, 0)
        assert (times["tf32"] <= times["fp32"] * (1 + 1e-12)).all(), gpu.name
        checked += 1
    assert checked >= 10


def test_a_borrowed_cnn_speed_follows_hbm_bandwidth_not_peak():
    """ResNet-50 on an H100 borrowed the A100's MFU at 3.2x the peak, 3.2x the A100's speed, where
    Lambda's PyTorch rows measure 1.65-1.76x (review against published numbers, 2026-11-28): a
    borrowed measurement's speed scales by HBM bandwidth (3.35/2.039 TB/s = 1.64x). Measured
    architectures keep their own MFU."""
    import costmodel
    import hardware

    def speed(cluster):
        return costmodel.iteration("resnet-50", cluster, gpus_per_node=1, micro_batch=256, backend="ideal")

    a100, h100 = speed("dgx-a100"), speed("dgx-h100")
    hbm = hardware.load_system("dgx-h100").gpu.hbm_bandwidth_Bps / hardware.load_system("dgx-a100").gpu.hbm_bandwidth_Bps
    assert h100.samples_per_s / a100.samples_per_s == pytest.approx(hbm, rel=0.03)
    assert 1.5 < h100.samples_per_s / a100.samples_per_s < 1.8  # Lambda: 1.65-1.76
    assert "its speed scaled by HBM bandwidth (3,350 against 2,039 GB/s" in h100.mfu_source
    assert "scaled by HBM" not in a100.mfu_source  # measured on this architecture
    gpu = hardware.load_system("dgx-h100").gpu
    rate = workloads.default_mfu_for_kind("cnn", "hopper", "fp16", gpu.peak_flops, gpu.compute_capability,
                                          gpu.hbm_bandwidth_Bps)[0]
    ampere = workloads.default_mfu_for_kind("cnn", "ampere", "fp16")[0]
    assert rate == pytest.approx(ampere * 312e12 / gpu.peak_flops["fp16"] * 3350 / 2039, rel=1e-12)


def test_a_borrowed_compute_bound_row_keeps_its_mfu():
    """Volta's FP32 row on an A100's CUDA cores ran at MFU 1.03 once every borrowed speed followed
    HBM (871 img/s; review, 2026-11-28): the roofline takes the smaller ratio, the peak's there."""
    import hardware

    gpu = hardware.load_system("dgx-a100").gpu
    rate, source = workloads.default_mfu_for_kind("cnn", "ampere", "fp32", gpu.peak_flops, gpu.compute_capability,
                                                  gpu.hbm_bandwidth_Bps)
    assert rate == workloads.default_mfu_for_kind("cnn", "volta", "fp32")[0] and "HBM" not in source


@pytest.mark.parametrize("model", ["vit-l-16", "transformer-xl-base", "bert-large", "gpt2"])
def test_a_transformers_tf32_micro_batch_is_never_slower_than_its_fp32_one(model):
    """The same rule for models without a CNN table: their FP32 kernels at the FP32 default MFU.
    vit-l-16 on an L40S at micro-batch 1 took 18.1 ms in TF32 against 12.2 ms in FP32 (the small
    GEMMs' penalty on the tensor cores' tiles outweighed their twice-higher peak; physics review,
    2026-11-29). The vectorised sweep (the planner's) and the scalar call agree."""
    import numpy as np

    import hardware

    workload = workloads.load_model(model)
    seq = workloads.resolve_seq_len(workload, None)
    flops = workloads.training_flops_per_sample(workload, seq)
    micro = np.array([1, 2, 4, 8, 32])
    checked = faster = 0
    for gpu in hardware.list_profiles("gpu"):
        if not (gpu.peak_flops.get("tf32") and gpu.peak_flops.get("fp32")):
            continue
        times = _forward_both_ways(workload, gpu, micro, flops, seq)
        assert (times["tf32"] <= times["fp32"] * (1 + 1e-12)).all(), gpu.name
        faster += bool((times["tf32"] < times["fp32"] * 0.999).any())
        checked += 1
    assert checked >= 10 and faster >= 5  # and where TF32's tensor cores are faster, they run
