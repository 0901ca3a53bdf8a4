"""Calibrate once, use it everywhere: a measured cluster profile (issue 14)."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import hardware
from cli import app
from costmodel.calibrate.cluster_profile import algorithm_of
from costmodel.calibrate.recipe import BINARIES, recipe_lines
from costmodel.cluster.api import predict

RAW = Path(__file__).resolve().parents[1] / "data" / "calibration" / "raw"
LOGS = [str(RAW / "abci_a_1n.txt"), str(RAW / "abci_a_2n.txt")]
runner = CliRunner()


@pytest.fixture(scope="module")
def profile(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cal") / "abci.toml"
    result = runner.invoke(app, ["calibrate", *LOGS, "--system", "a100-abci-8x", "-o", str(path)])
    assert result.exit_code == 0, result.output
    return path


def test_the_profile_round_trips_through_hardware_validate_and_show(profile):
    assert runner.invoke(app, ["hardware", "validate", str(profile)]).exit_code == 0
    shown = runner.invoke(app, ["hardware", "show", str(profile), "--json"])
    assert shown.exit_code == 0, shown.output
    system = hardware.load_system(str(profile))
    assert [(c.collective, c.nodes, c.gpus_per_node, c.algorithm) for c in system.measured] == [
        ("all-reduce", 1, 8, "auto"), ("all-reduce", 2, 8, "auto")]
    again = hardware.load_system(str(profile)).measured
    text = hardware.to_toml(system)
    assert "[[system.measured]]" in text and "[[system.measured.regimes]]" in text
    for before, after in zip(system.measured, again, strict=True):
        for size in (8.0, 4096.0, 1e6, 3e7):
            assert after.time_s(size) == pytest.approx(before.time_s(size), rel=1e-9)


def test_auto_reproduces_the_measured_curve(profile):
    system = hardware.load_system(str(profile))
    curve = next(c for c in system.measured if c.nodes == 2)
    for size in (1024.0, 2**20, 2**25):
        p = predict("all-reduce", size, cluster=str(profile), nodes=2)
        assert p.source == "measured" and p.time_s == pytest.approx(curve.time_s(size))
        low, high = p.interval_s
        assert low < p.time_s < high


def test_one_algorithms_fit_is_never_applied_to_another(profile):
    p = predict("all-reduce", 2**25, cluster=str(profile), nodes=2, algorithm="ring")
    assert p.source == "model" and "not measured" in p.note  # the logs ran NCCL's own choice, not ring


def test_unmeasured_collectives_and_node_counts_are_the_scaled_model(profile):
    gather = predict("all-gather", 2**25, cluster=str(profile), nodes=2)
    assert gather.source == "model" and "scaled" in gather.note
    bare = predict("all-gather", 2**25, cluster="a100-abci-8x", nodes=2)
    assert gather.time_s != bare.time_s
    far = predict("all-reduce", 2**25, cluster=str(profile), nodes=8)
    assert far.source == "model" and "2-node" in far.note


@pytest.mark.parametrize("args", [
    ["collective", "all-reduce", "--size", "64MiB", "--nodes", "2"],
    ["compare", "all-reduce", "--size", "64MiB", "--nodes", "2"],
    ["iteration", "--model", "gpt2", "--nodes", "2", "--micro-batch", "8"],
    ["plan", "--model", "gpt2", "--nodes", "2", "--global-batch", "64"],
    ["sweep", "all-reduce", "--nodes", "1,2", "--sizes", "1MiB,64MiB"],
])
def test_every_cluster_command_accepts_it(profile, args):
    result = runner.invoke(app, [*args, "--cluster", str(profile)])
    assert result.exit_code == 0, result.output


def test_plot_accepts_it(profile, tmp_path):
    out = tmp_path / "sweep.html"
    result = runner.invoke(app, ["plot", "sweep", "all-reduce", "--cluster", str(profile), "--nodes", "2",
                                 "--max-size", "32MiB", "-o", str(out)])
    assert result.exit_code == 0, result.output and out.exists()


def test_collective_json_says_measured(profile):
    result = runner.invoke(app, ["collective", "all-reduce", "--cluster", str(profile), "--nodes", "2",
                                 "--size", "1MiB", "--json"])
    assert json.loads(result.stdout)["source"] == "measured"


def test_node_count_extrapolation_meets_its_goal():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from extrapolation import evaluate

    results = evaluate()
    assert len(results) >= 8
    median = sorted(r["median_error"] for r in results)[len(results) // 2]
    assert median <= 0.15, results


def test_recipe_lines_parse_as_nccl_tests_invocations():
    lines = recipe_lines(hardware.load_system("dgx-h100"), 4)
    commands = [line for line in lines if line.startswith(("./build", "NCCL_ALGO", "mpirun"))]
    assert len(commands) >= 3 * 8
    seen_nodes = set()
    for line in commands:
        words = shlex.split(line.split(" > ")[0])
        binary = next(w for w in words if w.startswith("./build/"))
        assert binary.removeprefix("./build/") in BINARIES.values()
        flags = dict(zip(words[words.index(binary) + 1::2], words[words.index(binary) + 2::2], strict=True))
        assert set(flags) == {"-b", "-e", "-f", "-g"} and re.fullmatch(r"\d+[KMG]?", flags["-b"])
        assert re.fullmatch(r"\d+[KMG]?", flags["-e"]) and float(flags["-f"]) > 1
        if words[0] == "mpirun":
            ranks, per_node = int(words[words.index("-np") + 1]), int(words[words.index("-N") + 1])
            assert flags["-g"] == "1" and per_node == 8 and ranks % 8 == 0
            seen_nodes.add(ranks // 8)
        else:
            assert flags["-g"] == "8"
        assert algorithm_of(line.split(" > ")[1]) in ("auto", "ring", "tree", "nvls", "nvls_tree")
    assert seen_nodes == {2, 4}
    assert any(line.startswith("dpcost calibrate") and "--system dgx-h100" in line for line in lines)


def test_recipe_through_the_cli():
    result = runner.invoke(app, ["calibrate", "--recipe", "--cluster", "dgx-h100", "--nodes", "2"])
    assert result.exit_code == 0 and "all_reduce_perf" in result.stdout
    assert runner.invoke(app, ["calibrate", "--recipe"]).exit_code == 2


def test_the_algorithm_a_log_ran_is_read_from_its_info_line_or_name():
    assert algorithm_of("x.log", "NCCL INFO NCCL_ALGO set by environment to Ring") == "ring"
    assert algorithm_of("ar_2n_tree.log") == "tree"
    assert algorithm_of("ar_2n_nvlstree.log") == "nvls_tree"
    assert algorithm_of("all_reduce.log") == "auto"


def test_a_profile_calibrated_on_a_user_system_carries_its_own_links(tmp_path):
    """The base system came from a file with its own link (lab-roce-100): the written profile
    defines it too, else the file names a link no one defines and --cluster refuses it."""
    lab = Path(__file__).resolve().parents[1] / "data" / "hardware" / "my_cluster.toml"
    out = tmp_path / "lab-calibrated.toml"
    result = runner.invoke(app, ["calibrate", LOGS[0], "--system", str(lab), "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert 'name = "lab-roce-100"' in text and 'name = "pcie4"' not in text  # bundled ones by name only
    system = hardware.load_system(str(out))
    assert system.nic_link == hardware.load_system(str(lab)).nic_link and system.measured
    answer = runner.invoke(app, ["collective", "all-reduce", "--cluster", str(out), "--nodes", "2", "--size", "1MiB"])
    assert answer.exit_code == 0, answer.output


def test_the_fits_own_notes_reach_the_user(tmp_path):
    """A fit's notes (here: two message sizes, so the line passes through both and its error is
    unknown) are printed by --system as by a link calibration, not only the notes of reading."""
    two = tmp_path / "two_sizes.txt"
    two.write_text("".join(Path(LOGS[0]).read_text(encoding="utf-8").splitlines(keepends=True)[-2:]),
                   encoding="utf-8")
    link = runner.invoke(app, ["calibrate", str(two), "--json"])
    assert link.exit_code == 0, link.output
    expected = [n for n in json.loads(link.output)["notes"] if n.startswith("two message sizes")]
    assert expected
    for args in ([], ["--json"]):
        result = runner.invoke(app, ["calibrate", str(two), "--system", "a100-abci-8x",
                                     "-o", str(tmp_path / "out.toml"), *args])
        assert result.exit_code == 0, result.output
        notes = json.loads(result.output)["notes"] if args else result.output
        assert all(n in notes for n in expected), result.output


def test_one_byte_past_a_curves_reach_costs_what_the_curve_says(profile):
    """A curve answers up to twice its largest measured size; one byte past that the model,
    scaled by the curve's measured/model ratio, takes over. The ratio was taken at the largest
    measured size, so one byte more made the call 14 % faster (3,885 -> 3,339 µs); it is now
    taken where the curve stops answering."""
    system = hardware.load_system(str(profile))
    curve = next(c for c in system.measured if c.collective == "all-reduce" and c.nodes == 2)
    edge = curve.covered_bytes[1]
    at, past = (predict("all-reduce", size, cluster=str(profile), nodes=2) for size in (edge, edge + 1))
    assert at.source == "measured" and past.source == "model"
    assert past.time_s == pytest.approx(at.time_s, rel=1e-6)


def test_a_curve_is_answered_or_refused_never_silently_unused(profile, tmp_path):
    """A [[system.measured]] collective was compared as written: "allreduce" validated "ok" and
    was then never used. Any accepted spelling now answers; an unknown one, or a second curve of
    the same collective, algorithm and layout, is refused by validate and by a query."""
    text = profile.read_text(encoding="utf-8")
    alias = tmp_path / "alias.toml"
    alias.write_text(text.replace('collective = "all-reduce"', 'collective = "allreduce"'), encoding="utf-8")
    assert runner.invoke(app, ["hardware", "validate", str(alias)]).exit_code == 0
    assert predict("all-reduce", "1MiB", cluster=str(alias), nodes=2).source == "measured"
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('collective = "all-reduce"', 'collective = "allreducex"'), encoding="utf-8")
    checked = runner.invoke(app, ["hardware", "validate", str(bad)])
    assert checked.exit_code == 2 and "system.measured[0].collective" in checked.stderr
    query = runner.invoke(app, ["collective", "all-reduce", "--cluster", str(bad), "--nodes", "2", "--size", "1MiB"])
    assert query.exit_code == 2 and len(query.stderr.strip().splitlines()) == 1
    first = text.index("[[system.measured]]")
    second = text.index("[[system.measured]]", first + 1)
    twice = tmp_path / "twice.toml"
    twice.write_text(text[:second] + text[first:second] + text[second:], encoding="utf-8")
    checked = runner.invoke(app, ["hardware", "validate", str(twice)])
    assert checked.exit_code == 2 and "a second curve" in checked.stderr


def test_an_error_that_cannot_be_cross_validated_is_called_in_sample(tmp_path):
    two = tmp_path / "two_sizes.txt"
    two.write_text("".join(Path(LOGS[0]).read_text(encoding="utf-8").splitlines(keepends=True)[-2:]),
                   encoding="utf-8")
    result = runner.invoke(app, ["calibrate", str(two), "--system", "a100-abci-8x", "-o", str(tmp_path / "o.toml")])
    assert result.exit_code == 0 and "in-sample" in result.output and "cross-validated" not in result.output


def test_a_bad_row_names_its_file(tmp_path):
    lines = Path(LOGS[0]).read_text(encoding="utf-8").splitlines(keepends=True)
    lines[4] = lines[4].replace("17.42", "abc")
    bad = tmp_path / "bad.txt"
    bad.write_text("".join(lines), encoding="utf-8")
    result = runner.invoke(app, ["calibrate", LOGS[1], str(bad)])
    assert result.exit_code == 2 and result.stderr.startswith(f"error: {bad} line 5 column time_oop")


def test_the_nccl_model_views_say_they_are_not_the_measured_curves(profile, tmp_path):
    """nccl-table --size and an NCCL-model chart drew the model on a calibrated profile with no word
    (2.1x off the curve at 32 MiB)."""
    table = runner.invoke(app, ["nccl-table", "--cluster", str(profile), "--nodes", "2", "--size", "32MiB"])
    assert table.exit_code == 0 and "not this profile's measured curves" in table.output
    chart = tmp_path / "s.html"
    drawn = runner.invoke(app, ["plot", "sweep", "all-reduce", "--cluster", str(profile), "--nodes", "2",
                                "-o", str(chart)])
    assert drawn.exit_code == 0 and "not this profile" in chart.read_text(encoding="utf-8")
    ranked = runner.invoke(app, ["compare", "all-reduce", "--cluster", str(profile), "--nodes", "2", "--size", "32MiB"])
    assert "RCCL" not in ranked.output
    assert ranked.exit_code == 0 and "* = NCCL's own choice" in ranked.output


def test_an_amd_clusters_recipe_builds_rccl_tests():
    """AMD GPUs run RCCL: the recipe told them to build NVIDIA's nccl-tests."""
    amd = recipe_lines(hardware.load_system("mi300x-8x"), 2)
    assert amd[1] == "# build once:  git clone https://github.com/ROCm/rccl-tests && make -C rccl-tests MPI=1"
    assert amd[2] == "cd rccl-tests" and not any("NVLS" in line for line in amd)
    assert recipe_lines(hardware.load_system("dgx-h100"), 2)[2] == "cd nccl-tests"


