"""Figures docs/calibration.md and docs/hardware-profiles.md quote from the CLI.

A docs review (2026-11-30) found both stale: recursive doubling on the README's calibrated ABCI
link was still quoted at 201 µs after the hold rule took it to 248.1 µs, and DGX-1's NV1 pair at
19.2 GB/s after the bus bandwidth became 19.4. Each is computed here and looked up in the page
(line breaks read as spaces)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cli import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _page(name: str) -> str:
    return " ".join((ROOT / "docs" / name).read_text(encoding="utf-8").split())


def _json(*args: str) -> dict:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} µs"


def test_recursive_doubling_on_the_readme_calibrated_link(tmp_path):
    link = tmp_path / "abci.toml"
    _json("calibrate", str(ROOT / "tests" / "data" / "calibration" / "raw" / "abci_a_2n.txt"), "--ranks", "16",
          "-o", str(link))
    ring, doubling = (_json("collective", "all-reduce", "-a", algorithm, "--link", str(link), "--ranks", "16",
                            "--size", "1.2MB")["time_s"] for algorithm in ("ring", "recursive-doubling"))
    assert ring < doubling
    assert f"where the measured ring takes {_us(ring)}" in _page("calibration.md")
    assert f"and the hold below to {_us(doubling)}" in _page("calibration.md")


def test_dgx1_nv1_pair_bus_bandwidth():
    found = _json("collective", "all-reduce", "--cluster", "dgx-1", "--gpus-per-node", "2", "--size", "1GB")
    assert f"(1/6: {found['busbw_Bps'] / 1e9:.1f} GB/s predicted in NCCL mode" in _page("hardware-profiles.md")
