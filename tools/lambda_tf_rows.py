"""Lambda Labs' tf_cnn_benchmarks tables as rows of the outside scaling set (source O11).

Lambda's ``lambda-tensorflow-benchmark`` publishes, per GPU type and GPU count in one machine,
the training throughput (``tf-train-throughput-{fp32,fp16}.csv``, images/s of the whole job) and
the batch behind it (``tf-train-bs-{fp32,fp16}.csv``: the per-GPU ``--batch_size`` times the GPU
count). Its ``benchmark.sh`` runs ``tf_cnn_benchmarks.py --optimizer=sgd --variable_update=replicated
--all_reduce_spec=nccl`` on synthetic data (``report.sh`` summarises the ``syn-replicated`` runs),
with ``--use_fp16=True`` for fp16. The four CSVs, as published at commit 080a6b7f, are kept in
``tests/data/dp_scaling/sources/lambda-tf/``; this module turns them into the development set's 30
columns, so that ``outside.csv``'s O11 rows are exactly its output (a test holds that).

Every multi-GPU row with its own one-GPU row becomes a row, that one-GPU row its baseline: the
models with a dpcost preset (every column: Inception v4 has one since 2026-11-29), the GPUs as the CSV names them with the
vendor's product name ("RTX 8000" is the Quadro RTX 8000), and the machine's GPU link only where
the row name states it ("NVLink": bridges between pairs of PCIe cards; else "not stated"), or where
the repository's own log index says what machine ran it: ``tools/log2csv.py`` maps "V100 32GB" and
"8x V100 32GB" to the logs ``Platinum-Tesla_V100-SXM3-32GB_HP16_TF2_2``, whose ``metadata`` lists
sixteen Tesla V100-SXM3-32GB (Lambda's Hyperplane-16: NVSwitch, Lambda's announcement) and
TensorFlow 2.2.0 (until 2026-11-29 these rows named no form factor and were left unread). A zero
(no run) is no row.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

SOURCE_DIR = Path(__file__).resolve().parents[1] / "tests" / "data" / "dp_scaling" / "sources" / "lambda-tf"
COMMIT = "080a6b7fee1c651228f227f52a2bed6ff90579cf"
REPO = "github.com/LambdaColdStorage/lambda-tensorflow-benchmark"
SOURCE_ID = "O11"
OUTSIDE = SOURCE_DIR.parents[1] / "outside.csv"
NOT_STATED = "not stated in the CSV"  # the GPU link of a row whose name says nothing of it

MODELS = {  # CSV column -> (model text, input size as report.sh's model table gives it); no parameter counts stated
    "resnet50": ("ResNet-50 (tf_cnn_benchmarks resnet50, v1)", "224x224"),
    "resnet152": ("ResNet-152 (tf_cnn_benchmarks resnet152, v1)", "224x224"),
    "inception3": ("Inception v3 (tf_cnn_benchmarks inception3)", "299x299"),
    "vgg16": ("VGG16 (tf_cnn_benchmarks vgg16)", "224x224"),
    "alexnet": ("AlexNet (tf_cnn_benchmarks alexnet)", "227x227"),
    "inception4": ("Inception v4 (tf_cnn_benchmarks inception4)", "299x299"),
}
READ_SINCE = ("inception4",)  # a preset since 2026-11-29: its rows follow the others (O0517 on)
FIRST_READ = tuple(column for column in MODELS if column not in READ_SINCE)
# The CSV's GPU names as the products are named (Lambda's workstations and servers).
GPU_NAMES = {"RTX 3080": "GeForce RTX 3080", "RTX 3090": "GeForce RTX 3090", "A100 40GB PCIe": "A100 40GB PCIe",
             "RTX A6000": "RTX A6000", "RTX 2080Ti": "GeForce RTX 2080 Ti", "RTX 8000": "Quadro RTX 8000",
             "V100 32GB": "Tesla V100-SXM3-32GB", "RTX 2080 SUPER MAX-Q": "GeForce RTX 2080 SUPER Max-Q",
             "GTX 1080Ti": "GeForce GTX 1080 Ti", "RTX 2070 MAX-Q": "GeForce RTX 2070 Max-Q",
             "RTX 2080 MAX-Q": "GeForce RTX 2080 Max-Q"}
# The machines the repository's log index names (tools/log2csv.py and each log directory's metadata,
# at COMMIT): the CSV's GPU name -> (GPUs in the machine, its GPU link, the TensorFlow it ran).
MACHINES = {"V100 32GB": (16, "NVSwitch: Lambda Hyperplane-16, 16x Tesla V100-SXM3-32GB, 1 or 8 of them used "
                              "(tools/log2csv.py maps 'V100 32GB' and '8x V100 32GB' to the logs "
                              "Platinum-Tesla_V100-SXM3-32GB_HP16_TF2_2; their metadata lists 16 GPUs)", "2.2.0")}
PRECISIONS = {"fp32": "FP32", "fp16": "FP16 (--use_fp16=True: fp16 compute and, by tf_cnn_benchmarks' "
                                      "default --compact_gradient_transfer, fp16 gradient all-reduce)"}
FRAMEWORK = ("TensorFlow {tensorflow} tf_cnn_benchmarks (Lambda benchmark.sh): --variable_update=replicated "
             "--all_reduce_spec=nccl --optimizer=sgd (one NCCL all-reduce per variable)")
# The development set's 30 columns, as its copy's header names them.
HEADER_OF = SOURCE_DIR.parents[1] / "results.csv"


def _read(name: str) -> dict[str, dict[str, str]]:
    with (SOURCE_DIR / name).open(newline="", encoding="utf-8") as handle:
        return {row["name_gpu"]: row for row in csv.DictReader(handle)}


def _gpu_and_link(name_gpu: str) -> tuple[str, str]:
    """(the GPU as the CSV names it, the machine's GPU link) of a row name such as "4x RTX 8000 NVLink"."""
    words = name_gpu.split(" ", 1)
    gpu = words[1] if words[0].endswith("x") and words[0][:-1].isdigit() else name_gpu
    if gpu.endswith(" NVLink"):
        return gpu.removesuffix(" NVLink"), "PCIe cards with NVLink bridges between pairs (the row name's 'NVLink')"
    return gpu, NOT_STATED


def _first_row_number() -> int:
    """The row number after the publications' before O11 in outside.csv (O1-O10 end at O0226; those
    after it, O12 on, follow its rows)."""
    with OUTSIDE.open(newline="", encoding="utf-8") as handle:
        records = list(csv.DictReader(handle))
    first = next(index for index, row in enumerate(records) if row["source_id"] == SOURCE_ID)
    return 1 + max(int(row["row_id"][1:]) for row in records[:first])


def rows() -> list[dict[str, str]]:
    """O11's rows in the CSV's order, each table's one-GPU baseline written before its first
    multi-GPU row (once, though the PCIe and NVLink rows of a GPU share it)."""
    out = []
    # the columns read first, then those read since (row ids stay where they were: O0227-O0516)
    for columns, precision in [(columns, precision) for columns in (FIRST_READ, READ_SINCE)
                               for precision in ("fp32", "fp16")]:
        throughput, batch = _read(f"tf-train-throughput-{precision}.csv"), _read(f"tf-train-bs-{precision}.csv")
        for column in columns:
            model, image = MODELS[column]
            written = set()  # the GPUs whose baseline is out
            for name_gpu, record in throughput.items():
                gpu, link = _gpu_and_link(name_gpu)
                base = throughput.get(gpu)
                if record["num_gpu"] == "1" or base is None or float(record[column]) == 0 or float(base[column]) == 0:
                    continue
                if gpu not in written:
                    written.add(gpu)
                    out.append(_row(precision, column, model, image, base, gpu, batch[gpu], gpu, base))
                out.append(_row(precision, column, model, image, record, name_gpu, batch[name_gpu], gpu, base, link))
    for number, row in enumerate(out, _first_row_number()):
        row["row_id"] = f"O{number:04d}"
    return out


def _row(precision, column, model, image, record, name_gpu, batch, gpu, base,
         link: str = NOT_STATED) -> dict[str, str]:
    gpus = int(record["num_gpu"])
    total_batch = int(batch[column])
    machine_gpus, machine_link, tensorflow = MACHINES.get(gpu, (gpus, link, "1.15"))
    return {
        "row_id": "", "source_id": SOURCE_ID,
        "source": "Lambda Labs lambda-tensorflow-benchmark (tf_cnn_benchmarks, TensorFlow 1.15; synthetic data)",
        "locator": f"{REPO}@{COMMIT[:10]} tf-train-throughput-{precision}.csv and tf-train-bs-{precision}.csv, "
                   f"row '{name_gpu}', column '{column}'",
        "verification": "machine-read from the source CSVs kept in tests/data/dp_scaling/sources/lambda-tf/ "
                        "(tools/lambda_tf_rows.py; a test holds outside.csv's O11 rows to them)",
        "model": model, "params": "", "seq_len_or_input": image,
        "per_gpu_microbatch": f"{total_batch // gpus} (tf-train-bs: {total_batch} for {gpus} GPU(s))",
        "grad_accum_steps": "1", "global_batch": str(total_batch), "precision": PRECISIONS[precision],
        "gpu_type": f"{GPU_NAMES[gpu]} (CSV: '{gpu}')", "gpus_per_node": str(machine_gpus), "nodes": "1",
        "total_gpus": str(gpus), "intra_node_link": machine_link, "inter_node_network": "n/a (single machine)",
        "framework_comm": FRAMEWORK.format(tensorflow=tensorflow), "dp_style": "synchronous data parallel, one machine",
        "data": "synthetic (benchmark.sh: syn; report.sh summarises syn-replicated)",
        "metric": "images/s (whole job)", "value": record[column], "baseline_gpus": "1",
        "baseline_value": base[column], "scaling_reported": "", "scaling_efficiency_reported": "",
        "scaling_efficiency_derived": "",  # derived by the reader, as for any table that leaves it blank
        "tier": "primary (machine-read CSV)",
        "notes": "" if gpus == 1 else f"baseline: row '{gpu}'",
    }


def to_csv(records: list[dict[str, str]], header: bool = True) -> str:
    buffer = io.StringIO()
    columns = HEADER_OF.read_text(encoding="utf-8").splitlines()[0].split(",")
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    if header:
        writer.writeheader()
    writer.writerows(records)
    return buffer.getvalue()


if __name__ == "__main__":
    print(to_csv(rows(), header=False), end="")
