"""A chunk count the message cannot split into, and absurd server counts, are refused.

``--chunks 1e12`` on a 64 MiB broadcast was answered with 10^12 α steps (1.9e6 s): chunks of
under one byte. Auto chunking already stops at one 4-byte element per chunk
(``MIN_CHUNK_BYTES``); a given count is now held to the same limit, refused as not applicable so
that a ranking or a sweep leaves that size out. Dedicated parameter servers are machines: at
most ``MAX_RANKS`` of them.
"""

from __future__ import annotations

import numpy as np
import pytest

import costmodel
from costmodel.collectives.evaluate import MIN_CHUNK_BYTES, evaluate_grid, max_chunks
from dpbase.errors import InputError, NotApplicableError
from dpbase.limits import MAX_RANKS

LINK = dict(alpha_s=5e-6, bandwidth_Bps=25e9)


def test_the_most_chunks_is_one_element_each_and_at_least_one():
    assert max_chunks(64 * 2**20) == 64 * 2**20 // MIN_CHUNK_BYTES == 16_777_216  # 4-byte elements
    assert max_chunks(7) == 1
    assert max_chunks(0) == 1


@pytest.mark.parametrize("algorithm", ["pipelined-chain", "parameter-server"])
def test_a_given_count_up_to_the_limit_is_answered_and_above_it_refused(algorithm):
    size = 4096
    most = size // MIN_CHUNK_BYTES
    primitive = "broadcast" if algorithm == "pipelined-chain" else "all-reduce"
    at_limit = costmodel.predict(primitive, size, algorithm, ranks=8, chunks=most, **LINK)
    assert at_limit.params["chunks"] == most
    with pytest.raises(NotApplicableError, match=rf"^chunks: got {most + 1}; allowed: at most {most} for a 4 KiB"):
        costmodel.predict(primitive, size, algorithm, ranks=8, chunks=most + 1, **LINK)


def test_the_cli_names_the_limit_in_one_line(cli_error):
    line = cli_error(["collective", "broadcast", "--cluster", "dgx-h100", "--algorithm", "pipelined-chain",
                      "--chunks", "1000000000000", "--size", "64MiB"])
    assert line == ("error: chunks: got 1000000000000; allowed: at most 16777216 for a 64 MiB message "
                    "(a chunk holds at least one 4-byte element)")


def test_auto_chunks_never_pass_the_limit():
    small = costmodel.predict("broadcast", 64, "pipelined-chain", ranks=8, alpha_s=0.0, bandwidth_Bps=1e9)
    assert small.params["chunks"] == 16  # α = 0: as many as the message holds, no more


def test_the_grid_holds_a_given_count_to_its_smallest_size():
    ok = evaluate_grid("broadcast", "pipelined-chain", 8, np.array([4096.0, 1e6]), 1e-6, 1e9, chunks=1024)
    assert ok["time_s"].shape == (2,)
    with pytest.raises(NotApplicableError, match="^chunks: got 1025; allowed: at most 1024 for a 4 KiB"):
        evaluate_grid("broadcast", "pipelined-chain", 8, np.array([4096.0, 1e6]), 1e-6, 1e9, chunks=1025)


def test_dedicated_servers_are_at_most_max_ranks_machines():
    costmodel.predict("all-reduce", 1e9, "parameter-server", ranks=8, servers=16, **LINK)  # more servers than ranks: fine
    with pytest.raises(InputError, match=rf"^servers: got {MAX_RANKS + 1}; allowed: at most {MAX_RANKS} machines$"):
        costmodel.predict("all-reduce", 1e9, "parameter-server", ranks=8, servers=MAX_RANKS + 1, **LINK)


def test_symbolic_formulas_keep_their_parameters_symbolic():
    text = str(costmodel.formula("all-reduce", "parameter-server"))
    assert "S" in text and "k" in text
