"""``dpcost iteration`` end to end through ``cli.app`` with the real comm model, both backends."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli import app

runner = CliRunner()
LLAMA = ["iteration", "--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "4",
         "--micro-batch", "1", "--seq-len", "4096", "--accum", "4"]


def _json(*args: str) -> dict:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.parametrize("backend", ["ideal", "nccl"])
def test_llama_on_four_dgx_h100_nodes(backend):
    data = _json(*LLAMA, "--backend", backend)
    comm = data["comm"]
    assert (data["ranks"], comm["backend"], comm["nodes"], comm["gpus_per_node"]) == (32, backend, 4, 8)
    assert comm["bottleneck"] == "ib-ndr" and comm["algorithm_at_25MiB"]
    # 13.5 GB of bf16 gradients over 4 nodes of 8×400 Gb/s: ring-bound ≥ 2·(3/4)·n / 400 GB/s
    floor_s = 2 * 3 / 4 * data["sync_payload_bytes"] / 400e9
    assert floor_s < data["comm_s"] < 20 * floor_s
    assert data["hidden_comm_s"] + data["exposed_comm_s"] == pytest.approx(data["comm_s"])
    assert data["total_s"] >= data["compute_s"] + data["optimizer_s"]


def test_the_backends_differ_and_nccl_reports_its_protocol():
    ideal, nccl = _json(*LLAMA, "--backend", "ideal"), _json(*LLAMA)
    assert ideal["comm_s"] != nccl["comm_s"]
    assert ideal["comm"]["protocol_at_25MiB"] is None and nccl["comm"]["protocol_at_25MiB"]
    text = runner.invoke(app, [*LLAMA, "--backend", "nccl"]).output
    assert "nccl backend" in text and "at 25 MiB" in text


@pytest.mark.parametrize("backend", ["ideal", "nccl"])
def test_a_named_algorithm_is_used(backend):
    data = _json(*LLAMA, "--backend", backend, "--algorithm", "ring")
    assert data["algorithm"] == "ring" and data["comm"]["algorithm_at_25MiB"] == "ring"


def test_a_bad_backend_is_one_line_and_exit_code_2():
    result = runner.invoke(app, [*LLAMA, "--backend", "mpi"])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and "backend" in lines[0]


# Fields that only echo an option back; every option must change some other field.
ECHOES = {"model", "params", "ranks", "algorithm", "micro_batch", "seq_len", "accumulation_steps",
          "global_batch", "grad_dtype", "compute_dtype", "topk_fraction", "optimizer", "zero_stage",
          "overlap", "synchronous", "bucket_bytes", "first_bucket_bytes", "bucket_count", "jitter_cv",
          "mfu", "mfu_source", "flash_attention", "include_attention", "cluster", "nodes",
          "gpus_per_node", "backend", "sync", "transport", "speed_cv", "slow_node_factor",
          "overlap_slowdown", "overlap_param_gather", "offload_optimizer", "shard", "input_rate",
          "sync_each_micro_batch"}
BASE = ["iteration", "--model", "gpt2-xl", "--cluster", "dgx-h100", "--nodes", "2", "--micro-batch", "2",
        "--mfu", "0.6"]
OPTIONS = {
    "--model": ["--model", "gpt2-large"], "--cluster": ["--cluster", "dgx-a100"],
    "--micro-batch": ["--micro-batch", "4"], "--nodes": ["--nodes", "4"], "--gpus": ["--gpus", "8"],
    "--seq-len": ["--seq-len", "512"], "--accum": ["--accum", "4"], "--algorithm": ["--algorithm", "ring"],
    "--backend": ["--backend", "ideal"], "--grad-dtype": ["--grad-dtype", "fp32"],
    "--compute-dtype": ["--compute-dtype", "fp8"], "--topk": ["--topk", "0.01"], "--mfu": ["--mfu", "0.3"],
    "--optimizer": ["--optimizer", "sgd"], "--optimizer-impl": ["--optimizer-impl", "per-tensor"], "--bucket": ["--bucket", "4MiB"],
    "--first-bucket": ["--first-bucket", "20MiB"], "--no-overlap": ["--no-overlap"], "--zero": ["--zero", "3"],
    "--async": ["--async"], "--jitter": ["--jitter", "0.05"], "--attention": ["--no-attention"],
    "--no-flash-attention": ["--no-flash-attention"], "--recompute": ["--recompute"],
    "--sync": ["--sync", "flat"], "--speed-cv": ["--speed-cv", "0.05"],
    "--slow-node": ["--slow-node", "1.3"], "--overlap-slowdown": ["--overlap-slowdown", "0.6"],
    "--host-overhead": ["--host-overhead", "20ms"], "--host-reduce": ["--host-reduce"],
    # its own arithmetic: tests/training/test_buffer_copies.py
    "--no-buffer-copies": ["--no-buffer-copies"],
    # parameter servers: their own effect is tested in tests/planner/test_planner_parameter_servers.py
    "--servers": ["--algorithm", "parameter-server", "--servers", "8"],
    "--quantize-weights": ["--zero", "3", "--quantize-weights", "int8"],
    "--quantize-grads": ["--zero", "3", "--quantize-grads", "int4"],
    # its own effect (against --zero 1 alone): tests/training/test_overlap_param_gather.py
    "--overlap-param-gather": ["--zero", "1", "--overlap-param-gather"],
    # its own arithmetic (against --zero 1 alone): tests/training/test_optimizer_offload.py
    "--offload-optimizer": ["--zero", "1", "--offload-optimizer"],
    # its own arithmetic: tests/training/test_sync_each_micro_batch.py
    "--sync-each-micro-batch": ["--accum", "4", "--sync-each-micro-batch"],
    # its own arithmetic (against --zero 3 alone): tests/training/test_hybrid_sharding.py
    "--shard": ["--zero", "3", "--shard", "hybrid"],
    # its own arithmetic: tests/training/test_input_pipeline.py
    "--input-rate": ["--input-rate", "10"],
    "--ps-placement": ["--algorithm", "parameter-server", "--ps-placement", "colocated"],
    "--colocated": ["--algorithm", "parameter-server", "--colocated"],  # --ps-placement colocated, as collective spells it
    # what is kept free, and so whether the step fits: tests/training/test_iteration_review_fixes.py
    "--memory-reserve": ["--memory-reserve", "20GB"],
}


# Options that replace --mfu (BASE gives one), so their effects are tested against --rate alone
# in tests/training/test_measured_rate.py, and --elementwise-traffic (the default MFU's constant)
# in tests/training/test_width_roofline.py.
INSTEAD_OF_MFU = {"--rate", "--rate-gpus", "--rate-micro-batch", "--rate-accum", "--rate-zero", "--rate-recompute",
                  "--elementwise-traffic"}


def _computed(data: dict) -> dict:
    comm = {k: v for k, v in data["comm"].items() if k not in ("algorithm", "backend")}
    return {**{k: v for k, v in data.items() if k not in ECHOES | {"comm"}}, "comm": comm}


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_every_option_changes_some_output_with_the_real_comm_model(option):
    base = _computed(_json(*BASE))
    varied = _computed(_json(*BASE, *OPTIONS[option]))
    assert varied != base, f"{option} has no effect on any output"
    args = OPTIONS[option]
    if option != "--algorithm" and args[:1] == ["--algorithm"]:  # the algorithm alone must not be what changed it
        assert varied != _computed(_json(*BASE, *args[:2])), f"{option} has no effect beyond {args[:2]}"


def test_every_iteration_option_is_covered():
    import click
    import typer.main

    command = typer.main.get_command(app).get_command(None, "iteration")
    options = {name for param in command.params if isinstance(param, click.Option) for name in param.opts}
    assert options - {"--json", "--help"} == set(OPTIONS) | INSTEAD_OF_MFU


@pytest.mark.parametrize("algorithm", ["bruck", "linear", "pairwise", "scatter-allgather", "recursive-halving",
                                       "pipelined-chain"])
def test_an_algorithm_no_collective_of_the_step_has_is_refused_not_run_as_auto(cli_error, algorithm):
    """At ZeRO-0 the gradient's all-reduce runs the named algorithm; one it lacks was timed as
    auto under the name given (header and JSON said "bruck"). Where a collective of the step
    has it (ZeRO-3's all-gather: Bruck), it runs there, as before."""
    line = cli_error(["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "4",
                      "--algorithm", algorithm])
    assert f"algorithm: got '{algorithm}'; allowed: one this step's all-reduce runs: auto (NCCL's own choice" in line
    zero3 = runner.invoke(app, ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "4",
                                "--algorithm", "bruck", "--zero", "3", "--backend", "ideal", "--json"])
    assert zero3.exit_code == 0, zero3.output
    auto = runner.invoke(app, ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "4",
                               "--zero", "3", "--backend", "ideal", "--json"])
    assert json.loads(zero3.stdout)["comm_s"] != json.loads(auto.stdout)["comm_s"]  # Bruck ran, not auto


