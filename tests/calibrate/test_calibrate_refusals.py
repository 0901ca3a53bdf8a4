"""`calibrate` refuses what it cannot fit honestly: a log without a measured bandwidth, and a
--collective that contradicts the collective the log names (review of the CLI, two defects:
a latency-bound log printed ∞ and wrote a made-up 24 GB/s link; a footer saying
all_reduce_perf was fitted with the broadcast formula)."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from costmodel.calibrate.link import MIN_BANDWIDTH_TIME_SHARE, calibrate
from costmodel.calibrate.parse import parse_file

DATA = Path(__file__).resolve().parents[1] / "data" / "calibration"
SYNTHETIC = DATA / "synthetic_mpi_header.txt"  # 4 ranks, footer "# Collective test concluded: all_reduce_perf"
HEADER_LINES = 12  # up to the column-unit line; the result rows follow
LATENCY_BOUND = "rows whose time grows with the message size"


def _run(*argv: str):
    return CliRunner().invoke(app, ["calibrate", *argv])


def _one_error_line(result) -> str:
    """The refusal: exit code 2, exactly one line on stderr, no traceback, nothing on stdout."""
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output and not result.stdout.strip()
    return lines[0]


def _log(path: Path, rows: list[tuple[int, float]], footer: bool = True) -> Path:
    """The synthetic log's header with result rows (size in B, time in µs, both blocks alike,
    algbw and busbw as nccl-tests prints them: 2 decimals of GB/s, busbw = 1.5 algbw)."""
    header = SYNTHETIC.read_text(encoding="utf-8").splitlines()[:HEADER_LINES]
    body = []
    for size, time_us in rows:
        algbw = size / time_us / 1e3
        block = f"{time_us:8.2f} {algbw:7.2f} {1.5 * algbw:7.2f}      0"
        body.append(f"[0] {size:12d} {max(size // 4, 1):13d}     float     sum      -1 {block} {block}")
    tail = ["[0] # Avg bus bandwidth    : 0.1", "[0] #"] + (
        ["[0] # Collective test concluded: all_reduce_perf"] if footer else [])
    path.write_text("\n".join(header + body + tail) + "\n", encoding="utf-8")
    return path


def _first_rows(path: Path, rows: int) -> Path:
    """The synthetic log cut after its first ``rows`` result rows (no footer)."""
    lines = SYNTHETIC.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[:HEADER_LINES + rows]) + "\n", encoding="utf-8")
    return path


# --- 1. no bandwidth-bound size: refused, nothing written ---------------------------------


def test_a_latency_bound_log_is_refused_and_no_profile_is_written(tmp_path):
    """8 B and 32 B at 20 µs (the reviewer's `head -14`): it was exit 0, algbw ∞, a 24 GB/s link."""
    log, profile, plot = _first_rows(tmp_path / "small.txt", 2), tmp_path / "small.toml", tmp_path / "fit.html"
    allowed = (f"{LATENCY_BOUND}: the largest message here is 32 B, and the time does not grow with the size "
               "there; measure up to nccl-tests -e 1G or larger")
    for extra in ([], ["--html", str(plot)]):
        line = _one_error_line(_run(str(log), "-o", str(profile), *extra))
        assert line == f"error: log: got '{log}'; allowed: {allowed}"
        assert not profile.exists() and not plot.exists()
    result = _run(str(log), "-o", str(profile), "--json")  # --json: the error as JSON on stdout
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert (error["field"], error["got"], error["allowed"]) == ("log", str(log), allowed)
    assert not profile.exists()


def test_a_latency_bound_log_writes_no_cluster_profile_either(tmp_path):
    log, profile = _first_rows(tmp_path / "small.txt", 2), tmp_path / "cluster.toml"
    line = _one_error_line(_run(str(log), "--system", "dgx-h100", "-o", str(profile)))
    assert line.startswith(f"error: log: got '{log}'; allowed: {LATENCY_BOUND}: the largest message here is 32 B")
    assert not profile.exists()


def test_a_log_whose_time_falls_at_its_largest_size_is_refused(tmp_path):
    """1 MiB in 1 µs after 512 KiB in 40.97 µs: the last regime was flat and the link 1.6e7 GB/s."""
    text = SYNTHETIC.read_text(encoding="utf-8").replace("61.94   16.93   25.39      0    61.94",
                                                         " 1.00   16.93   25.39      0     1.00")
    log = tmp_path / "nm.txt"
    log.write_text(text, encoding="utf-8")
    line = _one_error_line(_run(str(log), "-o", str(tmp_path / "nm.toml")))
    assert line == (f"error: log: got '{log}'; allowed: {LATENCY_BOUND}: the largest message here is 1 MiB, and "
                    "the time falls as the size grows (40.97 µs at 512 KiB, 1 µs at 1 MiB); measure up to "
                    "nccl-tests -e 1G or larger")
    assert not (tmp_path / "nm.toml").exists()


def test_a_slope_inside_the_noise_is_not_a_bandwidth(tmp_path):
    """Times growing by 1 % from 8 B to 64 KiB give C > 0, but a per-byte term of ~1 % of the
    time is noise (the validation logs move by up to 3.6 % from run to run), not a link: the
    bandwidth it implies (~300 GB/s on 20 µs) was never measured."""
    sizes = [2**k for k in range(3, 17)]
    log = _log(tmp_path / "flat.txt", [(n, 20.0 * (1 + 0.01 * n / sizes[-1])) for n in sizes])
    line = _one_error_line(_run(str(log)))
    assert f"allowed: {LATENCY_BOUND}: the largest message here is 64 KiB, where bandwidth is " in line
    share = float(line.split("where bandwidth is ")[1].split(" %")[0]) / 100
    assert 0 < share < MIN_BANDWIDTH_TIME_SHARE
    assert f"(at least {100 * MIN_BANDWIDTH_TIME_SHARE:g} % needed)" in line


def test_a_log_whose_every_busbw_is_zero_is_refused(tmp_path):
    """One 8 B size: the fit puts all the time on bandwidth (C > 0), but nccl-tests printed busbw
    0.00 GB/s: no size moved a measurable bandwidth."""
    log = _first_rows(tmp_path / "one.txt", 1)
    line = _one_error_line(_run(str(log), "-o", str(tmp_path / "one.toml")))
    assert line.endswith(f"{LATENCY_BOUND}: the largest message here is 8 B and every busbw the log prints is 0; "
                         "measure up to nccl-tests -e 1G or larger")
    assert not (tmp_path / "one.toml").exists()


def test_a_log_that_reaches_bandwidth_is_accepted_with_finite_numbers(tmp_path):
    """The same header with sizes up to 1 MiB (time grows 3x): exit 0, no ∞ or inf anywhere."""
    profile = tmp_path / "ok.toml"
    result = _run(str(SYNTHETIC), "-o", str(profile))
    assert result.exit_code == 0, result.output
    assert "∞ GB/s" not in result.stdout and "algbw = ∞" not in result.stdout and "inf" not in result.stdout
    assert "measured peak 25.39 GB/s" in result.stdout
    link = tomllib.loads(profile.read_text(encoding="utf-8"))["link"][0]
    assert float(link["bandwidth"].removesuffix("GB/s")) == pytest.approx(37.5, rel=1e-3)  # 25 GB/s algbw · 1.5
    summary = json.loads(_run(str(SYNTHETIC), "--json").stdout)
    assert math.isfinite(summary["busbw_plateau_Bps"]) and summary["busbw_plateau_Bps"] > 0


def _manifest() -> dict[str, dict]:
    entries = tomllib.loads((DATA / "manifest.toml").read_text(encoding="utf-8"))["log"]
    return {Path(e["file"]).name: e for e in entries}


@pytest.mark.parametrize("path", sorted((DATA / "raw").glob("*.txt")) + [DATA / "synthetic_minus_J.json"],
                         ids=lambda p: p.name)
def test_every_real_log_still_measures_a_bandwidth(path):
    """The check refuses none of the logs calibrate accepts: the least bandwidth share at the
    largest message among them is 51 % (abci_v_32n.txt), ten times the threshold."""
    entry = _manifest().get(path.name, {})
    result = calibrate([parse_file(path)], collective=entry.get("collective"), ranks=entry.get("ranks"),
                       nodes=entry.get("nodes"))
    assert result.fit.bandwidth_share >= 10 * MIN_BANDWIDTH_TIME_SHARE
    assert math.isfinite(result.busbw_plateau_Bps) and result.busbw_plateau_Bps > 0


# --- 2. --collective against the collective the log names --------------------------------


@pytest.mark.parametrize("given", ["broadcast", "all-gather", "reduce_scatter_perf"])
def test_a_collective_the_log_contradicts_is_refused(tmp_path, given):
    """The footer names all_reduce_perf; broadcast was fitted silently, all-gather with a note."""
    log = tmp_path / "all_reduce_perf.log"
    log.write_text(SYNTHETIC.read_text(encoding="utf-8"), encoding="utf-8")
    line = _one_error_line(_run(str(log), "--collective", given, "-o", str(tmp_path / "x.toml")))
    assert line == f"error: collective: got '{given}'; allowed: all-reduce (the log's own collective)"
    assert not (tmp_path / "x.toml").exists()


def test_a_contradicted_collective_is_refused_with_system_too(tmp_path):
    line = _one_error_line(_run(str(SYNTHETIC), "--collective", "broadcast", "--system", "dgx-h100",
                                "-o", str(tmp_path / "cluster.toml")))
    assert line == "error: collective: got 'broadcast'; allowed: all-reduce (the log's own collective)"
    assert not (tmp_path / "cluster.toml").exists()


@pytest.mark.parametrize("given", ["all-reduce", "all_reduce_perf", "allreduce"])
def test_the_logs_own_collective_in_any_spelling_is_accepted(given):
    result = _run(str(SYNTHETIC), "--collective", given, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["collective"] == "all-reduce"


def test_a_log_that_does_not_name_its_collective_takes_the_users(tmp_path):
    """Without the footer the log says nothing: --collective is how the user tells it (its busbw
    and algbw columns only add a note). Its redop column does bind: "sum" is printed by the tests
    that reduce (and send-recv) alone, so all-gather is refused (tests/commands/test_cli_audit_s29.py)."""
    rows = [(2**k, 20.0 + 2**k / 25e3) for k in range(3, 21, 2)]
    log = _log(tmp_path / "run.txt", rows, footer=False)
    assert parse_file(log).collective is None
    result = _run(str(log), "--collective", "reduce-scatter", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["collective"] == "reduce-scatter"
    assert any("reduce-scatter was given but the columns suggest all-reduce" in note for note in summary["notes"])
    assert "redop sum" in _one_error_line(_run(str(log), "--collective", "all-gather"))


HEADED = str(Path(__file__).resolve().parents[1] / "data" / "calibration" / "synthetic_mpi_header.txt")


@pytest.mark.parametrize(("args", "needle"), [
    (["--ranks", "8"], "ranks: got 8; allowed: 4 (the log's header lists 4 ranks"),
    (["--nodes", "4"], "nodes: got 4; allowed: 2 (the log's header lists 2 nodes"),
    (["--name", "my-link"], "--name: got 'my-link'; allowed: only with --output"),
])
def test_what_the_log_or_the_command_contradicts_is_refused(cli_error, args, needle):
    """A --ranks or --nodes against the log's own header was fitted as given (an 8-rank fit of a
    4-rank run: a 43.75 GB/s plateau against 25.4 measured); a --name with nothing written was dropped."""
    assert needle in cli_error(["calibrate", HEADED, *args])


@pytest.mark.parametrize("extra", [["-o", "r.toml"], ["--ranks", "16"], ["--system", "dgx-h100"], ["--html", "x.html"]])
def test_recipe_refuses_what_it_would_ignore(cli_error, extra):
    line = cli_error(["calibrate", "--recipe", "--cluster", "dgx-h100", *extra])
    assert "left out with --recipe" in line


def test_an_nccl_algorithm_the_system_cannot_run_is_refused(cli_error, tmp_path):
    """--nccl-algo nvls on an A100 system wrote a profile whose curves NCCL could never run
    (hardware validate said ok, collective then answered "algorithm nvls")."""
    log = str(Path(__file__).resolve().parents[1] / "data" / "calibration" / "raw" / "abci_a_2n.txt")
    out = tmp_path / "s.toml"
    line = cli_error(["calibrate", log, "--system", "a100-abci-8x", "-o", str(out), "--nccl-algo", "nvls"])
    assert line.startswith("error: --nccl-algo: got 'nvls'; allowed: one NCCL runs for all-reduce on a100-abci-8x "
                           "at 2 node(s) × 8 GPUs: tree, ring")  # NCCL's own names
    assert not out.exists()
    named = tmp_path / "ar_2n_nvls.log"  # the algorithm read from a file name is checked too
    named.write_text(Path(log).read_text(encoding="utf-8"), encoding="utf-8")
    assert "NCCL_ALGO read from the all-reduce log: got 'nvls'" in cli_error(
        ["calibrate", str(named), "--system", "a100-abci-8x", "-o", str(out)])


def test_nccl_algo_skips_the_collectives_nccls_model_lacks(tmp_path):
    """An all-to-all log beside an all-reduce one: NCCL's tuning model has no all-to-all, so
    --nccl-algo is not NCCL's to check there (the check raised before the profile was written)."""
    raw = Path(__file__).resolve().parents[1] / "data" / "calibration" / "raw"
    out = tmp_path / "g.toml"
    result = CliRunner().invoke(app, ["calibrate", str(raw / "gb300_ar_2n.txt"), str(raw / "gb300_a2a_2n.txt"),
                                      "--system", "gb300-nvl72-tray", "--nccl-algo", "ring", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.exists()
    curves = tomllib.loads(out.read_text(encoding="utf-8"))["system"][0]["measured"]
    assert {(curve["collective"], curve["algorithm"]) for curve in curves} >= {("all-reduce", "ring")}
    assert "all-to-all" in {curve["collective"] for curve in curves}


@pytest.mark.parametrize(("args", "line"), [
    (("-o", ""), "error: output: got ''; allowed: a file path to write"),
    (("--html", ""), "error: html: got ''; allowed: a .html path (the output is interactive HTML, e.g. report.html)"),
    (("-o", "", "--system", "dgx-h100"), "error: output: got ''; allowed: a file path to write"),
])
def test_an_empty_output_path_is_echoed_as_typed(cli_error, args, line):
    """Typed as pathlib paths, `-o ''` reached the refusal as '.', a path the user never typed."""
    assert cli_error(["calibrate", HEADED, *args]) == line


def _scaled(tmp_path, factor: float) -> str:
    """abci_a_2n.txt with every time × ``factor`` (its bandwidth columns ÷ it): a log in another unit."""
    source = DATA / "raw" / "abci_a_2n.txt"
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) == 12 and parts[0].isdigit():
            for column in (4, 8):
                parts[column] = f"{float(parts[column]) * factor:.6g}"
            for column in (5, 6, 9, 10):
                parts[column] = f"{float(parts[column]) / factor:.6g}"
            line = "  ".join(parts)
        lines.append(line)
    path = tmp_path / "scaled.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("factor", [1e12, 1e-12])
def test_a_log_in_another_unit_writes_no_profile_dpcost_refuses(cli_error, tmp_path, factor):
    """Times scaled by 1e12 wrote a link of 1.07e12 µs and 3.3e-11 GB/s, which `hardware validate`
    and every --link then refused (profiles hold at most 1e6 s and 1 B/s to 1000 PB/s)."""
    log = _scaled(tmp_path, factor)
    for extra in (["-o", str(tmp_path / "x.toml")], ["--system", "dgx-a100", "-o", str(tmp_path / "x.toml")]):
        line = cli_error(["calibrate", log, "--ranks", "16", *extra])
        assert line.startswith(f"error: logs: got '{log}'; allowed: times and sizes a machine gives: "), line
        assert line.endswith("(are the log's times or sizes in another unit?)")
        assert not (tmp_path / "x.toml").exists()
    scaled = _scaled(tmp_path, 1.0)  # the same rewrite at scale 1 calibrates
    result = CliRunner().invoke(app, ["calibrate", scaled, "--ranks", "16", "-o", str(tmp_path / "ok.toml")])
    assert result.exit_code == 0, result.output
    assert CliRunner().invoke(app, ["hardware", "validate", str(tmp_path / "ok.toml")]).stdout.startswith("ok")


def test_a_log_that_names_no_collective_says_all_reduce_was_assumed(tmp_path):
    """A -J log with times alone was calibrated as all-reduce with a reason it did not have
    ("redop None with busbw/algbw > 1"); it now says nothing named the collective."""
    rows = [{"size": 2**k, "out_of_place": {"time": 10 + 2**k / 1e4}} for k in range(10, 24)]
    path = tmp_path / "bare.json"
    path.write_text(json.dumps({"results": rows}), encoding="utf-8")
    result = CliRunner().invoke(app, ["calibrate", str(path), "--ranks", "8"])
    assert result.exit_code == 0, result.output
    assert ("note: collective not named in the log; no redop, root or bandwidth column says which: "
            "assumed all-reduce (use --collective)") in result.stdout
    # a collective given for it is taken as it is: no column says otherwise (it said "gather was
    # given but the columns suggest all-reduce or all-gather or ...")
    given = CliRunner().invoke(app, ["calibrate", str(path), "--ranks", "8", "--collective", "all-gather"])
    assert given.exit_code == 0, given.output
    assert "was given but the columns suggest" not in given.stdout


def _times_divided(path: Path, factor: float) -> Path:
    """README's ABCI log with every time column divided by ``factor`` (milliseconds pasted where
    nccl-tests writes µs), its algbw and busbw columns left as printed."""
    source = DATA / "raw" / "abci_a_2n.txt"
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        tokens = line.split()
        if tokens and tokens[0].isdigit() and len(tokens) in (12, 13):
            first = len(tokens) - 8  # size count type redop [root] time algbw busbw #wrong, twice
            for i in (first, first + 4):  # out-of-place and in-place time
                tokens[i] = f"{float(tokens[i]) / factor:.6f}"
            line = " ".join(tokens)
        lines.append(line)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_times_in_another_unit_than_the_algbw_column_are_refused(tmp_path):
    """A review pasted milliseconds: the fit read a 135 TB/s busbw plateau, 1000× the log's own
    busbw column, and wrote it. Now the log's size / time is checked against its algbw."""
    log = _times_divided(tmp_path / "ms.txt", 1000.0)
    line = _one_error_line(_run(str(log), "-o", str(tmp_path / "ms.toml")))
    assert "times that agree with its algbw column" in line and "1e+03×" in line
    assert not (tmp_path / "ms.toml").exists()
    kept = _times_divided(tmp_path / "same.txt", 1.0)  # the same rewrite at the right unit fits
    assert _run(str(kept)).exit_code == 0
    # a rank count near 1000 no longer lets the milliseconds through (it matched an N x convention)
    assert "times that agree with its algbw column" in _one_error_line(_run(str(log), "--ranks", "1024"))


def test_every_shipped_log_agrees_with_its_algbw_column():
    """The conventions the check accepts (size / time = algbw, or N / (N − 1) × it in 2017-2020
    all_gather and reduce_scatter logs) hold for every log the calibration tests ship."""
    from costmodel.calibrate.link import check_times_match_algbw, resolve_log

    for path in sorted((DATA / "raw").iterdir()):
        log = resolve_log(parse_file(path), None, None, None)
        if log.ranks:
            check_times_match_algbw([log], log.ranks)


def test_a_flat_regime_prints_no_bandwidth_it_did_not_measure():
    """A latency floor's profile bandwidth is a stand-in (its β-term 0.01 % of the time): the
    text said 'algbw = ∞' and 'bandwidth = 3.479e+04 GB/s' for an L40S over PCIe."""
    result = _run(str(DATA / "raw" / "l40s_4x_pcie_ring.txt"))
    assert result.exit_code == 0, result.output
    floor = next(line for line in result.stdout.splitlines() if "8 B …" in line)
    assert "no bandwidth measured" in floor and "GB/s" not in floor and "∞" not in floor
    regimes = json.loads(_run(str(DATA / "raw" / "l40s_4x_pcie_ring.txt"), "--json").stdout)["regimes"]
    assert [r["bandwidth_measured"] for r in regimes] == [r["seconds_per_byte"] > 0 or r["link_flat"] for r in regimes]
    assert regimes[0]["bandwidth_measured"] is False and any(r["bandwidth_measured"] for r in regimes)


def test_a_negative_time_is_quoted_as_the_log_writes_it(tmp_path):
    """'-10.00' in the time column read 'time: got -9.999999999999999e-06' (seconds, float noise)."""
    log = _times_divided(tmp_path / "neg.txt", -1.0)
    line = _one_error_line(_run(str(log), "--ranks", "16"))
    assert "time: got '-" in line and " us'; allowed: a measured size >= 0 and a finite time > 0" in line
    assert "e-0" not in line


def test_the_2017_2020_all_gather_convention_is_accepted(tmp_path):
    """nccl-tests' all_gather and reduce_scatter printed size / time = N / (N − 1) × algbw from
    2017-08 to 2020-06; an 8-rank log of that era (ratio 1.14) was refused as another unit."""
    source = DATA / "raw" / "abci_a_1n.txt"  # 8 ranks
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        tokens = line.split()
        if tokens and tokens[0].isdigit() and len(tokens) == 12:
            for i in (5, 9):  # algbw, out-of-place and in-place: per-rank × (N − 1) / t
                tokens[i] = f"{float(tokens[i]) * 7 / 8:.2f}"
            line = " ".join(tokens)
        lines.append(line)
    old = tmp_path / "old_convention.txt"
    old.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = _run(str(old), "--ranks", "8")
    assert result.exit_code == 0, result.output
