"""A published table's text read as dpcost's inputs (benchmarks/table_text.py), and any such table
predicted with the shipped constants (benchmarks/dp_scaling.py --csv)."""

from __future__ import annotations

import csv
import dataclasses
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import dp_scaling  # noqa: E402
import table_text  # noqa: E402

import hardware  # noqa: E402
from costmodel.training.workloads import model_names  # noqa: E402


@pytest.mark.parametrize(("text", "preset"), [
    ("ResNet-50 v1.5", "resnet-50"), ("ResNet50", "resnet-50"), ("InceptionV3", "inception-v3"),
    ("ResNet-101 (torchvision)", "resnet-101"), ("ResNet-18", "resnet-18"), ("VGG16", "vgg16"),
    ("SE-ResNeXt101-32x4d", "se-resnext101-32x4d"), ("ResNeXt101-32x4d", "resnext101-32x4d"),
    ("GPT-2 XL", "gpt2-xl"), ("GPT-2", "gpt2"), ("MPT-13b decoder-only LM", "mpt-13b"),
    ("MPT-1b decoder-only LM", "mpt-1b"), ("GPT3-1.3B", "gpt3-1.3b"), ("GPT3-13B", "gpt3-13b"),
    ("BERT-large pretraining (LAMB)", "bert-large"), ("Transformer-XL base, WikiText-103", "transformer-xl-base"),
    ("EfficientNet-B4 (380 px)", "efficientnet-b4"), ("VGG-19", "vgg19"), ("Wide ResNet-50-2", "wide-resnet50-2"),
    ("MobileNetV2 1.0", "mobilenet-v2"),
])
def test_a_model_text_names_the_preset_its_words_start_with(text, preset):
    assert table_text.model_for(text) == preset


def test_every_preset_reads_as_itself():
    for name in model_names():
        assert table_text.model_for(name) == name


def test_a_model_file_beside_the_table_is_found_by_its_name(tmp_path):
    (tmp_path / "bart-large.toml").write_text('[model]\nkind = "transformer"\nparams = 406_291_456\nlayers = 24\n'
                                              'hidden_size = 1024\nheads = 16\nvocab = 50265\n', encoding="utf-8")
    assert table_text.model_for("BART-large pretraining", tmp_path) == str(tmp_path / "bart-large.toml")


@pytest.mark.parametrize("text", ["ResNet-10", "DenseNet-121", "Inception-v2", ""])
def test_a_model_text_no_preset_starts_stops_with_one_line_naming_the_row(text):
    with pytest.raises(SystemExit) as stopped:
        table_text.model_for(text, row_id="X0001")
    message = str(stopped.value)
    assert message.startswith("error: X0001: model: got ") and "\n" not in message and "resnet-50" in message


@pytest.mark.parametrize(("text", "gpu"), [
    ("Tesla V100-SXM2-16GB", "v100-sxm2-16gb"), ("V100-SXM2-32GB", "v100-sxm2"), ("V100-SXM3-32GB (DGX-2H)", "v100-sxm3-32gb"),
    ("A100-SXM4-80GB", "a100-sxm4-80gb"), ("NVIDIA A100 80GB PCIe", "a100-pcie-80gb"), ("NVIDIA A10", "a10"),
    ("H100-SXM5-80GB", "h100-sxm"), ("H100 PCIe", "h100-pcie"), ("GeForce RTX 3090", "rtx-3090"),
    ("Tesla P100 (SXM2, DGX-1)", "p100-sxm2"), ("Tesla K80 (GK210 die)", "k80"), ("AMD Instinct MI300X", "mi300x"),
    ("Tesla T4", "t4"), ("NVIDIA A100-SXM4 80 GB", "a100-sxm4-80gb"), ("A100 SXM4 40 GB", "a100-sxm4-40gb"),
    ("A100-SXM4-80G", "a100-sxm4-80gb"), ("A100 SXM 80GiB", "a100-sxm4-80gb"), ("GeForce RTX 2080 Ti", "rtx-2080ti"),
    ("Tesla V100-SXM2", "v100-sxm2"), ("Tesla V100-PCIE-32GB", "v100-pcie-32gb"), ("V100 PCIe 16GB", "v100-pcie-16gb"),
    ("A100 PCIe 40GB", "a100-pcie-40gb"), ("Tesla P100-PCIE-16GB", "p100-pcie-16gb"),
    ("Quadro RTX 8000", "quadro-rtx-8000"), ("NVIDIA RTX A6000", "rtx-a6000"), ("NVIDIA A40", "a40"),
    ("NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"), ("NVIDIA TITAN RTX", "titan-rtx"),
    ("GeForce RTX 3080 (CSV: 'RTX 3080')", "rtx-3080"),
    ("8x NVIDIA A100-SXM4-40GB", "a100-sxm4-40gb"), ("8 x H100 SXM5", "h100-sxm"),  # a count before the GPU
    ("NVIDIA H100 80GB HBM3", "h100-sxm"), ("H100 80GB HBM2e", "h100-pcie"),  # the memory technology
    ("DGX A100 (8x A100 40GB)", "a100-sxm4-40gb"), ("HGX H100 (8x H100 80GB)", "h100-sxm"),  # a system's GPUs
    ("PCIe server (8x A100 80GB)", "a100-pcie-80gb"),
    ("V100 (p3.16xlarge)", "v100-sxm2-16gb"), ("H100 (AWS p5.48xlarge)", "h100-sxm"),  # an instance's part
    ("p4d.24xlarge (8x A100 40GB)", "a100-sxm4-40gb"),
    ("NVIDIA H20", "h20-sxm"), ("H20 96GB", "h20-sxm"), ("NVIDIA L20", "l20"),  # China-market parts (bundled since
    ("NVIDIA H200", "h200-sxm"),  # the twentieth session); H200 stays H200
])
def test_a_gpu_text_names_its_bundled_profile(text, gpu):
    assert table_text.gpu_for(text) == gpu


@pytest.mark.parametrize("text", [
    "V100", "Tesla V100 32GB", "A100 80G", "Tesla P100",  # a family without its variant: more than one profile
    'A100-SXM4 (heading says 80GB; body text says "8x A100 40GB")',  # two sizes: neither taken
    "RTX 3090 Ti", "GeForce RTX 4090 D", "H100 NVL",  # another part than the profile's
    "H100 SXM 94GB", "H100-SXM 64GB",  # a memory the named profile does not have
    "A100 80GB HBM2e", "4xV100 16GB",  # a technology both parts share; a count before a family
    "RTX 3090 Ti (vs RTX 3090)", "H100 NVL (H100 PCIe)",  # the outer text names its own part
    "V100 16GB (A100 SXM4 40GB baseline)",  # a parenthesis of another family
    "Lambda Hyperplane (8x A100 80GB)",  # the parenthesis, read with node text that states no form
    "NVIDIA H20-3e", "H20 141GB",  # the 141 GB H20 (nvidia-smi's "H20-3e"): not bundled, not the 96 GB part
])
def test_a_gpu_text_that_leaves_more_than_one_profile_or_names_another_part_is_refused(text):
    with pytest.raises(SystemExit) as stopped:
        table_text.gpu_for(text, row_id="X0009")
    assert str(stopped.value).startswith("error: X0009: gpu_type: got ") and "\n" not in str(stopped.value)


def test_the_one_heading_that_disagrees_with_its_body_is_read_as_the_body_says():
    rows = [row for row in dp_scaling.read_rows(dp_scaling.HELDOUT) if row.gpu_type.startswith("A100-SXM4")]
    assert rows and {table_text.gpu_for(row.gpu_type) for row in rows} <= {"a100-sxm4-40gb", "a100-sxm4-80gb"}
    assert "a100-sxm4-40gb" in {table_text.gpu_for(row.gpu_type) for row in rows}


@pytest.mark.parametrize(("text", "preset"), [("GPT-2 XL (1.5B)", "gpt2-xl"), ("MPT-1b decoder-only", "mpt-1b"),
                                              ("BERT-large (340M)", "bert-large")])
def test_a_stated_size_that_is_the_models_passes(text, preset):
    assert table_text.model_for(text) == preset


@pytest.mark.parametrize(("text", "params"), [("GPT-2 (1.5B)", ""), ("GPT-2 345M", ""), ("GPT2 1.5B", ""),
                                              ("ResNet-50", "60.2M"), ("BERT-base", "340M")])
def test_a_stated_size_that_is_not_the_models_is_refused(text, params):
    with pytest.raises(SystemExit) as stopped:
        table_text.model_for(text, row_id="X0010", params_text=params)
    assert "parameters of" in str(stopped.value) and str(stopped.value).startswith("error: X0010: ")


@pytest.mark.parametrize(("text", "refused"), [
    ("SSD300 v1.1", None), ("SSD300 v1.1 (ResNet-50 backbone)", None),
    ("SSD300 (ResNet-34 backbone)", "'resnet-34' names another model"), ("SSD300 VGG16", "'vgg16' names another model"),
    ("SSD320 v1.2 (ssd_resnet50_v1_fpn), not the SSD300", None),
    ("SSD320 (ResNet-101 FPN)", "'resnet-101' names another model"),
])
def test_a_model_on_a_backbone_naming_another_is_refused(text, refused):
    """MLPerf's SSD is SSD300 on ResNet-34 (within 15 % of the preset's parameters, so the size
    check passes it): read as the ResNet-50 preset it would run as another model, silently."""
    if refused is None:  # a detector named beside it (SSD300 beside SSD320) is not a backbone
        assert table_text.model_for(text, row_id="X0011") == text[:6].lower()
    else:
        with pytest.raises(SystemExit, match=f"^error: X0011: model: got .*{re.escape(refused)}"):
            table_text.model_for(text, row_id="X0011")


@pytest.mark.parametrize(("text", "gpu"), [
    ("GeForce GTX 1080 Ti", "gtx-1080ti"), ("GTX 1080Ti", "gtx-1080ti"), ("NVIDIA TITAN Xp", "titan-xp"),
    ("Tesla P40", "p40"), ("TITAN V", "titan-v"), ("Quadro RTX 6000", "quadro-rtx-6000"), ("RTX 6000", "quadro-rtx-6000"),
    ("RTX 6000 Ada", "rtx-6000-ada"), ("NVIDIA Ada Lovelace L40S", "l40s"), ("Blackwell B200", "b200"),
    ("1080 Ti", "gtx-1080ti"), ("2080 Ti", "rtx-2080ti"),  # a qualifier written apart is part of the family
])
def test_the_older_cards_are_read_by_their_product_names(text, gpu):
    assert table_text.gpu_for(text, row_id="X0012") == gpu


