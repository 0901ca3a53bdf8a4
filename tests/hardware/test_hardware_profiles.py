"""Bundled hardware profiles: every one loads, values match the sourced CSVs, rules hold."""

from __future__ import annotations

import math
import tomllib

import pytest

import hardware
from dpbase.errors import ProfileError
from hardware import Gpu, Link, System, list_profiles, load_gpu, load_link, load_system
from hardware.describe import kind_of, to_dict, to_toml
from hardware.profiles import DTYPES, NVLS_MIN_NVSWITCH_GEN
from hardware.resolve import build_catalog

GB = 1e9

REQUIRED_GPUS = [
    "v100-sxm2", "a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-80gb", "h100-sxm", "h100-pcie",
    "h200-sxm", "b200", "gb200", "l40s", "l4", "a10", "t4", "rtx-4090", "rtx-3090", "mi250x",
    "mi300x", "mi325x", "rtx-2080ti", "mi355x", "gb10", "gb300",
]
REQUIRED_LINKS = [
    "nvlink1", "nvlink2", "nvlink3", "nvlink4", "nvlink5", "pcie3", "pcie4", "pcie5", "ib-edr", "ib-hdr",
    "ib-ndr", "ib-xdr", "roce-100", "roce-200", "roce-400", "eth-1g", "eth-10g", "eth-25g",
    "eth-100g", "eth-200g", "eth-400g", "tcp-sockets", "efa", "xgmi",
]
REQUIRED_SYSTEMS = [
    "dgx-1", "dgx-a100", "dgx-h100", "dgx-h200", "dgx-b200", "rtx4090-8x-pcie", "rtx4090-8x-pcie-p2p", "l40s-4x-pcie",
    "aws-p4d", "aws-p5", "azure-nd-h100-v5", "gcp-a3-mega", "mi300x-8x",
    "h100-pcie-2x-nvlink-bridge", "rtx2080ti-2x-pcie", "v100-abci-4x", "a100-abci-8x",
    "l40s-tcp-1x", "gb300-nvl72-tray", "mi325x-8x", "mi355x-8x", "juwels-booster", "aws-p4de", "aws-p3dn.24xlarge",
    "azure-nd-a100-v4", "azure-ndm-a100-v4", "gcp-a2-highgpu-8g", "gcp-a2-ultragpu-8g", "gcp-a2-megagpu-16g",
]


def test_public_api_all_is_sorted_and_complete():
    assert hardware.__all__ == sorted(hardware.__all__)
    public = {name for name in dir(hardware) if not name.startswith("_")}
    modules = {"describe", "fields", "given", "loader", "metadata", "notes", "profiles", "resolve", "schema"}
    assert public - modules == set(hardware.__all__)


@pytest.mark.parametrize(("kind", "names"), [("gpu", REQUIRED_GPUS), ("link", REQUIRED_LINKS),
                                             ("system", REQUIRED_SYSTEMS)])
def test_required_profiles_are_bundled(kind, names):
    bundled = {profile.name for profile in list_profiles(kind)}
    assert set(names) <= bundled


def test_list_profiles_kinds_partition_all():
    every = list_profiles()
    assert len(every) == sum(len(list_profiles(kind)) for kind in ("gpu", "link", "system"))
    assert all(kind_of(profile) in ("gpu", "link", "system") for profile in every)


def test_names_are_unique_across_kinds():
    names = [profile.name for profile in list_profiles()]
    assert len(names) == len(set(names))


def test_a_profile_loaded_alone_is_the_catalogs():
    """load_system & co. build one profile from its own rows (loader._bundled_profile)."""
    bundled = hardware.loader.bundled_catalog()
    for table in ("gpu", "link", "system"):
        assert bundled.kind(table)
        for name, profile in bundled.kind(table).items():
            assert hardware.loader._bundled_profile(table, name) == profile, name
    assert hardware.load_system("dgx-h100") is hardware.load_system("dgx-h100")  # built once
    assert hardware.load_profile("dgx-h100") is hardware.load_system("dgx-h100")  # one way to a bundled profile
    assert hardware.load_profile("h100-sxm", "gpu") is hardware.load_gpu("h100-sxm")


