"""Input validation and overflow: every command and the public API refuse what they cannot
answer with one line, and never print a non-finite or negative time as an answer."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import costmodel
from costmodel.commands.common import check_times
from dpbase.errors import InputError
from dpbase.units import format_time, parse_size
from tests.attack.conftest import refused, safe

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "tests" / "data" / "calibration" / "raw" / "a100_oci_1x8_nccl2265.txt"
HW = "--ranks 8 --alpha 5us --bandwidth 25GB/s"
HUGE = "1" + "0" * 300

REFUSED = [  # (command, a word the error names)
    (f"collective all-reduce {HW.replace('--ranks 8', '--ranks ' + HUGE)} --size 1GB", "ranks"),
    (f"compare all-reduce {HW.replace('--ranks 8', '--ranks ' + HUGE)} --size 1GB", "ranks"),
    (f"collective all-reduce {HW} --size 1e299GB", "size"),
    (f"collective all-reduce {HW} --size 1e299GB -a ring", "size"),
    (f"compare all-reduce {HW} --size 1e299GB", "size"),
    (f"collective all-reduce {HW} --size {HUGE}B", "size"),
    ("collective all-reduce --ranks 8 --size 1GB --alpha 5us --bandwidth 1e-320B/s", "bandwidth"),  # below 1 B/s
    ("collective all-reduce --ranks 8 --size 1GB --alpha 1e308s --bandwidth 1GB/s -a ring", "alpha"),  # above 1e6 s
    ("collective all-reduce --ranks 8 --size 1GB --alpha 5us --bandwidth 1GB/s --gamma 1e308s -a ring", "gamma"),
    ("iteration --model gpt2 --cluster dgx-h100 --micro-batch 1 --nodes 0", "nodes"),
    ("iteration --model gpt2 --cluster dgx-h100 --micro-batch 1 --nodes -3", "nodes"),
    (f"iteration --model gpt2 --cluster dgx-h100 --micro-batch 1 --nodes {HUGE}", "nodes"),
    ("calibrate run.log --ranks 0", "ranks"),
    ("calibrate run.log --ranks 1", "ranks"),
    ("calibrate run.log --nodes 0", "nodes"),
    ("calibrate run.log --name 'My Link' -o x.toml", "name"),
    (f"plot sweep all-reduce {HW} --max-size 1e299GB -o x.html", "size"),
    (f"plot sweep all-reduce {HW.replace('--ranks 8', '--ranks ' + HUGE)} -o x.html", "ranks"),
    ("plot scaling all-reduce --size 1MB --alpha 5us --bandwidth 25GB/s --rank-counts 2,99999999999999999999 -o x.html",
     "rank_counts"),
    (f"plot best-map all-reduce --alpha 5us --bandwidth 25GB/s --rank-counts 2,{HUGE} -o x.html", "rank_counts"),
    ("plot schedule all-reduce parameter-server --ranks 4 --servers 100000 -o x.html", "servers"),
    ("plot schedule all-reduce ring --ranks 100000 -o x.html", "ranks"),
    ("nccl-table --cluster dgx-h100 --size 1e299GB", "size"),
]


@pytest.mark.parametrize(("command", "word"), REFUSED)
def test_refused_with_one_line(work, command, word):
    shutil.copy(LOG, work / "run.log")
    refused(command, word)
    assert not (work / "x.html").exists() and not (work / "x.toml").exists()


def test_calibrate_ranks_zero_is_not_inferred(work):
    shutil.copy(LOG, work / "run.log")
    assert safe("calibrate run.log").exit_code == 0  # the log says how many ranks ran
    refused("calibrate run.log --ranks 0", "ranks")


def test_calibrate_name_writes_a_profile_dpcost_loads(work):
    shutil.copy(LOG, work / "run.log")
    assert safe("calibrate run.log --name my-link -o my.toml").exit_code == 0
    assert safe("hardware validate my.toml").stdout.strip() == "ok"


@pytest.mark.parametrize("ranks", [0, -1, 2.5, 10**400, True, float("nan"), float("inf")])
def test_predict_refuses_ranks(ranks):
    with pytest.raises(InputError, match="ranks"):
        costmodel.predict("all-reduce", "ring", ranks=ranks, size_bytes=1e9, alpha_s=1e-6, bandwidth_Bps=1e9)


@pytest.mark.parametrize("kwargs", [{"size_bytes": 1e308}, {"size_bytes": -1.0}, {"size_bytes": math.nan},
                                    {"bandwidth_Bps": 0.0}, {"bandwidth_Bps": 1e-320}, {"alpha_s": 1e308},
                                    {"alpha_s": -1e-6}, {"bandwidth_Bps": math.inf}])
def test_predict_refuses_what_it_cannot_answer(kwargs):
    given_ = {"size_bytes": 1e9, "alpha_s": 1e-6, "bandwidth_Bps": 1e9} | kwargs
    with pytest.raises(InputError):
        costmodel.predict("all-reduce", "ring", ranks=8, **given_)


GRID_BAD = [
    {"size_bytes": np.array([1.0, -1.0])}, {"size_bytes": np.array([1.0, np.nan])}, {"size_bytes": 1e300},
    {"ranks": np.array([2, 0])}, {"ranks": np.array([2.0, 2.5])}, {"ranks": 10.0**12},
    {"bandwidth_Bps": 0.0}, {"bandwidth_Bps": np.array([1e9, -1e9])}, {"bandwidth_Bps": np.inf},
    {"alpha_s": np.nan}, {"alpha_s": -1.0}, {"gamma_s_per_byte": np.inf}, {"bandwidth_inter_Bps": 0.0},
    {"ranks": np.array([True, False])}, {"size_bytes": "many"},
]


@pytest.mark.parametrize("kwargs", GRID_BAD)
def test_evaluate_grid_refuses_impossible_inputs(kwargs):
    given_ = {"ranks": np.array([2, 8]), "size_bytes": 4e9, "alpha_s": 0.0, "bandwidth_Bps": 1e9} | kwargs
    with pytest.raises(InputError):
        costmodel.evaluate_grid("all-reduce", "ring", **given_)


@settings(max_examples=60, deadline=None)
@given(ranks=st.integers(1, 2**30), size=st.floats(0, 2.0**70), alpha=st.floats(0, 1.0),
       bandwidth=st.floats(1.0, 1e13), algorithm=st.sampled_from(["ring", "recursive-doubling", "tree"]))
def test_evaluate_grid_answers_are_finite_and_non_negative(ranks, size, alpha, bandwidth, algorithm):
    out = costmodel.evaluate_grid("all-reduce", algorithm, np.array([ranks]), np.array([size]), alpha, bandwidth)
    assert np.all(np.isfinite(out["time_s"])) and np.all(out["time_s"] >= 0)


@settings(max_examples=60, deadline=None)
@given(ranks=st.integers(1, 2**30), size=st.floats(0, 2.0**70), alpha=st.floats(0, 1e3),
       bandwidth=st.floats(1e-3, 1e13))
def test_predict_answers_or_refuses_never_a_non_finite_time(ranks, size, alpha, bandwidth):
    try:
        result = costmodel.predict("all-reduce", "ring", ranks=ranks, size_bytes=size, alpha_s=alpha,
                                   bandwidth_Bps=bandwidth)
    except InputError:
        return
    assert math.isfinite(result.time_s) and result.time_s >= 0


@pytest.mark.parametrize("text", ["1e299GB", "1" + "0" * 400, 10**400, "2ZB", "inf", "nan", "-1B"])
def test_parse_size_refuses_out_of_range(text):
    with pytest.raises(InputError):
        parse_size(text)


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_format_time_never_prints_a_non_finite_answer(value):
    with pytest.raises(InputError):
        format_time(value)


@pytest.mark.parametrize("data", [{"time_s": math.nan}, {"rows": [{"latency_s": math.inf}]}, {"time_s": -1.0}])
def test_json_guard_refuses_non_finite_or_negative_times(data):
    with pytest.raises(InputError):
        check_times(data)


def test_json_guard_lets_other_infinities_through_as_null():
    check_times({"max_size_bytes": math.inf, "time_s": 0.0, "delta_s": -1.0})


@settings(max_examples=25, deadline=None)
@given(size=st.sampled_from(["1B", "1e299GB", "0B", "1e-300B", "9ZiB", "1e20TB", "nanGB", "12"]),
       alpha=st.sampled_from(["0s", "5us", "1e308s", "1e-320s", "-1us", "1e300ms"]),
       bandwidth=st.sampled_from(["1e-320B/s", "0GB/s", "1B/s", "25GB/s", "1e308GB/s", "infGB/s"]),
       command=st.sampled_from(["collective", "compare"]))
def test_fuzz_collective_flags(size, alpha, bandwidth, command):
    safe([command, "all-reduce", "--ranks", "8", "--size", size, "--alpha", alpha, "--bandwidth", bandwidth])


@pytest.mark.parametrize("bandwidth_inter", ["0GB/s", "1e-320GB/s"])
def test_hierarchical_with_no_inter_bandwidth_is_refused(bandwidth_inter):
    refused(["collective", "all-reduce", "--ranks", "16", "--size", "1GB", "--alpha", "5us", "--bandwidth", "25GB/s",
             "-a", "hierarchical", "--bandwidth-inter", bandwidth_inter], "")


@pytest.mark.parametrize(("sizes", "times"), [([1, 2, 4], [1e-5, math.inf, 3e-5]), ([1, 2, 4], [1e-5, math.nan, 3e-5]),
                                              ([1, math.inf, 4], [1e-5, 2e-5, 3e-5]), ([1, 2, 4], [1e-5, -2e-5, 3e-5]),
                                              ([], [])])
def test_fit_times_refuses_non_finite_or_negative_points(sizes, times):
    with pytest.raises(InputError):
        costmodel.fit_times(sizes, times)


def test_parse_file_of_binary_data_is_a_parse_error(tmp_path):
    path = tmp_path / "x.log"
    path.write_bytes(bytes(range(256)) * 64)
    with pytest.raises(InputError):
        costmodel.parse_file(path)


@pytest.mark.parametrize("kwargs", [{"ranks": 0}, {"ranks": 10**400}, {"size_bytes": math.inf}, {"alpha_s": math.nan}])
def test_compare_refuses_like_predict(kwargs):
    given_ = {"ranks": 8, "size_bytes": 1e9, "alpha_s": 1e-6, "bandwidth_Bps": 1e9} | kwargs
    with pytest.raises(InputError):
        costmodel.compare("all-reduce", **given_)


def test_usage_errors_escape_control_characters_through_cli_main():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import cli; cli.main()", "hardware", "list", "--kind", "\x1b[2Jx"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "\x1b" not in done.stderr and done.stderr.count("\n") == 1


@pytest.mark.parametrize(("flag", "value"), [("--bandwidth", "1e-320B/s"), ("--alpha", "1e308s"), ("--gamma", "1e308s")])
def test_an_out_of_range_rate_is_refused_by_its_own_field(flag, value):
    """The old refusal ("time: got inf; ... these inputs (alpha=..., bandwidth=...)") named these
    words too; the field the line leads with is the flag typed."""
    given = {"--alpha": "5us", "--bandwidth": "1GB/s", "--gamma": "0s"} | {flag: value}
    argv = ["collective", "all-reduce", "--ranks", "8", "--size", "1GB", "-a", "ring",
            *(item for pair in given.items() for item in pair)]
    result = refused(argv, flag[2:])
    assert result.stderr.startswith(f"error: {flag[2:]}: got '{value}'"), result.stderr
