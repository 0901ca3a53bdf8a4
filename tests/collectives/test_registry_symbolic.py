"""Symbolic identities: the registry's formulas against the published ones."""

from __future__ import annotations

import random

import numpy as np
import pytest
import sympy as sp

import costmodel
from costmodel.collectives import symbols as s
from costmodel.collectives.evaluate import evaluate_grid, predict_entry
from costmodel.collectives.registry import entries

N, n, a, b, g, k = s.N, s.n, s.alpha, s.beta, s.gamma, s.k


def same(expr, expected, **subs):
    diff = sp.simplify((expr - expected).subs(subs))
    return diff == 0


def at(expr, **values):
    symbols = {"N": N, "n": n, "alpha": a, "beta": b, "gamma": g, "k": k, "S": s.S, "G": s.G}
    return expr.subs({symbols[key]: value for key, value in values.items()})


def test_ring_allreduce_is_thakur_patarasuk_yuan():
    f = costmodel.formula("all-reduce", "ring")
    assert same(f.time, 2 * (N - 1) * a + 2 * (N - 1) / N * n * b + (N - 1) / N * n * g)


@pytest.mark.parametrize("p", [2, 4, 8, 16, 64])
def test_power_of_two_recursive_formulas(p):
    L = int(np.log2(p))
    rd = costmodel.formula("all-reduce", "recursive-doubling").time
    assert sp.simplify(at(rd, N=p) - L * (a + n * b + n * g)) == 0  # MPICH allreduce.c
    rab = costmodel.formula("all-reduce", "rabenseifner").time
    assert sp.simplify(at(rab, N=p) - (2 * L * a + 2 * sp.Rational(p - 1, p) * n * b + sp.Rational(p - 1, p) * n * g)) == 0
    sag = costmodel.formula("broadcast", "scatter-allgather").time
    assert sp.simplify(at(sag, N=p) - ((L + p - 1) * a + 2 * sp.Rational(p - 1, p) * n * b)) == 0  # MPICH bcast.c
    bruck = costmodel.formula("all-to-all", "bruck").time
    assert sp.simplify(at(bruck, N=p) - (L * a + sp.Rational(L, 2) * n * b)) == 0  # Thakur §6: (n/2) lg p β
    rh = costmodel.formula("reduce-scatter", "recursive-halving").time
    assert sp.simplify(at(rh, N=p) - (L * a + sp.Rational(p - 1, p) * n * (b + g))) == 0  # MPICH red_scat.c


@pytest.mark.parametrize("p", [3, 5, 6, 7, 12, 100])
def test_non_power_of_two_rabenseifner_matches_mpich(p):
    L = int(np.floor(np.log2(p)))
    q = 2**L
    rab = costmodel.formula("all-reduce", "rabenseifner").time
    expected = (2 * L + 2) * a + (2 * sp.Rational(q - 1, q) + 2) * n * b + (1 + sp.Rational(q - 1, q)) * n * g
    assert sp.simplify(at(rab, N=p) - expected) == 0  # MPICH allreduce.c, r folded ranks
    red = costmodel.formula("reduce", "rabenseifner").time
    expected = (2 * L + 1) * a + (2 * sp.Rational(q - 1, q) + 1) * n * b + (1 + sp.Rational(q - 1, q)) * n * g
    assert sp.simplify(at(red, N=p) - expected) == 0  # MPICH reduce.c


def test_binomial_and_bruck_for_any_n():
    bcast = costmodel.formula("broadcast", "binomial").time
    assert same(bcast, sp.ceiling(sp.log(N, 2)) * (a + n * b))  # Chan 2007 MST broadcast
    ag = costmodel.formula("all-gather", "bruck").time
    assert same(ag, sp.ceiling(sp.log(N, 2)) * a + (N - 1) / N * n * b)  # Bruck 1997


