"""A read-only audit of bad input on every command (2026-12-01, about 450 command lines) found
these; each test fails on the code before the fix: two tracebacks, absurd numbers printed with
exit code 0, options accepted and ignored, and an error naming the wrong field."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from cli import app

runner = CliRunner()


def _line(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.output
    return lines[0]


@pytest.mark.parametrize("command", [
    ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "1"],
    ["plan", "--model", "gpt2", "--cluster", "dgx-h100", "--global-batch", "64"],
])
@pytest.mark.parametrize("rate", ["1e-310", "1e-300", "0.0005"])
def test_a_data_loader_slower_than_one_sample_in_1000_s_is_refused(command, rate):
    """plan's what-if divided by a zero rate (ZeroDivisionError, exit 1); iteration printed a
    1e300 s step with exit 0, or blamed 'time: got inf'."""
    line = _line([*command, "--input-rate", rate])
    assert line.startswith(f"error: input_rate: got {rate}") and "from 0.001 to 1e+12" in line


def test_the_slowest_data_loader_allowed_still_gives_finite_numbers():
    result = runner.invoke(app, ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "1",
                                 "--input-rate", "0.001", "--json"])
    assert result.exit_code == 0, result.output
    total = json.loads(result.stdout)["total_s"]
    assert math.isfinite(total) and total == pytest.approx(1000.0, rel=1e-3)


def test_the_rate_s_upper_limit_is_stated():
    line = _line(["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "1", "--rate", "1e12"])
    assert "above 0 and below 1e+12" in line


GPU = """[[gpu]]
name = "my-gpu"
description = "d"
source = "s"
vendor = "nvidia"
arch = "hopper"
compute_capability = 90
memory = "81090MiB"
hbm_bandwidth = "3350GB/s"
peak_tflops = {{ fp32 = 67, bf16 = {bf16}, fp16 = 989.4 }}
scaleup_link = "nvlink4"
scaleup_bandwidth = "450GB/s"
pcie_gen = 5
default_mfu = {mfu}
mfu_source = "x"
matmul_ceiling = {ceiling}
"""
LINK = """[[link]]
name = "my-link"
description = "d"
source = "s"
category = "roce"
bandwidth = "100Gbps"
efficiency = {efficiency}
latency = "2us"
"""


@pytest.mark.parametrize(("text", "field", "allowed"), [
    (GPU.format(bf16=989, mfu=0.4, ceiling="1e-300"), "matmul_ceiling", "a number from 0.001 to 1"),
    (GPU.format(bf16=989, mfu="1e-300", ceiling=0.8), "default_mfu", "a number from 0.001 to 1"),
    (GPU.format(bf16="1e300", mfu=0.4, ceiling=0.8), "peak_tflops.bf16", "from 0.001 to 1e+06"),
    (LINK.format(efficiency="1e-300"), "efficiency", "a number from 0.001 to 1"),
])
def test_profile_fractions_and_peaks_have_bounds_that_keep_answers_finite(tmp_path, text, field, allowed):
    """Each validated "ok": a 1e-300 matmul ceiling printed a 1e297 s forward pass, a 1e-300 link
    efficiency a 1.5e299 s all-reduce, a 1e300 peak crashed plan with a NaN step (exit 1)."""
    path = tmp_path / "profile.toml"
    path.write_text(text)
    line = _line(["hardware", "validate", str(path)])
    assert f".{field}: got " in line and allowed in line


def test_sync_fsdp_with_a_parameter_server_alone_is_refused_by_plan():
    """It was dropped: the plan was byte for byte the one without --sync fsdp."""
    line = _line(["plan", "--model", "gpt2", "--cluster", "dgx-h100", "--global-batch", "64",
                  "--algorithms", "parameter-server", "--sync", "fsdp"])
    assert line.startswith("error: sync: got 'fsdp'") and "parameter server" in line


def test_sweep_refuses_an_explicit_table_format_with_json():
    """`--format table --json` printed JSON; `--format csv --json` was already refused."""
    args = ["sweep", "all-reduce", "--ranks", "8", "--alpha", "5us", "--bandwidth", "25GB/s"]
    assert "one output format" in _line([*args, "--format", "table", "--json"])
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0 and isinstance(json.loads(result.stdout), list)


@pytest.mark.parametrize("primitive", ["scatter", "all-gather", "broadcast", "gather", "all-to-all"])
def test_a_reduction_time_for_a_collective_that_reduces_nothing_is_refused(primitive):
    """`--gamma 1ns` on a scatter answered "reduction (γ) 0 ns" with exit 0."""
    line = _line(["collective", primitive, "--ranks", "8", "--size", "4GB", "--alpha", "5us",
                  "--bandwidth", "25GB/s", "--gamma", "1ns"])
    assert line == f"error: gamma: got '1ns'; allowed: 0 (the default): {primitive} reduces nothing"


def test_a_reduction_time_still_applies_to_reducing_collectives():
    base = ["collective", "reduce-scatter", "--ranks", "8", "--size", "4GB", "--alpha", "5us", "--bandwidth",
            "25GB/s", "--json"]
    without = json.loads(runner.invoke(app, base).stdout)["time_s"]
    with_gamma = json.loads(runner.invoke(app, [*base, "--gamma", "1ns"]).stdout)["time_s"]
    assert with_gamma > without


@pytest.mark.parametrize("collective", ["scatter", "all-gather", "broadcast"])
def test_calibrating_an_all_reduce_log_as_a_collective_that_prints_no_reduction_is_refused(collective):
    """The log's rows print redop "sum"; fitted as a scatter they gave a link with exit 0."""
    line = _line(["calibrate", "tests/data/calibration/raw/abci_a_2n.txt", "--ranks", "16",
                  "--collective", collective])
    assert line.startswith(f"error: collective: got '{collective}'") and "redop sum" in line


def test_a_huge_width_is_blamed_on_both_shape_fields(tmp_path):
    """`hidden_size = 1e12` was reported as 'model.layers: got 12'."""
    path = tmp_path / "model.toml"
    path.write_text('[model]\nname = "wide"\nlayers = 12\nhidden_size = 1000000000000\nheads = 12\n'
                    'vocab = 50257\n')
    line = _line(["iteration", "--model", str(path), "--cluster", "dgx-h100", "--micro-batch", "1"])
    assert "model.layers and model.hidden_size: got '12 and 1000000000000'" in line


def test_sync_each_micro_batch_on_a_step_of_one_micro_batch_says_it_changes_nothing():
    """It was taken without effect and without a word, where --no-buffer-copies says so."""
    base = ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "1", "--sync-each-micro-batch"]
    result = runner.invoke(app, base)
    assert result.exit_code == 0 and "--sync-each-micro-batch changes nothing here" in result.output
    result = runner.invoke(app, [*base, "--accum", "2"])
    assert result.exit_code == 0 and "changes nothing" not in result.output
