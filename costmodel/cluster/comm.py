"""The communication model the training step consumes: collective times on one cluster layout.

:class:`CommModel` answers ``time_s(primitive, size_bytes)`` for the data-parallel group and
takes NCCL's topology from :func:`costmodel.cluster.backends.nccl_topology` (cached by value).
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from costmodel.apiwords import speaks_keywords
from costmodel.cluster.backends import bottleneck_link, nccl_topology, predict_collective
from costmodel.cluster.mapping import Layout, cluster_candidates, layout, rail_system
from costmodel.cluster.stacks import check_stack_backend, resolve_backend, stack_named
from costmodel.collectives.prediction import Prediction
from costmodel.names import NO_ALGORITHM, REALISTIC_BACKENDS, Backend, Primitive, algorithm_named, backend_or_auto
from dpbase.bounded import evict_oldest
from dpbase.errors import InputError, check_switch
from dpbase.values import field, frozen

if TYPE_CHECKING:
    from hardware import System

# The all-reduce algorithms a user may force in NCCL mode (NCCL_ALGO), in registry names.
NCCL_FORCEABLE = ("ring", "double-binary-tree", "in-network")
def _call(primitive: str, size_bytes) -> tuple[str, float]:
    """One call's (primitive, bytes) as the models take them, checked where a call is first
    answered: a primitive in any spelling the CLI takes ("allreduce"), a size a finite number
    of bytes from 0 to 2**70 (text, None or inf raised ValueError, TypeError or OverflowError;
    review, 2026-11-29)."""
    from costmodel.names import primitive_named
    from dpbase.errors import is_real
    from dpbase.limits import MAX_SIZE_BYTES

    name = primitive if primitive in _PRIMITIVES else primitive_named(primitive).value
    if not is_real(size_bytes) or not 0 <= size_bytes <= MAX_SIZE_BYTES:
        raise InputError("size_bytes", size_bytes, "a number of bytes from 0 to 2**70 (CommModel.time_s takes "
                                                   "bytes; costmodel.predict parses '1GB')")
    return name, float(size_bytes)


_PRIMITIVES = frozenset(p.value for p in Primitive)  # the canonical names, taken as they are
# Answers one model keeps, by (primitive, size), oldest dropped first: a step asks a few dozen
# sizes and the planner's sweep a few hundred; an integrator's loop over distinct sizes kept
# every one (review, 2026-11-29: 500,000 sizes grew a process from 12 to 550 MB).
MEMO_SIZE = 65536


# The call size describe() probes: PyTorch DDP's default bucket (bucket_cap_mb=25).
PROBE_BYTES = 25 * 2**20


@frozen(slots=False)
class CommModel:
    """Collective times on a cluster for the iteration model: ``time_s(primitive, size_bytes)``.

    ``algorithm='auto'`` takes, per call, the fastest applicable algorithm (ideal backend) or
    NCCL's own choice (nccl backend); a named algorithm is used for all-reduce and, where it
    implements them, the other primitives (else their fastest).
    """

    layout: Layout
    algorithm: str = "auto"
    backend: str = Backend.IDEAL.value
    stack: str | None = None  # None: the system's own (NCCL on NVIDIA, RCCL on AMD)
    # parameters of the named algorithm, e.g. (("servers", 4), ("colocated", True)) for parameter servers
    params: tuple[tuple[str, object], ...] = ()
    # the algorithm as the user typed it (an alias such as "tree"), what a refusal echoes; not a
    # property of the model, so not compared
    named_as: str = field(default="", compare=False, hash=False, repr=False)
    # answers already computed, by (primitive, size): a collective's time is a pure function of them
    # (not init fields: a replace() copy, another model, starts empty)
    _answers: dict = field(default_factory=dict, init=False, compare=False, hash=False, repr=False)
    _seconds: dict = field(default_factory=dict, init=False, compare=False, hash=False,
                           repr=False)  # their time_s as floats, what the step model asks for
    _runs: dict = field(default_factory=dict, init=False, compare=False, hash=False,
                        repr=False)  # the algorithm each primitive runs (_algorithm_for), by primitive

    def _params_for(self, entry) -> dict:
        return entry.taken(self.params)

    @property
    def ranks(self) -> int:
        return self.layout.ranks

    @cached_property
    def _groups(self) -> tuple[CommModel, CommModel]:
        """:func:`hybrid_groups` of this model, built once: their memos then serve every step
        asked of it (qgZ's and hybrid sharding's groups were rebuilt, empty, on every call)."""
        lay = self.layout
        intra = CommModel(layout(lay.system, 1, lay.gpus_per_node), self.algorithm, self.backend, self.stack,
                          self.params)
        rails = CommModel(layout(rail_system(lay.system, lay.gpus_per_node), lay.nodes, 1), self.algorithm,
                          self.backend, self.stack, self.params)
        return intra, rails

    @cached_property
    def _topology(self) -> Any:
        """NCCL's topology for this layout, looked up once per model (not once per call)."""
        return nccl_topology(self.layout) if self.backend == Backend.NCCL.value else None

    def _algorithm_for(self, primitive: str) -> str:
        """The algorithm ``primitive``'s calls run (memoised: asked per call and per check)."""
        found = self._runs.get(primitive)
        if found is None:
            found = self._runs[primitive] = self._runs_for(primitive)
        return found

    def _runs_for(self, primitive: str) -> str:
        if self.algorithm == "auto":
            return "auto"
        if self.backend == Backend.NCCL.value and self.algorithm in NCCL_FORCEABLE:
            return self.algorithm if primitive == "all-reduce" else "auto"
        names = [e.algorithm.value for e in cluster_candidates(primitive, self.layout)]
        return self.algorithm if self.algorithm in names else "auto"

    def runs_named(self, primitive: str) -> bool:
        """Whether the named algorithm runs this primitive's calls (else they take auto's choice:
        :meth:`_algorithm_for`, the one rule of it)."""
        return self.algorithm != "auto" and self._algorithm_for(primitive) == self.algorithm

    def _backend_for(self, algorithm: str, primitive: str = "all-reduce") -> str:
        """NCCL's model for what NCCL runs; an algorithm it does not run (parameter servers,
        recursive doubling …), asked for by name, or a collective its tuning model lacks
        (all-to-all), on the α-β mapping instead of being dropped or refused."""
        from costmodel.nccl.names import COLLECTIVES

        if self.backend == Backend.NCCL.value and (algorithm not in ("auto", *NCCL_FORCEABLE)
                                                   or primitive not in COLLECTIVES):
            return Backend.IDEAL.value
        if self.backend == Backend.RCCL.value:  # the same rule under RCCL (it was named "rccl backend")
            from costmodel.cluster.rccl_choice import runs_as_named

            if not runs_as_named(primitive, algorithm, self.layout):
                return Backend.IDEAL.value
        return self.backend

    def choose(self, primitive: str, size_bytes: float) -> Prediction:
        """The prediction used for one call (computed once per (primitive, size) per model)."""
        key = (primitive, size_bytes)
        found = self._answers.get(key)
        if found is None:
            evict_oldest(self._answers, MEMO_SIZE)
            found = self._answers[key] = self._choose(*_call(primitive, size_bytes))
        return found

    def _choose(self, primitive: str, size_bytes: float) -> Prediction:
        if self.ranks == 1:
            lay = self.layout
            return Prediction(primitive=primitive, algorithm=NO_ALGORITHM, ranks=1, size_bytes=float(size_bytes),
                              time_s=0.0, latency_s=0.0, bandwidth_s=0.0, reduction_s=0.0, algbw_Bps=None,
                              busbw_Bps=None, backend=self.backend, cluster=lay.system.name, nodes=lay.nodes,
                              gpus_per_node=lay.gpus_per_node, bottleneck="")
        algorithm = self._algorithm_for(primitive)
        backend = self._backend_for(algorithm, primitive)
        return predict_collective(primitive, size_bytes, self.layout, algorithm=algorithm, backend=backend,
                                  stack=self.stack, topo=self._topology if backend == self.backend else None,
                                  params_for=self._params_for if self.params else None)[0]

    def time_s(self, primitive: str, size_bytes: float) -> float:
        if size_bytes.__class__ is bool:  # False hashed as 0 and answered from the memo
            raise InputError("size_bytes", size_bytes, "a number of bytes from 0 to 2**70, not a switch")
        try:
            seconds = self._seconds.get((primitive, size_bytes))
        except TypeError:  # an unhashable size (a 0-d array): answered, not kept
            return float(self.choose(*_call(primitive, size_bytes)).time_s)
        if seconds is None:
            evict_oldest(self._seconds, MEMO_SIZE)
            seconds = self._seconds[primitive, size_bytes] = float(self.choose(*_call(primitive, size_bytes)).time_s)
        return seconds

    def bound_s(self, primitive: str, size_bytes: float, end: int) -> float:
        """One end of the call's 10-90 % interval (``end`` 0 = low, 1 = high); the time itself
        where the answer has none. The training step reads it only where :attr:`has_intervals`."""
        p = self.choose(primitive, float(size_bytes))
        if p.interval_s is None or p.backend != self.backend:  # the answer says which backend timed it
            # a call a named algorithm times off the realistic backend (pairwise reduce-scatters under NCCL's
            # model) carries the textbook band, which the step leaves out (has_intervals; planner audit, 2026-11-30)
            return float(p.time_s)
        return float(p.interval_s[end])

    @property
    def has_intervals(self) -> bool:
        """Whether the training step carries this backend's intervals into its comm interval: the
        realistic backends' (measured spreads of NCCL's and RCCL's own algorithms). The ideal
        backend's answers carry the textbook model's band too (1-5x, its own error on the logs), which
        the step leaves out: its comm interval is the spread of what the stack runs."""
        # per call, bound_s leaves out the band of a call a named algorithm times off this backend, so the
        # step keeps the others' (a ZeRO-1 step named recursive-doubling lost its reduce-scatters'
        # NCCL band with its all-reduce's; review, 2026-11-30)
        return self.backend in REALISTIC_BACKENDS

    def describe(self, primitive: str = "all-reduce") -> dict[str, Any]:
        """The model at a glance: what a 25 MiB call (:data:`PROBE_BYTES`) of ``primitive`` (the
        step's gradient collective: a ZeRO step's reduce-scatter, whose header named the all-reduce
        it never runs; planner audit, 2026-11-30) runs, on which backend, and the bottleneck."""
        probe = self.choose(primitive, PROBE_BYTES)
        backend = self._backend_for(self._algorithm_for(primitive), primitive)
        if probe.backend == Backend.IDEAL.value:  # two-shot named past MSCCL's sizes: the textbook's
            backend = probe.backend
        return {"algorithm": self.algorithm, "backend": backend,
                "ranks": self.ranks,
                "nodes": self.layout.nodes, "gpus_per_node": self.layout.gpus_per_node,
                "primitive_at_25MiB": primitive,
                "algorithm_at_25MiB": probe.algorithm, "protocol_at_25MiB": probe.protocol,
                "bottleneck": probe.bottleneck if self.ranks > 1 else bottleneck_link(self.layout)}


