"""Hostile values in every numeric or file option of every command: each run answers with
finite numbers or refuses with one ``error:`` line (exit 2); none raises a traceback.

The planner's own cost limits (``plan --global-batch``/``--nodes``) are another suite's; here
``plan`` gets hostile values only where they are cheap to refuse.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.attack.conftest import safe

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "tests" / "data" / "calibration" / "raw" / "a100_oci_1x8_nccl2265.txt"
HUGE = "1" + "0" * 300
HOSTILE = ["0", "-1", HUGE, "-" + HUGE, "nan", "inf", "1e299", "2.5", "", "\x1b[2J", "1e-320", "0x10", "1_000"]
HW = "--ranks 8 --alpha 5us --bandwidth 25GB/s"

TEMPLATES = [  # one {v} per template: the option under attack
    f"collective all-reduce {HW} --size {{v}}",
    "collective all-reduce --ranks {v} --size 1MB --alpha 5us --bandwidth 25GB/s",
    "collective all-reduce --ranks 8 --size 1MB --alpha {v} --bandwidth 25GB/s",
    "collective all-reduce --ranks 8 --size 1MB --alpha 5us --bandwidth {v}",
    f"collective all-reduce {HW} --size 1MB --gamma {{v}}",
    f"collective all-reduce {HW} --size 1MB -a ring --chunks {{v}}",
    f"collective all-reduce {HW} --size 1MB -a parameter-server --servers {{v}}",
    f"collective all-reduce {HW} --size 1MB -a hierarchical --gpus-per-node 4 --bandwidth-inter {{v}}",
    "collective all-reduce --cluster dgx-h100 --nodes {v} --size 1MB",
    "collective all-reduce --cluster dgx-h100 --size {v} --backend nccl",
    f"compare all-reduce {HW} --size {{v}}",
    "compare all-reduce --ranks {v} --size 1MB --alpha 5us --bandwidth 25GB/s",
    "formula all-reduce ring --ranks {v}",
    "iteration --model gpt2 --cluster dgx-h100 --micro-batch {v}",
    "iteration --model gpt2 --cluster dgx-h100 --micro-batch 1 --nodes {v}",
    "iteration --model gpt2 --cluster dgx-h100 --micro-batch 1 --gpus {v}",
    "iteration --model gpt2 --cluster dgx-h100 --micro-batch 1 --accum {v}",
    "iteration --model gpt2 --cluster dgx-h100 --micro-batch 1 --mfu {v}",
    "iteration --model gpt2 --cluster dgx-h100 --micro-batch 1 --bucket {v}",
    "iteration --model gpt2 --cluster dgx-h100 --micro-batch 1 --seq-len {v}",
    "iteration --model gpt2 --cluster dgx-h100 --micro-batch 1 --jitter {v}",
    "iteration --model {v} --cluster dgx-h100 --micro-batch 1",
    "iteration --model gpt2 --cluster {v} --micro-batch 1",
    "nccl-table --cluster dgx-h100 --nodes {v}",
    "nccl-table --cluster dgx-h100 --gpus-per-node {v}",
    "nccl-table --cluster dgx-h100 --size {v}",
    "nccl-table --cluster dgx-h100 --tuning {v}",
    "calibrate run.log --ranks {v}",
    "calibrate run.log --nodes {v}",
    "calibrate run.log --collective {v}",
    "calibrate run.log --name {v} -o out.toml",
    "calibrate {v}",
    "hardware show {v}",
    "hardware validate {v}",
    f"plot sweep all-reduce {HW} --max-size {{v}} -o x.html",
    f"plot sweep all-reduce {HW} --min-size {{v}} -o x.html",
    "plot sweep all-reduce --ranks {v} --alpha 5us --bandwidth 25GB/s -o x.html",
    f"plot sweep all-reduce {HW} --measured {{v}} -o x.html",
    "plot sweep all-reduce --cluster dgx-h100 --nodes {v} --max-size 1MiB -o x.html",
    "plot scaling all-reduce --size {v} --alpha 5us --bandwidth 25GB/s -o x.html",
    "plot scaling all-reduce --size 1MB --alpha 5us --bandwidth 25GB/s --rank-counts {v} -o x.html",
    "plot best-map all-reduce --alpha 5us --bandwidth 25GB/s --rank-counts 2,{v} --max-size 1MiB -o x.html",
    "plot schedule all-reduce ring --ranks {v} -o x.html",
    "plot schedule all-reduce parameter-server --ranks 4 --servers {v} -o x.html",
    "plot schedule all-reduce ring --ranks 4 --size {v} -o x.html",
    "plot breakdown --model gpt2 --cluster dgx-h100 --micro-batch {v} -o x.html",
    "plot breakdown --model gpt2 --cluster dgx-h100 --micro-batch 1 --nodes {v} -o x.html",
    "plot plan --model gpt2 --cluster dgx-h100 --global-batch 8 --x {v} -o x.html",
    "plan --model gpt2 --cluster dgx-h100 --global-batch 8 --mfu {v}",
]


def _args(template: str, value: str) -> list[str]:
    return [value if part == "{v}" else part.replace("{v}", value) for part in template.split()]


@pytest.fixture
def logs(work):
    (work / "run.log").write_text(LOG.read_text())
    return work


@pytest.mark.parametrize("template", TEMPLATES)
def test_hostile_values_every_command(logs, template):
    for value in HOSTILE:
        safe(_args(template, value))
    assert (logs / "run.log").read_text() == LOG.read_text()


@settings(max_examples=30, deadline=None)
@given(template=st.sampled_from(TEMPLATES), value=st.text(max_size=12))
def test_random_text_every_command(tmp_path_factory, template, value):
    import os

    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "run.log").write_text(LOG.read_text())
    here = os.getcwd()
    os.chdir(folder)
    try:
        safe(_args(template, value))
    finally:
        os.chdir(here)
