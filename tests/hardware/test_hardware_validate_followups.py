"""``dpcost hardware validate|show`` on review findings: a zero scale-up bandwidth, follow-on
errors of an entry refused for its own problem, and ``--json`` errors on stderr (CliRunner)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from hardware import load_system, to_toml

DATA = Path(__file__).parents[1] / "data" / "hardware"
runner = CliRunner()

GPU = """
[[gpu]]
name = "mygpu"
description = "x"
vendor = "nvidia"
arch = "hopper"
compute_capability = 90
memory = "80GiB"
hbm_bandwidth = "3TB/s"
peak_tflops = { fp32 = 60, bf16 = 900, fp16 = 900 }
scaleup_link = "nvlink4"
scaleup_bandwidth = "450GB/s"
pcie_gen = 5
default_mfu = 0.4
mfu_source = "x"
source = "x"
"""

# The bundled DGX H100 as a user would copy it (hardware show's TOML), on the file's own GPU.
SYSTEM = "\n" + to_toml(load_system("dgx-h100")).replace('name = "dgx-h100"', 'name = "mysys"', 1).replace(
    'gpu = "h100-sxm"', 'gpu = "mygpu"', 1)
assert 'gpu = "mygpu"' in SYSTEM and 'name = "mysys"' in SYSTEM


def run(*args: str):
    return runner.invoke(app, ["hardware", *args])


def write(tmp_path: Path, text: str, name: str = "profile.toml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def error_lines(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]


def test_the_fixture_itself_is_valid(tmp_path):
    result = run("validate", write(tmp_path, GPU + SYSTEM))
    assert result.exit_code == 0 and result.stdout.strip() == "ok", result.output


def test_zero_scaleup_bandwidth_with_a_link_is_refused(tmp_path):
    path = write(tmp_path, GPU.replace('"450GB/s"', '"0GB/s"') + SYSTEM)
    result = run("validate", path)
    assert result.exit_code == 2
    assert error_lines(result) == [
        "error: gpus[0] (mygpu).scaleup_bandwidth: got '0GB/s'; allowed: a bandwidth > 0 when "
        'scaleup_link = "nvlink4" (e.g. "450GB/s"); "0GB/s" or omitted only with scaleup_link = "none"']
    shown = run("show", path, "--kind", "gpu")  # no "0 GB/s" scale-up shown as if it were a profile
    assert shown.exit_code == 2 and "Traceback" not in shown.output
    assert len(error_lines(shown)) == 1 and "scaleup_bandwidth: got '0GB/s'" in shown.stderr


def test_omitted_scaleup_bandwidth_with_a_link_is_refused(tmp_path):
    result = run("validate", write(tmp_path, GPU.replace('scaleup_bandwidth = "450GB/s"\n', "") + SYSTEM))
    assert result.exit_code == 2
    assert error_lines(result) == [
        "error: gpus[0] (mygpu).scaleup_bandwidth: got 'missing'; allowed: a bandwidth > 0 when "
        'scaleup_link = "nvlink4" (e.g. "450GB/s"); "0GB/s" or omitted only with scaleup_link = "none"']


def test_no_scaleup_link_still_says_none_with_zero_or_omitted(tmp_path):
    for bandwidth in ('scaleup_bandwidth = "0GB/s"\n', ""):
        gpu = GPU.replace('scaleup_link = "nvlink4"', 'scaleup_link = "none"').replace(
            'scaleup_bandwidth = "450GB/s"\n', bandwidth)
        path = write(tmp_path, gpu)
        assert run("validate", path).stdout.strip() == "ok"
        shown = run("show", path, "--json")
        assert shown.exit_code == 0 and json.loads(shown.stdout)["scaleup_link"] is None
    listed = run("list", "--kind", "gpu")  # the bundled PCIe-only cards keep saying "none"
    assert listed.exit_code == 0 and "none" in listed.stdout


def test_a_link_refused_for_its_own_typo_is_not_reported_again_as_unknown(tmp_path):
    text = (DATA / "my_cluster.toml").read_text(encoding="utf-8").replace('"100Gbps"', '"100Gpbs"')
    result = run("validate", write(tmp_path, text))
    assert result.exit_code == 2
    lines = error_lines(result)
    assert len(lines) == 2, lines
    assert lines[0].startswith("error: links[0] (lab-roce-100).bandwidth: got '100Gpbs'")
    assert lines[1].startswith("error: systems[0] (lab-4x-a100-pcie).nic_bandwidth: got '100Gpbs'")
    assert "nic_link" not in result.stderr


def test_a_gpu_refused_for_zero_tflops_is_not_reported_again_as_unknown(tmp_path):
    result = run("validate", write(tmp_path, GPU.replace("bf16 = 900", "bf16 = 0") + SYSTEM))
    assert result.exit_code == 2
    assert error_lines(result) == ["error: gpus[0] (mygpu).peak_tflops.bf16: got 0; allowed: a number of TFLOP/s from 0.001 to 1e+06"]


def test_a_gpu_refused_for_an_unknown_scaleup_link_is_reported_once(tmp_path):
    result = run("validate", write(tmp_path, GPU.replace('"nvlink4"', '"nvlink9"') + SYSTEM))
    lines = error_lines(result)
    assert result.exit_code == 2 and len(lines) == 1, lines
    assert lines[0].startswith("error: gpus[0] (mygpu).scaleup_link: got 'nvlink9'; allowed: a link name: one of")


def test_a_name_truly_unknown_is_still_reported(tmp_path):
    result = run("validate", write(tmp_path, SYSTEM.replace('gpu = "mygpu"', 'gpu = "nosuchgpu"')))
    lines = error_lines(result)
    assert result.exit_code == 2 and len(lines) == 1
    assert lines[0].startswith("error: systems[0] (mysys).gpu: got 'nosuchgpu'; allowed: a gpu name: one of")


def test_validate_json_failure_prints_the_report_and_the_errors_on_stderr(tmp_path):
    path = write(tmp_path, GPU.replace("bf16 = 900", "bf16 = 0") + SYSTEM)
    result = run("validate", path, "--json")
    assert result.exit_code == 2
    report = json.loads(result.stdout)
    assert report == {"path": path, "valid": False,
                      "problems": ["gpus[0] (mygpu).peak_tflops.bf16: got 0; allowed: a number of TFLOP/s from 0.001 to 1e+06"]}
    assert error_lines(result) == ["error: gpus[0] (mygpu).peak_tflops.bf16: got 0; allowed: a number of TFLOP/s from 0.001 to 1e+06"]
    plain = run("validate", path)  # the same stderr with or without --json
    assert plain.stderr == result.stderr


def test_validate_json_on_a_valid_file_is_quiet_on_stderr(tmp_path):
    result = run("validate", write(tmp_path, GPU + SYSTEM), "--json")
    assert result.exit_code == 0 and result.stderr == ""
    assert json.loads(result.stdout)["valid"] is True


@pytest.mark.parametrize("field, value", [("memory", "80"), ("hbm_bandwidth", "3350"), ("memory", " 80 ")])
def test_a_bare_number_for_a_quantity_is_refused(tmp_path, field, value):
    """A profile quantity needs its unit: a bare "80" memory was read as 80 bytes (validate said
    ok, iteration then said 0.00 GB per GPU), although the docs said it was refused."""
    text = GPU.replace(f'{field} = "', f'{field} = "{value}" # was "', 1)
    path = tmp_path / "bare.toml"
    path.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["hardware", "validate", str(path)])
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and f".{field}: got '{value}'" in lines[0] and "a unit is needed" in lines[0]


@pytest.mark.parametrize(("old", "new", "message"), [
    ("scaleup_domain_gpus = 0", "scaleup_domain_gpus = 4",
     "scaleup_domain_gpus: got 4; allowed: 0 (one node) or a multiple of gpus_per_node = 8"),
    ("scaleup_domain_gpus = 0", "scaleup_domain_gpus = 12", "scaleup_domain_gpus: got 12;"),
    ('intra_fabric = "nvswitch"', 'intra_fabric = "pcie"',
     'nvswitch_gen: got 3; allowed: 0 unless intra_fabric = "nvswitch" (it is "pcie")'),
    ("p2p = true", "p2p = false", 'p2p: got False; allowed: true unless intra_fabric = "pcie"')])
def test_contradictory_system_fields_are_refused(tmp_path, old, new, message):
    """A scale-up domain of 4 or 12 GPUs on an 8-GPU node was read as 8, an NVSwitch generation on
    a PCIe node kept NVLS, and p2p = false on NVSwitch changed nothing, all validated "ok" (review,
    2026-11-28)."""
    assert old in SYSTEM
    result = run("validate", write(tmp_path, GPU + SYSTEM.replace(old, new, 1)))
    assert result.exit_code == 2 and any(message in line for line in error_lines(result)), result.output
    # an NVL72-style domain of eighteen 4-GPU trays is whole nodes
    fine = SYSTEM.replace("scaleup_domain_gpus = 0", "scaleup_domain_gpus = 72", 1).replace(
        "gpus_per_node = 8", "gpus_per_node = 4", 1)
    assert run("validate", write(tmp_path, GPU + fine, "fine.toml")).exit_code == 0


@pytest.mark.parametrize(("old", "new", "message"), [
    ('vendor = "nvidia"', 'vendor = "amd"', 'arch: got \'hopper\'; allowed: a CDNA architecture'),
    ('arch = "hopper"', 'arch = "ampere"', 'compute_capability: got 90; allowed: 80 to 87 for arch = "ampere"'),
    ("compute_capability = 90", "compute_capability = 80", 'compute_capability: got 80; allowed: 90 for arch = "hopper"')])
def test_contradictory_gpu_fields_are_refused(tmp_path, old, new, message):
    """An AMD 'hopper' with sm_90 validated "ok" and ran under RCCL's model with NVIDIA's paths;
    an 'ampere' with sm_90 too (review, 2026-11-29)."""
    assert old in GPU
    result = run("validate", write(tmp_path, GPU.replace(old, new, 1) + SYSTEM))
    assert result.exit_code == 2 and any(message in line for line in error_lines(result)), result.output
    amd = GPU.replace('vendor = "nvidia"', 'vendor = "amd"').replace('"hopper"', '"cdna3"').replace(
        "compute_capability = 90", "compute_capability = 0")
    assert run("validate", write(tmp_path, amd, "amd.toml")).exit_code == 0


def test_every_architecture_is_numbered_by_cuda_or_is_amds():
    """The vendor check reads NVIDIA's architectures as the ones CUDA numbers: an architecture
    added without its compute capabilities must be AMD's CDNA, or the check would call it AMD."""
    from hardware.profiles import ARCHITECTURES
    from hardware.resolve import COMPUTE_CAPABILITIES

    assert set(COMPUTE_CAPABILITIES) <= set(ARCHITECTURES)
    assert all(arch.startswith("cdna") for arch in set(ARCHITECTURES) - set(COMPUTE_CAPABILITIES))
