"""Each chart written by the CLI opens in headless Chromium without errors and renders."""


import browser
import pytest
from typer.testing import CliRunner

from cli import app

pytestmark = pytest.mark.skipif(not browser.available(), reason="needs /usr/bin/chromium (installed by .ci/run)")

CASES = {
    "sweep": ["sweep", "all-reduce", "--cluster", "dgx-h100", "--nodes", "2", "--min-size", "1KiB"],
    "scaling": ["scaling", "all-reduce", "--size", "1GiB", "--alpha", "5us", "--bandwidth", "25GB/s"],
    "best-map": ["best-map", "all-reduce", "--alpha", "5us", "--bandwidth", "25GB/s", "--rank-counts", "2,8,64"],
    "breakdown": ["breakdown", "--model", "gpt2", "--cluster", "dgx-h100", "--nodes", "1", "--nodes", "4",
                  "--micro-batch", "8"],
    "plan": ["plan", "--model", "gpt2", "--cluster", "dgx-h100", "--nodes", "2", "--global-batch", "256"],
    "schedule": ["schedule", "all-reduce", "ring", "--ranks", "4"],
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_chart_renders_in_chromium(kind, tmp_path):
    html = tmp_path / f"{kind}.html"
    result = CliRunner().invoke(app, ["plot", *CASES[kind], "-o", str(html)])
    assert result.exit_code == 0, result.output
    page = browser.open_page(html, tmp_path / f"{kind}.png")
    assert page.console_errors == []
    assert 'class="main-svg"' in page.dom and "plot-container" in page.dom
    assert page.distinct_colours > 20
