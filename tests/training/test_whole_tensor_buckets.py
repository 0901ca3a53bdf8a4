"""DDP's buckets and Horovod's fusion buffers hold whole tensors (costmodel.training.tensors).

DDP closes a bucket once it holds its cap or more (PyTorch reducer.cpp,
compute_bucket_assignment_by_size); Horovod fuses while the buffer holds the tensors and reduces
a larger one alone. A transformer's tensors follow from its shape; a CNN preset's are listed
(costmodel/data/cnn_tensors.toml, tools/cnn_counts.py); a CNN from a model file is cut by bytes."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

import hardware
from costmodel.cluster.comm import comm_model
from costmodel.training import overlap, syncmodes, tensors
from costmodel.training.memory import precision_for
from costmodel.training.oncluster import iteration
from costmodel.training.tensors import backward_tensors
from costmodel.training.workloads import load_model, load_model_file, model_names

MIB = 2**20


def test_ddp_closes_a_bucket_past_its_cap_and_horovod_before_it():
    tensors = [3.0, 3.0, 3.0, 12.0, 1.0, 1.0]
    # DDP: the first cap 2, then 5: [3] [3+3] [12] [1+1]
    assert overlap.packed_sizes(tensors, 5.0, 2.0) == (3.0, 6.0, 12.0, 2.0)
    assert overlap.packed_sizes([2.0, 4.0, 1.0], 5.0, 1.0) == (2.0, 5.0)  # [2] [4+1]: closed at its cap
    # Horovod (first buffer = buffer = 5): [3] [3] [3] [12] [1+1]: no fusion beyond the buffer
    assert overlap.packed_sizes(tensors, 5.0, 5.0, within=True) == (3.0, 3.0, 3.0, 12.0, 2.0)
    assert overlap.packed_sizes([1.0] * 10, 5.0, 5.0, within=True) == (5.0, 5.0)


@given(st.lists(st.floats(1.0, 1e9), min_size=1, max_size=60), st.floats(1.0, 2e9), st.floats(1.0, 2e9),
       st.booleans())
def test_packing_keeps_every_byte_and_each_rule(tensors, bucket, first, within):
    sizes = overlap.packed_sizes(tensors, bucket, first, within=within)
    assert sum(sizes) == pytest.approx(sum(tensors), rel=1e-12)
    assert len(sizes) <= len(tensors)
    caps = [first] + [bucket] * len(sizes)
    for i, size in enumerate(sizes[:-1]):
        if not within:  # every bucket but the last reached its cap
            assert size >= caps[i] * (1 - 1e-12)
        else:  # a buffer over its size holds one tensor
            assert size <= caps[i] * (1 + 1e-12) or any(size == pytest.approx(t, rel=1e-12) for t in tensors)


def test_every_presets_tensors_are_its_parameters():
    for name in model_names():
        workload = load_model(name)
        listed = backward_tensors(workload)
        assert sum(listed) == pytest.approx(workload.params, rel=1e-12), name
        assert min(listed) > 0, name
        if workload.kind == "cnn":  # counted layer by layer: exactly its tensors
            assert len(listed) == workload.tensors and sum(listed) == workload.params, name


def test_the_cnn_tensor_file_is_the_counted_layers():
    """costmodel/data/cnn_tensors.toml is what tools/cnn_counts.py writes (python -m
    tools.cnn_counts --tensors); VGG-16's fc8 bias, fc8, then fc7's and fc6's."""
    from pathlib import Path

    from tools import cnn_counts

    assert Path(tensors.CNN_TENSORS_FILE).read_text(encoding="utf-8") == cnn_counts.tensors_toml()
    assert backward_tensors(load_model("vgg16"))[:6] == (1000, 4096 * 1000, 4096, 4096 * 4096, 4096, 25088 * 4096)