def test_every_bundled_profile_round_trips_through_toml():
    bundled = hardware.loader.bundled_catalog()
    for profile in list_profiles():
        catalog, problems = build_catalog(tomllib.loads(to_toml(profile)), bundled)
        assert problems == []
        assert catalog.kind(kind_of(profile))[profile.name] == profile


# Memory: the device total CUDA/ROCm give the process, as PyTorch reports it (MiB), from public
# logs (hardware/data/gpus.toml names each): a vendor's "80GB" is 80 GiB of HBM, ~79.2 GiB usable.
@pytest.mark.parametrize(("name", "memory_mib", "hbm_gbps", "bf16_tflops"), [
    ("h100-sxm", 81090, 3350, 989.4),      # 'total capacity of 79.19 GiB'
    ("a100-sxm4-40gb", 40514, 1555, 312),
    ("a100-pcie-80gb", 81154, 1935, 312),
    ("h200-sxm", 143156, 4800, 989.4),     # 'total capacity of 139.80 GiB'
    ("b200", 182631, 8000, 2250),          # 'total capacity of 178.35 GiB'
    ("mi300x", 196592, 5300, 1307.4),      # rocm-smi 206,141,652,992 B
    ("l40s", 45589, 864, 362),             # 48 GB GDDR6 with ECC on
    ("rtx-4090", 24563, 1008, 165.2),
    ("rtx-a6000", 46068, 768, 154.8),      # nvidia-smi with ECC on (the smaller total)
    ("a40", 46068, 696, 149.7),            # nvidia-smi with ECC on (a datacenter card's default)
    ("rtx-6000-ada", 45496, 960, 364.2),   # 'total capacity of 44.43 GiB' (ECC on)
    ("rtx-3080", 10018, 760, 59.5),        # nvidia-smi 10018 MiB (older drivers; 10240 on recent ones)
])
def test_gpu_values_match_sources(name, memory_mib, hbm_gbps, bf16_tflops):
    gpu = load_gpu(name)
    assert gpu.memory_bytes == memory_mib * 2**20
    assert gpu.hbm_bandwidth_Bps == pytest.approx(hbm_gbps * GB)
    assert gpu.peak_flops["bf16"] == pytest.approx(bf16_tflops * 1e12)


@pytest.mark.parametrize(("name", "memory_mib", "fp16_tflops"), [
    ("quadro-rtx-8000", 48601, 130.5),  # Lambda's table: 48,601 MiB; datasheet 130.5 tensor TFLOPS
    ("titan-rtx", 24219, 130),          # Lambda's table: 24,219 MiB
])
def test_turing_professional_cards_have_full_rate_fp16_and_no_bf16(name, memory_mib, fp16_tflops):
    gpu = load_gpu(name)
    assert gpu.memory_bytes == memory_mib * 2**20 and "bf16" not in gpu.peak_flops and "tf32" not in gpu.peak_flops
    assert gpu.peak_flops["fp16"] == pytest.approx(fp16_tflops * 1e12)
    assert gpu.peak_flops["fp16"] > 2 * load_gpu("rtx-2080ti").peak_flops["fp16"]  # GeForce: half rate


def test_geforce_ga102_cards_share_one_tensor_rate_per_core_and_clock():
    """The RTX 3080's rates, re-derived from the GA102 whitepaper's counts: FP32 = 8704 lanes x 2 x
    1.71 GHz; FP16/BF16 tensor with FP32 accumulate = 272 tensor cores x 128 FLOP/clk x 1.71 GHz,
    the per-core rate the RTX 3090's 71 TFLOPS gives at its 328 cores and 1.695 GHz."""
    rtx3080, rtx3090 = load_gpu("rtx-3080"), load_gpu("rtx-3090")
    assert rtx3080.peak_flops["fp32"] == pytest.approx(8704 * 2 * 1.71e9, rel=0.002)
    assert rtx3080.peak_flops["bf16"] == pytest.approx(272 * 128 * 1.71e9, rel=0.002)
    assert rtx3080.peak_flops["bf16"] / (272 * 1.71e9) == pytest.approx(rtx3090.peak_flops["bf16"] / (328 * 1.695e9), rel=0.01)
    assert rtx3080.scaleup_link is None and rtx3080.peak_flops["tf32"] == rtx3080.peak_flops["fp32"]


