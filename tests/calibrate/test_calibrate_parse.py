"""Parsing nccl-tests / rccl-tests output: every real sample, each layout, and bad input."""

from __future__ import annotations

import csv
import tomllib
from pathlib import Path

import pytest

from costmodel.calibrate.parse import parse_file, parse_json, parse_text
from dpbase.errors import ParseError

DATA = Path(__file__).parents[1] / "data" / "calibration"
MANIFEST = tomllib.loads((DATA / "manifest.toml").read_text(encoding="utf-8"))["log"]


def _csv_rows(entry: dict) -> list[dict]:
    with (DATA / entry["csv"]).open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return rows[entry["first_row"]: entry["first_row"] + entry["rows"]]


def _same(parsed: float | None, text: str, scale: float) -> bool:
    if text == "":
        return parsed is None
    return parsed is not None and parsed == pytest.approx(float(text) * scale, rel=1e-12, abs=1e-15)


def test_manifest_covers_every_raw_log():
    assert sorted(e["file"] for e in MANIFEST) == sorted(f"raw/{p.name}" for p in (DATA / "raw").glob("*.txt"))


@pytest.mark.parametrize("entry", MANIFEST, ids=[e["file"] for e in MANIFEST])
def test_every_real_log_matches_its_csv(entry):
    log = parse_file(DATA / entry["file"])
    expected = _csv_rows(entry)
    assert len(log.rows) == len(expected) == entry["rows"]
    for row, want in zip(log.rows, expected):
        assert row.size_bytes == int(want["size_bytes"])
        assert row.dtype == want["dtype"]
        for block in ("oop", "ip"):
            assert _same(getattr(row, f"time_{block}_s"), want[f"time_us_{block}"], 1e-6)
            assert _same(getattr(row, f"algbw_{block}_Bps"), want[f"algbw_gbs_{block}"], 1e9)
            assert _same(getattr(row, f"busbw_{block}_Bps"), want[f"busbw_gbs_{block}"], 1e9)


@pytest.mark.parametrize("name, layout, redop, root", [
    ("rtx4090_8x_pcie4_p2pon.txt", "current", "sum", -1),
    ("rtx2080ti_2x_pcie3_nop2p_broadcast.txt", "current", "none", 0),
    ("abci_a_1n.txt", "pre-2022", "sum", None),  # error column, no root
    ("rtx2080ti_2x_nvlinkbridge_nt44.txt", "pre-2022", None, None),  # no redop, no root
])
def test_layouts(name, layout, redop, root):
    log = parse_file(DATA / "raw" / name)
    assert (log.layout, log.rows[0].redop, log.rows[0].root) == (layout, redop, root)


def test_old_layout_keeps_the_error_column():
    row = parse_file(DATA / "raw" / "abci_a_16n.txt").rows[0]
    assert (row.check_oop, row.check_ip) == (5e-07, 7e-07)


def test_srun_prefix_and_not_available_checks():
    log = parse_file(DATA / "raw" / "h100_2x8_ndr_default_nccltests290.txt")
    assert log.rows[0].size_bytes == 8388608
    assert log.rows[0].check_oop is None and log.rows[0].check_ip is None


def test_row_cut_short_after_out_of_place_block():
    log = parse_file(DATA / "raw" / "h100pcie_2x_nvlinkbridge_nt194.txt")
    last = log.rows[-1]
    assert last.algbw_ip_Bps == pytest.approx(116.34e9) and last.busbw_ip_Bps is None
    assert any("line 3" in note for note in log.notes)


def test_header_lines_give_ranks_nodes_model_version_and_collective():
    log = parse_file(DATA / "synthetic_mpi_header.txt")
    assert (log.ranks, log.nodes, log.gpu_model) == (4, 2, "NVIDIA H100 80GB HBM3")
    assert (log.nccl_version, log.collective, log.layout) == ("2.21.5", "all-reduce", "current")
    assert log.avg_busbw_Bps == pytest.approx(5.5085e9)
    assert len(log.rows) == 10 and log.rows[2].check_oop is None


def test_json_output():
    log = parse_file(DATA / "synthetic_minus_J.json")
    assert (log.layout, log.ranks, log.nodes, log.nccl_version) == ("json", 2, 1, "2.23.4")
    assert log.rows[1].time_oop_s == pytest.approx(52.4e-6)
    assert log.rows[1].busbw_ip_Bps == pytest.approx(20.16e9) and log.rows[1].check_ip is None


def test_nccl_library_version_code():
    text = "# nccl-tests version 2.13.8 nccl-headers=21803 nccl-library=21803\n" \
           "        1024   256  float  sum  -1  10.0  0.10  0.10  0  10.0  0.10  0.10  0\n"
    assert parse_text(text).nccl_version == "2.18.3"


def test_mpirun_tag_output_prefix():
    line = "[1,0]<stdout>:         1024   256  float  sum  -1  10.0  0.10  0.10  0  10.0  0.10  0.10  0\n"
    assert parse_text(line).rows[0].size_bytes == 1024


@pytest.mark.parametrize("text, where", [
    ("", "empty"),
    ("hello world\nthis is not a log\n", "line 1"),
    ("#  size count\n        1024   256  float  sum  -1  10.0\n", "line 2"),  # truncated row
    ("        1024   256  float  sum  -1  10.0  fast  0.10  0  10.0  0.10  0.10  0\n", "line 1"),
])
def test_bad_input_is_one_clear_error(text, where):
    with pytest.raises(ParseError) as error:
        parse_text(text, "log.txt")
    assert where in str(error.value)


def test_bad_json_names_the_line():
    with pytest.raises(ParseError, match="line 2"):
        parse_json('{\n  "results": [oops]\n}', "x.json")


@pytest.mark.parametrize("text, column", [
    ("        1024   256  float  sum  -1  10.0  0.10  -0.10  0  10.0  0.10  0.10  0\n", "busbw_oop"),
    ("        1024   256  float  sum  -1  10.0  0.10  0.10  0  10.0  -0.10  0.10  0\n", "algbw_ip"),
])
def test_negative_bandwidth_is_refused_naming_its_column(text, column):
    # calibrate reports its plateau and measured peak from these columns: a damaged row is refused
    with pytest.raises(ParseError, match=f"line 1 column {column}.*bandwidth >= 0"):
        parse_text(text, "log.txt")


def test_negative_json_bandwidth_is_refused_naming_its_key():
    text = ('{"results": [{"size": 1024, "out_of_place": {"time": 10.0, "alg_bw": 0.1, "bus_bw": -0.1, '
            '"nwrong": 0}}]}')
    with pytest.raises(ParseError, match=r"results\[0\]\.out_of_place\.bus_bw.*bandwidth >= 0"):
        parse_json(text, "x.json")


def test_a_log_without_rows_names_its_file_once():
    """The no-rows error names the file and line itself; the guard that kept the row errors'
    prefix off it (it read the error's own text) is gone (a review, 2026-11-30)."""
    from costmodel.calibrate.parse import parse_text
    from dpbase.errors import ParseError

    with pytest.raises(ParseError) as error:
        parse_text("# nccl-tests\nhello world\n", "logs/a.txt")
    assert error.value.field == "logs/a.txt line 2" and str(error.value).count("logs/a.txt") == 1
    with pytest.raises(ParseError) as empty:
        parse_text("", "logs/b.txt")
    assert empty.value.field == "logs/b.txt"
