"""The what-if re-plan on the feasible sub-space answers exactly as on the whole space."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import hardware
from costmodel.planner import choose, explain, grid, whatif
from costmodel.planner.comm import all_reduce_algorithms
from costmodel.planner.rank import Constraints, objective_scores
from costmodel.planner.recommend import build_space, training_setting
from costmodel.training.workloads import load_model

MIB = 2**20
CASES = [("llama2-7b", "dgx-h100", 4, 512, "nccl"), ("gpt2", "dgx-a100", 2, 256, "ideal"),
         ("llama2-70b", "dgx-h100", 8, 1024, "nccl"), ("1.3B", "dgx-1", 2, 512, "ideal"),
         ("bert-large", "dgx-b200", 1, 256, "nccl")]


def _sweep(model, cluster, nodes, batch, backend):
    system = hardware.load_system(cluster)
    setting = training_setting(load_model(model), system, seq_len=2048, compute_dtype="bf16", mfu=None,
                               optimizer="adamw", jitter_cv=0.0, backend=backend)
    space = build_space(system, nodes=nodes, global_batch=batch, min_gpus=1,
                        max_gpus=nodes * system.gpus_per_node,
                        algorithms=all_reduce_algorithms(system, nodes, backend),
                        bucket_bytes=(5 * MIB, 25 * MIB, 400 * MIB), grad_dtypes=("bf16", "fp32"))
    return system, setting, grid.sweep(setting, system, space)


@pytest.mark.parametrize(("case", "factor", "objective"),
                         list(itertools.product(CASES, whatif.WHAT_IF_BANDWIDTH_FACTORS, ("throughput", "cost"))))
def test_sub_space_what_if_equals_the_whole_space(case, factor, objective):
    system, setting, sweep = _sweep(*case)
    constraints = Constraints(tokens=1e11, price_per_gpu_hour=2.0, power_w=700.0)
    scores = objective_scores(sweep, setting, objective, constraints.tokens, constraints)
    assert np.isfinite(scores).any()
    for index in (np.unravel_index(int(np.argmin(scores)), scores.shape),
                  np.unravel_index(int(np.flatnonzero(np.isfinite(scores.ravel()))[-1]), scores.shape)):
        index = tuple(int(i) for i in index)
        subspace = (whatif.feasible_subspace(sweep),
                    float(choose.bytes_sent(sweep, setting.workload.params).max()))
        whole = explain._what_if_once(sweep, setting, system, objective, constraints, index, factor, 0.02)
        part = explain._what_if_once(sweep, setting, system, objective, constraints, index, factor, 0.02,
                                     subspace)
        assert part == whole


@pytest.mark.parametrize("case", CASES)
def test_feasible_sub_space_holds_every_feasible_configuration(case):
    _, _, sweep = _sweep(*case)
    sub, kept = whatif.feasible_subspace(sweep)
    feasible = np.argwhere(np.asarray(sweep.feasible))
    assert len(feasible) and sub.shape <= sweep.space.shape
    assert int(np.prod(sub.shape)) < int(np.prod(sweep.space.shape))  # something was left out
    for index in feasible:
        local = tuple(int(np.searchsorted(axis, i)) for axis, i in zip(kept, index))
        assert tuple(int(axis[i]) for axis, i in zip(kept, local)) == tuple(int(i) for i in index)
        c = local[4]
        assert sub.layouts[int(sub.cell_layout[c])] == sweep.space.layouts[int(sweep.space.cell_layout[index[4]])]
        assert sub.micro_batch[c] == sweep.space.micro_batch[index[4]]
