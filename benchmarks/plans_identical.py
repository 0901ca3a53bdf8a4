"""Do two installs plan alike? Every speed change to the planner is checked with this script.

Plans ``--count`` seeded random configurations — models, clusters (NVIDIA and AMD, so NCCL,
ideal and RCCL backends), node counts, batches, sequence lengths, backends, objectives, the
table's length, hybrid sharding and optimizer offload — and writes each ``Plan.to_dict()``
(or the error a user would get) as one JSON line. Run it with the old install's interpreter
and ``--write``, then with the new one's and ``--compare``: any plan whose JSON differs is
printed, and the exit code is 1.

    OLD/bin/python benchmarks/plans_identical.py --write /tmp/plans.jsonl
    NEW/bin/python benchmarks/plans_identical.py --compare /tmp/plans.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import sys

MODELS = ("llama2-7b", "gpt2", "llama2-13b", "1.3B", "bert-large", "llama2-70b")
CLUSTERS = ("dgx-h100", "dgx-a100", "mi300x-8x", "dgx-1", "gcp-a3-mega", "rtx4090-8x-pcie")


def cases(count: int, seed: int = 7) -> list[tuple[str, str, dict]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        kwargs: dict = {"global_batch": rng.choice([256, 512, 1024, 96]), "nodes": rng.choice([1, 2, 4, 8, 16]),
                        "seq_len": rng.choice([1024, 2048, 4096])}
        model, cluster = rng.choice(MODELS), rng.choice(CLUSTERS)
        if rng.random() < 0.3:
            kwargs["backend"] = rng.choice(["ideal", "nccl", "auto"])
        if rng.random() < 0.2:
            kwargs |= {"objective": "cost", "tokens": 1e9}
        if rng.random() < 0.2:
            kwargs["top"] = 25
        if rng.random() < 0.15:
            kwargs["shard"] = "hybrid"
        if rng.random() < 0.1:
            kwargs["offload_optimizer"] = True
        out.append((model, cluster, kwargs))
    return out


def planned(model: str, cluster: str, kwargs: dict) -> str:
    from costmodel.planner.recommend import plan
    from dpbase.errors import DpcostError

    try:
        return json.dumps(plan(model, cluster, **kwargs).to_dict(), sort_keys=True, default=str)
    except DpcostError as error:  # the user's answer too
        return json.dumps({"error": f"{type(error).__name__}: {error}"})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", metavar="FILE")
    group.add_argument("--compare", metavar="FILE")
    parser.add_argument("--count", type=int, default=100)
    args = parser.parse_args()
    lines = [planned(*case) for case in cases(args.count)]
    if args.write:
        with open(args.write, "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
        print(f"wrote {len(lines)} plans ({sum('error' in line[:10] for line in lines)} user errors)")
        return 0
    with open(args.compare, encoding="utf-8") as handle:
        old = handle.read().splitlines()
    differ = [i for i, (a, b) in enumerate(zip(old, lines)) if a != b]
    for i in differ[:5]:
        print(f"plan {i} {cases(args.count)[i]} differs:\n  old {old[i][:300]}\n  new {lines[i][:300]}")
    print(f"{len(lines)} plans compared, {len(differ)} differ")
    return 1 if differ or len(old) != len(lines) else 0


if __name__ == "__main__":
    sys.exit(main())