def test_a_cnn_from_a_model_file_is_cut_by_bytes(tmp_path):
    """A file's CNN is not a preset's layers, even under the preset's name and counts; a preset
    rebuilt with another parameter or tensor count is not either."""
    import dataclasses

    same = tmp_path / "vgg16.toml"
    same.write_text('[model]\nname = "vgg16"\nkind = "cnn"\nparams = 138_357_544\nflops_per_sample = 92.82e9\n'
                    "activation_elements_per_sample = 13.6e6\ntensors = 32\n", encoding="utf-8")
    assert backward_tensors(load_model_file(str(same))) == ()
    vgg = load_model("vgg16")
    assert len(backward_tensors(vgg)) == 32
    for changed in ({"params": vgg.params + 1}, {"tensors": 31}):
        assert backward_tensors(dataclasses.replace(vgg, **changed)) == ()
    assert backward_tensors(dataclasses.replace(vgg, flops_per_sample=1e9)) == backward_tensors(vgg)
    path = tmp_path / "resnet-50.toml"
    path.write_text('[model]\nname = "resnet-50"\nkind = "cnn"\nparams = 30_000_000\nflops_per_sample = 24.54e9\n'
                    "activation_elements_per_sample = 11.1e6\ntensors = 161\n", encoding="utf-8")
    model = load_model_file(str(path))
    assert backward_tensors(model) == ()
    grad = model.params * 4.0
    setup = syncmodes.sync_setup("ddp", model, grad)
    assert syncmodes.call_layout(setup, model, grad) == overlap.bucket_layout(grad, 25 * MIB, overlap.DDP_FIRST_BUCKET_BYTES)


def test_llama2_7b_is_its_matrices_and_norms():
    """Untied head first (32,000 × 4096) and the final norm, per layer down/up/gate (SwiGLU,
    11008 / 4096 of h² each) then o, v, k, q (h² each) and its two norms, the input embedding
    last: the preset's 291 tensors."""
    workload = load_model("llama2-7b")
    tensors = backward_tensors(workload)
    assert len(tensors) == 291 == workload.tensors
    assert tensors[0] == tensors[-1] == 32_000 * 4096 and tensors[1] == 4096
    layer = tensors[2:2 + 9]
    assert layer[3:7] == pytest.approx((4096**2,) * 4, rel=1e-3) and layer[7:] == (4096, 4096)
    assert layer[0] == layer[1] == layer[2] == pytest.approx(4096 * 11008, rel=1e-3)


@pytest.mark.parametrize("model,calls", [("llama2-7b", 226), ("pythia-6.9b", 130), ("gpt-neox-20b", 178),
                                         ("gpt-j-6b", 170), ("opt-6.7b", 193), ("mistral-7b", 162),
                                         ("llama2-70b", 482)])
def test_each_familys_shape_sets_its_calls(model, calls):
    """A review (2026-11-30) counted the 25 MiB calls of bf16 gradients from each model's config:
    fused query-key-value for GPT-NeoX/Pythia (untied, yet not Llama's shape), separate
    projections for GPT-J and OPT, grouped-query key and value matrices for Mistral and Llama 2
    70B (below 25 MiB: they share a call)."""
    workload = load_model(model)
    grad = workload.params * 2.0
    layout = syncmodes.call_layout(syncmodes.sync_setup("ddp", workload, grad), workload, grad)
    assert layout.count == calls


def test_a_model_of_millions_of_layers_is_cut_by_bytes():
    """Listing 20 M layers' tensors took 10 s and 1.3 GB (review, 2026-11-30); beyond
    MAX_LISTED_TENSORS the gradient is cut by bytes."""
    from costmodel.training.tensors import MAX_LISTED_TENSORS
    from costmodel.training.workloads import Workload

    huge = Workload(name="deep", params=20_000_000 * 800 + 64, layers=20_000_000, hidden_size=8, heads=1, vocab=8,
                    seq_len=16, kind="transformer", source="test")
    assert backward_tensors(huge) == () and 20_000_000 * 4 > MAX_LISTED_TENSORS


