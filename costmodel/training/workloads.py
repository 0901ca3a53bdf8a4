"""Workloads: what one training sample costs in FLOPs, and the shape the memory model needs.

A workload is a named preset from ``costmodel/data/models.toml`` (each with its source) or a bare
parameter count (``"7B"``, ``"124M"``, ``"1.3e9"``), which is taken as a decoder transformer
whose shape is derived from the count (see :func:`derived_shape`).

Training FLOPs per sample (forward + backward):

* token-rule models (``transformer``, ``bert``): ``6 · P · s`` for ``s`` tokens (Kaplan et al.
  2020, §2.1), plus, on request, the attention score/context matmuls ``12 · L · h · s²``
  (Chowdhery et al. 2022, PaLM, Appendix B: ``12·L·H·Q·T`` per token, ``H·Q = h``, ``T = s``).
* image models (``vit``, ``cnn``): ``flops_per_sample`` from the preset (3 × forward).

Default MFU: :func:`default_mfu_for_arch` (transformer training, per GPU architecture) and, for
kinds that have one (``cnn``), :func:`default_mfu_for_kind` from published throughput of a preset
(models.toml ``[mfu_by_kind]``; unmeasured architectures borrow the nearest measured one).

    >>> load_model("gpt2").params
    124439808
    >>> load_model("7B").kind
    'transformer'
"""

from __future__ import annotations

import functools
import os
import re

from costmodel.training import activation_law
from costmodel.training.overlap import late_readiness
from costmodel.training.tensors import listed_matrices
from dpbase.bundled import load_bundled
from dpbase.errors import InputError, UnknownNameError, is_real, is_whole
from dpbase.limits import MAX_COUNT
from dpbase.values import fields, frozen, replace

DATA_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "data", "models.toml")
KINDS = ("transformer", "bert", "vit", "cnn")
TOKEN_RULE_KINDS = ("transformer", "bert")

# Kaplan et al. 2020, §2.1: C ≈ 6·N FLOPs per token for forward + backward.
TRAINING_FLOPS_PER_PARAM_TOKEN = 6.0
# Chowdhery et al. 2022 (PaLM), Appendix B: attention adds 12·L·H·Q·T FLOPs per token.
ATTENTION_FLOPS_PER_LAYER_HIDDEN_TOKEN2 = 12.0
# A layer's query, key and value projections: 3·h² weights (Vaswani et al. 2017; Transformer-XL's
# qkv_net, 512 × 1536 in its base model).
QKV_PARAMS_PER_LAYER_HIDDEN2 = 3.0
# Shape of a model given only by its parameter count: P ≈ 12·L·h² (Kaplan et al. 2020, Table 1,
# ignoring embeddings) with aspect ratio h/L = 128 and head size 128 (GPT-3 175B: 12288/96,
# Brown et al. 2020, Table 2.1); default sequence length 2048 as in GPT-3.
PARAMS_PER_LAYER_HIDDEN2 = 12.0
DERIVED_ASPECT_RATIO = 128
DERIVED_HEAD_DIM = 128
DERIVED_SEQ_LEN = 2048
# ... and GPT-3's vocabulary, the GPT-2 byte-level BPE (Radford et al. 2019, §2.2: 50,257 tokens;
# Brown et al. 2020 reuse it): a decoder LM always has one, and its logits take memory. Only the
# logits: the count is the layers' 12·L·h², so no embedding is added to it (nor a late gradient).
DERIVED_VOCAB = 50_257

_SUFFIX = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}
_COUNT = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([KMBGTkmbgt]?)\s*$")
PARAMS_ALLOWED = "a preset name or a parameter count such as 7B, 124M, 1.3e9"
# Kind-specific MFU (models.toml [mfu_by_kind]): bf16 reads the fp16 measurement (NVIDIA's AMP
# runs fp16; bf16 has the same peak wherever both exist); a dtype measured nowhere takes fp16's.
MFU_DTYPE_ALIASES = {"bf16": "fp16"}
MFU_FALLBACK_DTYPE = "fp16"


@frozen(kw_only=True)
class Workload:
    """One model: parameter count, shape, FLOPs rule and where the numbers come from.

    ``flops_per_sample`` is 0 for token-rule models (FLOPs follow from params and tokens).
    ``activation_elements_per_sample`` is used for CNNs only (0 otherwise).
    """

    name: str
    params: int
    layers: int
    hidden_size: int
    heads: int
    vocab: int
    seq_len: int
    kind: str
    source: str
    flops_per_sample: float = 0.0
    activation_elements_per_sample: float = 0.0
    flops_params: int = 0  # parameters doing matmul work per token (0 = params); excludes lookup embeddings
    tensors: int = 0  # gradient tensors (0 = layers x per-layer count, costmodel.training.syncmodes)
    embedding_params: int = 0  # input embedding's parameters (0 = vocab x hidden); adaptive ones differ
    logits_vocab: int = 0  # logits the output layer materialises per token (0 = vocab); adaptive softmax: fewer
    tied_embeddings: bool = True  # the input embedding is the output head's matrix (GPT-2/3, BERT, MPT); Llama: False
    # Learned absolute position embeddings end here: no sequence runs longer without a new table
    # (GPT-2 1,024, GPT-3 2,048, BERT/RoBERTa 512). 0: positions with no table to outrun (rotary,
    # ALiBi, Transformer-XL's relative ones), or a CNN.
    max_positions: int = 0
    # A layer's matrices in forward order, as multiples of h² (costmodel.training.tensors: they
    # share the layer's parameters; empty: the kind's default, GPT-2's fused (3, 1, 4, 4) or
    # BERT's (1, 1, 1, 1, 4, 4)). DDP's buckets hold whole tensors, so their sizes set the calls.
    layer_matrices: tuple[float, ...] = ()
    # When backward has produced each share of the gradient bytes: knots (bytes share, backward
    # share) from (0, 0) to (1, 1), last layer first (costmodel.training.overlap.ready_share).
    # A CNN preset's come from its layers (tools/cnn_counts.py: VGG's classifier, 89 % of its
    # bytes, is ready within 0.5 % of backward); empty: evenly over backward, the input
    # embedding's bytes last (:attr:`readiness`).
    gradient_readiness: tuple[tuple[float, float], ...] = ()
    # A CNN preset's tensors are listed one by one (costmodel/data/cnn_tensors.toml, under its
    # name; costmodel.training.tensors.cnn_tensors), used while its parameters and tensor count
    # are the list's; a model file's CNN has none: its gradient is cut by bytes.
    listed_tensors: bool = False
    # Attention (costmodel.training.attention): Transformer-XL's relative positions need the
    # score matrix in HBM whatever the kernels (no fused kernel computes its shifted term); its
    # queries also attend to ``memory_length`` cached tokens of the previous segment; whether the
    # attention probabilities pass through dropout (Korthikanti et al.'s and BERT's assumption).
    relative_attention: bool = False
    memory_length: int = 0
    attention_dropout: bool = True
    # Encoder-decoder models (BART, the Transformer): the decoder layers among ``layers`` that also
    # attend to the encoder's output, one more score matrix each (Q·Kᵀ and P·V over the source's
    # tokens, as many as the sample's: BART's denoising, a translation pair of equal length).
    cross_attention_layers: int = 0
    # A CNN's MFU relative to the model its kind's default was measured on (ResNet-50), in FP32
    # and on tensor cores (:func:`relative_mfu`; presets: models.toml [mfu_by_kind.cnn.relative]
    # and [mfu_by_kind.cnn.relative_timm]).
    # None: not stated (a CNN's is then the activation-traffic law's estimate, any other model's 1).
    relative_mfu_fp32: float | None = None
    relative_mfu_16bit: float | None = None
    relative_mfu_origin: str = ""  # where the stated ratios come from
    # The preset whose layers a model starts with (SSD300: ResNet-50's first three stages); a
    # table naming another backbone ("SSD300 (ResNet-34)", MLPerf's) names another model.
    backbone: str = ""
    # A CNN's input side (pixels) its FLOPs and activations are counted at (224 for ResNet-50);
    # 0: not stated. A table row at another size ("32x32", CIFAR) is another workload.
    image_size: int = 0

    @property
    def matmul_params(self) -> int:
        """Parameters doing matmul work per token: ``flops_params`` where given; else every
        parameter but an untied input embedding, a lookup (with tied embeddings the shared
        matrix does the head's matmul, so it counts)."""
        if self.flops_params:
            return self.flops_params
        if self.tied_embeddings:
            return self.params
        return self.params - self.input_embedding_params

    @property
    def input_embedding_params(self) -> int:
        """The input embedding's parameters: ``embedding_params`` where the model gives it
        (adaptive input embeddings, whose clusters are narrower than the model), else
        ``vocab × hidden``."""
        return self.embedding_params or self.vocab * self.hidden_size

    @property
    def has_transformer_layers(self) -> bool:
        """Attention and the layers recomputation re-runs: every kind but a CNN."""
        return self.kind != "cnn"

    @property
    def uses_token_rule(self) -> bool:
        """True when FLOPs follow 6 · params · tokens."""
        return self.kind in TOKEN_RULE_KINDS

    @property
    def late_fraction(self) -> float:
        """The share of the gradient ready only when backward ends: the input embedding's.

        The embedding is the first layer, so backward reaches it last, and its lookup-table
        backward is a cheap scatter: its gradient (and, with tied weights, the output head's,
        which shares the tensor and so completes only with it) lands at the end (DDP puts it in
        the last bucket). Its size is :attr:`input_embedding_params`.
        """
        if not self.vocab or not self.params:
            return 0.0
        return min(self.input_embedding_params / self.params, 1.0)

    @property
    def readiness(self) -> tuple[tuple[float, float], ...]:
        """When backward has produced each share of the gradient bytes (the overlap model's
        :func:`~costmodel.training.overlap.ready_share` knots): ``gradient_readiness`` where the
        model states it, else evenly over backward with the :attr:`late_fraction` at its end."""
        return self.gradient_readiness or late_readiness(self.late_fraction)


