"""User profile files: loading by path, and a clear ProfileError for each kind of mistake."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dpbase.errors import ProfileError, UnknownNameError
from hardware import is_path, load_file, load_gpu, load_link, load_profile, load_system, validate_file

DATA = Path(__file__).parents[1] / "data" / "hardware"

LINK = """
[[link]]
name = "my-link"
description = "test link"
source = "test"
category = "roce"
bandwidth = "100Gbps"
efficiency = 0.9
latency = "2us"
"""

SYSTEM = """
[[system]]
name = "my-box"
description = "test box"
source = "test"
gpu = "h100-sxm"
gpus_per_node = 8
intra_fabric = "nvswitch"
nvswitch_gen = 3
intra_link = "nvlink4-x18"
intra_bandwidth = "450GB/s"
nics_per_node = 8
nic_link = "ib-ndr"
nic_bandwidth = "400Gbps"
rail_optimized = true
in_network_reduction = "nvls"
cpu_vendor = "intel"
p2p = true
"""


def write(tmp_path: Path, text: str, name: str = "profile.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_is_path():
    assert is_path("x.toml") and is_path("dir/x") and not is_path("dgx-h100")


def test_user_system_by_path_references_bundled_names(tmp_path):
    system = load_system(write(tmp_path, SYSTEM))
    assert system.name == "my-box" and system.gpu.name == "h100-sxm"
    assert system.nic_link.bandwidth_Bps == pytest.approx(50e9)
    assert (system.pcie_path, system.pcie_switch_gpus) == ("PXB", 1)  # optional, NCCL-P2P-friendly defaults


def test_pcie_layout_fields(tmp_path):
    system = load_system(write(tmp_path, SYSTEM + 'pcie_path = "NODE"\npcie_switch_gpus = 4\n'))
    assert (system.pcie_path, system.pcie_switch_gpus) == ("NODE", 4)
    assert system.oversubscription == 1.0
    assert load_system(str(write(tmp_path, SYSTEM, "other.toml"))).name == "my-box"


@pytest.mark.parametrize("ratio", [0.5, 65, 1e30])
def test_oversubscription_outside_what_a_fabric_has_is_refused(tmp_path, ratio):
    """A review's 1e30 ratio validated and made a 1 GiB all-reduce take 1.5e29 s."""
    with pytest.raises(ProfileError, match=r"oversubscription: got .*; allowed: a number from 1 to 64"):
        load_system(write(tmp_path, SYSTEM + f"oversubscription = {ratio!r}\n"))


def test_user_file_defines_its_own_gpu_and_link():
    system = load_system(DATA / "my_cluster.toml")
    assert system.nic_link.name == "lab-roce-100" and system.oversubscription == 2.0
    link = load_link(DATA / "my_cluster.toml")
    assert len(link.regimes) == 2 and link.regimes[0].max_size_bytes == 65536
    assert link.regime_for(1e9).bandwidth_Bps == pytest.approx(11e9)
    assert validate_file(DATA / "my_cluster.toml") == []


def test_local_definitions_shadow_bundled_names(tmp_path):
    text = LINK.replace('"my-link"', '"ib-ndr"').replace("0.9", "0.5") + SYSTEM.replace("nvls", "")
    system = load_system(write(tmp_path, text))
    assert system.nic_link.efficiency == 0.5


def test_load_profile_picks_the_single_profile(tmp_path):
    assert load_profile(write(tmp_path, LINK)).name == "my-link"
    assert load_profile("dgx-h100").name == "dgx-h100"
    with pytest.raises(UnknownNameError, match="profile: got 'nope'"):
        load_profile("nope")


def test_user_file_is_reloaded_after_change(tmp_path):
    path = write(tmp_path, LINK)
    assert load_link(path).latency_s == pytest.approx(2e-6)
    path.write_text(LINK.replace('"2us"', '"30us"'), encoding="utf-8")
    assert load_link(path).latency_s == pytest.approx(30e-6)


def test_unknown_bundled_name_lists_known_names():
    with pytest.raises(UnknownNameError) as error:
        load_system("dgx-h1000")
    message = str(error.value)
    assert message.startswith("system: got 'dgx-h1000'") and "dgx-h100" in message and "\n" not in message


