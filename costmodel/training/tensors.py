"""The gradient tensors that decide how DDP and Horovod cut a transformer's gradient into collectives.

DDP and Horovod never split a tensor: DDP closes a bucket once the tensors in it reach its size
(PyTorch's ``reducer.cpp``, ``compute_bucket_assignment_by_size``: a tensor is added, then the
bucket is closed if it holds ``bucket_cap_mb`` or more), and Horovod reduces a tensor larger than
its fusion buffer alone. A tensor larger than the bucket is one call, so llama2-7b's 4096 × 11008
MLP matrices (90 MB of bf16 gradient each) are not four 25 MiB calls but one: its 25 MiB buckets
are 226 calls, not 516. The tensors, in the order backward produces them:

- an untied output head (vocab × h) first, then the model's other vectors (a final norm);
- each layer, the last first: its matrices in reverse (``layer_matrices``, multiples of h² in
  forward order, sharing the layer's parameters: GPT-2's fused query-key-value, output and two
  MLP matrices, ``(3, 1, 4, 4)``, by default, and GPT-3, MPT, BLOOM, GPT-NeoX/Pythia and ViT
  alike; BERT's separate query, key, value and output, ``(1, 1, 1, 1, 4, 4)``; presets state
  their own: Llama's SwiGLU ``(1, 1, 1, 1, 2.6875 × 3)`` with grouped-query key and value
  matrices where it has them (Llama 2 70B: 8 of 64 heads, 0.125 h² each), OPT's and GPT-J's
  separate projections, Falcon's multi-query fused one, Transformer-XL's relative-position
  projection, BART's cross-attention), then its biases and norms (h parameters each: the model's
  ``tensors`` less its matrices and embeddings, spread over its layers);
- the input embedding last (it is the first layer, and its gradient lands when backward ends:
  :attr:`Workload.late_fraction`).

A layer's matrices share the model's parameters beside its embeddings, head and vectors
(position embeddings ride with them). So DDP with buckets smaller than a bias (the first bucket
too) gives one call per tensor, the ``tensors`` that ``--sync per-tensor`` counts.

A CNN preset's tensors are listed too (``costmodel/data/cnn_tensors.toml``, counted layer by
layer by tools/cnn_counts.py, last layer first), with when backward produces them
(``gradient_readiness``: VGG's and AlexNet's classifiers within the first percent or so). So
VGG16's fc6, 411 MB of fp32 gradient and three quarters of the model, is one call, ready early,
and wide-resnet50-2's 3×3 convolutions of 1024 channels (37.7 MB) are calls of their own. A CNN
from a model file, whose layers are not listed, is cut by bytes, and so is a preset rebuilt with
other parameters or another tensor count (``Workload.listed_tensors``: its readiness curve, still
the preset's, then reads the bytes as cut).

``--sync per-tensor`` makes one call per tensor: :func:`tensor_mix` gives their sizes, so the
calls are timed one size at a time (:attr:`overlap.BucketLayout.mix`).
"""

from __future__ import annotations

import functools
import os

TENSORS_PER_LAYER = {"transformer": 12, "bert": 16, "vit": 12, "cnn": 3}


def tensor_count(workload) -> int:
    """Gradient tensors of a workload: its ``tensors`` field, else layers × the kind's per-layer
    count, and at least the matrices its layers list (``layer_matrices``) and its embeddings."""
    given = int(getattr(workload, "tensors", 0) or 0)
    if given:
        return given
    return max(1, int(workload.layers) * TENSORS_PER_LAYER.get(workload.kind, 12), listed_matrices(workload))


def listed_matrices(workload) -> int:
    """The matrices a transformer's layers list, with its input embedding and untied head (0 for
    a CNN): the fewest tensors it can have."""
    if workload.kind == "cnn" or not getattr(workload, "layer_matrices", ()):
        return 0
    return int(workload.layers) * len(workload.layer_matrices) + 1 + (not workload.tied_embeddings)


# A layer's matrices in forward order, as multiples of h², where the model does not state its own
# (``layer_matrices``): GPT-2's fused query-key-value (3h²), output projection and two MLP
# matrices of 4h² (GPT-3, MPT, BLOOM, GPT-NeoX/Pythia, ViT alike); BERT's separate query, key,
# value and output. Only the proportions matter: the matrices share the layer's parameters.
FUSED_LAYER = (3.0, 1.0, 4.0, 4.0)
BERT_LAYER = (1.0, 1.0, 1.0, 1.0, 4.0, 4.0)
# More tensors than this are not listed one by one (a model file of millions of layers): the
# gradient is cut by bytes. The largest preset lists 1,137 (llama3-405b).
MAX_LISTED_TENSORS = 100_000


