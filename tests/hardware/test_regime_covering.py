"""One size-to-regime lookup for links, calibrations and measured curves."""

from __future__ import annotations

import math

from hardware.profiles import MeasuredCurve, Regime, regime_covering

SMALL = Regime(max_size_bytes=1024.0, latency_s=1e-5, bandwidth_Bps=1e9)
LARGE = Regime(max_size_bytes=math.inf, latency_s=2e-5, bandwidth_Bps=1e11)


def test_a_size_at_a_regimes_edge_is_that_regime_and_beyond_the_last_is_the_last():
    assert regime_covering((SMALL, LARGE), 1024.0) is SMALL
    assert regime_covering((SMALL, LARGE), 1025.0) is LARGE
    assert regime_covering((SMALL,), 1e12) is SMALL
    assert regime_covering((), 10.0) is None


def test_a_measured_curves_time_is_its_covering_regimes_line():
    curve = MeasuredCurve(collective="all_reduce", algorithm="auto", nodes=1, gpus_per_node=8,
                          regimes=(SMALL, LARGE), min_size_bytes=8.0, max_size_bytes=1e9, median_error=0.05)
    assert curve.time_s(1024.0) == SMALL.latency_s + 1024.0 / SMALL.bandwidth_Bps
    assert curve.time_s(4096.0) == LARGE.latency_s + 4096.0 / LARGE.bandwidth_Bps
    # the regime it reports is the one it timed with, and it answers only where it covers
    assert curve.regime_for(1024.0) is SMALL and curve.regime_for(1025.0) is LARGE
    assert curve.covers(4.0) and not curve.covers(3.9) and curve.covers(2e9) and not curve.covers(2e9 + 1)