@functools.cache
def _data() -> dict:
    data = load_bundled(DATA_FILE)
    for entry in data["models"].values():  # a TOML array as a tuple: a workload stays hashable
        if "layer_matrices" in entry:
            entry["layer_matrices"] = tuple(float(k) for k in entry["layer_matrices"])
        if "gradient_readiness" in entry:
            entry["gradient_readiness"] = tuple((float(x), float(y)) for x, y in entry["gradient_readiness"])
        if entry.get("kind") == "cnn":  # every CNN preset is counted layer by layer (tools/cnn_counts.py)
            entry["listed_tensors"] = True
    return data


def model_names() -> tuple[str, ...]:
    """Names of the bundled presets."""
    return tuple(sorted(_data()["models"]))


def model_aliases() -> dict[str, str]:
    """Other names of a preset (models.toml [aliases]): alias -> preset name."""
    return dict(_data().get("aliases", {}))


def default_mfu_for_arch(arch: str) -> tuple[float, str]:
    """Default model FLOPs utilisation and its source for a GPU architecture."""
    table = _data()["mfu_by_arch"]
    entry = table.get(arch, table["unknown"])
    return float(entry["mfu"]), str(entry["source"])


def measured_mfu(entry: dict) -> float:
    """MFU of one ``mfu_by_kind`` measurement: the mean per-GPU rate × FLOPs / peak."""
    workload = load_model(entry["model"])
    rates = [images / gpus for images, gpus in zip(entry["images_per_s"], entry["gpus"], strict=True)]
    flops = float(training_flops_per_sample(workload, workload.seq_len))
    return sum(rates) / len(rates) * flops / (float(entry["peak_tflops"]) * 1e12)


@functools.cache
def _measured_mfu_of(kind: str, arch: str, dtype: str) -> float:
    """:func:`measured_mfu` of the bundled measurement for (kind, arch, dtype), computed once
    (it loads the measured model's preset)."""
    return measured_mfu(_data()["mfu_by_kind"][kind]["measured"][arch][dtype])


SHARED_FP32 = "shared-fp32"  # the measured entry of FP32 on SMs whose FP32 lanes are half shared with INT32


def _shares_fp32_lanes(kind: str, compute_capability: int | None) -> bool:
    """Whether a GPU of ``compute_capability`` counts INT32-shared lanes in its FP32 peak (models.toml
    ``[mfu_by_kind.<kind>.shared_fp32]``: GA10x and AD10x)."""
    rule = _data().get("mfu_by_kind", {}).get(kind, {}).get("shared_fp32")
    return bool(rule) and compute_capability in rule["compute_capabilities"]


@functools.cache
def _kind_entry(kind: str, arch: str, dtype: str, compute_capability: int | None = None
                ) -> tuple[str, str, dict] | None:
    """(arch, dtype, measurement) nearest to ``arch`` for ``dtype`` (see models.toml); FP32 on a
    GPU whose FP32 lanes are half shared with INT32 reads that measurement first. An architecture
    without tensor cores runs 16-bit convolutions on its FP32 paths, so a 16-bit run reads the FP32
    measurement (at the FP32 speed: :func:`_kind_choice` rescales it). Dell EMC's reference guide
    ("Ready Solutions for AI: Deep Learning with NVIDIA" v1.0, §3.1.2, ResNet-50 on 4 GPUs) puts a
    P100 in FP16 at 1.0-1.3x its FP32 speed: V100 runs 26 % (TensorFlow) and 52 % (MXNet) faster
    than P100 in FP32 and 103 % and 124 % in FP16, and V100's FP16 is 65-91 % faster than its FP32;
    Volta's tensor-core MFU at P100's FP16 peak (the nearest measured 16-bit entry) is not that
    measurement's kind."""
    table = _data().get("mfu_by_kind", {}).get(kind)
    if table is None:
        return None
    measured, nearest = table["measured"], table["nearest"]
    search = nearest.get(arch, nearest["unknown"])
    wanted = MFU_DTYPE_ALIASES.get(dtype, dtype)
    if wanted == "fp16" and arch in NO_TENSOR_CORES:  # 16-bit on the FP32 paths: the FP32 speed
        wanted = "fp32"
    if wanted == "fp32" and _shares_fp32_lanes(kind, compute_capability):
        search = [SHARED_FP32, *search]
    for candidate in search:
        if wanted in measured.get(candidate, {}):
            return candidate, wanted, measured[candidate][wanted]
    fallback = next(candidate for candidate in search if MFU_FALLBACK_DTYPE in measured.get(candidate, {}))
    return fallback, MFU_FALLBACK_DTYPE, measured[fallback][MFU_FALLBACK_DTYPE]


# Nominal FLOPs can run faster than the peak: Winograd's F(4x4, 3x3) does 4x fewer multiplies
# than a direct 3x3 convolution (Lavin & Gray 2016), and cuDNN runs it for 3x3 stride-1 layers:
# Lambda's V100 trains VGG16 (nearly all 3x3 stride-1) in FP32 at 1.47x its peak in nominal
# FLOPs. Only those layers gain, so a model's ceiling is 1 / ((1 - w) + w / 4) for a share w of
# its FLOPs in them. ResNet-50 v1.5 (torchvision's 4.09 GMACs): 13 of its 16 bottlenecks' 3x3
# convolutions run at stride 1, 115.6 M multiply-accumulates each (56^2 x 64^2 x 9, and alike
# at every stage), 1.503 G or 36.7 %: its ceiling is 1.38. Another CNN's is ResNet-50's times
# its relative MFU (a model faster than ResNet-50 per nominal FLOP gets there by such layers),
# up to Winograd's 4; any other model's is 1.
WINOGRAD_MULTIPLY_REDUCTION = 4.0
RESNET50_MACS = 4.09e9  # the resnet-50 preset's flops_per_sample / 6 (a test holds them together)
RESNET50_WINOGRAD_SHARE = 13 * 56**2 * 64**2 * 9 / RESNET50_MACS
REFERENCE_MAX_MFU = 1.0 / ((1.0 - RESNET50_WINOGRAD_SHARE) + RESNET50_WINOGRAD_SHARE / WINOGRAD_MULTIPLY_REDUCTION)
# What a model file may state as its relative MFU: from 1/20 of ResNet-50's (any slower CNN is
# not one cuDNN runs) to the ratio that reaches Winograd's ceiling.
RELATIVE_MFU_RANGE = (0.05, WINOGRAD_MULTIPLY_REDUCTION / REFERENCE_MAX_MFU)
RELATIVE_MFU_CLASSES = ("fp32", "16bit")
NO_TENSOR_CORES = ("kepler", "maxwell", "pascal")  # their 16-bit convolutions run on the FP32 units' paths