def test_llama2_7b_25mib_buckets_are_226_calls_not_516():
    """Every tensor of llama2-7b holds at least 33.5 MB of bf16 gradient, above DDP's 25 MiB: each
    is one bucket (the README example read "516 buckets of 25 MiB")."""
    b = iteration("llama2-7b", "dgx-h100", nodes=4, micro_batch=1, seq_len=4096, accumulation_steps=4, zero_stage=1)
    assert b.bucket_count == 226 and b.bucket_bytes == 25 * MIB
    grad = b.params * precision_for("bf16").grad_bytes
    setup = syncmodes.sync_setup("ddp", load_model("llama2-7b"), grad)
    layout = syncmodes.call_layout(setup, load_model("llama2-7b"), grad)
    assert layout.count == 226
    assert float(layout.first_bytes) == 32_000 * 4096 * 2  # the head, alone
    total = layout.first_bytes + layout.full_count * layout.bucket_bytes + layout.last_bytes
    assert total == pytest.approx(grad, rel=1e-12)


def test_a_smaller_bucket_than_a_tensor_no_longer_multiplies_the_calls():
    """--bucket 1KB cut gpt2's gradient into 247,833 calls; DDP makes one per tensor at most (its
    144 tensors, less those the 1 MiB first bucket gathers)."""
    b = iteration("gpt2", "dgx-h100", micro_batch=4, bucket_bytes=1000)
    assert len(backward_tensors(load_model("gpt2"))) == 144 and b.bucket_count == 133
    assert iteration("gpt2", "dgx-h100", micro_batch=4).bucket_count == 7  # ~27 MB, and the 77 MB embedding


def test_a_cnn_presets_buckets_hold_whole_tensors_and_the_modes_their_own_size():
    """VGG-16's fc6 (102.8M parameters, 411 MB in fp32) is one call of DDP's, not sixteen 25 MiB
    ones: its 25 MiB buckets are 6 calls, not 23 (fc8, fc7, fc6, then the convolutions: three
    of 9.4 MB close a bucket); flat, per-tensor and FSDP calls are their own size."""
    vgg = load_model("vgg16")
    grad = vgg.params * 4.0
    setup = syncmodes.sync_setup("ddp", vgg, grad)
    layout = syncmodes.call_layout(setup, vgg, grad)
    assert layout.count == 6 and overlap.bucket_layout(grad, 25 * MIB, overlap.DDP_FIRST_BUCKET_BYTES).count == 23
    sizes = overlap.packed_sizes([4 * t for t in backward_tensors(vgg)], 25 * MIB, MIB)
    assert sizes[:4] == (4 * (1000 + 4096 * 1000), 4 * (4096 + 4096 * 4096), 4 * (4096 + 25088 * 4096),
                         4 * 3 * (512 + 512 * 512 * 9))
    assert layout.first_bytes == sizes[0] and layout.full_count == 4
    gpt2 = load_model("gpt2")
    grad = gpt2.params * 2.0
    for mode in ("flat", "per-tensor", "fsdp"):
        own = syncmodes.sync_setup(mode, gpt2, grad)
        mix = tensors.tensor_mix(gpt2) if mode == "per-tensor" else ()  # each call timed at its tensor's size
        assert syncmodes.call_layout(own, gpt2, grad) == dataclasses.replace(
            overlap.bucket_layout(grad, own.bucket_bytes, own.first_bucket_bytes), mix=mix), mode


