"""The planner's one-page HTML report opens in headless Chromium without console errors."""

import re

import browser
import pytest
from typer.testing import CliRunner

from cli import app

pytestmark = pytest.mark.skipif(not browser.available(), reason="needs /usr/bin/chromium (installed by .ci/run)")


def test_plan_report_renders_every_section(tmp_path):
    html = tmp_path / "report.html"
    result = CliRunner().invoke(app, ["plan", "--model", "llama2-7b", "--cluster", "dgx-h100", "--nodes", "4",
                                      "--global-batch", "512", "--seq-len", "4096", "--html", str(html)])
    assert result.exit_code == 0, result.output
    text = html.read_text(encoding="utf-8")
    assert "<script" in text and not re.search(r"<script[^>]*\bsrc=", text)  # plotly.js inlined
    for section in ("Recommended:", "Ranked alternatives", "Step time of the ranked plans",
                    "Memory per GPU", "Sensitivity", "time per call"):
        assert section in text
    page = browser.open_page(html, tmp_path / "report.png")
    assert page.console_errors == []
    assert page.dom.count('class="main-svg"') >= 5
    assert page.distinct_colours > 20
