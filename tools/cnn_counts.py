"""CNNs' sizes counted layer by layer from their architectures: the presets' (models.toml cites
this) and the models behind the activation-traffic law (benchmarks/cnn_activation_law.py).

Each convolution of ``c_in`` to ``c_out`` channels, kernel ``k`` and ``g`` groups, producing an
``s × s`` map, does ``s² · c_out · (c_in / g) · k²`` multiply-accumulates forward and produces
``s² · c_out`` activation elements (fvcore's count, the one timm's model cards print as
"Activations (M)"); a fully connected layer likewise. Parameters are the weights, the biases
where a layer has them and two per batch-norm channel. Architectures as torchvision and timm
build them: ResNet v1.5 (stride on the 3×3 convolution; basic blocks for ResNet-18/34), ResNeXt with ``groups × width`` channels
in its bottleneck, squeeze-and-excitation with reduction 16 after each bottleneck, EfficientNet's
MBConv blocks (Tan & Le 2019, Table 1) with SE at a quarter of each block's input channels and
channels scaled by the width multiplier and rounded to multiples of 8, MobileNetV2's inverted
residuals (Sandler et al. 2018, Table 2), VGG's configurations A, B, D, E (with biases, no batch
norm).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from costmodel.training.overlap import ready_share
from costmodel.training.tensors import CNN_TENSORS_FILE
from costmodel.training.workloads import _law_constants


@dataclass
class LayerCounts:
    """A network's totals, accumulated layer by layer (forward multiply-accumulates, fvcore's activation
    elements, parameters, gradient tensors), and each layer's ``(macs, activations, params)`` in
    forward order (``layers``: what :func:`gradient_readiness` reads)."""

    macs: int = 0
    activations: int = 0
    params: int = 0
    tensors: int = 0
    layers: list[tuple[int, int, int]] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)  # each gradient tensor's parameters, forward order

    def conv(self, c_in: int, c_out: int, kernel: int, side: int, groups: int = 1, bias: bool = False,
             kernel_w: int | None = None, weights: bool = True) -> None:
        """A convolution producing a ``side`` × ``side`` map; ``kernel_w``: a kernel ``kernel`` ×
        ``kernel_w`` (Inception's factorised 1×7 and 7×1), square where not given; ``weights``
        False: weights an earlier call counted (a layer shared by a pyramid's levels), its work only."""
        taps = kernel * (kernel if kernel_w is None else kernel_w)
        macs, outputs = side * side * c_out * (c_in // groups) * taps, side * side * c_out
        tensors = ([c_out * (c_in // groups) * taps] + ([c_out] if bias else [])) if weights else []
        self._add(macs, outputs, tensors)

    def norm(self, channels: int) -> None:
        self._add(0, 0, [channels, channels])

    def dense(self, c_in: int, c_out: int) -> None:
        self._add(c_in * c_out, c_out, [c_in * c_out, c_out])

    def _add(self, macs: int, activations: int, tensors: list[int]) -> None:
        """One layer: its forward multiply-accumulates, output elements and gradient tensors
        (weight, then bias: PyTorch's parameter order)."""
        self.macs += macs
        self.activations += activations
        self.params += sum(tensors)
        self.tensors += len(tensors)
        self.layers.append((macs, activations, sum(tensors)))
        self.sizes.extend(tensors)


def bottleneck(net: LayerCounts, c_in: int, inner: int, out: int, side: int, stride: int = 1, groups: int = 1,
               projection: bool = False) -> int:
    """One ResNet bottleneck with its batch norms: a 1×1 to ``inner`` channels on the input's
    ``side`` × ``side`` map, the 3×3 (``groups``; the stride on it, v1.5) and the 1×1 to ``out`` on
    the strided map, and a 1×1 projection shortcut where ``projection``; the output's side."""
    net.conv(c_in, inner, 1, side)
    net.norm(inner)
    side = math.ceil(side / stride)
    net.conv(inner, inner, 3, side, groups)
    net.norm(inner)
    net.conv(inner, out, 1, side)
    net.norm(out)
    if projection:
        net.conv(c_in, out, 1, side)
        net.norm(out)
    return side


def bottleneck_net(blocks: tuple[int, ...], groups: int = 1, width: int = 64, squeeze: bool = False,
                   side: int = 224) -> LayerCounts:
    """ResNet-50/101/152 (``groups`` 1, ``width`` 64), ResNeXt (32 × 4) and SE-ResNeXt."""
    net = LayerCounts()
    side //= 2
    net.conv(3, 64, 7, side)
    net.norm(64)
    side //= 2  # the max pool
    c_in = 64
    for stage, count in enumerate(blocks):
        inner, out = groups * width * 2**stage, 256 * 2**stage
        for block in range(count):
            side = bottleneck(net, c_in, inner, out, side, 2 if block == 0 and stage > 0 else 1, groups, block == 0)
            if squeeze:
                net.conv(out, out // 16, 1, 1, bias=True)
                net.conv(out // 16, out, 1, 1, bias=True)
            c_in = out
    net.dense(2048, 1000)
    return net


def basic_net(blocks: tuple[int, ...], side: int = 224) -> LayerCounts:
    """ResNet-18 (2-2-2-2) and ResNet-34 (3-4-6-3): two 3×3 convolutions a block."""
    net = LayerCounts()
    side //= 2
    net.conv(3, 64, 7, side)
    net.norm(64)
    side //= 2
    c_in = 64
    for stage, count in enumerate(blocks):
        out = 64 * 2**stage
        for block in range(count):
            side //= 2 if block == 0 and stage > 0 else 1
            net.conv(c_in, out, 3, side)
            net.norm(out)
            net.conv(out, out, 3, side)
            net.norm(out)
            if block == 0 and stage > 0:
                net.conv(c_in, out, 1, side)
                net.norm(out)
            c_in = out
    net.dense(512, 1000)
    return net


def vgg(layers: tuple[int | str, ...], side: int = 224) -> LayerCounts:
    """VGG: 3×3 convolutions with biases (``"M"`` a 2×2 max pool) and three dense layers."""
    net = LayerCounts()
    c_in = 3
    for layer in layers:
        if layer == "M":
            side //= 2
            continue
        net.conv(c_in, int(layer), 3, side, bias=True)
        c_in = int(layer)
    net.dense(512 * 7 * 7, 4096)
    net.dense(4096, 4096)
    net.dense(4096, 1000)
    return net


VGG = {11: (64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"),
       13: (64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"),
       16: (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"),
       19: (64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M")}


def mobilenet_v2(side: int = 224) -> LayerCounts:
    """MobileNetV2 1.0: expansion, channels, repeats, stride per stage; no squeeze-and-excitation."""
    net = LayerCounts()
    side = math.ceil(side / 2)
    net.conv(3, 32, 3, side)
    net.norm(32)
    c_in = 32
    for expansion, out, repeats, stride in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                                            (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
        for block in range(repeats):
            inner = c_in * expansion
            if expansion != 1:
                net.conv(c_in, inner, 1, side)
                net.norm(inner)
            side = math.ceil(side / (stride if block == 0 else 1))
            net.conv(inner, inner, 3, side, groups=inner)
            net.norm(inner)
            net.conv(inner, out, 1, side)
            net.norm(out)
            c_in = out
    net.conv(c_in, 1280, 1, side)
    net.norm(1280)
    net.dense(1280, 1000)
    return net


# EfficientNet-B0 (Tan & Le 2019, Table 1): expansion, kernel, stride, channels in, out, repeats
EFFICIENTNET_B0 = ((1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2), (6, 3, 2, 40, 80, 3),
                   (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4), (6, 3, 1, 192, 320, 1))


def _round_channels(channels: int, width: float, divisor: int = 8) -> int:
    scaled = channels * width
    rounded = max(divisor, int(scaled + divisor / 2) // divisor * divisor)
    return int(rounded + divisor if rounded < 0.9 * scaled else rounded)


def efficientnet(width: float, depth: float, side: int) -> LayerCounts:
    net = LayerCounts()
    side = math.ceil(side / 2)
    c_in = _round_channels(32, width)
    net.conv(3, c_in, 3, side)
    net.norm(c_in)
    for expansion, kernel, stride, _, out, repeats in EFFICIENTNET_B0:
        out = _round_channels(out, width)
        for block in range(math.ceil(depth * repeats)):
            inner = c_in * expansion
            if expansion != 1:
                net.conv(c_in, inner, 1, side)
                net.norm(inner)
            side = math.ceil(side / (stride if block == 0 else 1))
            net.conv(inner, inner, kernel, side, groups=inner)  # depthwise
            net.norm(inner)
            reduced = max(1, int(c_in * 0.25))
            net.conv(inner, reduced, 1, 1, bias=True)
            net.conv(reduced, inner, 1, 1, bias=True)
            net.conv(inner, out, 1, side)
            net.norm(out)
            c_in = out
    head = _round_channels(1280, width)
    net.conv(c_in, head, 1, side)
    net.norm(head)
    net.dense(head, 1000)
    return net


def ssd300(side: int = 300) -> LayerCounts:
    """SSD300 v1.1 as NVIDIA DeepLearningExamples builds it (PyTorch/Detection/SSD, ssd/model.py at
    729963dd47): torchvision's ResNet-50 through its third stage (conv1 … layer3; layer4, the pool
    and the classifier dropped) with that stage's stride set to 1, so it ends at 38 × 38 × 1024;
    five extra blocks, each a 1×1 then a 3×3 convolution with batch norm (256→512, 256→512,
    128→256 at stride 2, then 128→256 twice unpadded), to 19, 10, 5, 3 and 1; on each of the six
    maps a 3×3 location and a 3×3 class convolution with biases, for 4, 6, 6, 6, 4, 4 default boxes
    of 4 coordinates and 81 classes. Padded stride-2 layers round the side up (75 → 38)."""
    net = LayerCounts()
    side = math.ceil(side / 2)
    net.conv(3, 64, 7, side)
    net.norm(64)
    side = math.ceil(side / 2)  # the max pool: 150 -> 75
    c_in = 64
    for stage, count in enumerate((3, 4, 6)):
        inner, out = 64 * 2**stage, 256 * 2**stage
        for block in range(count):  # the third stage's stride is 1
            side = bottleneck(net, c_in, inner, out, side, 2 if block == 0 and stage == 1 else 1, projection=block == 0)
            c_in = out
    maps = [(c_in, side)]
    for inner, out, padded in ((256, 512, True), (256, 512, True), (128, 256, True), (128, 256, False),
                               (128, 256, False)):
        net.conv(c_in, inner, 1, side)
        net.norm(inner)
        side = math.ceil(side / 2) if padded else side - 2
        net.conv(inner, out, 3, side)
        net.norm(out)
        c_in = out
        maps.append((out, side))
    for (channels, map_side), boxes in zip(maps, (4, 6, 6, 6, 4, 4)):
        net.conv(channels, boxes * 4, 3, map_side, bias=True)
        net.conv(channels, boxes * 81, 3, map_side, bias=True)
    return net


def ssd320(side: int = 320, classes: int = 90, anchors: int = 6) -> LayerCounts:
    """SSD320 v1.2 as NVIDIA DeepLearningExamples trains it (TensorFlow/Detection/SSD at 729963dd47:
    configs/ssd320_bench.config, the TF Object Detection API's ``ssd_resnet50_v1_fpn`` with the
    weight-shared box predictor and focal loss: RetinaNet-50 at 320 × 320).

    * Backbone: TF-slim ``resnet_v1_50`` (nets/resnet_v1.py) without its classifier. Slim puts a
      block's stride on its *last* unit, and the extractor asks for ``store_non_strided_activations``
      (nets/resnet_utils.py ``stack_blocks_dense``), which runs that unit at stride 1 and subsamples
      its output: every unit of a block runs on the block's input map (80, 40, 20, 10), the first
      with a 1×1 projection shortcut (slim's ``bottleneck``: a shortcut convolution only where the
      depth changes). Convolutions without bias, each with a batch norm (scale and offset).
    * FPN (models/feature_map_generators.py ``fpn_top_down_feature_maps``) on blocks 2-4 (levels
      3-5, 512/1024/2048 channels at 40/20/10): a 1×1 projection to 256 with bias on each, the
      top-down sum, a 3×3 smoothing convolution with batch norm on levels 3 and 4 (level 5 is its
      projection alone); levels 6 and 7 are 3×3 stride-2 convolutions with batch norm on level 5
      and then 6 (5 × 5, 3 × 3; models/ssd_resnet_v1_fpn_feature_extractor.py).
    * Box predictor (predictors/convolutional_box_predictor.py ``WeightSharedConvolutionalBoxPredictor``,
      heads/box_head.py, heads/class_head.py): a box tower and a class tower, each four 3×3
      convolutions of depth 256 whose weights all five levels share, with a batch norm per level
      ("batch_norm parameters are not shared"), then a shared 3×3 convolution with bias to
      ``anchors`` × 4 box codes and one to ``anchors`` × ``classes`` logits (90 COCO classes, the
      background encoded as zeros; 3 aspect ratios × 2 scales per octave = 6 anchors).
    A shared convolution's weights count once; its multiply-accumulates and outputs at every level.
    The focal loss, the anchor matching and the box encoding are not counted."""
    net = LayerCounts()

    def shared(c_in: int, c_out: int, sides: list[int], bias: bool = False) -> None:
        """One 3×3 convolution applied to every level: parameters once, work at each level."""
        for level, at in enumerate(sides):
            net.conv(c_in, c_out, 3, at, bias=bias, weights=level == 0)

    side = math.ceil(side / 2)  # conv1, 7×7 stride 2 ("conv2d_same"): 160
    net.conv(3, 64, 7, side)
    net.norm(64)
    side = math.ceil(side / 2)  # the 3×3 stride-2 max pool, SAME padding (resnet_arg_scope): 80
    c_in, blocks = 64, []
    for stage, (count, stride) in enumerate(((3, 2), (4, 2), (6, 2), (3, 1))):
        inner, out = 64 * 2**stage, 256 * 2**stage
        for unit in range(count):  # every unit on the block's input map (the stride deferred)
            bottleneck(net, c_in, inner, out, side, projection=unit == 0)
            c_in = out
        blocks.append((out, side))
        side = math.ceil(side / stride)
    for channels, at in blocks[1:]:  # levels 3-5: the lateral 1×1 projections, with bias
        net.conv(channels, 256, 1, at, bias=True)
    for at in (blocks[1][1], blocks[2][1]):  # smoothing of levels 3 and 4
        net.conv(256, 256, 3, at)
        net.norm(256)
    levels = [at for _, at in blocks[1:]]
    for _ in range(2):  # levels 6 and 7
        at = math.ceil(levels[-1] / 2)
        net.conv(256, 256, 3, at)
        net.norm(256)
        levels.append(at)
    for outputs in (anchors * 4, anchors * classes):  # the box tower and head, the class tower and head
        for _ in range(4):
            shared(256, 256, levels)
            for _ in levels:
                net.norm(256)
        shared(256, outputs, levels, bias=True)
    return net


# Inception-v4's repeated modules (Szegedy et al. 2016, Figures 4, 5, 6), each convolution as
# (channels in, out, kernel height, width), branch by branch; a module keeps its map's side.
INCEPTION_A = ((384, 96, 1, 1),  # after the average pool
               (384, 96, 1, 1), (384, 64, 1, 1), (64, 96, 3, 3), (384, 64, 1, 1), (64, 96, 3, 3), (96, 96, 3, 3))
INCEPTION_B = ((1024, 128, 1, 1), (1024, 384, 1, 1), (1024, 192, 1, 1), (192, 224, 1, 7), (224, 256, 7, 1),
               (1024, 192, 1, 1), (192, 192, 1, 7), (192, 224, 7, 1), (224, 224, 1, 7), (224, 256, 7, 1))
# two branches split in two at their ends (1x3 and 3x1 side by side)
INCEPTION_C = ((1536, 256, 1, 1), (1536, 256, 1, 1), (1536, 384, 1, 1), (384, 256, 1, 3), (384, 256, 3, 1),
               (1536, 384, 1, 1), (384, 448, 1, 3), (448, 512, 3, 1), (512, 256, 3, 1), (512, 256, 1, 3))


def inception_v4(side: int = 299) -> LayerCounts:
    """Inception-v4 (Szegedy et al. 2016, Figures 3-9) as tf_cnn_benchmarks' ``inception4`` and
    timm build it: every convolution without bias and with batch norm (scale and offset, as the
    other presets count it; tf_cnn_benchmarks learns the offset only), 1,000 classes (timm; 1,001
    in tf_cnn_benchmarks). Stem 299 → 149 → 147 (valid 3×3s), 73, 71, 35; four Inception-A at
    35×35×384, Reduction-A to 17×17×1024, seven Inception-B, Reduction-B to 8×8×1536, three
    Inception-C, the mean over the map and one fully connected layer."""
    net = LayerCounts()

    def conv(c_in: int, c_out: int, height: int, width: int, at: int) -> None:
        """A convolution of a height × width kernel producing an ``at`` × ``at`` map, with its batch norm."""
        net.conv(c_in, c_out, height, at, kernel_w=width)
        net.norm(c_out)

    def modules(table: tuple, times: int, at: int) -> None:
        """``times`` of one of Inception's repeated modules on an ``at`` × ``at`` map."""
        for _ in range(times):
            for layer in table:
                conv(*layer, at)

    sides = [math.ceil((side - 2) / 2)]  # 149
    sides += [sides[0] - 2, sides[0] - 2]  # 147, 147
    conv(3, 32, 3, 3, sides[0])
    conv(32, 32, 3, 3, sides[1])
    conv(32, 64, 3, 3, sides[2])
    at = (sides[2] - 1) // 2  # 73: a 3x3 stride-2 valid pool beside a convolution
    conv(64, 96, 3, 3, at)
    at_b = at - 2  # 71
    conv(160, 64, 1, 1, at)
    conv(64, 96, 3, 3, at_b)
    conv(160, 64, 1, 1, at)
    conv(64, 64, 7, 1, at)
    conv(64, 64, 1, 7, at)
    conv(64, 96, 3, 3, at_b)
    at = (at_b - 1) // 2  # 35
    conv(192, 192, 3, 3, at)
    modules(INCEPTION_A, 4, at)
    reduced = (at - 1) // 2  # 17
    conv(384, 384, 3, 3, reduced)
    conv(384, 192, 1, 1, at)
    conv(192, 224, 3, 3, at)
    conv(224, 256, 3, 3, reduced)
    at = reduced
    modules(INCEPTION_B, 7, at)
    reduced = (at - 1) // 2  # 8
    conv(1024, 192, 1, 1, at)
    conv(192, 192, 3, 3, reduced)
    conv(1024, 256, 1, 1, at)
    conv(256, 256, 1, 7, at)
    conv(256, 320, 7, 1, at)
    conv(320, 320, 3, 3, reduced)
    at = reduced
    modules(INCEPTION_C, 3, at)
    net.dense(1536, 1000)
    return net



def alexnet() -> LayerCounts:
    """AlexNet as torchvision builds it (Krizhevsky 2014, "One weird trick", the single-tower
    variant): five convolutions with biases (64 11×11 at stride 4 to 55 × 55; 192 5×5 at 27; 384,
    256 and 256 3×3 at 13) and three dense layers from the 6 × 6 × 256 map."""
    net = LayerCounts()
    for c_in, c_out, kernel, side in ((3, 64, 11, 55), (64, 192, 5, 27), (192, 384, 3, 13), (384, 256, 3, 13),
                                      (256, 256, 3, 13)):
        net.conv(c_in, c_out, kernel, side, bias=True)
    net.dense(256 * 6 * 6, 4096)
    net.dense(4096, 4096)
    net.dense(4096, 1000)
    return net


def inception_v3(side: int = 299) -> LayerCounts:
    """Inception-v3 (Szegedy et al. 2016, "Rethinking the Inception Architecture", Table 1) as
    torchvision builds it without the auxiliary classifier: every convolution without bias and with
    batch norm (scale and offset). Stem 299 → 149, 147, 147, 73 (1×1 to 80), 71 (3×3 to 192), 35;
    Mixed 5b-5d (35 × 35; pool branches of 32, 64, 64 channels), 6a to 17 × 17 × 768, 6b-6e
    (7-wide branches of 128, 160, 160, 192 channels), 7a to 8 × 8 × 1280, 7b-7c, the mean over the
    map and one fully connected layer."""
    net = LayerCounts()

    def conv(c_in: int, c_out: int, height: int, width: int, at: int) -> None:
        net.conv(c_in, c_out, height, at, kernel_w=width)
        net.norm(c_out)

    at = math.ceil((side - 2) / 2)  # 149
    conv(3, 32, 3, 3, at)
    conv(32, 32, 3, 3, at - 2)  # 147
    conv(32, 64, 3, 3, at - 2)  # padded: 147
    at = (at - 2 - 1) // 2  # the 3x3 stride-2 pool: 73
    conv(64, 80, 1, 1, at)
    conv(80, 192, 3, 3, at - 2)  # 71
    at = (at - 2 - 1) // 2  # 35
    c_in = 192
    for pool in (32, 64, 64):  # InceptionA
        for layer in ((c_in, 64, 1, 1), (c_in, 48, 1, 1), (48, 64, 5, 5), (c_in, 64, 1, 1), (64, 96, 3, 3),
                      (96, 96, 3, 3), (c_in, pool, 1, 1)):
            conv(*layer, at)
        c_in = 64 + 64 + 96 + pool
    reduced = (at - 1) // 2  # InceptionB: 17
    conv(c_in, 384, 3, 3, reduced)
    conv(c_in, 64, 1, 1, at)
    conv(64, 96, 3, 3, at)
    conv(96, 96, 3, 3, reduced)
    at, c_in = reduced, 768
    for c7 in (128, 160, 160, 192):  # InceptionC
        for layer in ((c_in, 192, 1, 1), (c_in, c7, 1, 1), (c7, c7, 1, 7), (c7, 192, 7, 1), (c_in, c7, 1, 1),
                      (c7, c7, 7, 1), (c7, c7, 1, 7), (c7, c7, 7, 1), (c7, 192, 1, 7), (c_in, 192, 1, 1)):
            conv(*layer, at)
    reduced = (at - 1) // 2  # InceptionD: 8
    conv(768, 192, 1, 1, at)
    conv(192, 320, 3, 3, reduced)
    conv(768, 192, 1, 1, at)
    conv(192, 192, 1, 7, at)
    conv(192, 192, 7, 1, at)
    conv(192, 192, 3, 3, reduced)
    at, c_in = reduced, 1280
    for _ in range(2):  # InceptionE
        for layer in ((c_in, 320, 1, 1), (c_in, 384, 1, 1), (384, 384, 1, 3), (384, 384, 3, 1), (c_in, 448, 1, 1),
                      (448, 384, 3, 3), (384, 384, 1, 3), (384, 384, 3, 1), (c_in, 192, 1, 1)):
            conv(*layer, at)
        c_in = 2048
    net.dense(2048, 1000)
    return net

PRESETS = {
    "resnet-18": lambda: basic_net((2, 2, 2, 2)),
    "resnet-50": lambda: bottleneck_net((3, 4, 6, 3)),
    "resnet-101": lambda: bottleneck_net((3, 4, 23, 3)),
    "resnet-152": lambda: bottleneck_net((3, 8, 36, 3)),
    "resnext101-32x4d": lambda: bottleneck_net((3, 4, 23, 3), groups=32, width=4),
    "se-resnext101-32x4d": lambda: bottleneck_net((3, 4, 23, 3), groups=32, width=4, squeeze=True),
    "efficientnet-b0": lambda: efficientnet(1.0, 1.0, 224),
    "efficientnet-b4": lambda: efficientnet(1.4, 1.8, 380),
    "resnet-34": lambda: basic_net((3, 4, 6, 3)),
    "resnext50-32x4d": lambda: bottleneck_net((3, 4, 6, 3), groups=32, width=4),
    "se-resnext50-32x4d": lambda: bottleneck_net((3, 4, 6, 3), groups=32, width=4, squeeze=True),
    "wide-resnet50-2": lambda: bottleneck_net((3, 4, 6, 3), width=128),
    "vgg11": lambda: vgg(VGG[11]),
    "vgg13": lambda: vgg(VGG[13]),
    "vgg16": lambda: vgg(VGG[16]),
    "vgg19": lambda: vgg(VGG[19]),
    "mobilenet-v2": mobilenet_v2,
    "ssd300": ssd300,
    "ssd320": ssd320,
    "inception-v4": inception_v4,
    "inception-v3": inception_v3,
    "alexnet": alexnet,
}

# timm's model names (results/benchmark-train-*.csv) -> the architecture at the resolution timm
# trained it (train_img_size): the models behind the activation-traffic law.
TIMM_MODELS = {
    "resnet18": PRESETS["resnet-18"],
    "resnet34": PRESETS["resnet-34"],
    "resnet50": PRESETS["resnet-50"],
    "resnet101": PRESETS["resnet-101"],
    "resnet152": PRESETS["resnet-152"],
    "resnext50_32x4d": PRESETS["resnext50-32x4d"],
    "resnext101_32x4d": PRESETS["resnext101-32x4d"],
    "seresnext50_32x4d": PRESETS["se-resnext50-32x4d"],
    "seresnext101_32x4d": PRESETS["se-resnext101-32x4d"],
    "wide_resnet50_2": PRESETS["wide-resnet50-2"],
    "vgg11": PRESETS["vgg11"],
    "vgg13": PRESETS["vgg13"],
    "vgg16": PRESETS["vgg16"],
    "vgg19": PRESETS["vgg19"],
    "mobilenetv2_100": PRESETS["mobilenet-v2"],
    "efficientnet_b0": PRESETS["efficientnet-b0"],
    "efficientnet_b1": lambda: efficientnet(1.0, 1.1, 224),
    "efficientnet_b2": lambda: efficientnet(1.1, 1.2, 256),
    "efficientnet_b3": lambda: efficientnet(1.2, 1.4, 288),
    "tf_efficientnet_b4": PRESETS["efficientnet-b4"],
}


# --- When backward produces each gradient -------------------------------------------------------
#
# Backward runs the layers last to first, and a layer's weight gradient is complete when its own
# backward is: the bytes ready by a point of backward are those of the layers after it. Each
# layer's share of backward time is taken as its share of the step's work under the activation-
# traffic law (costmodel.training.activation_law: 6 · multiply-accumulates + κ · activation
# elements, κ the law's fitted 5,270), the same split the CNN's speed comes from; a batch norm,
# whose traffic the law counts with the convolution before it, takes none. Within a layer its
# bytes are taken as produced evenly. The curve of (share of the gradient bytes, share of
# backward) through the layers' ends is then simplified to the fewest knots within
# READINESS_TOLERANCE of backward, at most READINESS_MOST_KNOTS (the points farthest in time
# from the polyline first, Ramer-Douglas-Peucker's order), and written to models.toml as
# ``gradient_readiness``.
READINESS_TOLERANCE = 0.01
READINESS_MOST_KNOTS = 10
READINESS_DIGITS = 4


def _readiness_curve(net: LayerCounts, kappa: float) -> list[tuple[float, float]]:
    """(bytes share, backward-time share) at the end of each layer with parameters, last layer first."""
    work = [6 * macs + kappa * outputs for macs, outputs, _ in net.layers]
    total_work, total_params = sum(work), net.params
    points, done, produced = [(0.0, 0.0)], 0.0, 0
    for (_, _, params), layer_work in zip(reversed(net.layers), reversed(work)):
        done += layer_work
        produced += params
        if params:  # a layer without weights (a shared convolution's other levels) only delays the next
            points.append((produced / total_params, done / total_work))
    points[-1] = (1.0, 1.0)  # the first layer's gradient ends backward
    return points


def _simplify(points: list[tuple[float, float]], tolerance: float, most: int) -> tuple[list[tuple[float, float]], float]:
    """Greedy refinement on the time axis (Ramer-Douglas-Peucker's order): from the two ends, add
    the point farthest in time from the polyline until every point is within ``tolerance`` or
    ``most`` points are kept; the kept points and the largest distance left."""
    kept = {0, len(points) - 1}
    while True:
        ends = sorted(kept)
        worst, at = 0.0, None
        for a, b in zip(ends, ends[1:]):
            (x0, y0), (x1, y1) = points[a], points[b]
            for i in range(a + 1, b):
                x, y = points[i]
                distance = abs(y - ready_share(x, ((x0, y0), (x1, y1))))
                if distance > worst:
                    worst, at = distance, i
        if at is None or worst <= tolerance or len(kept) >= most:
            return [points[i] for i in ends], worst
        kept.add(at)


def _share(x: float) -> float:
    """A share rounded to READINESS_DIGITS significant digits of itself, or of what is left of
    it near 1 (a VGG's first layer ends at 0.9999865 of its bytes: it stays apart from 1)."""
    if x > 0.5:  # the difference's float noise (0.8613999999999999) rounded off
        return round(1.0 - float(f"{1.0 - x:.{READINESS_DIGITS}g}"), 12)
    return float(f"{x:.{READINESS_DIGITS}g}")


def _farthest(points: list[tuple[float, float]], knots: tuple[tuple[float, float], ...]) -> float:
    """The largest distance in time of ``points`` from the curve through ``knots``, read as the
    overlap model reads it."""
    return max(abs(y - ready_share(x, knots)) for x, y in points)


def gradient_readiness(net: LayerCounts, kappa: float, tolerance: float = READINESS_TOLERANCE,
                       most: int = READINESS_MOST_KNOTS) -> tuple[tuple[tuple[float, float], ...], float]:
    """The knots of ``net``'s readiness curve, rounded (:func:`_share`; shares of bytes strictly
    rising, of time never falling; an inner knot rounding onto its neighbour is dropped, the ends
    never), and the largest distance in backward's time of a layer's end from them."""
    points = _readiness_curve(net, kappa)
    kept, _ = _simplify(points, tolerance, most)
    rounded = [(_share(x), round(y, READINESS_DIGITS)) for x, y in kept]
    knots = [rounded[0]]
    for x, y in rounded[1:-1]:
        if knots[-1][0] < x < rounded[-1][0]:
            knots.append((x, max(y, knots[-1][1])))
    knots.append(rounded[-1])
    return tuple(knots), _farthest(points, tuple(knots))


def kappa() -> float:
    """The activation-traffic law's κ, as the model reads it (models.toml)."""
    return _law_constants()[2]


def tensors_toml() -> str:
    """The text of the file the model reads CNN presets' tensors from
    (``costmodel.training.tensors.CNN_TENSORS_FILE``): every preset's tensors, last first."""
    out = ["# Each CNN preset's gradient tensors, in parameters, in the order backward produces them (the",
           "# last layer first; within a layer, PyTorch's parameter order reversed: bias, then weight):",
           "# costmodel.training.tensors reads them for DDP's buckets of whole tensors and per-tensor",
           "# calls. Generated from the layer-by-layer counts: python -m tools.cnn_counts --tensors",
           "", "[tensors]"]
    for name, build in PRESETS.items():
        sizes = list(reversed(build().sizes))
        rows = [", ".join(str(v) for v in sizes[i:i + 12]) for i in range(0, len(sizes), 12)]
        out.append(f'"{name}" = [')
        out += [f"    {row}," for row in rows]
        out.append("]")
    return "\n".join(out) + "\n"


if __name__ == "__main__":  # the models.toml lines: python -m tools.cnn_counts; --tensors writes the tensor file
    import sys
    from pathlib import Path

    if "--tensors" in sys.argv[1:]:
        Path(CNN_TENSORS_FILE).write_text(tensors_toml(), encoding="utf-8")
        print(f"wrote {CNN_TENSORS_FILE}")
        raise SystemExit(0)
    for name, build in PRESETS.items():
        knots, worst = gradient_readiness(build(), kappa())
        print(f"{name}: gradient_readiness = [{', '.join(f'[{x!r}, {y!r}]' for x, y in knots)}]"
              f"  # within {worst:.3f} of backward")
