"""A CNN's speed from its shape alone: the activation-traffic law.

A CNN spends a training step on two kinds of work: the convolutions' multiply-accumulates, and
moving its activations through HBM (batch norms, activation functions, element-wise adds, the
depthwise convolutions that do few FLOPs per byte, and every layer's reads and writes of them).
Count the first as the model's training FLOPs ``F`` per sample and the second as its activation
elements ``A`` per sample (fvcore's count, timm's cards' "Activations (M)"), each element costing
the time of ``κ`` FLOPs. The time per sample is then proportional to ``F + κ·A`` and the share of
it doing FLOPs, the model's MFU up to one GPU-wide factor, to

    u(F, A) = F / (F + κ·A)

so a CNN's MFU relative to ResNet-50's, the model the CNN defaults measured, is
``u(F, A) / u(F_ref, A_ref)`` (1 for ResNet-50 itself). ``κ`` is one constant, fitted on timm's
single-GPU training throughputs of 20 CNNs in 8 families (benchmarks/cnn_activation_law.py):
each family predicted with ``κ`` fitted without it lands within 1.25× of the measured ratio for
11 of 19 models, all within 1.51× (the EfficientNets 1.35-1.43× fast: their squeeze-and-
excitation and swish layers cost more than their activation count), where ResNet-50's MFU for
every CNN is off by a median of 1.63× and up to 6.6× (EfficientNet-B0). It is the default for a
CNN whose own ratio no table holds (a user's model file that states none); a measured ratio
(``relative_mfu_fp32``/``relative_mfu_16bit``, or ``--rate``) is better. A shape outside the
fitted ones (models.toml ``fitted_flops_per_activation``) is taken at the nearer end
(costmodel.training.workloads), not extrapolated.

    >>> round(relative(2.315e9, 6.75e6, 24.54e9, 11.11e6, 5270.0), 3)   # EfficientNet-B0 (measured: 0.151)
    0.207
    >>> relative(24.54e9, 11.11e6, 24.54e9, 11.11e6, 5270.0)
    1.0
"""

from __future__ import annotations


def flops_share(flops: float, activations: float, kappa: float) -> float:
    """``F / (F + κ·A)``: the share of a training step's time spent on FLOPs."""
    return flops / (flops + kappa * activations)


def relative(flops: float, activations: float, reference_flops: float, reference_activations: float,
             kappa: float) -> float:
    """The MFU of a CNN with ``flops`` and ``activations`` per sample relative to the reference's."""
    return flops_share(flops, activations, kappa) / flops_share(reference_flops, reference_activations, kappa)
