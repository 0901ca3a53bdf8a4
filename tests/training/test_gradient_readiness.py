"""When backward produces each gradient (``Workload.gradient_readiness``): a CNN's classifier is
ready first, so its all-reduce starts early; iteration and the planner read the same curve."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import hardware
from cli import app
from costmodel.cluster.comm import comm_model
from costmodel.planner import recommend
from costmodel.training import overlap, workloads
from costmodel.training.iteration import TrainingConfig, iteration_breakdown
from costmodel.training.oncluster import iteration
from dpbase.errors import InputError
from dpbase.values import replace

runner = CliRunner()


def test_two_buckets_by_hand():
    """A backward of 1 s producing 2 GB in two 1 GB buckets of 0.6 s each. Evenly: the first is
    ready at 0.5 s and ends at 1.1 s, the second waits for it and ends at 1.7 s (0.7 s exposed).
    Half the bytes ready by a tenth of backward (a classifier): the first ends at 0.7 s, the
    second starts when backward ends and ends at 1.6 s (0.6 s exposed)."""
    layout = overlap.bucket_layout(2e9, 1e9, 1e9)
    even = overlap.exposed_comm_s(1.0, 2e9, layout, 0.6, 0.6, 0.6)
    early = overlap.exposed_comm_s(1.0, 2e9, layout, 0.6, 0.6, 0.6, readiness=((0.0, 0.0), (0.5, 0.1), (1.0, 1.0)))
    assert (even, early) == (pytest.approx(0.7), pytest.approx(0.6))


def test_vgg16s_classifier_hides_its_all_reduce_behind_backward():
    """VGG-16 on four DGX-1 (InfiniBand EDR) at micro-batch 32: its fc6, 205 MB of fp16 gradient in
    one call, is ready within 0.5 % of backward and hides behind it; read evenly it would be ready
    at 89 % and outlast backward by 4.5 ms. Where the network is far too slow for backward (eight
    nodes at micro-batch 2: the collectives run back to back) the curve changes little."""
    vgg = workloads.load_model("vgg16")
    even_vgg = replace(vgg, gradient_readiness=overlap.UNIFORM)
    own, even = (iteration(w, "dgx-1", nodes=4, micro_batch=32) for w in (vgg, even_vgg))
    assert own.comm_s == pytest.approx(even.comm_s, rel=1e-12)
    assert own.exposed_comm_s < 0.15 * even.exposed_comm_s and even.exposed_comm_s > 4e-3
    assert own.total_s < even.total_s - 3e-3
    slow = [iteration(w, "dgx-1", nodes=8, micro_batch=2) for w in (vgg, even_vgg)]
    assert slow[0].exposed_comm_s == pytest.approx(slow[1].exposed_comm_s, rel=0.02)


def test_plan_rows_of_a_cnn_equal_iteration():
    """The planner's arrays (numpy's interpolation of the curve) against iteration's floats."""
    system = hardware.load_system("dgx-1")
    result = recommend.plan("vgg16", system, nodes=4, global_batch=1024, grad_dtypes=("fp16", "fp32"), explain=False,
                            tie_band=0.0, top=100, _cli_words=True)
    assert result.candidates
    for row in result.candidates:
        comm = comm_model(system, row.nodes, row.gpus_per_node, **({} if row.gpus == 1 else
                                                                  {"algorithm": row.algorithm}))
        config = TrainingConfig(micro_batch=row.micro_batch, accumulation_steps=row.accumulation_steps,
                                grad_dtype=row.grad_dtype, zero_stage=row.zero_stage, bucket_bytes=row.bucket_bytes,
                                recompute=row.recompute)
        scalar = iteration_breakdown(workloads.load_model("vgg16"), system.gpu, comm, config=config)
        assert row.exposed_comm_s == pytest.approx(scalar.exposed_comm_s, rel=1e-9, abs=1e-15), row
        assert row.total_s == pytest.approx(scalar.total_s, rel=1e-9), row


def test_a_transformers_curve_is_even_with_its_embedding_last():
    gpt2 = workloads.load_model("gpt2")
    assert gpt2.gradient_readiness == ()
    assert gpt2.readiness == ((0.0, 0.0), (1.0 - gpt2.late_fraction, 1.0), (1.0, 1.0))
    assert workloads.load_model(1e9).readiness == overlap.UNIFORM  # no embedding counted


