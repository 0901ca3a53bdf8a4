"""Attention scores a training step writes to HBM, and what moving them costs.

A fused attention kernel (FlashAttention, Dao et al. 2022; PyTorch's
``scaled_dot_product_attention``) keeps each tile of the ``s × k`` score matrix on chip: no
score reaches HBM. Without one (``--no-flash-attention``) every layer materialises the
``b × a × s × k`` scores (``b`` micro-batch, ``a`` heads, ``s`` queries, ``k`` keys) and each
elementwise step of the attention reads and writes all of them. These steps are memory-bound,
so this traffic is a term of its own, ``elements × bytes per element / HBM bandwidth`` per
training micro-batch, not a share of the MFU. The Ampere and later MFU defaults come from runs
where it is negligible (Megatron-LM at h = 25,600; FlashAttention); the Volta default does not:
Megatron-LM's 1.2B model (h 1536, 16 heads, s 1024) materialised its scores, ~17 % of its step by
this count, so on a V100 the term counts that share of a similar model twice.

Some attention has no fused kernel at all. Transformer-XL's relative positions (Dai et al. 2019,
§3.3) add a position term ``BD`` that is computed for every (query, relative distance) and then
shifted into place (``_rel_shift``), which needs the whole score matrix: its layers materialise
scores whatever the flags (``Workload.relative_attention``). Its queries also attend to the
previous segment's ``memory_length`` cached states, so ``k = s + memory_length``.

The accesses per score element (one read or write of one element in the compute dtype) are
counted step by step from the implementations the published runs used: below, forward and
backward, with the dropout steps only where the attention probabilities pass through dropout
(``Workload.attention_dropout``; its mask is one byte per element, written forward and read
backward). A matmul reading or writing the scores counts once per read or write.

* standard attention, ``softmax(Q·Kᵀ/√d + mask)·V`` as NVIDIA's BERT (DeepLearningExamples
  ``modeling.py`` ``BertSelfAttention``) and Hugging Face's eager attention run it: 10 forward
  and 11 backward accesses with dropout (8 and 9 without);
* Transformer-XL's ``RelPartialLearnableMultiHeadAttn`` (DeepLearningExamples
  ``mem_transformer.py``): 14 and 21 (12 and 19 without dropout, as in its base model). Its
  backward pays for the shift: ``narrow``'s backward zero-fills the padded gradient and copies
  into it, and the position term's gradient, a strided slice of that, is copied back into the
  layout of its einsum's batched matmul.

Fp16 BERT attention with dropout thus moves ``21 × 2 + 2 = 44`` bytes per score element per
training micro-batch. No constant here is fitted.

    >>> accesses_per_element(relative=False, dropout=True)
    21
    >>> accesses_per_element(relative=True, dropout=False)
    31
    >>> round(score_seconds(layers=24, heads=16, seq_len=512, key_len=512, micro_batch=8,
    ...                     element_bytes=2, relative=False, dropout=True, hbm_Bps=900e9) * 1e3, 2)
    39.37
"""

from __future__ import annotations

from costmodel.training import workloads

