"""Which algorithms a communication stack can run, and the realistic backend of a system.

``auto`` means "the fastest algorithm the stack would run", never a textbook algorithm no
library implements for the collective. Sources:
- NCCL 2.30 (``src/include/plugin/nccl_tuner.h``, ``src/enqueue.cc``): ring and tree for
  all-reduce, ring for broadcast/reduce (a pipelined chain), ring for all-gather and
  reduce-scatter (PAT is not in the formula registry), NVLS/CollNet (in-network) where the
  fabric reduces, and point-to-point pairwise exchange for all-to-all and send/recv.
- RCCL 2.21.5 (``src/graph/tuning.cc``, ``src/enqueue.cc``): NCCL's ring and tree; no NVLS or CollNet
  on AMD. Which of them ``auto`` runs is RCCL's own tuning model (:mod:`costmodel.cluster.rccl_choice`).
- MPI (MPICH/Open MPI ``coll`` components): the textbook set — recursive doubling/halving,
  Rabenseifner, Bruck, binomial trees, van de Geijn scatter-allgather, ring, pairwise, linear,
  gather + broadcast all-gather (Open MPI's coll/basic).
- Gloo (``gloo/allreduce.cc``): ring, ring-chunked (pipelined), halving-doubling
  (Rabenseifner), BCube (not modelled); pairwise all-to-all; binomial broadcast.
Parameter servers and hierarchical schemes are never picked by ``auto``: a user asks for them by name.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

from costmodel.names import Algorithm as A
from costmodel.names import Backend, enum_named
from costmodel.names import Primitive as P

if TYPE_CHECKING:
    from hardware import System


# Gloo moves a CUDA tensor through host memory (PyTorch's ProcessGroupGloo copies it to pinned CPU
# memory, runs its CPU algorithm over TCP, copies it back): none of its bytes take NVLink or
# GPUDirect. Its algorithms are timed on the cluster's own links all the same, said so.
GLOO_ON_GPUS_NOTE = ("gloo copies CUDA tensors to host memory and runs its CPU algorithms over TCP, not over "
                     "NVLink or GPUDirect: this is the algorithm on the cluster's own links, a lower bound for "
                     "gloo (dpcost iteration --host-reduce times a host-memory all-reduce)")


class Stack(str, Enum):
    NCCL = "nccl"
    RCCL = "rccl"
    MPI = "mpi"
    GLOO = "gloo"


def _table(rows: dict[P, tuple[A, ...]]) -> frozenset[tuple[P, A]]:
    return frozenset((primitive, algorithm) for primitive, algorithms in rows.items() for algorithm in algorithms)


_NCCL_ROWS = {
    P.BROADCAST: (A.PIPELINED_CHAIN,), P.REDUCE: (A.PIPELINED_CHAIN,),
    P.ALL_REDUCE: (A.RING, A.DOUBLE_BINARY_TREE, A.IN_NETWORK), P.ALL_GATHER: (A.RING,),
    P.REDUCE_SCATTER: (A.RING,), P.ALL_TO_ALL: (A.PAIRWISE, A.DIRECT), P.SEND_RECV: (A.DIRECT,),
    P.GATHER: (A.LINEAR,), P.SCATTER: (A.LINEAR,),  # grouped send/recv
}
_MPI_EXCLUDED = {A.IN_NETWORK, A.PARAMETER_SERVER, A.HIERARCHICAL, A.TWO_SHOT}
# (primitive, algorithm) pairs ``auto`` may pick under each stack.
STACK_PAIRS: dict[Stack, frozenset[tuple[P, A]]] = {
    Stack.NCCL: _table(_NCCL_ROWS),
    Stack.RCCL: _table({**_NCCL_ROWS, P.ALL_REDUCE: (A.RING, A.DOUBLE_BINARY_TREE)}),
    Stack.MPI: frozenset((p, a) for p in P for a in A if a not in _MPI_EXCLUDED
                         and (p, a) != (P.ALL_REDUCE, A.DIRECT)),
    Stack.GLOO: _table({
        P.BROADCAST: (A.BINOMIAL,), P.REDUCE: (A.BINOMIAL,), P.ALL_REDUCE: (A.RING, A.RABENSEIFNER),
        P.ALL_GATHER: (A.RING,), P.REDUCE_SCATTER: (A.RING, A.RECURSIVE_HALVING),
        P.ALL_TO_ALL: (A.PAIRWISE, A.DIRECT), P.SEND_RECV: (A.DIRECT,), P.GATHER: (A.LINEAR,),
        P.SCATTER: (A.LINEAR,)}),
}


def stack_named(name: str | Stack) -> Stack:
    return enum_named(Stack, "stack", name)


def default_stack(system: System) -> Stack:
    """The stack a system's GPUs ship with: RCCL on AMD, NCCL otherwise."""
    return Stack.RCCL if system.gpu.vendor.lower() == "amd" else Stack.NCCL