def test_aws_p3_is_a_dgx1_board_on_25_gbps_tcp():
    """p3.16xlarge (AWS's P3 launch post): DGX-1's NVLink2 hybrid cube-mesh of 16 GB V100s, one
    25 Gbps ENA NIC, kernel TCP: across instances hidden communication is not free."""
    from costmodel.training import transport

    p3, dgx1 = load_system("aws-p3.16xlarge"), load_system("dgx-1")
    assert (p3.intra_fabric, p3.intra_link, p3.intra_bandwidth_Bps) == (dgx1.intra_fabric, dgx1.intra_link,
                                                                          dgx1.intra_bandwidth_Bps)
    assert p3.gpu.name == "v100-sxm2-16gb" and p3.nics_per_node == 1 and p3.nic_bandwidth_Bps == 25e9 / 8
    assert transport.step_transport(p3, 2) == transport.TCP and transport.step_transport(dgx1, 2) == transport.RDMA


def test_an_hgx_a100_four_gpu_node_gives_each_pair_four_nvlinks():
    """JUWELS Booster's HGX A100 4-GPU board: 12 NVLink3 links per GPU, 4 to each of 3 peers (100
    GB/s per direction per pair), where ABCI's V100 4-GPU mesh has 2 of its 6 per pair. NCCL's
    search sees the whole 12 for the node and 4 links' worth on the best GPU-to-GPU path."""
    from costmodel.nccl import load_tables
    from costmodel.nccl.search import intra_gpu_bandwidth

    tables = load_tables()
    per_link = tables.section("link_bandwidth_GBps")["nvlink_per_link"]
    juwels, abci = load_system("juwels-booster"), load_system("v100-abci-4x")
    assert (juwels.gpus_per_node, juwels.intra_links, abci.intra_links) == (4, 12, 6)
    _, total, pair = intra_gpu_bandwidth(juwels, tables)
    assert pair * 3 == pytest.approx(total) and pair == pytest.approx(4 * per_link["sm80"])
    _, abci_total, abci_pair = intra_gpu_bandwidth(abci, tables)
    assert abci_pair * 3 == pytest.approx(abci_total) and abci_pair == pytest.approx(2 * per_link["sm70"])
    assert juwels.nics_per_node == 4 and juwels.nic_bandwidth_Bps == 200e9 / 8 and juwels.cpu_vendor == "amd"


@pytest.mark.parametrize(("name", "gpu", "nics", "gbps", "kind"), [
    ("aws-p4de", "a100-sxm4-80gb", 4, 100, "rdma"),  # the p4d with the 80 GB A100
    ("aws-p3dn.24xlarge", "v100-sxm2", 1, 100, "tcp"),  # ENA, no GPUDirect RDMA
    ("azure-nd-a100-v4", "a100-sxm4-40gb", 8, 200, "rdma"), ("azure-ndm-a100-v4", "a100-sxm4-80gb", 8, 200, "rdma"),
    ("gcp-a2-highgpu-8g", "a100-sxm4-40gb", 1, 100, "tcp"), ("gcp-a2-ultragpu-8g", "a100-sxm4-80gb", 1, 100, "tcp"),
    ("gcp-a2-megagpu-16g", "a100-sxm4-40gb", 1, 100, "tcp"),
])
def test_cloud_a100_and_v100_instances_carry_their_gpus_and_network(name, gpu, nics, gbps, kind):
    """Each instance as its provider documents it: the GPU variant, the NICs, and whether NCCL
    crosses nodes over RDMA (EFA, InfiniBand) or kernel TCP (A2's VPC network, p3dn's ENA)."""
    from costmodel.training import transport

    system = load_system(name)
    assert (system.gpu.name, system.nics_per_node, system.nic_bandwidth_Bps) == (gpu, nics, gbps * 1e9 / 8)
    assert transport.step_transport(system, 2) == (transport.TCP if kind == "tcp" else transport.RDMA)
    assert system.gpus_per_node == (16 if "16g" in name else 8)


