"""The symbols of the cost model, declared once (sympy imported only when this module is).

N       ranks                                   n      message size, bytes (nccl-tests' size)
alpha   seconds per message (latency)           beta   seconds per byte (1 / bandwidth)
gamma   seconds per byte reduced                 k      pipeline chunks
S       parameter servers                       G      ranks (GPUs) per node
alpha_inter, beta_inter: the inter-node level of hierarchical algorithms
"""

from __future__ import annotations

import sympy as sp

N = sp.Symbol("N", integer=True, positive=True)
n = sp.Symbol("n", nonnegative=True)
alpha = sp.Symbol("alpha", nonnegative=True)
beta = sp.Symbol("beta", nonnegative=True)
gamma = sp.Symbol("gamma", nonnegative=True)
alpha_inter = sp.Symbol("alpha_inter", nonnegative=True)
beta_inter = sp.Symbol("beta_inter", nonnegative=True)
k = sp.Symbol("k", integer=True, positive=True)
S = sp.Symbol("S", integer=True, positive=True)
G = sp.Symbol("G", integer=True, positive=True)

PARAM_SYMBOLS = {"k": k, "S": S, "G": G}
