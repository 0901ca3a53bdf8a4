"""Names NCCL's model uses: collectives, algorithms (index order), protocols, and aliases.

    >>> normalize_collective("allreduce"), normalize_algorithm("NVLSTree"), normalize_protocol("ll128")
    ('all-reduce', 'nvls_tree', 'LL128')
"""

from __future__ import annotations

import functools

from dpbase.errors import UnknownNameError

COLLECTIVES = ("broadcast", "reduce", "all-gather", "reduce-scatter", "all-reduce")
# NCCL's index order (src/include/plugin/nccl_tuner.h): ties in the argmin go to the first.
ALGORITHMS = ("tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat")
PROTOCOLS = ("LL", "LL128", "Simple")

_ALGOS_BY_COLLECTIVE = {
    "broadcast": ("ring",),
    "reduce": ("ring",),
    "all-gather": ("ring", "pat", "nvls", "collnet_direct"),
    "reduce-scatter": ("ring", "pat", "nvls", "collnet_direct"),
    "all-reduce": ("tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree"),
}


# The formula-registry algorithm each NCCL algorithm mirrors (for its step and byte counts),
# and NCCL's name for a registry algorithm a user forces (NCCL_ALGO). PAT has no mirror.
REGISTRY_MIRROR = {"ring": "ring", "tree": "double-binary-tree", "nvls": "in-network", "nvls_tree": "in-network",
                   "collnet_direct": "in-network", "collnet_chain": "in-network"}
FROM_REGISTRY = {"ring": "ring", "double-binary-tree": "tree", "in-network": "nvls"}
# A registry algorithm NCCL runs as several of its own (NCCL_ALGO takes a list): in-network
# reduction is NVLS inside an NVLink domain, NVLS tree across such nodes, CollNet over SHARP
# switches. Forcing it lets NCCL choose among them, as NCCL_ALGO=NVLS,NVLSTree,CollnetDirect,
# CollnetChain does.
FAMILIES = {"in-network": ("nvls", "nvls_tree", "collnet_direct", "collnet_chain")}
# NCCL_ALGO's spelling of each algorithm (NCCL user guide, "Environment Variables").
NCCL_ALGO_VALUES = {"ring": "Ring", "tree": "Tree", "nvls": "NVLS", "nvls_tree": "NVLSTree",
                    "collnet_direct": "CollnetDirect", "collnet_chain": "CollnetChain", "pat": "PAT"}


def nccl_algo_env(name: str) -> str | None:
    """The NCCL_ALGO value that forces a registry algorithm (``in-network``: its family, a
    list), or None for one NCCL does not run."""
    family = FAMILIES.get(name) or ((FROM_REGISTRY[name],) if name in FROM_REGISTRY else ())
    return ",".join(NCCL_ALGO_VALUES[member] for member in family) or None


def _key(text: str) -> str:
    return text.strip().lower().replace("-", "").replace("_", "").replace(" ", "")


_COLLECTIVE_ALIASES = {_key(c): c for c in COLLECTIVES}
_COLLECTIVE_ALIASES |= {"bcast": "broadcast", "allreduceperf": "all-reduce", "allgatherperf": "all-gather",
                        "reducescatterperf": "reduce-scatter", "broadcastperf": "broadcast", "reduceperf": "reduce"}
_ALGORITHM_ALIASES = {_key(a): a for a in ALGORITHMS} | {"collnet": "collnet_direct"} | {_key(f): f for f in FAMILIES}
_PROTOCOL_ALIASES = {_key(p): p for p in PROTOCOLS}


def _text(field: str, name: object, allowed) -> None:
    """A name that is not text (None, a number) refused as the unknown name it is: it was an
    AttributeError from ``.strip`` (API audit, 2026-11-30)."""
    if not isinstance(name, str):
        raise UnknownNameError(field, name, allowed)


def normalize_collective(name: str) -> str:
    """'allreduce', 'all_reduce', 'all-reduce', 'all_reduce_perf' -> 'all-reduce'."""
    _text("collective", name, COLLECTIVES)
    return _collective(name)


@functools.lru_cache(maxsize=256)
def _collective(name: str) -> str:
    found = _COLLECTIVE_ALIASES.get(_key(name))
    if found is None:
        _refuse_outside_the_model(name)
        raise UnknownNameError("collective", name, COLLECTIVES)
    return found


def _refuse_outside_the_model(name: str) -> None:
    """A collective dpcost knows that NCCL's tuning model lacks (all-to-all, send/recv, gather,
    scatter: NCCL runs them as grouped point-to-point calls) is not applicable here, not an unknown
    name: a sweep over backends leaves its NCCL row out, and the message says what times it (review,
    2026-11-29: sweep(backends=['ideal', 'nccl']) failed whole on all-to-all)."""
    from costmodel.names import Primitive
    from dpbase.errors import NotApplicableError

    primitive = {_key(p.value): p.value for p in Primitive}.get(_key(name))
    if primitive is not None:
        raise NotApplicableError("collective", name, f"one of {', '.join(COLLECTIVES)} for NCCL's tuning model, "
                                 f"which has no {primitive} (NCCL runs it as point-to-point calls): `dpcost "
                                 "collective` with --backend auto or ideal times it on the cluster's links")


def normalize_algorithm(name: str) -> str:
    """An NCCL algorithm name in any case/spelling ('NVLSTree', 'collnet') -> canonical, or 'auto'."""
    _text("algorithm", name, ("auto", *ALGORITHMS, *FAMILIES))
    return _algorithm(name)


@functools.lru_cache(maxsize=256)
def _algorithm(name: str) -> str:
    if _key(name) == "auto":
        return "auto"
    found = _ALGORITHM_ALIASES.get(_key(name))
    if found is None:
        raise UnknownNameError("algorithm", name, ("auto", *ALGORITHMS, *FAMILIES))
    return found


def normalize_protocol(name: str) -> str:
    """'ll', 'LL128', 'simple' -> 'LL', 'LL128', 'Simple', or 'auto'."""
    _text("protocol", name, ("auto", *PROTOCOLS))
    return _protocol(name)


@functools.lru_cache(maxsize=256)
def _protocol(name: str) -> str:
    if _key(name) == "auto":
        return "auto"
    found = _PROTOCOL_ALIASES.get(_key(name))
    if found is None:
        raise UnknownNameError("protocol", name, ("auto", *PROTOCOLS))
    return found


def algorithms_for(collective: str) -> tuple[str, ...]:
    """Algorithms NCCL's model considers for a collective."""
    return _ALGOS_BY_COLLECTIVE[collective]


def n_steps(collective: str, n_ranks: int) -> int:
    """Ring steps: all-reduce 2(n-1); all-gather/reduce-scatter n-1; broadcast/reduce n."""
    if collective == "all-reduce":
        return 2 * (n_ranks - 1)
    return n_ranks - 1 if collective in ("all-gather", "reduce-scatter") else n_ranks


@functools.lru_cache(maxsize=256)
def to_nccl_algorithm(name: str) -> str:
    """NCCL's name for a user's algorithm, given in NCCL's words ('tree', 'NVLSTree') or the
    registry's ('double-binary-tree', 'in-network'); 'auto' stays 'auto'."""
    key = _key(name)
    if key in {_key(f) for f in FAMILIES}:
        return normalize_algorithm(name)
    for registry, nccl in FROM_REGISTRY.items():
        if key == _key(registry):
            return nccl
    return normalize_algorithm(name)
