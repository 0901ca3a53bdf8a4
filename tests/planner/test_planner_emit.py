"""Runnable output: every emitted setting is a documented framework name and maps to a plan field."""

from __future__ import annotations

import dataclasses
import json

import pytest
from typer.testing import CliRunner

from cli import app
from costmodel.planner import emit
from costmodel.planner.rank import PlanRow
from costmodel.planner.recommend import plan
from dpbase.errors import InputError

# DeepSpeed configuration JSON keys (deepspeed.ai/docs/config-json: batch size, fp16/bf16,
# communication options and ZeRO optimizations sections).
DEEPSPEED_TOP = {"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
                 "bf16", "fp16", "communication_data_type", "zero_optimization", "activation_checkpointing"}
# its "Activation Checkpointing" section
DEEPSPEED_CHECKPOINTING = {"partition_activations", "cpu_checkpointing", "contiguous_memory_optimization",
                           "number_checkpoints", "synchronize_checkpoint_boundary", "profile"}
DEEPSPEED_ZERO = {"stage", "overlap_comm", "contiguous_gradients", "reduce_bucket_size",
                  "allgather_bucket_size", "stage3_prefetch_bucket_size", "reduce_scatter",
                  "allgather_partitions", "zero_quantized_weights", "zero_quantized_gradients",
                  "offload_optimizer", "mics_shard_size", "zero_hpz_partition_size"}
# PyTorch: DistributedDataParallel(bucket_cap_mb=...), ddp_comm_hooks.default_hooks,
# FullyShardedDataParallel(sharding_strategy=...), MixedPrecision(reduce_dtype=...),
# ZeroRedundancyOptimizer; torchrun --nnodes / --nproc-per-node; the training loop's micro-batch
# and accumulation (HF/Lightning spell them so too).
TORCH_NAMES = {"bucket_cap_mb", "comm_hook", "sharding_strategy", "reduce_dtype",
               "ZeroRedundancyOptimizer", "--nnodes", "--nproc-per-node", "micro_batch_size",
               "gradient_accumulation_steps", "reshard_after_forward",
               "torch.utils.checkpoint.checkpoint"}  # activation checkpointing (torch.utils.checkpoint)
TORCH_VALUES = {"bf16_compress_hook", "fp16_compress_hook", "ShardingStrategy.SHARD_GRAD_OP",
                "ShardingStrategy.FULL_SHARD", "ShardingStrategy.HYBRID_SHARD"}
NCCL_ALGO_VALUES = {"Ring", "Tree", "NVLS", "NVLSTree", "CollnetDirect", "CollnetChain", "PAT"}
FIELDS = {f.name for f in dataclasses.fields(PlanRow)}

CASES = {"zero1": ("llama2-7b", dict(nodes=4, global_batch=512, seq_len=4096)),
         "ddp": ("gpt2", dict(nodes=2, global_batch=256)),
         "zero3": ("llama2-13b", dict(nodes=1, global_batch=64, seq_len=2048)),
         "zeropp": ("llama2-70b", dict(nodes=4, global_batch=64, seq_len=4096, quantize_weights=8,
                                       quantize_grads=4)),
         "offload": ("llama2-13b", dict(nodes=1, global_batch=64, seq_len=2048, offload_optimizer=True)),
         "hybrid": ("llama2-13b", dict(nodes=2, global_batch=64, seq_len=4096, shard="hybrid")),
         "hpz": ("llama2-13b", dict(nodes=2, global_batch=64, seq_len=4096, shard="hpz")),
         "recompute": ("llama2-7b", dict(nodes=2, global_batch=64, seq_len=4096, recompute=True))}


@pytest.fixture(scope="module", params=sorted(CASES))
def best(request):
    model, kwargs = CASES[request.param]
    return plan(model, "dgx-h100", explain=False, **kwargs).best


def _deepspeed_only(row) -> bool:
    """ZeRO++ quantisation and optimizer offload: DeepSpeed's switches, no PyTorch one."""
    return bool(row.offload_optimizer or row.quantize_weights or row.quantize_grads)


def _deepspeed_refused(row) -> bool:
    """ZeRO-0 on several GPUs: DeepSpeed without ZeRO all-reduces after backward in 500M-element
    buffers, not the overlapped buckets the plan timed (an audit, 2026-11-30)."""
    return row.zero_stage == 0 and row.gpus > 1


