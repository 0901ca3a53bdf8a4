"""Bad input anywhere in the CLI: one ``error: …`` line naming the field, exit code 2, never a traceback.

Run through the console-script entry point (``cli.main``) in a fresh process, as a user meets
it, so click's own usage errors are covered too.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RAW = ROOT / "tests" / "data" / "calibration" / "raw"

CASES = [  # (arguments, a word the message must contain)
    ("plan --model llama2-7b --cluster dgx-h100 --global-batch 0", "global_batch"),
    ("plan --model llama2-7b --cluster dgx-h100 --global-batch 7 --nodes 4 --min-gpus 8", "batch"),
    ("plan --model nosuch --cluster dgx-h100 --global-batch 64", "model"),
    ("plan --model llama2-7b --cluster dgx-h100 --global-batch 64 --objective speed", "--objective"),
    ("plan --model llama2-7b --cluster dgx-h100 --global-batch 64 --objective time-to-train", "tokens"),
    ("plan --model llama2-7b --cluster dgx-h100 --global-batch 64 --buckets 5XB", "buckets"),
    ("plan --model llama2-7b --cluster dgx-h100 --global-batch 64 --grad-dtypes fp7", "grad_dtypes"),
    ("plan --model llama2-7b --cluster {bad_toml} --global-batch 64", "TOML"),
    ("plan --model llama2-7b --cluster dgx-h100 --global-batch 64 --nodes -1", "nodes"),
    ("iteration --model gpt2 --cluster dgx-h100 --micro-batch 0", "micro_batch"),
    ("iteration --model gpt2 --cluster dgx-h100 --micro-batch 4 --mfu 1.5", "mfu"),
    ("iteration --model gpt2 --cluster dgx-h100 --micro-batch 4 --zero 5", "zero"),
    ("iteration --model gpt2 --cluster dgx-h100 --micro-batch 4 --algorithm quantum", "algorithm"),
    ("iteration --model gpt2 --cluster dgx-h100 --micro-batch 4 --grad-dtype fp7", "grad_dtype"),
    ("iteration --model gpt2 --cluster dgx-h100 --micro-batch 4 --jitter -1", "jitter"),
    ("calibrate {garbage}", "line 1"),
    ("calibrate {empty}", "empty"),
    ("calibrate {missing}", "allowed: a readable nccl-tests log (No such file"),
    ("calibrate {abci} --collective smash", "collective"),
    ("hardware show nosuch", "profile"),
    ("hardware validate {bad_toml}", "TOML"),
    ("hardware list --kind cpu", "--kind"),
    ("nccl-table --cluster dgx-h100 --nccl-version 9.9", "version"),
    ("nccl-table --cluster dgx-h100 --tuning {bad_toml}", "tuning"),
    ("collective all-reduce --cluster dgx-h100 --size 1GB --backend magic", "backend"),
    ("collective all-reduce --cluster dgx-h100 --size 1GB --nodes 0", "nodes"),
    ("collective all-reduce --ranks 4 --size 1MB --alpha 1us --bandwidth 1GB/s --gamma -1ns", "gamma"),
    ("plot sweep all-reduce -o {out}", "hardware"),
    ("plot schedule all-reduce ring --ranks 0 -o {out}", "ranks"),
    ("plot scaling all-reduce --rank-counts 2,x --size 1MB --alpha 1us --bandwidth 1GB/s -o {out}", "rank"),
    ("compare all-reduce --size 1MB", "hardware"),
    ("plan --model llama2-7b --cluster mi300x-8x --nodes 2 --global-batch 16 --seq-len 2048 --backend nccl", "RCCL"),
    ("iteration --model resnet-50 --cluster dgx-a100 --micro-batch 8 --recompute", "recompute"),
    ("--nosuchflag", "--nosuchflag"),
    ("collective", "PRIMITIVE"),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bad")
    (folder / "bad.toml").write_text("not = [toml\n", encoding="utf-8")
    (folder / "garbage.txt").write_text("garbage line\nmore garbage\n", encoding="utf-8")
    (folder / "empty.txt").write_text("", encoding="utf-8")
    return {"bad_toml": folder / "bad.toml", "garbage": folder / "garbage.txt", "empty": folder / "empty.txt",
            "missing": folder / "missing.txt", "abci": RAW / "abci_a_2n.txt", "out": folder / "chart.html"}


@pytest.mark.parametrize("arguments,word", CASES, ids=[c[0].split(" {")[0][:60] for c in CASES])
def test_one_line_error_and_exit_2(arguments, word, files):
    args = shlex.split(arguments.format(**{k: str(v) for k, v in files.items()}))
    done = subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-2000:]
    assert word.lower() in lines[0].lower()
    assert "Traceback" not in done.stderr


def test_output_piped_into_head_stops_quietly():
    done = subprocess.run(f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'cli.py'))} hardware list | head -1",
                          shell=True, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.stdout.strip() and done.stderr == ""