def test_backend_ideal_on_a_calibrated_cluster_is_the_textbook_model(profile):
    """`--backend ideal` on a calibrated profile answered the measured curve ("source measured") or
    the ideal model scaled by a measured ratio (review, 2026-11-28): the textbook model asked for
    is the base system's, with a note; unset, the curves answer as before."""
    from costmodel.cluster.backends import IDEAL_SKIPS_MEASURED
    from costmodel.planner.recommend import plan

    base = "a100-abci-8x"
    for size in (1e6, 3e7):
        ideal = predict("all-reduce", size, cluster=str(profile), nodes=2, backend="ideal")
        textbook = predict("all-reduce", size, cluster=base, nodes=2, backend="ideal")
        assert ideal.time_s == textbook.time_s and IDEAL_SKIPS_MEASURED in ideal.note
        assert predict("all-reduce", size, cluster=str(profile), nodes=2).source == "measured"
    kwargs = dict(nodes=2, global_batch=64, backend="ideal")
    calibrated = plan("gpt2", str(profile), **kwargs)
    assert calibrated.best.total_s == plan("gpt2", base, **kwargs).best.total_s
    assert calibrated.findings["measured_left_out"] == IDEAL_SKIPS_MEASURED
    assert f"Note: {IDEAL_SKIPS_MEASURED}." in calibrated.reason
    assert plan("gpt2", str(profile), nodes=2, global_batch=64).findings["measured_left_out"] is None
    # without the explanation there is no reason to add the note to (it raised a KeyError)
    quiet = plan("gpt2", str(profile), explain=False, **kwargs)
    assert quiet.reason == "" and quiet.best.total_s == calibrated.best.total_s
    args = ["iteration", "--model", "gpt2", "--cluster", str(profile), "--nodes", "2", "--micro-batch", "4"]
    noted = runner.invoke(app, [*args, "--backend", "ideal", "--json"])
    assert noted.exit_code == 0 and json.loads(noted.stdout)["note"] == IDEAL_SKIPS_MEASURED
    assert json.loads(runner.invoke(app, [*args, "--json"]).stdout)["note"] is None


