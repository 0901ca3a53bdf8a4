"""The console script (``cli:run``) ends its process without the interpreter's teardown, and
keeps everything a normal exit does that anyone can observe: the exit status, every byte of
output, ``atexit`` functions, non-daemon threads, ``sys.exit("message")``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)


def _script(*argv: str, before: str = "") -> str:
    return f"import sys, cli\n{before}\nsys.argv = ['dpcost', *{list(argv)!r}]\ncli.run()\n"


def test_an_answer_is_printed_whole_and_exits_0():
    done = _run(_script("plan", "--model", "gpt2", "--cluster", "dgx-h100", "--global-batch", "64",
                        "--seq-len", "1024", "--json"))
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)  # the whole document arrived through the pipe
    assert plan["best"]["micro_batch"] * plan["best"]["accumulation_steps"] * plan["best"]["gpus"] == 64


def test_a_usage_error_keeps_its_line_and_code_2():
    done = _run(_script("collective", "all-reduce", "--size", "-5"))
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1 and done.stdout == ""


def test_atexit_functions_run_after_the_answer():
    done = _run(_script("formula", "all-reduce", "ring",
                        before="import atexit; atexit.register(lambda: print('atexit ran'))"))
    assert done.returncode == 0, done.stderr
    assert "ring" in done.stdout and done.stdout.rstrip().endswith("atexit ran")


def test_non_daemon_threads_are_joined():
    before = ("import threading, time\n"
              "def late():\n"
              "    time.sleep(0.3)\n"
              "    print('thread done')\n"
              "cli.main = lambda: (threading.Thread(target=late).start(), sys.exit(3))")
    done = _run(_script("formula", before=before))
    assert done.returncode == 3 and done.stdout == "thread done\n"


def test_exit_with_a_message_prints_it_and_exits_1():
    done = _run(_script("formula", before="cli.main = lambda: sys.exit('boom')"))
    assert done.returncode == 1 and done.stderr == "boom\n"


def test_main_exits_the_usual_way():
    """:func:`cli.main` (tests, ``python -c`` callers) raises SystemExit as before: only the
    console script leaves early."""
    done = _run("import sys, cli, atexit\natexit.register(lambda: print('after'))\n"
                "sys.argv = ['dpcost', 'formula', 'all-reduce', 'ring']\n"
                "try:\n    cli.main()\nexcept SystemExit as e:\n    print('code', e.code)\n")
    assert done.returncode == 0 and done.stdout.rstrip().endswith("code 0\nafter")


# An object whose finaliser prints at interpreter teardown: visible only when the exit went
# through Python's usual teardown instead of cli._leave.
FINALISER = "class Late:\n    def __del__(self):\n        print('torn down', flush=True)\nkeep = Late()"


def test_the_interpreters_teardown_is_skipped():
    """What the speed comes from: no module is torn down, so an object's finaliser does not run
    at exit (under `cli.main` it does)."""
    finaliser = FINALISER
    done = _run(_script("formula", "all-reduce", "ring", before=finaliser))
    assert done.returncode == 0 and "torn down" not in done.stdout
    usual = _run(f"import sys, cli\n{finaliser}\nsys.argv = ['dpcost', 'formula', 'all-reduce', 'ring']\n"
                 "try:\n    cli.main()\nexcept SystemExit:\n    pass\n")
    assert "torn down" in usual.stdout


@pytest.mark.parametrize(("closed", "before", "code", "err"), [
    ("stdout", "", 0, ""),                                          # an answer with nowhere to go
    ("stdout", "cli.main = lambda: sys.exit('boom')", 1, "boom\n"),  # the message still reaches stderr
    ("stderr", "", 0, None),
    ("stderr", "cli.main = lambda: sys.exit('boom')", 1, None),
])
def test_a_stream_closed_from_the_start_is_no_error(closed, before, code, err):
    """`dpcost … >&-` or `2>&-`: Python sets the closed stream to None; each exits as Python
    would, without a traceback (both ended in an AttributeError and exit 1)."""
    fd = 1 if closed == "stdout" else 2
    # a finaliser that writes to the stream left open: its line would show a teardown there
    finaliser = f"import os\nclass Late:\n    def __del__(self):\n        os.write({3 - fd}, b'torn down')\nkeep = Late()"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", _script("formula", "all-reduce", "ring",
                                                         before=f"{finaliser}\n{before}")],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300,
                          preexec_fn=lambda: os.close(fd))
    assert done.returncode == code, done.stderr
    # cli._leave ended the run (a crash in it falls through to teardown)
    assert "torn down" not in done.stdout + done.stderr
    if err is not None:
        assert done.stderr == err
    else:  # stderr closed: the answer still reaches stdout whole, the failed run prints nothing there
        assert ("ring" in done.stdout) if code == 0 else done.stdout == ""


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("argv", [("--help",), ("collective", "all-reduce", "--size", "1GB", "-a", "ring", "--ranks", "8",
                                               "--alpha", "5us", "--bandwidth", "100GB/s", "--json"),
                                  ("formula", "all-reduce", "ring"),  # a plain-text answer (it was 'error: file: …', 2)
                                  ("iteration", "--model", "gpt2", "--cluster", "dgx-1", "--micro-batch", "4")])
def test_an_answer_that_cannot_be_written_is_one_line_and_exit_120(argv):
    """stdout on a full disk: one line on stderr, Python's exit status for lost output (120), no
    traceback (it was a traceback and exit 1)."""
    done = _run(_script(*argv, before="sys.stdout = open('/dev/full', 'w')"))
    assert done.returncode == 120, done.stderr
    assert done.stderr.startswith("error: output lost: ") and done.stderr.count("\n") == 1


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_a_usage_error_whose_json_cannot_be_written_keeps_its_line_and_code_2():
    """The --json error object is lost on a full disk, but the error line on stderr and its exit
    code are what the user needs: they stay (a lost write does not overwrite a failure's code)."""
    done = _run(_script("collective", "all-reduce", "--size", "-5", "--json",
                        before="sys.stdout = open('/dev/full', 'w')"))
    assert done.returncode == 2
    assert done.stderr.startswith("error: size: ") and done.stderr.count("\n") == 1