@pytest.mark.parametrize("text", ["RTX PRO 6000 Blackwell", "RTX PRO 6000"])
def test_a_later_part_sharing_a_number_is_not_the_older_card(text):
    """"RTX PRO 6000 Blackwell" (no bundled profile) was one rule away from the Turing Quadro RTX
    6000, the bundled "6000" that names no generation: an architecture or product line the text
    names must be the part's."""
    with pytest.raises(SystemExit, match="^error: X0013: gpu_type: got "):
        table_text.gpu_for(text, row_id="X0013")


@pytest.mark.parametrize(("text", "model"), [
    ("resnet50v1.5", "resnet-50"), ("ResNet-50v1.5", "resnet-50"), ("ResNet50 v1.5", "resnet-50"),
    ("se-resnext101-32x4d", "se-resnext101-32x4d"), ("MobileNetV2", "mobilenet-v2"),
])
def test_a_version_written_onto_the_models_number_is_read(text, model):
    """"resnet50v1.5", DeepLearningExamples' directory name for its ResNet-50, was refused: the
    preset's name ended inside the word "resnet50v1"."""
    assert table_text.model_for(text, row_id="X0014") == model


@pytest.mark.parametrize(("text", "model"), [("ViT-Base/16", "vit-b-16"), ("ViT-Large/16", "vit-l-16")])
def test_the_vit_papers_own_names_are_read(text, model):
    assert table_text.model_for(text, row_id="X0015") == model


@pytest.mark.parametrize(("text", "kind"), [
    ("FP32 master, FP16 compute", "mixed"), ("fp32 accumulate, fp16 compute", "mixed"), ("FP32/BF16", "bf16"),
    ("FP8 (with BF16 master weights)", None), ("fp8 + bf16", None), ("FP8 mixed", None), ("INT8", None),
])
def test_a_precision_naming_two_dtypes_is_mixed_and_fp8_is_refused(text, kind):
    """The first dtype word used to win: "FP32 master, FP16 compute" ran in FP32 and "FP8 (with
    BF16 master weights)" in bf16, silently (a read-only probe, 2026-11-29)."""
    if kind is None:
        with pytest.raises(ValueError, match="^precision: got .* is not modelled"):
            dp_scaling.precision_kind(text)
    else:
        assert dp_scaling.precision_kind(text) == kind


@pytest.mark.parametrize(("text", "scale"), [
    ("samples/s (thousands)", 1e3), ("images/s (x1000)", 1e3), ("tokens/s [k]", 1e3), ("img/s (millions)", 1e6),
    ("tokens/day", None), ("images/hour", None), ("sec/iter", None), ("images per minute", None),
])
def test_a_metric_scale_written_apart_is_read_and_other_time_units_refused(text, scale):
    if scale is None:
        with pytest.raises(ValueError, match="^metric: got .*per second"):
            dp_scaling.metric_scale(text)
    else:
        assert dp_scaling.metric_scale(text) == scale


@pytest.mark.parametrize(("text", "needle"), [
    ("Llama-2-7b LoRA", "'lora'"), ("OPT-1.3B QLoRA", "'qlora'"), ("ResNet-34 SSD", "'ssd'"),
    ("ResNet-50 FPN", "'fpn'"), ("ResNet-50 (Mask R-CNN backbone)", "'rcnn'"),
])
def test_a_model_text_training_something_else_than_the_preset_is_refused(text, needle):
    """With LoRA only the adapters are all-reduced; an SSD or FPN on a ResNet is not the classifier."""
    with pytest.raises(SystemExit, match=f"^error: X0016: model: got .*{re.escape(needle)}"):
        table_text.model_for(text, row_id="X0016")


@pytest.mark.parametrize(("model", "text", "ok"), [
    ("resnet-50", "224x224", True), ("inception-v3", "224x224 (299 for InceptionV3)", True), ("alexnet", "227x227", True),
    ("efficientnet-b4", "380x380 (--train_img_size 380)", True), ("resnet-18", "32x32", False),
    ("efficientnet-b4", "320x320", False), ("resnet-50", "160px", False), ("bert-large", "128", True),
])
def test_a_cnn_rows_input_must_be_its_presets(model, text, ok):
    """A CNN's FLOPs are counted at its preset's input side: a row at another ("32x32", CIFAR's) ran
    another workload and was predicted at 224x224, silently."""
    from costmodel.training.workloads import load_model

    if ok:
        dp_scaling._check_image_size(load_model(model), text)
    else:
        with pytest.raises(ValueError, match=f"^seq_len_or_input: got .*{model}'s"):
            dp_scaling._check_image_size(load_model(model), text)


@pytest.mark.parametrize("text", ["ResNet-18 (CIFAR-10)", "VGG16 on CIFAR100", "ResNet-50 MNIST"])
def test_a_cnn_on_small_images_is_refused(text):
    with pytest.raises(SystemExit, match="^error: X0018: model: got .*trains another network on small images"):
        table_text.model_for(text, row_id="X0018")


def test_a_gpu_no_profile_matches_stops_with_one_line():
    with pytest.raises(SystemExit) as stopped:
        table_text.gpu_for("Tesla M60", row_id="X0002")
    assert str(stopped.value).startswith("error: X0002: gpu_type: got 'Tesla M60'; allowed: ")


@pytest.mark.parametrize(("gpu", "per_node", "system", "swapped"), [
    ("a100-sxm4-40gb", 8, "dgx-a100", True),  # NVIDIA's reference node, the 40 GB GPU swapped in
    ("v100-sxm2-16gb", 8, "dgx-1", True), ("v100-sxm3-32gb", 16, "dgx-2h", False), ("h100-sxm", 8, "dgx-h100", False),
    ("k80", 8, "aws-p2.8xlarge", False), ("rtx-4090", 8, "rtx4090-8x-pcie", False), ("v100-sxm2-16gb", 4, "v100-abci-4x", False),
    ("a100-sxm4-40gb", 4, "juwels-booster", False), ("a100-sxm4-80gb", 4, "juwels-booster", True),  # HGX A100 4-GPU
    ("a100-sxm4-40gb", 16, "gcp-a2-megagpu-16g", False),
])
def test_a_node_is_the_bundled_system_of_its_gpu_family_and_count(gpu, per_node, system, swapped):
    node = table_text.base_system_for(gpu, per_node)
    assert node.name == system and node.gpu.name == gpu and node.gpus_per_node == per_node
    assert (hardware.load_system(system).gpu.name != gpu) == swapped


@pytest.mark.parametrize(("gpu", "p2p"), [("rtx-a6000", True), ("rtx-6000-ada", True), ("quadro-rtx-8000", True),
                                         ("a100-pcie-40gb", True), ("rtx-3090", False), ("rtx-4090", False),
                                         ("rtx-2080ti", False),
                                         # GeForce Pascal keeps PCIe P2P (a 4x GTX 1080 Ti deviceQuery)
                                         ("gtx-1080ti", True), ("titan-xp", True), ("titan-v", True), ("p40", True)])
@pytest.mark.parametrize("per_node", [8, 4, 3, 2])
def test_a_pcie_card_has_peer_to_peer_unless_it_is_a_geforce_card(gpu, p2p, per_node):
    """The driver disables P2P on GeForce cards only: "RTX" in a professional card's name (RTX
    A6000, RTX 6000 Ada) is not GeForce. It is the card's, whatever node it goes into: two
    professional cards went into the bundled two-card node, a GeForce box, and lost P2P."""
    assert table_text.base_system_for(gpu, per_node).p2p is p2p


@pytest.mark.parametrize(("gpu", "count", "template", "held"), [
    ("rtx-3090", 3, "l40s-4x-pcie", 4), ("rtx-a6000", 3, "l40s-4x-pcie", 4), ("t4", 5, "rtx4090-8x-pcie-p2p", 8),
])
def test_cards_no_pcie_node_holds_that_many_of_run_on_the_smallest_larger_one(gpu, count, template, held):
    """Three cards in one machine (Lambda's "3x RTX 3090" rows): no bundled PCIe node holds three,
    so the job runs on three GPUs of the smallest one that holds more, its cards with their own
    links and P2P rule; the harness and the CLI then run ``count`` of its GPUs."""
    node = table_text.base_system_for(gpu, count)
    assert node.name == f"{template}/{gpu}" and node.gpu.name == gpu
    assert node.gpus_per_node == held  # the smallest bundled PCIe node holding more than `count`


def test_three_cards_are_predicted_between_two_and_four():
    """The three-card job is the comm model's three of the node's GPUs: its step lies below the
    four-card step of the same row's setup, never the whole node's. (Two cards go into the bundled
    two-card box, whose cards share one PCIe switch's uplink to host memory: without peer-to-peer
    their SHM all-reduce is the slower since hidden communication costs its full time there,
    2026-11-30, so two cards are no longer below three.)"""
    row = next(row for row in OUTSIDE if row.row_id == "O0231")  # 3x RTX 3090, ResNet-50 FP32
    steps = {}
    for gpus in (2, 3, 4):
        rate, breakdown = dp_scaling.predict_throughput(dataclasses.replace(row, gpus=gpus, gpus_per_node=gpus),
                                                        gpus, row.micro_batch, row.accumulation, dp_scaling.SHIPPED)
        steps[gpus] = breakdown.total_s
        assert breakdown.ranks == gpus and rate == pytest.approx(gpus * row.micro_batch / breakdown.total_s)
    assert steps[3] < steps[4] and steps[2] < steps[4]


