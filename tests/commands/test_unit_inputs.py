"""Units typed on the command line: one rule for their letter case, and sizes that need a unit.

QA pass: `--size 4gb` was read as 4 GB while `--size 4Gb` was refused as bits and `--bandwidth
25gb/s` was refused outright; `iteration --bucket 25` (PyTorch's bucket_cap_mb=25) gave 25-byte
buckets and `plan --memory-reserve 6` kept 6 bytes free, where `--alpha 5` needs its unit. Now
the prefix may be in either case, ``B`` is bytes and ``b`` bits (a size in bits is refused, a
bandwidth in bits is divided by 8), and --bucket/--first-bucket/--buckets/--memory-reserve need a
unit; a message size (`collective --size 1048576`, `sweep --sizes`) stays bare bytes.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli import app
from dpbase.errors import InputError, UnitError
from dpbase.units import parse_bandwidth, parse_size

runner = CliRunner()
LINK = ["--ranks", "8", "--alpha", "5us"]
COLLECTIVE = ["collective", "all-reduce", "-a", "ring", *LINK]
ITERATION = ["iteration", "--model", "gpt2", "--cluster", "dgx-h100", "--micro-batch", "8"]
PLAN = ["plan", "--model", "gpt2", "--cluster", "dgx-h100", "--global-batch", "64"]
SIZE_ALLOWED = "allowed: a number with B, KB, MB, GB, TB, KiB, MiB, GiB or TiB (e.g. 4GB, 256MiB)"
# a message size, where a bare number is bytes: the refusal says so
MESSAGE_ALLOWED = f"{SIZE_ALLOWED[:-1]}; a bare number is bytes)"


def refused(argv: list[str]) -> str:
    """The one stderr line of a refused command line (exit code 2)."""
    result = runner.invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output, result.stderr
    return result.stderr.rstrip("\n")


def answer(argv: list[str]) -> dict:
    result = runner.invoke(app, [*argv, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# -- 1. letter case: B is bytes, b is bits, the prefix either way ----------------------------

@pytest.mark.parametrize(("size", "written"), [("4gb", "GB or GiB"), ("4Gb", "GB or GiB"), ("25mb", "MB or MiB"),
                                               ("4kb", "KB or KiB"), ("256mib", "MiB"), ("1Gib", "GiB"),
                                               ("12b", "B"), ("4Gbit", "GB or GiB")])
def test_a_size_in_bits_is_refused_whatever_the_case(size, written):
    unit = size.lstrip("0123456789")
    line = refused([*COLLECTIVE, "--size", size, "--bandwidth", "25GB/s"])
    assert line == (f"error: size: got '{size}'; {MESSAGE_ALLOWED}; {unit} reads as bits, a size is in bytes "
                    f"({written})")


@pytest.mark.parametrize(("size", "size_bytes"), [("4GB", 4e9), ("4gB", 4e9), ("2kB", 2e3), ("2KB", 2e3),
                                                  ("256MiB", 256 * 2**20), ("256miB", 256 * 2**20),
                                                  ("1KIB", 1024), ("1048576", 1048576), ("1B", 1)])
def test_sizes_in_bytes_are_read_whatever_the_case_of_the_prefix(size, size_bytes):
    assert parse_size(size) == size_bytes
    assert answer([*COLLECTIVE, "--size", size, "--bandwidth", "25GB/s"])["size_bytes"] == size_bytes


@pytest.mark.parametrize(("bandwidth", "bytes_per_s"), [
    ("25GB/s", 25e9), ("25gB/s", 25e9), ("25GBps", 25e9), ("25GB/S", 25e9), ("1GiB/s", 2**30), ("1giB/s", 2**30),
    ("100Gbps", 12.5e9), ("100gbps", 12.5e9), ("100Gb/s", 12.5e9), ("100gb/s", 12.5e9), ("100gbit/s", 12.5e9),
    ("100Gbits/s", 12.5e9), ("800Mbps", 1e8), ("800mbps", 1e8), ("8bps", 1.0)])
def test_bandwidths_b_is_bits_and_B_bytes_whatever_the_case_of_the_prefix(bandwidth, bytes_per_s):
    assert parse_bandwidth(bandwidth) == bytes_per_s
    in_bytes = answer([*COLLECTIVE, "--size", "1GB", "--bandwidth", f"{bytes_per_s!r}B/s"])
    assert answer([*COLLECTIVE, "--size", "1GB", "--bandwidth", bandwidth])["time_s"] == in_bytes["time_s"]


def test_the_lowercase_spellings_of_the_qa_report_agree():
    """`--size 4GB --bandwidth 25gb/s` is 25 gigabits, as `25Gb/s` and `25Gbps` are."""
    times = {bw: answer([*COLLECTIVE, "--size", "4GB", "--bandwidth", bw])["time_s"] for bw in ("25gb/s", "25Gb/s", "25gbps")}
    assert len(set(times.values())) == 1
    assert times["25gb/s"] > answer([*COLLECTIVE, "--size", "4GB", "--bandwidth", "25GB/s"])["time_s"] * 7


@pytest.mark.parametrize("bandwidth", ["25gib/s", "25Gib/s", "25kibps"])
def test_a_bandwidth_in_binary_bits_is_refused(bandwidth):
    unit = bandwidth.lstrip("0123456789")
    line = refused([*COLLECTIVE, "--size", "1GB", "--bandwidth", bandwidth])
    assert line.startswith(f"error: bandwidth: got '{bandwidth}'; allowed: a number with GB/s")
    assert line.endswith(f"{unit} reads as binary bits: write {unit[0].upper()}iB/s (bytes) or {unit[0].upper()}b/s (bits)")


@pytest.mark.parametrize("bandwidth", ["25 parsecs", "25ps", "25/s", "25iB/s"])
def test_a_bandwidth_without_a_size_unit_is_refused(bandwidth):
    assert refused([*COLLECTIVE, "--size", "1GB", "--bandwidth", bandwidth]).startswith(
        f"error: bandwidth: got '{bandwidth}'; allowed: a number with GB/s")


# -- 2. sizes that need their unit on the command line ------------------------------------

@pytest.mark.parametrize(("argv", "line"), [
    ([*ITERATION, "--bucket", "25"],
     f"error: bucket: got '25'; {SIZE_ALLOWED}: a unit is needed"),
    ([*ITERATION, "--bucket=25"],
     f"error: bucket: got '25'; {SIZE_ALLOWED}: a unit is needed"),
    ([*ITERATION, "--first-bucket", "1"],
     f"error: first_bucket: got '1'; {SIZE_ALLOWED}: a unit is needed"),
    ([*ITERATION, "--bucket", "2.5e1"],
     f"error: bucket: got '2.5e1'; {SIZE_ALLOWED}: a unit is needed"),
    ([*PLAN, "--memory-reserve", "6"],
     f"error: memory_reserve: got '6'; {SIZE_ALLOWED}: a unit is needed, or a share such as 10%"),
    ([*PLAN, "--buckets", "5MiB,25"],
     f"error: buckets: got '25'; {SIZE_ALLOWED}: a unit is needed"),
    ([*ITERATION, "--bucket", "25mb"],
     f"error: bucket: got '25mb'; {SIZE_ALLOWED}; mb reads as bits, a size is in bytes (MB or MiB)"),
])
def test_a_bucket_or_reserve_typed_without_a_unit_is_refused(argv, line):
    assert refused(argv) == line


def test_the_json_error_names_the_option():
    result = runner.invoke(app, [*ITERATION, "--bucket", "25", "--json"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    error = json.loads(result.stdout)["error"]
    assert error["field"] == "bucket" and error["got"] == "25"


def test_sizes_with_units_are_still_read():
    assert answer([*ITERATION, "--bucket", "25MB"])["bucket_bytes"] == 25e6
    assert answer([*ITERATION, "--bucket", "25MiB", "--first-bucket", "1MiB"])["bucket_bytes"] == 25 * 2**20
    plans = [answer([*PLAN, "--memory-reserve", reserve, "--top", "1"]) for reserve in ("6GB", "6GiB", "10%")]
    capacity = 85029027840.0  # h100-sxm's memory: 10 % of it is the share's reserve
    assert [plan["memory_reserve_bytes"] for plan in plans] == pytest.approx([6e9, 6 * 2**30, 0.1 * capacity])
    assert answer([*PLAN, "--buckets", "5MiB, 25MB", "--top", "1"])


def test_message_sizes_stay_bare_bytes():
    """nccl-tests' convention: `collective --size 1048576` and `sweep --sizes` in bytes."""
    assert answer([*COLLECTIVE, "--size", "1048576", "--bandwidth", "25GB/s"])["size_bytes"] == 1048576
    rows = answer(["sweep", "all-reduce", *LINK, "--bandwidth", "25GB/s", "--sizes", "1024,1048576"])
    assert {row["size_bytes"] for row in rows} == {1024, 1048576}


