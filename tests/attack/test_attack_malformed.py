"""Malformed files: nested too deeply, binary, wrong JSON types, impossible constants, inf or
negative times. Each gives one ``error:`` line, never a traceback and never a silent drop."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costmodel.calibrate.parse import parse_json, parse_text
from costmodel.nccl.tables import load_tables
from dpbase.errors import InputError, ParseError, ProfileError
from tests.attack.conftest import refused, safe

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "tests" / "data" / "calibration" / "raw" / "a100_oci_1x8_nccl2265.txt"
DEPTH = 5000


@pytest.fixture
def files(work):
    (work / "deep_array.toml").write_text("a = " + "[" * DEPTH + "]" * DEPTH + "\n")
    (work / "deep_table.toml").write_text("a = " + "{b=" * DEPTH + "1" + "}" * DEPTH + "\n")
    (work / "binary.toml").write_bytes(bytes(range(256)) * 8)
    (work / "deep.json").write_text('{"results": ' + "[" * 100_000 + "]" * 100_000 + "}")
    (work / "eff0.toml").write_text("[nccl_tests]\nefficiency_nvlink = 0\n")
    for value in ("nan", "inf", "-inf", "-1.0"):
        (work / f"const_{value}.toml").write_text(f"[nccl_tests]\nlaunch_overhead_us = {value}\n")
    (work / "list_nan.toml").write_text("[tree_correction_factor]\nll = [" + ", ".join(["nan"] * 27) + "]\n")
    return work


TOML_FILES = ["deep_array.toml", "deep_table.toml", "binary.toml"]
COMMANDS = [
    "hardware validate {f}",
    "hardware show {f}",
    "iteration --model gpt2 --cluster {f} --micro-batch 1",
    "collective all-reduce --cluster {f} --size 1MB",
    "nccl-table --cluster {f}",
    "plan --model gpt2 --cluster {f} --global-batch 8",
    "plot sweep all-reduce --cluster {f} -o out.html",
    "nccl-table --cluster dgx-h100 --tuning {f}",
]


@pytest.mark.parametrize("name", TOML_FILES)
@pytest.mark.parametrize("command", COMMANDS)
def test_deep_or_binary_toml_is_one_line(files, command, name):
    refused(command.format(f=name))
    assert not (files / "out.html").exists()


@pytest.mark.parametrize("name", ["eff0.toml", "const_nan.toml", "const_inf.toml", "const_-inf.toml",
                                  "const_-1.0.toml", "list_nan.toml"])
def test_impossible_tuning_constants_are_refused(files, name):
    refused(f"nccl-table --cluster dgx-h100 --size 1GB --tuning {name}", "allowed")


def test_zero_efficiency_cannot_reach_the_model():
    with pytest.raises(ProfileError, match="efficiency_nvlink"):
        load_tables(overrides={"nccl_tests": {"efficiency_nvlink": 0.0}})
    load_tables(overrides={"nvls_efficiency": {"hopper": 0.0}})  # NCCL's own "no NVLS" zero stays allowed


def test_deep_json_log_is_one_line(files):
    refused("calibrate deep.json --ranks 8", "nested")


def _json_log(time: object = 100.0, size: object = 1024) -> str:
    entry = {"size": size, "count": 256, "type": "float", "redop": "sum", "root": -1,
             "out_of_place": {"time": time, "alg_bw": 1.0, "bus_bw": 1.0, "nwrong": 0},
             "in_place": {"time": 100.0, "alg_bw": 1.0, "bus_bw": 1.0, "nwrong": 0}}
    return json.dumps({"results": [entry]})


BAD_JSON_VALUES = st.one_of(st.text(max_size=5).filter(lambda t: t != "N/A"), st.booleans(),
                            st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(),
                                                                                max_size=1))


@settings(max_examples=40)
@given(BAD_JSON_VALUES)
def test_json_log_time_of_a_wrong_type_is_a_parse_error(value):
    with pytest.raises(ParseError):
        parse_json(_json_log(time=value))


@settings(max_examples=30)
@given(st.one_of(st.booleans(), st.floats(), st.text(max_size=4), st.integers(max_value=-1), st.none()))
def test_json_log_size_must_be_an_integer(value):
    with pytest.raises(ParseError):
        parse_json(_json_log(size=value))


@pytest.mark.parametrize("time", ["NaN", "Infinity", "-Infinity"])
def test_json_log_non_finite_time_is_refused(time):
    with pytest.raises(ParseError):
        parse_json(_json_log().replace('"time": 100.0', f'"time": {time}', 1))


def test_json_log_null_time_is_not_applicable():
    log = parse_json(_json_log(time=None))
    assert log.rows[0].time_oop_s is None and log.rows[0].time_ip_s == pytest.approx(1e-4)


def _text_log_with(time: str) -> str:
    lines = LOG.read_text().splitlines()
    row = next(i for i, line in enumerate(lines) if line.split()[:1] and line.split()[0].isdigit())
    tokens = lines[row].split()
    tokens[5] = time
    lines[row] = "  ".join(tokens)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("time", ["inf", "nan", "-inf"])
def test_text_log_non_finite_time_is_a_parse_error(time):
    with pytest.raises(ParseError, match="finite"):
        parse_text(_text_log_with(time))


@pytest.mark.parametrize("time", ["-12.5", "0.00"])
def test_calibrate_refuses_a_negative_or_zero_time_naming_the_line(work, time):
    (work / "neg.log").write_text(_text_log_with(time))
    result = refused("calibrate neg.log --ranks 8", "line")
    assert "time" in result.stderr


def test_calibrate_library_refuses_instead_of_dropping(work):
    from costmodel.calibrate.link import points

    log = parse_text(_text_log_with("-3"))
    with pytest.raises(InputError, match="time"):
        points([log])


@pytest.mark.parametrize("content", [b"", b"\x00\x01\x02" * 100, b"\xff\xfe" + "size".encode("utf-16-le"),
                                     b"{", b"[]", b'{"results": {}}', b'{"results": [1]}', b'{"config": 1}'])
def test_garbage_logs_are_one_line(work, content):
    (work / "bad.log").write_bytes(content)
    refused("calibrate bad.log --ranks 8")


def test_json_log_odd_config_is_ignored_not_fatal():
    text = _json_log()[:-1] + ', "config": {"devices": [{"hostname": ["x"], "name": 3}, 7]}}'
    log = parse_json(text)
    assert log.nodes is None and math.isclose(log.rows[0].time_oop_s, 1e-4)


def test_hardware_profile_with_nan_is_refused(work):
    (work / "nan.toml").write_text('[[link]]\nname = "x-link"\ndescription = "d"\nsource = "s"\ncategory = "roce"\n'
                                   'bandwidth = "nanGB/s"\nefficiency = nan\nlatency = "2us"\n')
    safe_result = safe("hardware validate nan.toml")
    assert safe_result.exit_code == 2


@pytest.mark.parametrize("command", [
    "hardware validate {path}", "collective all-reduce --size 1MB --cluster {path}",
    "iteration --model {path} --cluster dgx-h100 --micro-batch 1", "calibrate {path} --ranks 8",
    "nccl-table --cluster dgx-h100 --size 1GB --tuning {path}"])
@pytest.mark.parametrize("kind", ["large", "endless"])
def test_a_huge_or_endless_input_is_refused_naming_the_limit(work, command, kind, monkeypatch):
    """A 3 GB profile ended in a MemoryError traceback and `--cluster /dev/zero` never returned
    (review, 2026-11-28): every user file is read up to dpbase.readfile.MAX_INPUT_BYTES (lowered
    here so the test reads little)."""
    from dpbase import readfile

    monkeypatch.setattr(readfile, "MAX_INPUT_BYTES", 4096)
    monkeypatch.setattr(readfile, "MAX_LOG_BYTES", 4096)
    path = work / "big.toml"  # a model is read as a file only where its name ends in .toml
    if kind == "large":
        path.write_text("# padding\n" * 1000)
    else:
        path.symlink_to("/dev/zero")
    result = refused(command.format(path=path), "of at most 4,096 bytes (this one is larger)")
    assert result.stderr.count("\n") == 1


def test_a_log_may_be_larger_than_a_profile(work, monkeypatch):
    """calibrate reads logs of 198 MB (docs/performance.md): a log's limit is its own, above a
    profile's."""
    from dpbase import readfile

    assert readfile.MAX_LOG_BYTES >= 4 * 198e6 and readfile.MAX_INPUT_BYTES < readfile.MAX_LOG_BYTES
    monkeypatch.setattr(readfile, "MAX_INPUT_BYTES", 1024)
    log = work / "run.log"
    log.write_text((LOG.parent / "abci_a_2n.txt").read_text())
    assert log.stat().st_size > 1024
    assert safe(f"calibrate {log} --ranks 16 --json").exit_code == 0
    refused(f"hardware validate {log}", "of at most 1,024 bytes")