@pytest.mark.parametrize(("gpu", "per_node", "template", "link"), [
    ("t4", 8, "rtx4090-8x-pcie-p2p", "pcie3"), ("a100-pcie-80gb", 8, "rtx4090-8x-pcie-p2p", "pcie4"),
    ("a10", 4, "l40s-4x-pcie", "pcie4"), ("h100-pcie", 8, "rtx4090-8x-pcie-p2p", "pcie5"),
    ("rtx-3090", 2, "rtx2080ti-2x-pcie", "pcie4"),  # its family is 3090, not "rtx"
])
def test_a_gpu_no_node_of_its_family_holds_goes_into_a_pcie_node_of_that_count(gpu, per_node, template, link):
    node = table_text.base_system_for(gpu, per_node)
    assert node.name == f"{template}/{gpu}" and node.gpu.name == gpu and node.gpus_per_node == per_node
    assert node.intra_fabric == "pcie" and node.intra_link.name == link
    assert node.intra_bandwidth_Bps == node.intra_link.bandwidth_Bps


def test_no_bundled_node_for_the_count_stops_with_one_line():
    with pytest.raises(SystemExit) as stopped:
        table_text.base_system_for("a100-sxm4-40gb", 3, "X0003")
    assert str(stopped.value).startswith("error: X0003: gpus_per_node: got '3'; allowed: ")


@pytest.mark.parametrize(("network", "link", "count", "gbps"), [
    ("8x 200 Gb/s HDR InfiniBand per node", "ib-hdr", 8, 200),
    ("1x InfiniBand 100 Gb/sec (4X EDR), Mellanox", "ib-edr", 1, 100),
    ("2x 100 Gb/s RoCE per node", "roce-100", 2, 100),
    ("1x 25 Gb/s Ethernet (TCP, no RDMA)", "eth-25g", 1, 25),
    ("1x 40 Gb/s Ethernet", "tcp-sockets", 1, 40),  # no bundled 40 GbE link: NCCL's socket transport
    ("25GbE", "eth-25g", 1, 25), ("1x 10 GbE TCP", "eth-10g", 1, 10), ("4x EDR InfiniBand", "ib-edr", 4, 100),
    ("100 Gb/s RoCE v2", "roce-100", 1, 100), ("4x 400 Gbps EFA", "efa-v4", 4, 400),
    ("1x Mellanox ConnectX-6 200 Gb/s HDR", "ib-hdr", 1, 200), ("2 x 100 Gbps RoCE", "roce-100", 2, 100),
    ("8x NDR400", "ib-ndr", 8, 400), ("8x HDR100 InfiniBand", "ib-edr", 8, 100),  # a generation with its port rate
    # a rate no single NIC of its fabric runs, without a count: the node's total over its NICs
    ("1600 Gbps node-node interconnect (RoCE)", "roce-200", 8, 200),
])
def test_the_stated_nics_and_their_kind_set_the_network(network, link, count, gbps):
    system = table_text.system_for("A100-SXM4-40GB", 8, network)
    assert (system.nic_link.name, system.nics_per_node, system.nic_bandwidth_Bps) == (link, count, gbps * 1e9 / 8)


@pytest.mark.parametrize(("text", "intra", "gpu"), [("NVIDIA H100 80GB HBM3", "NVSwitch", "h100-sxm"),
                                                  ("H100 80GB HBM2e", "PCIe Gen5", "h100-pcie"),
                                                  ("A100 40GB HBM2", "NVSwitch", "a100-sxm4-40gb")])
def test_a_memory_technology_names_a_part_as_a_form_factor_would(text, intra, gpu):
    """HBM3 names the H100 SXM5 as "SXM5" would (nvidia-smi's "NVIDIA H100 80GB HBM3"); a
    technology both parts of a family share (A100 40GB: HBM2) leaves the node text to decide."""
    assert table_text.gpu_for(text, "", intra, 8) == gpu
    if "H100" in text:
        assert table_text.gpu_for(text) == gpu  # read without the node text
    else:
        with pytest.raises(SystemExit):
            table_text.gpu_for(text)


def test_a_refused_row_is_quoted_as_written_not_by_its_parenthesis():
    with pytest.raises(SystemExit) as stopped:
        table_text.gpu_for("V100 32GB (CSV: 'V100 32GB')", row_id="X0011")
    assert "got \"V100 32GB (CSV: 'V100 32GB')\"" in str(stopped.value)


@pytest.mark.parametrize(("network", "node"), [
    ("100 Gbps TCP Ethernet", "p4d.24xlarge"),  # a fabric the instance's NICs are not: other NICs
    ("400 Gbps (p5-like)", ""), ("InfiniBand", "compared with p5"),  # a one-word name inside prose
])
def test_an_instance_is_not_taken_against_the_rows_fabric_or_from_prose(network, node):
    gpu = "A100-SXM4-40GB" if "p4d" in node else "H100-SXM5"
    assert not table_text.system_for(gpu, 8, network, node_text=node).name.startswith("aws-")


@pytest.mark.parametrize(("network", "count", "gbps"), [
    ("NDR400 x 8", 8, 400), ("HDR100 x 2", 2, 100), ("8x NDR400", 8, 400), ("EDR4", None, None),
    ("200 Gb/s HDR InfiniBand x 8", 8, 200), ("InfiniBand HDR 200 Gb/s (8 per node)", 8, 200),
    ("25 Gb Ethernet", None, 25), ("100Gb InfiniBand", None, 100), ("10 Gigabit Ethernet", None, 10),
    ("100 Gbit Ethernet", None, 100), ("FDR InfiniBand", None, 56),
])
def test_a_rate_written_after_a_generation_is_its_rate_and_a_count_after_it_the_nics(network, count, gbps):
    """"NDR400 x 8" was 400 NICs; "25 Gb Ethernet" lost its rate (only Gb/s, Gbps, GbE counted) and
    kept the node's 8 x 200 Gb/s InfiniBand; a count after the rate was lost."""
    stated = table_text.stated_network(network)
    assert (stated.count, stated.gbps) == (count, gbps)


@pytest.mark.parametrize(("gpu", "network", "node", "system", "link", "count", "gbps"), [
    ("A100-SXM4-40GB", "400 Gbps EFA (p4d.24xlarge)", "", "aws-p4d", "efa", 4, 100),  # not one 400 Gb/s NIC
    ("H100-SXM5", "3200 Gbps EFA", "AWS p5.48xlarge", "aws-p5", "efa", 8, 400),
    ("H100-SXM5", "InfiniBand (Azure ND H100 v5)", "", "azure-nd-h100-v5", "ib-ndr", 8, 400),
    ("A100-SXM4-40GB", "RoCE", "OCI BM.GPU4.8", "oci-bm-gpu4-8", "roce-100", 16, 100),
    ("Tesla V100-SXM2-16GB", "25 Gbps (p3.16xlarge)", "", "aws-p3.16xlarge", "eth-25g", 1, 25),
    ("A100-SXM4-40GB", "1x 100 Gb/s EDR", "DGX A100", "dgx-a100-1x100G", "ib-edr", 1, 100),  # a DGX: the site's NICs
    ("A100-SXM4-80GB", "400 Gbps EFA (p4de.24xlarge)", "", "aws-p4de", "efa", 4, 100),
    ("V100-SXM2-32GB", "100 Gbps (p3dn.24xlarge)", "", "aws-p3dn.24xlarge", "eth-100g", 1, 100),
    ("V100-SXM2-32GB", "100 Gbps EFA (p3dn.24xlarge)", "", "dgx-1-1x100G", "efa", 1, 100),  # not the instance's ENA
    ("A100-SXM4-40GB", "100 Gbps", "GCP a2-highgpu-8g", "gcp-a2-highgpu-8g", "eth-100g", 1, 100),
    ("A100-SXM4-40GB", "InfiniBand (Azure ND A100 v4)", "", "azure-nd-a100-v4", "ib-hdr", 8, 200),
    ("A100-SXM4-80GB", "8x 200 Gb/s HDR", "Azure NDm A100 v4", "azure-ndm-a100-v4", "ib-hdr", 8, 200),
    ("A100-SXM4-40GB", "8x HDR 200 (Standard_ND96asr_v4)", "", "azure-nd-a100-v4", "ib-hdr", 8, 200),  # a VM size
    ("H100-SXM5", "", "ND96isr_H100_v5", "azure-nd-h100-v5", "ib-ndr", 8, 400),
    # bundled since the twentieth session (refused before: no profile)
    ("H200 SXM", "3200 Gbps EFA (p5e.48xlarge)", "", "aws-p5e", "efa", 8, 400),
    ("H200 SXM", "", "p5en.48xlarge", "aws-p5en", "efa-v3", 8, 400),
    ("H200 SXM", "8x 400 Gb/s NDR", "ND96isr_H200_v5", "azure-nd-h200-v5", "ib-ndr", 8, 400),
    ("V100-SXM2-32GB", "EDR InfiniBand (Azure NDv2)", "", "azure-ndv2", "ib-edr", 1, 100),
    ("V100-SXM2-32GB", "Standard_ND40rs_v2", "", "azure-ndv2", "ib-edr", 1, 100),
    ("A100-SXM4-80GB", "16x 100 Gb/s RoCE", "OCI BM.GPU.A100-v2.8", "oci-bm-gpu-a100-v2-8", "roce-100", 16, 100),
])
def test_a_cloud_instance_the_row_names_is_taken_with_its_own_nics(gpu, network, node, system, link, count, gbps):
    found = table_text.system_for(gpu, 8, network, node_text=node)
    assert (found.name, found.nic_link.name, found.nics_per_node) == (system, link, count)
    assert found.nic_bandwidth_Bps == gbps * 1e9 / 8 and found.gpu.name == table_text.gpu_for(gpu)


def test_four_v100s_on_a_p3_8xlarge_are_its_quad_and_its_10_gbps():
    found = table_text.system_for("Tesla V100-SXM2-16GB", 4, "10 Gbps (p3.8xlarge)")
    assert (found.name, found.nic_link.name, found.nic_bandwidth_Bps) == ("aws-p3.8xlarge", "eth-10g", 10e9 / 8)
    assert found.intra_bandwidth_Bps == 100e9  # GPUs 0 and 1 of the quad have four of their six links
    with pytest.raises(SystemExit, match="site machine holding the row's GPU"):  # eight GPUs: not a p3.8xlarge
        table_text.system_for("Tesla V100-SXM2-16GB", 8, "10 Gbps (p3.8xlarge)", row_id="X0001")


