"""evaluate_grid checks its inputs as predict checks a scalar's, and broadcasts all of them
(review, 2026-11-29: a None α or bandwidth and a 1e-310 B/s link answered NaN, α = 1e30 s
answered 1.4e31 s, "5" was read as 5 s, an array γ or inter-node rate crashed with numpy's
ValueError); one rank's bandwidths are None in predict, NaN in the grid (predict gave inf and
NaN, which json.dumps wrote as invalid JSON)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import costmodel
from dpbase.errors import InputError


@pytest.mark.parametrize("args, field", [
    ((8, 1e9, None, 25e9), "alpha_s"), ((8, 1e9, 5e-6, None), "bandwidth_Bps"),
    ((8, 1e9, 5e-6, 1e-310), "bandwidth_Bps"), ((8, 1e9, 1e30, 25e9), "alpha_s"),
    ((8, 1e9, "5", 25e9), "alpha_s"), (("8", 1e9, 5e-6, 25e9), "ranks"), ((8, "1e9", 5e-6, 25e9), "size_bytes"),
    ((np.array([2, 8]), np.array([1e6, 2e6, 3e6]), 5e-6, 25e9), "shapes")])
def test_a_bad_grid_input_is_one_input_error(args, field):
    with pytest.raises(InputError, match=f"^{field}: got"):
        costmodel.evaluate_grid("all-reduce", "ring", *args)


def test_every_rate_broadcasts_and_answers_as_predict():
    gammas = np.array([0.0, 1e-10])
    grid = costmodel.evaluate_grid("all-reduce", "ring", 8, 1e6, 5e-6, 25e9, gammas)
    for gamma, seconds in zip(gammas, grid["time_s"], strict=True):
        one = costmodel.predict("all-reduce", 1e6, "ring", ranks=8, alpha_s=5e-6, bandwidth_Bps=25e9,
                                gamma_s_per_byte=float(gamma))
        assert seconds == pytest.approx(one.time_s, rel=1e-12)
    inter = costmodel.evaluate_grid("all-reduce", "hierarchical", 16, 1e6, 5e-6, 25e9, 0.0, 1e-5,
                                    np.array([12.5e9, 25e9]), gpus_per_node=8)
    assert inter["time_s"].shape == (2,) and inter["time_s"][0] > inter["time_s"][1]


def test_one_rank_moves_nothing_and_says_so():
    one = costmodel.predict("all-reduce", 1e6, "ring", ranks=1, alpha_s=5e-6, bandwidth_Bps=25e9)
    assert one.time_s == 0.0 and one.algbw_Bps is None and one.busbw_Bps is None
    json.loads(json.dumps(one.to_dict()), parse_constant=lambda name: pytest.fail(name))  # strict JSON
    grid = costmodel.evaluate_grid("all-reduce", "ring", np.array([1, 8]), 1e6, 5e-6, 25e9)
    assert np.isnan(grid["algbw_Bps"][0]) and np.isnan(grid["busbw_Bps"][0]) and grid["busbw_Bps"][1] > 0


def test_compare_on_a_bare_link_ranks_what_auto_chooses_from():
    """A bare link has no reducing switch: compare leaves in-network out unless asked, so its
    first row is predict's auto (it ranked in-network first: review, 2026-11-29)."""
    link = dict(ranks=64, size_bytes=1e6, alpha_s=5e-6, bandwidth_Bps=25e9)
    ranked = costmodel.compare("all-reduce", **link)
    assert "in-network" not in [q.algorithm for q in ranked]
    assert ranked[0].algorithm == costmodel.predict("all-reduce", **link).algorithm
    assert costmodel.compare("all-reduce", include_in_network=True, **link)[0].algorithm == "in-network"
