"""The gradient tensors that decide how DDP and Horovod cut a transformer's gradient into collectives.

DDP and Horovod never split a tensor: DDP closes a bucket once the tensors in it reach its size
(PyTorch's ``reducer.cpp``, ``compute_bucket_assignment_by_size``: a tensor is added, then the
bucket is closed if it holds ``bucket_cap_mb`` or more), and Horovod reduces a tensor larger than
its fusion buffer alone. A tensor larger than the bucket is one call, so llama2-7b's 4096 × 11008
MLP matrices (90 MB of bf16 gradient each) are not four 25 MiB calls but one: its 25 MiB buckets
are 226 calls, not 516. What decides the cut is the large tensors, in the order backward produces
them:

- a layer's matrices (attention: a fused query-key-value matrix of 3h² and an output projection
  of h² for GPT-2/3, MPT, ViT and Transformer-XL; four separate h² for BERT and for models whose
  output head is apart from the input embedding, as Llama's; MLP: the rest of the layer's
  parameters in two matrices, or three where the head is untied, Llama's SwiGLU), the last layer
  first and in each layer the MLP before the attention; biases and norms (h each) ride with the
  matrices beside them, whose bucket they join;
- an untied output head (vocab × h) first, the input embedding last (it is the first layer, and
  its gradient lands when backward ends: :attr:`Workload.late_fraction`).

A layer's parameters are the model's beside its embeddings and head, shared equally by its
layers (position embeddings and final norms ride with them). Grouped-query attention's narrower
key and value matrices are counted at h² (their layer's MLP the smaller for it).

A CNN's tensors are not known one by one (a preset states their count): its buckets are cut by
bytes, as before. For ResNets, whose largest tensor (a 3×3 convolution of 512 channels, 9.4 MB in
fp32) is well below DDP's 25 MiB, that is within one tensor of DDP's cut. VGG's and AlexNet's
classifiers (VGG16's fc6 is 411 MB, three quarters of its gradient) would be calls of their own,
but they are also ready within the first few percent of backward (their FLOPs are ~1 % of the
model's), which the overlap model's readiness (bytes produced uniformly over backward) does not
know; cutting them whole without that moved the Horovod paper's VGG-16 case at 128 GPUs from
0.68 to 0.57 (published 0.68), so CNNs keep the byte cut until readiness follows FLOPs.
"""

from __future__ import annotations

import functools

TENSORS_PER_LAYER = {"transformer": 12, "bert": 16, "vit": 12, "cnn": 3}


def tensor_count(workload) -> int:
    """Gradient tensors of a workload (its ``tensors`` field, else layers × per-layer count)."""
    given = int(getattr(workload, "tensors", 0) or 0)
    if given:
        return given
    return max(1, int(workload.layers) * TENSORS_PER_LAYER.get(workload.kind, 12))


# Matrices of a layer by family: (attention matrices as multiples of h², MLP matrix count).
FUSED_ATTENTION = (3, 1)  # query-key-value in one matrix, then the output projection
SEPARATE_ATTENTION = (1, 1, 1, 1)


def _family(workload) -> tuple[tuple[int, ...], int]:
    """The attention matrices (in h²) and the MLP matrix count of ``workload``'s layers."""
    if not workload.tied_embeddings:  # Llama, Mistral: q, k, v, o apart; gate, up, down
        return SEPARATE_ATTENTION, 3
    if workload.kind == "bert":
        return SEPARATE_ATTENTION, 2
    return FUSED_ATTENTION, 2


def _equal(params: float, count: int) -> tuple[float, ...]:
    count = max(int(count), 1)
    return (params / count,) * count


@functools.lru_cache(maxsize=256)
def backward_tensors(workload) -> tuple[float, ...]:
    """Parameters of each gradient tensor that decides the cut, in the order backward produces
    them (module docstring); they sum to ``workload.params``. Empty for a CNN (cut by bytes)."""
    params = int(workload.params)
    if workload.kind == "cnn" or not workload.layers or not workload.hidden_size:
        return ()  # cut by bytes (module docstring)
    h2 = float(workload.hidden_size) ** 2
    embedding = float(workload.input_embedding_params)
    head = 0.0 if workload.tied_embeddings else float(workload.vocab * workload.hidden_size)
    per_layer = (params - embedding - head) / workload.layers
    attention, mlp_count = _family(workload)
    attention_params = sum(attention) * h2
    if per_layer <= 0:  # a model file whose embeddings are all of it: cut by bytes
        return ()
    if attention_params >= per_layer:  # narrower layers than h² allows (a file's own counts): shares
        layer = _equal(per_layer, len(attention) + mlp_count)
    else:
        mlp = (per_layer - attention_params) / mlp_count
        layer = (mlp,) * mlp_count + tuple(h2 * k for k in reversed(attention))
    return ((head,) if head else ()) + layer * int(workload.layers) + ((embedding,) if embedding else ())