def borrowed_cnn_speed_note(workload: "Workload", dtype: str = "bf16", arch: str = "unknown") -> str | None:
    """A note for a user's CNN that states no MFU ratio at all: its ratio is the
    activation-traffic law's estimate (a review ran published EfficientNet-B0/B4 tables at
    ResNet-50's MFU, 2026-11-29: their steps 2-18x longer than predicted), said with the law's
    held-out figures and whether its shape lay outside the fitted range; None for a preset (by
    value: a file named like one is a file) or a stated ratio."""
    if not by_law(workload):
        return None
    if workload.name in model_names() and workload == load_model(workload.name):
        return None
    law = _data()["mfu_by_kind"]["cnn"]["activation_law"]
    low, high = law["fitted_flops_per_activation"]
    intensity, taken = law_intensity(workload)
    outside = ("" if intensity == taken else
               f"; its {intensity:,.0f} FLOPs per activation element lie outside the {low:,}-{high:,} the law was "
               f"fitted on, so it is taken at {taken:,.0f} (check activation_elements_per_sample)")
    return (f"{workload.name}'s MFU is ResNet-50's x {relative_mfu(workload, dtype, arch):.2f}, estimated from its "
            f"FLOPs per activation element (its file states no relative_mfu_fp32 or relative_mfu_16bit; the "
            f"activation-traffic law: {law['held_out']}){outside}. A measured ratio in the file, or --rate from "
            "a measured run, is better")


def max_mfu(workload: "Workload | None") -> float:
    """The largest MFU a model can run at, in its nominal FLOPs (see above): a CNN's Winograd
    ceiling, 1 for any other model (and without one)."""
    if workload is None or workload.kind != "cnn":
        return 1.0
    fastest = max(1.0, *(_class_ratio(workload, cls) for cls in RELATIVE_MFU_CLASSES))
    return min(WINOGRAD_MULTIPLY_REDUCTION, REFERENCE_MAX_MFU * fastest)


def relative_mfu_class(dtype: str, arch: str = "unknown") -> str:
    """Which relative-MFU column a run reads: FP32's, or tensor cores' for every other dtype on a
    GPU that has them."""
    return "fp32" if dtype == "fp32" or arch in NO_TENSOR_CORES else "16bit"


def relative_mfu(workload: "Workload", dtype: str, arch: str = "unknown") -> float:
    """``workload``'s MFU relative to its kind's measured model, for a run in ``dtype`` on ``arch``:
    the ratio it states for that class (a preset's from its table, a file's own), else the one it
    states for the other class (as timm's table stands its tensor-core ratio in for FP32), else
    for a CNN the activation-traffic law's, else 1."""
    return _class_ratio(workload, relative_mfu_class(dtype, arch))


def relative_mfu_origin(workload: "Workload", dtype: str, arch: str = "unknown") -> str:
    """Where :func:`relative_mfu`'s ratio comes from."""
    if by_law(workload):
        law = _data()["mfu_by_kind"]["cnn"]["activation_law"]
        return f"the activation-traffic law, models.toml [mfu_by_kind.cnn.activation_law]: {law['origin']}"
    column = _stated_column(workload, relative_mfu_class(dtype, arch))
    if column is not None and not column.endswith(relative_mfu_class(dtype, arch)):
        return f"{workload.relative_mfu_origin}: its {column}, none being stated for this class"
    return workload.relative_mfu_origin


def by_law(workload: "Workload") -> bool:
    """Whether a CNN's ratios are the law's: it states none, and its FLOPs and activations per
    sample are known."""
    return (workload.kind == "cnn" and workload.relative_mfu_fp32 is None and workload.relative_mfu_16bit is None
            and workload.flops_per_sample > 0 and workload.activation_elements_per_sample > 0)


def _stated_column(workload: "Workload", cls: str) -> str | None:
    """The stated ratio dtype class ``cls`` reads: its own column, else the other class's (as
    timm's table stands its tensor-core ratio in for FP32), else None."""
    other = "fp32" if cls == "16bit" else "16bit"
    for column in (f"relative_mfu_{cls}", f"relative_mfu_{other}"):
        if getattr(workload, column) is not None:
            return column
    return None


def _class_ratio(workload: "Workload", cls: str) -> float:
    column = _stated_column(workload, cls)
    if column is not None:
        return getattr(workload, column)
    if not by_law(workload):
        return 1.0
    reference_flops, reference_activations, kappa, _ = _law_constants()
    return activation_law.relative(law_intensity(workload)[1], 1.0, reference_flops, reference_activations, kappa)


def law_intensity(workload: "Workload") -> tuple[float, float]:
    """A CNN's training FLOPs per activation element, and the one the law takes: outside the
    shapes it was fitted on it is not extrapolated, but taken at the nearer end."""
    low, high = _law_constants()[3]
    intensity = workload.flops_per_sample / workload.activation_elements_per_sample
    return intensity, min(high, max(low, intensity))


@functools.cache
def _law_constants() -> tuple[float, float, float, tuple[float, float]]:
    """The law's reference (ResNet-50's training FLOPs and activations per sample), its κ and the
    FLOPs per activation element of the models it was fitted on (lowest, highest)."""
    law = _data()["mfu_by_kind"]["cnn"]["activation_law"]
    reference = _preset(law["reference"])
    low, high = law["fitted_flops_per_activation"]
    return (reference.flops_per_sample, reference.activation_elements_per_sample,
            float(law["kappa_flops_per_activation"]), (float(low), float(high)))


def _images_per_s(table: dict, row: list, model: str) -> float:
    """``model``'s images/s on one row: its column, or for a model midway between two columns
    (``midway``) the harmonic mean of theirs (its time per image the mean of theirs)."""
    columns = list(table["columns"])
    if model in columns:
        return row[columns.index(model)]
    first, second = (row[columns.index(name)] for name in table["midway"][model])
    return 2.0 / (1.0 / first + 1.0 / second)


def relative_mfu_ratios(table: dict, model: str, flops: dict) -> list[float]:
    """Per row of ``table`` (name -> images/s per ``columns`` model), ``model``'s MFU over the
    reference's: images/s × training FLOPs of each, divided (``flops``: FLOPs per model)."""
    reference = table["reference"]
    return [_images_per_s(table, row, model) * flops[model] / (_images_per_s(table, row, reference) * flops[reference])
            for row in table["rows"].values()]


# The tables of measured ratios, first match wins (models.toml: Lambda's ten GPUs per dtype class
# first, timm's for the CNNs Lambda did not run).
RELATIVE_TABLES = ("relative", "relative_timm")


def relative_table(name: str) -> str | None:
    """The key of the first table of :data:`RELATIVE_TABLES` that measured preset ``name``
    (directly or, in Lambda's, midway between two of its models), or None (a preset no table has,
    or a reference)."""
    tables = _data()["mfu_by_kind"]["cnn"]
    for key in RELATIVE_TABLES:
        if name in (*tables[key]["columns"], *tables[key].get("midway", {})) and name != tables[key]["reference"]:
            return key
    return None


def class_rows(table: dict, cls: str) -> dict:
    """A table's rows for dtype class ``cls``: its own, or those of the class standing in for it
    (``stand_in``: timm measured mixed precision only)."""
    return table[cls] if cls in table else table[table["stand_in"][cls]]