def test_instance_names_round_trip_and_a_bad_list_is_refused_naming_the_field():
    """Azure's VM sizes are the instance names tables write ("ND96asr_v4"); a profile lists them,
    they survive a TOML round trip, and anything but a list of names is refused."""
    from hardware.fields import text_list

    nd = load_system("azure-nd-a100-v4")
    assert nd.instance_names == ("ND96asr_v4",) and load_system("dgx-a100").instance_names == ()
    assert tomllib.loads(to_toml(nd))["system"][0]["instance_names"] == ["ND96asr_v4"]
    assert to_dict(nd)["instance_names"] == ["ND96asr_v4"]
    for bad in ("ND96asr_v4", [""], [3]):
        with pytest.raises(ProfileError, match=r"^systems\[0\]\.instance_names: got "):
            text_list(bad, "systems[0].instance_names")


@pytest.mark.parametrize(("name", "cores", "boost_ghz"), [
    ("gtx-1080ti", 3584, 1.582), ("titan-xp", 3840, 1.582), ("p40", 3840, 1.531), ("titan-v", 5120, 1.455),
])
def test_older_cards_fp32_is_their_cores_at_boost_and_gp102_has_no_fp16(name, cores, boost_ghz):
    """The 2017-2019 cards of published multi-GPU tables: FP32 peak = CUDA cores x 2 x boost clock
    (deviceQuery and the reviews' tables); GP102 runs FP16 arithmetic at 1/64, which frameworks do
    not use (fp16 storage, FP32 math), so it has no fp16 entry and an fp16 run is refused; the
    TITAN V keeps NVIDIA's 110 TFLOP/s tensor figure. None has a supported NVLink."""
    gpu = load_gpu(name)
    assert gpu.peak_flops["fp32"] == pytest.approx(cores * 2 * boost_ghz * 1e9, rel=0.002)
    assert ("fp16" in gpu.peak_flops) == (gpu.arch == "volta") and gpu.scaleup_link is None and gpu.pcie_gen == 3
    if gpu.arch == "volta":
        assert gpu.peak_flops["fp16"] == 110e12 and gpu.compute_capability == 70
    else:
        assert gpu.compute_capability == 61 and gpu.arch == "pascal"


@pytest.mark.parametrize(("gpu", "twin", "system", "links"), [("a800-sxm4-80gb", "a100-sxm4-80gb", "hgx-a800-8x", 8),
                                                           ("h800-sxm", "h100-sxm", "hgx-h800-8x", 8)])
def test_the_china_market_parts_are_their_twins_with_eight_nvlinks(gpu, twin, system, links):
    """A800 and H800: the A100's and H100's compute and memory with NVLink cut to 8 links (nvidia-smi
    topo NV8; nvidia-smi -q), 200 GB/s a direction; their nodes' NCCL path carries 8 links' worth."""
    part, full = load_gpu(gpu), load_gpu(twin)
    assert (part.peak_flops, part.hbm_bandwidth_Bps, part.memory_bytes) == (full.peak_flops, full.hbm_bandwidth_Bps,
                                                                            full.memory_bytes)
    assert part.scaleup_bandwidth_Bps == 200e9 and full.scaleup_bandwidth_Bps > part.scaleup_bandwidth_Bps
    node = load_system(system)
    assert node.gpu.name == gpu and node.intra_links == links and node.intra_bandwidth_Bps == 200e9


def test_unsupported_dtypes_are_absent():
    assert "bf16" not in load_gpu("v100-sxm2").peak_flops
    assert "fp8" not in load_gpu("a100-sxm4-80gb").peak_flops
    assert load_gpu("t4").peak_flops_for("tf32") is None
    assert load_gpu("h100-sxm").peak_flops_for("fp8") == pytest.approx(1978.9e12)


def test_gpu_fields_are_sane():
    for gpu in list_profiles("gpu"):
        assert isinstance(gpu, Gpu)
        assert set(gpu.peak_flops) <= set(DTYPES) and "fp32" in gpu.peak_flops
        assert 0.2 <= gpu.default_mfu <= 0.5
        assert (gpu.compute_capability == 0) == (gpu.vendor == "amd")
        assert (gpu.scaleup_link is None) == (gpu.scaleup_bandwidth_Bps == 0)