def test_another_librarys_stack_is_not_answered_by_the_clusters_curve(profile):
    """`--stack gloo` on a calibrated NVIDIA cluster was answered by the NCCL curve (source measured,
    NCCL's time): the curves are NCCL's, so gloo is timed on the model, and the note says why."""
    gloo = predict("all-reduce", 3e7, cluster=str(profile), nodes=2, stack="gloo")
    assert gloo.source == "model" and "measured curves (nccl's) are left out with --stack gloo" in gloo.note
    assert gloo.time_s == predict("all-reduce", 3e7, cluster="a100-abci-8x", nodes=2, stack="gloo").time_s


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="no FIFOs here")
def test_a_log_from_a_pipe_is_read_once(tmp_path):
    """`calibrate <(cat log) --system ...` failed with "an empty file": the log's head (its NCCL INFO
    lines) was read a second time, and a pipe gives its bytes once (review, 2026-11-28)."""
    import os
    import threading

    fifo = tmp_path / "log.pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(Path(LOGS[1]).read_text()))
    writer.start()
    out = tmp_path / "piped.toml"
    result = runner.invoke(app, ["calibrate", str(fifo), "--system", "a100-abci-8x", "-o", str(out)])
    writer.join(timeout=30)
    assert result.exit_code == 0, result.output
    direct = tmp_path / "direct.toml"
    assert runner.invoke(app, ["calibrate", LOGS[1], "--system", "a100-abci-8x", "-o", str(direct)]).exit_code == 0
    piped, plain = hardware.load_system(str(out)).measured, hardware.load_system(str(direct)).measured
    assert [c.time_s(1e6) for c in piped] == [c.time_s(1e6) for c in plain]


