"""Notes on a valid system that reads like a mistake: said wherever the system answers.

A system's per-NIC (or per-GPU intra-node) bandwidth ``RATE_MISMATCH`` times its link profile's
line rate or more, or less by as much, reads like bits typed as bytes (``"400GBps"`` for
400 Gb/s): 8, with room. Bundled systems go up to 4 (aws-p5 folds four 100 Gb/s EFA devices into
each GPU's NIC). ``dpcost hardware validate`` said it; ``collective``, ``iteration`` and ``plan``
answered 8× too fast without a word (API review, 2026-11-29).

    >>> from hardware import load_system
    >>> rate_mismatch_notes(load_system("dgx-h100"))
    []
"""

from __future__ import annotations

from typing import Any

RATE_MISMATCH = 7.5


def rate_mismatch_notes(system: Any, network: bool = True, intra: bool = True) -> list[str]:
    """One note per bandwidth of ``system`` that is ``RATE_MISMATCH`` times its link's line rate
    or more (or less by as much); ``network``/``intra``: whether the answer crosses nodes / GPUs of
    a node (a bandwidth it does not use is not noted)."""
    from dpbase.units import format_bandwidth

    checked = ([("nic_bandwidth", system.nic_bandwidth_Bps, system.nic_link)] if network else []) \
        + ([("intra_bandwidth", system.intra_bandwidth_Bps, system.intra_link)] if intra else [])
    notes = []
    for field, value, link in checked:
        ratio = value / link.bandwidth_Bps if link.bandwidth_Bps else 1.0
        if ratio >= RATE_MISMATCH or ratio <= 1 / RATE_MISMATCH:
            notes.append(f"{system.name}'s {field} {format_bandwidth(value)} is {ratio:.3g}x the line rate of its "
                         f"link {link.name} ({format_bandwidth(link.bandwidth_Bps)}): bits typed as bytes (GBps "
                         "for Gbps), or the other way round?")
    return notes