def test_every_setting_is_documented_and_maps_to_a_plan_field(best):
    for kind in emit.KINDS:
        if kind == "torch" and _deepspeed_only(best):
            with pytest.raises(InputError, match="deepspeed or env for a plan with"):
                emit.knobs(best, kind)
            continue
        if kind == "deepspeed" and _deepspeed_refused(best):
            with pytest.raises(InputError, match="torch or env for a ZeRO-0 plan"):
                emit.knobs(best, kind)
            continue
        for knob in emit.knobs(best, kind):
            assert knob.field in FIELDS
            if kind == "deepspeed":
                head, _, tail = knob.name.partition(".")
                section = DEEPSPEED_CHECKPOINTING if head == "activation_checkpointing" else DEEPSPEED_ZERO
                assert head in DEEPSPEED_TOP and (not tail or tail in section)
            elif kind == "torch":
                assert knob.name in TORCH_NAMES
                if isinstance(knob.value, str) and knob.name != "reduce_dtype":
                    assert knob.value in TORCH_VALUES
            else:
                # NCCL >= 2.24's per-function form, the all-reduce alone: a plain list forces every
                # collective, and broadcast runs only Ring (NCCL fails it: audit, 2026-11-30)
                function, _, algorithms = knob.value.partition(":")
                assert knob.name == "NCCL_ALGO" and function == "allreduce"
                assert set(algorithms.split(",")) <= NCCL_ALGO_VALUES


def test_deepspeed_json_reproduces_the_plan(best):
    if _deepspeed_refused(best):
        best = dataclasses.replace(best, zero_stage=1)  # its buckets as a ZeRO-1 plan's
    config = json.loads(emit.render(best, "deepspeed"))
    assert set(config) <= DEEPSPEED_TOP and set(config["zero_optimization"]) <= DEEPSPEED_ZERO
    assert config["train_micro_batch_size_per_gpu"] == best.micro_batch
    assert config["gradient_accumulation_steps"] == best.accumulation_steps
    assert config["train_batch_size"] == best.micro_batch * best.accumulation_steps * best.gpus
    assert config["zero_optimization"]["stage"] == best.zero_stage
    element = emit.DTYPE_BYTES[best.grad_dtype]
    assert config["zero_optimization"]["reduce_bucket_size"] * element == pytest.approx(
        best.bucket_bytes, abs=element)
    assert config["bf16"]["enabled"] is True


def test_torch_snippet_and_launch_line(best):
    if _deepspeed_only(best):
        best = dataclasses.replace(best, offload_optimizer=False, quantize_weights=None, quantize_grads=None)
    text = emit.render(best, "torch")
    assert f"--nnodes {best.nodes} --nproc-per-node {best.gpus_per_node}" in text
    if best.zero_stage <= 1:
        assert f"bucket_cap_mb={best.bucket_bytes / 2**20:g}" in text
    elif best.shard == "hpz":  # FSDP2 fully_shard keeps a node-sized shard after forward
        assert f"fully_shard(model, reshard_after_forward={best.gpus_per_node}" in text
    elif best.shard == "hybrid":
        assert "ShardingStrategy.HYBRID_SHARD" in text
    else:
        assert emit.FSDP_STRATEGY[best.zero_stage] in text
    # a ZeRO-2/3 row was timed with DeepSpeed's buckets: the snippet says so and names the
    # command that times FSDP's per-unit schedule
    shard = "" if best.shard == "full" else f" --shard {best.shard}"
    note = f"dpcost iteration --sync fsdp --zero {best.zero_stage}{shard}"
    assert (note in text) == (best.zero_stage >= 2)
    if best.zero_stage >= 2:
        assert f"timed as DeepSpeed runs ZeRO-{best.zero_stage}" in text