def test_parameter_server_semantics():
    col = costmodel.formula("all-reduce", "parameter-server", colocated=True)
    ded = costmodel.formula("all-reduce", "parameter-server")
    wire_col = col.terms["wire"]
    assert sp.simplify(sp.limit(at(wire_col, S=1), k, sp.oo) - (N - 1) * n) == 0  # one colocated server
    assert sp.simplify(sp.limit(at(ded.terms["wire"], S=1), k, sp.oo) - N * n) == 0  # N-fold
    assert sp.simplify(at(wire_col, S=N) - 2 * (N - 1) / N * n) == 0  # S = N colocated = ring, any k
    unpipelined = costmodel.formula("all-reduce", "parameter-server", colocated=True, pipelined=False)
    assert sp.simplify(at(unpipelined.terms["wire"], S=1) - 2 * (N - 1) * n) == 0


def test_double_binary_tree_log_latency_and_2n_bandwidth():
    f = costmodel.formula("all-reduce", "double-binary-tree")
    for p in (8, 64, 1024):
        steps = at(f.terms["steps"], N=p, k=1)
        assert steps == 4 * int(np.log2(p))  # grows with log2 N (2 messages per round, up and down)
        assert sp.limit(at(f.terms["wire"], N=p), k, sp.oo) == 2 * n  # bandwidth term → 2nβ


def test_in_network_each_rank_sends_and_receives_n_once():
    f = costmodel.formula("all-reduce", "in-network")
    assert sp.limit(f.terms["wire"], k, sp.oo) == n
    assert f.terms["sent_max"] == n and f.terms["recv_max"] == n


def test_hierarchical_levels():
    f = costmodel.formula("all-reduce", "hierarchical")
    G = s.G
    assert same(f.terms["wire"], 2 * (G - 1) * n / G)
    assert same(f.terms["wire_inter"], 2 * (N / G - 1) * n / N)
    assert same(f.terms["steps_inter"], 2 * (N / G - 1))


def test_hierarchical_leaders_carry_the_whole_buffer_across_nodes():
    """Seed 000's form: one GPU per node on the network with all n bytes, G times what each of
    the G rails carries; the node phases are a reduce and a broadcast (twice the rails' steps);
    with one GPU per node both forms are the flat ring."""
    rails = costmodel.formula("all-reduce", "hierarchical")
    leaders = costmodel.formula("all-reduce", "hierarchical", leaders=True)
    G = s.G
    assert same(leaders.terms["wire_inter"], G * rails.terms["wire_inter"])
    assert same(leaders.terms["steps_inter"], rails.terms["steps_inter"])
    assert same(leaders.terms["wire"], 2 * rails.terms["wire"])
    assert same(leaders.terms["steps"], 2 * rails.terms["steps"])
    assert same(leaders.time.subs(G, 1), rails.time.subs(G, 1))


@pytest.mark.parametrize("entry", list(entries()), ids=lambda e: f"{e.primitive.value}-{e.algorithm.value}")
def test_symbolic_numeric_and_vector_paths_agree(entry):
    """The one formula evaluates to the same number as sympy, floats and numpy."""
    rng = random.Random(entry.algorithm.value + entry.primitive.value)
    f = costmodel.formula(entry.primitive, entry.algorithm)
    for _ in range(3):
        ranks = rng.choice([2, 3, 8, 12, 17, 64])
        size = rng.choice([1e3, 4e6, 3e9])
        alpha, bw, gamma = rng.choice([0, 2e-6]), rng.choice([1e9, 2.5e10]), rng.choice([0, 1e-11])
        given = {"chunks": 4} if entry.pipelined else {}
        if entry.hierarchical:
            ranks, given = 16, {"gpus_per_node": 4}
        values = {N: ranks, n: size, a: alpha, b: 1 / bw, g: gamma, s.k: 4, s.S: 1, s.G: 4,
                  s.alpha_inter: alpha, s.beta_inter: 1 / bw}
        symbolic = float(f.time.subs(values))
        scalar = predict_entry(entry, ranks, size, alpha, bw, gamma, **given).time_s
        vector = evaluate_grid(entry.primitive, entry.algorithm, np.array([ranks]), size, alpha, bw, gamma,
                               **given)["time_s"][0]
        assert symbolic == pytest.approx(scalar, rel=1e-9)
        assert vector == pytest.approx(scalar, rel=1e-9)
