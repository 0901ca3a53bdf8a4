"""Each bad input is one line naming the option the user typed, the value as typed and what is
allowed (found by a QA pass, 2026-11-28: `plan --nodes 0` ran as one node, `plan --gpus 0`
blamed max_gpus, `--tokens` spoke of parameter counts, `--quantize-grads int2` echoed 2,
`--attention` on a CNN named an internal field, and the backend lists left out the default)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from cli import app

runner = CliRunner()
PLAN = ["plan", "--model", "gpt2", "--cluster", "dgx-h100", "--global-batch", "64"]
ITERATION = ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "8"]


@pytest.mark.parametrize(("argv", "line"), [
    ([*PLAN, "--nodes", "0"], "error: nodes: got 0; allowed: an integer >= 1"),
    ([*PLAN, "--gpus", "0"], "error: gpus: got 0; allowed: an integer >= min_gpus (1)"),
    ([*PLAN, "--gpus", "-5"], "error: gpus: got -5;"),
    ([*PLAN, "--objective", "gpu-hours", "--tokens", "0"], "error: tokens: got '0'; allowed: a token count from 1"),
    ([*PLAN, "--objective", "gpu-hours", "--tokens", "1TB"],
     "error: tokens: got '1TB'; allowed: a token count such as 2T, 300B or 1e12"),
    ([*ITERATION, "--zero", "1", "--quantize-grads", "int2"], "error: quantize_grads: got 'int2'; allowed: int4 or int8"),
    (["iteration", "--model", "resnet-50", "--cluster", "dgx-h100", "--micro-batch", "8", "--attention"],
     "error: attention: got True;"),
    ([*ITERATION, "--backend", "foo"], "error: backend: got 'foo'; allowed: one of auto, ideal, nccl, rccl"),
    ([*PLAN, "--backend", "foo"], "error: backend: got 'foo'; allowed: one of auto, ideal, nccl, rccl"),
    (["collective", "all-reduce", "--cluster", "dgx-h100", "--size", "1MB", "--backend", "foo"],
     "error: backend: got 'foo'; allowed: one of auto, ideal, nccl, rccl"),
    # sizes a --sync mode does not use: refused, not ignored
    ([*ITERATION, "--nodes", "2", "--sync", "flat", "--bucket", "5MiB"],
     "error: bucket: got '5 MiB'; allowed: left out with --sync flat"),
    ([*ITERATION, "--nodes", "2", "--sync", "per-tensor", "--bucket", "400MiB"],
     "error: bucket: got '400 MiB'; allowed: left out with --sync per-tensor"),
    ([*ITERATION, "--nodes", "2", "--sync", "horovod", "--first-bucket", "10MiB"],
     "error: first_bucket: got '10 MiB'; allowed: left out with --sync horovod (every fusion buffer is --bucket)"),
    # fp8 gradients where the collectives cannot reduce fp8 (NCCL: from sm90; Ada is sm89)
    (["iteration", "--model", "gpt2", "--cluster", "dgx-a100", "--micro-batch", "8", "--grad-dtype", "fp8"],
     "error: grad_dtype: got 'fp8'; allowed: fp32, bf16, fp16 on a100-sxm4-80gb (ampere)"),
    (["iteration", "--model", "gpt2", "--cluster", "l40s-4x-pcie", "--micro-batch", "8", "--grad-dtype", "fp8"],
     "error: grad_dtype: got 'fp8'; allowed: fp32, bf16, fp16 on"),
    (["plan", "--model", "gpt2", "--cluster", "aws-p2.8xlarge", "--nodes", "2", "--global-batch", "256",
      "--grad-dtypes", "fp8,fp16"], "error: grad_dtypes: got 'fp8'; allowed: fp32, bf16, fp16 on k80 (kepler)"),
    # chart size ranges name the option at fault, in the units typed
    (["plot", "sweep", "all-reduce", "-N", "8", "--alpha", "5us", "--bandwidth", "25GB/s", "--min-size", "0",
      "-o", "never-written.html"],
     "error: min_size: got '0'; allowed: a size >= 1 B"),
    (["plot", "sweep", "all-reduce", "-N", "8", "--alpha", "5us", "--bandwidth", "25GB/s", "--min-size", "1GiB",
      "--max-size", "1KiB", "-o", "never-written.html"], "error: max_size: got '1KiB'; allowed: a size >= the minimum size (1 GiB)"),
    # chart options the chart would not use, or an output it would not be
    (["plot", "sweep", "all-reduce", "--cluster", "dgx-h100", "--alpha", "5us", "--bandwidth", "1GB/s", "-o", "x.html"],
     "error: --alpha: got '5us'; allowed: left out with --cluster"),
    (["plot", "sweep", "all-reduce", "--cluster", "dgx-h100", "-N", "4", "-o", "x.html"],
     "error: --ranks: got 4; allowed: left out with --cluster"),
    (["plot", "sweep", "all-reduce", "-N", "8", "--alpha", "5us", "--bandwidth", "25GB/s", "--gpus-per-node", "4",
      "-o", "x.html"], "error: --gpus-per-node: got 4; allowed: only with --cluster"),
    (["plot", "sweep", "all-reduce", "-N", "8", "--alpha", "5us", "--bandwidth", "25GB/s", "-a", "ring", "-a", "nope",
      "-o", "x.html"], "error: algorithm: got 'nope'; allowed: one of binomial, bruck,"),
    (["plot", "sweep", "all-reduce", "-N", "8", "--alpha", "5us", "--bandwidth", "25GB/s", "-o", "chart.png"],
     "error: output: got 'chart.png'; allowed: a .html path"),
    (["plot", "schedule", "all-reduce", "ring", "-o", "ring.png"], "error: output: got 'ring.png'; allowed: a .html path"),
    # options the command would not use
    (["nccl-table", "--cluster", "dgx-h100", "--collective", "all-to-all"],
     "error: --collective: got 'all-to-all'; allowed: only with --size"),
    (["collective", "all-reduce", "--cluster", "dgx-h100", "--size", "1GB", "--stack", "gloo", "--backend", "nccl"],
     "error: --stack: got 'gloo'; allowed: left out with --backend nccl"),
    # NCCL's model on an AMD system points at RCCL's, which is bundled
    (["collective", "all-reduce", "--cluster", "mi300x-8x", "--size", "1GiB", "--backend", "nccl"],
     "error: system: got 'mi300x-8x'; allowed: an NVIDIA GPU system (sm60+) for NCCL's model; on AMD GPUs use "
     "--backend rccl"),
    # over NCCL's TCP sockets the slowdown is 1 whatever was typed: refused, not ignored
    (["iteration", "--model", "gpt2", "--cluster", "rtx4090-8x-pcie", "--nodes", "2", "--micro-batch", "8",
      "--overlap-slowdown", "0"], "error: overlap_slowdown: got 0.0; allowed: at least 1 (or left out) on rtx4090-8x-pcie"),
])
def test_one_line_naming_what_was_typed(argv, line):
    result = runner.invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(line), result.stderr


def test_the_overlap_slowdown_applies_where_the_transport_lets_it():
    """Inside one node with peer-to-peer and over RDMA the typed slowdown changes the step; over TCP,
    and inside a node without peer-to-peer (NCCL's SHM transport, since 2026-11-30), the default is
    1 and typing 1 is accepted."""
    import json

    def total(*argv: str) -> float:
        result = runner.invoke(app, ["iteration", "--model", "gpt2", "--micro-batch", "8", *argv, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["total_s"]

    for cluster, nodes in (("rtx4090-8x-pcie-p2p", "1"), ("dgx-h100", "2")):
        base = ("--cluster", cluster, "--nodes", nodes)
        assert total(*base, "--overlap-slowdown", "0") < total(*base) < total(*base, "--overlap-slowdown", "1")
    for full in (("--cluster", "rtx4090-8x-pcie", "--nodes", "2"), ("--cluster", "rtx4090-8x-pcie", "--nodes", "1")):
        assert total(*full) == total(*full, "--overlap-slowdown", "1")


def test_fp8_gradients_run_where_their_collectives_reduce():
    for cluster in ("dgx-h100", "dgx-b200"):
        result = runner.invoke(app, ["iteration", "--model", "gpt2", "--cluster", cluster, "--micro-batch", "8",
                                     "--grad-dtype", "fp8"])
        assert result.exit_code == 0, (cluster, result.output)


def test_gamma_is_refused_where_nccls_model_answers_and_used_where_the_ideal_one_does():
    """--gamma was silently ignored under NCCL's model (QA pass, 2026-11-28)."""
    import json

    base = ["collective", "all-reduce", "--cluster", "dgx-h100", "--nodes", "2", "--size", "1GB"]
    refused = runner.invoke(app, [*base, "--backend", "nccl", "-a", "ring", "--gamma", "1ns"])
    assert refused.exit_code == 2 and refused.stderr.startswith("error: gamma: got '1ns'; allowed: 0 (or --backend ideal)")

    def time_s(*extra: str) -> float:
        result = runner.invoke(app, [*base, "--backend", "ideal", "-a", "ring", *extra, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["time_s"]

    assert time_s("--gamma", "1ns") > time_s()


def test_another_library_is_timed_as_that_library():
    """`--stack gloo` on a DGX H100 answered with NCCL's NVLS (QA pass, 2026-11-28): NCCL's model
    describes NCCL only, so another stack's algorithms are timed on the α-β mapping."""
    import json

    result = runner.invoke(app, ["collective", "all-reduce", "--cluster", "dgx-h100", "--size", "1GB", "--stack", "gloo",
                                 "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["backend"] == "ideal" and found["algorithm"] not in ("in-network", "nvls", "nvls_tree")
    # the training path builds its comm model the same way (it ignored the stack, review of 2026-11-28)
    from costmodel.cluster.comm import comm_model

    assert comm_model("dgx-h100", 2, stack="gloo").backend == "ideal"
    assert comm_model("dgx-h100", 2, stack="nccl").backend == comm_model("dgx-h100", 2).backend == "nccl"


def test_the_refusals_stop_where_their_reason_does(tmp_path):
    """Review of 2026-11-28: --gamma was refused on RCCL's answers, which are α-β-γ timed; a sweep
    mixing backends was refused whole for one backend's row; --backend IDEAL (any case) with
    --stack was refused; a chart of an algorithm that runs at only some rank counts was refused."""
    import json

    rccl = runner.invoke(app, ["collective", "all-reduce", "--cluster", "mi300x-8x", "--nodes", "2", "--size", "64MiB",
                               "--gamma", "1ns", "--json"])
    assert rccl.exit_code == 0, rccl.output
    assert json.loads(rccl.stdout)["backend"] == "rccl" and json.loads(rccl.stdout)["reduction_s"] > 0
    mixed = runner.invoke(app, ["sweep", "all-reduce", "--cluster", "dgx-h100", "--nodes", "2", "--backend", "nccl,ideal",
                                "--gamma", "0.01ns", "--sizes", "1GB", "--json"])
    assert mixed.exit_code == 0, mixed.output
    assert [row["backend"] for row in json.loads(mixed.stdout)] == ["ideal"] and mixed.stderr.startswith("note: 1 ")
    upper = runner.invoke(app, ["collective", "all-reduce", "--cluster", "dgx-h100", "--size", "1GB", "--backend",
                                "IDEAL", "--stack", "mpi"])
    assert upper.exit_code == 0, upper.output
    chart = runner.invoke(app, ["plot", "scaling", "all-reduce", "--size", "1GiB", "--cluster", "dgx-h100", "--backend",
                                "nccl", "-a", "nvls", "-a", "ring", "--rank-counts", "8,16,32", "-o",
                                str(tmp_path / "scaling.html"), "--json"])
    assert chart.exit_code == 0, chart.output
    assert json.loads(chart.stdout)["traces"] >= 2


@pytest.mark.parametrize(("argv", "meant"), [
    (["iteration", "--model", "ResNet50", "--cluster", "dgx-1", "--micro-batch", "8"], "resnet-50"),
    (["iteration", "--model", "bert_large", "--cluster", "dgx-1", "--micro-batch", "8"], "bert-large"),
    (["iteration", "--model", "gpt2", "--cluster", "DGX_H100", "--micro-batch", "8"], "dgx-h100"),
    (["collective", "all-reduce", "--cluster", "dgx-h100", "--size", "1MB", "--algorithm", "Double Binary Tree"],
     "double-binary-tree"),
])
def test_a_known_name_spelt_otherwise_is_refused_with_the_name_it_means(argv, meant):
    result = runner.invoke(app, argv)
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1
    assert lines[0].startswith("error: ") and lines[0].endswith(f"(did you mean '{meant}'?)")


def test_a_name_spelt_like_two_known_names_suggests_neither():
    result = runner.invoke(app, ["iteration", "--model", "gpt3_13b", "--cluster", "dgx-1", "--micro-batch", "8"])
    assert result.exit_code == 2 and "did you mean" not in result.output  # gpt3-13b and gpt3-1.3b alike
