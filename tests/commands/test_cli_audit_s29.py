"""Read-only audits of bad input on every command (2026-11-30, about 15,000 command lines; 2026-12-01,
about 450, below its own heading) found
these; each test fails on the code before the fix."""

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


@pytest.mark.parametrize("primitive", ["scatter", "gather", "all-to-all", "send-recv"])
def test_a_point_to_point_primitive_named_to_nccl_is_one_line_not_a_traceback(primitive):
    """`collective scatter -a ring --backend nccl` was a KeyError traceback, exit 1."""
    line = _line(["collective", primitive, "-a", "ring", "--backend", "nccl", "--cluster", "dgx-h100",
                  "--nodes", "2", "--size", "100MB"])
    assert f"which has no {primitive}" in line and "dpcost collective" in line


@pytest.mark.parametrize("args", [
    ["collective", "all-to-all", "--cluster", "mi300x-8x", "--size", "1GB"],
    ["collective", "send-recv", "--cluster", "mi325x-8x", "--size", "1KB"],
    ["compare", "gather", "--cluster", "azure-nd-mi300x-v5", "--size", "1MB"],
    ["iteration", "--model", "llama2-7b", "--cluster", "mi300x-8x", "--micro-batch", "1", "--zero", "3",
     "--quantize-grads", "int8"],
])
def test_point_to_point_primitives_run_on_one_mi300x_node(args):
    """MSCCL's check sent every primitive to NCCL's collective names, which refused them as NCCL's
    model's, on the backend auto the message told the user to use."""
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    if args[0] == "collective":  # a real answer: a positive time on the cluster's links
        data = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
        assert data["time_s"] > 0 and data["cluster"] and data["primitive"] == args[1]


@pytest.mark.parametrize(("toml", "field"), [
    ('[p2p_level]\ndefault = "FOO"\n', "p2p_level.default"),
    ('[p2p_level]\namd_few_gpus = ""\n', "p2p_level.amd_few_gpus"),
    ("[link_bandwidth_GBps]\nnvlink_per_link = { sm90 = 0.0 }\n", "link_bandwidth_GBps.nvlink_per_link.sm90"),
    ("[search_speeds_GBps]\nmax_channels = 0\n", "search_speeds_GBps.max_channels"),
    ("[hw_latency_us.nvlink]\nring = { ll = 1e308, ll128 = 1.9, simple = 3.4 }\n", "hw_latency_us.nvlink.ring.ll"),
])
def test_a_tuning_file_value_nccl_could_not_hold_is_refused(tmp_path, toml, field):
    """An unknown P2P level was a ValueError traceback; a zero link rate or channel count answered
    601,710 µs, and a 1e308 µs latency printed inf in the table."""
    path = tmp_path / "tuning.toml"
    path.write_text(toml)
    line = _line(["nccl-table", "--cluster", "rtx4090-8x-pcie-p2p", "--size", "1GB", "--tuning", str(path)])
    assert line.startswith(f"error: {field}: got ")