def layer_matrices(workload) -> tuple[float, ...]:
    """The matrices of one of ``workload``'s layers, forward order, in h² (its own, else the
    kind's default)."""
    if workload.layer_matrices:
        return tuple(float(k) for k in workload.layer_matrices)
    return BERT_LAYER if workload.kind == "bert" else FUSED_LAYER


CNN_TENSORS_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "data",
                                "cnn_tensors.toml")


@functools.lru_cache(maxsize=64)
def cnn_tensors(name: str, params: int, count: int) -> tuple[float, ...]:
    """The CNN preset ``name``'s tensors, last first (costmodel/data/cnn_tensors.toml, counted
    layer by layer by tools/cnn_counts.py), where ``params`` and the tensor ``count`` are theirs;
    empty otherwise (a preset rebuilt with other parameters: its gradient is then cut by bytes,
    as a model file's CNN is)."""
    from dpbase.bundled import load_bundled

    listed = load_bundled(CNN_TENSORS_FILE)["tensors"].get(name)
    if not listed or sum(listed) != params or len(listed) != count:
        return ()
    return tuple(float(size) for size in listed)


# Distinct call sizes timed one by one; more are grouped by size into this many groups of equal
# count (each at its mean size): llama3-405b's 1,137 tensors have 9 sizes.
MOST_MIXED_SIZES = 16


def call_mix(sizes) -> tuple[tuple[float, float], ...]:
    """``sizes`` as (size over their mean, share of them) pairs, the distinct sizes smallest first
    (at most :data:`MOST_MIXED_SIZES`: sorted and grouped in equal counts beyond that); empty for
    no sizes. The shares sum to 1 and so do the sizes weighted by them."""
    ordered = sorted(float(s) for s in sizes)
    if not ordered or sum(ordered) <= 0:
        return ()
    mean, n = sum(ordered) / len(ordered), len(ordered)
    groups: list[list[float]] = []
    for size in ordered:
        if groups and size <= groups[-1][0] * (1 + 1e-9):
            groups[-1].append(size)
        else:
            groups.append([size])
    if len(groups) > MOST_MIXED_SIZES:
        bounds = [round(k * n / MOST_MIXED_SIZES) for k in range(MOST_MIXED_SIZES + 1)]
        groups = [ordered[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]
    return tuple((sum(g) / len(g) / mean, len(g) / n) for g in groups)


@functools.lru_cache(maxsize=256)
def tensor_mix(workload) -> tuple[tuple[float, float], ...]:
    """:func:`call_mix` of ``workload``'s tensors (:func:`backward_tensors`); empty where they are
    not listed."""
    return call_mix(backward_tensors(workload))


@functools.lru_cache(maxsize=256)
def backward_tensors(workload) -> tuple[float, ...]:
    """Parameters of each gradient tensor, in the order backward produces them (module
    docstring); they sum to ``workload.params``. Empty where the gradient is cut by bytes (a CNN
    not listed as a preset's, a shape that leaves its layers nothing, more than
    ``MAX_LISTED_TENSORS`` tensors)."""
    params = int(workload.params)
    if workload.kind == "cnn":
        if not getattr(workload, "listed_tensors", False):
            return ()
        return cnn_tensors(workload.name, params, int(workload.tensors))
    layers, hidden = int(workload.layers), float(workload.hidden_size)
    if not layers or not hidden:
        return ()
    shape = layer_matrices(workload)
    embedding = float(workload.input_embedding_params)
    head = 0.0 if workload.tied_embeddings else float(workload.vocab * workload.hidden_size)
    large = layers * len(shape) + (head > 0) + (embedding > 0)
    small = max(tensor_count(workload) - large, 0)  # biases and norms, h parameters each
    if large + small > MAX_LISTED_TENSORS:
        return ()
    per_layer_small, rest_small = divmod(small, layers)
    matrices = (params - embedding - head - small * hidden) / layers  # a layer's matrices, together
    if matrices <= 0:  # vectors and embeddings are all of it (a model file's own counts): cut by bytes
        return ()
    scale = matrices / sum(shape)
    block = tuple(k * scale for k in reversed(shape)) + (hidden,) * per_layer_small
    return ((head,) if head else ()) + (hidden,) * rest_small + block * layers + ((embedding,) if embedding else ())