def test_a_log_from_another_gpu_is_noted(tmp_path):
    """An H100 log calibrated as an MI300X cluster was taken without a word (review,
    2026-11-29): the GPU model the log's rank lines name is checked against the system's GPU."""
    from typer.testing import CliRunner

    from cli import app
    from costmodel.calibrate.cluster_profile import gpu_mismatch_note
    from costmodel.calibrate.parse import parse_file
    from hardware import load_system

    raw = Path(__file__).resolve().parents[1] / "data" / "calibration" / "raw" / "abci_a_1n.txt"
    lines = raw.read_text(encoding="utf-8").splitlines()
    ranks = [f"#  Rank  {r} Group  0 Pid  {100 + r} on node1 device  {r} [0x{r:02x}] NVIDIA A100-SXM4-40GB"
             for r in range(8)]
    log_path = tmp_path / "a100.txt"
    log_path.write_text("\n".join(lines[:1] + ranks + lines[1:]) + "\n", encoding="utf-8")
    log = parse_file(log_path)
    assert log.gpu_model == "NVIDIA A100-SXM4-40GB"
    assert gpu_mismatch_note(log, load_system("a100-abci-8x")) is None
    note = gpu_mismatch_note(log, load_system("mi300x-8x"))
    assert note and "ran on NVIDIA A100-SXM4-40GB, but mi300x-8x's GPU is mi300x" in note
    result = CliRunner().invoke(app, ["calibrate", str(log_path), "--system", "mi300x-8x", "-o", str(tmp_path / "c.toml")])
    assert result.exit_code == 0 and "describe another GPU's cluster" in result.output