@pytest.mark.parametrize(("args", "needle"), [
    (["iteration", "--model", "7", "--cluster", "dgx-h100", "--micro-batch", "1"], "such as 7B or 7M"),
    (["plan", "--model", "7", "--cluster", "dgx-h100", "--global-batch", "64"], "such as 7B or 7M"),
    (["collective", "all-reduce", "--size", "1.5B", "--alpha", "5us", "--bandwidth", "25GB/s", "-N", "8"],
     "a whole number of bytes"),
    (["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "4", "--accum", "0"],
     "error: --accum: got 0"),
    (["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "4", "--zero", "5"],
     "error: --zero: got 5"),
    (["collective", "all-reduce", "--cluster", "dgx-h10", "--size", "1GB"], "did you mean 'dgx-h100'?"),
    (["nccl-table", "--cluster", "dgx-h100", "--size", "1GB", "--collective", "all-to-all"], "`dpcost collective`"),
])
def test_the_line_names_what_was_typed(args, needle):
    """A bare 7 was 7 parameters; 1.5 B was timed; --accum/--zero were named by the library's field;
    a typo of a cluster got no suggestion; nccl-table pointed to a --backend it does not have."""
    assert needle in _line(args)


def test_a_whole_count_and_sizes_with_units_still_pass():
    assert runner.invoke(app, ["collective", "all-reduce", "--size", "1.5KB", "--alpha", "5us", "--bandwidth",
                               "25GB/s", "-N", "8"]).exit_code == 0
    result = runner.invoke(app, ["iteration", "--model", "125000000", "--cluster", "dgx-h100", "--micro-batch", "1",
                                 "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["params"] == 125_000_000


def test_a_log_error_names_its_file_from_the_first_pass(tmp_path):
    """A size column of 1e400 was reported as 'line 22 column size' with no file, among several logs."""
    from costmodel.calibrate.parse import parse_text

    text = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
            "busbw #wrong\n"
            "        1e400          1024     float     sum      -1    10.0    0.41    0.72      0    10.0    0.41    "
            "0.72      0\n")
    from dpbase.errors import ParseError

    with pytest.raises(ParseError) as refused:
        parse_text(text, "logs/a.txt")
    assert str(refused.value).startswith("logs/a.txt line 2 column size")


def test_hardware_show_says_what_else_the_file_holds(tmp_path):
    """A file with two [[system]] and a [[link]] showed the link alone, unsaid."""
    from pathlib import Path

    base = Path(__file__).resolve().parents[1] / "data" / "hardware" / "my_cluster.toml"
    text = base.read_text()
    system = text[text.index("[[system]]"):]
    path = tmp_path / "two.toml"
    path.write_text(text + "\n" + system.replace('name = "lab-4x-a100-pcie"', 'name = "lab2"', 1))
    result = runner.invoke(app, ["hardware", "show", str(path), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["kind"] == "link" and data["also_in_file"] == {"system": ["lab-4x-a100-pcie", "lab2"]}


def test_the_header_names_the_choice_at_the_steps_own_bucket():
    """The header always named the choice for a 25 MiB call: with --bucket 400MiB NCCL runs
    ring/Simple, not the ring/LL128 it printed; a flat all-reduce's one call is the whole gradient."""
    base = ["iteration", "--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "4", "--micro-batch", "1",
            "--seq-len", "4096", "--zero", "1"]
    big = runner.invoke(app, [*base, "--bucket", "400MiB"])
    assert big.exit_code == 0, big.output
    assert "(ring/Simple for 400 MiB reduce-scatters, nccl backend)" in big.output.splitlines()[0]
    data = json.loads(runner.invoke(app, [*base, "--bucket", "400MiB", "--json"]).stdout)["comm"]
    assert data["bucket_probe_bytes"] == 400 * 2**20 and data["protocol_at_bucket"] == "Simple"
    assert data["protocol_at_25MiB"] == "LL128"  # the documented 25 MiB keys keep their meaning
    default = runner.invoke(app, base)
    assert "for 25 MiB reduce-scatters" in default.output.splitlines()[0]
    assert "bucket_probe_bytes" not in json.loads(runner.invoke(app, [*base, "--json"]).stdout)["comm"]


def test_colocated_is_one_flag_everywhere():
    """`collective --colocated` was `--ps-placement colocated` in iteration and plan (a seeds audit:
    one flag, two names): both spellings now work there, and the two placements at once is one error."""
    base = ["iteration", "--model", "resnet-50", "--cluster", "dgx-a100", "--nodes", "2", "--micro-batch", "64",
            "--algorithm", "parameter-server", "--servers", "2", "--json"]
    spelt = [json.loads(runner.invoke(app, [*base, *flag]).stdout)["total_s"]
             for flag in (["--colocated"], ["--ps-placement", "colocated"], [])]
    assert spelt[0] == spelt[1] != spelt[2]
    assert "--colocated: got True" in _line([*base[:-1], "--colocated", "--ps-placement", "dedicated"])
    plan = runner.invoke(app, ["plan", "--model", "resnet-50", "--cluster", "dgx-a100", "--nodes", "2",
                               "--global-batch", "512", "--algorithms", "parameter-server", "--colocated", "--json"])
    assert plan.exit_code == 0, plan.output
    plan_base = ["plan", "--model", "resnet-50", "--cluster", "dgx-a100", "--nodes", "2", "--global-batch", "512",
                 "--algorithms", "parameter-server", "--servers", "2", "--json"]
    planned = [json.loads(runner.invoke(app, [*plan_base, *flag]).stdout)["best"]["total_s"]
               for flag in (["--colocated"], ["--ps-placement", "colocated"], [])]
    assert planned[0] == planned[1] != planned[2]  # --colocated is taken, not dropped


# --- A second audit (2026-12-01, about 450 command lines): two tracebacks, absurd numbers printed
# with exit code 0, options accepted and ignored, and an error naming the wrong field. -----------


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


def _bundled_with(kind: str, name: str, **changed) -> str:
    """A bundled profile's TOML (hardware.describe.to_toml) under the name my-<kind>, with
    ``changed`` fields: the file is the bundled one but for the value under test."""
    import dataclasses

    import hardware
    from hardware.describe import to_toml

    profile = hardware.load_gpu(name) if kind == "gpu" else hardware.load_link(name)
    return to_toml(dataclasses.replace(profile, name=f"my-{kind}", **changed))


def _bf16_peak(tflops: float) -> dict:
    """H100 SXM's bundled peaks but for bf16's (FLOP/s, as the profile holds them)."""
    import hardware

    return {**hardware.load_gpu("h100-sxm").peak_flops, "bf16": tflops * 1e12}


@pytest.mark.parametrize(("kind", "name", "changed", "field", "allowed"), [
    ("gpu", "h100-sxm", {"matmul_ceiling": 1e-300}, "matmul_ceiling", "a number from 0.001 to 1"),
    ("gpu", "h100-sxm", {"default_mfu": 1e-300}, "default_mfu", "a number from 0.001 to 1"),
    ("gpu", "h100-sxm", {"peak_flops": _bf16_peak(2e6)}, "peak_tflops.bf16", "from 0.001 to 1e+06"),
    ("link", "ib-ndr", {"efficiency": 1e-300}, "efficiency", "a number from 0.001 to 1"),
])
def test_profile_fractions_and_peaks_have_bounds_that_keep_answers_finite(tmp_path, kind, name, changed, field,
                                                                        allowed):
    """Each validated "ok": a 1e-300 matmul ceiling printed a 1e297 s forward pass, a 1e-300 link
    efficiency a 1.5e299 s all-reduce, a 1e300 peak crashed plan with a NaN step (exit 1)."""
    path = tmp_path / "profile.toml"
    path.write_text(_bundled_with(kind, name, **changed))
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
