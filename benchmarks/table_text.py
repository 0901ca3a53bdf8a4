"""What a row of a published scaling table names, read as dpcost's inputs: the model, the GPU,
the node and its network.

A table's text spells these as its authors do ("ResNet-50 v1.5", "Tesla V100-SXM2-16GB",
"8x 200 Gb/s HDR InfiniBand per node"). These rules read any such row, not only the tables the
model was checked on, so a table dpcost has never seen runs through ``benchmarks/dp_scaling.py
--csv`` as it is written; what cannot be read stops with one line naming the row's field, its
text and what is allowed.

* **model**: the preset (or a ``models/<name>.toml`` file beside the table) whose name the text
  starts with, comparing words (case, dashes and spaces aside; "ResNet-50 v1.5" is ``resnet-50``,
  "InceptionV3" ``inception-v3``); the longest such name. A preset's aliases (models.toml
  ``[aliases]``: "Llama-3.1-8B", "RN50", "GPT-3 XL") read as the preset. A Hugging Face id's
  organisation ("meta-llama/Llama-2-7b-hf") and a leading "Meta" ("Meta-Llama-3-70B") are the
  publisher's, not the model's name.
* **GPU**: the bundled GPU profile whose name's words the text starts with (vendor words such as
  "Tesla" and "NVIDIA" aside; not where the next word names another part: "RTX 3090 Ti"), with the
  memory it states; else the GPU family (its first word with a digit: "A100") narrowed by the form
  factor (SXM, PCIe) and the memory stated, which must leave one profile. Where the text states
  no form factor, the row's intra-node link text may: NVSwitch, NVLink, SXM, HGX or DGX a module,
  PCIe or an NVLink bridge a card; and among modules of one memory size, the one a bundled node
  holds that many of ("V100 32GB" sixteen to a node over NVSwitch: DGX-2's SXM3). The count alone
  never tells a module from a card, nor a node an unstated memory size. A memory technology the
  text names narrows a family whose parts differ in it ("NVIDIA H100 80GB HBM3", nvidia-smi's name
  for the SXM5 module; the PCIe card has HBM2e). A GPU count before the GPU ("8x A100-SXM4-40GB")
  is not part of its name; a system named with its GPUs in parentheses ("DGX A100 (8x A100 40GB)")
  is read by the parenthesis, the system's name taken as node text. A bundled cloud instance the
  row names, in its GPU, link or network text, settles a family it holds one part of ("V100
  (p3.16xlarge)" is the 16 GB SXM2; "A100 40GB" with "100 Gbps (a2-highgpu-8g)" the SXM4 module).
* A parameter count stated in the model text or the params column ("GPT-2 (1.5B)") must be the
  model's, within 15 %.
* **node**: a bundled cloud instance or site machine the row's GPU, link or network text names
  ("p4d.24xlarge", "ND H100 v5", "BM.GPU4.8", "Perlmutter"), whole, with its own NICs; else
  a bundled system with that many GPUs per node of the same GPU family and form factor, the one
  the row's link text agrees with first (an NVLink bridge, P2P on or off), then NVIDIA's reference
  node (a DGX), then one of exactly that GPU; the row's GPU swapped in.
  A PCIe card no such node holds (T4, A10, A100 PCIe) goes into a bundled PCIe node of that count,
  with its own PCIe generation between the GPUs, or, where none holds that count (three cards),
  runs on that many GPUs of the smallest one that holds more; an SXM or OAM module (by its name,
  or a GPU only bundled boards hold: B200, GB200) without a node of its count is refused.
* **network**: the NICs a text states (:func:`stated_network`: "8x 200 Gb/s HDR InfiniBand",
  "25GbE", "4x EDR", "400 Gbps EFA"), and their kind: InfiniBand, RoCE and EFA by their rate's
  bundled link, plain Ethernet (no RDMA) by its ``eth-<rate>g`` link (kernel TCP), NCCL told off
  InfiniBand (``NCCL_IB_DISABLE=1``) by the ``tcp-sockets`` link; SHARP leaves with InfiniBand
  (or where the text says "SHARP disabled"). A rate may be written "25 Gb", "100 Gbit", "10
  Gigabit"; a NIC count before the rate ("8x") or after it ("x 8", "(8 per node)"). What a text
  negates ("no InfiniBand", "IB disabled") is not read as stated, in link texts too ("PCIe, no
  NVLink"). Slingshot-11 reads as its 200 Gb/s link; a fabric no bundled link stands for
  (Omni-Path, Slingshot-10) is refused. A row that
  states neither a rate nor a fabric keeps its node's network.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path

import hardware
from costmodel.training.workloads import load_model, model_aliases, model_names, parse_param_count

VENDOR_WORDS = frozenset({"nvidia", "tesla", "amd", "instinct", "geforce", "radeon"})
# A GPU count written before the GPU ("8x A100-SXM4-40GB", "4xV100 16GB", "8 × H100"): the
# gpus_per_node column's business, not the part's name.
GPU_COUNT_PREFIX = re.compile(r"^\s*\d+\s*[x×]\s*", re.IGNORECASE)
# Memory technologies a GPU text may name: where a family's parts differ in it, it names the part
# ("NVIDIA H100 80GB HBM3", nvidia-smi's name for the SXM5 module; the PCIe card has HBM2e). A
# profile's technology is the one its description names.
MEMORY_TECHNOLOGIES = frozenset({"hbm2", "hbm2e", "hbm3", "hbm3e", "gddr5", "gddr5x", "gddr6", "gddr6x"})
# A model text may carry its publisher before the name: a Hugging Face id's organisation
# ("meta-llama/Llama-2-7b-hf") or the vendor word of a release name ("Meta-Llama-3-70B").
MODEL_ORGANISATION = re.compile(r"^\s*(meta-llama|facebook|google|mistralai|openai-community|openai|eleutherai|"
                                r"mosaicml|bigscience|microsoft|nvidia|tiiuae)/", re.IGNORECASE)
MODEL_VENDOR_WORDS = frozenset({"meta"})
# A version written onto a model's number ("resnet50v1.5", DeepLearningExamples' own directory name;
# "ResNet-50v1.5"): the version is a word of its own, as in "ResNet50 v1.5".
GLUED_VERSION = re.compile(r"(?<=\d)(?=v\d)", re.IGNORECASE)
FORM_FACTORS = ("sxm", "pcie", "nvl", "oam")
NCCL_SOCKETS = "NCCL_IB_DISABLE=1"
SOCKETS_LINK = "tcp-sockets"
# A line rate as sources write it: "200 Gb/s", "100 Gb/sec", "400 Gbps", "25GbE", "100G", "12.5 Gbit/s",
# "3.2 Tb/s"; and a NIC count before it: "8x", "8 x", "8×" (none stated: one NIC). A whole number
# only, and not a machine type's suffix ("a3-megagpu-8g" is no 8 Gb/s).
RATE = re.compile(r"(?<![\d.])(?<![a-z]-)(\d+(?:\.\d+)?)\s*-?\s*(tb/s|tbps|tbit/s|gb/s(?:ec)?|gbps|gbit/s|gbits?|gigabits?|gbe|(?-i:[Gg]b)|g)"
                  r"(?![a-z])", re.IGNORECASE)  # a bare "Gb" is bits; "GB" is bytes, a memory size ("A100 80GB")
COUNT = re.compile(r"(?<![a-z\d.])(\d+)\s*[x×](?![a-z0-9])", re.IGNORECASE)  # not a rate's digits ("NDR400 x 8")
# An InfiniBand port's lane width, not a count: "4X EDR" (IBTA's capital X, four lanes to one port).
LANE_WIDTH = re.compile(r"\b(?:4|12)X\s*(?=(?i:fdr|edr|hdr|ndr|xdr)\b)")
# A rate in bytes ("25 GB/s", "12.5 GBps": capital B), eight times the Gb/s.
BYTES_UNIT = re.compile(r"GB/s(?:ec)?|GBps")
# A NIC count written after the rate: "x 8", "(8 per node)", "8 NICs", "8 ports", "8 adapters".
COUNT_AFTER = re.compile(r"^\s*\)?\s*(?:[a-z][\w-]*\s+){0,3}?[x×]\s*(\d{1,2})\b"  # right after the rate: "HDR InfiniBand x 8", "x8"
                         r"|\(\s*(\d+)\s*(?:(?:nics?|hcas?|adapters?)\s+)?per\s+node\s*\)"  # "(8 per node)"
                         r"|\b(\d+)[\s-]+(?:nics?|hcas?|adapters?|rails?)\b", re.IGNORECASE)  # "8 NICs", "8-rail"
NIC_COUNT = re.compile(r"\b(\d{1,2})[\s-]+(?:nics?|hcas?|adapters?|rails?)\b", re.IGNORECASE)  # anywhere: "8 HCAs, HDR"
# A count in words, before the rate or the fabric: "dual-rail EDR", "dual 25GbE", "eight 200 Gb/s".
COUNT_WORDS = {"single": 1, "dual": 2, "two": 2, "quad": 4, "four": 4, "eight": 8, "sixteen": 16}
COUNT_WORD = re.compile(rf"\b({'|'.join(COUNT_WORDS)})(?=[\s-]+(?:\d|(?:rails?|ports?|nics?|hcas?|adapters?|fdr|edr|"
                        r"hdr|ndr|xdr|infiniband|ib|roce|efa|ethernet|gbe)\b))", re.IGNORECASE)
# NICs one per GPU: "200 Gb/s HDR per GPU", "400G per GPU (NDR)".
PER_GPU_NIC = re.compile(r"\bper[\s-]+gpu\b|/\s*gpu\b", re.IGNORECASE)
# A gigabit Ethernet written without its number ("Gigabit Ethernet", "GbE"): one gigabit.
BARE_GIGABIT = re.compile(r"(?<![\d.\s])\s*\b(?:gigabit|gbe)\b|^\s*(?:gigabit|gbe)\b", re.IGNORECASE)
# The bundled link of each fabric by line rate (Gb/s, per NIC); links.toml.
FABRIC_LINKS = {"infiniband": {100: "ib-edr", 200: "ib-hdr", 400: "ib-ndr", 800: "ib-xdr"},
                "roce": {100: "roce-100", 200: "roce-200", 400: "roce-400"},
                "efa": {100: "efa", 200: "efa-v3", 400: "efa-v4"},
                "slingshot": {200: "slingshot-11"}}
# A fabric's words (whole words), first match wins; InfiniBand generations name their rate.
FABRIC_WORDS = (("ethernet", re.compile(r"\bipoib\b|\bip\s+over\s+(?:infiniband|ib)\b", re.IGNORECASE)),  # kernel TCP
                ("roce", re.compile(r"\broce(v2)?\b|\bspectrum[\s-]*x\b", re.IGNORECASE)),  # Spectrum-X is RoCE
                ("efa", re.compile(r"\befa(v\d)?\b|elastic fabric adapter", re.IGNORECASE)),
                ("slingshot", re.compile(r"\bslingshot(?:[\s-]*11)?\b|\bcassini\b", re.IGNORECASE)),  # HPE's, Ethernet-based
                ("infiniband", re.compile(r"\b(infiniband|ib|(fdr|edr|hdr|ndr|xdr)(\d{2,4})?)\b", re.IGNORECASE)),
                ("ethernet", re.compile(r"\b(ethernet|tcp|\d+\s*gbe)\b|\dgbe\b", re.IGNORECASE)))
IB_GENERATION_GBPS = {"fdr": 56, "edr": 100, "hdr": 200, "ndr": 400, "xdr": 800}
# InfiniBand hardware that names its generation's rate where the text names no rate nor generation:
# switches (Quantum HDR, Quantum-2 NDR, Quantum-X800 XDR) and ConnectX adapters (5 EDR, 6 HDR, 7 NDR).
IB_HARDWARE_GBPS = ((re.compile(r"\bquantum[\s-]*x800\b", re.IGNORECASE), 800.0),
                    (re.compile(r"\bquantum[\s-]*2\b|\bconnectx[\s-]*7\b|\bcx-?7\b", re.IGNORECASE), 400.0),
                    (re.compile(r"\bquantum\b(?![\s-]*(?:2|x))|\bconnectx[\s-]*6\b|\bcx-?6\b", re.IGNORECASE), 200.0),
                    (re.compile(r"\bconnectx[\s-]*5\b|\bcx-?5\b", re.IGNORECASE), 100.0))
SHARP = re.compile(r"\bsharp(?:v\d)?\b", re.IGNORECASE)
# Fabrics no bundled link stands for: a row naming one is refused, not run on InfiniBand with SHARP.
# Slingshot-11 (200 Gb/s Cassini NICs) has its link; Slingshot-10 (100 Gb/s ConnectX NICs) has
# none. A site whose nodes are on Slingshot and whose node no bundled system is names that
# fabric too ("Frontier", "LUMI", "Aurora"); Perlmutter's, Polaris's, Alps's and Isambard-AI's
# nodes are bundled and named by their profiles (``instance_names``).
UNSUPPORTED_FABRICS = re.compile(r"\b(omni-?path|opa|slingshot[\s-]*10|tofu|myrinet|nvlink\s+switch\s+system|"
                                 r"frontier|lumi|aurora|el\s+capitan)\b", re.IGNORECASE)
# Words after a GPU's name that make it another part ("RTX 3090 Ti", "H100 NVL", "RTX 4090 D",
# "H20-3e": nvidia-smi's name for the 141 GB H20, not bundled).
QUALIFIERS = frozenset({"ti", "super", "d", "nvl", "max", "mobile", "laptop", "3e"})
# A word naming the generation of a part that shares its number with an older one: "RTX 6000" or
# "Quadro RTX 6000" is the Turing card, not the RTX 6000 Ada (whose family reading needs "Ada").
GENERATION_WORDS = frozenset({"ada"})
# The other way round, a text's own words: an architecture it names must be the part's ("RTX PRO
# 6000 Blackwell" is not the Turing card), and so must a product line ("RTX PRO 6000" is neither
# bundled 6000).
LINE_WORDS = frozenset({"pro"})
# A parameter count in a model's text or params column: "1.5B", "345M", "25.6M".
PARAM_COUNT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([mb])(?![a-z])(?!\s*(?:steps?|tokens?|samples?|images?|"
                         r"sequences?|sentences?|iterations?|iters?|epochs?|examples?|words?)\b)", re.IGNORECASE)
# (a count of something else is not the model's size: "BERT-large, 1M steps", "GPT-3 1.3B (2B tokens)")
PARAM_TOLERANCE = 0.15  # a stated count this far from the preset's names another model


def words(text: str) -> list[str]:
    """Lower-case words of ``text`` (letters and digits; a dot inside a number kept: "1.3b")."""
    return re.findall(r"[a-z0-9]+(?:\.[0-9]+[a-z]*)?", text.lower())


def _starts_with(text_words: list[str], name_words: list[str]) -> bool:
    """Whether the text's words begin with the name's, spacing aside: "InceptionV3" is
    ``inception-v3`` and "ResNet50" ``resnet-50``; "ResNet-101" is not ``resnet-10``."""
    joined, name = "".join(text_words), "".join(name_words)
    if not joined.startswith(name):
        return False
    # the name must end where one of the text's words ends
    ends, position = set(), 0
    for word in text_words:
        position += len(word)
        ends.add(position)
    return len(name) in ends


def unreadable(field: str, text: str, allowed: str, row_id: str = "") -> SystemExit:
    where = f"{row_id}: " if row_id else ""
    return SystemExit(f"error: {where}{field}: got {text!r}; allowed: {allowed}")


def model_for(text: str, models_dir: Path | None = None, row_id: str = "", params_text: str = "") -> str:
    """The preset name, or the path of a ``models_dir/<name>.toml`` file, that ``text`` names; a
    parameter count stated in ``text`` or ``params_text`` (the row's params column) must be its."""
    candidates = {name: name for name in model_names()} | model_aliases()
    if models_dir is not None and models_dir.is_dir():
        candidates.update({path.stem: str(path) for path in sorted(models_dir.glob("*.toml"))})
    text_words = words(GLUED_VERSION.sub(" ", MODEL_ORGANISATION.sub("", text)))
    while text_words[:1] and text_words[0] in MODEL_VENDOR_WORDS:
        text_words = text_words[1:]
    found = [name for name in candidates if _starts_with(text_words, words(name))]
    if not found:
        files = f" or a file {models_dir}/<name>.toml" if models_dir is not None else ""
        raise unreadable("model", text, f"a text starting with a preset's name ({', '.join(sorted(model_names()))}){files}",
                         row_id)
    name = max(found, key=lambda name: len("".join(words(name))))
    rest_words = text_words[_words_taken(text_words, words(name)):]  # what the text says beyond the name
    _check_backbone(candidates[name], text, rest_words, row_id)
    _check_whole_model(candidates[name], text, rest_words, row_id)
    _check_stated_size(candidates[name], text, " ".join(rest_words), params_text, row_id)
    return candidates[name]


# Words after a model's name that make the run another one: adapters trained instead of the
# weights (LoRA, QLoRA: only the adapters are all-reduced), or a classifier as the backbone of a
# detector or segmenter ("ResNet-34 SSD", "ResNet-50 FPN", "Mask R-CNN R-50").
ADAPTER_WORDS = frozenset({"lora", "qlora", "dora", "peft", "adapter", "adapters", "ia3"})
HEAD_WORDS = frozenset({"ssd", "rcnn", "retinanet", "fpn", "yolo", "yolov3", "deeplab", "deeplabv3", "unet", "fcn",
                        "detr", "maskrcnn", "fasterrcnn", "detection", "segmentation", "detector"})
# Small-image datasets: their ResNets are other networks (a 3x3 stem at 32x32, no max pool).
SMALL_IMAGE_WORDS = frozenset({"cifar", "cifar10", "cifar100", "mnist", "svhn", "stl10"})


def _check_whole_model(model: str, text: str, rest_words: list[str], row_id: str) -> None:
    """Refuses a text whose words after the model's name say it trains something else than the
    whole preset: adapters ("Llama-2-7b LoRA"), or a detection or segmentation network built on
    a classifier preset ("ResNet-34 SSD")."""
    rest = set(rest_words) | {f"{a}{b}" for a, b in zip(rest_words, rest_words[1:])}  # "R-CNN" as "rcnn"
    adapter = sorted(ADAPTER_WORDS & rest)
    if adapter:
        raise unreadable("model", text, f"full-parameter training of a preset ({adapter[0]!r}: only the adapters "
                         "are all-reduced; a model file with their parameters and the base model's FLOPs)", row_id)
    workload = load_model(model)
    small = sorted(SMALL_IMAGE_WORDS & rest)
    if small and workload.kind == "cnn":
        raise unreadable("model", text, f"the {Path(model).stem} preset at its {workload.image_size}x"
                         f"{workload.image_size} input ({small[0]!r} trains another network on small images)", row_id)
    head = sorted(HEAD_WORDS & rest)
    if head and workload.kind == "cnn" and not workload.backbone:
        raise unreadable("model", text, f"the {Path(model).stem} classifier ({head[0]!r} names a network built "
                         "on it)", row_id)


def _check_backbone(model: str, text: str, rest_words: list[str], row_id: str) -> None:
    """A model built on a backbone (SSD300 on ResNet-50) whose text names another CNN preset after
    its name ("SSD300 (ResNet-34 backbone)", MLPerf's) is another model: refused, not run on the
    preset's backbone. Only a classifier can be a backbone: a detector named beside it ("SSD320 …,
    not SSD300") is not read as one."""
    backbone = load_model(model).backbone
    if not backbone:
        return
    cnns = [name for name in model_names() if load_model(name).kind == "cnn" and not load_model(name).backbone]
    cnns += [alias for alias, preset in model_aliases().items() if preset in cnns]
    for start in range(len(rest_words)):
        named = [name for name in cnns if _starts_with(rest_words[start:], words(name))]
        other = [name for name in named if load_model(name).name != backbone]
        if other and not any(load_model(name).name == backbone for name in named):
            raise unreadable("model", text, f"{Path(model).stem} with its own backbone ({backbone}); "
                             f"{max(other, key=len)!r} names another model", row_id)


def _stated_params(text: str) -> int | None:
    """The parameter count the text states, read as ``--model 1.5B`` reads one."""
    found = PARAM_COUNT.search(text)
    return None if found is None else parse_param_count(found.group(0).replace(" ", ""))


def _check_stated_size(model: str, text: str, rest: str, params_text: str, row_id: str) -> None:
    """A parameter count the row states (in its model text beyond the model's name, ``rest``, or
    in its params column) must be the model's: "GPT-2 (1.5B)" is not the 124M ``gpt2``."""
    params = load_model(model).params
    for field, shown, stated_text in (("model", text, rest), ("params", params_text, params_text)):
        stated = _stated_params(stated_text)
        if stated is not None and abs(stated / params - 1) > PARAM_TOLERANCE:
            raise unreadable(field, shown, f"the {params / 1e6:,.1f}M parameters of {Path(model).stem} "
                             f"(within {PARAM_TOLERANCE:.0%}), or a model file of that size beside the table", row_id)


@functools.cache
def _gpus() -> tuple:
    return tuple(hardware.list_profiles("gpu"))


@functools.cache
def _systems() -> tuple:
    return tuple(hardware.list_profiles("system"))


@functools.cache
def _families() -> frozenset:
    """The bundled GPUs' families (:func:`_family`)."""
    return frozenset(_family(words(gpu.name)) for gpu in _gpus())


def _form(name_words: list[str]) -> str | None:
    return next((form for word in name_words for form in FORM_FACTORS if word.startswith(form)), None)


def _memory_gb(text_words: list[str]) -> int | None:
    """The memory size the text states in GB ("80GB", "80 GB", "80G", "80GiB"), if it states
    exactly one."""
    units = ("gb", "g", "gib")
    joined = [f"{word}gb" if following in units and word.isdigit() else word  # "80 GB" as "80GB"
              for word, following in zip(text_words, [*text_words[1:], ""])]
    sizes = {int(re.match(r"\d+", word).group()) for word in joined if re.fullmatch(r"\d+(gb|g|gib)", word)}
    return sizes.pop() if len(sizes) == 1 else None


def _memory_matches(gpu, memory: int | None) -> bool:
    # a profile's memory is what the driver shows (e.g. 79.2 GiB of an 80 GB part)
    return memory is None or abs(gpu.memory_bytes / 2**30 - memory) <= 0.12 * memory


def gpu_for(text: str, row_id: str = "", intra_node: str = "", gpus_per_node: int | None = None,
            network: str = "") -> str:
    """The bundled GPU profile ``text`` names (see the module docstring); a text that leaves more
    than one profile (a family without its variant: "V100") or names another part ("RTX 3090 Ti")
    is refused. ``intra_node`` (the row's link text) and ``gpus_per_node`` narrow a family the
    text leaves open (:func:`_narrowed_by_node`): "A100 80GB" over NVSwitch is the SXM4 module.
    ``network`` (the row's network text) is read only for a cloud instance it names, which holds
    one part ("A100 40GB" with "400 Gbps EFA (p4d.24xlarge)" is the SXM4 module)."""
    try:
        return _gpu_named(text, row_id, intra_node, gpus_per_node, network)
    except SystemExit as refused:
        # a system named with its GPUs in parentheses ("DGX A100 (8x A100 40GB)"): the parenthesis
        # is the GPU text, and the system's name is node text ("DGX": modules). Only where the
        # outer text names no family, or the same one without a part of its own ("H100 NVL (…)",
        # "RTX 3090 Ti (…)" say which part they are).
        inner = re.fullmatch(r"(.*?)\(([^()]*)\)\s*", text)
        outer = inner and _gpu_words(inner.group(1))
        families = _families()
        number = _number_word(outer) if inner else None  # "H100" of "H100 NVL (…)": its qualifier is checked below
        outer_family = number if number in families else None  # "p4d.24xlarge": none
        if (inner is None or _family(_gpu_words(inner.group(2))) not in families
                or (outer_family is not None and (outer_family != _family(_gpu_words(inner.group(2)))
                                                  or _form(outer) or QUALIFIERS & set(outer)))):
            raise
        try:
            return _gpu_named(inner.group(2), row_id, f"{inner.group(1)} {intra_node}", gpus_per_node, network)
        except SystemExit:
            raise refused from None  # the row's own text, quoted as written


def _gpu_words(text: str) -> list[str]:
    """A GPU text's words, a count before it ("8x") and vendor words aside."""
    return [word for word in words(GPU_COUNT_PREFIX.sub("", text)) if word not in VENDOR_WORDS]


def _named_profile(text_words: list[str]):
    """(the longest bundled GPU whose name the words start with, the words after it), or None."""
    named = [gpu for gpu in _gpus() if _starts_with(text_words, words(gpu.name))]
    if not named:
        return None
    gpu = max(named, key=lambda gpu: len(gpu.name))
    return gpu, text_words[_words_taken(text_words, words(gpu.name)):]


def _gpu_named(text: str, row_id: str, intra_node: str, gpus_per_node: int | None, network: str = "") -> str:
    """:func:`gpu_for` of one GPU text (no parenthesis read apart)."""
    text_words = _gpu_words(text)
    gpus = _gpus()
    product = [gpu for gpu in gpus if any(_starts_with(text_words, words(name)) for name in gpu.product_names)]
    if len(product) == 1:  # "NVIDIA GH200 120GB": a size that is not the GPU's own memory
        return product[0].name
    memory = _memory_gb(text_words)
    found = _named_profile(text_words)
    if found:
        gpu, after = found
        if after and after[0] in QUALIFIERS:
            raise unreadable("gpu_type", text, f"a bundled GPU: {gpu.name} is not {text!r} ({after[0]!r} names "
                             "another part)", row_id)
        if _memory_matches(gpu, memory):
            return gpu.name
    family = _family(text_words)
    same = [gpu for gpu in gpus if family and _family(words(gpu.name)) == family
            and all(word in text_words for word in words(gpu.name) if word in GENERATION_WORDS)
            and all(word == gpu.arch for word in text_words if word in hardware.profiles.ARCHITECTURES)
            and all(word in words(gpu.name) for word in text_words if word in LINE_WORDS)]
    form = _form(text_words)
    if form:
        same = [gpu for gpu in same if _form(words(gpu.name)) == form]
    same = [gpu for gpu in same if _memory_matches(gpu, memory)]
    technology = next((word for word in text_words if word in MEMORY_TECHNOLOGIES), None)
    told = [gpu for gpu in same if technology in words(gpu.description)] if technology else []
    if len(same) > 1 and told:  # only where the family's parts name theirs (V100s all have HBM2)
        same = told  # it names the part as a form factor would ("HBM3" as "SXM5"): a text naming one wins
    if len(same) > 1 and not form:  # the GPU text's own board words count as node text ("DGX H100")
        same = _narrowed_by_node(same, f"{' '.join(text_words)} {intra_node}", gpus_per_node)
    if len(same) > 1:  # a cloud instance the row names holds one of them ("V100 (p3.16xlarge)")
        held = {system.gpu.name for system in _instances_named(f"{text} {intra_node} {network}")}
        same = [gpu for gpu in same if gpu.name in held] or same
    if len(same) != 1:
        listed = ", ".join(gpu.name for gpu in (same or gpus))
        raise unreadable("gpu_type", text, "a text naming one bundled GPU, with its form factor and memory where "
                         f"the family has several ({listed})", row_id)
    return same[0].name


# What a node's link text says of its GPUs' form factor (:func:`_node_form`): boards only modules
# sit on, and NVLink, which joins cards only through a bridge.
BOARD_WORDS = ("nvswitch", "sxm", "hgx", "dgx")
MODULE_WORDS = (*BOARD_WORDS, "nvlink")


def _node_form(intra_node: str) -> str | None:
    """The form factor a row's intra-node link text implies, if any: an NVLink bridge joins cards
    (unless the text also names a module's board); NVLink otherwise, NVSwitch, SXM, HGX or DGX
    mean modules, whatever else the text says of PCIe (a DGX-1's "NVLink hybrid cube-mesh, PCIe
    switches to the NICs"); PCIe alone means cards."""
    text_words = words(affirmed(intra_node))
    def says(prefixes) -> bool:
        return any(word.startswith(prefixes) for word in text_words)

    if says("bridge") or _stated(NVLINK_BRIDGE, intra_node) is not None:
        # an NVLink bridge, even one the text says is off, is a card's
        return None if says(BOARD_WORDS) else "pcie"
    if says(MODULE_WORDS):
        return "sxm"
    return "pcie" if says("pcie") else None


def _narrowed_by_node(gpus: list, intra_node: str, gpus_per_node: int | None) -> list:
    """``gpus`` (one family, the text stating no form) narrowed by what the node says: the form
    its link text implies (an SXM module is any non-PCIe part); then, where several parts of that
    form and of one memory size remain, those a bundled system holds ``gpus_per_node`` of (16 V100
    32GB over NVSwitch: DGX-2's SXM3). Unchanged where the link text implies no form: the count
    alone does not tell a module from a card, nor does any node tell an unstated memory size."""
    form = _node_form(intra_node)
    if form is None:
        return gpus
    gpus = [gpu for gpu in gpus if (_form(words(gpu.name)) == "pcie") == (form == "pcie")] or gpus
    one_size = all(_memory_matches(gpu, round(gpus[0].memory_bytes / 2**30)) for gpu in gpus)
    if len(gpus) > 1 and one_size and gpus_per_node is not None:
        held = {system.gpu.name for system in _systems() if system.gpus_per_node == gpus_per_node}
        gpus = [gpu for gpu in gpus if gpu.name in held] or gpus
    return gpus


def gpu_in_node(text: str, intra_node: str, gpus_per_node: int, row_id: str = "", network: str = "") -> str:
    """A row's GPU text as the harness carries it: the text itself where it names one profile
    alone, else the profile its node (or a cloud instance its network text names) narrows it to
    (:func:`gpu_for`)."""
    try:
        gpu_for(text, row_id)
        return text
    except SystemExit:
        return gpu_for(text, row_id, intra_node, gpus_per_node, network)


def _words_taken(text_words: list[str], name_words: list[str]) -> int:
    """How many of the text's words the name (which the text starts with) spans."""
    length, count = len("".join(name_words)), 0
    while length > 0:
        length -= len(text_words[count])
        count += 1
    return count


def _number_word(name_words: list[str]) -> str | None:
    """A name's first word with a digit ("h100" of "H100 NVL")."""
    return next((word for word in name_words if re.search(r"\d", word)), None)


def _family(name_words: list[str]) -> str | None:
    """A GPU's family: its first word with a digit ("a100" of A100-SXM4-40GB, "3090" of RTX 3090),
    with a qualifier written apart after it ("1080 Ti" is the "1080ti" of gtx-1080ti; "RTX 3090 Ti"
    is no RTX 3090)."""
    at = next((i for i, word in enumerate(name_words) if re.search(r"\d", word)), None)
    if at is None:
        return None
    glued = at + 1 < len(name_words) and name_words[at + 1] in QUALIFIERS
    return name_words[at] + name_words[at + 1] if glued else name_words[at]


def _family_and_form(gpu) -> tuple[str | None, str | None]:
    name_words = words(gpu.name)
    return _family(name_words), _form(name_words)


# What a link text may say of a node: an NVLink bridge (not a PLX or host bridge), peer-to-peer.
NVLINK_BRIDGE = re.compile(r"nvlink[\w\s-]{0,12}bridge|bridged", re.IGNORECASE)
P2P = re.compile(r"\bp2p\b|peer-to-peer", re.IGNORECASE)
# A switched NVLink node ("NVSwitch", "NVLink Switch"); a node without one is a mesh or cards.
NVSWITCH = re.compile(r"nv[\s-]?switch|nvlink[\s-]+switch", re.IGNORECASE)


def _stated(pattern: re.Pattern, text: str) -> bool | None:
    """Whether ``text`` says the thing ``pattern`` names is there (True), says it is not ("no P2P",
    "P2P not supported", "no NVLink bridge": False), or says nothing of it (None)."""
    if pattern.search(affirmed(text)):
        return True
    return False if pattern.search(text) else None


def _disagrees(system, node_text: str) -> bool:
    """Whether a node's link text says otherwise of ``system``: an NVLink bridge it lacks, or has
    where the text says there is none; peer-to-peer the text says is on or off; NVSwitch it lacks
    (a mesh such as DGX-1's, cards), or has where the text says there is none."""
    bridge, p2p, switch = (_stated(pattern, node_text) for pattern in (NVLINK_BRIDGE, P2P, NVSWITCH))
    return ((bridge is not None and bridge != (system.intra_fabric == "nvlink-bridge"))
            or (p2p is not None and p2p != system.p2p)
            or (switch is not None and switch != (system.intra_fabric == "nvswitch")))


def _is_module(gpu) -> bool:
    """Whether a GPU is a module on a board (SXM, OAM), not a card: its name says so, or, naming no
    form, bundled boards hold it and no PCIe node does (B200, GB200)."""
    form = _form(words(gpu.name))
    if form is not None:
        return form != "pcie"
    holders = [system for system in _systems() if system.gpu.name == gpu.name]
    return bool(holders) and all(system.intra_fabric not in ("pcie", "nvlink-bridge") for system in holders)


def base_system_for(gpu_name: str, gpus_per_node: int, row_id: str = "", node_text: str = ""):
    """The bundled node for ``gpus_per_node`` of the GPU ``gpu_name`` (module docstring);
    ``node_text``, the row's link text, picks among kin nodes (an NVLink bridge, P2P on or off)."""
    gpu = hardware.load_gpu(gpu_name)
    systems = [system for system in _systems() if system.gpus_per_node == gpus_per_node]
    kin = [system for system in systems if _family_and_form(system.gpu) == _family_and_form(gpu)]
    if kin and all(_disagrees(system, node_text) for system in kin) and not _is_module(gpu) \
            and any(system.intra_fabric == "pcie" for system in systems):
        kin = []  # a card whose link text no kin node agrees with ("no NVLink bridge"): a PCIe node of that count
    if kin and all(_disagrees(system, node_text) for system in kin):
        # a module whose link text no node of that count agrees with (eight V100 SXM3s "on
        # NVSwitch": SXM3 boards hold sixteen): the smallest larger kin node it agrees with, run on
        # that many of its GPUs, as a job smaller than its node is
        larger = [system for system in _systems() if system.gpus_per_node > gpus_per_node
                  and _family_and_form(system.gpu) == _family_and_form(gpu) and not _disagrees(system, node_text)]
        kin = [min(larger, key=lambda system: system.gpus_per_node)] if larger else kin
    if kin:
        # the node its link text agrees with, then NVIDIA's reference node (a DGX), then a site's
        # node before a cloud instance (whose network is the provider's), then a node of exactly
        # this GPU, in bundled order
        chosen = min(kin, key=lambda system: (_disagrees(system, node_text), not system.name.startswith("dgx"),
                                              _is_instance(system), system.gpu.name != gpu.name))
        return _with_gpu(chosen, gpu)
    bridged = _bridged_pair(gpu, gpus_per_node, node_text)
    if bridged is not None:
        return bridged
    pcie = [system for system in systems if system.intra_fabric == "pcie"]
    if not pcie:  # no PCIe node of that count (three cards): the smallest larger one, run on that many of its GPUs
        larger = [system for system in _systems() if system.intra_fabric == "pcie" and system.gpus_per_node > gpus_per_node]
        pcie = [system for system in larger if system.gpus_per_node == min((s.gpus_per_node for s in larger), default=0)]
    if pcie and gpu.pcie_gen and gpu.vendor == "nvidia" and not _is_module(gpu):
        # no node of its family: a PCIe card goes into a PCIe node of that count, the GPU swapped
        # in and its own PCIe generation between the GPUs; peer-to-peer as the card's driver
        # allows it, whatever node it goes into: on for datacenter and professional cards (the
        # bundled two-card PCIe node is a GeForce box without it), off for GeForce cards from
        # Turing on (their driver disables it: NO_P2P_GEFORCE_ARCHS; the profile's description
        # names the product line). An SXM or OAM module is not a card.
        # Where no PCIe node holds that count, the job runs on that many GPUs of the smallest
        # one that holds more (each card keeps its own x16 link; the comm model takes k of a
        # node's GPUs as it does for any job smaller than its node).
        consumer = "geforce" in gpu.description.lower() and gpu.arch in NO_P2P_GEFORCE_ARCHS
        p2p = not consumer and _stated(P2P, node_text) is not False  # the driver's rule, unless the text says off
        chosen = min(pcie, key=lambda system: (_disagrees(dataclasses.replace(system, p2p=p2p), node_text),
                                               system.p2p == consumer))
        link = hardware.load_link(f"pcie{min(max(gpu.pcie_gen, 3), 5)}")
        return dataclasses.replace(chosen, name=f"{chosen.name}/{gpu.name}", gpu=gpu, intra_link=link,
                                   intra_bandwidth_Bps=link.bandwidth_Bps, p2p=p2p)
    raise unreadable("gpus_per_node", str(gpus_per_node),
                     f"a count for which a bundled system holds {gpu.name} or its kin "
                     f"({', '.join(f'{s.name}: {s.gpu.name} x{s.gpus_per_node}' for s in _systems())})", row_id)


# GeForce generations whose driver gives no PCIe peer-to-peer: Turing (tensorflow/tensorflow#24677,
# lambdal/lambda-tensorflow-benchmark#2, NVIDIA/nccl-tests#117: an RTX 2080 Ti "CANNOT Access Peer"
# without an NVLink bridge), Ampere and Ada (RTX 3090, RTX 4090; the bundled rtx4090-8x-pcie), and
# Blackwell after them. GeForce Pascal keeps it (a deviceQuery of four GTX 1080 Tis: peer access
# "Yes" between every pair, driver 460.32.03).
NO_P2P_GEFORCE_ARCHS = frozenset({"turing", "ampere", "ada", "blackwell"})


def _bridged_pair(gpu, gpus_per_node: int, node_text: str):
    """Two cards the link text joins by an NVLink bridge, of a family no bundled bridged node holds
    (RTX 3090, RTX A6000, Quadro RTX 8000, A100 PCIe): a bundled bridged pair (the server one, each
    card on its own x16) with the card swapped in and the bridge of the card's own NVLink (its
    bundled ``…bridge`` link of the card's scale-up bandwidth). They ran on PCIe, GeForce cards
    through host memory. None for another count, a module, a card without NVLink, or a text that
    states no bridge."""
    if gpus_per_node != 2 or _is_module(gpu) or gpu.scaleup_link is None or _stated(NVLINK_BRIDGE, node_text) is not True:
        return None
    generation = gpu.scaleup_link.name.split("-")[0]  # "nvlink3" of "nvlink3-ga102"
    bridges = [link for link in hardware.list_profiles("link") if "bridge" in link.name
               and link.name.startswith(generation) and link.bandwidth_Bps == gpu.scaleup_bandwidth_Bps]
    pairs = [system for system in _systems() if system.intra_fabric == "nvlink-bridge" and system.gpus_per_node == 2]
    if len(bridges) != 1 or not pairs:
        return None
    template = max(pairs, key=lambda system: system.gpu.pcie_gen)  # a server's pair, not a desktop's x8 slots
    return dataclasses.replace(template, name=f"{template.name}/{gpu.name}", gpu=gpu, intra_link=bridges[0],
                               intra_bandwidth_Bps=gpu.scaleup_bandwidth_Bps)


# Words of a bundled system's name that name its provider, not the instance ("aws-p4d" is "p4d").
PROVIDER_WORDS = frozenset({"aws", "azure", "gcp", "oci"})
# The fabrics a row may state for an instance whose NICs are of a link category: a row stating
# another ("100 Gbps TCP (p4d.24xlarge, EFA disabled)") ran on other NICs than the instance's.
INSTANCE_FABRICS = {"efa": ("efa",), "infiniband": ("infiniband",), "roce": ("roce",),
                    "ethernet": ("ethernet",), "tcp": ("ethernet",), "slingshot": ("slingshot",)}


# How providers write an instance type: AWS "p3.8xlarge", "p5e.48xlarge"; GCP "a2-highgpu-4g";
# Azure "ND40rs_v2", "NDv2"; OCI "BM.GPU.A100-v2.8". A text naming one no bundled system is, is
# refused: the site's DGX would stand in with InfiniBand it does not have.
INSTANCE_SHAPE = re.compile(r"\b(?:p|g|trn|dl|inf)\d+[a-z]*\.(?:\d*x?large|metal)\b|\b[a-z]\d-[a-z]+gpu-\d+g\b|"
                            r"\b(?:standard_)?n[cdv]\d+[a-z]*_(?:[a-z0-9]+_)?v\d\b|\bn[cdv]m?v\d\b|\bbm\.gpu[\w.-]*",
                            re.IGNORECASE)


def _is_instance(system) -> bool:
    """Whether a bundled system is a provider's instance (its name starts with the provider's)."""
    return bool(PROVIDER_WORDS & set(_name_words(system.name)))


def _unbundled_instance(text: str) -> str | None:
    """An instance type ``text`` names that no bundled system is (:data:`INSTANCE_SHAPE`), if any."""
    return next((found.group(0) for found in INSTANCE_SHAPE.finditer(text) if not _instances_named(found.group(0))),
                None)


def _instances_named(text: str) -> list:
    """The bundled systems ``text`` names as a whole machine: a cloud instance by its bundled name
    (:func:`_instance_named`), and any system by another name its profile lists (``instance_names``:
    Azure's VM sizes, "ND96asr_v4"; a site's machine, "Perlmutter", "Alps"). A DGX's bundled name is
    not a machine's (its network is its site's, and the row states it)."""
    text_words = _name_words(text)
    found = []
    for system in _systems():
        name = [word for word in _name_words(system.name) if word not in PROVIDER_WORDS]
        if (_is_instance(system) and name and _instance_named(name, text, text_words)) \
                or any(_in_a_row(_name_words(other), text_words) for other in system.instance_names):
            found.append(system)
    return found


def _in_a_row(name: list[str], text_words: list[str]) -> list[int]:
    """Where ``name``'s words stand in a row in ``text_words``."""
    return [i for i in range(len(text_words)) if text_words[i:i + len(name)] == name]


def _instance_named(name: list[str], text: str, text_words: list[str]) -> bool:
    """Whether ``text`` names the instance whose bundled name's words (the provider's aside) are
    ``name``: those words in a row; a one-word name ("p4d", "p5") only as an instance type is
    written, with its size ("p4d.24xlarge") or after its provider ("AWS p5"), not inside prose
    ("p5-like"). A name the provider gives it (``instance_names``: "NDv2", "ND96asr_v4") is its
    own, and names it wherever its words stand."""
    spans = _in_a_row(name, text_words)
    if len(name) > 1 or not spans:
        return bool(spans)
    typed = re.search(rf"(?<![a-z0-9]){re.escape(name[0])}\.\d+x?large\b", text, re.IGNORECASE)
    return bool(typed) or any(i > 0 and text_words[i - 1] in PROVIDER_WORDS for i in spans)


def _name_words(text: str) -> list[str]:
    """Lower-case words split at dots too: "p4d.24xlarge" and "BM.GPU4.8" as their parts."""
    return [part for word in words(text) for part in word.split(".") if part]


def named_system(gpu_name: str, gpus_per_node: int, text: str, network_text: str = ""):
    """The bundled cloud instance ``text`` names, if it names one that holds at least
    ``gpus_per_node`` GPUs of ``gpu_name``'s family and form: its name's words (the provider's
    aside) in a row, as an instance is written ("p4d.24xlarge" names ``aws-p4d``, "ND H100 v5"
    ``azure-nd-h100-v5``, "BM.GPU4.8" ``oci-bm-gpu4-8``). Only a provider's instance: a DGX's or a
    cluster's network is its site's, and the row states it.
    Such a system is taken whole, its NICs as the instance has them (400 Gb/s of EFA on a p4d is
    four 100 Gb/s NICs), the row's GPU variant swapped in. None where it names none (or two), or
    where ``network_text`` (the row's network column) states a fabric the instance's NICs are not:
    that row ran on other NICs."""
    stated = stated_network(network_text).fabric
    return _one_holding([system for system in _instances_named(text)
                         if stated in (None, *INSTANCE_FABRICS.get(system.nic_link.category, ()))],
                        gpu_name, gpus_per_node)


def _instance_of_fabric(gpu_name: str, gpus_per_node: int, stated: StatedNetwork):
    """The bundled instance a row ran on that states a fabric only providers' instances have (EFA
    is AWS's) and names none: the one holding that GPU whose NICs the row's do not contradict (a
    rate stated is one NIC's, or without a count the node's total; a count stated is theirs), as
    :func:`_one_holding` picks it (an A100 40GB with EFA is a p4d, an 80GB a p4de). None where a
    site's node has the fabric too (InfiniBand, RoCE, Ethernet), or none or several agree."""
    categories = {category for category, fabrics in INSTANCE_FABRICS.items() if stated.fabric in fabrics}
    holders = [system for system in _systems() if system.nic_link.category in categories]
    if not holders or not all(map(_is_instance, holders)):
        return None

    def agrees(system) -> bool:
        nic = system.nic_bandwidth_Bps * 8 / 1e9
        rates = (nic,) if stated.count is not None else (nic, nic * system.nics_per_node)  # "4x 400": each NIC's
        return (stated.gbps is None or stated.gbps in rates) and \
            (stated.count is None or stated.count == system.nics_per_node)

    return _one_holding(list(filter(agrees, holders)), gpu_name, gpus_per_node)


def _one_holding(systems: list, gpu_name: str, gpus_per_node: int):
    """The one of ``systems`` that holds at least ``gpus_per_node`` GPUs of ``gpu_name``'s family
    and form, that GPU itself first, with the row's GPU variant swapped in; None where none or
    several do."""
    gpu = hardware.load_gpu(gpu_name)
    found = [system for system in systems
             if _family_and_form(system.gpu) == _family_and_form(gpu) and system.gpus_per_node >= gpus_per_node]
    found = [system for system in found if system.gpu.name == gpu.name] or found
    return _with_gpu(found[0], gpu) if len(found) == 1 else None


def _with_gpu(system, gpu):
    """``system`` holding ``gpu`` (the same system where it already does)."""
    return system if system.gpu.name == gpu.name else dataclasses.replace(system, gpu=gpu)


@dataclasses.dataclass(frozen=True)
class StatedNetwork:
    """What a row's network text states of each node's NICs (None: not stated)."""

    count: int | None  # None: not stated (one NIC at a stated rate, or the rate is the node's total)
    gbps: float | None
    fabric: str | None  # "infiniband", "roce", "efa", "ethernet"
    per_gpu: bool = False  # "per GPU": one NIC for each of the node's GPUs


# A mention a text takes back: "no NVLink", "without InfiniBand", "EFA disabled", "NVLink not used".
NEGATED_BEFORE = re.compile(r"\b(?:no|without|non|not)[\s-]+[a-z][\w-]*(?:\s+(?:bridges?|switch(?:es)?|links?|p2p))?",
                            re.IGNORECASE)
# A clause that takes its subject back after naming it: "IB disabled", "P2P: not supported", "SHARP
# off" (not "off-node"), "P2P=0"; the whole clause goes, its rate too ("100 Gbps EFA disabled").
NEGATED_AFTER = re.compile(r"[\s:=]+(?:disabled|off|not\s+(?:used|supported|enabled|available)|unused|unsupported|"
                           r"blocked|absent|unavailable|0)(?![\w.-])", re.IGNORECASE)
CLAUSE = re.compile(r"[^,;()\[\]]+?(?=\s+(?:with|and|but|plus)\s+|[,;()\[\]]|$)", re.IGNORECASE)


def affirmed(text: str) -> str:
    """``text`` without what it negates ("PCIe Gen4, no NVLink" says PCIe; "IB disabled, TCP over
    100GbE" says TCP; "InfiniBand HDR with GPUDirect RDMA disabled" still says InfiniBand): a
    mention taken back is not read as stated."""
    kept = CLAUSE.sub(lambda clause: " " if NEGATED_AFTER.search(clause.group(0)) else clause.group(0), text)
    return NEGATED_BEFORE.sub(" ", kept)


def stated_network(inter_node: str) -> StatedNetwork:
    """The NICs ``inter_node`` states: the fabric by its whole words (InfiniBand, IB, EDR/HDR/NDR,
    RoCE, EFA, Ethernet/GbE/TCP, IP over InfiniBand as TCP), the line rate in Gb/s
    (:func:`_stated_rate`) and the NICs' count (:func:`_stated_count`), and whether there is one
    per GPU."""
    inter_node = LANE_WIDTH.sub("", affirmed(inter_node))
    fabric = next((name for name, pattern in FABRIC_WORDS if pattern.search(inter_node)), None)
    gbps, fabric, stated_rate = _stated_rate(inter_node, fabric)
    return StatedNetwork(count=_stated_count(inter_node, stated_rate), gbps=gbps, fabric=fabric,
                         per_gpu=bool(PER_GPU_NIC.search(inter_node)))


def _stated_rate(inter_node: str, fabric: str | None) -> tuple[float | None, str | None, re.Match | None]:
    """(Gb/s, fabric, the text stating the rate): a rate written with its unit (in bytes where the
    unit says so: "25 GB/s HDR", unless it names a port of the fabric in the wrong unit: "200 GB/s
    HDR", Azure's documents); else an InfiniBand generation's own, or its port's written after it
    ("NDR400", "HDR 100"); else a gigabit Ethernet written without its number ("GbE")."""
    rate = RATE.search(inter_node)
    if rate:
        gbps = float(rate.group(1)) * (1000.0 if rate.group(2).lower().startswith("t") else 1.0)
        generation = re.search(rf"\b({'|'.join(IB_GENERATION_GBPS)})", inter_node, re.IGNORECASE)
        named_rate = generation and gbps == IB_GENERATION_GBPS[generation.group(1).lower()]
        a_port = fabric in FABRIC_LINKS and gbps in FABRIC_LINKS[fabric] and 8 * gbps > max(FABRIC_LINKS[fabric])
        if BYTES_UNIT.fullmatch(rate.group(2)) and not (named_rate or a_port):
            gbps *= 8
        return gbps, fabric, rate
    if fabric == "infiniband":
        named = re.search(rf"\b({'|'.join(IB_GENERATION_GBPS)})(?:[\s-]?(\d{{3}}|\d{{2}}(?!\d)))?\b", inter_node,
                          re.IGNORECASE)
        if named:
            return (float(named.group(2)) if named.group(2) else IB_GENERATION_GBPS[named.group(1).lower()]), fabric, named
        hardware_rate = next((gbps for pattern, gbps in IB_HARDWARE_GBPS if pattern.search(inter_node)), None)
        if hardware_rate:  # "Quantum-2 InfiniBand", "ConnectX-6 InfiniBand"
            return hardware_rate, fabric, None
    if BARE_GIGABIT.search(inter_node):
        return 1.0, "ethernet", None
    return None, fabric, None


def _stated_count(inter_node: str, stated_rate: re.Match | None) -> int | None:
    """The NICs' count: written before the rate ("8x"), right after it ("x 8", "(8 per node)"), in
    words ("dual 25GbE", "eight"), or as NICs, HCAs or rails anywhere ("8 HCAs, HDR"); None where
    the text states none."""
    before = inter_node[:stated_rate.start()] if stated_rate else inter_node
    count = COUNT.search(before)
    if count:
        return int(count.group(1))
    after = COUNT_AFTER.search(inter_node[stated_rate.end():] if stated_rate else inter_node)
    number = next((group for group in after.groups() if group), None) if after else None
    if number:
        return int(number)
    word = COUNT_WORD.search(inter_node[:stated_rate.end()] if stated_rate else inter_node)
    if word:
        return COUNT_WORDS[word.group(1).lower()]
    nics = NIC_COUNT.search(inter_node)
    return int(nics.group(1)) if nics else None


def _per_nic(stated: StatedNetwork, system) -> StatedNetwork:
    """The stated NICs with their count: a rate stated without one is one NIC's, or, above what one
    NIC of its fabric runs ("1600 Gbps node-node interconnect (RoCE)"), the node's total spread
    over the node's NICs; nothing stated, the node's own."""
    if stated.count is not None:
        return stated
    if stated.per_gpu:
        return dataclasses.replace(stated, count=system.gpus_per_node)
    if stated.gbps is None:
        return dataclasses.replace(stated, count=system.nics_per_node)
    if stated.gbps > max(FABRIC_LINKS.get(stated.fabric or "", FABRIC_LINKS["infiniband"])):
        return dataclasses.replace(stated, count=system.nics_per_node, gbps=stated.gbps / system.nics_per_node)
    return dataclasses.replace(stated, count=1)


def _network_link(stated: StatedNetwork, system):
    """The link of the NICs stated (the system's where the fabric is not stated)."""
    gbps = stated.gbps or system.nic_bandwidth_Bps * 8 / 1e9
    if stated.fabric in FABRIC_LINKS:
        links = FABRIC_LINKS[stated.fabric]
        return hardware.load_link(links[min(links, key=lambda rate: abs(rate - gbps))])
    if stated.fabric == "ethernet":  # no RDMA: kernel TCP (NCCL's socket transport where no eth link of that rate)
        name = f"eth-{gbps:g}g"
        known = {link.name for link in hardware.list_profiles("link")}
        return hardware.load_link(name if name in known else SOCKETS_LINK)
    return system.nic_link


def _with_link(system, link, name: str):
    """``system`` with NICs of ``link``; an in-network reduction the new link cannot run (SHARP
    needs an InfiniBand fabric with it) goes with the old one."""
    reduction = system.in_network_reduction
    if reduction == "sharp" and not getattr(link, "sharp", False):
        reduction = ""
    return dataclasses.replace(system, name=name, nic_link=link, in_network_reduction=reduction)


@functools.cache
def system_for(gpu_type: str, gpus_per_node: int, inter_node: str, sockets: bool = False, row_id: str = "",
               node_text: str = ""):
    """The system a row ran on: a bundled system the row names (:func:`named_system`: a cloud
    instance, with its own NICs), else the bundled node for its GPU (:func:`base_system_for`) with
    the NICs the row states where they differ from the profile's (DLPerf's DGX-1-class nodes have
    one 100 Gb/s EDR NIC, not four), of the kind it states; ``sockets``: the NICs carry NCCL's
    socket transport (the bundled ``tcp-sockets`` link). ``node_text``: the row's intra-node link
    text, read only for a system's name."""
    gpu_name = gpu_for(gpu_type, row_id)
    unsupported = UNSUPPORTED_FABRICS.search(affirmed(inter_node))
    if unsupported:
        links = ", ".join(link for rates in FABRIC_LINKS.values() for link in rates.values())
        raise unreadable("inter_node_network", inter_node, f"a fabric a bundled link stands for ({links}; "
                         f"Ethernet/TCP); {unsupported.group(0)!r} has none", row_id)
    texts = f"{gpu_type} {node_text} {inter_node}"  # where a row may name its instance
    unbundled = _unbundled_instance(texts)
    if unbundled:
        raise unreadable("inter_node_network", inter_node or node_text,
                         f"a bundled cloud instance ({', '.join(s.name for s in _systems() if _is_instance(s))}); "
                         f"{unbundled!r} is not bundled", row_id)
    named = named_system(gpu_name, gpus_per_node, texts, inter_node)
    instances = _instances_named(texts)
    if named is None and instances and _one_holding(instances, gpu_name, gpus_per_node) is None:
        # a named machine that holds other GPUs than the row's ("A100" on a p5e, on Alps): a
        # contradiction, not a DGX
        raise unreadable("inter_node_network", inter_node or node_text,
                         f"a named instance or site machine holding the row's GPU ({gpu_name} x{gpus_per_node}); "
                         f"{', '.join(f'{s.name} holds {s.gpu.name} x{s.gpus_per_node}' for s in instances)}", row_id)
    if named is None:  # a fabric only instances have (EFA is AWS's): that provider's instance of the GPU
        named = _instance_of_fabric(gpu_name, gpus_per_node, stated_network(inter_node))
    system = named or base_system_for(gpu_name, gpus_per_node, row_id, node_text)
    if system.in_network_reduction == "sharp" and SHARP.search(inter_node) \
            and not SHARP.search(affirmed(inter_node)):  # "SHARP disabled", "SHARPv2 off"
        system = dataclasses.replace(system, in_network_reduction="")
    stated = _per_nic(stated_network(inter_node), system)
    if named is None and (stated.gbps is not None or stated.fabric is not None):
        count = stated.count
        gbps = system.nic_bandwidth_Bps * 8 / 1e9 if stated.gbps is None else stated.gbps
        link = _network_link(stated, system)
        if (count, gbps * 1e9 / 8, link.name) != (system.nics_per_node, system.nic_bandwidth_Bps, system.nic_link.name):
            system = dataclasses.replace(_with_link(system, link, f"{system.name}-{count}x{gbps:g}G"),
                                         nics_per_node=count, nic_bandwidth_Bps=gbps * 1e9 / 8)
    if sockets:
        system = _with_link(system, hardware.load_link(SOCKETS_LINK), f"{system.name}-sockets")
    return system