def hybrid_groups(comm: CommModel) -> tuple[CommModel, CommModel]:
    """The two groups of hybrid sharding on ``comm``'s cluster: the GPUs of one node (the shard
    group: weight all-gathers and gradient reduce-scatters) and one rail across the nodes (the
    replica group: the all-reduce of each 1/G shard, G rails at once; :func:`rail_system`)."""
    return comm._groups


# The API's keywords for the CLI flags its checks name (--ps-placement is colocated=; --async is
# costmodel.iteration's asynchronous=): dpcost iteration calls it with _cli_words=True.
@speaks_keywords({"ps-placement": "colocated", "async": "asynchronous"})
def comm_model(system: str | System, nodes: int = 1, gpus_per_node: int | None = None, algorithm: str = "auto",
               backend: str | Backend | None = None, stack: str | None = None, *, servers: int | None = None,
               colocated: bool | None = None) -> CommModel:
    """A CommModel for the data-parallel group spanning the cluster.

    ``backend`` None or "auto": the system's realistic backend (NCCL's model on NVIDIA, RCCL's
    tuning model on AMD); "ideal" for the textbook α-β-γ view.
    """
    from hardware import system_of

    lay = layout(system_of(system), nodes, gpus_per_node)  # a user's System checked as its TOML would be
    if isinstance(algorithm, str) and algorithm.strip().lower() == NO_ALGORITHM:  # a one-GPU row's: no collective
        if lay.ranks != 1:
            raise InputError("algorithm", algorithm, f"a collective algorithm or auto ({NO_ALGORITHM}: one GPU only, "
                                                     "as a one-GPU plan row says)")
        algorithm = "auto"
    named = backend_or_auto(backend)
    check_stack_backend(stack, "auto" if named is None else named.value, cli=False)  # as predict refuses it
    resolved = resolve_backend(backend, lay.system, stack)
    typed = algorithm
    if algorithm != "auto":  # each collective that has it runs it (iteration_breakdown checks one does)
        algorithm = algorithm_named(algorithm).value
    params = ps_params(algorithm, lay, servers, colocated)
    return CommModel(lay, algorithm, resolved.value, None if stack is None else stack_named(stack).value, params,
                     named_as=typed)


def ps_params(algorithm: str, lay: Layout, servers: int | None, colocated: bool | None) -> tuple:
    """``servers``/``colocated`` for a parameter-server group, validated; refused for other algorithms."""
    if servers is None and colocated is None:
        return ()
    if algorithm != "parameter-server":
        given = "--servers" if servers is not None else "--ps-placement"
        shown = servers if servers is not None else ("colocated" if colocated else "dedicated")  # as typed, not True/False
        raise InputError(given, shown, "only with --algorithm parameter-server (or --async)")
    out: list[tuple[str, object]] = []
    colocated = None if colocated is None else check_switch("colocated", colocated)  # before it is read by truth
    if servers is not None:
        if isinstance(servers, bool) or not isinstance(servers, int) or not 1 <= servers <= lay.ranks * 64:
            raise InputError("servers", servers, f"an integer from 1 to {lay.ranks * 64}")
        if colocated and servers > lay.ranks:
            raise InputError("servers", servers, f"at most {lay.ranks} colocated servers (one per rank)")
        out.append(("servers", servers))
    if colocated is not None:
        out.append(("colocated", colocated))
    return tuple(out)
