"""docs/validation.md's prose quotes the coverage tables `benchmarks/dp_scaling.py --write` generates.

The tables are rewritten whenever the model changes; the sentences explaining them were not, and a
docs review (2026-11-30) found them quoting the previous run (540 of 664, 442 of 541, p8.5–p91.5).
Here every pooled figure the prose quotes is read from the generated tables (or the data file the
same run writes) and looked up in the prose, as in docs/iteration-model.md's."""

from __future__ import annotations

import re
from pathlib import Path

from costmodel.training import residuals
from dpbase.bundled import load_bundled

ROOT = Path(__file__).resolve().parents[2]
PAGE_TEXT = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
PAGE = " ".join(PAGE_TEXT.split())
ITERATION = " ".join((ROOT / "docs" / "iteration-model.md").read_text(encoding="utf-8").split())
SHARE = r"(\d+) of (\d+) \((\d+) %\)"
MODES = {"default": "predicted (default MFU)", "measured": "from a measured run (--rate, --mfu)"}


def _section() -> str:
    begin, end = "<!-- dp-scaling-intervals:begin -->", "<!-- dp-scaling-intervals:end -->"
    return PAGE_TEXT[PAGE_TEXT.index(begin):PAGE_TEXT.index(end)]


def _pooled(mode: str) -> list[tuple[str, str, str]]:
    """The pooled row's four shares: left out in turn, p10–p90, the two halves."""
    line = next(line for line in _section().splitlines()
                if line.startswith(f"| {MODES[mode]} | ") and line.count(" of ") == 4)
    return re.findall(SHARE, line)


def _percent(share: tuple[str, str, str]) -> int:
    return int(share[2])


def test_the_pooled_coverage_sentences():
    default, measured = _pooled("default"), _pooled("measured")
    sentence = (f"the intervals hold on {_percent(default[0])} % (default speed, {default[0][0]} of {default[0][1]}) "
                f"and {_percent(measured[0])} % (measured speed, {measured[0][0]} of {measured[0][1]}) of the "
                f"left-out rows")
    assert sentence in PAGE
    assert f"(default speed, {default[0][0]} of {default[0][1]}) and {_percent(measured[0])} % (measured speed, " \
           f"{measured[0][0]} of {measured[0][1]})" in ITERATION
    assert f"The plain p10–p90 held on {_percent(default[1])} % and {_percent(measured[1])} %" in PAGE
    low, high = sorted((_percent(default[1]), _percent(measured[1])))
    span = f"{low}" if low == high else f"{low}–{high}"
    assert f"held on only {span} % of the rows of publications left out" in PAGE
    assert f"The pooled p10–p90 held on only {span} %." in ITERATION
    assert f"alone hold on {_percent(default[2])} % of the later sets'" in PAGE
    assert f"from the later sets alone hold on {_percent(default[3])} % of the development rows" in PAGE
    assert f"Measured speed: {_percent(measured[2])} % and {_percent(measured[3])} %" in PAGE


def test_the_by_publication_and_by_cell_sentences():
    means = {mode: re.search(rf"^\| {re.escape(MODES[mode])} \|.*\| (\d+) % \|$", _section(), re.MULTILINE).group(1)
             for mode in MODES}
    assert (f"they hold on {means['default']} % (default speed) and {means['measured']} % (measured speed) "
            f"of each one's") in PAGE
    cells = [int(share[2]) for share in re.findall(r"\| (?:p[\d.]+–p[\d.]+) \|[^\n]*?\| " + SHARE + r" \|", _section())]
    assert len(cells) == 5
    assert f"the nested check ranges from {min(cells)} % to {max(cells)} %" in PAGE


def test_the_widths_and_the_measured_interval_sentences():
    widths = load_bundled(residuals.DATA_FILE)["calibration"]

    def levels(mode: str) -> str:
        tail = 100 * (1 - widths[mode]) / 2
        return f"p{tail:g}–p{100 - tail:g}"

    assert f"{levels('default')} with the default speed, {levels('measured')} with a measured one" in PAGE
    (node_low, node_high, _), (nodes_low, nodes_high, _) = (residuals.ratio_interval(cls, "measured")
                                                             for cls in ("single-node", "multi-node"))

    def faster(low: float) -> str:
        return f"{round(100 * (1 - low))} % faster"

    def slower(high: float) -> str:
        return f"{round(100 * (high - 1))} % slower"

    assert (f"the step lands {faster(node_low)} to {slower(node_high)} than predicted inside a node, and "
            f"{faster(nodes_low)} to {slower(nodes_high)} across nodes") in PAGE
