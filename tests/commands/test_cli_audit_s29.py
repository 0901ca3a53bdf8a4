"""A read-only audit of bad input on every command (2026-11-30, about 15,000 command lines) found
these; each test fails on the code before the fix."""

from __future__ import annotations

import json

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
