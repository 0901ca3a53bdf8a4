"""Open an HTML file in headless Chromium: console errors, rendered DOM and a screenshot check."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--window-size=1200,800", "--virtual-time-budget=5000")


@dataclass(frozen=True)
class PageResult:
    dom: str
    console_errors: list[str]
    distinct_colours: int


def available() -> bool:
    return CHROMIUM.exists()


def _run(html: Path, extra: list[str], profile: str) -> subprocess.CompletedProcess:
    cmd = [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *extra, html.resolve().as_uri()]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def png_colours(path: Path) -> int:
    """Distinct RGB(A) pixel values of an 8-bit PNG (stdlib zlib; filters undone row by row)."""
    data = path.read_bytes()
    pos, idat, width, height, channels = 8, b"", 0, 0, 4
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = int.from_bytes(body[:4], "big"), int.from_bytes(body[4:8], "big")
            channels = {2: 3, 6: 4}[body[9]]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride = zlib.decompress(idat), width * channels
    prev, seen = bytearray(stride), set()
    for y in range(height):
        kind, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = row[x - channels] if x >= channels else 0
            b, c = prev[x], prev[x - channels] if x >= channels else 0
            if kind == 1:
                row[x] = (row[x] + a) & 255
            elif kind == 2:
                row[x] = (row[x] + b) & 255
            elif kind == 3:
                row[x] = (row[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[x] = (row[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        seen.update(bytes(row[i:i + channels]) for i in range(0, stride, channels * 7))
        prev = row
    return len(seen)


def open_page(html: Path, screenshot: Path) -> PageResult:
    """Load the page once: DOM dump, console log on stderr and a screenshot."""
    profile = tempfile.mkdtemp(prefix="dpcost-chromium-")
    try:
        run = _run(html, ["--dump-dom", f"--screenshot={screenshot}", "--enable-logging=stderr", "--v=0"], profile)
        errors = [line for line in run.stderr.splitlines() if "CONSOLE" in line and ("ERROR" in line or "Uncaught" in line)]
        return PageResult(run.stdout, errors, png_colours(screenshot))
    finally:
        shutil.rmtree(profile, ignore_errors=True)