def test_missing_file(tmp_path):
    with pytest.raises(ProfileError, match="path"):
        load_system(tmp_path / "absent.toml")
    assert "path" in validate_file(tmp_path / "absent.toml")[0]


def test_malformed_toml_reports_line_and_column(tmp_path):
    path = write(tmp_path, "[[link]]\nname = \n")
    with pytest.raises(ProfileError, match=r"TOML syntax.*line 2, column 8"):
        load_link(path)
    assert "line 2" in validate_file(path)[0]


@pytest.mark.parametrize(("text", "field", "detail"), [
    (SYSTEM.replace('nic_bandwidth = "400Gbps"\n', ""), "systems[0] (my-box).nic_bandwidth", "missing"),
    (SYSTEM.replace('"400Gbps"', '"-5GB/s"'), "systems[0] (my-box).nic_bandwidth", "> 0"),
    (SYSTEM.replace('"400Gbps"', '"400Xb/s"'), "systems[0] (my-box).nic_bandwidth", "Gbps"),
    (SYSTEM.replace('"400Gbps"', "400"), "systems[0] (my-box).nic_bandwidth", "a string"),
    (SYSTEM.replace("gpus_per_node", "gpu_per_node"), "systems[0] (my-box).gpu_per_node", "one of the fields"),
    (SYSTEM.replace("p2p = true", 'p2p = "yes"'), "systems[0] (my-box).p2p", "true or false"),
    (SYSTEM.replace('"intel"', '"via"'), "systems[0] (my-box).cpu_vendor", "'intel'"),
    (SYSTEM.replace('"h100-sxm"', '"h100-sxn"'), "systems[0] (my-box).gpu", "h100-sxm"),
    (SYSTEM.replace("nvswitch_gen = 3", "nvswitch_gen = 2"), "in_network_reduction", "nvswitch_gen >= 3"),
    (SYSTEM + 'pcie_path = "NVL"\n', "systems[0] (my-box).pcie_path", "'PIX'"),
    (SYSTEM + "pcie_switch_gpus = 9\n", "systems[0] (my-box).pcie_switch_gpus", "gpus_per_node = 8"),
    (SYSTEM + "pcie_switch_gpus = 0\n", "systems[0] (my-box).pcie_switch_gpus", "from 1 to"),
    (SYSTEM.replace('"ib-ndr"', '"roce-400"').replace('"nvls"', '"sharp"'), "in_network_reduction", "sharp = true"),
    (LINK.replace("0.9", "1.5"), "links[0] (my-link).efficiency", "from 0.001 to 1"),
    (LINK.replace('"2us"', '"2 parsecs"'), "links[0] (my-link).latency", "us"),
    (LINK.replace('"roce"', '"carrier-pigeon"'), "links[0] (my-link).category", "'nvlink'"),
    (LINK + '[[link.regimes]]\nlatency = "1us"\nbandwidth = "1GB/s"\n[[link.regimes]]\nlatency = "1us"\n'
     'bandwidth = "2GB/s"\n', "links[0] (my-link).regimes[0].max_size", "required"),
    (LINK + "[[gpus]]\nname = 'x'\n", "[gpus]", "[[gpu]]"),
    (LINK + LINK, "links[1] (my-link).name", "unique"),
])
def test_each_mistake_names_the_field(tmp_path, text, field, detail):
    path = write(tmp_path, text)
    problems = validate_file(path)
    assert any(field in problem and detail in problem for problem in problems), problems
    with pytest.raises(ProfileError) as error:
        load_file(path)
    assert str(path) in str(error.value)


def test_validate_reports_every_problem(tmp_path):
    text = SYSTEM.replace('"400Gbps"', '"-5GB/s"').replace('"intel"', '"via"').replace("p2p = true", "p2pp = true")
    problems = validate_file(write(tmp_path, text))
    assert len(problems) == 4  # bad bandwidth, bad cpu_vendor, unknown p2pp, missing p2p
    assert problems[0].startswith("systems[0] (my-box).p2pp: got True; allowed: did you mean 'p2p'?")


