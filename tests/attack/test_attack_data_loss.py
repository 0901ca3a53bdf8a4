"""Data loss: no output ever replaces an input, and every output is written whole (atomic)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from dpbase.errors import InputError
from dpbase.safeio import check_outputs, write_outputs, write_text_atomic
from tests.attack.conftest import refused, safe

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "tests" / "data" / "calibration" / "raw" / "a100_oci_1x8_nccl2265.txt"
PROFILE = ROOT / "tests" / "data" / "hardware" / "my_cluster.toml"
HW = "--alpha 5us --bandwidth 25GB/s"


@pytest.fixture
def inputs(work):
    shutil.copy(LOG, work / "run.log")
    shutil.copy(PROFILE, work / "in.toml")
    (work / "sub").mkdir()
    return {path.name: path.read_bytes() for path in work.iterdir() if path.is_file()}


OVERWRITES = [  # (command, the input it names as output)
    ("calibrate run.log -o run.log", "run.log"),
    ("calibrate run.log --html run.log", "run.log"),
    ("calibrate run.log -o ./sub/../run.log", "run.log"),
    ("calibrate run.log --html out.x -o out.x", None),
    (f"plot sweep all-reduce --ranks 8 {HW} --measured run.log -o run.log", "run.log"),
    ("plot sweep all-reduce --cluster in.toml -o in.toml", "in.toml"),
    ("plot scaling all-reduce --size 1MB --cluster in.toml -o in.toml", "in.toml"),
    ("plot best-map all-reduce --cluster in.toml -o in.toml", "in.toml"),
    ("plot breakdown --model gpt2 --cluster in.toml --micro-batch 1 -o in.toml", "in.toml"),
    ("plot plan --model gpt2 --cluster in.toml --global-batch 8 -o in.toml", "in.toml"),
]


@pytest.mark.parametrize(("command", "victim"), OVERWRITES)
def test_an_output_naming_an_input_is_refused_and_nothing_is_written(inputs, work, command, victim):
    refused(command, "output" if "--html" not in command or "-o" in command.split("--html")[0] else "html")
    after = {path.name: path.read_bytes() for path in work.iterdir() if path.is_file()}
    assert after == inputs  # the input is intact and no partial output appeared


def test_a_symlink_to_an_input_is_the_input(inputs, work):
    os.symlink(work / "run.log", work / "link.toml")
    refused("calibrate run.log -o link.toml", "output")
    assert (work / "run.log").read_bytes() == inputs["run.log"]


def test_distinct_outputs_are_written(inputs, work):
    result = safe("calibrate run.log -o fit.toml --html fit.html")
    assert result.exit_code == 0
    assert (work / "fit.toml").read_text().startswith("# Written by dpcost calibrate")
    assert "<html>" in (work / "fit.html").read_text()[:200].lower()
    assert (work / "run.log").read_bytes() == inputs["run.log"]


def test_concurrent_writers_leave_one_whole_file(tmp_path):
    target = tmp_path / "same.toml"
    texts = [f"# writer {i}\n" + f"line {i}\n" * 20000 for i in range(6)]
    threads = [threading.Thread(target=write_text_atomic, args=(target, text)) for text in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert target.read_text() in texts  # one writer's whole text, never a mix
    assert [p.name for p in tmp_path.iterdir()] == ["same.toml"]  # no temporary file left behind


def test_a_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "profile.toml"
    target.write_text("old\n")

    def broken(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(InputError, match="No space left on device"):  # one line naming the file, exit 2
        write_text_atomic(target, "new\n" * 1000)
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["profile.toml"]


def test_write_outputs_writes_nothing_when_one_is_refused(tmp_path):
    source = tmp_path / "in.log"
    source.write_text("data")
    with pytest.raises(InputError, match="html"):
        write_outputs({"output": (tmp_path / "a.toml", "x"), "html": (source, "y")}, [source])
    assert not (tmp_path / "a.toml").exists() and source.read_text() == "data"


def test_check_outputs_ignores_missing_inputs_and_none(tmp_path):
    check_outputs({"output": tmp_path / "new.html", "html": None}, [None, "dgx-h100", tmp_path / "absent"])


def test_an_existing_output_keeps_its_permissions(tmp_path):
    target = tmp_path / "p.toml"
    target.write_text("old")
    target.chmod(0o600)
    write_text_atomic(target, "new")
    assert target.read_text() == "new" and (target.stat().st_mode & 0o777) == 0o600


def test_an_output_through_a_symlink_writes_the_file_it_names(tmp_path):
    """`-o link` replaced the link with a file and left the file it named as it was (review,
    2026-11-28): the link is followed, as a shell's `>` follows it."""
    real, link = tmp_path / "real.csv", tmp_path / "link.csv"
    real.write_text("old\n")
    os.symlink(real, link)
    write_text_atomic(link, "new\n")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new\n"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_output_is_written_into_not_replaced(tmp_path):
    """`-o fifo` renamed a file over the FIFO, and its reader got nothing."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    write_text_atomic(fifo, "rows\n")
    reader.join(timeout=10)
    assert got == ["rows\n"]
    assert fifo.exists() and not fifo.is_file()  # still a FIFO


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="no pseudo-terminals here")
def test_a_device_output_stays_a_device():
    """`-o /dev/full` replaced the device with a file (the review ran as root). A pseudo-terminal
    stands in for the device, so a regression cannot replace the machine's own."""
    main, follower = os.openpty()
    try:
        device = os.ttyname(follower)
        before = os.stat(device)
        write_text_atomic(device, "rows\n")
        after = os.stat(device)
        assert (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
        assert os.read(main, 100).replace(b"\r", b"") == b"rows\n"
    finally:
        os.close(main)
        os.close(follower)


CSV_TO_STDOUT = [sys.executable, "-c", "import cli; cli.main()", "sweep", "all-reduce", "--cluster", "dgx-h100",
                 "--sizes", "1MiB", "--format", "csv", "-o", "/dev/stdout"]


@pytest.mark.skipif(not os.path.exists("/dev/stdout"), reason="no /dev/stdout here")
def test_dev_stdout_into_a_pipe_and_appended_to_a_file(tmp_path):
    """`-o /dev/stdout | cat` failed (its resolved path was pipe:[N]), and redirected to a file it
    replaced that file, losing what the shell had written before (review, 2026-11-28)."""
    piped = subprocess.run(CSV_TO_STDOUT, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.startswith("primitive,algorithm,") and piped.stdout.count("\n") == 2
    log = tmp_path / "out.txt"
    log.write_text("before\n")
    with log.open("a") as stream:
        appended = subprocess.run(CSV_TO_STDOUT, cwd=ROOT, stdout=stream, stderr=subprocess.PIPE, text=True,
                                  timeout=120)
    assert appended.returncode == 0, appended.stderr
    assert log.read_text() == "before\n" + piped.stdout


def test_an_output_under_a_file_names_that_file(tmp_path):
    """-o base.log/x.toml said only '(File exists)' (review, 2026-11-29); the file is untouched."""
    base = tmp_path / "base.log"
    base.write_text("kept", encoding="utf-8")
    with pytest.raises(InputError, match=r"allowed: a path in a directory \(.*base.log is a file\)$"):
        write_text_atomic(base / "x.toml", "x")
    assert base.read_text(encoding="utf-8") == "kept"