def test_the_named_algorithm_check_is_the_models_for_the_api_the_sync_mode_and_the_charts(cli_error):
    """One check, in iteration_breakdown on the stage the sync mode runs. The Python API timed
    auto under bruck's name at ZeRO-0 (the check lived in the command alone); the command refused
    `--sync fsdp --algorithm bruck` by the typed --zero 0, though FSDP's all-gathers run Bruck."""
    import costmodel
    from dpbase.errors import InputError

    with pytest.raises(InputError, match="^algorithm: got 'bruck'; allowed: one this step's all-reduce runs"):
        costmodel.iteration("gpt2", "dgx-h100", micro_batch=4, nodes=2, algorithm="bruck")
    fsdp = ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--nodes", "2", "--micro-batch", "4",
            "--sync", "fsdp", "--json"]
    bruck, auto = (runner.invoke(app, [*fsdp, *extra]) for extra in (["--algorithm", "bruck"], []))
    assert bruck.exit_code == 0 and auto.exit_code == 0, bruck.output
    assert json.loads(bruck.stdout)["comm_s"] != json.loads(auto.stdout)["comm_s"]  # Bruck ran, not auto
    api = costmodel.iteration("gpt2", "dgx-h100", micro_batch=4, nodes=2, algorithm="bruck", sync="fsdp")
    assert api.total_s == pytest.approx(json.loads(bruck.stdout)["total_s"], rel=1e-12)
    line = cli_error(["plot", "breakdown", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "4",
                      "--algorithm", "bruck", "-o", "/tmp/never-written.html"])
    assert line.startswith("error: algorithm: got 'bruck'; allowed: one this step's all-reduce runs")


