"""``dpcost hardware list|show|validate`` through typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cli import app
from costmodel.commands.textfmt import table as format_table

DATA = Path(__file__).parents[1] / "data" / "hardware"

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, ["hardware", *args])


def test_list_all_kinds():
    result = run("list")
    assert result.exit_code == 0
    assert "h100-sxm" in result.output and "ib-ndr" in result.output and "dgx-h100" in result.output


def test_list_one_kind_as_json():
    result = run("list", "--kind", "link", "--json")
    assert result.exit_code == 0
    links = json.loads(result.output)
    assert {link["kind"] for link in links} == {"link"}
    ndr = next(link for link in links if link["name"] == "ib-ndr")
    assert ndr["bandwidth_Bps"] == 50e9 and ndr["sharp"] is True


def test_list_rejects_unknown_kind():
    result = run("list", "--kind", "tpu")
    assert result.exit_code == 2


def test_show_bundled_system():
    result = run("show", "dgx-h100")
    assert result.exit_code == 0
    assert "h100-sxm" in result.output and "450 GB/s" in result.output and "nvls" in result.output


def test_show_prints_an_instances_other_names_and_a_dash_for_none():
    """instance_names printed as Python's list repr ("['ND96asr_v4']", "[]") on every system."""
    lines = {line.split()[0]: line for line in run("show", "azure-nd-a100-v4").output.splitlines() if line.strip()}
    assert lines["instance_names"].split(None, 1)[1] == "ND96asr_v4"
    lines = {line.split()[0]: line for line in run("show", "dgx-a100").output.splitlines() if line.strip()}
    assert lines["instance_names"].split(None, 1)[1] == "-"
    assert json.loads(run("show", "azure-nd-a100-v4", "--json").output)["instance_names"] == ["ND96asr_v4"]


def test_show_says_what_an_unset_field_stands_for_not_a_rate_of_zero():
    """`hardware show h100-sxm` printed "host_link_bandwidth_Bps 0 GB/s" (0: the PCIe link of
    pcie_gen), a system "host_memory_bandwidth_Bps 0 GB/s" (0: not given) and a GPU without NVLink
    "scaleup_link None" (an audit of the hardware data, 2026-11-30). The JSON keeps the values."""
    def lines(name):
        return {line.split()[0]: line.split(None, 1)[1] for line in run("show", name).output.splitlines() if line.strip()}

    assert lines("h100-sxm")["host_link_bandwidth_Bps"] == "- (not NVLink-C2C: the PCIe link of pcie_gen)"
    assert lines("gh200")["host_link_bandwidth_Bps"] == "450 GB/s"
    assert lines("rtx-4090")["scaleup_link"] == "-"
    pcie_box = lines("rtx4090-8x-pcie")
    assert pcie_box["host_memory_bandwidth_Bps"].startswith("- (not given") and \
        pcie_box["scaleup_domain_gpus"] == "- (one node: domain_gpus)" and pcie_box["domain_gpus"] == "8"
    assert lines("gb200-nvl72-tray")["scaleup_domain_gpus"] == "72"
    data = json.loads(run("show", "h100-sxm", "--json").output)
    assert data["host_link_bandwidth_Bps"] == 0.0 and data["scaleup_link"]["name"] == "nvlink4"


def test_show_json_nests_resolved_profiles():
    result = run("show", "dgx-a100", "--json")
    data = json.loads(result.output)
    assert data["gpu"]["memory_bytes"] == 81117 * 2**20 and data["nic_link"]["name"] == "ib-hdr"


def test_show_user_file():
    result = run("show", str(DATA / "my_cluster.toml"))
    assert result.exit_code == 0 and "lab-4x-a100-pcie" in result.output


def test_show_unknown_name_is_one_line_exit_2():
    result = run("show", "dgx-h1000")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: profile: got 'dgx-h1000'") and "dgx-h100" in lines[0]


def test_validate_ok():
    result = run("validate", str(DATA / "my_cluster.toml"))
    assert result.exit_code == 0 and result.output.strip() == "ok"


def test_validate_lists_every_problem_and_exits_2(tmp_path):
    text = (DATA / "my_cluster.toml").read_text(encoding="utf-8")
    text = text.replace('nic_bandwidth = "100Gbps"', 'nic_bandwidth = "-5GB/s"').replace('"amd"', '"via"')
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    result = run("validate", str(path))
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("error: systems[0] (lab-4x-a100-pcie).nic_bandwidth: got '-5GB/s'; allowed:")
    assert lines[1].startswith("error: systems[0] (lab-4x-a100-pcie).cpu_vendor: got 'via'")
    as_json = json.loads(run("validate", str(path), "--json").stdout)
    assert as_json["valid"] is False and len(as_json["problems"]) == 2