def test_a_gpus_nvlink_is_counted_link_by_link():
    """``scaleup_link`` is one link: NCCL's model multiplies its per-link rate by the count
    (scale-up bandwidth over one link's). A whole bridge given as the link counted one link:
    RTX 3090's 4-link GA102 bridge ran at 12 GB/s in NCCL's model instead of 48."""
    from costmodel.nccl import load_tables
    from costmodel.nccl.search import _sm_key

    per_link = load_tables().section("link_bandwidth_GBps")["nvlink_per_link"]
    for gpu in list_profiles("gpu"):
        if gpu.scaleup_link is None or gpu.scaleup_link.category != "nvlink":
            continue
        links = round(gpu.scaleup_bandwidth_Bps / gpu.scaleup_link.bandwidth_Bps)
        nccl_GBps = links * per_link[_sm_key(gpu.compute_capability, tuple(per_link))]
        assert 0.6 <= nccl_GBps * GB / gpu.scaleup_bandwidth_Bps <= 1.0, gpu.name


@pytest.mark.parametrize(("name", "achievable_gbps"), [
    ("nvlink4-x18", 370.8),  # NCCL 18 x 20.6
    ("nvlink3-x12", 240.0),  # NCCL 12 x 20
    ("nvlink5-x18", 721.8),  # NCCL 18 x 40.1
    ("ib-ndr", 48.5),        # CX-7 48.5 of 50
    ("ib-hdr", 23.5),        # CX-6 23.5 of 25
])
def test_link_achievable_bandwidth_matches_nccl_figures(name, achievable_gbps):
    assert load_link(name).achievable_bandwidth_Bps == pytest.approx(achievable_gbps * GB, rel=1e-3)


def test_link_fields_are_sane():
    for link in list_profiles("link"):
        assert isinstance(link, Link)
        assert link.bandwidth_Bps > 0 and 0 < link.efficiency <= 1
        assert 0 < link.latency_s < 1e-3
        assert link.sharp == (link.category == "infiniband" and link.name != "ib-edr")
    assert load_link("ib-ndr").bandwidth_Bps == pytest.approx(50 * GB)
    assert load_link("eth-1g").latency_s > load_link("ib-edr").latency_s


def test_systems_resolve_objects():
    system = load_system("dgx-h100")
    assert isinstance(system.gpu, Gpu) and system.gpu.name == "h100-sxm"
    assert isinstance(system.intra_link, Link) and system.intra_link.category == "nvlink"
    assert system.nic_link.name == "ib-ndr"
    assert system.intra_bandwidth_Bps == pytest.approx(450 * GB)
    assert system.node_network_Bps == pytest.approx(400 * GB)
    assert system.nic_bandwidth_per_gpu_Bps == pytest.approx(50 * GB)
    assert system.achievable_nic_bandwidth_per_gpu_Bps == pytest.approx(48.5 * GB)


@pytest.mark.parametrize(("name", "intra_gbps", "nics", "nic_gbps"), [
    ("dgx-a100", 300, 8, 25), ("dgx-1", 150, 4, 12.5), ("aws-p5", 450, 8, 50),
    ("aws-p4d", 300, 4, 12.5), ("gcp-a3-mega", 450, 8, 25), ("mi300x-8x", 448, 8, 50),
])
def test_system_values_match_sources(name, intra_gbps, nics, nic_gbps):
    system = load_system(name)
    assert system.intra_bandwidth_Bps == pytest.approx(intra_gbps * GB)
    assert system.nics_per_node == nics
    assert system.nic_bandwidth_Bps == pytest.approx(nic_gbps * GB)


def test_in_network_reduction_rule():
    for system in list_profiles("system"):
        assert isinstance(system, System)
        nvls_possible = system.nvswitch_gen >= NVLS_MIN_NVSWITCH_GEN and system.gpus_per_node > 1
        expected = "nvls" if nvls_possible else ("sharp" if system.nic_link.sharp else "")
        assert system.in_network_reduction == expected, system.name


def test_consumer_cards_without_p2p():
    assert load_system("rtx4090-8x-pcie").p2p is False
    assert load_system("rtx2080ti-2x-pcie").p2p is False
    assert load_system("dgx-h100").p2p is True
    assert load_system("rtx4090-8x-pcie-p2p").p2p is True