@pytest.mark.parametrize("model", ["gpt2", "gpt2-medium", "pythia-160m", "opt-1.3b"])
def test_per_tensor_calls_are_timed_one_size_at_a_time(model):
    """gpt2's 144 per-tensor all-reduces on 4 DGX H100 (NCCL's model): the step's collectives take
    the sum of each tensor's own time, not 144 times the time of the mean tensor (1.7 MB), which
    overcharged the 72 vectors of 768 values (latency-bound, on NCCL's low-latency protocol) by
    about half. Every call is a tensor's, also where the gradient over the tensor count does not
    divide evenly in floats (gpt2-medium's: a byte cut left one call at the mean size)."""
    gpt2 = load_model(model)
    sizes = [p * 2.0 for p in backward_tensors(gpt2)]
    comm = comm_model(hardware.load_system("dgx-h100"), 4, 8, backend="nccl")
    each = sum(comm.time_s("all-reduce", size) for size in sizes)
    mean = len(sizes) * comm.time_s("all-reduce", sum(sizes) / len(sizes))
    b = iteration(model, "dgx-h100", nodes=4, micro_batch=1, seq_len=128, sync="per-tensor")
    assert b.bucket_count == len(sizes) and b.whole_tensors
    assert b.comm_s == pytest.approx(each, rel=1e-9) and each < mean
    if model == "gpt2":
        assert len(sizes) == 144 and each < 0.75 * mean
    mix = tensors.tensor_mix(gpt2)
    assert sum(share for _, share in mix) == pytest.approx(1.0) and sum(r * w for r, w in mix) == pytest.approx(1.0)


def test_a_mix_of_many_sizes_is_grouped():
    """More distinct sizes than MOST_MIXED_SIZES are grouped in equal counts, each at its mean."""
    mix = tensors.call_mix(range(1, 101))
    assert len(mix) == tensors.MOST_MIXED_SIZES
    assert sum(w for _, w in mix) == pytest.approx(1.0) and sum(r * w for r, w in mix) == pytest.approx(1.0)
    found = tensors.call_mix([5.0, 5.0, 20.0])  # mean 10: two calls at half of it, one at twice
    assert [(round(r, 12), round(w, 12)) for r, w in found] == [(0.5, round(2 / 3, 12)), (2.0, round(1 / 3, 12))]


def test_the_planner_cuts_as_iteration_does():
    """Every DDP and Horovod row of a plan equals iteration's step with the same bucket (the rule
    is syncmodes.call_layout in both); gpt2-xl's tensors (10-41 MB in fp32) straddle the swept
    buckets."""
    from costmodel.planner.recommend import plan

    for sync in ("ddp", "horovod"):
        result = plan("gpt2-xl", "dgx-h100", nodes=2, global_batch=64, sync=sync, top=6,
                      tie_band=0.0, explain=False)
        for row in result.candidates:
            alone = iteration("gpt2-xl", "dgx-h100", nodes=row.nodes, gpus_per_node=row.gpus_per_node,
                              micro_batch=row.micro_batch, accumulation_steps=row.accumulation_steps,
                              algorithm=row.algorithm, bucket_bytes=row.bucket_bytes, grad_dtype=row.grad_dtype,
                              zero_stage=row.zero_stage, sync=row.sync, recompute=row.recompute)
            assert row.total_s == pytest.approx(alone.total_s, rel=1e-9), (sync, row)


def _file(tmp_path, extra: str) -> str:
    path = tmp_path / "mine.toml"
    path.write_text("[model]\nlayers = 32\nhidden_size = 4096\nheads = 32\nvocab = 32000\nseq_len = 4096\n"
                    "tied_embeddings = false\ntensors = 291\nparams = 6738415616\n" + extra, encoding="utf-8")
    return str(path)


def test_a_model_file_states_its_layers_matrices(tmp_path):
    """Without layer_matrices a file gets GPT-2's fused shape (4 matrices a layer); Llama's, stated,
    gives the preset's 226 calls."""
    from costmodel.training.workloads import load_model_file
    from dpbase.errors import InputError

    plain, llama = load_model_file(_file(tmp_path, "")), load_model_file(
        _file(tmp_path, "layer_matrices = [1, 1, 1, 1, 2.6875, 2.6875, 2.6875]\n"))
    assert llama.layer_matrices == load_model("llama2-7b").layer_matrices
    assert backward_tensors(llama) == pytest.approx(backward_tensors(load_model("llama2-7b")), rel=1e-12)
    grad = llama.params * 2.0
    counts = [syncmodes.call_layout(syncmodes.sync_setup("ddp", w, grad), w, grad).count for w in (plain, llama)]
    assert counts == [130, 226]
    for bad in ("[]", "[1, -1]", "[true]", "\"fused\"", "[1, 2e7]"):
        with pytest.raises(InputError, match="model.layer_matrices"):
            load_model_file(_file(tmp_path, f"layer_matrices = {bad}\n"))