@pytest.mark.parametrize(("gpu", "network", "settled"), [
    ("A100 40GB", "100 Gbps (a2-highgpu-8g)", "a100-sxm4-40gb"), ("A100 80GB", "400 Gbps EFA (p4de.24xlarge)", "a100-sxm4-80gb"),
    ("V100", "100 Gbps (p3dn.24xlarge)", "v100-sxm2"), ("V100 32GB", "25 Gbps", None),
])
def test_a_cloud_instance_in_the_network_text_settles_the_gpu(gpu, network, settled):
    """"A100 40GB" with "100 Gbps (a2-highgpu-8g)" was refused (the family's SXM4 module or PCIe
    card): only the GPU and link texts were read for an instance, the network column, where rows
    name it, was not. A network naming no instance settles nothing."""
    if settled is None:
        with pytest.raises(SystemExit, match="^error: X0003: gpu_type: got "):
            table_text.gpu_in_node(gpu, "", 8, "X0003", network)
    else:
        assert table_text.gpu_in_node(gpu, "", 8, "X0003", network) == settled


@pytest.mark.parametrize(("network", "count", "gbps", "fabric"), [
    ("4X EDR InfiniBand (100 Gb/s)", None, 100, "infiniband"),  # a port's lane width, not four NICs
    ("HDR 100", None, 100, "infiniband"), ("HDR-100", None, 100, "infiniband"),
    ("NDR 400Gb/s x8", 8, 400, "infiniband"), ("InfiniBand EDR (100Gbps) x 2", 2, 100, "infiniband"),
    ("dual-rail EDR", 2, 100, "infiniband"), ("dual 25GbE", 2, 25, "ethernet"), ("8 HCAs, HDR", 8, 200, "infiniband"),
    ("8-rail HDR", 8, 200, "infiniband"), ("eight 200 Gb/s HDR NICs", 8, 200, "infiniband"),
    ("Gigabit Ethernet", None, 1, "ethernet"), ("GbE", None, 1, "ethernet"), ("IPoIB 100 Gb/s", None, 100, "ethernet"),
    ("a3-megagpu-8g", None, None, None),  # a machine type's "-8g" is not 8 Gb/s
    ("Quantum-2 InfiniBand", None, 400, "infiniband"), ("ConnectX-6 InfiniBand", None, 200, "infiniband"),
    ("Spectrum-X 400GbE", None, 400, "roce"),  # NVIDIA's Ethernet for RDMA: RoCE, not kernel TCP
    ("n/a (single node)", None, None, None),  # "single" counts nothing here
])
def test_what_a_network_text_states_as_published_spellings_write_it(network, count, gbps, fabric):
    """Texts a read-only probe (2026-11-29) found read silently as something else: a lane width
    as four NICs, "HDR 100" as 200 Gb/s, counts after the rate or in words lost, a bare "Gigabit
    Ethernet" at the node's InfiniBand rate, IP over InfiniBand as RDMA, "a3-megagpu-8g" as one 8 Gb/s NIC."""
    stated = table_text.stated_network(network)
    assert (stated.count, stated.gbps, stated.fabric) == (count, gbps, fabric)


@pytest.mark.parametrize(("gpu", "per_node", "network", "system", "nics", "gbps"), [
    ("A100-SXM4-40GB", 8, "EFA", "aws-p4d", 4, 100), ("A100-SXM4-80GB", 8, "400 Gbps EFA", "aws-p4de", 4, 100),
    ("H100-SXM5", 8, "3200 Gbps EFA", "aws-p5", 8, 400),  # EFA is AWS's: the instance of that GPU
    ("H100-SXM5", 8, "a3-megagpu-8g", "gcp-a3-mega", 8, 200), ("MI300X", 8, "", "mi300x-8x", 8, 400),
    ("V100-SXM2-16GB", 8, "100 Gb/s EDR InfiniBand per GPU", "dgx-1-8x100G", 8, 100),  # DGX-1 has 4
    ("H100-SXM5-80GB", 4, "", "marenostrum5-acc", 4, 200),  # HGX H100 4-GPU (refused before: no node of four)
    # quad-GH200 nodes (refused before: no GH200, and Slingshot had no link); nvidia-smi's name
    ("NVIDIA GH200 120GB", 4, "4x Slingshot-11 200 Gb/s", "hpe-cray-ex254n", 4, 200), ("GH200", 4, "", "hpe-cray-ex254n", 4, 200),
])
def test_the_node_a_network_text_implies(gpu, per_node, network, system, nics, gbps):
    """Bare EFA took a DGX's eight NICs; an MI300X row naming no node ran on Azure's instance (its
    InfiniBand) by bundled order: a site's node comes before a provider's instance."""
    found = table_text.system_for(gpu, per_node, network)
    assert (found.name, found.nics_per_node, found.nic_bandwidth_Bps) == (system, nics, gbps * 1e9 / 8)


@pytest.mark.parametrize(("network", "reduction"), [("HDR IB, SHARPv2 off", ""), ("HDR IB, SHARP disabled", ""),
                                                  ("HDR IB with SHARP", "sharp")])
def test_sharp_taken_back_in_any_version_is_off(network, reduction):
    assert table_text.system_for("A100-SXM4-40GB", 8, network).in_network_reduction == reduction


@pytest.mark.parametrize("network", ["a2-highgpu-4g", "a3-highgpu-8g", "NC96ads_A100_v4",
                                     "Frontier", "Intel OPA 100Gb", "Slingshot-10",
                                     "p5e.48xlarge", "p3.8xlarge"])  # bundled, but they hold other GPUs
def test_an_instance_or_fabric_no_bundled_profile_stands_for_is_refused(network):
    """Unbundled instances ran on a DGX with InfiniBand they do not have, Omni-Path ("OPA") and
    Slingshot sites on InfiniBand with SHARP. Slingshot-10 (100 Gb/s ConnectX NICs) has no link;
    Slingshot-11 has its own (below)."""
    with pytest.raises(SystemExit, match="^error: X0017: inter_node_network: got "):
        table_text.system_for("A100-SXM4-80GB", 8, network, row_id="X0017")


@pytest.mark.parametrize(("gpu", "network", "system", "nics"), [
    ("A100-SXM4-40GB", "Perlmutter", "perlmutter-gpu", 4), ("A100-SXM4-40GB", "Polaris (HPE Slingshot)", "polaris", 2),
    ("NVIDIA GH200 120GB", "Alps", "hpe-cray-ex254n", 4), ("GH200", "JUPITER Booster, InfiniBand", "jupiter-booster", 4)])
def test_a_site_named_is_its_bundled_machine_with_its_own_nics(gpu, network, system, nics):
    """Perlmutter and Polaris were refused as Slingshot sites; now bundled, a row naming one runs
    on that machine whole (Polaris's two NICs, not a four-A100 node's four)."""
    found = table_text.system_for(gpu, 4, network)
    assert (found.name, found.nics_per_node) == (system, nics)


def test_a_site_holding_other_gpus_is_refused():
    with pytest.raises(SystemExit, match="hpe-cray-ex254n holds gh200 x4"):
        table_text.system_for("A100-SXM4-40GB", 4, "Alps", row_id="X0032")


def test_slingshot_11_runs_on_its_own_link_without_sharp():
    """Four A100s a node on Slingshot-11 (a machine named by its fabric alone):
    the bundled four-A100 node with its InfiniBand and SHARP replaced by four Cassini NICs, which
    NCCL reaches through the aws-ofi-nccl plugin (GPUDirect, no in-network reduction)."""
    system = table_text.system_for("A100-SXM4-40GB", 4, "Slingshot-11, 4 NICs per node")
    assert (system.nic_link.name, system.nics_per_node, system.in_network_reduction) == ("slingshot-11", 4, "")
    assert system.nic_link.gpu_direct_access


@pytest.mark.parametrize(("text", "gpu"), [("NVIDIA GH200 120GB", "gh200"), ("GH200 480GB", "gh200"), ("GH200", "gh200")])
def test_a_gpu_named_for_its_cpus_memory_is_its_own_part(text, gpu):
    """nvidia-smi names a quad-node GH200 "GH200 120GB" after its Grace's LPDDR5X; read as a memory
    size it matched no GPU (the GPU's HBM3 is 96 GB)."""
    assert table_text.gpu_for(text, row_id="X0030") == gpu


def test_the_hbm3e_gh200_is_another_part():
    with pytest.raises(SystemExit, match="^error: X0031: gpu_type: got 'GH200 144GB HBM3e'"):
        table_text.gpu_for("GH200 144GB HBM3e", row_id="X0031")


@pytest.mark.parametrize(("gpu", "bridge", "links", "gb_s"), [
    ("RTX 3090", "nvlink3-bridge", 4, 56.25), ("RTX A6000", "nvlink3-bridge", 4, 56.25),  # GA102: 4 x 14.0625
    ("Quadro RTX 8000", "nvlink2-bridge", 2, 50), ("A100 PCIe 40GB", "nvlink3-bridge-x12", 12, 300)])
def test_two_cards_with_an_nvlink_bridge_talk_over_their_own_bridge(gpu, bridge, links, gb_s):
    """Two bridged cards of a family no bundled bridged node holds ran on PCIe (GeForce cards through
    host memory); they take a bundled server pair with the card and its own bridge swapped in."""
    name = table_text.gpu_in_node(gpu, "NVLink bridge", 2, "X0019")
    system = table_text.system_for(name, 2, "", node_text="NVLink bridge")
    assert (system.intra_fabric, system.intra_link.name, system.intra_links) == ("nvlink-bridge", bridge, links)
    assert system.gpu.name == table_text.gpu_for(name) and system.intra_bandwidth_Bps == gb_s * 1e9
    assert table_text.system_for(name, 2, "", node_text="PCIe").intra_fabric == "pcie"


@pytest.mark.parametrize("network", ["n/a (single node)", "a process on each GPU", "8x 12.5 Gb/s"])
def test_a_text_stating_no_fabric_keeps_the_nodes_link(network):
    system = table_text.system_for("A100-SXM4-40GB", 8, network)
    assert system.nic_link.name == "ib-hdr" and system.in_network_reduction == "sharp"


@pytest.mark.parametrize("network", ["1x 100 Gb/s Ethernet", "8x 200 Gb/s RoCE", "1x 25 Gb/s Ethernet"])
def test_sharp_leaves_with_infiniband(network):
    from costmodel.cluster import comm as mapping

    system = table_text.system_for("A100-SXM4-80GB", 8, network)
    assert system.in_network_reduction == ""
    assert mapping.comm_model(system, 2, 8).time_s("all-reduce", 1e8) > 0  # SHARP on RoCE was a ProfileError