CNN = """[model]
kind = "cnn"
params = 25_557_032
flops_per_sample = 24.54e9
activation_elements_per_sample = 11.1e6
tensors = 161
"""


def _run(path):
    return runner.invoke(app, ["iteration", "--model", str(path), "--cluster", "aws-p3.16xlarge", "--nodes", "2",
                               "--micro-batch", "32", "--json"])


def test_a_model_file_states_its_curve(tmp_path):
    stated = tmp_path / "early.toml"
    stated.write_text(CNN + "gradient_readiness = [[0, 0], [0.6, 0.05], [1, 1]]\n")
    bare = tmp_path / "bare.toml"
    bare.write_text(CNN)
    assert workloads.load_model_file(str(stated)).gradient_readiness == ((0.0, 0.0), (0.6, 0.05), (1.0, 1.0))
    assert workloads.load_model_file(str(bare)).readiness == overlap.UNIFORM
    found = [json.loads(result.stdout) for result in (_run(stated), _run(bare))]
    assert found[0]["exposed_comm_s"] < found[1]["exposed_comm_s"]


@pytest.mark.parametrize("value", ["[[0, 0]]", "[[0, 0], [1, 0.9]]", "[[0.1, 0], [1, 1]]", "[[0, 0], [0.5, 0.6], "
                                   "[0.5, 0.7], [1, 1]]", "[[0, 0], [0.5, 0.6], [0.7, 0.5], [1, 1]]",
                                   "[[0, 0], [0.5, 1.5], [1, 1]]", "[[0, 0], [0.5], [1, 1]]", "[0, 1]",
                                   "[[0, 0], [true, 0.5], [1, 1]]", '"early"'])
def test_a_bad_curve_is_one_line_naming_it(tmp_path, value):
    path = tmp_path / "bad.toml"
    path.write_text(CNN + f"gradient_readiness = {value}\n")
    result = _run(path)
    assert result.exit_code == 2 and "model.gradient_readiness" in result.output, result.output
    assert "Traceback" not in result.output


def test_a_workload_built_in_python_has_its_curve_checked():
    base = workloads.load_model("resnet-50")
    listed = workloads.workload_of(replace(base, gradient_readiness=[[0, 0], [0.5, 0.1], [1, 1]]))
    assert listed.gradient_readiness == ((0.0, 0.0), (0.5, 0.1), (1.0, 1.0))
    hash(listed)  # a workload is hashed (memoised comm tables)
    import numpy as np

    assert workloads.workload_of(replace(base, gradient_readiness=np.array([[0, 0], [0.5, 0.1], [1, 1]]))
                                 ).gradient_readiness == ((0.0, 0.0), (0.5, 0.1), (1.0, 1.0))
    for bad in ([[0, 0], [0.5, 0.1]], [], ((0.0, 0.0), (0.5, float("nan")), (1.0, 1.0)),
                ((0.0, 0.0), (0.5, 0.6), (0.4, 0.7), (1.0, 1.0))):
        with pytest.raises(InputError, match="gradient_readiness"):
            workloads.workload_of(replace(base, gradient_readiness=bad))
    assert workloads.workload_of(base) is base  # a preset's curve passes as it is


def test_the_breakdown_says_when_the_gradient_is_ready():
    """The bucket line names the model's own curve's first knot; the JSON carries the curve (empty
    where the bytes come evenly, the input embedding's last); a flat all-reduce after backward says
    nothing of it."""
    base = ["iteration", "--cluster", "dgx-1", "--nodes", "2", "--micro-batch", "16"]
    text = runner.invoke(app, [*base, "--model", "vgg16"])
    assert text.exit_code == 0 and "89% of the gradient ready by 0.5% of backward" in text.stdout
    data = json.loads(runner.invoke(app, [*base, "--model", "vgg16", "--json"]).stdout)
    assert [tuple(k) for k in data["gradient_readiness"]] == list(workloads.load_model("vgg16").gradient_readiness)
    gpt2 = runner.invoke(app, [*base, "--model", "gpt2", "--json"])
    assert json.loads(gpt2.stdout)["gradient_readiness"] == []
    assert "of the gradient ready by" not in runner.invoke(app, [*base, "--model", "gpt2"]).stdout
    flat = runner.invoke(app, [*base, "--model", "vgg16", "--sync", "flat"])
    assert flat.exit_code == 0 and "of the gradient ready by" not in flat.stdout