def test_a_number_from_python_is_bytes():
    """Only typed text needs the unit: the API (and code calling a command) passes bytes."""
    assert parse_size("5MiB", "buckets", unit_needed=True) == 5 * 2**20
    assert parse_size("25MB", "bucket", unit_needed=True) == 25e6
    with pytest.raises(InputError, match="^first_bucket: got ' 1 '"):
        parse_size(" 1 ", "first_bucket", unit_needed=True)
    assert parse_size(25e6, "bucket", unit_needed=True) == 25e6  # a number from Python needs no unit
    assert parse_size(25e6, "bucket") == 25e6
    with pytest.raises(UnitError):
        parse_size("25Mb", "bucket")


# -- 3. magnitudes no machine has: refused, not answered --------------------------------------
#
# Fuzzing found `--alpha 1e300s` answered "lower bound 3e+300 s" and `--bandwidth 1e-300GB/s`
# 7e297 s: finite numbers, and meaningless. Latencies, reduction times and overheads stop at 1e6 s,
# a non-zero bandwidth lies within 1 B/s – 1000 PB/s (dpbase.limits), on the command line, in the API and
# in a profile alike (every one of them parses here).

@pytest.mark.parametrize(("option", "value", "allowed"), [
    ("--alpha", "1e300s", "at most 1e6 s (11.6 days)"),
    ("--alpha", "1000001s", "at most 1e6 s (11.6 days)"),
    ("--gamma", "2e6s", "at most 1e6 s (11.6 days)"),
    ("--bandwidth", "1e-300GB/s", "from 1 B/s to 1000 PB/s"),
    ("--bandwidth", "7bps", "from 1 B/s to 1000 PB/s"),
    ("--bandwidth", "2e9GB/s", "from 1 B/s to 1000 PB/s"),
])
def test_absurd_magnitudes_are_refused_naming_the_range(option, value, allowed):
    given = {"--alpha": "5us", "--bandwidth": "25GB/s", "--gamma": "0s"} | {option: value}
    argv = [*COLLECTIVE, "--size", "1GB", *(item for pair in given.items() for item in pair)]
    line = refused(argv)
    assert line.startswith(f"error: {option[2:]}: got '{value}'; allowed: ") and line.endswith(allowed), line


def test_the_edges_of_the_ranges_are_answered():
    edge = answer([*COLLECTIVE, "--size", "1GB", "--alpha", "1e6s", "--bandwidth", "1B/s"])
    assert edge["time_s"] == pytest.approx(2 * 7 * 1e6 + 2 * 7 / 8 * 1e9, rel=1e-9)  # ring: 2(N−1)α + 2(N−1)/N·n/β
    assert answer([*COLLECTIVE, "--size", "1GB", "--bandwidth", "1000PB/s"])["time_s"] > 0
    assert parse_bandwidth(0) == 0  # zero is the field's to accept (a profile's absent link) or refuse
