"""Generate docs/formulas.md from the registry (``python -m tools.docgen.pages``).

A test regenerates the text and compares it with the committed file, so the reference can
never drift from the formulas.
"""

from __future__ import annotations

import sys
from pathlib import Path

from costmodel.collectives.registry import entries
from costmodel.collectives.symbolic import formula, latex
from costmodel.names import SIZE_MEANING

HEADER = """# Formula reference

Generated from the registry by `python -m tools.docgen.pages > docs/formulas.md` — do not edit.
Symbols: $N$ ranks, $n$ bytes (nccl-tests' size, see below), $\\alpha$ s per message,
$\\beta$ s per byte, $\\gamma$ s per byte reduced, $k$ pipeline chunks, $S$ servers,
$G$ GPUs per node; $\\alpha_{inter}, \\beta_{inter}$ the inter-node level. Conventions and the
model's assumptions: [conventions.md](conventions.md). Every formula below is checked against an
executed schedule for N = 1…33, 64, 100, 128 (tests/collectives/test_registry_schedules.py).
"""


def render() -> str:
    out = [HEADER]
    current = None
    for entry in entries():
        if entry.primitive is not current:
            current = entry.primitive
            out.append(f"\n## {current.value}\n\n$n$ = {SIZE_MEANING[current]}.\n")
        f = formula(entry.primitive, entry.algorithm)
        d = f.to_dict()
        out.append(f"### {entry.algorithm.value}\n")
        out.append(f"{entry.summary}.\n")
        out.append(f"$$T = {latex(f.time)}$$\n")
        out.append(f"- α count (steps): ${latex(f.terms['steps'] + f.terms['steps_inter'])}$")
        out.append(f"- bytes sent by the busiest rank: ${latex(f.terms['sent_max'])}$")
        out.append(f"- bytes on all links: ${latex(f.terms['total'])}$")
        out.append(f"- lower bound: ${latex(f.lower_bound)}$")
        out.append(f"- conditions: {'; '.join(entry.conditions) or 'any N ≥ 1'}")
        if entry.params:
            out.append("- parameters: " + "; ".join(f"`{p.name}` (${p.symbol}$, default {p.default}): "
                                                   f"{p.description}" for p in entry.params))
        if d["fixed"]:
            out.append("- shown with: " + ", ".join(f"{k}={v}" for k, v in d["fixed"].items()))
        out.append(f"- source: {entry.source}\n")
    return "\n".join(out)


def write_page(text: str, argv: list[str] | None = None) -> None:
    """A generated page to the path given on the command line, else to stdout (every docs generator)."""
    argv = sys.argv if argv is None else argv
    if len(argv) > 1:
        Path(argv[1]).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def main() -> None:
    write_page(render())


if __name__ == "__main__":
    main()