def test_an_algorithm_nccl_forces_on_the_all_reduce_alone_is_refused_at_zero_1(cli_error):
    """Under NCCL's model ring is forced on the all-reduce only; ZeRO-1's reduce-scatter and
    all-gather are NCCL's own choice, so `--zero 1 --algorithm ring` was auto's step named ring."""
    line = cli_error(["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--nodes", "2", "--micro-batch", "8",
                      "--zero", "1", "--algorithm", "ring"])
    # the refusal says why (a planner audit, 2026-11-30, read the list of textbook algorithms alone as
    # NCCL's ring being wrong here) and what runs: NCCL's own choice, or one timed on the α-β model
    assert ("algorithm: got 'ring'; allowed: ring forces NCCL's all-reduce, which this step does not issue; auto "
            "(NCCL's own choice for its reduce-scatter, all-gather), or one timed on the textbook α-β model: ") in line


def test_an_explicit_zero_0_beside_fsdp_is_refused():
    """`--sync fsdp --zero 0` printed a ZeRO-3 step with no word (review, 2026-11-28): FSDP shards, so
    a typed 0 is refused; left out, --zero is FSDP's FULL_SHARD (3), and 0 without --sync fsdp."""
    from typer.testing import CliRunner

    from cli import app

    args = ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "4"]
    typed = CliRunner().invoke(app, [*args, "--sync", "fsdp", "--zero", "0"])
    assert typed.exit_code == 2 and typed.stderr.startswith("error: zero: got 0; allowed: 2 (SHARD_GRAD_OP) or 3")
    assert "ZeRO-3" in CliRunner().invoke(app, [*args, "--sync", "fsdp"]).stdout.splitlines()[0]
    assert "ZeRO-0" in CliRunner().invoke(app, [*args, "--zero", "0"]).stdout.splitlines()[0]
    one = CliRunner().invoke(app, [*args, "--sync", "fsdp", "--zero", "1"])
    assert one.exit_code == 2 and "allowed: 2 or 3 with --sync fsdp" in one.stderr