def test_the_runner_up_sentence_quotes_the_calls_as_cut():
    """gpt2's 25 MiB buckets are 35.55 MB calls on average (whole tensors): the crossover is read
    against those, and the sentence says so (review, 2026-11-30: it quoted the 25 MiB bucket)."""
    from costmodel.planner.recommend import plan

    result = plan("gpt2", "dgx-h100", nodes=2, global_batch=64, algorithms=("rabenseifner", "ring"), top=3)
    assert result.findings["crossover"]["call_bytes"] == pytest.approx(load_model("gpt2").params * 2 / 7)
    assert "this plan's calls are 35.55 MB on average, whole tensors in 25 MiB buckets" in result.reason
    # a CNN preset's buckets hold its listed tensors too: ResNet-50's bf16 gradient in 3 calls
    cnn = plan("resnet-50", "dgx-h100", nodes=2, global_batch=256, algorithms=("rabenseifner", "ring"), top=3)
    assert cnn.best.grad_dtype == "bf16" and cnn.best.bucket_bytes == 25 * MIB
    assert cnn.findings["crossover"]["call_bytes"] == pytest.approx(load_model("resnet-50").params * 2 / 3)
    assert "this plan's calls are 17.04 MB on average, whole tensors in 25 MiB buckets" in cnn.reason


def test_a_files_layer_matrices_set_its_tensor_count(tmp_path):
    """A file listing more matrices a layer than the kind's 12 tensors (a mixture of experts) had
    --sync per-tensor count 384 calls where DDP with 4-byte buckets cut 802 (review, 2026-11-30):
    its tensors are at least its matrices, and a smaller `tensors` is refused."""
    from costmodel.training.tensors import tensor_count
    from costmodel.training.workloads import load_model_file
    from dpbase.errors import InputError

    shape = "layer_matrices = [1, 1, 1, 1, 0.01" + ", 2" * 20 + "]\n"
    path = tmp_path / "moe.toml"
    path.write_text("[model]\nlayers = 32\nhidden_size = 2048\nheads = 16\nvocab = 32000\nseq_len = 2048\n"
                    + shape, encoding="utf-8")
    moe = load_model_file(str(path))
    assert tensor_count(moe) == 32 * 25 + 1 == len(backward_tensors(moe))
    per_tensor = iteration(moe, "dgx-h100", nodes=2, micro_batch=1, sync="per-tensor")
    ddp = iteration(moe, "dgx-h100", nodes=2, micro_batch=1, bucket_bytes=4, first_bucket_bytes=4)
    assert per_tensor.bucket_count == ddp.bucket_count == 801
    path.write_text(path.read_text(encoding="utf-8") + "tensors = 100\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"model\.tensors: got 100; allowed: at least 801"):
        load_model_file(str(path))


def test_a_workload_built_in_python_is_checked_and_hashable():
    """dataclasses.replace(..., layer_matrices=[...]) raised 'unhashable type: list', (0,) a
    ZeroDivisionError, and (-1, 2) cut negative tensors (review, 2026-11-30)."""
    import dataclasses

    from dpbase.errors import InputError

    llama = load_model("llama2-7b")
    listed = dataclasses.replace(llama, layer_matrices=[1, 1, 1, 1, 2.6875, 2.6875, 2.6875])
    assert iteration(listed, "dgx-h100", nodes=2, micro_batch=1, zero_stage=1).bucket_count == 226
    for bad in ((0,), (-1.0, 2.0), "x", (float("nan"),)):
        with pytest.raises(InputError, match="layer_matrices"):
            iteration(dataclasses.replace(llama, layer_matrices=bad), "dgx-h100", nodes=2, micro_batch=1, zero_stage=1)