def test_pcie_layouts_of_the_pcie_boxes():
    """As their sources' nvidia-smi topo -m print them."""
    assert (load_system("rtx2080ti-2x-pcie").pcie_path, load_system("rtx2080ti-2x-pcie").pcie_switch_gpus) == ("PIX", 2)
    assert load_system("l40s-4x-pcie").pcie_path == "NODE"
    assert load_system("rtx4090-8x-pcie").pcie_path == load_system("rtx4090-8x-pcie-p2p").pcie_path == "SYS"


def test_nvl72_tray_has_a_72_gpu_domain():
    tray = load_system("gb300-nvl72-tray")
    assert tray.gpus_per_node == 4 and tray.scaleup_domain_gpus == 72
    assert load_system("dgx-h100").domain_gpus == 8 and load_system("dgx-h100").scaleup_domain_gpus == 0


def test_to_dict_has_units_in_names():
    data = to_dict(load_system("dgx-b200"))
    assert data["kind"] == "system" and data["gpu"]["name"] == "b200"
    assert data["intra_link"]["achievable_bandwidth_Bps"] == pytest.approx(721.8 * GB, rel=1e-3)
    assert math.isclose(data["node_network_Bps"], 400 * GB)


def test_docs_list_every_bundled_profile_and_the_example():
    from pathlib import Path

    root = Path(__file__).parents[2]
    docs = (root / "docs" / "hardware-profiles.md").read_text(encoding="utf-8")
    missing = [p.name for p in list_profiles() if f"| `{p.name}` |" not in docs]
    assert missing == []
    example = (root / "tests" / "data" / "hardware" / "my_cluster.toml").read_text(encoding="utf-8")
    assert example in docs


def test_the_docs_gpu_table_shows_bf16_only_where_the_profile_has_it():
    """Four rows showed a bf16 rate for GPUs without bf16 (V100, T4, RTX 2080 Ti: fp16 only)."""
    import re
    from pathlib import Path

    docs = (Path(__file__).parents[2] / "docs" / "hardware-profiles.md").read_text(encoding="utf-8")
    for gpu in (p for p in list_profiles() if isinstance(p, Gpu)):
        cell = re.search(rf"^\| `{re.escape(gpu.name)}` \|[^|]*\|[^|]*\|[^|]*\| ([^|]*) \|", docs, re.M).group(1)
        tflops = {dtype: f"{value / 1e12:.4g}" for dtype, value in gpu.peak_flops.items()}
        fallback = "fp16" if "fp16" in tflops else "fp32"
        assert cell == (tflops["bf16"] if "bf16" in tflops else f"– ({fallback} {tflops[fallback]})"), gpu.name


def test_a_profile_cannot_be_changed_in_place():
    """A bundled profile is cached: changing its peak table in place changed every later answer in
    the process (review, 2026-11-29). The table is read-only; replace() builds a changed GPU."""
    import costmodel
    from dpbase.values import replace

    gpu = hardware.load_system("dgx-h100").gpu
    before = costmodel.iteration("gpt2", "dgx-h100", micro_batch=8).total_s
    with pytest.raises(TypeError, match="read-only"):
        gpu.peak_flops["bf16"] = 1.0
    with pytest.raises(TypeError, match="read-only"):
        gpu.peak_flops.update(bf16=1.0)
    assert costmodel.iteration("gpt2", "dgx-h100", micro_batch=8).total_s == before
    slower = replace(gpu, peak_flops={**gpu.peak_flops, "bf16": gpu.peak_flops["bf16"] / 2})
    assert slower.peak_flops["bf16"] == gpu.peak_flops["bf16"] / 2 and hardware.load_system("dgx-h100").gpu == gpu


def test_a_rewritten_profile_with_its_time_restored_is_read_again(tmp_path):
    """The same length and modification time (cp -p, rsync -t) with other content: the new
    profile, not the cached one (review, 2026-11-29)."""
    import os
    from pathlib import Path

    import costmodel

    source = (Path(__file__).resolve().parents[1] / "data" / "hardware" / "my_cluster.toml").read_text()
    path = tmp_path / "cluster.toml"
    path.write_text(source)
    stat = os.stat(path)
    before = costmodel.predict("all-reduce", "1GiB", cluster=str(path), nodes=2).time_s
    line = next(line for line in source.splitlines() if line.startswith("nic_bandwidth"))
    value = line.split("=", 1)[1].strip().strip('"')
    slower = source.replace(line, f'nic_bandwidth = "{value[:-4]}Mbps"' if value.endswith("Gbps") else line)
    assert slower != source
    path.write_text(slower.ljust(len(source)) if len(slower) < len(source) else slower)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert costmodel.predict("all-reduce", "1GiB", cluster=str(path), nodes=2).time_s > before