@functools.cache
def preset_relative_mfu(name: str) -> dict:
    """Workload fields setting preset ``name``'s relative MFU (each class the median over its
    table's rows, :func:`relative_table`; 1 for ResNet-50, the model measured); empty for a
    preset no table has."""
    if name == _data()["mfu_by_kind"]["cnn"]["relative"]["reference"]:  # the model the CNN defaults measured
        return {"relative_mfu_fp32": 1.0, "relative_mfu_16bit": 1.0, "relative_mfu_origin": "the measured model"}
    key = relative_table(name)
    if key is None:
        return {}
    table = _data()["mfu_by_kind"]["cnn"][key]
    models = {*table["columns"], *table.get("midway", {})}
    flops = {model: float(training_flops_per_sample(_preset(model), 0)) for model in models}
    return {**{f"relative_mfu_{cls}": _median(relative_mfu_ratios({**table, "rows": class_rows(table, cls)}, name, flops))
               for cls in RELATIVE_MFU_CLASSES},
            "relative_mfu_origin": f"models.toml [mfu_by_kind.cnn.{key}]: {table['origin']}"}


def _median(values: list[float]) -> float:
    """The median, as statistics.median gives it (which would cost a CNN's single answer its
    imports: decimal, fractions, random)."""
    ordered, middle = sorted(values), len(values) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2.0


def mfu_reference_micro_batch(kind: str, arch: str, dtype: str, peak_flops: dict | None = None,
                              compute_capability: int | None = None, workload: "Workload | None" = None,
                              hbm_Bps: float | None = None) -> int | None:
    """The micro-batch the kind's default MFU for ``arch``/``dtype`` was measured at (its
    ``micro_batch`` in models.toml), or None (no table for the kind, or none stated); the
    measurement :func:`kind_mfu` reads."""
    found = _kind_choice(kind, arch, dtype, peak_flops, compute_capability, workload, hbm_Bps)
    batch = found.entry.get("micro_batch") if found is not None else None
    return int(batch) if batch else None


@frozen
class KindMfu:
    """The kind's default MFU for one run: ``rate`` at the peak of the dtype asked for, the
    measurement it comes from, the dtype the run takes (``runs_as``: "fp32" for a TF32 run at
    the FP32 speed) and how it was found (``source``)."""

    rate: float
    source: str
    runs_as: str
    entry: dict


def _measured_text(entry: dict, rate: float) -> str:
    """How a measurement gives its MFU, with its source."""
    return (f"MFU {rate:.3f} = mean per-GPU images/s x {entry['model']} training FLOPs / peak; "
            f"{entry['source']}")


def _kind_choice(kind: str, arch: str, dtype: str, peak_flops: dict | None, compute_capability: int | None,
                 workload: "Workload | None" = None, hbm_Bps: float | None = None) -> KindMfu | None:
    """The kind's default MFU for a run in ``dtype`` (:class:`KindMfu`; ``rate`` before
    ``workload``'s relative MFU, which :func:`kind_mfu` applies).

    TF32 is a math mode cuDNN may use, not one it must (PyTorch's ``allow_tf32``, TensorFlow's
    TF32 execution): it keeps an FP32 kernel where that is faster, so a TF32 run takes the FP32
    speed where ``workload`` runs faster in FP32 (its own relative MFU in each included: the
    GA10x and AD10x cards, whose TF32 tensor peak is no higher than their FP32 peak)."""
    options = _kind_options(kind, arch, dtype, peak_flops, compute_capability, workload, hbm_Bps)
    if options is None:
        return None
    return _ranked(*options, workload, arch)[0]


def _ranked(own: KindMfu, other: KindMfu | None, workload, arch: str) -> tuple[KindMfu, KindMfu | None]:
    """(the option a run takes, the one it does not): the faster per image (ties to ``own``)."""
    if other is not None and kind_speed(other, workload, arch) > kind_speed(own, workload, arch):
        return other, own
    return own, other


def _kind_options(kind: str, arch: str, dtype: str, peak_flops: dict | None, compute_capability: int | None,
                  workload: "Workload | None", hbm_Bps: float | None = None) -> tuple[KindMfu, KindMfu | None] | None:
    """(the measurement ``dtype`` reads, a TF32 run's FP32 option or None); None without a table.
    Found once per (GPU, dtype, model): a step asks for it several times (its MFU, the reference
    micro-batch, a TF32 run's other option)."""
    if kind not in _data().get("mfu_by_kind", {}):  # transformers: no table, nothing to key
        return None
    peaks = tuple(sorted((peak_flops or {}).items()))
    return _options_at(kind, arch, dtype, peaks, compute_capability, workload, hbm_Bps)


@functools.lru_cache(maxsize=1024)
def _options_at(kind: str, arch: str, dtype: str, peaks: tuple, compute_capability: int | None,
                workload: "Workload | None", hbm_Bps: float | None = None) -> tuple[KindMfu, KindMfu | None] | None:
    peak_flops = dict(peaks)
    found = _kind_entry(kind, arch, dtype, compute_capability)
    if found is None:
        return None
    from_arch, from_dtype, entry = found
    rate = _measured_mfu_of(kind, from_arch, from_dtype)
    where = f"{kind} default for {arch} {dtype}"
    if from_arch == SHARED_FP32:
        where += ", measured on a GPU whose FP32 lanes are half shared with INT32 (GA10x, AD10x)"
    elif from_arch != arch:
        where += f", borrowed from {from_arch} (nearest measured architecture)"
    if entry.get("arch", from_arch) != arch:  # measured on another architecture (the GA102 entry on Ada too)
        rate, where = _speed_by_hbm(rate, where, entry, peak_flops or {}, from_dtype, hbm_Bps)
    peaks = peak_flops or {}
    if from_dtype != MFU_DTYPE_ALIASES.get(dtype, dtype):
        where += (f", {dtype} on the FP32 paths (no tensor cores): the {from_dtype} value" if arch in NO_TENSOR_CORES
                  else f", {dtype} measured nowhere: the {from_dtype} value")
        if peaks.get(from_dtype) and peaks.get(dtype):
            rate *= float(peaks[from_dtype]) / float(peaks[dtype])
            where += f" at the {from_dtype} speed"
    own = KindMfu(rate=rate, runs_as=dtype, entry=entry, source=f"{where}: {_measured_text(entry, rate)}")
    return own, _tf32_at_fp32_speed(kind, arch, dtype, peak_flops, compute_capability, workload, rate, hbm_Bps)


def _speed_by_hbm(rate: float, where: str, entry: dict, peak_flops: dict, dtype: str,
                  hbm_Bps: float | None) -> tuple[float, str]:
    """A measurement borrowed from another architecture, its speed scaled by the smaller of the HBM
    bandwidth and the peak FLOP/s ratios (a roofline: the step cannot outrun either), which for
    every tensor-core row is HBM's: a CNN's training step is memory-bound (batch norm, ReLU,
    residual adds, small convolutions), so the speed follows the bytes moved. FP32 on the CUDA
    cores (an A100's from Volta's row) stays compute-bound: the peak ratio. Lambda's PyTorch ResNet-50 AMP rows
    (lambdal/deeplearning-benchmark, pytorch-train-throughput-fp16.csv) put an H100 SXM at
    1.65-1.76x an A100 80GB SXM, where the HBM ratio is 1.64x and the peak ratio 3.17x; over its
    twelve GPUs (Turing to Hopper) images/s per HBM TB/s spread 0.78-1.29 thousand, per peak
    TFLOP/s 2.5-12.7. (MFU at the new peak, ``dtype``'s column, as the measurement's.)"""
    reference = entry.get("hbm_GBps")
    peak = peak_flops.get(dtype)
    if not (hbm_Bps and reference and peak):
        return rate, where
    peak_ratio = float(peak) / (float(entry["peak_tflops"]) * 1e12)
    hbm_ratio = float(hbm_Bps) / (float(reference) * 1e9)
    if hbm_ratio >= peak_ratio:
        return rate, where  # compute-bound there: the MFU carries over
    return rate * hbm_ratio / peak_ratio, (f"{where}, its speed scaled by HBM bandwidth ({hbm_Bps / 1e9:,.0f} "
                                           f"against {float(reference):,.0f} GB/s: a CNN step is memory-bound)")


def kind_speed(choice: KindMfu, workload: "Workload | None", arch: str) -> float:
    """A :class:`KindMfu`'s share of the peak it is a rate of, ``workload``'s relative MFU in: two
    options of one run (rates at the same peak) compare by it."""
    return choice.rate * (1.0 if workload is None else relative_mfu(workload, choice.runs_as, arch))


