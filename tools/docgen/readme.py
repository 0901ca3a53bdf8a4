"""The README's examples: one per subcommand, each with the output dpcost really prints.

``python -m tools.docgen.readme README.md`` runs every command (in a scratch directory
that sees the repository's ``tests/`` data) and rewrites the text between
``<!-- examples:begin -->`` and ``<!-- examples:end -->``; ``tests/docs/test_docs_fresh.py`` runs
them again and fails if the README shows anything dpcost no longer prints. Long outputs are
cut after a number of lines, marked ``…``.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BEGIN, END = "<!-- examples:begin -->", "<!-- examples:end -->"

# (text before the example, command, lines of output shown or None for all)
EXAMPLES: list[tuple[str, str, int | None]] = [
    ("Plan a run (the main job): algorithm, micro-batch, accumulation steps, GPUs, bucket, gradient "
     "dtype and ZeRO stage, with the reason, a ranked table and the sensitivity to bandwidth, latency and MFU:",
     "dpcost plan --model llama2-7b --cluster dgx-h100 --nodes 4 --global-batch 512 --seq-len 4096", 16),
    ("Where one training step's time goes, and whether it fits in memory. The \"published runs\" line says how sure the "
     "answer is: where published data-parallel runs of the same class landed against the model, predicted out "
     "of sample (docs/validation.md); a throughput you measured (`--rate \"1200 img/s\"`, on `--rate-gpus` "
     "GPUs) narrows it:",
     "dpcost iteration --model llama2-7b --cluster dgx-h100 --nodes 4 --micro-batch 1 --seq-len 4096 --accum 4 --zero 1",
     None),
    ("The practised ZeRO variants, in `iteration` and swept by `plan`: hybrid sharding (`--shard hybrid`, "
     "FSDP HYBRID_SHARD / MiCS) and ZeRO++ hpZ (`--shard hpz`), optimizer CPU offload (`--offload-optimizer`), "
     "the ZeRO-1/2 parameter gather overlapped with forward (`--overlap-param-gather`), ZeRO++ quantised "
     "communication (`--quantize-weights/--quantize-grads`), parameter servers (`--servers`, `--async`); and the "
     "framework's synchronisation (`--sync`: DDP buckets with ZeRO as DeepSpeed runs it, FSDP's per-block "
     "collectives, Horovod's tensor fusion, a flat or a per-tensor all-reduce; in `iteration` alone, `--sync-each-micro-batch` for "
     "accumulation without DDP's `no_sync`):",
     "dpcost iteration --model llama2-7b --cluster dgx-h100 --nodes 16 --micro-batch 2 --seq-len 4096 --accum 4 "
     "--zero 3 --shard hybrid", 8),
    ("One collective (the seeds' example: ring all-reduce of 4 GB on 8 GPUs sends 7 GB per GPU in 14 steps):",
     "dpcost collective all-reduce --algorithm ring --ranks 8 --size 4GB --alpha 5us --bandwidth 25GB/s", None),
    ("Every algorithm ranked, with the lower bound:",
     "dpcost compare all-reduce --ranks 64 --size 1MB --alpha 5us --bandwidth 25GB/s", None),
    ("The formula itself (`--latex` for LaTeX, `--json` for everything):",
     "dpcost formula all-reduce ring", 6),
    ("On a bundled cluster: the algorithm is mapped onto the topology and the bottleneck link named:",
     "dpcost collective all-reduce --cluster dgx-a100 --nodes 2 --size 1GB --algorithm ring", None),
    ("NCCL's own tuning model (`--backend nccl`): every NCCL algorithm with its best protocol, NCCL's choice marked:",
     "dpcost compare all-reduce --cluster dgx-h100 --nodes 2 --size 1GB --backend nccl", None),
    ("A sweep over sizes, clusters and node counts as one table (`--format csv|json`, `-o FILE`; "
     "`costmodel.sweep` returns it as a pandas DataFrame):",
     "dpcost sweep all-reduce --cluster dgx-h100,dgx-a100 --nodes 1,2 --sizes 1MiB,1GiB", None),
    ("NCCL's tuning table for a cluster, as `NCCL_DEBUG=TUNING` prints it:",
     "dpcost nccl-table --cluster dgx-h100 --nodes 2 --size 256MiB", 12),
    ("Bundled hardware profiles, and your own as TOML (accepted wherever a name is). The examples\n"
     "below that read `tests/data/…` run from a clone of this repository, where those files are\n"
     "(`tests/` is not installed with the package); with your own files, pass their paths:",
     "dpcost hardware list --kind system", 8),
    (None, "dpcost hardware show dgx-h100", 10),
    (None, "dpcost hardware validate tests/data/hardware/my_cluster.toml", None),
    ("Calibrate from your own nccl-tests output, then predict with the fitted profile:",
     "dpcost calibrate tests/data/calibration/raw/abci_a_2n.txt -o mycluster.toml", None),
    (None, "dpcost collective all-reduce --link mycluster.toml --ranks 16 --size 256MB --algorithm ring", 6),
    ("Or calibrate a whole cluster once (`dpcost calibrate --recipe --cluster SYSTEM --nodes N` prints the "
     "nccl-tests runs to make) and plan on it: measured curves answer where they cover the query "
     "(`source: measured`), the realistic model scaled by them elsewhere:",
     "dpcost calibrate tests/data/calibration/raw/abci_a_1n.txt tests/data/calibration/raw/abci_a_2n.txt "
     "--system a100-abci-8x -o abci.toml", None),
    (None, "dpcost plan --model gpt2 --cluster abci.toml --nodes 2 --global-batch 256", 4),
    ("Interactive charts (self-contained offline HTML; `dpcost plot --help` lists all six):",
     "dpcost plot sweep all-reduce --cluster dgx-a100 --nodes 2 --max-size 32MiB -o sweep.html", None),
    (None, "dpcost plot schedule all-reduce ring --ranks 4 -o ring.html", None),
]


def _shown(output: str, lines: int | None) -> str:
    kept = output.splitlines()
    if lines is None or len(kept) <= lines:
        return output
    return "\n".join([*kept[:lines], "…"])


def render() -> str:
    """The README's examples section (without the markers)."""
    from tools.docgen.tutorial import run  # one way to run a documented command

    out: list[str] = []
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:
        (Path(scratch) / "tests").symlink_to(ROOT / "tests", target_is_directory=True)
        os.chdir(scratch)
        try:
            for text, command, lines in EXAMPLES:
                block = ["```console", f"$ {command}", _shown(run(command), lines), "```", ""]
                out += ([text, ""] if text else []) + block
        finally:
            os.chdir(here)
    return "\n".join(out).rstrip() + "\n"


def replace_section(text: str, body: str) -> str:
    if BEGIN not in text or END not in text:
        raise SystemExit(f"error: no {BEGIN} … {END} section")
    head, rest = text.split(BEGIN, 1)
    return f"{head}{BEGIN}\n{body}{END}{rest.split(END, 1)[1]}"


def section_of(text: str) -> str:
    return text.split(BEGIN, 1)[1].split(END, 1)[0].lstrip("\n")


if __name__ == "__main__":
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "README.md"
    path.write_text(replace_section(path.read_text(encoding="utf-8"), render()), encoding="utf-8")
    print(f"wrote {path}")