def test_fsdp_note_names_the_shard_of_a_hybrid_or_hpz_row(best):
    """The planner picks full sharding in every fixture (the hybrid and hpZ cases included), so
    the note's --shard suffix is rendered here from the same row at ZeRO-3 with each shard."""
    best = dataclasses.replace(best, offload_optimizer=False, quantize_weights=None, quantize_grads=None)
    for shard in ("hybrid", "hpz"):
        row = dataclasses.replace(best, zero_stage=3, shard=shard)
        assert f"dpcost iteration --sync fsdp --zero 3 --shard {shard}" in emit.render(row, "torch")
    assert "--shard" not in emit.render(dataclasses.replace(best, zero_stage=3, shard="full"), "torch")


def test_fsdp_note_names_the_gather_of_a_zero2_row(best):
    row = dataclasses.replace(best, zero_stage=2, shard="full", overlap_param_gather=False, offload_optimizer=False,
                              quantize_weights=None, quantize_grads=None)
    assert "weights gathered after the optimizer" in emit.render(row, "torch")
    overlapped = dataclasses.replace(row, overlap_param_gather=True)
    assert "weights gathered beside the next forward" in emit.render(overlapped, "torch")
    assert "--sync fsdp --zero 2`" in emit.render(row, "torch")


def test_nccl_algo_only_for_nccl_algorithms():
    row = plan("gpt2", "dgx-h100", nodes=2, global_batch=256, explain=False).best
    for name, value in (("ring", "Ring"), ("double-binary-tree", "Tree"),
                        ("in-network", "NVLS,NVLSTree,CollnetDirect,CollnetChain")):
        forced = dataclasses.replace(row, algorithm=name)
        assert emit.knobs(forced, "env")[0].value == f"allreduce:{value}"
        text = emit.render(forced, "env")
        assert f'export NCCL_ALGO="allreduce:{value}"' in text and f"set NCCL_ALGO={value} " in text
    other = dataclasses.replace(row, algorithm="recursive-doubling")
    assert emit.knobs(other, "env") == []
    assert "leave NCCL_ALGO unset" in emit.render(other, "env")