def _tf32_at_fp32_speed(kind, arch, dtype, peak_flops, compute_capability, workload,
                        tf32_rate: float, hbm_Bps: float | None = None) -> KindMfu | None:
    """A TF32 run's FP32 option: the FP32 measurement as a rate at the TF32 peak (None for other
    dtypes, or without both peaks)."""
    peaks = peak_flops or {}
    if dtype != "tf32" or not (peaks.get("fp32") and peaks.get("tf32")):
        return None
    fp32 = _kind_choice(kind, arch, "fp32", peak_flops, compute_capability, workload, hbm_Bps)
    if fp32 is None:
        return None
    return KindMfu(rate=fp32.rate * float(peaks["fp32"]) / float(peaks["tf32"]), runs_as="fp32", entry=fp32.entry,
                   source=f"{kind} default for {arch} tf32 at the FP32 speed (cuDNN keeps FP32 kernels "
                          f"where they are faster; the TF32 measurement gives MFU {tf32_rate:.3f}): "
                          f"{_measured_text(fp32.entry, fp32.rate)}")


def tf32_alternative(kind: str, arch: str, dtype: str, peak_flops: dict | None = None,
                     compute_capability: int | None = None, workload: "Workload | None" = None,
                     hbm_Bps: float | None = None) -> KindMfu | None:
    """A TF32 run's option :func:`kind_mfu` did not take (the TF32 measurement, or the FP32 one
    at the FP32 speed), or None. The choice compares per-image rates; the fixed time per
    micro-batch, placed around each measurement's own micro-batch, can overturn it, so a whole
    micro-batch compares both (:func:`costmodel.training.iteration.micro_batch_forward`)."""
    options = _kind_options(kind, arch, dtype, peak_flops, compute_capability, workload, hbm_Bps)
    if options is None or options[1] is None:
        return None
    return _ranked(*options, workload, arch)[1]


def kind_mfu(kind: str, arch: str, dtype: str, peak_flops: dict | None = None,
             compute_capability: int | None = None, workload: "Workload | None" = None,
             hbm_Bps: float | None = None) -> KindMfu | None:
    """The default MFU of a model kind on a GPU architecture running ``dtype`` (None for kinds
    without a table: transformers keep the GPU's and the architecture's defaults).

    An unmeasured architecture borrows the nearest measured one's value; a dtype measured
    nowhere takes the fp16 value rescaled to ``dtype``'s peak, i.e. the fp16 speed; FP32 on a GPU
    of ``compute_capability`` whose FP32 lanes are half shared with INT32 reads its own
    measurement; TF32 takes the FP32 speed where ``workload`` runs faster so (:func:`_kind_choice`).
    ``rate`` is before ``workload``'s relative MFU, in the column of ``runs_as``."""
    return _kind_choice(kind, arch, dtype, peak_flops, compute_capability, workload, hbm_Bps)


def default_mfu_for_kind(kind: str, arch: str, dtype: str, peak_flops: dict | None = None,
                         compute_capability: int | None = None, hbm_Bps: float | None = None
                         ) -> tuple[float, str] | None:
    """(MFU, source) of :func:`kind_mfu` for the kind's measured model itself."""
    found = kind_mfu(kind, arch, dtype, peak_flops, compute_capability, hbm_Bps=hbm_Bps)
    return None if found is None else (found.rate, found.source)


MAX_PARAMS = 2.0**50  # ~10^15 parameters: 10^3 × the largest published models; bounds every product
BARE_COUNT_MIN = 1000  # typed without a unit, a smaller count is a missing B or M, not a model (or a token budget)


def parse_param_count(text: str | int | float, field: str = "model", noun: str = "parameter") -> int:
    """A parameter count from ``7B``, ``124M``, ``1.3e9``, ``350k`` or a number (``noun``: what
    is counted, for the error line: ``token`` for --tokens)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        match = _COUNT.match(str(text))
        if not match:
            raise InputError(field, text, PARAMS_ALLOWED if noun == "parameter"
                             else f"a {noun} count such as 2T, 300B or 1e12")
        value = float(match.group(1)) * _SUFFIX[match.group(2).upper()]
        if not match.group(2) and 1 <= value < BARE_COUNT_MIN:  # `--model 7` read as 7 parameters (an audit)
            shown = match.group(1)
            raise InputError(field, text, f"a {noun} count with its unit, such as {shown}B or {shown}M (bare, a "
                                          f"number below {BARE_COUNT_MIN:g} would be that many {noun}s)")
    if not 1 <= value <= MAX_PARAMS:
        raise InputError(field, text, f"a {noun} count from 1 to {MAX_PARAMS:.3g}")
    if abs(value - round(value)) > max(1e-6, 1e-12 * value):  # 1.5 or 7000000000.4 parameters; 1.3B is whole
        raise InputError(field, text, f"a whole {noun} count (such as 7B, 124M or 1.3e9)")
    return int(round(value))


def derived_shape(params: int) -> tuple[int, int, int]:
    """(layers, hidden size, heads) of a decoder transformer with ``params`` parameters."""
    per_layer3 = PARAMS_PER_LAYER_HIDDEN2 * DERIVED_ASPECT_RATIO**2
    layers = max(1, round((params / per_layer3) ** (1.0 / 3.0)))
    hidden = DERIVED_ASPECT_RATIO * layers
    return layers, hidden, max(1, hidden // DERIVED_HEAD_DIM)


def _from_count(params: int, text: object) -> Workload:
    layers, hidden, heads = derived_shape(params)
    return Workload(
        name=str(text), params=params, layers=layers, hidden_size=hidden, heads=heads,
        vocab=0, logits_vocab=DERIVED_VOCAB, seq_len=DERIVED_SEQ_LEN, kind="transformer",
        source="parameter count given by the user; shape derived (h = 128·L, P = 12·L·h², no embedding; "
               "logits over GPT-3's 50,257-token vocabulary)",
    )


def _preset(name: str) -> Workload:
    """A bundled preset as its table states it (no derived fields)."""
    return Workload(name=name, **_data()["models"][name])


def workload_of(model: object) -> Workload:
    """``model`` as a Workload: a preset name, a parameter count (:func:`load_model`) or a
    Workload itself; anything else (None) one error naming it. iteration and plan read it here."""
    if isinstance(model, Workload):
        # built in Python: the file's checks, and tuples (a workload is hashed); tuples of floats
        # (every preset's) are checked once each
        shape, knots = model.layer_matrices, model.gradient_readiness
        if not (type(shape) is tuple and not shape):  # () is "not stated"; an array is compared by type
            checked = _checked_matrices(shape, model.kind) if _floats(shape) else \
                _layer_matrices({"layer_matrices": _as_list(shape)}, model.kind, "layer_matrices")
            model = model if checked is shape else replace(model, layer_matrices=checked)
        if not (type(knots) is tuple and not knots):
            pairs = type(knots) is tuple and all(type(k) is tuple and _floats(k) for k in knots)
            checked = _checked_readiness(knots) if pairs else \
                _gradient_readiness({"gradient_readiness": _as_list(knots)}, "gradient_readiness")
            model = model if checked is knots else replace(model, gradient_readiness=checked)
        if model.cross_attention_layers:  # the file's rule (0, every decoder-only preset's, needs none)
            _check_cross_attention(model.cross_attention_layers, model.layers, model.kind, model.relative_attention,
                                   model.memory_length, "cross_attention_layers")
        return model
    if isinstance(model, os.PathLike):  # a pathlib.Path as the TOML path it names
        return load_model_file(os.fspath(model))
    if isinstance(model, (str, int, float)) and not isinstance(model, bool):
        return load_model(model)
    if is_real(model):  # numpy's parameter counts
        return load_model(float(model))
    raise InputError("model", model, "a preset name, a parameter count such as 7B, 124M, 1.3e9, or a Workload")


@functools.lru_cache(maxsize=256)
def _checked_matrices(shape: tuple, kind: str) -> tuple:
    """``shape`` itself once the file's checks pass (:func:`_layer_matrices`)."""
    _layer_matrices({"layer_matrices": list(shape)}, kind, "layer_matrices")
    return shape


