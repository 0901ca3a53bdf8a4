"""The sensitivity rows: one sweep over the plan repeated per variant equals a sweep per variant."""

from __future__ import annotations

import numpy as np
import pytest

import hardware
from costmodel.planner import grid, whatif
from costmodel.planner.comm import all_reduce_algorithms
from costmodel.planner.rank import objective_scores
from costmodel.planner.recommend import build_space, training_setting
from costmodel.training.workloads import load_model
from dpbase.values import replace

MIB = 2**20
CASES = [("llama2-7b", "dgx-h100", 4, 512, "nccl", {}), ("gpt2", "dgx-a100", 2, 256, "ideal", {}),
         ("llama2-13b", "dgx-h100", 8, 1024, "nccl", {"shard": "hybrid"}),
         ("1.3B", "dgx-1", 2, 512, "ideal", {"comm_params": (("servers", 2),)}),
         ("bert-large", "mi300x-8x", 2, 256, "rccl", {}), ("llama2-7b", "dgx-b200", 2, 512, "nccl",
                                                            {"quantize": (8, 4)}),
         # what else a sweep reads of the system must be what scaling leaves alone: the host path
         # (optimizer offload) and the transport (NCCL over TCP sockets hides nothing across nodes)
         ("llama2-7b", "dgx-h100", 2, 512, "nccl", {"offload_optimizer": True}),
         ("gpt2", "aws-p2.8xlarge", 2, 64, "ideal", {})]


def _plan(model, cluster, nodes, batch, backend, extra):
    system = hardware.load_system(cluster)
    workload = load_model(model)
    seq_len = min(2048, workload.max_positions or 2048)  # gpt2 and bert-large end at their learned positions
    setting = replace(training_setting(workload, system, seq_len=seq_len, compute_dtype="bf16", mfu=None,
                                       optimizer="adamw", jitter_cv=0.0, backend=backend), **extra)
    algorithms = ("parameter-server",) if "comm_params" in extra else all_reduce_algorithms(system, nodes, backend)
    space = build_space(system, nodes=nodes, global_batch=batch, min_gpus=1, max_gpus=nodes * system.gpus_per_node,
                        algorithms=algorithms, bucket_bytes=(25 * MIB, 400 * MIB), grad_dtypes=("bf16",))
    tables = grid.setting_tables(setting, system, space)
    sweep = grid.sweep(setting, system, space, tables)
    scores = objective_scores(sweep, setting, "throughput", None)
    return system, setting, sweep, tables, scores


def _one_sweep_per_variant(sweep, setting, system, index):
    """The reference: each variant's own sweep of the one configuration, with its own tables."""
    space = whatif.single_space(sweep.space, index)
    base = float(sweep.samples_per_s[index])
    rows = []
    for parameter in whatif.SENSITIVITY_PARAMETERS:
        for factor in whatif.SENSITIVITY_FACTORS:
            varied_setting, varied_system = whatif._variant(parameter, factor, setting, system)
            samples = float(grid.sweep(varied_setting, varied_system, space).samples_per_s.ravel()[0])
            rows.append({"parameter": parameter, "factor": factor, "samples_per_s": samples,
                         "change": samples / base - 1.0})
    return rows


@pytest.mark.parametrize("case", CASES)
def test_sensitivity_equals_a_sweep_per_variant(case):
    system, setting, sweep, tables, scores = _plan(*case)
    finite = np.flatnonzero(np.isfinite(scores.ravel()))
    assert finite.size
    for flat in (int(np.argmin(scores)), int(finite[-1])):
        index = tuple(int(i) for i in np.unravel_index(flat, scores.shape))
        expected = _one_sweep_per_variant(sweep, setting, system, index)
        assert whatif.sensitivity(sweep, setting, system, index, tables) == expected
        assert whatif.sensitivity(sweep, setting, system, index) == expected


def test_link_latency_free_only_where_nccl_answers_every_collective():
    """The flag that lets the latency rows reuse the plan's times: set under NCCL's model, and
    then a latency-scaled system's tables are equal; never set on the α-β (ideal) path."""
    system, setting, sweep, tables, _ = _plan(*CASES[0])
    assert tables.link_latency_free
    scaled = grid.setting_tables(setting, whatif.scaled_system(system, latency=0.5), sweep.space)
    for ours, theirs in zip((*tables.backward, *tables.forward, tables.post_step_s, *tables.after),
                            (*scaled.backward, *scaled.forward, scaled.post_step_s, *scaled.after)):
        assert np.array_equal(ours, theirs)
    for case in CASES[1], CASES[3]:
        assert not _plan(*case)[3].link_latency_free
