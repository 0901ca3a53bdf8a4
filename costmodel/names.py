"""Names of collective primitives and algorithms, and nccl-tests' size and busbw conventions.

``n`` follows nccl-tests' "size" (doc/PERFORMANCE.md, src/*.cu): the per-rank buffer for
all-reduce, broadcast, reduce and send-recv; the full (gathered/scattered) buffer for
all-gather, reduce-scatter, all-to-all, gather and scatter. busbw = algbw × factor.
"""

from __future__ import annotations

from enum import Enum
from typing import TypeVar

from dpbase.errors import InputError, UnknownNameError

E = TypeVar("E", bound=Enum)


class Primitive(str, Enum):
    BROADCAST = "broadcast"
    SCATTER = "scatter"
    GATHER = "gather"
    REDUCE = "reduce"
    ALL_REDUCE = "all-reduce"
    ALL_GATHER = "all-gather"
    REDUCE_SCATTER = "reduce-scatter"
    ALL_TO_ALL = "all-to-all"
    SEND_RECV = "send-recv"


# The primitives that combine the ranks' data (a reduction operator applies, γ is paid).
REDUCING_PRIMITIVES = frozenset({Primitive.REDUCE, Primitive.ALL_REDUCE, Primitive.REDUCE_SCATTER})


def check_reduction_time(primitive, gamma_s_per_byte: float, field: str, given=None) -> None:
    """Refuse a reduction time γ > 0 for a primitive that reduces nothing: it would be taken and
    dropped (CLI and API audits, 2026-12-01). ``given``: the value as typed, for the message."""
    if gamma_s_per_byte > 0:
        name = primitive_named(primitive)
        if name not in REDUCING_PRIMITIVES:
            raise InputError(field, gamma_s_per_byte if given is None else given,
                             f"0 (the default): {name.value} reduces nothing")


class Algorithm(str, Enum):
    RING = "ring"
    DOUBLE_BINARY_TREE = "double-binary-tree"
    RECURSIVE_DOUBLING = "recursive-doubling"
    RABENSEIFNER = "rabenseifner"
    BINOMIAL = "binomial"
    PARAMETER_SERVER = "parameter-server"
    DIRECT = "direct"
    TWO_SHOT = "two-shot"
    IN_NETWORK = "in-network"
    HIERARCHICAL = "hierarchical"
    BRUCK = "bruck"
    RECURSIVE_HALVING = "recursive-halving"
    PAIRWISE = "pairwise"
    SCATTER_ALLGATHER = "scatter-allgather"
    PIPELINED_CHAIN = "pipelined-chain"
    LINEAR = "linear"
    GATHER_BROADCAST = "gather-broadcast"


class Backend(str, Enum):
    """How a collective's time is computed.

    ``ideal``: the textbook α-β-γ model (every algorithm, link efficiencies from the profiles);
    ``nccl``: NCCL's own tuning model and choice, plus the nccl-tests layer;
    ``rccl``: RCCL's algorithms (ring, tree) on the α-β mapping with the profiles' measured
    efficiencies — RCCL's own tuning constants are not modelled yet.
    """

    IDEAL = "ideal"
    NCCL = "nccl"
    RCCL = "rccl"


# What a one-GPU plan row names as its algorithm (planner.rank), and comm_model takes there: no
# collective runs.
NO_ALGORITHM = "none"

# The backends that model a real library (its algorithms and protocols, its measured behaviour),
# as against the textbook bound.
REALISTIC_BACKENDS = (Backend.NCCL.value, Backend.RCCL.value)


def enum_named(kind: type[E], field: str, name: str | E) -> E:
    """The member of a str enum for a user's name (case-insensitive); one error line otherwise."""
    if isinstance(name, kind):
        return name
    try:
        return kind(str(name).strip().lower())
    except ValueError:
        raise UnknownNameError(field, name, [member.value for member in kind]) from None


