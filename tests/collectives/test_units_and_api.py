"""Units at the edges, conventions, and the public API surface."""

from __future__ import annotations

import subprocess
import sys

import pytest

import costmodel
from costmodel.names import Primitive, busbw_factor
from dpbase.errors import UnitError
from dpbase.units import parse_bandwidth, parse_size, parse_time


@pytest.mark.parametrize(("text", "value"), [("4GB", 4e9), ("1KiB", 1024), ("256MiB", 256 * 2**20), ("12", 12),
                                              ("1.5TB", 1.5e12), ("2GiB", 2**31)])
def test_sizes(text, value):
    assert parse_size(text) == value


@pytest.mark.parametrize(("text", "value"), [("100Gbps", 12.5e9), ("25GB/s", 25e9), ("400Gb/s", 50e9),
                                              ("1GiB/s", 2**30), ("800Mbps", 1e8), ("12GBps", 12e9)])
def test_bandwidths(text, value):
    assert parse_bandwidth(text) == value


@pytest.mark.parametrize(("text", "value"), [("5us", 5e-6), ("5µs", 5e-6), ("3ns", 3e-9), ("1.5ms", 1.5e-3), ("2s", 2.0)])
def test_times(text, value):
    assert parse_time(text) == pytest.approx(value)


@pytest.mark.parametrize("bad", ["4 GX", "fast", "-1MB", "1e999GB", "GB", "5 furlongs"])
def test_unit_errors_name_the_field(bad):
    with pytest.raises(UnitError, match="^size: got"):
        parse_size(bad, "size")


def test_busbw_factors_follow_nccl_tests():
    assert busbw_factor(Primitive.ALL_REDUCE, 8) == 2 * 7 / 8
    for p in (Primitive.ALL_GATHER, Primitive.REDUCE_SCATTER, Primitive.ALL_TO_ALL):
        assert busbw_factor(p, 8) == 7 / 8
    assert busbw_factor(Primitive.BROADCAST, 8) == 1 and busbw_factor(Primitive.REDUCE, 8) == 1


def test_size_convention_full_buffer_for_allgather():
    """n is the gathered buffer for all-gather: each rank contributes n/N and receives (N−1)n/N."""
    p = costmodel.predict("all-gather", "ring", ranks=4, size_bytes=4e9, alpha_s=0, bandwidth_Bps=1e9)
    assert p.bytes_received_max == 3e9 and p.algbw_Bps == pytest.approx(4e9 / 3)


def test_full_duplex_ring_time_is_max_not_sum_of_send_and_receive():
    p = costmodel.predict("all-reduce", "ring", ranks=4, size_bytes=4e9, alpha_s=0, bandwidth_Bps=1e9)
    assert p.time_s == pytest.approx(p.bytes_sent_max / 1e9)


def test_all_exports_resolve_and_are_sorted():
    assert costmodel.__all__ == sorted(costmodel.__all__)
    for name in costmodel.__all__:
        assert getattr(costmodel, name) is not None


def test_scalar_query_does_not_import_sympy_pandas_or_numpy():
    code = ("import sys, costmodel; costmodel.predict('all-reduce','double-binary-tree',ranks=64,size_bytes=1e9,"
            "alpha_s=1e-6,bandwidth_Bps=1e10); print(sorted(m for m in ('sympy','pandas','numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("bad", ["6", "0.006", " 5 "])
def test_a_typed_time_needs_its_unit(bad):
    """`--host-overhead 6` beside a default shown as 6ms read as 6 s (QA pass, 2026-11-28); a
    number passed from Python is still seconds."""
    with pytest.raises(UnitError, match="^host_overhead: got .*a unit is needed"):
        parse_time(bad, "host_overhead")
    assert parse_time(float(bad)) == float(bad)


@pytest.mark.parametrize("bits", ["25Mb", "1Gb", "4Kb"])
def test_a_size_in_bit_notation_is_refused(bits):
    with pytest.raises(UnitError, match=f"{bits[-2:]} reads as bits, a size is in bytes"):
        parse_size(bits, "bucket")
    with pytest.raises(UnitError, match=f"{bits[-2:].lower()} reads as bits"):  # b is bits whatever the prefix's case
        parse_size(bits.lower())
    assert parse_size(bits[:-1] + "B") == parse_size(bits[:-2] + bits[-2].lower() + "B")  # the prefix's case is free


def test_a_typed_bandwidth_needs_its_unit():
    """`--bandwidth 25` read as 25 B/s (QA pass, 2026-11-28); a number from Python is still B/s."""
    with pytest.raises(UnitError, match="^bandwidth: got '25'.*a unit is needed"):
        parse_bandwidth("25")
    assert parse_bandwidth(25e9) == 25e9


@pytest.mark.parametrize(("seconds", "shown"), [(0.99996, "1 s"), (9.9996e-4, "1 ms"), (9.99996e-7, "1 µs"),
                                                (9.9994e-4, "999.9 µs"), (5e-4, "500 µs")])
def test_a_time_that_rounds_up_takes_the_next_unit(seconds, shown):
    """'time 1000 µs' was printed for 999.96 µs (its JSON 0.00099996 s): the unit was picked
    before the value was rounded to four digits (review, 2026-11-29)."""
    from dpbase.units import format_time

    assert format_time(seconds) == shown