@functools.lru_cache(maxsize=256)
def _checked_readiness(knots: tuple) -> tuple:
    """``knots`` themselves once the file's checks pass (:func:`_gradient_readiness`)."""
    _gradient_readiness({"gradient_readiness": [list(k) for k in knots]}, "gradient_readiness")
    return knots


def _floats(value) -> bool:
    """A tuple of Python floats (what the loaders make): nothing to check or convert."""
    return type(value) is tuple and all(type(v) is float for v in value)


def _as_list(value):
    """Lists (and numpy arrays, as their lists) all the way down, as a TOML file gives them; anything
    else as it is, for the check to name."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    return [_as_list(v) for v in value] if isinstance(value, (list, tuple)) else value


def load_model(name_or_params: str | int | float) -> Workload:
    """A preset by name or alias (case-insensitive) or a decoder transformer by parameter count."""
    key = str(name_or_params).strip().lower()
    models = _data()["models"]
    key = _data().get("aliases", {}).get(key, key)  # an alias is its preset (no copy: load_model runs often)
    if key in models:
        return Workload(name=key, **models[key], **preset_relative_mfu(key))
    if key.endswith(".toml"):
        return load_model_file(str(name_or_params).strip())
    if isinstance(name_or_params, (int, float)) or _COUNT.match(key):
        return _from_count(parse_param_count(name_or_params), name_or_params)
    raise UnknownNameError("model", name_or_params, [*models, *model_aliases(), "<count such as 7B, 124M, 1.3e9>"])


# The Workload fields' own defaults, where a user file leaves a switch out.
_DEFAULTS = {field.name: field.default for field in fields(Workload)}
USER_FIELDS = ("name", "params", "layers", "hidden_size", "heads", "vocab", "seq_len", "kind",
               "flops_per_sample", "activation_elements_per_sample", "flops_params", "tensors",
               "embedding_params", "logits_vocab", "tied_embeddings", "relative_attention", "memory_length",
               "cross_attention_layers", "attention_dropout", "max_positions", "layer_matrices",
               "gradient_readiness", "relative_mfu_fp32", "relative_mfu_16bit",
               "backbone", "image_size", "source")


def _user_params(entry: dict, path: str) -> int:
    """``params`` as given, else a transformer's 12·L·h² + its input embedding (``embedding_params``
    where given, else vocab·h; Kaplan et al. 2020, Table 1), plus vocab·h where the output head is
    its own matrix (``tied_embeddings = false``, as Llama's)."""
    if "params" in entry:
        return parse_param_count(entry["params"], "params")
    if entry.get("kind", "transformer") in ("cnn",) or not {"layers", "hidden_size"} <= set(entry):
        raise InputError("params", "missing", f"a parameter count in {path} (or layers and hidden_size "
                         "for a transformer)")
    hidden, vocab = int(entry["hidden_size"]), int(entry.get("vocab", 0))
    embedding = int(entry.get("embedding_params") or vocab * hidden)
    head = 0 if entry.get("tied_embeddings", _DEFAULTS["tied_embeddings"]) else vocab * hidden
    layers = int(entry["layers"])
    derived = int(PARAMS_PER_LAYER_HIDDEN2 * layers * hidden**2 + embedding + head)
    try:
        return parse_param_count(derived, "params")  # the range a count given as such must be in
    except InputError as error:  # name what was typed: the count is derived (an audit, 2026-11-30)
        # both fields named: a hidden_size of 1e12 was blamed on layers = 12 (CLI audit, 2026-12-01)
        raise InputError("model.layers and model.hidden_size", f"{layers} and {hidden}",
                         f"a layer count and width whose parameters (12 x layers x hidden_size^2 + embeddings, "
                         f"here {derived:.3g}) are in range: {error.allowed}") from None


def check_image_model(kind: str, entry: dict) -> None:
    """What an image model must state, since nothing can be derived from a layer shape: its
    training FLOPs per sample (CNN, ViT) and, for a CNN, its activation elements per sample
    (the memory model's only input for a CNN's activations: without it they would count as
    zero and any micro-batch would fit) and its gradient tensors (``tensors``, or conv ``layers``
    at 3 each: without either a transformer's layer count would stand in, and a micro-batch's
    fixed time would come out a tenth of ResNet-50's). Checked for user files and, by a test,
    every preset."""
    needed = {"flops_per_sample": f"training FLOPs per sample > 0 for a {kind} model"} if kind in ("cnn", "vit") else {}
    if kind == "cnn":
        needed["activation_elements_per_sample"] = (
            "activation elements per sample > 0 for a cnn model (fvcore's count, as in timm's model cards' "
            "'Activations (M)'), else its activations would take no memory")
    for field, allowed in needed.items():
        value = entry.get(field, "missing")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise InputError(f"model.{field}", value, allowed)
    for field, most in PER_SAMPLE_LIMITS.items():  # finite and within reach of a real model
        value = entry.get(field)
        if value is not None and not (isinstance(value, (int, float)) and not isinstance(value, bool)
                                      and 0 < value <= most):
            raise InputError(f"model.{field}", value, f"a number > 0 and at most {most:.0e} "
                                                      f"({PER_SAMPLE_LIMIT_REASON[field]})")
    if kind == "cnn" and not any(_positive_int(entry.get(field)) for field in ("tensors", "layers")):
        raise InputError("model.tensors", entry.get("tensors", "missing"),
                         "the gradient tensors of a cnn model (an integer >= 1; ResNet-50 161), or its conv "
                         "layers in layers (3 tensors each: weight, batch-norm weight and bias): a micro-batch's "
                         "fixed time and per-tensor synchronisation count them")


# Per-sample quantities a model file may state: at most about 1,000x the largest bundled model's
# (ViT-L/16 369.6 GFLOPs for training; VGG16's and ResNet-152's activations 13.6 M and 22.6 M).
PER_SAMPLE_LIMITS = {"flops_per_sample": 1e15, "activation_elements_per_sample": 1e11}
PER_SAMPLE_LIMIT_REASON = {"flops_per_sample": "training FLOPs per sample; ViT-L/16's are 3.7e11",
                           "activation_elements_per_sample": "ResNet-152's are 2.3e7"}
# A transformer layer holds at least its query and output projections: 2·h² parameters.
MIN_LAYER_PARAMS_PER_HIDDEN2 = 2


def _positive_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


COUNT_FIELDS = ("layers", "hidden_size", "heads", "seq_len", "vocab", "tensors", "flops_params",
                "embedding_params", "logits_vocab", "memory_length", "cross_attention_layers", "image_size",
                "max_positions")
# What a model with attention layers cannot be without: at least one layer, a hidden size, a
# head and (given) a token per sample. Heads need not divide the hidden size (GPT-3 1.3B: 2,048
# over 24, as its paper prints): the model counts heads only for the attention scores.
AT_LEAST_ONE = ("layers", "hidden_size", "heads", "seq_len")


def _model_table(document: dict) -> dict:
    """The file's ``[model]`` table, or its top-level keys when it has none (never both)."""
    if "model" not in document:
        return dict(document)
    table = document["model"]
    if not isinstance(table, dict):
        raise InputError("model", table, "a [model] table of the model's fields (or the fields at top level)")
    beside = sorted(set(document) - {"model"})
    if beside:
        raise InputError(beside[0], document[beside[0]],
                         "nothing beside the [model] table: put every field inside it")
    return dict(table)


def _check_counts(entry: dict, kind: str) -> None:
    """Every integer field is an integer in range; a model with attention layers has at least one
    layer, hidden unit, head and token per sample. Checked before anything is derived from them."""
    for field in COUNT_FIELDS:
        value = entry.get(field, 0)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
            raise InputError(f"model.{field}", value, f"an integer from 0 to {MAX_COUNT}")
    if kind == "cnn":
        for field in ("seq_len", "max_positions"):  # the header printed seq_len while --seq-len refused it
            if entry.get(field):
                raise InputError(f"model.{field}", entry[field], "0 or absent for a cnn model: its input is an "
                                 "image (image_size), not a token sequence")
        return
    for field in AT_LEAST_ONE:
        if field in entry and entry[field] < 1:
            raise InputError(f"model.{field}", entry[field], f"an integer from 1 to {MAX_COUNT} for a {kind} model")
    heads, hidden = entry.get("heads"), entry.get("hidden_size")
    if heads and hidden and heads > hidden:  # 1,000 heads on 768 was taken, their score memory with it
        raise InputError("model.heads", heads, f"at most hidden_size {hidden:,} (a head attends over at least "
                         "one dimension; heads need not divide it: GPT-3 1.3B has 24 heads of 128 over 2,048)")
    if kind in TOKEN_RULE_KINDS and "flops_per_sample" in entry:
        raise InputError("model.flops_per_sample", entry["flops_per_sample"],
                         f"absent for a {kind} model: its FLOPs follow from its parameters and tokens "
                         "(flops_params sets the parameters its matmuls run over)")
    if kind == "vit" and "seq_len" not in entry:
        raise InputError("model.seq_len", "missing",
                         "the tokens per image of a vit model (patches + 1: 197 for 224x224 at patch 16); "
                         "--seq-len cannot set it")


def _user_relative_mfu(entry: dict, kind: str) -> dict:
    """A user CNN's relative MFU fields (:func:`relative_mfu`), each in :data:`RELATIVE_MFU_RANGE`;
    refused for other kinds, whose default MFU is not a measured model's."""
    given = {f"relative_mfu_{cls}": entry[f"relative_mfu_{cls}"] for cls in RELATIVE_MFU_CLASSES
             if f"relative_mfu_{cls}" in entry}
    for field, value in given.items():
        if kind != "cnn":
            raise InputError(f"model.{field}", value, f"absent for a {kind} model: only a cnn's default MFU "
                             "is a measured model's (ResNet-50's), which this scales")
        low, high = RELATIVE_MFU_RANGE
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise InputError(f"model.{field}", value, f"the model's MFU over ResNet-50's on the same GPU, "
                             f"a number in [{low:g}, {high:.4f}] (Winograd's 4x over ResNet-50's ceiling)")
    if not given:
        return {}
    return {**{field: float(value) for field, value in given.items()}, "relative_mfu_origin": "stated in the model file"}


def load_model_file(path: str) -> Workload:
    """A user model from a TOML file: a ``[model]`` table (or top-level keys) with ``kind``,
    ``layers``, ``hidden_size``, ``heads``, ``vocab``, ``seq_len`` and ``params`` (derived as
    12·L·h² + V·h when absent), or for CNNs ``flops_per_sample`` and ``params``."""
    import tomllib  # only when a user's file is read (the presets come through dpbase.bundled)

    from dpbase.readfile import read_text

    text = read_text(path, "model", "a readable UTF-8 TOML file")
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InputError("model", path, f"a valid TOML file ({error})") from None
    entry = _model_table(document)
    unknown = sorted(set(entry) - set(USER_FIELDS))
    if unknown:
        raise InputError(f"model.{unknown[0]}", entry[unknown[0]], ", ".join(USER_FIELDS))
    kind = str(entry.get("kind", "transformer"))
    if kind not in KINDS:
        raise InputError("model.kind", kind, ", ".join(KINDS))
    _check_counts(entry, kind)
    params = _user_params(entry, path)
    layers, hidden, heads = derived_shape(params)
    check_image_model(kind, entry)
    if kind in ("transformer", "bert") and not (entry.get("vocab") or entry.get("logits_vocab")):
        raise InputError("model.vocab", entry.get("vocab", "missing"),
                         f"the vocabulary size (an integer >= 1) of a {kind} model: its logits take memory "
                         "(GPT-2/GPT-3 50,257; BERT 30,522; Llama 2 32,000)")
    switches = {name: entry.get(name, _DEFAULTS[name]) for name in ("tied_embeddings", "relative_attention",
                                                                    "attention_dropout")}
    for field, value in switches.items():
        if not isinstance(value, bool):
            raise InputError(f"model.{field}", value, "true or false")
    if kind == "cnn" and (switches["relative_attention"] or entry.get("memory_length")):
        field = "relative_attention" if switches["relative_attention"] else "memory_length"
        raise InputError(f"model.{field}", entry[field], "false or 0 (or absent) for a cnn model: it has no attention")
    relative = _user_relative_mfu(entry, kind)
    for field in ("name", "backbone"):
        if not isinstance(entry.get(field, ""), str):
            raise InputError(f"model.{field}", entry[field], "a string")
    if entry.get("backbone") and entry["backbone"] not in _data()["models"]:  # a preset, or nothing to check against
        raise InputError("model.backbone", entry["backbone"], f"a preset's name ({', '.join(model_names())})")
    workload = Workload(
        name=str(entry.get("name", os.path.splitext(os.path.basename(os.fspath(path)))[0])), params=params,
        layers=int(entry.get("layers", layers)), hidden_size=int(entry.get("hidden_size", hidden)),
        heads=int(entry.get("heads", heads)), vocab=int(entry.get("vocab", 0)),
        # a transformer file without one: GPT-3's 2,048, or its own table's end if that is shorter
        seq_len=int(entry.get("seq_len", 0 if kind in ("cnn", "bert")
                              else min(DERIVED_SEQ_LEN, entry.get("max_positions") or DERIVED_SEQ_LEN))), kind=kind,
        source=str(entry.get("source", f"user model file {path}")),
        flops_per_sample=float(entry.get("flops_per_sample", 0.0)),
        activation_elements_per_sample=float(entry.get("activation_elements_per_sample", 0.0)),
        flops_params=int(entry.get("flops_params", 0)), tensors=int(entry.get("tensors", 0)),
        embedding_params=int(entry.get("embedding_params", 0)),
        logits_vocab=int(entry.get("logits_vocab", 0)), memory_length=int(entry.get("memory_length", 0)),
        cross_attention_layers=entry.get("cross_attention_layers", 0),
        max_positions=int(entry.get("max_positions", 0)), layer_matrices=_layer_matrices(entry, kind),
        gradient_readiness=_gradient_readiness(entry),
        backbone=entry.get("backbone", ""), image_size=int(entry.get("image_size", 0)), **switches, **relative)
    _check_cross_attention(entry.get("cross_attention_layers", 0), workload.layers, kind,
                           switches["relative_attention"], workload.memory_length)
    if workload.input_embedding_params > params:  # given, or vocab × hidden: a part of params
        field = "model.embedding_params" if entry.get("embedding_params") else "model.vocab"
        raise InputError(field, entry.get("embedding_params") or workload.vocab,
                         f"an input embedding of at most the model's {params:,} params (vocab × hidden "
                         f"= {workload.vocab:,} × {workload.hidden_size:,} here, or embedding_params)")
    _check_sizes_agree(entry, kind, params, workload.input_embedding_params)
    fewest = listed_matrices(workload)
    if entry.get("tensors") and entry["tensors"] < fewest:
        raise InputError("model.tensors", entry["tensors"], f"at least {fewest:,}: the matrices its layer_matrices "
                         "list in every layer, and its embeddings")
    if workload.seq_len:  # a file's own sequence against its own table
        check_positions(workload, workload.seq_len, "model.seq_len")
    return workload


def _check_cross_attention(cross, layers: int, kind: str, relative: bool, memory: int,
                           field: str = "model.cross_attention_layers") -> None:
    """``cross_attention_layers``: a whole number, only a transformer's (an encoder-decoder's), the
    decoder's share of its ``layers`` (at most all but one: an encoder layer feeds them), and not
    with Transformer-XL's relative positions or memory, which are modelled for a decoder alone."""
    if isinstance(cross, bool) or not isinstance(cross, int) or cross < 0:
        raise InputError(field, cross, f"an integer from 0 to {MAX_COUNT}: the decoder layers among layers")
    if not cross:
        return
    if kind != "transformer":
        raise InputError(field, cross, f"0 (or absent) for a {kind} model: only a transformer (an "
                         "encoder-decoder such as BART) has a decoder attending to an encoder")
    if cross >= layers:
        raise InputError(field, cross, f"at most {layers - 1} for a model of {layers} layers: the decoder layers "
                         "among them (BART-large: 12 of 24), the encoder's feeding them")
    if relative or memory:
        raise InputError(field, cross, "0 (or absent) with relative_attention or memory_length: "
                         "Transformer-XL's positions and memory are modelled for a decoder alone")


def _layer_matrices(entry: dict, kind: str, field: str = "model.layer_matrices") -> tuple[float, ...]:
    """A model file's ``layer_matrices``: 1 to 64 positive numbers (a layer's matrices in forward
    order, multiples of h²), for a model with layers of attention."""
    value = entry.get("layer_matrices")
    if value is None:
        return ()
    if kind == "cnn":
        raise InputError(field, value, "absent for a cnn model: its buckets are cut by bytes")
    if not isinstance(value, list) or not 1 <= len(value) <= 64 or not all(
            is_real(k) and not isinstance(k, bool) and 0 < k <= 1e6 for k in value):
        raise InputError(field, value, "1 to 64 numbers above 0, a layer's matrices in forward "
                         "order as multiples of hidden_size² (GPT-2: [3, 1, 4, 4]; Llama 2 7B: "
                         "[1, 1, 1, 1, 2.6875, 2.6875, 2.6875])")
    return tuple(float(k) for k in value)


MAX_READINESS_KNOTS = 64


def _gradient_readiness(entry: dict, field: str = "model.gradient_readiness") -> tuple[tuple[float, float], ...]:
    """A model file's ``gradient_readiness``: 2 to 64 pairs [bytes share, backward share] from
    [0, 0] to [1, 1], the bytes share rising and the backward share never falling."""
    value = entry.get("gradient_readiness")
    if value is None:
        return ()
    pairs = value if isinstance(value, list) else None
    ok = pairs is not None and 2 <= len(pairs) <= MAX_READINESS_KNOTS and all(
        isinstance(p, list) and len(p) == 2 and all(is_real(v) and not isinstance(v, bool) and 0 <= v <= 1 for v in p)
        for p in pairs)
    if ok:
        xs, ys = [float(p[0]) for p in pairs], [float(p[1]) for p in pairs]
        ok = (xs[0], ys[0], xs[-1], ys[-1]) == (0.0, 0.0, 1.0, 1.0) and all(
            b > a for a, b in zip(xs, xs[1:])) and all(b >= a for a, b in zip(ys, ys[1:]))
    if not ok:
        raise InputError(field, value, f"2 to {MAX_READINESS_KNOTS} pairs [share of the gradient bytes, share of "
                         "backward] when backward has produced them, from [0, 0] to [1, 1], the bytes rising and "
                         "the backward share never falling (VGG-16: [[0, 0], [0.8936, 0.0048], ..., [1, 1]])")
    return tuple((float(x), float(y)) for x, y in pairs)


def _check_sizes_agree(entry: dict, kind: str, params: int, embedding: int) -> None:
    """The counts a file states agree with its parameters: a model's matmuls run over at most its
    parameters (``flops_params``), and a transformer's stated layers of width h hold at least
    2·h² parameters each beside its embedding (an FSDP unit, one layer, of 1 byte came from
    38.6 M parameters stated for a 768-wide layer of a 50,257-token vocabulary: the embedding
    alone)."""
    if entry.get("flops_params", 0) > params:
        raise InputError("model.flops_params", entry["flops_params"],
                         f"at most the model's {params:,} params (the parameters its matmuls run over)")
    layers, hidden = entry.get("layers", 0), entry.get("hidden_size", 0)
    least = MIN_LAYER_PARAMS_PER_HIDDEN2 * layers * hidden * hidden + embedding
    if kind != "cnn" and layers and hidden and params < least:
        raise InputError("model.params", params, f"at least {least:,} for {layers} layers of hidden size {hidden:,} "
                         f"and a {embedding:,}-parameter embedding (each layer's query and output projections "
                         "alone are 2·h² parameters)")


def resolve_seq_len(workload: Workload, seq_len: int | None) -> int:
    """The sequence length to use; only token-rule models accept a user value. A bert model file
    without one needs it here (a decoder's 2,048, GPT-3's, would be 4-16x BERT's sequences)."""
    if seq_len is None:
        if workload.kind == "bert" and not workload.seq_len:
            raise InputError("seq_len", "missing", f"--seq-len, or seq_len in the model file: the tokens per "
                             f"sample of {workload.name}, a bert model (BERT pretraining: 128 in phase 1, "
                             "512 in phase 2)")
        return workload.seq_len
    if not workload.uses_token_rule:
        raise InputError("seq_len", seq_len, f"no value for {workload.kind} models ({workload.name})")
    if not is_whole(seq_len) or not 1 <= seq_len <= MAX_COUNT:  # 1.5 or True made a plan of fractional tokens
        raise InputError("seq_len", seq_len, f"an integer from 1 to {MAX_COUNT}")
    check_positions(workload, int(seq_len), "seq_len")
    return int(seq_len)


def check_positions(workload: Workload, seq_len: int, field: str) -> None:
    """A sequence no longer than the model's learned position table (``max_positions``): GPT-2's
    1,024 learned positions end there, and a longer sequence needs a model with a longer table
    (its parameters change), not the same model run longer."""
    if workload.max_positions and seq_len > workload.max_positions:
        raise InputError(field, seq_len, f"at most {workload.max_positions:,} for {workload.name}: its learned "
                         f"position embeddings end there (a longer context is another model: a model file "
                         f"with its own max_positions and params)")


def tokens_per_sample(workload: Workload, seq_len):
    """Tokens in one sample: the sequence length, ViT patches + [CLS], or 0 for CNNs."""
    return 0 * seq_len if workload.kind == "cnn" else seq_len


def key_length(workload: Workload, seq_len):
    """Keys each query attends to: the sample's tokens and a memory's cached ones (Transformer-XL's
    ``mem_len``; 0 for other models); elementwise."""
    return seq_len + workload.memory_length


def counts_attention(workload: Workload, include_attention: bool | None = None) -> bool:
    """Whether a step counts the attention score matmuls: ``include_attention`` where given,
    else wherever the FLOPs follow the token rule (a CNN's or a ViT's preset FLOPs already hold
    theirs; True for one is refused)."""
    if not workload.uses_token_rule:
        if include_attention:
            raise InputError("attention", True,
                             f"off for {workload.kind} models (their FLOPs already include it)")
        return False
    return True if include_attention is None else bool(include_attention)


def training_flops_per_sample(workload: Workload, seq_len, include_attention: bool | None = None):
    """Forward + backward FLOPs for one sample; works elementwise on numpy arrays.

    With a memory of cached tokens (Transformer-XL: ``qkv_net(cat([mems, w]))``) each layer's
    query, key and value projections (``3·h²`` weights) also run over them, forward and
    backward: ``6 · 3h² · L · memory`` more. The score matmuls add ``6 · 2 · L · h · s · k``
    (Q·Kᵀ and P·V over ``k`` keys, PaLM's count, Chowdhery et al. 2022, App. B; relative
    attention's position term B·D is a third product), and an encoder-decoder's
    ``cross_attention_layers`` the same two products over the source's ``s`` tokens
    (``6 · 2 · C · h · s²``); counted unless ``include_attention`` is False
    (:func:`counts_attention`): the MFU defaults come from runs that counted them
    (Megatron-LM's and PaLM's formulas), and at long sequences they are most of the step (llama3-8b
    at 32k: more than the 6·P·s of its weights)."""
    if not counts_attention(workload, include_attention):
        if not workload.uses_token_rule:
            return workload.flops_per_sample + 0 * seq_len
    flops = TRAINING_FLOPS_PER_PARAM_TOKEN * workload.matmul_params * seq_len
    if workload.memory_length:
        flops = flops + (TRAINING_FLOPS_PER_PARAM_TOKEN * QKV_PARAMS_PER_LAYER_HIDDEN2 * workload.layers
                         * workload.hidden_size ** 2 * workload.memory_length)
    if counts_attention(workload, include_attention):
        products = 3 if workload.relative_attention else 2
        flops = flops + (ATTENTION_FLOPS_PER_LAYER_HIDDEN_TOKEN2 / 2 * workload.hidden_size * seq_len
                         * (products * workload.layers * key_length(workload, seq_len)
                            + 2 * workload.cross_attention_layers * seq_len))
    return flops