def runs(stack: Stack | str, primitive: str | P, algorithm: str | A) -> bool:
    """Whether ``auto`` under ``stack`` may pick ``algorithm`` for ``primitive``."""
    return (P(primitive), A(algorithm)) in STACK_PAIRS[stack_named(stack)]


# NCCL's tuning model (and dpcost's reading of its graph search) starts at Pascal (sm60).
NCCL_MODEL_MIN_COMPUTE_CAPABILITY = 60


def realistic_backend(system: System) -> Backend:
    """The default backend on a cluster: NCCL's model on NVIDIA (sm60+), RCCL's path on AMD;
    older GPUs NCCL's model does not describe get the textbook model."""
    if default_stack(system) is Stack.RCCL:
        return Backend.RCCL
    if system.gpu.compute_capability >= NCCL_MODEL_MIN_COMPUTE_CAPABILITY:
        return Backend.NCCL
    return Backend.IDEAL


def resolve_backend(backend: str | Backend | None, system: System | None,
                    stack: str | Stack | None = None) -> Backend:
    """``auto``/None → the realistic backend of the system (ideal without one). A ``stack`` other
    than the system's own (gloo on NVIDIA) resolves ``auto`` to ideal: NCCL's and RCCL's models
    describe only their own library, so another's algorithms are timed on the α-β mapping."""
    from costmodel.names import backend_or_auto

    named = backend_or_auto(backend)
    if named is not None:
        return named
    if system is None:
        return Backend.IDEAL
    check_vendor_stack(stack, system)
    if stack is not None and stack_named(stack) is not default_stack(system):
        return Backend.IDEAL
    return realistic_backend(system)


def check_vendor_stack(stack: str | Stack | None, system: System) -> None:
    """NCCL runs on NVIDIA GPUs and RCCL on AMD's: the other vendor's library named as the stack
    was timed on the α-β mapping with no note (--stack rccl on dgx-h100; review, 2026-11-30).
    MPI and Gloo run on either."""
    if stack is None:
        return
    named = stack_named(stack)
    if named in (Stack.NCCL, Stack.RCCL) and named is not default_stack(system):
        from dpbase.errors import NotApplicableError

        vendor = "AMD" if named is Stack.RCCL else "NVIDIA"
        raise NotApplicableError("stack", named.value, f"a library that runs on {system.name}'s GPUs: "
                                 f"{default_stack(system).value}, mpi or gloo ({named.value} runs on {vendor} GPUs)")


def check_stack_backend(stack: str | Stack | None, backend: str, cli: bool = True) -> None:
    """A stack given beside a backend that names the library itself (nccl, rccl) would be left
    out: one NotApplicableError, in the CLI's flags or (``cli=False``) the API's keywords."""
    from costmodel.names import REALISTIC_BACKENDS
    from dpbase.errors import NotApplicableError

    if stack is None or backend not in REALISTIC_BACKENDS:
        return
    dash = "--" if cli else ""
    raise NotApplicableError(f"{dash}stack", stack, f"left out with {dash}backend {backend} (it models that "
                             f"library's own choice); {dash}stack picks the library under {dash}backend auto or ideal")