def backend_named(name: str | Backend) -> Backend:
    """The Backend for a user's name; one error line naming the allowed values otherwise (with
    ``auto``, which every backend option takes and resolves before asking here)."""
    try:
        return enum_named(Backend, "backend", name)
    except UnknownNameError:
        raise UnknownNameError("backend", name, ["auto", *(member.value for member in Backend)]) from None


def backend_or_auto(name: "str | Backend | None") -> "Backend | None":
    """None for ``auto`` (any case, or None: resolved later against the system), else the Backend
    (:func:`backend_named`'s error for an unknown name)."""
    if name is None or (isinstance(name, str) and not isinstance(name, Backend) and name.strip().lower() == "auto"):
        return None
    return backend_named(name)


# What n (size_bytes) means per primitive, as nccl-tests prints it.
SIZE_MEANING: dict[Primitive, str] = {
    Primitive.ALL_REDUCE: "per-rank buffer (every rank holds n bytes to be summed)",
    Primitive.BROADCAST: "the root's buffer",
    Primitive.REDUCE: "per-rank buffer (the root ends with the n-byte sum)",
    Primitive.SEND_RECV: "bytes each rank sends to its peer",
    Primitive.ALL_GATHER: "the full gathered buffer (each rank contributes n/N)",
    Primitive.REDUCE_SCATTER: "the full input buffer per rank (each rank ends with n/N)",
    Primitive.ALL_TO_ALL: "the full send buffer per rank (n/N to each peer)",
    Primitive.GATHER: "the full gathered buffer at the root (n/N from each rank)",
    Primitive.SCATTER: "the full buffer at the root (n/N to each rank)",
}


def busbw_factor(primitive: Primitive, ranks: float) -> float:
    """nccl-tests' busbw/algbw factor (PERFORMANCE.md); works on floats and numpy arrays."""
    if primitive is Primitive.ALL_REDUCE:
        return 2 * (ranks - 1) / ranks
    if primitive in (Primitive.ALL_GATHER, Primitive.REDUCE_SCATTER, Primitive.ALL_TO_ALL,
                     Primitive.GATHER, Primitive.SCATTER):
        return (ranks - 1) / ranks
    return 1.0 + 0 * ranks


def primitive_named(name: str | Primitive) -> Primitive:
    """The Primitive for a user's name (accepts nccl-tests spellings like all_reduce)."""
    if isinstance(name, Primitive):
        return name
    key = str(name).strip().lower().replace("_", "-")
    aliases = {"allreduce": "all-reduce", "allgather": "all-gather", "reducescatter": "reduce-scatter",
               "alltoall": "all-to-all", "sendrecv": "send-recv", "bcast": "broadcast"}
    key = aliases.get(key, key)
    try:
        return Primitive(key)
    except ValueError:
        raise UnknownNameError("primitive", name, [p.value for p in Primitive]) from None


def algorithm_named(name: str | Algorithm) -> Algorithm:
    """The Algorithm for a user's name (kebab-case; underscores accepted)."""
    if isinstance(name, Algorithm):
        return name
    key = str(name).strip().lower().replace("_", "-")
    aliases = {"tree": "double-binary-tree", "dbt": "double-binary-tree", "ps": "parameter-server",
               "one-shot": "direct", "nvls": "in-network", "sharp": "in-network",
               # NCCL's other in-network algorithms, as `collective` prints them: the members of
               # costmodel.nccl.names.FAMILIES (not imported: it loads NCCL's model; a test
               # checks the two agree)
               "nvls-tree": "in-network", "nvlstree": "in-network", "collnet": "in-network",
               "collnet-direct": "in-network", "collnet-chain": "in-network",
               "halving-doubling": "rabenseifner", "van-de-geijn": "scatter-allgather",
               "chain": "pipelined-chain"}
    key = aliases.get(key, key)
    try:
        return Algorithm(key)
    except ValueError:
        raise UnknownNameError("algorithm", name, [a.value for a in Algorithm]) from None