def test_the_bucket_line_says_how_the_gradient_was_cut(tmp_path):
    """A first bucket larger than gpt2's ~250 MB gradient read "1 buckets of 25 MiB" (review,
    2026-11-29): one bucket is the whole gradient, and a first bucket larger than the rest is
    named; DDP's own 1 MiB first bucket is not."""
    base = ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "1", "--nodes", "2"]
    whole = runner.invoke(app, [*base, "--first-bucket", "1TiB"])
    assert whole.exit_code == 0 and "1 bucket (the whole gradient)" in whole.stdout and "1 buckets" not in whole.stdout
    large = runner.invoke(app, [*base, "--first-bucket", "100MiB"])
    # whole tensors (DDP never splits one): gpt2's 77 MB embedding is a call of its own
    # the first call as cut: whole tensors up to 104.9 MB (DDP never splits one)
    assert large.exit_code == 0 and ("4 buckets of 25 MiB, the first of 100 MiB (whole tensors: the first call "
                                     "104.9 MB, then 47.99 MB on average)") in large.stdout
    plain = runner.invoke(app, base)  # the last layer's 4.8 MB MLP matrix, then ~27 MB, and the 77 MB embedding
    assert plain.exit_code == 0 and ("7 buckets of 25 MiB (whole tensors: the first call 4.782 MB, then 40.68 MB "
                                     "on average)") in plain.stdout
    data = json.loads(runner.invoke(app, [*base, "--json"]).stdout)
    assert (data["bucket_count"], data["whole_tensors"]) == (7, True)
    assert data["first_call_bytes"] == pytest.approx(4.782e6, rel=1e-3)
    preset = [*base[:2], "resnet-50", *base[3:]]  # a CNN preset's tensors are listed: whole tensors too
    listed = runner.invoke(app, preset)
    assert listed.exit_code == 0 and ("3 buckets of 25 MiB (whole tensors: the first call 4.098 MB, then 23.51 MB "
                                      "on average)") in listed.stdout
    # a CNN from a model file (its layers not listed) is cut by bytes
    path = tmp_path / "cnn.toml"
    path.write_text('[model]\nkind = "cnn"\nparams = 25_557_032\nflops_per_sample = 24.54e9\n'
                    "activation_elements_per_sample = 11.1e6\ntensors = 161\n", encoding="utf-8")
    cnn = [*base[:2], str(path), *base[3:]]
    plain_cnn = runner.invoke(app, cnn)
    assert plain_cnn.exit_code == 0 and "3 buckets of 25 MiB\n" in plain_cnn.stdout and "whole tensors" not in plain_cnn.stdout
    small = runner.invoke(app, [*cnn, "--first-bucket", "40MB", "--bucket", "1MB"])
    assert small.exit_code == 0 and "13 buckets: the first of 40 MB, then 1 MB each\n" in small.stdout
    beyond = runner.invoke(app, [*base, "--bucket", "1TiB"])  # read "2 buckets of 1 TiB"
    assert beyond.exit_code == 0 and "2 buckets of whole tensors: the first of 4.782 MB, then the rest" in beyond.stdout
    bytes_cut = runner.invoke(app, [*cnn, "--bucket", "1TiB"])
    assert bytes_cut.exit_code == 0 and "2 buckets: the first of 1 MiB, then the rest" in bytes_cut.stdout


def test_a_small_solved_mfu_is_not_printed_as_zero():
    """--rate "1200 tok/s" for gpt2 on an H100 solves an MFU of about 0.1 %, printed 'MFU 0%'."""
    result = runner.invoke(app, ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "1",
                                 "--rate", "1200 tok/s"])
    assert result.exit_code == 0, result.output
    assert "at MFU 0%" not in result.stdout and "at MFU 0.1" in result.stdout
