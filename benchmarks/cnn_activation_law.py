"""Fit the activation-traffic law's one constant (costmodel/training/activation_law.py) and say
how well it predicts CNNs it was not fitted on.

Data: timm's single-GPU training throughputs of 20 CNNs in two memory layouts
(tests/data/cnn_speed/timm_train_amp_rtx3090.csv); each model's training FLOPs (6 × its forward
multiply-accumulates) and activation elements counted layer by layer (tools/cnn_counts.py).
Each model's measured ratio is its MFU over ResNet-50's, images/s × FLOPs of each divided,
averaged over the two layouts (as models.toml's [mfu_by_kind.cnn.relative_timm]). ``κ`` minimises
the mean |log(law ÷ measured)| over the models on a grid of 10 FLOPs per activation element.
Leave-one-family-out: each family (ResNet basic blocks, ResNet bottlenecks, ResNeXt, SE-ResNeXt,
Wide ResNet, VGG, MobileNetV2, EfficientNet) predicted with ``κ`` fitted on the others (ResNet-50,
the reference, is the law's fixed point and in no fit). The worst, VGG13 at 1.51×, is partly
timm's own row: in NCHW it trains slower than VGG16.

    python benchmarks/cnn_activation_law.py
"""

from __future__ import annotations

import csv
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from costmodel.training import activation_law, workloads  # noqa: E402
from tools import cnn_counts  # noqa: E402

DATA = ROOT / "tests" / "data" / "cnn_speed" / "timm_train_amp_rtx3090.csv"
REFERENCE = "resnet50"
GRID = range(10, 40_001, 10)  # FLOPs per activation element


def family(model: str) -> str:
    for prefix, name in (("resnet18", "resnet basic"), ("resnet34", "resnet basic"), ("resnet", "resnet"),
                         ("resnext", "resnext"), ("seresnext", "se-resnext"), ("wide_resnet", "wide resnet"),
                         ("vgg", "vgg"), ("mobilenet", "mobilenetv2"), ("efficientnet", "efficientnet"),
                         ("tf_efficientnet", "efficientnet")):
        if model.startswith(prefix):
            return name
    raise ValueError(model)


def shapes() -> dict[str, tuple[float, float]]:
    """(training FLOPs, activation elements) per sample of each timm model, counted."""
    out = {}
    for model, build in cnn_counts.TIMM_MODELS.items():
        counts = build()
        out[model] = (6.0 * counts.macs, float(counts.activations))
    return out


def table(path: Path = DATA) -> dict:
    """The file as a relative-MFU table (workloads.relative_mfu_ratios's shape): one row of
    images/s per layout, one column per model."""
    by_layout: dict[str, dict[str, float]] = {}
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            by_layout.setdefault(row["layout"], {})[row["model"]] = float(row["train_samples_per_sec"])
    columns = list(next(iter(by_layout.values())))
    return {"reference": REFERENCE, "columns": columns,
            "rows": {layout: [rates[model] for model in columns] for layout, rates in by_layout.items()}}


def measured_ratios(path: Path = DATA) -> dict[str, float]:
    """Each model's MFU over ResNet-50's, the mean over the file's layouts, as models.toml's
    tables compute it (workloads.relative_mfu_ratios)."""
    flops = {model: shape[0] for model, shape in shapes().items()}
    measured = table(path)
    return {model: statistics.fmean(workloads.relative_mfu_ratios(measured, model, flops))
            for model in measured["columns"] if model != REFERENCE}


def predicted(model: str, kappa: float, shape: dict[str, tuple[float, float]]) -> float:
    return activation_law.relative(*shape[model], *shape[REFERENCE], kappa)


def fit(models: list[str], measured: dict[str, float], shape: dict[str, tuple[float, float]]) -> int:
    """The grid ``κ`` with the least mean |log(law ÷ measured)| over ``models`` (the first on ties)."""
    return min(GRID, key=lambda kappa: statistics.fmean(abs(math.log(predicted(m, kappa, shape) / measured[m]))
                                                        for m in models))


def evaluate() -> dict:
    shape, measured = shapes(), measured_ratios()
    models = sorted(measured)
    kappa = fit(models, measured, shape)
    held_out = {}
    for name in sorted({family(m) for m in models}):
        kept = [m for m in models if family(m) != name]
        kappa_out = fit(kept, measured, shape)
        for model in models:
            if family(model) == name:
                held_out[model] = (predicted(model, kappa_out, shape) / measured[model], kappa_out)
    return {"kappa": kappa, "measured": measured, "shape": shape,
            "in_sample": {m: predicted(m, kappa, shape) / measured[m] for m in models}, "held_out": held_out}


def _summary(ratios: list[float]) -> str:
    logs = [abs(math.log(r)) for r in ratios]
    return (f"median {math.exp(statistics.median(logs)):.2f}x, within 1.25x {sum(0.8 <= r <= 1.25 for r in ratios)}"
            f" of {len(ratios)}, worst {max(max(ratios), 1 / min(ratios)):.2f}x")


def main() -> None:
    result = evaluate()
    print(f"kappa = {result['kappa']} FLOPs per activation element (fitted on all {len(result['measured'])} models)")
    print("| model | FLOPs/activation | measured ratio | law in-sample / measured | family left out / measured (its kappa) |")
    print("|---|---|---|---|---|")
    for model in sorted(result["measured"], key=lambda m: (family(m), m)):
        flops, activations = result["shape"][model]
        ratio, kappa = result["held_out"][model]
        print(f"| {model} | {flops / activations:.0f} | {result['measured'][model]:.3f} | "
              f"{result['in_sample'][model]:.2f} | {ratio:.2f} ({kappa}) |")
    print("in-sample:", _summary(list(result["in_sample"].values())))
    print("each family left out:", _summary([r for r, _ in result["held_out"].values()]))
    print("ResNet-50's MFU for every CNN:", _summary([1 / m for m in result["measured"].values()]))


if __name__ == "__main__":
    main()