def test_unknown_reference_is_reported_beside_field_problems(tmp_path):
    text = SYSTEM.replace('"h100-sxm"', '"h100-sxn"').replace("p2p = true", "")
    problems = validate_file(write(tmp_path, text))
    assert [problem.split(":")[0] for problem in problems] == ["systems[0] (my-box).p2p", "systems[0] (my-box).gpu"]


def test_file_with_several_systems_needs_a_single_one(tmp_path):
    path = write(tmp_path, SYSTEM + SYSTEM.replace('"my-box"', '"my-box-2"'))
    assert validate_file(path) == []
    with pytest.raises(ProfileError, match="exactly one"):
        load_system(path)


def test_bad_gpu_fields(tmp_path):
    source = (DATA / "my_cluster.toml").read_text(encoding="utf-8")
    gpu = """
[[gpu]]
name = "my-gpu"
description = "d"
source = "s"
vendor = "nvidia"
arch = "hopper"
compute_capability = 90
memory = "80GB"
hbm_bandwidth = "3TB/s"
peak_tflops = { bf16 = 900, fp7 = 1 }
scaleup_link = "none"
scaleup_bandwidth = "10GB/s"
pcie_gen = 5
default_mfu = 0.4
mfu_source = "guess"
"""
    problems = validate_file(write(tmp_path, source + gpu))
    assert any("gpus[0] (my-gpu).peak_tflops.fp7" in problem for problem in problems)
    fixed = gpu.replace(", fp7 = 1", "")
    problems = validate_file(write(tmp_path, fixed))
    assert problems == ['gpus[0] (my-gpu).scaleup_bandwidth: got 10000000000.0; allowed: omitted or "0GB/s" '
                        'when scaleup_link = "none"']
    gpu_ok = load_gpu(write(tmp_path, fixed.replace('scaleup_bandwidth = "10GB/s"\n', "")))
    assert gpu_ok.scaleup_link is None and gpu_ok.hbm_bandwidth_Bps == pytest.approx(3e12)


def test_copied_example_file_still_loads(tmp_path):
    path = tmp_path / "copy.toml"
    shutil.copy(DATA / "my_cluster.toml", path)
    assert load_system(path).gpu.name == "a100-pcie-80gb"


def test_calibration_metadata_is_kept_and_checked_lightly(tmp_path):
    link = ('[[link]]\nname = "fit"\ndescription = "d"\nsource = "s"\ncategory = "calibrated"\n'
            'bandwidth = "20GB/s"\nefficiency = 1.0\nlatency = "3us"\n')
    good, bad = tmp_path / "good.toml", tmp_path / "bad.toml"
    good.write_text(link + '\n[calibration]\ncollective = "all-reduce"\nranks = 8\nextra = "kept"\n'
                    '\n[[calibration.regime]]\nlatency_s = 1e-5\nseconds_per_byte = 1e-10\n')
    bad.write_text(link + '\n[calibration]\nranks = 1\n\n[[calibration.regime]]\nlatency_s = "fast"\n')
    assert validate_file(good) == []
    assert load_file(good).metadata["calibration"]["extra"] == "kept"
    assert load_link(good).category == "calibrated"
    problems = validate_file(bad)
    assert any("[calibration].ranks" in p for p in problems)
    assert any("[calibration].regime[0].latency_s" in p for p in problems)


@pytest.mark.parametrize("bandwidth", ['"-100Gbps"', '"0GB/s"'])
def test_a_negative_bandwidth_names_the_same_bound_as_a_zero_one(tmp_path, bandwidth):
    """'-100Gbps' said 'a value >= 0', and '0GB/s' was then refused as 'a value > 0' (review,
    2026-11-29)."""
    text = LINK.replace('bandwidth = "100Gbps"', f"bandwidth = {bandwidth}")
    with pytest.raises(ProfileError, match=r"bandwidth: got .*; allowed: a value > 0: "):
        load_link(write(tmp_path, text))


def test_a_byte_order_mark_is_not_read_as_toml(tmp_path):
    """A profile saved with a UTF-8 BOM (Windows editors) read 'Invalid statement (at line 1,
    column 1)' (review, 2026-11-29); the mark is skipped, as for models and tuning tables."""
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + LINK.encode("utf-8"))
    assert load_link(path).name == "my-link"
