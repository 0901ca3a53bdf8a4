"""The seeds tutorial: every worked number of the original notes, as commands and their outputs.

``python -m tools.docgen.tutorial docs/tutorial.md`` runs each command and writes the page; a
test runs them again and compares, so the tutorial's outputs are always what dpcost prints.
"""

from __future__ import annotations

import shlex
from pathlib import Path

STEPS: list[tuple[str, str, str]] = [
    ("Parameter server: 4 GB out, 4 GB back per worker (seed 000)",
     "A 1B-parameter fp32 model has 4 GB of gradients. With a parameter server each worker pushes its "
     "4 GB and pulls 4 GB of updated sums every iteration (8 GB of traffic), while the single server "
     "carries N-fold traffic — the scaling problem the notes describe.",
     "dpcost collective all-reduce --algorithm parameter-server --ranks 8 --size 4GB --alpha 0s --bandwidth 12.5GB/s"),
    ("Ring all-reduce: 2·(N−1)/N·4 GB = 7 GB per GPU (seeds 000, 004)",
     "Each GPU sends and receives 2(N−1) chunks of n/N: 7 GB for 8 GPUs and 4 GB, in 2(N−1) = 14 steps.",
     "dpcost collective all-reduce --algorithm ring --ranks 8 --size 4GB --alpha 5us --bandwidth 25GB/s"),
    ("All-gather: 7 GB received per GPU, 56 GB in total (seed 004)",
     "8 GPUs holding 1 GB each: nccl-tests' size for all-gather is the gathered 8 GB buffer.",
     "dpcost collective all-gather --algorithm ring --ranks 8 --size 8GB --alpha 0s --bandwidth 25GB/s"),
    ("One rank reducing for all: +1.2 s with 2 ranks (seed 002)",
     "300M fp32 parameters = 1.2 GB over a 1 GB/s network with one colocated server (pipelined push/pull). "
     "The note's figures, (N−1)·1.2 s, count the reducer among the N: it keeps its own gradient and "
     "exchanges the others' over its full-duplex link. A dedicated reducer (the note's CPU on a machine "
     "of its own; drop `--colocated`) receives all N: 2.4 s and 12 s.",
     "dpcost collective all-reduce --algorithm parameter-server --colocated --servers 1 --ranks 2 --size 1.2GB --alpha 0s --bandwidth 1GB/s"),
    ("… and +10.8 s with 10 ranks (seed 002)",
     "The time grows linearly with N: (N−1)·n·β.",
     "dpcost collective all-reduce --algorithm parameter-server --colocated --servers 1 --ranks 10 --size 1.2GB --alpha 0s --bandwidth 1GB/s"),
    ("… the linear growth in one table (seed 002)",
     "The same question for every N at once: each added NPU adds 1.2 s at the one that reduces for all.",
     "dpcost sweep all-reduce --algorithm parameter-server --colocated --servers 1 --ranks 2,4,6,8,10 --sizes 1.2GB "
     "--alpha 0s --bandwidth 1GB/s"),
    ("… and per iteration, on the seed's network (seed 002)",
     "The same 1.2 GB of fp32 gradient in a training step, one accelerator per machine on a 1 GB/s network "
     "(docs/examples/seed002-1gbps.toml), with the one rank reducing for all (`--ps-placement colocated "
     "--servers 1`) after backward (`--sync flat`): the step's communication is the seed's 10.8 s at 10 "
     "machines (1.2 s at 2). Its few tens of milliseconds beyond 10.8 s are the pipelined server's chunks "
     "filling and draining its pipeline, each paying the path's few-µs latency; the rest of the step, tens of "
     "milliseconds, is compute, the host overhead and the gradient's copies.",
     "dpcost iteration --model 300M --grad-dtype fp32 --cluster docs/examples/seed002-1gbps.toml --nodes 10 "
     "--micro-batch 1 --algorithm parameter-server --ps-placement colocated --servers 1 --sync flat --backend ideal"),
    ("Naive one-to-one exchange: N(N−1) copies of the whole buffer (seed 000)",
     "Every GPU sends its full gradient to every other GPU: 8·7·4 GB = 224 GB cross the links. The note "
     "counts N(N−1)/2 = 28: the pairs of GPUs, each pair exchanging its two gradients both ways "
     "(28 × 2 × 4 GB = 224 GB).",
     "dpcost collective all-reduce --algorithm direct --ranks 8 --size 4GB --alpha 0s --bandwidth 25GB/s"),
    ("Ring latency grows with N, the double binary tree's with log2 N (seed 000)",
     "At 256 ranks and a small message, compare the steps (α count) of ring and double binary tree.",
     "dpcost compare all-reduce --ranks 256 --size 64KB --alpha 5us --bandwidth 25GB/s"),
    ("… at the same bandwidth term (seed 000)",
     "At 64 KB each algorithm picks the chunk count that minimises its time, so the tree keeps few chunks "
     "and pays more per byte. At 4 GB it pipelines many chunks, and its bandwidth term comes within a few "
     "percent of the ring's: the tree's depth (log2 N) is paid once per pipeline, not per byte. Its α count "
     "now grows with its chunks, which at this size costs little either way.",
     "dpcost compare all-reduce --ranks 256 --size 4GB --alpha 5us --bandwidth 25GB/s"),
    ("Hierarchical all-reduce: inside the node first, then across nodes (seed 000)",
     "Two DGX H100 nodes: intra-node reduce-scatter over NVLink, inter-node all-reduce of 1/8 of the data "
     "over InfiniBand, intra-node all-gather.",
     "dpcost collective all-reduce --algorithm hierarchical --cluster dgx-h100 --nodes 2 --size 1GB"),
    ("… and the notes' own hierarchy: one leader per node (seed 000)",
     "\"Reduce inside the machine, then ring all-reduce between the machines\": each node reduces to one "
     "leader GPU, the leaders all-reduce the whole 1 GB across the nodes over the one NIC a GPU reaches, "
     "and each leader broadcasts the sum inside its node. The network carries 8 times what each rail "
     "carries above, so the step is about 4 times longer.",
     "dpcost collective all-reduce --algorithm hierarchical --leaders --cluster dgx-h100 --nodes 2 --size 1GB"),
    ("… where the hierarchy pays: small messages, most on many nodes (seed 000)",
     "The hierarchy's gain is latency: a flat ring over 256 GPUs takes 2(N−1) = 510 steps, most of them "
     "across the network, while the hierarchical one crosses it in 2(M−1) = 62 steps between 32 nodes. At "
     "64 KB it wins on 2 nodes and by far on 32. At 1 GB the flat ring wins on both: its bandwidth term is "
     "already the network's, and the hierarchy adds two intra-node phases.",
     "dpcost sweep all-reduce --algorithm ring,hierarchical --cluster dgx-a100 --nodes 2,32 --sizes 64KB,1GB "
     "--backend ideal"),
    ("Gradient accumulation amortises synchronisation (seed 003)",
     "One all-reduce per k micro-batches: compare communication per sample with --accum 1 and --accum 8.",
     "dpcost iteration --model gpt2-xl --cluster dgx-a100 --nodes 2 --micro-batch 4 --seq-len 1024 --accum 1"),
    ("… with 8 accumulation steps",
     "Same model and cluster, one synchronisation every 8 micro-batches.",
     "dpcost iteration --model gpt2-xl --cluster dgx-a100 --nodes 2 --micro-batch 4 --seq-len 1024 --accum 8"),
    ("Data parallelism replicates everything: memory (seed 003)",
     "Weights, gradients and Adam states are on every GPU; when they do not fit, dpcost says which ZeRO stage would.",
     "dpcost iteration --model llama2-13b --cluster dgx-a100 --micro-batch 1 --seq-len 4096"),
    ("Synchronous steps wait for the slowest GPU (seeds 001, 002, 003)",
     "With 5 % compute jitter between GPUs, a synchronous step waits for the expected maximum of N.",
     "dpcost iteration --model resnet-50 --cluster dgx-a100 --nodes 4 --micro-batch 64 --jitter 0.05"),
    ("… and one slow GPU sets every step's pace: the barrel effect (seed 002)",
     "A synchronous parameter server with one GPU at half speed (`--slow-node 2`): all 32 wait for it at "
     "every step.",
     "dpcost iteration --model resnet-50 --cluster dgx-a100 --nodes 4 --micro-batch 64 --algorithm parameter-server "
     "--slow-node 2"),
    ("Asynchronous parameter-server updates: no wait, but stale gradients (seeds 002, 003)",
     "The same servers and the same slow GPU, asynchronous: nobody waits for it, it only lands fewer updates, "
     "so the throughput is well above the synchronous step's, as seed 002 says (异步…训练速度会快很多). The "
     "price is staleness: a gradient is on average N − 1 updates late, the slow GPU's more. Asynchrony removes "
     "the wait, not the server's N-fold traffic: NCCL's ring all-reduce with the same slow GPU (add "
     "`--slow-node 2` to the jitter example above) is faster still.",
     "dpcost iteration --model resnet-50 --cluster dgx-a100 --nodes 4 --micro-batch 64 --algorithm parameter-server "
     "--slow-node 2 --async"),
    ("Gradient compression: fp16 and top-k change the bytes (seed 004)",
     "Sending 1 % of the gradients (top-k) cuts the communication volume.",
     "dpcost iteration --model gpt2-xl --cluster l40s-4x-pcie --micro-batch 2 --seq-len 1024 --grad-dtype fp16 --topk 0.01"),
    ("Sharding inside the node, replicating across nodes (hybrid sharding / HSDP)",
     "ZeRO-3 over all 128 GPUs sends every weight gather and gradient reduce-scatter across the network; "
     "hybrid sharding keeps them on NVLink and all-reduces only each node's 1/8 shard across nodes. "
     "Compare the communication line with `--shard full`, and the memory per GPU: 8 ranks share the state, not 128.",
     "dpcost iteration --model llama2-7b --cluster dgx-h100 --nodes 16 --micro-batch 2 --seq-len 4096 --accum 4 "
     "--zero 3 --shard hybrid"),
    ("Keeping the optimizer on the CPU (ZeRO-Offload)",
     "The optimizer states leave the GPU; the step pays the CPU's Adam over the node's host memory "
     "and the copy of the updated weights back over PCIe.",
     "dpcost iteration --model llama2-7b --cluster dgx-h100 --nodes 4 --micro-batch 2 --seq-len 4096 --zero 2 "
     "--offload-optimizer"),
    ("Starting from a run you measured (`--rate`)",
     "NVIDIA's Transformer-XL large trains at 154,950 tokens/s on one DGX-2H (16 V100, AMP, 4 sequences per "
     "GPU; DeepLearningExamples). Given that rate, the model's MFU is solved so that the node's own step "
     "reproduces it, and four nodes are predicted at that speed. Compare the throughput line with NVIDIA's "
     "605,620 tokens/s on four nodes (97.7 % of four times one node); the scaling-efficiency line is against "
     "one GPU.",
     "dpcost iteration --model transformer-xl-large --cluster dgx-2h --nodes 4 --micro-batch 4 --compute-dtype fp16 "
     "--grad-dtype fp16 --rate 154950tok/s --rate-gpus 16"),
]


def run(command: str) -> str:
    """Output of one dpcost command run in-process (as the CLI prints it)."""
    from typer.testing import CliRunner

    from cli import app

    # a repository file the command names (docs/examples/…) is read from the repository, wherever
    # the tutorial is rendered from (the test runs it from any directory)
    root = Path(__file__).resolve().parents[2]
    args = [str(root / arg) if arg.startswith("docs/") and (root / arg).exists() else arg
            for arg in shlex.split(command)[1:]]
    result = CliRunner().invoke(app, args)
    if result.exit_code != 0:
        raise RuntimeError(f"{command!r} failed: {result.output}")
    return result.stdout.rstrip()


def render() -> str:
    out = ["# Tutorial: the seeds' numbers with dpcost\n",
           "Generated by `python -m tools.docgen.tutorial docs/tutorial.md`; `tests/docs/test_docs_fresh.py` runs every "
           "command again and checks the outputs below.\n"]
    for title, text, command in STEPS:
        out += [f"## {title}\n", f"{text}\n", "```console", f"$ {command}", run(command), "```\n"]
    return "\n".join(out)


if __name__ == "__main__":
    from tools.docgen.pages import write_page

    write_page(render())
