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


# A regime boundary where every algorithm's time falls by more than this share reads like a typo (a
# latency in ms for µs, a bandwidth in Gbps for GBps). An algorithm's time is k·α + c·n/bandwidth
# (k ≥ 1 steps, c > 0 bytes per byte), so it falls by at least the smaller of the two terms' falls:
# across the links calibrated from the 58 shipped nccl-tests logs that is 41 % at most (a 512-byte
# boundary); measured curves fall (NCCL adding channels), by less. Said by ``hardware validate``;
# queries already hold other algorithms than the fitted one there (costmodel.cluster.query).
REGIME_FALL_NOTE = 0.5


def falling_regime_notes(links) -> list[str]:
    """One note per regime boundary of ``links`` where both the latency and a boundary-sized
    message's bandwidth time fall by more than ``REGIME_FALL_NOTE`` into the next regime: every
    algorithm's time falls by at least that much there."""
    from dpbase.units import format_size, format_time

    notes = []
    for link in links:
        for i, (own, nxt) in enumerate(zip(link.regimes, link.regimes[1:])):
            size = own.max_size_bytes
            moved = (size / own.bandwidth_at(size), size / nxt.bandwidth_at(size))
            falls = (nxt.latency_s / own.latency_s - 1.0 if own.latency_s > 0 else 0.0, moved[1] / moved[0] - 1.0)
            if max(falls) < -REGIME_FALL_NOTE:
                notes.append(f"link {link.name}: at {format_size(size)}, the end of regime {i + 1}, every algorithm's "
                             f"time falls by {-max(falls):.0%} or more into regime {i + 2} (latency "
                             f"{format_time(own.latency_s)} → {format_time(nxt.latency_s)}, the message's bandwidth "
                             f"time {format_time(moved[0])} → {format_time(moved[1])}); calibrated links fall by "
                             "41 % at most: a latency or bandwidth in the wrong unit?")
    return notes
