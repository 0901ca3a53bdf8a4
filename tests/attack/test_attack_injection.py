"""Injection: control characters from user files never reach the terminal raw; user text in
chart HTML is escaped (plotly writes ``<`` as ``\\u003c`` inside its JSON)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpbase.errors import InputError
from dpbase.text import printable
from tests.attack.conftest import refused, safe

ROOT = Path(__file__).resolve().parents[2]
PROFILE = ROOT / "tests" / "data" / "hardware" / "my_cluster.toml"
LOG = ROOT / "tests" / "data" / "calibration" / "raw" / "a100_oci_1x8_nccl2265.txt"
EVIL = "\x1b]0;pwned\x07\x1b[2J\x1b[31m\u202e"
SCRIPT = "</script><script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"  # no '/': fits in a file name


def _profile(work: Path, description: str = EVIL, extra: str = "") -> Path:
    text = PROFILE.read_text().replace("Our lab's 100GbE RoCE fabric (measured with ib_write_bw)",
                                       description.replace("\\", "\\\\").replace('"', '\\"')
                                       .replace("\x1b", "\\u001b").replace("\x07", "\\u0007"))
    path = work / "evil.toml"
    path.write_text(text + extra)
    return path


def test_hardware_show_escapes_control_characters_in_values(work):
    _profile(work)
    result = safe("hardware show evil.toml --kind link")
    assert result.exit_code == 0 and "\\x1b]0;pwned\\x07" in result.stdout and "\\u202e" in result.stdout


def test_hardware_validate_escapes_a_control_character_in_a_key(work):
    _profile(work, extra='\n[[gpu]]\n"bad\\u001b[2Jkey" = 1\n')
    result = refused("hardware validate evil.toml", "")
    assert "\\x1b[2J" in result.stderr


def test_errors_escape_a_file_name_with_control_characters(work):
    result = refused(["calibrate", f"missing{EVIL}.log"], "missing")
    assert "\\x1b" in result.stderr


def test_calibrate_echoes_an_output_path_escaped(work):
    shutil.copy(LOG, work / "run.log")
    result = safe(["calibrate", "run.log", "-o", "out\x1b[31m.toml"])
    assert result.exit_code == 0 and "out\\x1b[31m.toml" in result.stdout


@given(st.text(max_size=40))
def test_printable_output_has_no_control_characters(text):
    shown = printable(text)
    assert shown.isprintable()
    assert printable(shown) == shown  # escaping is idempotent on its own output
    if text.isprintable():
        assert shown == text


def test_error_messages_are_one_line_and_escaped():
    error = InputError("field\x1b[2J", "value\n\x07", "allowed")
    assert "\n" not in printable(str(error)) and "\x1b" not in printable(str(error))


def _escaped(html: str, text: str) -> None:
    """``text`` is in the chart, but only escaped."""
    assert text not in html
    assert text.replace("<", "\\u003c").replace(">", "\\u003e") in html or text.replace("<", "&lt;") in html


def test_chart_html_escapes_a_log_file_name_and_log_text(work):
    log = work / f"all_reduce_perf{IMG}.log"
    log.write_text(LOG.read_text() + f"\n# {SCRIPT}\n")
    result = safe(["calibrate", str(log), "--html", "fit.html"])
    assert result.exit_code == 0
    html = (work / "fit.html").read_text()
    assert IMG not in html and SCRIPT not in html


def test_chart_html_escapes_a_measured_log_name(work):
    log = work / f"all_reduce_perf{IMG}.log"
    shutil.copy(LOG, log)
    result = safe(["plot", "sweep", "all-reduce", "--ranks", "8", "--alpha", "5us", "--bandwidth", "25GB/s",
                   "--measured", str(log), "-o", "sweep.html"])
    assert result.exit_code == 0
    assert IMG not in (work / "sweep.html").read_text()


def test_chart_html_escapes_a_profile_description_and_path(work):
    folder = work / IMG
    folder.mkdir()
    profile = _profile(work, description=SCRIPT)
    shutil.move(profile, folder / "evil.toml")
    result = safe(["plot", "sweep", "all-reduce", "--cluster", str(folder / "evil.toml"), "-o", "sweep.html"])
    assert result.exit_code == 0
    html = (work / "sweep.html").read_text()
    _escaped(html, IMG)  # the path is in the title
    assert SCRIPT not in html


@pytest.mark.parametrize("name", ["bad\x1b[2Jname", "My Link"])
def test_calibrate_name_must_be_a_loadable_profile_name(work, name):
    shutil.copy(LOG, work / "run.log")
    refused(["calibrate", "run.log", "--name", name, "-o", "x.toml"], "name")
    assert not (work / "x.toml").exists()