def test_extrapolation_keeps_a_measured_efficiency_to_its_own_algorithm(profile):
    """Fitted on 1 and 2 nodes, where NCCL's model runs a ring at 16 MiB, the ratio was applied at 16
    nodes, where it runs a tree: 3.116 ms against 1.341 ms measured, the bundled profile's 1.757 ms
    nearer (review, 2026-11-30). Another algorithm's answer is the model's own, and says why."""
    far = predict("all-reduce", 2**24, cluster=str(profile), nodes=16)
    bare = predict("all-reduce", 2**24, cluster="a100-abci-8x", nodes=16)
    assert far.algorithm != "ring" and far.time_s == pytest.approx(bare.time_s, rel=1e-12)
    assert far.source == "model" and "2-node layout's calibrated curves ran ring" in far.note
    near = predict("all-reduce", 2**25, cluster=str(profile), nodes=4)  # a ring there too: still scaled
    plain = predict("all-reduce", 2**25, cluster="a100-abci-8x", nodes=4)
    assert near.algorithm == plain.algorithm == "ring" and "scaled" in near.note and near.time_s != plain.time_s


def test_a_collective_is_taught_by_its_own_curves(tmp_path):
    """GB300 calibrated on all-reduce logs, then with all-to-all logs added: the all-to-all curves
    moved the scaled all-reduce at 16 trays from 18.96 to 20.02 ms (measured 18.84 ms)."""
    paths = {}
    for name, logs in (("ar", ["gb300_ar_1n.txt", "gb300_ar_2n.txt"]),
                       ("both", ["gb300_ar_1n.txt", "gb300_ar_2n.txt", "gb300_a2a_1n.txt", "gb300_a2a_2n.txt"])):
        paths[name] = tmp_path / f"{name}.toml"
        result = runner.invoke(app, ["calibrate", *[str(RAW / log) for log in logs], "--system", "gb300-nvl72-tray",
                                     "-o", str(paths[name])])
        assert result.exit_code == 0, result.output
    alone, both = (predict("all-reduce", 8 * 2**30, cluster=str(paths[k]), nodes=16) for k in ("ar", "both"))
    assert both.time_s == pytest.approx(alone.time_s, rel=1e-12) and "scaled" in alone.note
