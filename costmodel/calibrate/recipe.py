"""What to measure once so that ``dpcost plan`` runs on measured curves: nccl-tests command lines.

The planner's step needs all-reduce (DDP buckets) and reduce-scatter + all-gather (ZeRO/FSDP),
from bucket-sized messages to whole gradients, on every node count it may choose; NCCL's own
choice (no NCCL_ALGO) is what a training job gets, and the forced algorithms (NCCL_ALGO) let
``--algorithm`` and the planner compare them on measured data. nccl-tests conventions: ``-b``/``-e``
the size range, ``-f 2`` doubling, ``-g 1`` one GPU per process under MPI, ``-g G`` one process
for a node (reference/nccl-tests conventions; NVIDIA/nccl-tests README).
"""

from __future__ import annotations

from hardware import System

BINARIES = {"all-reduce": "all_reduce_perf", "reduce-scatter": "reduce_scatter_perf", "all-gather": "all_gather_perf"}
SHORT = {"all-reduce": "ar", "reduce-scatter": "rs", "all-gather": "ag"}
MIN_SIZE, MAX_SIZE = "8", "8G"  # from a latency-bound 8 B to beyond the largest DDP/ZeRO message


def node_counts(nodes: int) -> list[int]:
    """1, 2, 4, … up to ``nodes`` (and ``nodes`` itself): enough to fit and to extrapolate."""
    counts, n = [], 1
    while n < nodes:
        counts.append(n)
        n *= 2
    return counts + [nodes]


def forced_algorithms(system: System, nodes: int, collective: str) -> list[str]:
    """NCCL_ALGO values worth forcing for this collective and layout (besides NCCL's own choice)."""
    if collective != "all-reduce":
        return ["Ring"]
    algos = ["Ring", "Tree"]
    if system.in_network_reduction == "nvls" and system.gpu.compute_capability >= 90:
        algos.append("NVLS" if nodes == 1 else "NVLSTree")
    return algos


def recipe_lines(system: System, nodes: int, hostfile: str = "hosts") -> list[str]:
    """Shell lines (comments and commands) that measure what ``plan`` needs on 1..``nodes`` nodes."""
    g = system.gpus_per_node
    # AMD GPUs run RCCL, measured by rccl-tests (ROCm's port: the same binaries, options and output;
    # RCCL reads NCCL_ALGO too)
    tests, repository = ("rccl-tests", "ROCm/rccl-tests") if system.gpu.vendor == "amd" else \
        ("nccl-tests", "NVIDIA/nccl-tests")
    lines = [f"# {tests} recipe for {system.name}: 1 to {nodes} node(s) x {g} GPU(s), what `dpcost plan` needs",
             f"# build once:  git clone https://github.com/{repository} && make -C {tests} MPI=1",
             f"cd {tests}"]
    logs = []
    for n in node_counts(nodes):
        lines.append(f"# {n} node(s)")
        for collective, binary in BINARIES.items():
            for algo in [None, *forced_algorithms(system, n, collective)]:
                name = f"{SHORT[collective]}_{n}n_{(algo or 'default').lower()}.log"
                env = f"NCCL_ALGO={algo} " if algo else ""
                if n == 1:
                    command = f"{env}./build/{binary} -b {MIN_SIZE} -e {MAX_SIZE} -f 2 -g {g}"
                else:
                    export = f" -x NCCL_ALGO={algo}" if algo else ""
                    command = (f"mpirun -np {n * g} -N {g} --hostfile {hostfile}{export} "
                               f"./build/{binary} -b {MIN_SIZE} -e {MAX_SIZE} -f 2 -g 1")
                lines.append(f"{command} > {name}")
                logs.append(name)
    lines += ["# then, once, from those logs:",
              f"dpcost calibrate {' '.join(logs)} --system {system.name} -o my-cluster.toml",
              f"dpcost plan --model MODEL --cluster my-cluster.toml --nodes {nodes} --global-batch BATCH"]
    return lines
