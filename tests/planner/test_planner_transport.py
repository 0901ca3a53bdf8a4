"""The planner charges hidden communication as iteration does on every transport: NCCL over TCP
sockets hides nothing across nodes (training.transport), RDMA and one node keep the slowdown."""

from __future__ import annotations

import pytest

from costmodel.planner.recommend import plan
from costmodel.training.oncluster import iteration


@pytest.mark.parametrize("system", ["l40s-tcp-1x", "dgx-h100"])
def test_plan_rows_equal_iteration_on_tcp_and_rdma(system):
    result = plan("gpt2", system, nodes=2, global_batch=16, tie_band=0.0)
    rows = [r for r in result.candidates if r.gpus > 1][:4]
    assert rows
    for row in rows:
        step = iteration("gpt2", system, nodes=row.nodes, gpus_per_node=row.gpus_per_node, algorithm=row.algorithm,
                         micro_batch=row.micro_batch, accumulation_steps=row.accumulation_steps,
                         bucket_bytes=row.bucket_bytes, grad_dtype=row.grad_dtype, zero_stage=row.zero_stage)
        assert row.total_s == pytest.approx(step.total_s, rel=1e-9)
        if row.nodes > 1 and system == "l40s-tcp-1x":
            assert step.transport == "tcp" and step.overlap_slowdown == 1.0