def test_validate_malformed_toml(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("[[system]\n", encoding="utf-8")
    result = run("validate", str(path))
    assert result.exit_code == 2 and "line 1" in result.output


def test_format_table_aligns_columns():
    table = format_table([{"a": "x", "bb": "yyy"}, {"a": "long", "bb": "z"}])
    lines = table.splitlines()
    assert lines[0] == "a     bb" and lines[2] == "x     yyy" and lines[3] == "long  z"


def test_validate_says_when_no_cluster_option_can_take_the_file(tmp_path):
    """A file of two [[system]] tables validated "ok", and --cluster then refused it."""
    from pathlib import Path

    from typer.testing import CliRunner

    from cli import app

    source = (Path(__file__).resolve().parents[1] / "data" / "hardware" / "my_cluster.toml").read_text(encoding="utf-8")
    system = source[source.index("[[system]]"):]
    system = system[:system.find("\n[[", 1)] if "\n[[" in system[1:] else system
    path = tmp_path / "two.toml"
    path.write_text(source + "\n" + system.replace('name = "lab-4x-a100-pcie"', 'name = "lab-4x-a100-pcie-b"'),
                    encoding="utf-8")
    result = CliRunner().invoke(app, ["hardware", "validate", str(path)])
    assert result.exit_code == 0 and result.stdout.splitlines()[0] == "ok"
    assert "2 [[system]] tables (lab-4x-a100-pcie, lab-4x-a100-pcie-b): --cluster takes a file with exactly one" \
        in result.stdout


def test_validate_notes_a_bandwidth_eight_times_its_links_line_rate(tmp_path):
    """A system typed with nic_bandwidth "400GBps" (for 400Gbps) on ib-ndr validated "ok" and gave
    a 701 GB/s ring across two nodes. It stays valid (bundled aws-p5 folds four EFA devices into one
    NIC: 4x), and validate now says what it reads like."""
    import hardware

    text = hardware.standalone_toml(hardware.load_system("dgx-h100")).replace('name = "dgx-h100"', 'name = "typo"')
    assert 'nic_bandwidth = "50GB/s"' in text
    path = tmp_path / "typo.toml"
    path.write_text(text.replace('nic_bandwidth = "50GB/s"', 'nic_bandwidth = "400GBps"'), encoding="utf-8")
    result = run("validate", str(path))
    assert result.exit_code == 0 and result.stdout.splitlines() == [
        "ok", "note: typo's nic_bandwidth 400 GB/s is 8x the line rate of its link ib-ndr (50 GB/s): bits typed as "
              "bytes (GBps for Gbps), or the other way round?"]
    path.write_text(text, encoding="utf-8")
    assert run("validate", str(path)).stdout.splitlines() == ["ok"]
    for name in ("aws-p5", "dgx-spark", "l40s-tcp-1x"):  # the bundled systems whose rates differ from their links'
        path.write_text(hardware.standalone_toml(hardware.load_system(name)), encoding="utf-8")
        assert run("validate", str(path)).stdout.splitlines() == ["ok"], name


def test_the_answers_that_use_a_suspicious_rate_say_so(tmp_path):
    """The API review (2026-11-29): validate said it, collective, iteration and plan answered 8x
    too fast without a word. A bandwidth the answer does not use (the NICs on one node) is not
    noted; no bundled system is."""
    import hardware
    from costmodel.cluster.api import predict
    from costmodel.planner.recommend import plan
    from costmodel.training.oncluster import iteration
    from hardware.notes import rate_mismatch_notes

    text = hardware.standalone_toml(hardware.load_system("dgx-h100")).replace('name = "dgx-h100"', 'name = "typo"')
    path = tmp_path / "typo.toml"
    path.write_text(text.replace('nic_bandwidth = "50GB/s"', 'nic_bandwidth = "400GBps"'), encoding="utf-8")
    note = "typo's nic_bandwidth 400 GB/s is 8x the line rate of its link ib-ndr (50 GB/s)"
    assert note in predict("all-reduce", "1GiB", cluster=str(path), nodes=2).note
    assert note not in (predict("all-reduce", "1GiB", cluster=str(path)).note or "")  # one node: no NIC
    cli = CliRunner().invoke(app, ["iteration", "--model", "gpt2", "--cluster", str(path), "--nodes", "2",
                                   "--micro-batch", "8"])
    assert cli.exit_code == 0 and f"note: {note}" in cli.stdout
    found = plan("gpt2", str(path), nodes=2, global_batch=64)
    assert note in found.findings["rate_mismatch"] and f"Note: {note}" in found.reason
    assert "round?." not in found.reason
    # and it is worth saying: the typo answers an all-to-all 8x faster than the system it was copied
    # from. Its all-reduce stays bounded by each GPU's NVLink and PCIe path, as NCCL's search bounds
    # it (until 2026-11-30 the ring's channels took the NICs' aggregate instead, and gpt2's step too)
    assert predict("all-to-all", "1GiB", cluster=str(path), nodes=2).time_s < \
        predict("all-to-all", "1GiB", cluster="dgx-h100", nodes=2).time_s / 4
    assert iteration("gpt2", str(path), nodes=2, micro_batch=8).comm_s <= \
        iteration("gpt2", "dgx-h100", nodes=2, micro_batch=8).comm_s
    assert not any(rate_mismatch_notes(system) for system in hardware.list_profiles("system"))