# (step, forward accesses, backward accesses, a dropout step): each access is one read or write
# of every score element. Backward of a matmul with the scores as an operand reads them (or
# their gradient) once per weight or input gradient it forms. The model uses each step's sum
# (accesses_per_element); the forward/backward columns document where the accesses fall (the
# step model splits a micro-batch 1 : 2 itself), and a test pins both columns' totals.
_SOFTMAX_DROPOUT_PV = (  # how both attentions end
    ("P = softmax(S) (read, write; backward reads P and dP, writes dS)", 2, 3, False),
    ("dropout(P) (read, write; backward the same)", 2, 2, True),
    ("O = P·V (reads P; backward reads P for dV and writes dP)", 1, 2, False),
)
STANDARD_STEPS = (
    ("S = Q·Kᵀ (writes S; backward reads dS for dQ and dK)", 1, 2, False),
    ("S / √d (read, write; backward the same)", 2, 2, False),
    ("S + mask (read, write; its gradient passes through)", 2, 0, False),
    *_SOFTMAX_DROPOUT_PV,
)
RELATIVE_STEPS = (
    ("AC = (q + u)·kᵀ (writes AC; backward reads dAC twice)", 1, 2, False),
    ("BD = (q + v)·Rᵀ (writes BD; backward copies the shifted, strided dBD into the matmul's layout and "
     "reads it twice)", 1, 4, False),
    ("relative shift: a zero column and a copy (torch.cat; backward zero-fills the padded gradient and "
     "copies into it)", 2, 3, False),
    ("(AC + BD)·scale in one fused kernel (reads two, writes one; backward reads one, writes two)", 3, 3, False),
    ("masked_fill_ (read, write; backward the same)", 2, 2, False),
    *_SOFTMAX_DROPOUT_PV,
)
# The dropout mask: one byte per element, written forward and read backward.
DROPOUT_MASK_BYTES = 2


def steps(relative: bool, dropout: bool) -> tuple:
    """The counted steps that run: the table of the attention, less dropout without it."""
    return tuple(step for step in (RELATIVE_STEPS if relative else STANDARD_STEPS) if dropout or not step[3])


def accesses_per_element(relative: bool, dropout: bool) -> int:
    """Reads and writes of each score element in one training micro-batch (forward + backward)."""
    return sum(forward + backward for _, forward, backward, _ in steps(relative, dropout))


def check_flash_attention(workload, flash_attention: bool) -> None:
    """``flash_attention`` False (no fused kernel) only for a model with attention: a CNN has no
    scores to keep on chip (as ``include_attention`` is refused for it)."""
    if not flash_attention and not workload.has_transformer_layers:
        from dpbase.errors import InputError

        raise InputError("flash_attention", False, f"True for {workload.kind} models (they have no attention "
                         "scores to keep on chip)")


def materialised(workload, flash_attention: bool) -> bool:
    """Whether ``workload``'s layers write their scores to HBM: always for relative positions,
    else without a fused kernel (``flash_attention`` False). CNNs have no attention."""
    return workload.has_transformer_layers and (bool(workload.relative_attention) or not flash_attention)


def score_elements(*, layers, heads, seq_len, key_len, micro_batch, cross_layers=0):
    """Score elements of one micro-batch over all layers: ``L · b · a · s · k``, and ``b · a · s · s``
    more for each of an encoder-decoder's ``cross_layers`` (its queries over the source's ``s``
    tokens); elementwise."""
    return micro_batch * heads * seq_len * (layers * key_len + cross_layers * seq_len)


def score_seconds(*, layers, heads, seq_len, key_len, micro_batch, element_bytes, relative, dropout, hbm_Bps,
                  cross_layers=0):
    """Seconds one training micro-batch (forward + backward) spends moving its scores through
    HBM; elementwise on arrays of ``micro_batch``."""
    per_element = accesses_per_element(relative, dropout) * element_bytes + DROPOUT_MASK_BYTES * dropout
    elements = score_elements(layers=layers, heads=heads, seq_len=seq_len, key_len=key_len, micro_batch=micro_batch,
                              cross_layers=cross_layers)
    return elements * per_element / hbm_Bps


def workload_score_seconds(workload, *, micro_batch, seq_len, element_bytes, hbm_Bps):
    """:func:`score_seconds` of ``workload``'s layers, their scores in HBM (:func:`materialised`
    says whether they are)."""
    return score_seconds(layers=workload.layers, heads=workload.heads, seq_len=seq_len,
                         key_len=workloads.key_length(workload, seq_len), micro_batch=micro_batch,
                         element_bytes=element_bytes, relative=workload.relative_attention,
                         dropout=workload.attention_dropout, hbm_Bps=hbm_Bps,
                         cross_layers=workload.cross_attention_layers)
