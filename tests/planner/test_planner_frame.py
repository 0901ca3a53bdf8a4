"""A plan converts to a DataFrame: the ranked alternatives, the recommendation first (issue 16)."""

from __future__ import annotations

from costmodel.planner.recommend import plan


def test_plan_to_frame_lists_the_ranked_candidates():
    p = plan("llama2-7b", "dgx-h100", nodes=2, global_batch=64, seq_len=2048)
    frame = p.to_frame()
    assert len(frame) == len(p.candidates) and list(frame["rank"]) == list(range(1, len(p.candidates) + 1))
    assert frame.loc[0, "recommended"] and frame["recommended"].sum() == 1
    assert frame.loc[0, "total_s"] == p.best.total_s