def test_the_kind_of_link_moves_a_multi_node_step_the_way_transport_does():
    """Same NICs, RDMA against kernel TCP: the TCP node loses more at 4 nodes."""
    rdma = table_text.system_for("V100-SXM2-16GB", 8, "1x 25 Gb/s RoCE per node")
    tcp = table_text.system_for("V100-SXM2-16GB", 8, "1x 25 Gb/s Ethernet (TCP)")
    assert rdma.nic_link.category == "roce" and tcp.nic_link.category == "ethernet"
    rows = []
    for name, network in (("rdma", "1x 25 Gb/s RoCE per node"), ("tcp", "1x 25 Gb/s Ethernet (TCP)")):
        rows.append(_row(network, 32, 4, row_id=f"{name}1"))
    base = _row("n/a (single node)", 8, 1, row_id="base")
    efficiency = {}
    for row in rows:
        at_n, _ = dp_scaling.predict_throughput(row, 32, 64, 1, dp_scaling.SHIPPED)
        at_base, _ = dp_scaling.predict_throughput(base, 8, 64, 1, dp_scaling.SHIPPED)
        efficiency[row.row_id] = at_n / (at_base * 4)
    assert efficiency["tcp1"] < efficiency["rdma1"] - 0.05


def _row(network: str, gpus: int, nodes: int, row_id: str):
    return dp_scaling.Row(row_id=row_id, source="X", model="resnet-50", seq_len=None, micro_batch=64, accumulation=1,
                          precision="FP32", gpu_type="V100-SXM2-16GB", gpus_per_node=8, nodes=nodes, gpus=gpus,
                          inter_node=network, framework="PyTorch DDP", metric="images/s (whole job)", value=1.0,
                          baseline_gpus=8, baseline_value=1.0, efficiency=None, table=("X",), held_out=True)


HEADER = dp_scaling.DATA.read_text(encoding="utf-8").splitlines()[0].split(",")


