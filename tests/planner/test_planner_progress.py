"""plan(progress=...) reports (done, total) a few dozen times, ending at done == total."""

from __future__ import annotations

import pytest

from costmodel.planner.recommend import plan


@pytest.mark.parametrize("explain", [True, False])
def test_progress_advances_to_total(explain):
    calls = []
    plan("1.3B", "dgx-h100", nodes=4, global_batch=64, explain=explain,
         progress=lambda done, total: calls.append((done, total)))
    totals = {total for _, total in calls}
    assert len(totals) == 1
    total = totals.pop()
    done = [d for d, _ in calls]
    assert done[0] == 0 and done[-1] == total
    assert done == sorted(done) and all(0 <= d <= total for d in done)
    assert 3 <= len(calls) <= 50


def test_progress_reaches_total_when_recomputation_is_needed():
    calls = []
    plan("llama2-70b", "dgx-h100", nodes=64, global_batch=1024, seq_len=4096, explain=False,
         progress=lambda done, total: calls.append((done, total)))
    assert calls[-1][0] == calls[-1][1] and len(calls) <= 50