def test_cli_emit_prints_parseable_deepspeed_json():
    result = CliRunner().invoke(app, ["plan", "--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "4",
                                      "--global-batch", "512", "--seq-len", "4096", "--emit", "deepspeed"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["zero_optimization"]["stage"] in (1, 2, 3)
    zero0 = CliRunner().invoke(app, ["plan", "--model", "gpt2", "--cluster", "dgx-h100", "--nodes", "2",
                                     "--global-batch", "256", "--emit", "deepspeed"])
    assert zero0.exit_code == 2 and "torch or env for a ZeRO-0 plan" in zero0.output
    bad = CliRunner().invoke(app, ["plan", "--model", "gpt2", "--cluster", "dgx-h100",
                                   "--global-batch", "256", "--emit", "jax"])
    assert bad.exit_code == 2


def test_zeropp_plans_emit_deepspeeds_quantisation_switches():
    best = plan("llama2-70b", "dgx-h100", explain=False, nodes=4, global_batch=64, seq_len=4096,
                quantize_weights=8, quantize_grads=4).best
    assert best.zero_stage == 3 and best.quantize_weights == 8 and best.quantize_grads == 4
    names = {knob.name: knob.value for knob in emit.knobs(best, "deepspeed")}
    assert names["zero_optimization.zero_quantized_weights"] is True
    assert names["zero_optimization.zero_quantized_gradients"] is True


def test_offload_plans_emit_deepspeeds_offload_optimizer():
    best = plan("llama2-13b", "dgx-h100", explain=False, nodes=1, global_batch=64, seq_len=2048,
                offload_optimizer=True).best
    assert best.zero_stage >= 1 and best.offload_optimizer
    config = json.loads(emit.render(best, "deepspeed"))
    # deepspeed.ai/docs/config-json: "offload_optimizer": {"device": "cpu", "pin_memory": ...}
    assert config["zero_optimization"]["offload_optimizer"] == {"device": "cpu", "pin_memory": True}


def test_the_emitted_precision_is_the_one_the_plan_was_timed_in():
    """On V100s (no bf16) a plan asked for in bf16 runs, and is timed, in fp16: DeepSpeed's JSON
    and FSDP's MixedPrecision say fp16 (they said bf16, what was typed)."""
    best = plan("gpt2", "dgx-1", global_batch=64, explain=False).best
    assert best.compute_dtype == "fp16"
    config = json.loads(emit.render(dataclasses.replace(best, zero_stage=1), "deepspeed"))
    assert config["fp16"] == {"enabled": True} and "bf16" not in config
    fsdp = emit.render(dataclasses.replace(best, zero_stage=3), "torch")
    assert "param_dtype=torch.float16" in fsdp and "bfloat16" not in fsdp.split("reduce_dtype")[0]


@pytest.mark.parametrize("kwargs", [dict(compute_dtype="fp8"), dict(grad_dtypes=("fp8",))])
def test_an_fp8_plan_emits_only_its_nccl_environment(kwargs):
    """fp8 compute or gradients: no PyTorch or DeepSpeed switch runs them (DeepSpeed's JSON said
    "bf16": false, plain fp32 training, and a bucket counted at 1 byte an element)."""
    best = plan("gpt2", "dgx-h100", global_batch=64, nodes=2, explain=False, **kwargs).best
    for kind in ("torch", "deepspeed"):
        with pytest.raises(InputError, match="fp8"):
            emit.render(best, kind)
    assert "torchrun" in emit.render(best, "env")


def test_a_parameter_server_plan_emits_nothing():
    """Nothing emitted runs parameter servers or asynchronous updates: every kind is refused
    (torch printed DDP with a compress hook, deepspeed a ZeRO-0 config)."""
    for kwargs in (dict(asynchronous=True), dict(algorithms=("parameter-server",))):
        best = plan("resnet-50", "dgx-a100", nodes=2, global_batch=1024, explain=False, **kwargs).best
        assert best.algorithm == "parameter-server"
        for kind in emit.KINDS:
            with pytest.raises(InputError, match="parameter servers"):
                emit.render(best, kind)


def test_the_optimizer_and_horovods_16bit_gradients_are_emitted_as_timed():
    best = plan("llama2-7b", "dgx-h100", nodes=4, global_batch=512, seq_len=4096, optimizer="sgd",
                explain=False).best
    if best.zero_stage == 1:
        assert "optimizer_class=torch.optim.SGD" in emit.render(best, "torch")
    zero1 = dataclasses.replace(best, zero_stage=1, sync="ddp")
    assert "optimizer_class=torch.optim.SGD" in emit.render(zero1, "torch")
    hvd = dataclasses.replace(best, zero_stage=0, sync="horovod", grad_dtype="bf16")
    text = emit.render(hvd, "torch")
    assert "compression=hvd.Compression.fp16" in text and "no bf16 compressor" in text
    assert "compression" not in emit.render(dataclasses.replace(hvd, grad_dtype="fp32"), "torch")


def test_a_tf32_plan_emits_fp32_tensors():
    """TF32 is FP32 tensors with TF32 matmuls: the FSDP snippet's param dtype (a KeyError before)."""
    best = plan("llama2-13b", "dgx-a100", nodes=2, global_batch=64, seq_len=2048, compute_dtype="tf32",
                explain=False).best
    assert best.compute_dtype == "tf32"
    text = emit.render(dataclasses.replace(best, zero_stage=3, shard="full", offload_optimizer=False,
                                           quantize_weights=None, quantize_grads=None), "torch")
    assert "param_dtype=torch.float32" in text


def test_every_emitted_torch_snippet_is_python():
    """A bf16 Horovod plan put its comment inside hvd.DistributedOptimizer(...), taking the closing
    parenthesis with it (SyntaxError). Every torch snippet over the sync modes, ZeRO stages, gradient
    dtypes and shardings now parses."""
    import ast

    best = plan("gpt2", "dgx-h100", nodes=2, global_batch=256, explain=False).best
    parsed = 0
    for sync in ("ddp", "flat", "horovod", "per-tensor", "fsdp"):
        for zero in (0, 1, 2, 3):
            for grad_dtype in ("bf16", "fp16", "fp32"):
                for shard in ("full", "hybrid", "hpz"):
                    row = dataclasses.replace(best, sync=sync, zero_stage=zero, grad_dtype=grad_dtype, shard=shard)
                    try:
                        text = emit.render(row, "torch")
                    except InputError:  # a setting the framework cannot express, refused in one line
                        continue
                    ast.parse(text)
                    parsed += 1
    assert parsed >= 100


def test_pytorchs_zero1_says_it_is_not_the_zero1_timed():
    """ZeroRedundancyOptimizer all-reduces the gradients under DDP and broadcasts the shards; the
    plan timed a reduce-scatter and an all-gather (DeepSpeed's stage 1). The snippet says so."""
    best = plan("gpt2", "dgx-h100", nodes=2, global_batch=256, explain=False).best
    torch_text = emit.render(dataclasses.replace(best, zero_stage=1, sync="ddp"), "torch")
    assert emit.ZERO1_TORCH_NOTE in torch_text.splitlines()
    assert '"stage": 1' in emit.render(dataclasses.replace(best, zero_stage=1, sync="ddp"), "deepspeed")
    assert emit.ZERO1_TORCH_NOTE not in emit.render(best, "torch")


@pytest.mark.parametrize("sync", ["ddp", "fsdp", "flat", "horovod"])
def test_a_recomputing_plan_emits_its_checkpointing(sync):
    """mpt-30b on 8 PCIe-H100 pairs recomputes (its micro-batch of 4 fits only so): --emit torch and
    deepspeed gave micro-batch 4 with no checkpointing, a setup that runs out of memory."""
    found = plan("gpt2-xl", "dgx-h100", nodes=2, global_batch=64, recompute=True, sync=sync,
                 explain=False).best
    assert found.recompute
    assert "torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)" in emit.render(found, "torch")
    assert "torch.utils.checkpoint.checkpoint" in {k.name for k in emit.knobs(found, "torch")}
    if sync == "ddp":
        zero = found if found.zero_stage else dataclasses.replace(found, zero_stage=1)
        assert json.loads(emit.render(zero, "deepspeed"))["activation_checkpointing"] == {
            "partition_activations": False}
    unchecked = dataclasses.replace(found, recompute=False)
    assert "checkpoint" not in emit.render(unchecked, "torch")


def test_deepspeeds_json_stays_one_document_and_the_checkpointing_note_goes_to_stderr():
    """DeepSpeed's JSON configures checkpointing but cannot turn it on: the CLI says what the model
    must call on stderr, and stdout still parses as the config."""
    args = ["plan", "--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "2", "--global-batch", "64",
            "--seq-len", "4096", "--recompute", "--emit", "deepspeed"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["activation_checkpointing"] == {"partition_activations": False}
    assert result.stderr.strip() == emit.DEEPSPEED_RECOMPUTE_NOTE
    plain = CliRunner().invoke(app, args[:-3] + ["--no-recompute", "--emit", "deepspeed"])
    assert plain.exit_code == 0 and plain.stderr == ""


def test_deepspeeds_json_says_what_it_cannot_run_of_the_plan():
    """--overlap-param-gather and int8 qgZ were timed but the DeepSpeed JSON ran without them and said
    nothing (int8 emitted the same switch as int4); the torch snippet did say the gather (review,
    2026-11-28). Each is a note on stderr; stdout stays the JSON."""
    args = ["plan", "--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "2", "--global-batch", "64"]
    gathered = CliRunner().invoke(app, [*args, "--overlap-param-gather", "--emit", "deepspeed"])
    assert gathered.exit_code == 0, gathered.output
    json.loads(gathered.stdout)
    assert gathered.stderr.strip() == emit.DEEPSPEED_PARAM_GATHER_NOTE
    row = plan("llama2-70b", "dgx-h100", nodes=4, global_batch=64, seq_len=4096, quantize_grads=8,
               explain=False).best
    assert row.quantize_grads == 8 and row.zero_stage == 3
    row = dataclasses.replace(row, recompute=False)  # its own recompute note aside (checked below)
    assert emit.note(row, "deepspeed") == emit.DEEPSPEED_INT8_GRADS_NOTE
    assert emit.note(dataclasses.replace(row, quantize_grads=4), "deepspeed") is None
    assert emit.note(row, "env") is None
    both = dataclasses.replace(row, recompute=True)
    assert emit.note(both, "deepspeed") == emit.DEEPSPEED_RECOMPUTE_NOTE + "\n" + emit.DEEPSPEED_INT8_GRADS_NOTE


def test_a_one_gpu_plan_emits_no_wrapper_and_its_row_re_times():
    """A one-GPU plan's --emit torch wrapped the model in DDP with a bf16 compress hook, and its row's
    algorithm ("none") was refused by iteration (planner scan, 2026-11-28)."""
    import costmodel

    result = plan("resnet-50", "dgx-h100", nodes=4, global_batch=16)
    row = result.best
    assert row.gpus == 1 and row.algorithm == "none"
    text = emit.render(row, "torch")
    assert "DistributedDataParallel(" not in text and "register_comm_hook" not in text
    assert "# one GPU: no DistributedDataParallel or FSDP wrapper" in text
    assert {k.name for k in emit.knobs(row, "torch")} >= {"micro_batch_size", "gradient_accumulation_steps"}
    again = costmodel.iteration("resnet-50", "dgx-h100", gpus_per_node=1, micro_batch=row.micro_batch,
                                accumulation_steps=row.accumulation_steps, algorithm=row.algorithm,
                                grad_dtype=row.grad_dtype)
    assert again.total_s == pytest.approx(row.total_s, rel=1e-9)
    with pytest.raises(InputError, match="^algorithm: got 'none'; allowed: a collective algorithm or auto"):
        costmodel.iteration("resnet-50", "dgx-h100", gpus_per_node=2, micro_batch=8, algorithm="none")


def test_what_deepspeed_and_pytorch_would_not_run_as_timed():
    """An audit of the emitted settings against DeepSpeed's and PyTorch's source (2026-11-30):
    MiCS with optimizer offload raises in DeepSpeed; offload needs DeepSpeed's own CPU Adam; a
    ZeRO-2/3 snippet wrapped the whole model as one FSDP unit (every weight gathered at once);
    ZeRO-1/2 gather as many elements as their buckets reduce; one node needs no rendezvous host."""
    row = plan("llama2-13b", "dgx-h100", nodes=2, global_batch=64, seq_len=4096, explain=False).best
    zero3 = dataclasses.replace(row, zero_stage=3, shard="hybrid", offload_optimizer=True)
    with pytest.raises(InputError, match="DeepSpeed's MiCS has no CPU offload"):
        emit.render(zero3, "deepspeed")
    offload = dataclasses.replace(row, zero_stage=3, offload_optimizer=True)
    assert emit.DEEPSPEED_OFFLOAD_NOTE in emit.note(offload, "deepspeed")
    for shard in ("full", "hybrid", "hpz"):
        text = emit.render(dataclasses.replace(row, zero_stage=3, shard=shard, sync="ddp"), "torch")
        assert "transformer_auto_wrap_policy" in text or "for block in model.layers: fully_shard(block" in text
    mixed = dataclasses.replace(row, zero_stage=1, grad_dtype="fp32", compute_dtype="bf16")
    zero = json.loads(emit.render(mixed, "deepspeed"))["zero_optimization"]
    assert zero["allgather_bucket_size"] == zero["reduce_bucket_size"]  # elements: the same parameters
    one_node = dataclasses.replace(row, nodes=1, gpus=8)
    assert "torchrun --standalone --nnodes 1 --nproc-per-node 8 train.py" in emit.render(one_node, "env")


def test_the_flat_all_reduce_and_mics_say_what_they_need():
    """A flat all-reduce moves its buffer in the gradients' own dtype (fp32 under autocast: twice a
    16-bit plan's bytes), and MiCS needs its own init (an audit of the emitted settings, 2026-11-30)."""
    row = plan("gpt2", "dgx-h100", nodes=2, global_batch=256, sync="flat", explain=False).best
    assert row.grad_dtype == "bf16"
    assert emit.FLAT_DTYPE_NOTE.format(dtype="bf16", torch="torch.bfloat16") in emit.render(row, "torch")
    assert "timed with" not in emit.render(dataclasses.replace(row, grad_dtype="fp32"), "torch")
    zero3 = plan("llama2-13b", "dgx-h100", nodes=2, global_batch=64, seq_len=4096, explain=False).best
    hybrid = dataclasses.replace(zero3, zero_stage=3, shard="hybrid", sync="ddp")
    assert emit.DEEPSPEED_MICS_NOTE in emit.note(hybrid, "deepspeed")
    assert emit.note(dataclasses.replace(hybrid, shard="full"), "deepspeed") in (None, emit.DEEPSPEED_RECOMPUTE_NOTE)
