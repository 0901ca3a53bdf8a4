"""docs/api-example.ipynb: the Python API as a notebook, with its outputs really computed.

``python -m tools.docgen.notebook docs/api-example.ipynb`` executes every cell in one namespace
and stores each cell's displayed value the way Jupyter would (LaTeX for sympy formulas, HTML
tables for DataFrames, text for the rest), so the notebook renders on GitHub without a kernel.
``tests/docs/test_docs_fresh.py`` executes the cells again and compares the outputs.
"""

from __future__ import annotations

import ast
import json
from typing import Any

CELLS: list[tuple[str, str]] = [  # ("markdown" | "code", source)
    ("markdown", "# dpcost from Python\n\nEverything the CLI does is a function call away. Formulas are "
                 "sympy expressions (they render as LaTeX), predictions are frozen dataclasses, grids are "
                 "numpy arrays and tables are pandas DataFrames."),
    ("code", "import costmodel\nimport hardware\nimport numpy as np\nimport pandas as pd\n"
             'pd.set_option("display.width", 160)\npd.set_option("display.max_columns", 20)'),
    ("markdown", "## A formula, symbolically\n\nThe double binary tree all-reduce: latency grows with "
                 "log2 N, the bandwidth term tends to 2nβ."),
    ("code", 'tree = costmodel.formula("all-reduce", "double-binary-tree")\ntree'),
    ("code", "tree.time"),
    ("markdown", "The same expression evaluated: substitute N, n, α, β (what the CLI computes with floats)."),
    ("code", 'from costmodel.collectives.symbols import N, alpha, beta, gamma, n\n'
             'ring = costmodel.formula("all-reduce", "ring").time\n'
             'float(ring.subs({N: 8, n: 4e9, alpha: 5e-6, beta: 1 / 25e9, gamma: 0}))  # seconds: the seeds\' 280 ms'),
    ("markdown", "## Every algorithm ranked, as a DataFrame"),
    ("code", 'ranked = costmodel.compare("all-reduce", ranks=64, size_bytes=1e6, alpha_s=5e-6, bandwidth_Bps=25e9)\n'
             'pd.DataFrame([p.to_dict() for p in ranked])[\n'
             '    ["algorithm", "time_s", "latency_s", "bandwidth_s", "steps", "bytes_sent_max", "busbw_Bps"]]'),
    ("markdown", "## A whole grid at once (numpy)\n\nbusbw of ring and double binary tree against message "
                 "size on 64 ranks: the tree wins small messages, the ring large ones."),
    ("code", 'sizes = np.logspace(3, 9, 7)\n'
             'pd.DataFrame({name: costmodel.evaluate_grid("all-reduce", name, 64, sizes, 5e-6, 25e9)["busbw_Bps"] / 1e9\n'
             '              for name in ("ring", "double-binary-tree")}, index=sizes.astype(int)).rename_axis("bytes")'),
    ("markdown", "## On a bundled cluster, ideal and NCCL-faithful"),
    ("code", 'from costmodel.cluster import predict_on_cluster\n'
             'on_two_nodes = predict_on_cluster("all-reduce", "ring", "dgx-a100", nodes=2, size_bytes=1e9)\n'
             'on_two_nodes.time_s, on_two_nodes.busbw_Bps, on_two_nodes.bottleneck, on_two_nodes.nodes'),
    ("code", 'from costmodel.nccl import nccl_time, topology_for\n'
             'p = nccl_time("all-reduce", 2**30, topology_for(hardware.load_system("dgx-h100")))\n'
             'p.algorithm, p.protocol, round(p.time_s * 1e3, 3), round(p.busbw_Bps / 1e9, 1)'),
    ("markdown", "## A training step and a plan"),
    ("code", 'from costmodel.cluster import comm_model\n'
             'from costmodel.training.iteration import TrainingConfig, iteration_breakdown\n'
             'from costmodel.training.workloads import load_model\n'
             'comm = comm_model("dgx-h100", nodes=4)\n'
             'step = iteration_breakdown(load_model("llama2-7b"), hardware.load_system("dgx-h100").gpu, comm.time_s,\n'
             '                           comm.ranks, TrainingConfig(micro_batch=1, seq_len=4096, accumulation_steps=4,\n'
             '                                                      zero_stage=1))\n'
             'round(step.total_s, 3), round(step.samples_per_s, 1), step.memory.fits'),
    ("code", 'plan = costmodel.plan("llama2-7b", "dgx-h100", nodes=4, global_batch=512, seq_len=4096, top=5)\n'
             'print(plan.reason.splitlines()[0])\n'
             'pd.DataFrame(plan.to_dict()["candidates"])[\n'
             '    ["algorithm", "gpus", "micro_batch", "accumulation_steps", "zero_stage", "total_s", "samples_per_s"]]'),
]


def _bundle(value: Any) -> dict[str, Any]:
    """What Jupyter shows for ``value``: its rich representations and the plain text."""
    bundle: dict[str, Any] = {"text/plain": repr(value)}
    for method, mime in (("_repr_latex_", "text/latex"), ("_repr_html_", "text/html")):
        render = getattr(value, method, None)
        if callable(render):
            shown = render()
            if shown:
                bundle[mime] = shown
    return bundle


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def execute() -> list[dict[str, Any]]:
    """Run the code cells in one namespace; return the notebook's cells with their outputs."""
    import contextlib
    import io

    namespace: dict[str, Any] = {"__name__": "__notebook__"}
    cells, count = [], 0
    for kind, source in CELLS:
        if kind == "markdown":
            cells.append({"cell_type": "markdown", "metadata": {}, "source": _lines(source)})
            continue
        count += 1
        tree = ast.parse(source)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(tree, f"<cell {count}>", "exec"), namespace)
            value = eval(compile(ast.Expression(last.value), f"<cell {count}>", "eval"), namespace) if last else None
        outputs: list[dict[str, Any]] = []
        if printed.getvalue():
            outputs.append({"output_type": "stream", "name": "stdout", "text": _lines(printed.getvalue())})
        if value is not None:
            data = {mime: _lines(text) for mime, text in _bundle(value).items()}
            outputs.append({"output_type": "execute_result", "execution_count": count, "data": data, "metadata": {}})
        cells.append({"cell_type": "code", "execution_count": count, "metadata": {}, "outputs": outputs,
                      "source": _lines(source)})
    return cells


def render() -> str:
    notebook = {"cells": execute(), "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    from tools.docgen.pages import write_page

    write_page(render())