def test_a_path_that_is_not_one_is_named():
    """validate_file(3) and load_file(None) were TypeErrors (API review, 2026-11-29)."""
    from dpbase.errors import ProfileError

    assert hardware.validate_file(3) == ["path: got 3; allowed: a TOML file's path (text or a pathlib.Path)"]
    with pytest.raises(ProfileError, match="^path: got None; allowed: a TOML file's path"):
        hardware.load_file(None)


def test_quad_gh200_nodes_are_a_mesh_of_six_links_per_pair():
    """Alps and Isambard-AI (HPE Cray EX254n) and JUPITER: four GH200s, 6 NVLink4 links between
    every pair (150 GB/s per direction), no NVSwitch, a NIC per GPU; GH200's HBM3 is 96 GB (nvidia-smi
    97,871 MiB) at 4 TB/s, its C2C 450 GB/s per direction to its own Grace."""
    from costmodel.nccl.search import derive_topology

    alps, jupiter = load_system("hpe-cray-ex254n"), load_system("jupiter-booster")
    for system in (alps, jupiter):
        assert (system.gpu.name, system.gpus_per_node, system.nvswitch_gen, system.nics_per_node) == ("gh200", 4, 0, 4)
        assert system.intra_share(2) == pytest.approx(6 / 18) and system.intra_share(4) == 1.0
        assert system.nic_bandwidth_Bps == pytest.approx(25 * GB)
    assert alps.nic_link.category == "slingshot" and alps.nic_link.gpu_direct_access and alps.in_network_reduction == ""
    assert jupiter.nic_link.name == "ib-ndr"
    gpu = alps.gpu
    assert gpu.memory_bytes == 97871 * 2**20 and gpu.hbm_bandwidth_Bps == pytest.approx(4000 * GB)
    assert gpu.host_link_bandwidth_Bps == pytest.approx(450 * GB) and gpu.peak_flops["bf16"] == pytest.approx(989.5e12)
    # NCCL: the aws-ofi-nccl plugin reports no latency off AWS; GPUDirect keeps the NIC path PXB; no NVLS
    topology = derive_topology(alps, nodes=2)
    assert (topology.latency_inter_us, topology.inter_path, topology.nvls) == (0.0, "PXB", None)


def test_perlmutter_and_polaris_are_nv4_meshes_on_slingshot():
    """Both nodes are an HGX A100 4-GPU board (4 NVLink3 links between every pair, no NVSwitch):
    Perlmutter with four Slingshot-11 NICs a node, Polaris with two, so NCCL's rings across
    Polaris nodes have two NICs to cross: half Perlmutter's ring bandwidth."""
    from costmodel.nccl.search import derive_topology

    perlmutter, polaris = load_system("perlmutter-gpu"), load_system("polaris")
    for system in (perlmutter, polaris):
        assert (system.gpu.name, system.gpus_per_node, system.nvswitch_gen) == ("a100-sxm4-40gb", 4, 0)
        assert system.intra_share(2) == pytest.approx(4 / 12) and system.nic_link.name == "slingshot-11"
    assert (perlmutter.nics_per_node, polaris.nics_per_node) == (4, 2)
    rings = [derive_topology(system, nodes=8).ring for system in (perlmutter, polaris)]
    assert rings[0].n_channels * rings[0].bw_inter_GBps == pytest.approx(2 * rings[1].n_channels * rings[1].bw_inter_GBps)



@pytest.mark.parametrize("name", ["dgx-1", "dgx-1-p100"])
def test_dgx1_host_memory_runs_at_the_datasheets_ddr4_2133(name):
    """The DGX-1 datasheet's 512 GB of DDR4-2133 on two Xeon E5-2698 v4 with four channels each
    (the CPU takes DDR4-2400, whose 153.6 GB/s the profiles once carried: an audit, 2026-11-30)."""
    assert load_system(name).host_memory_bandwidth_Bps == pytest.approx(2 * 4 * 2133e6 * 8, rel=1e-3)