def _write_table(path: Path, model: str, points: list[tuple[int, float]], per_node: int = 8) -> None:
    base_gpus, base_value = points[0]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=HEADER)
        writer.writeheader()
        for number, (gpus, value) in enumerate(points, 1):
            nodes = max(1, gpus // per_node)
            writer.writerow({key: "" for key in HEADER} | {
                "row_id": f"T{number:04d}", "source_id": "T1", "source": "a table dpcost never saw",
                "model": model, "seq_len_or_input": "384", "per_gpu_microbatch": "32", "grad_accum_steps": "1",
                "precision": "mixed (fp16 AMP)", "gpu_type": "NVIDIA A100-SXM4-80GB", "gpus_per_node": str(per_node),
                "nodes": str(nodes), "total_gpus": str(gpus),
                "inter_node_network": "8x 200 Gb/s HDR InfiniBand per node" if nodes > 1 else "n/a (single node)",
                "framework_comm": "Horovod with fp16 compression", "metric": "sequences/s (whole job)",
                "value": str(value), "baseline_gpus": str(base_gpus), "baseline_value": str(base_value),
                "scaling_efficiency_derived": f"{value / (base_value * gpus / base_gpus):.3f}"})


def _rewrite_table(path: Path, rows: list[dict]) -> None:
    """Write ``rows`` (a table read back and changed) over ``path``."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=HEADER)
        writer.writeheader()
        writer.writerows(rows)


def test_any_table_in_the_columns_runs_through_csv_with_the_shipped_constants(tmp_path, capsys):
    table = tmp_path / "new.csv"
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "bart-large.toml").write_text(
        '[model]\nkind = "transformer"\nparams = 406_291_456\nlayers = 24\nhidden_size = 1024\nheads = 16\n'
        'vocab = 50265\n', encoding="utf-8")
    _write_table(table, "BART-large fine-tuning", [(1, 100.0), (8, 760.0), (16, 1480.0)])
    rows = dp_scaling.read_rows(table, text_rules=True)
    assert {row.model for row in rows} == {str(tmp_path / "models" / "bart-large.toml")}
    assert all(row.held_out for row in rows)  # its framework read from its text: Horovod, fp16 gradients
    assert dp_scaling._sync(rows[0])[0] == "horovod" and dp_scaling._dtypes(rows[0]) == ("fp16", "fp16")
    assert dp_scaling.main(["--csv", str(table), "--rows"]) == 0
    out = capsys.readouterr().out
    assert "| T1 | 2 |" in out and "T0002" in out and "T0003" in out
    predicted = dp_scaling.predict(rows, dp_scaling.SHIPPED, measured=True)
    assert [p.row.row_id for p in predicted] == ["T0002", "T0003"]
    assert all(0.5 < p.predicted < 1.0 for p in predicted)
    assert predicted[1].predicted < predicted[0].predicted  # two nodes lose more than one


def test_a_table_no_row_of_which_can_be_read_stops_saying_why(tmp_path, capsys):
    table = tmp_path / "new.csv"
    _write_table(table, "DenseNet-121", [(1, 100.0), (8, 760.0)])
    with pytest.raises(SystemExit) as stopped:
        dp_scaling.main(["--csv", str(table)])
    assert str(stopped.value) == "error: csv: no row could be read and predicted (above, why)"
    assert "note: left out T0001: model: got 'DenseNet-121'" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stopped:  # read alone, the first unreadable row stops the reading
        dp_scaling.read_rows(table, text_rules=True)
    assert str(stopped.value).startswith("error: T0001: model: got 'DenseNet-121'")


# --- the outside set: fifteen publications no constant was fitted on -----------------------------

OUTSIDE_UNREAD: list[str] = []
OUTSIDE = dp_scaling.table_rows(dp_scaling.OUTSIDE, OUTSIDE_UNREAD)


def test_the_outside_set_reads_row_for_row_with_its_baselines():
    o1_to_o10 = [row for row in OUTSIDE if int(row.row_id[1:]) <= 226]
    assert len(o1_to_o10) == 226 and len({row.table for row in o1_to_o10}) == 84
    assert sum(row.nodes > 1 for row in OUTSIDE if int(row.row_id[1:]) <= 226) == 28
    # O12-O16 (the twentieth session): every row read; O15's since its model has a preset (ssd320,
    # the twenty-first session), though its text also names SSD300 (not a backbone)
    later = [row for row in OUTSIDE if int(row.row_id[1:]) >= 575]
    assert len(later) == 56 + 21 + 8 + 12 + 20 and sum(row.nodes > 1 for row in later) == 28
    transformer = [row for row in later if row.source == "O16"]  # batches in tokens: 10,240 of 31-token sentences
    assert {row.model for row in transformer} == {"transformer-big"} and {row.micro_batch for row in transformer} == \
        {330, 165, 83}
    assert {row.model for row in later if row.source == "O15"} == {"ssd320"}
    assert OUTSIDE_UNREAD == []
    for row in OUTSIDE:
        base = dp_scaling.baseline_of(row, OUTSIDE)
        assert row.efficiency == pytest.approx(row.value / (base.value * row.gpus / base.gpus), abs=6e-4)
    files = {row.model for row in OUTSIDE if row.model.endswith(".toml")}
    assert {Path(model).stem for model in files} == {"bart-large", "electra-base-pretraining"}


def test_lambdas_rows_are_the_source_csvs_as_the_tool_converts_them_and_the_unread_ones_say_why():
    """O11 (Lambda's tf_cnn_benchmarks tables) is machine-read: outside.csv holds exactly what
    tools/lambda_tf_rows.py makes of the four CSVs kept beside it. Its rows whose form factor the
    source's CSVs do not state (V100 32GB) are read as its log index states them (16 V100 SXM3s on
    NVSwitch, Lambda's Hyperplane-16); the RTX 3080 (a profile since 2026-11-29) and three GPUs in
    one machine (three of a larger PCIe node) are read: every O11 row is."""
    from tools import lambda_tf_rows

    with dp_scaling.OUTSIDE.open(newline="", encoding="utf-8") as handle:
        records = [record for record in csv.DictReader(handle) if record["source_id"] == "O11"]
    assert records == lambda_tf_rows.rows()
    # the reader derives the efficiency the rows leave blank: 8 RTX A6000, ResNet-50 FP32, 4,280
    # images/s against one GPU's 554 (tf-train-throughput-fp32.csv)
    a6000 = next(row for row in OUTSIDE if row.gpus == 8 and "A6000" in row.gpu_type and row.model == "resnet-50"
                 and row.precision == "FP32")
    assert (a6000.value, a6000.baseline_value, a6000.micro_batch) == (4280, 554, 256)
    assert a6000.efficiency == pytest.approx(4280 / (554 * 8))
    o11 = {record["row_id"] for record in records}
    assert not [line for line in OUTSIDE_UNREAD if line.split(":", 1)[0] in o11]
    assert {row.row_id for row in OUTSIDE if row.source == "O11"} == o11
    assert {row.gpus for row in OUTSIDE if "3080" in row.gpu_type} == {1, 2}
    assert {row.gpu_type.split(" (")[0] for row in OUTSIDE if row.gpus == 3} == {"GeForce RTX 3090"}
    v100 = [row for row in OUTSIDE if "V100" in row.gpu_type and row.source == "O11"]
    assert len(v100) == 24 and {(row.gpus_per_node, row.gpus) for row in v100} == {(16, 1), (16, 8)}
    assert {table_text.system_for(row.gpu_type, row.gpus_per_node, row.inter_node, node_text=row.intra_node).name
            for row in v100} == {"dgx-2h"}


def test_the_outside_section_of_the_docs_is_what_the_harness_prints():
    text = (Path(__file__).resolve().parents[2] / "docs" / "validation.md").read_text(encoding="utf-8")
    section = text.split("<!-- dp-scaling-outside:begin -->", 1)[1].split("<!-- dp-scaling-outside:end -->", 1)[0]
    assert section.strip() == dp_scaling.table_report(OUTSIDE).strip()


def test_ddp_accumulating_without_no_sync_synchronises_every_micro_batch():
    """DeepLearningExamples' PyTorch CNN scripts accumulate without no_sync: the harness runs those
    rows with --sync-each-micro-batch, at the accumulation the source states."""
    skipped = [row for row in OUTSIDE if dp_scaling.NO_SYNC_SKIPPED in row.framework and row.accumulation > 1]
    assert skipped
    for row in skipped:
        _, breakdown = dp_scaling.predict_throughput(row, row.gpus, row.micro_batch, row.accumulation,
                                                     dp_scaling.SHIPPED)
        assert breakdown.sync_each_micro_batch and breakdown.accumulation_steps == row.accumulation


@pytest.mark.parametrize(("framework", "sync"), [
    ("tf_cnn_benchmarks --variable_update=parameter_server --local_parameter_device=cpu", ("per-tensor", "auto", True)),
    ("tensorpack SyncMultiGPUTrainerReplicated (variable_update=replicated)", ("per-tensor", "auto", False)),
    ("Horovod with fp16 compression", ("horovod", "auto", False)),
    ("PyTorch DDP in NGC PyTorch 21.03", ("ddp", "auto", False)),
])
def test_a_tables_framework_text_sets_its_sync(framework, sync):
    row = dataclasses.replace(_row("n/a (single node)", 8, 1, "F1"), framework=framework)
    assert dp_scaling._sync(row) == sync


@pytest.mark.parametrize(("gpu", "per_node", "node", "system", "p2p"), [
    ("GeForce RTX 2080 Ti", 2, "NVLink bridge", "rtx2080ti-2x-nvlink-bridge", True),  # the bridged pair is bundled
    ("H100 PCIe", 2, "PCIe Gen5 x16 (no NVLink bridge)", "rtx2080ti-2x-pcie/h100-pcie", True),
    ("GeForce RTX 4090", 8, "PCIe 4.0, P2P enabled", "rtx4090-8x-pcie-p2p", True),
    ("GeForce RTX 4090", 8, "PCIe 4.0", "rtx4090-8x-pcie", False),
])
def test_the_link_text_picks_among_kin_nodes(gpu, per_node, node, system, p2p):
    """The link text chose nothing when several bundled nodes held the GPU: two bridged RTX 2080 Tis
    ran on the PCIe pair, and H100 PCIe cards "without an NVLink bridge" on the bridged pair."""
    found = table_text.system_for(gpu, per_node, "n/a", node_text=node)
    assert (found.name, found.p2p) == (system, p2p)


@pytest.mark.parametrize(("node", "system", "fabric"), [
    ("NVSwitch (Lambda Hyperplane-16, 8 of 16 used)", "dgx-2h", "nvswitch"),  # SXM3 boards hold sixteen
    ("NVLink Switch", "dgx-2h", "nvswitch"),
    ("NVLink hybrid cube-mesh", "dgx-1", "nvlink-mesh"),  # the text agrees with the node of that count
])
def test_a_module_on_nvswitch_runs_on_a_switched_node_of_its_kin(node, system, fabric):
    """Eight V100 SXM3s "on NVSwitch" ran on DGX-1's hybrid cube-mesh (the only kin node of eight),
    a third of the links a switched board gives; they take the 16-GPU NVSwitch node now, on eight of
    its GPUs."""
    found = table_text.system_for("Tesla V100-SXM3-32GB", 8, "n/a (single machine)", node_text=node)
    assert (found.name, found.intra_fabric) == (system, fabric)


@pytest.mark.parametrize(("gpu", "intra", "expected"), [
    ("A100 80GB", "PCIe Gen4, no NVLink", "a100-pcie-80gb"), ("H100", "No NVLink (PCIe 5.0)", "h100-pcie"),
    ("V100 32GB", "PCIe only (NVLink not used)", "v100-pcie-32gb"),
])
def test_a_negated_link_is_not_read_as_stated(gpu, intra, expected):
    """"no NVLink" was read as NVLink: an SXM module in a DGX where the row says PCIe cards."""
    assert table_text.gpu_in_node(gpu, intra, 8) == expected


@pytest.mark.parametrize(("network", "fabric"), [("100 GbE (no InfiniBand)", "ethernet"),
                                                 ("IB disabled, TCP over 100GbE", "ethernet"),
                                                 ("Elastic Fabric Adapter 400 Gbps", "efa")])
def test_a_negated_or_spelled_out_fabric_is_read_as_meant(network, fabric):
    assert table_text.stated_network(network).fabric == fabric


@pytest.mark.parametrize(("network", "link", "count", "gbps", "sharp"), [
    ("8x 200 Gb/s RoCE off-node", "roce-200", 8, 200, ""),  # "off-node" takes nothing back
    ("8x HDR InfiniBand, SHARP off-loaded all-reduce", "ib-hdr", 8, 200, "sharp"),
    ("2 nodes of 8x A100 80GB, 200 Gb/s HDR InfiniBand", "ib-hdr", 8, 200, "sharp"),  # "80GB" is memory, not a rate
    ("A100 40 GB nodes; 4x 100 Gbps EFA", "efa", 4, 100, ""),
    ("EDR InfiniBand 100 Gb/s, PCIe Gen3 x16", "ib-edr", 1, 100, ""),  # x16 is PCIe lanes, not 16 NICs
    ("HDR InfiniBand, 2 nodes x 8 GPUs", "ib-hdr", 1, 200, "sharp"), ("InfiniBand EDR, 36 ports switch", "ib-edr", 1, 100, ""),
    ("100 Gbps EFA disabled, 25 Gbps TCP", "eth-25g", 1, 25, ""),  # the clause taken back, its rate too
    ("8x 200 Gb/s HDR, SHARP: off", "ib-hdr", 8, 200, ""),
    ("8x 200 Gb/s HDR InfiniBand with GPUDirect RDMA disabled", "ib-hdr", 8, 200, "sharp"),  # the fabric stays
])
def test_network_texts_that_resemble_a_rate_count_or_negation_are_read_as_meant(network, link, count, gbps, sharp):
    """Review of the reading rules: each of these was misread by a first version of them."""
    system = table_text.system_for("A100-SXM4-80GB", 8, network)
    assert (system.nic_link.name, system.nics_per_node, system.nic_bandwidth_Bps, system.in_network_reduction) == \
        (link, count, gbps * 1e9 / 8, sharp)


@pytest.mark.parametrize(("gpu", "per_node", "node", "system"), [
    ("GeForce RTX 4090", 8, "PCIe 4.0 x16 (no NVLink; P2P not supported)", "rtx4090-8x-pcie"),
    ("GeForce RTX 4090", 8, "P2P: disabled", "rtx4090-8x-pcie"), ("GeForce RTX 4090", 8, "P2P=0", "rtx4090-8x-pcie"),
    ("GeForce RTX 2080 Ti", 2, "PCIe 3.0 x16 via PLX bridge", "rtx2080ti-2x-pcie"),  # not an NVLink bridge
    ("H100 PCIe", 2, "PCIe Gen5", "h100-pcie-2x-nvlink-bridge"),  # PCIe alone does not say there is no bridge
])
def test_link_texts_that_only_resemble_a_bridge_or_p2p_are_read_as_meant(gpu, per_node, node, system):
    assert table_text.system_for(gpu, per_node, "n/a", node_text=node).name == system


def test_a_card_keeps_p2p_off_where_its_link_text_says_so():
    """A card put into a PCIe node of its count takes its driver's P2P rule unless the row says
    otherwise: "PCIe, no P2P" on four L40S cards ran with P2P."""
    assert table_text.system_for("L40S", 4, "n/a", node_text="PCIe, no P2P").p2p is False
    assert table_text.system_for("L40S", 4, "n/a", node_text="PCIe").p2p is True


def test_a_comma_list_in_a_count_is_read_as_its_first_value_and_a_leading_dot_as_a_fraction():
    assert [dp_scaling._int_field({"f": text}, "f") for text in ("128,512", "64,128", "32,768", "1,024")] == \
        [128, 64, 32768, 1024]
    assert dp_scaling._efficiency(".95", "images/s", 1.0, 2, 1.0, 1, 8) == pytest.approx(0.95)


def test_a_negated_sharp_is_off_and_an_unsupported_fabric_refused():
    system = table_text.system_for("A100-SXM4-80GB", 8, "8x 200 Gb/s HDR InfiniBand, SHARP disabled")
    assert system.nic_link.name == "ib-hdr" and system.in_network_reduction == ""
    for network in ("Omni-Path 100 Gb/s", "HPE Slingshot 10 (100 Gb/s)"):
        with pytest.raises(SystemExit, match="inter_node_network: got .*; allowed: a fabric a bundled link"):
            table_text.system_for("A100-SXM4-80GB", 8, network)


@pytest.mark.parametrize(("gpu", "per_node"), [("B200", 4), ("GB200", 8)])
def test_a_module_without_a_node_of_its_count_is_refused_not_put_in_a_pcie_box(gpu, per_node):
    """B200 and GB200 name no form factor: they went into a PCIe box of that count as cards."""
    with pytest.raises(SystemExit, match="gpus_per_node"):
        table_text.system_for(gpu, per_node, "n/a")


@pytest.mark.parametrize(("text", "gpu"), [("DGX H100", "h100-sxm"), ("DGX A100 80GB", "a100-sxm4-80gb")])
def test_a_gpu_named_by_its_dgx_is_the_dgxs_module(text, gpu):
    assert table_text.gpu_for(text) == gpu


@pytest.mark.parametrize(("text", "preset"), [("BERT-large, 1M steps", "bert-large"),
                                              ("GPT-3 1.3B (2B tokens)", "gpt3-1.3b")])
def test_a_count_of_steps_or_tokens_is_not_read_as_the_models_size(text, preset):
    assert table_text.model_for(text) == preset


@pytest.mark.parametrize(("change", "field", "expected"), [
    ({"metric": "images/s per node"}, "efficiency", 1480.0 * 2 / (760.0 * 16 / 8)),  # per node: x nodes
    ({"scaling_efficiency_derived": "94.7"}, "efficiency", 0.947),  # a percentage without its sign
    ({"scaling_efficiency_derived": "~97%"}, "efficiency", 0.97),
    ({"total_gpus": "2x8"}, "gpus", 16), ({"grad_accum_steps": "n/a"}, "accumulation", 1),
    ({"value": "~1,480*"}, "value", 1480.0), ({"value": "1.48k"}, "value", 1480.0),
])
def test_a_rows_fields_are_read_as_tables_write_them(tmp_path, change, field, expected):
    table = tmp_path / "new.csv"
    _write_table(table, "ResNet-50", [(8, 760.0), (16, 1480.0)])
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    for row in rows if "metric" in change else rows[1:]:
        row.update(change)
        if "metric" in change:
            row["scaling_efficiency_derived"] = ""
    _rewrite_table(table, rows)
    unread: list[str] = []
    read = dp_scaling.read_rows(table, text_rules=True, unread=unread)
    assert not unread
    assert getattr(next(row for row in read if row.row_id == "T0002"), field) == pytest.approx(expected)


def test_a_global_batch_in_the_micro_batch_column_is_refused(tmp_path):
    table = tmp_path / "new.csv"
    _write_table(table, "ResNet-50", [(1, 100.0), (8, 760.0)])
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    rows[1]["per_gpu_microbatch"] = "2048 (global)"
    _rewrite_table(table, rows)
    unread: list[str] = []
    dp_scaling.read_rows(table, text_rules=True, unread=unread)
    assert unread and unread[0].startswith("T0002: per_gpu_microbatch: got '2048 (global)'")


@pytest.mark.parametrize(("model", "micro", "expected"), [
    ("BERT-large", "12288 tokens", 32), ("BERT-large", "4K tokens per GPU", 11), ("BERT-large", "100 tok", 1),
    ("BERT-large", "32 [12K tokens]", 32),  # a note that mentions tokens: the batch is still sequences
    ("ResNet-50", "10240 tokens", None),  # no sequence length: refused
])
def test_a_micro_batch_in_tokens_is_that_many_sequences_of_the_rows_length(tmp_path, model, micro, expected):
    """fairseq-style tables give the batch in tokens ("--max-tokens 10240"): read as 10,240
    sequences of 384 tokens, a GPU's step was 384 times too long, and no communication showed."""
    table = tmp_path / "new.csv"
    _write_table(table, model, [(1, 100.0), (8, 760.0)])
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    for row in rows:
        row["per_gpu_microbatch"] = micro
    _rewrite_table(table, rows)
    unread: list[str] = []
    read = dp_scaling.read_rows(table, text_rules=True, unread=unread)
    if expected is None:
        assert not read and unread[0].startswith(f"T0001: per_gpu_microbatch: got {micro!r}; allowed: a count of "
                                                 "samples for a model without a sequence length")
    else:
        assert not unread and [row.micro_batch for row in read] == [expected, expected]


@pytest.mark.parametrize(("field", "text", "number"), [
    ("seq_len_or_input", "1,024", 1024), ("global_batch", "65,536 (computed)", 65536), ("per_gpu_microbatch", "32", 32),
    ("value", "17,815.5", 17815.5), ("value", "1.2e3", 1200.0), ("value", "9119", 9119.0),
])
def test_a_number_with_thousands_separators_is_read_whole(field, text, number):
    """"1,024" was read as 1 (the integer it starts with) and "17,815" was a float() traceback."""
    reader = dp_scaling._number_field if field == "value" else dp_scaling._int_field
    assert reader({field: text}, field) == number


@pytest.mark.parametrize(("field", "text"), [("per_gpu_microbatch", "12.5"), ("value", "1,2"), ("value", "n/a")])
def test_a_field_that_is_not_its_kind_of_number_is_refused_naming_it(field, text):
    reader = dp_scaling._number_field if field == "value" else dp_scaling._int_field
    with pytest.raises(ValueError, match=f"^{field}: got "):
        reader({field: text}, field)


@pytest.mark.parametrize(("text", "unit"), [
    ("Tokens/s (whole job)", "tokens"), ("tok/s", "tokens"), ("words/sec", "tokens"), ("img/sec", "samples"),
    ("images/s per GPU", "samples"), ("Sequences per second", "samples"), ("sentences/s (whole job)", "samples"),
])
def test_a_metric_is_read_by_its_first_word(text, unit):
    """"Tokens/s" was read as samples (only a lower-case "tokens" prefix counted tokens): its
    baseline speed, and --rate's MFU, were off by the sequence length."""
    assert dp_scaling.metric_unit(text) == unit


@pytest.mark.parametrize(("text", "unit", "scale"), [
    ("kTokens/s", "tokens", 1e3), ("k tokens/sec (whole job)", "tokens", 1e3), ("Mtok/s", "tokens", 1e6),
    ("thousand images/s", "samples", 1e3), ("kimg/s per GPU", "samples", 1e3), ("Tokens/s", "tokens", 1.0),
    ("images/s", "samples", 1.0),
])
def test_a_metric_in_thousands_is_read_at_its_scale(text, unit, scale):
    """"kTokens/s" was refused (no unit word), and a reading of it as tokens would have put the
    baseline speed, and --rate's MFU, off by 1,000."""
    assert (dp_scaling.metric_unit(text), dp_scaling.metric_scale(text)) == (unit, scale)


def test_a_baseline_in_ktokens_is_the_same_speed_as_in_tokens():
    row = dp_scaling.read_rows()[0]
    base = dataclasses.replace(row, metric="Tokens/s (whole job)", seq_len=128)
    assert dp_scaling.published_samples_per_s(dataclasses.replace(base, metric="kTokens/s (whole job)"), 4.553) \
        == pytest.approx(dp_scaling.published_samples_per_s(base, 4553.0))


def test_a_baseline_whose_own_framework_text_differs_is_still_its_tables_baseline(tmp_path):
    """BioBERT's one-GPU NER run has no Horovod, and its text says so: the table's multi-GPU rows
    found no baseline (their framework text is part of the table's key) and were all left out."""
    table = tmp_path / "new.csv"
    _write_table(table, "BERT-large", [(1, 100.0), (8, 760.0), (16, 1480.0)])
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    rows[0]["framework_comm"] = "one GPU: no Horovod"
    _rewrite_table(table, rows)
    read = dp_scaling.read_rows(table, text_rules=True)
    assert [dp_scaling.baseline_of(row, read).row_id for row in read[1:]] == ["T0001", "T0001"]
    read[0] = dataclasses.replace(read[0], value=99.0)  # another throughput: not its baseline
    with pytest.raises(SystemExit, match="T0002 has no baseline row"):
        dp_scaling.baseline_of(read[1], read)


@pytest.mark.parametrize(("text", "kind"), [
    ("FP32 [launch not documented: run_biobert.sub hard-codes --use_fp16 --use_xla]", "fp32"),  # a note's word
    ("FP32 master, FP16 compute", "mixed"),
])
def test_a_16_bit_word_makes_fp32_mixed_outside_a_transcribers_note(text, kind):
    assert dp_scaling.precision_kind(text) == kind


@pytest.mark.parametrize(("text", "kind"), [
    ("AMP (FP16)", "mixed"), ("Mixed precision", "mixed"), ("mixed (fp16 AMP)", "mixed"), ("FP32 (--noamp)", "fp32"),
    ("float32", "fp32"), ("TF32 (A100 default math)", "tf32"), ("BFloat16", "bf16"),
    ("bf16 (Composer precision amp_bf16; FSDP mixed_precision DEFAULT)", "bf16"),  # the first word decides
    ("fp16 (--dtype float16; report labels AMP)", "fp16"), ("half", "fp16"),
])
def test_a_precision_text_is_read_by_its_first_word(text, kind):
    """"AMP" was read as FP32: a precision none of the known words starts was run in FP32, silently."""
    assert dp_scaling.precision_kind(text) == kind


@pytest.mark.parametrize(("change", "needle"), [
    ({"per_gpu_microbatch": ""}, "error: T0002: per_gpu_microbatch: got ''; allowed: a text starting with an integer"),
    ({"nodes": "two"}, "error: T0002: nodes: got 'two'"),
    ({"nodes": "2", "total_gpus": "12"}, "error: T0002: total_gpus: got 12; allowed: nodes x gpus_per_node (2 x 8)"),
    ({"precision": "as shipped"}, "error: T0002: precision: got 'as shipped'; allowed: a text naming one of "),
    ({"metric": "throughput"}, "error: T0002: metric: got 'throughput'; allowed: a text naming one of "),
    ({"metric": "tokens/s"}, "error: T0002: metric: got 'tokens/s'; allowed: samples (images, sequences …) for a"),
    ({"inter_node_network": "8x 200 Gb/s RoCE"}, None),  # SHARP leaves with InfiniBand: predicted, no traceback
    ({"framework_comm": "Horovod, one allreduce of the accumulated gradients, WITHOUT no_sync"}, None),
])
def test_a_tables_bad_row_is_left_out_in_one_line_naming_it(tmp_path, capsys, change, needle):
    """The rest of the table is still reported: one unreadable row of a published table does not
    cost the others' check."""
    table = tmp_path / "new.csv"
    _write_table(table, "ResNet-50", [(1, 100.0), (8, 760.0), (16, 1480.0)])
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    for row in rows if "framework_comm" in change else rows[1:2]:  # the framework is part of a table's key
        row.update(change)
    _rewrite_table(table, rows)
    assert dp_scaling.main(["--csv", str(table)]) == 0
    out = capsys.readouterr().out
    if needle is None:
        assert "left out" not in out and "| T1 | 2 |" in out
        return
    assert f"note: left out {needle.removeprefix('error: ')}" in out
    assert "| T1 | 1 |" in out  # the 16-GPU row, still scored


def test_a_table_missing_columns_is_refused_naming_them(tmp_path):
    table = tmp_path / "new.csv"
    table.write_text("row_id,model\nT1,ResNet-50\n", encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        dp_scaling.main(["--csv", str(table)])
    assert str(stopped.value).startswith(f"error: {table}: columns missing: source_id, source, params")


def test_a_tables_own_ids_do_not_take_the_development_sets_rules(tmp_path):
    """A table read by its text keeps its ids: rows labelled S1 or S6 are not given those
    publications' fp16 gradients or per-tensor optimizer."""
    table = tmp_path / "new.csv"
    _write_table(table, "BERT-large", [(1, 100.0), (8, 760.0)])
    text = table.read_text(encoding="utf-8").replace(",T1,", ",S6,")
    table.write_text(text.replace("Horovod with fp16 compression", "PyTorch DDP"), encoding="utf-8")
    rows = dp_scaling.read_rows(table, text_rules=True)
    assert {row.source for row in rows} == {"S6"}
    assert dp_scaling._dtypes(rows[0]) == ("fp16", "fp32") and dp_scaling._optimizer_impl(rows[0]) == "multi-tensor"


def _cli_args(row, breakdown, cluster: str) -> list[str]:
    """The `dpcost iteration` command a user types for the row's configuration."""
    args = ["iteration", "--model", row.model, "--cluster", cluster, "--gpus", str(row.gpus),
            "--nodes", str(max(1, row.gpus // row.gpus_per_node)),
            "--micro-batch", str(row.micro_batch), "--accum", str(row.accumulation),
            "--compute-dtype", breakdown.compute_dtype, "--grad-dtype", breakdown.grad_dtype,
            "--optimizer", breakdown.optimizer, "--optimizer-impl", breakdown.optimizer_impl,
            "--sync", breakdown.sync, "--json"]
    if breakdown.seq_len:
        args += ["--seq-len", str(breakdown.seq_len)]
    if breakdown.sync_each_micro_batch:
        args.append("--sync-each-micro-batch")
    if breakdown.host_reduce:
        args.append("--host-reduce")
    return args


@pytest.mark.parametrize("row_id", ["O0006", "O0030", "O0092", "O0128", "O0185", "O0198", "O0214",
                                    "O0333", "O0384", "O0453",  # O11: GeForce without P2P, A6000, Quadro
                                    "O0231", "O0233", "O0257"])  # 3 cards; 2 professional cards; RTX 3080
def test_the_harness_predicts_what_the_cli_answers_for_the_rows_setup(tmp_path, row_id):
    """The outside set is scored on what a user gets: `dpcost iteration` with the row's setup (its
    node written as a TOML file where the harness derived it: a GPU variant swapped in, the NICs
    the row states) answers the harness's samples/s."""
    import json

    from typer.testing import CliRunner

    from cli import app

    row = next(row for row in OUTSIDE if row.row_id == row_id)
    predicted, breakdown = dp_scaling.predict_throughput(row, row.gpus, row.micro_batch, row.accumulation,
                                                         dp_scaling.SHIPPED)
    system = dp_scaling.system_for(row.gpu_type, row.gpus_per_node, row.inter_node,
                                   sockets=dp_scaling.NCCL_SOCKETS in row.framework)
    cluster = tmp_path / "node.toml"
    cluster.write_text(hardware.standalone_toml(dataclasses.replace(system, name="node-under-test")),
                       encoding="utf-8")
    result = CliRunner().invoke(app, _cli_args(row, breakdown, str(cluster)))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["samples_per_s"] == pytest.approx(predicted, rel=1e-9)



@pytest.mark.parametrize(("text", "preset"), [
    ("Llama-3.1-8B", "llama3-8b"), ("Llama 3.1 70B", "llama3-70b"), ("RN50", "resnet-50"),
    ("LLaMA-7B", "llama-7b"), ("LLaMA 65B", "llama-65b"), ("Llama 2 7B", "llama2-7b"), ("Mistral 7B v0.1", "mistral-7b"),
    ("ViT-B/16", "vit-b-16"), ("RoBERTa-large", "roberta-large"), ("RoBERTa base (125M)", "roberta-base"),
    ("GPT-3 XL (1.3B)", "gpt3-1.3b"), ("GPT-3 Small", "gpt3-125m"), ("GPT-3 Large", "gpt3-760m"),
    ("meta-llama/Llama-2-7b-hf", "llama2-7b"), ("Meta-Llama-3-70B", "llama3-70b"), ("Meta-Llama-3.1-8B", "llama3-8b"),
    ("google/vit-base-patch16-224", "vit-b-16"),
])
def test_an_alias_or_a_newer_preset_is_read_from_a_tables_text(text, preset):
    assert table_text.model_for(text) == preset


@pytest.mark.parametrize(("text", "intra", "per_node", "gpu"), [
    ("A100 80GB", "NVSwitch, NVLink3 600 GB/s per GPU", 8, "a100-sxm4-80gb"),
    ("A100 80GB", "PCIe Gen4", 8, "a100-pcie-80gb"),
    ("A100 80GB", "PCIe Gen4, NVLink bridge between pairs", 8, "a100-pcie-80gb"),  # a bridge joins cards
    ("A100 80GB", "NVLink 600 GB/s; PCIe Gen4 NICs", 8, "a100-sxm4-80gb"),  # NVLink without a bridge: modules
    ("V100 32GB", "NVLink2 hybrid cube-mesh, PCIe 3.0 switches to CPUs and NICs", 8, "v100-sxm2"),  # a DGX-1
    ("A100 40GB", "DGX A100", 8, "a100-sxm4-40gb"),
    ("H100 80GB", "NVSwitch, NVLink4", 8, "h100-sxm"),
    ("V100 32GB HBM2", "NVSwitch", 16, "v100-sxm3-32gb"),  # a technology all its parts share: the node decides
    ("A100 40GB", "p4d.24xlarge", 8, "a100-sxm4-40gb"),  # a cloud instance holds one of the family's parts
    ("P100 16GB HBM2", "NVLink", 8, "p100-sxm2"),
    ("V100 32GB", "NVSwitch", 16, "v100-sxm3-32gb"),  # 16 per node over NVSwitch: DGX-2's SXM3
    ("V100 32GB", "NVLink2 hybrid cube-mesh", 8, "v100-sxm2"),
    ("V100 32GB", "PCIe 3.0", 8, "v100-pcie-32gb"),
    ("A100-SXM4-40GB", "PCIe", 8, "A100-SXM4-40GB"),  # a text naming one profile is kept as written
])
def test_a_gpu_text_without_its_form_is_narrowed_by_the_nodes_link_text(text, intra, per_node, gpu):
    assert table_text.gpu_in_node(text, intra, per_node) == gpu


@pytest.mark.parametrize(("text", "intra", "per_node"), [
    ("A100 80GB", "", 8),  # no link text: the count alone does not tell a module from a card
    ("A100", "NVSwitch", 8),  # the memory is not stated, and no node states it
    ("V100", "NVLink", 8),
    ("A100 80GB", "p4d.24xlarge", 8),  # the instance holds 40 GB parts: it does not settle an 80 GB one
])
def test_a_node_that_does_not_settle_the_gpu_leaves_it_refused(text, intra, per_node):
    with pytest.raises(SystemExit) as stopped:
        table_text.gpu_in_node(text, intra, per_node, row_id="X0011")
    assert str(stopped.value).startswith("error: X0011: gpu_type: got ") and "\n" not in str(stopped.value)


def test_a_row_whose_gpu_text_states_no_form_runs_on_the_node_its_link_text_names(tmp_path):
    table = tmp_path / "new.csv"
    _write_table(table, "BERT-large", [(1, 100.0), (8, 760.0)])
    text = table.read_text(encoding="utf-8").replace("NVIDIA A100-SXM4-80GB", "A100 80GB")
    table.write_text(text, encoding="utf-8")
    unread: list[str] = []
    assert dp_scaling.read_rows(table, text_rules=True, unread=unread) == [] and len(unread) == 2
    with table.open(newline="", encoding="utf-8") as handle:
        records = list(csv.DictReader(handle))
    _rewrite_table(table, [record | {"intra_node_link": "NVSwitch, NVLink3 600 GB/s per GPU"} for record in records])
    rows = dp_scaling.read_rows(table, text_rules=True)
    assert [row.gpu_type for row in rows] == ["a100-sxm4-80gb"] * 2
    assert dp_scaling.system_for(rows[1].gpu_type, 8, rows[1].inter_node).name == "dgx-a100"


def _efficiency_row(tmp_path, metric: str, efficiency: str, value: float) -> list:
    table = tmp_path / "new.csv"
    _write_table(table, "BERT-large", [(1, 100.0), (8, 760.0)])
    with table.open(newline="", encoding="utf-8") as handle:
        records = list(csv.DictReader(handle))
    records[1] |= {"metric": metric, "scaling_efficiency_derived": efficiency, "value": str(value)}
    records[0] |= {"metric": metric}
    _rewrite_table(table, records)
    return dp_scaling.read_rows(table, text_rules=True)


@pytest.mark.parametrize(("metric", "efficiency", "value", "expected"), [
    ("sequences/s (whole job)", "", 760.0, 0.95),  # not stated: derived as the sources derive it
    ("sequences/s per GPU", "", 95.0, 0.95),  # a per-GPU metric is already divided by N
    ("samples/s/GPU", "", 95.0, 0.95),
    ("sequences/s (whole job)", "95%", 760.0, 0.95),  # a percentage read as one
    ("sequences/s (whole job)", "0.9", 760.0, 0.9),  # a stated fraction is the source's, kept
    ("sequences/s (whole job, 32 per GPU)", "", 760.0, 0.95),  # "per GPU" elsewhere in a whole job's metric
])
def test_a_rows_efficiency_is_stated_or_derived_from_its_throughput(tmp_path, metric, efficiency, value, expected):
    rows = _efficiency_row(tmp_path, metric, efficiency, value)
    assert rows[1].efficiency == pytest.approx(expected)


def test_a_row_whose_throughput_is_not_above_zero_is_left_out_with_its_line(tmp_path):
    table = tmp_path / "new.csv"
    _write_table(table, "BERT-large", [(1, 100.0), (8, 760.0)])
    with table.open(newline="", encoding="utf-8") as handle:
        records = list(csv.DictReader(handle))
    records[0] |= {"value": "0", "scaling_efficiency_derived": ""}  # a zero: no run
    records[1] |= {"baseline_value": "0", "scaling_efficiency_derived": ""}  # the efficiency left blank
    _rewrite_table(table, records)
    unread: list[str] = []
    assert dp_scaling.read_rows(table, text_rules=True, unread=unread) == []
    assert unread[0].startswith("T0001: value: got '0'; allowed: a throughput above 0")
    assert unread[1].startswith("T0002: baseline_value: got '0'; allowed: a throughput above 0")


def test_a_per_gpu_metric_is_the_whole_jobs_throughput_divided_by_its_gpus(tmp_path):
    rows = _efficiency_row(tmp_path, "sequences/s per GPU", "", 95.0)
    assert dp_scaling.published_samples_per_s(rows[1], rows[1].value) == pytest.approx(760.0)
    assert dp_scaling.published_samples_per_s(rows[0], rows[0].value) == pytest.approx(100.0)
