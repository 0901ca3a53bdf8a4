"""Why the planner chose its plan, in numbers (``findings``) and in plain language (``reason``).

* what bounds the winner: the shares of compute, exposed communication and optimizer in the
  step, and the memory headroom (with what the next larger micro-batch would need);
* the runner-up algorithm and the message sizes where its collective beats the winner's (a
  log-spaced scan from ``CROSSOVER_MIN_BYTES`` to ``CROSSOVER_MAX_BYTES``, each edge refined by
  bisection; ties, where both run the same algorithm, are not wins; the range nearest the
  plan's bucket size is reported);
* what would change the choice: the plan again with the bottleneck bandwidth doubled (then
  halved, if doubling changes nothing);
* the sensitivity of the best plan's throughput (:mod:`costmodel.planner.whatif`).

Every number in the reason is formatted by :func:`rate`, :func:`percent` and the units module,
the same helpers the CLI table uses, so the text and the table agree.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from costmodel.cluster.mapping import regimes_unused_note
from costmodel.planner import choose, grid, recomputation, whatif
from costmodel.planner.comm import CommCache
from costmodel.planner.rank import objective_scores, rows_at, step_parts
from costmodel.planner.text import percent, rate, reason_text
from costmodel.training.syncmodes import SIZED_MODES
from dpbase.units import format_size
from dpbase.values import replace
from hardware.notes import rate_mismatch_notes

CROSSOVER_MIN_BYTES = 2.0**10
CROSSOVER_MAX_BYTES = 2.0**36
CROSSOVER_SCAN_POINTS = 109
CROSSOVER_BISECTIONS = 40
# Collective times closer than this share are a tie: the two algorithm names run the same one
# (auto choosing the runner-up), and float rounding must not read as a win.
CROSSOVER_TIE = 1e-9
CHANGED_FIELDS = (("algorithm", "algorithm"), ("gpus", "GPUs"), ("micro_batch", "micro-batch"),
                  ("accumulation_steps", "accumulation"), ("bucket_bytes", "bucket"),
                  ("grad_dtype", "gradients"), ("zero_stage", "ZeRO stage"), ("recompute", "recomputation"))


def _value(field: str, value) -> str:
    if field == "recompute":
        return "on" if value else "off"
    return format_size(value) if field == "bucket_bytes" else str(value)


def bound(row) -> dict:
    """Shares of the step and which part bounds it. Communication is what the links cost the step:
    its exposed part and the compute its hidden part slows (over TCP sockets all of its time),
    which a faster network shortens alike; the other scaling losses (stragglers, host overhead)
    stay apart (review, 2026-11-29: a TCP plan read "bound by compute" with 22 % of its step in
    interference counted as a scaling loss)."""
    # the split of rank.step_parts; the data loader's wait only where a plan has one (--input-rate)
    shares = {name: seconds / row.total_s for name, seconds in step_parts(row).items()
              if name != "input wait" or row.input_wait_s > 0}
    return {"bound": max(shares, key=shares.get), "shares": shares,
            "exposed_share": row.exposed_comm_s / row.total_s}


def next_micro_batch(sweep: grid.Sweep, index) -> dict | None:
    """Memory of the next larger micro-batch on the same GPUs (same other choices), if any."""
    space, (a, z, d, u, c) = sweep.space, index
    same = np.flatnonzero((space.cell_layout == space.cell_layout[c])
                          & (space.micro_batch > space.micro_batch[c]))
    if same.size == 0:
        return None
    nxt = int(same[np.argmin(space.micro_batch[same])])
    need = float(sweep.memory_bytes[a, z, d, u, nxt])
    fits = need + sweep.reserve_bytes <= sweep.capacity_bytes
    # where it does not fit at this plan's ZeRO stage, the lowest higher stage where it does ("micro-batch
    # 2 would need 32.9 GB" beside a faster ZeRO-1 row running it at 18.5 GB; planner audit, 2026-11-30)
    # a feasible row of the sweep: its memory fitting is not enough where the stage does not run with this
    # algorithm (a ring plan under NCCL's model has no ZeRO-1 rows; review, 2026-11-30)
    higher = next(((space.zero_stages[k], float(sweep.memory_bytes[a, k, d, u, nxt])) for k in range(len(space.zero_stages))
                   if space.zero_stages[k] > space.zero_stages[z] and bool(sweep.feasible[a, k, d, u, nxt])),
                  None) if not fits else None
    return {"micro_batch": int(space.micro_batch[nxt]), "memory_bytes": need, "fits": fits,
            "fits_at_zero": None if higher is None else {"zero_stage": int(higher[0]), "memory_bytes": higher[1]}}


# The chosen algorithm's collectives over sizes, for the report (1 KiB .. 4 GiB).
COMM_SWEEP_SIZES = tuple(float(2**k) for k in range(10, 33, 2))


def memory_parts(sweep, setting, index) -> dict[str, float]:
    """The best plan's memory per GPU by part (bytes), as :mod:`memory` counts it."""
    from costmodel.planner.grid import irregular, model_states
    from costmodel.training import memory

    space, (_, z, d, _, c) = sweep.space, index
    precision = memory.precision_for(space.grad_dtypes[d])
    states = memory.optimizer_state_bytes(setting.optimizer) + precision.master_bytes
    ranks = float(space.gpus[c])
    per_node = float(space.layouts[int(space.cell_layout[c])][1])
    zero = space.zero_stages[z]
    weights, grads, optimizer = (float(x) for x in model_states(setting, precision, states, zero, ranks, per_node))
    b, element = space.micro_batch[c], memory.ACTIVATION_BYTES[setting.compute_dtype]
    activations = memory.activation_bytes(setting.workload, b, setting.seq_len, element,
                                          setting.flash_attention, setting.recompute)
    logits = memory.logits_bytes(setting.workload, b, setting.seq_len, element)
    tensors = weights + grads + optimizer + activations + logits
    parts = {"weights": weights, "gradients": grads, "optimizer": optimizer,
             "activations": activations, "logits and loss": logits,
             "CUDA context and NCCL buffers": memory.runtime_bytes(ranks, setting.overheads),
             "fragmentation": memory.fragmentation_bytes(tensors, setting.overheads, irregular(
                 setting, precision, zero, ranks, per_node, weights + grads + optimizer, activations + logits))}
    return {name: float(value) for name, value in parts.items()}


def zero0_fits(sweep, index) -> bool | None:
    """Whether plain data parallelism (no ZeRO) fits in memory on as many GPUs as a ZeRO plan, at
    another micro-batch (at the plan's own it does not: the sweep shards only where it does not,
    ``grid.fits``, whose ``plain_dp_fits`` this reads); None for a ZeRO-0 plan or a sweep without ZeRO-0. The reason said "does not
    fit" of every ZeRO plan, where ZeRO-0 fitted at a smaller micro-batch."""
    space = sweep.space
    if 0 not in space.zero_stages or space.zero_stages[index[1]] == 0:
        return None
    gpus = np.asarray(space.gpus).ravel()
    return bool(np.broadcast_to(sweep.plain_dp_fits, space.shape)[..., gpus == gpus[index[4]]].any())


def plan_calls(system, space, index, backend: str, params: tuple = (), algorithm: str | None = None,
               quantize: tuple = (None, None), shard: str = "full", cache: CommCache | None = None
               ) -> dict[str, tuple] | None:
    """The collectives the plan at ``index`` issues, as :func:`gradsync.sync_plan` builds them,
    each with the group it runs on: label -> (primitive, ``comm(primitive, size)`` of that group,
    its bytes per byte of the gradient bucket: 1 for ZeRO's, qgZ's int4 share over G on the rail).
    On all the plan's GPUs the label is the primitive; ZeRO++ qgZ's two-level all-to-all, hybrid
    sharding and hpZ run some in the node or on one rail across the nodes, and say so. (The
    report's chart drew ZeRO's reduce-scatter for a qgZ plan, whose gradients go all-to-all.)
    None where the algorithm cannot run on a group; one GPU runs none. ``cache``: the caller's, to
    share (the system's CommCache for ``backend`` and ``params``)."""
    from costmodel.cluster.mapping import rail_system
    from costmodel.training import gradsync, memory, overlap
    from costmodel.training.iteration import qgz_hierarchical

    a, z, d, _, c = index
    nodes, per_node = space.layouts[int(space.cell_layout[c])]
    algorithm = space.algorithms[a] if algorithm is None else algorithm
    stage = space.zero_stages[z]
    weight_bits, grad_bits = gradsync.quantized_bits(quantize, stage)
    hybrid, hpz = stage == 3 and shard == "hybrid", stage == 3 and shard == "hpz"
    two_level = grad_bits is not None and not hybrid and bool(qgz_hierarchical(nodes, per_node))
    cache = CommCache(system, backend, params) if cache is None else cache
    groups = {"all": lambda: cache.function(nodes, per_node, algorithm),
              "node": lambda: cache.function(1, per_node, algorithm),
              "rail": lambda: CommCache(rail_system(system, per_node), backend, params).function(nodes, 1, algorithm)}
    labels = {"all": "{}", "node": f"{{}} (in the node, {per_node} GPUs)", "rail": f"{{}} (across {nodes} nodes, one rail)"}
    issued: dict[tuple[str, str], float] = {}  # (primitive, group) -> bytes per gradient byte

    def record(group: str):
        def comm(primitive: str, size):
            issued[(primitive, group)] = max(issued.get((primitive, group), 0.0), float(size))
            return 0.0 * size
        return comm

    if nodes * per_node > 1:
        whole = overlap.BucketLayout(first_bytes=1.0, full_count=0.0, bucket_bytes=0.0, last_bytes=0.0)
        gradsync.sync_plan(record("node" if hybrid else "all"), per_node if hybrid else nodes * per_node, whole,
                           memory.precision_for(space.grad_dtypes[d]), zero_stage=stage, weight_bits=weight_bits,
                           grad_bits=grad_bits, replicas=record("rail") if hybrid else None,
                           replica_ranks=nodes if hybrid else None, secondary=record("node") if hpz else None,
                           qgz_node=record("node") if two_level else None,
                           qgz_rails=record("rail") if two_level else None, qgz_node_ranks=per_node)
    functions = {group: groups[group]() for group in dict.fromkeys(group for _, group in issued)}
    if nodes * per_node == 1 or any(function is None for function in functions.values()):
        return None
    return {labels[group].format(primitive): (primitive, functions[group], share)
            for (primitive, group), share in issued.items()}


def comm_sweep(system, space, index, backend: str, params: tuple = (), quantize: tuple = (None, None),
               shard: str = "full") -> dict | None:
    """Seconds of each collective the chosen plan issues (:func:`plan_calls`) at
    ``COMM_SWEEP_SIZES``, each on its own group."""
    a, _, _, _, c = index
    nodes, per_node = space.layouts[int(space.cell_layout[c])]
    cache, algorithm = CommCache(system, backend, params), space.algorithms[a]
    calls = plan_calls(system, space, index, backend, params, quantize=quantize, shard=shard, cache=cache)
    if calls is None:
        return None
    # where NCCL's model answers, the whole group's table at every size in one pass (equal to the
    # calls cell by cell); a row NCCL leaves NaN (a forced algorithm it does not enable) goes call
    # by call, which raises NotApplicableError as it always did
    whole = [primitive for label, (primitive, _, _) in calls.items() if label == primitive]
    cache.prepare([(nodes, per_node)], [(p, algorithm) for p in whole], COMM_SWEEP_SIZES)
    table = cache.batch([(nodes, per_node)], algorithm, COMM_SWEEP_SIZES)

    def seconds(label: str, primitive: str, comm, _share: float) -> list[float]:
        if label == primitive and cache.nccl_answers(algorithm, primitive):
            row = table(primitive, COMM_SWEEP_SIZES)[0]
            if np.isfinite(row).all():
                return row.tolist()
        return [float(comm(primitive, size)) for size in COMM_SWEEP_SIZES]

    return {"algorithm": algorithm, "gpus": nodes * per_node, "sizes_bytes": list(COMM_SWEEP_SIZES),
            "seconds": {label: seconds(label, *call) for label, call in calls.items()}}


def _runs(wins: list[bool]) -> list[tuple[int, int]]:
    """(first, last) scan index of each run of sizes where the runner-up wins."""
    found, i = [], 0
    while i < len(wins):
        if not wins[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(wins) and wins[j + 1]:
            j += 1
        found.append((i, j))
        i = j + 1
    return found


def _log_distance(first: float, last: float, size: float) -> float:
    """How far ``size`` lies outside ``[first, last]`` in log size (0 inside it)."""
    if size < first:
        return math.log(first / size)
    return math.log(size / last) if size > last else 0.0


def _edge(wins_at, low: float, high: float, low_wins: bool) -> float:
    """Where ``wins_at`` changes between two scanned sizes (``low_wins``: its value at ``low``),
    by bisection in log size."""
    for _ in range(CROSSOVER_BISECTIONS):
        mid = math.sqrt(low * high)
        if bool(wins_at(mid)) == low_wins:
            low = mid
        else:
            high = mid
    return math.sqrt(low * high)


def _window(wins_at, sizes: np.ndarray, size: float) -> tuple[tuple[float | None, float | None], bool]:
    """The size range where ``wins_at`` holds nearest ``size`` (chosen on the scan, then only its
    edges refined; None where it runs past the scan's end), and whether it holds anywhere."""
    wins = [bool(wins_at(s)) for s in sizes]
    runs = _runs(wins)
    if not runs:
        return (None, None), False
    i, j = min(runs, key=lambda run: _log_distance(float(sizes[run[0]]), float(sizes[run[1]]), size))
    start = None if i == 0 else _edge(wins_at, float(sizes[i - 1]), float(sizes[i]), False)
    end = None if j == len(sizes) - 1 else _edge(wins_at, float(sizes[j]), float(sizes[j + 1]), True)
    return (start, end), True


# Calls another size than their bucket on average by this factor are quoted by their mean (whole tensors).
WHOLE_CALLS = 1.1


def crossover(system, space, index, runner_up: str, backend: str, params: tuple = (),
              bucket_bytes: float | None = None, quantize: tuple = (None, None), shard: str = "full") -> dict | None:
    """Where the runner-up algorithm's collective beats the winner's on the winner's GPUs: of the
    size ranges where it is cheaper by more than ``CROSSOVER_TIE`` (where both names run the same
    algorithm they tie), the one nearest ``bucket_bytes``, the winner's call size (its bucket by
    default). ``wins_from_bytes`` / ``wins_to_bytes`` are its edges (None past the scan's ends),
    ``size_bytes`` the edge nearest the bucket and ``runner_up_wins_above`` whether the range
    starts there."""
    _, _, _, u, c = index
    nodes, per_node = space.layouts[int(space.cell_layout[c])]
    cache = CommCache(system, backend, params)
    ours = plan_calls(system, space, index, backend, params, quantize=quantize, shard=shard, cache=cache)
    theirs = plan_calls(system, space, index, backend, params, runner_up, quantize, shard, cache)
    if ours is None or theirs is None:  # one GPU, or the runner-up does not run on a group
        return None

    def wins(size: float) -> bool:
        # each call at its share of the bucket (qgZ's rail all-to-all carries 1/G of it)
        other, winner = (sum(comm(p, size * share) for p, comm, share in calls.values()) for calls in (theirs, ours))
        return other < winner * (1.0 - CROSSOVER_TIE)

    sizes = np.geomspace(CROSSOVER_MIN_BYTES, CROSSOVER_MAX_BYTES, CROSSOVER_SCAN_POINTS)
    bucket = space.bucket_bytes[u] if bucket_bytes is None else bucket_bytes

    def seconds(calls, size: float) -> float:
        return sum(comm(p, size * share) for p, comm, share in calls.values())

    if all(seconds(theirs, size) == seconds(ours, size) for size in sizes[::8]):
        # the runner-up's name runs none of these collectives here (in-network's reduce-scatter on
        # NCCL is NCCL's own choice): "never faster" compared a call with itself (a planner audit)
        return None
    window, somewhere = _window(wins, sizes, bucket)
    edges = [edge for edge in window if edge is not None]
    nearest = min(edges, key=lambda s: abs(math.log(s / bucket))) if edges else None
    return {"primitive": " + ".join(ours), "size_bytes": nearest,
            "runner_up_wins_above": nearest is not None and nearest == window[0],
            "wins_from_bytes": window[0], "wins_to_bytes": window[1], "wins_somewhere": somewhere,
            "scanned_bytes": [CROSSOVER_MIN_BYTES, CROSSOVER_MAX_BYTES], "gpus": nodes * per_node}


def _table_rank(space, at, rows) -> int | None:
    """The rank of the table row that shows configuration ``at`` (rows may be collapsed)."""
    a, z, d, u, c = at
    nodes, per_node = space.layouts[int(space.cell_layout[c])]
    for row in rows or ():
        if (row.algorithm, row.gpus, row.nodes, row.micro_batch, row.grad_dtype, row.zero_stage) == (
                space.algorithms[a], nodes * per_node, nodes, int(space.micro_batch[c]),
                space.grad_dtypes[d], space.zero_stages[z]) and \
                (row.sync not in SIZED_MODES  # one row per configuration: its size is the mode's own
                 or space.bucket_bytes[u] in (row.bucket_bytes_range or (row.bucket_bytes,))):
            return row.rank
    return None


def runner_up(sweep, scores, index, ranked, rows=None, *, keys) -> dict | None:
    """The plan with a different algorithm that tells the algorithm's choice apart: on the
    chosen plan's own configuration (GPUs, micro-batch, ZeRO stage, gradient dtype, bucket) the
    best-scoring other algorithm; only where none runs there, the best-scoring plan of another
    algorithm anywhere (``same_configuration`` False: its difference is not the algorithm's
    alone). Its rank if in the table. The best by :func:`choose.fastest` (scores within 1 ppb are
    equal and the rules order them, so rounding does not pick it) given the tie-break ``keys``."""
    others = scores.copy()
    others[index[0]] = np.inf
    if not np.isfinite(others).any() or sweep.space.gpus[index[4]] == 1:
        return None
    same = np.full_like(others, np.inf)
    here = (slice(None), *index[1:])
    same[here] = others[here]
    pick = same if np.isfinite(same).any() else others
    flat = choose.fastest(pick, keys)
    at = tuple(int(i) for i in np.unravel_index(flat, scores.shape))
    rank = _table_rank(sweep.space, at, rows) if rows is not None else (
        ranked.index(at) + 1 if at in ranked else None)
    return {"algorithm": sweep.space.algorithms[at[0]], "index": tuple(int(i) for i in at),
            "rank": rank, "same_configuration": pick is same, "gpus": int(sweep.space.gpus[at[4]]),
            "step_time_change": float(sweep.total_s[at] / sweep.total_s[index] - 1.0)}


def more_gpus(sweep, scores, index: tuple, tables=None, tied=None) -> str | None:
    """Why the plans on more GPUs than the best's (at ``index``) lost (None where there are none):
    ``"tied"`` (one scores better than the best — scores are lower-is-better,
    :func:`rank.objective_scores` — and is tied with it: the tie-break chose fewer GPUs),
    ``"untied"`` (those that score better fall more than the tie band behind the best in some
    scenario, where the chosen plan does not: ``tied``, the flat indices of
    :func:`choose.scenario_tied`; tied plans rank first),
    ``"worse"`` (some score, none better), ``"constraints"`` (they run and fit but
    miss the deadline or budget), ``"algorithms"`` (the swept algorithms run on none of their GPU
    layouts; needs the sweep's collective ``tables``) or ``"memory"`` (they run but do not fit)."""
    space = sweep.space
    more = space.gpus > space.gpus[index[4]]
    if not more.any():
        return None
    found = scores[..., more]
    if np.isfinite(found).any():
        better = more & (scores < float(scores[index]))  # inf (infeasible) is never less
        if not better.any():
            return "worse"
        return "tied" if tied is None or np.isin(np.flatnonzero(better), tied).any() else "untied"
    if np.asarray(np.broadcast_to(sweep.feasible, space.shape)[..., more]).any():
        return "constraints"
    layouts = sorted({int(i) for i in space.cell_layout[more]})
    if tables is not None and not tables.valid[..., layouts].any():
        return "algorithms"
    return "memory"


def _what_if_once(sweep, setting, system, objective, constraints, index, factor, tolerance,
                  subspace=None, redecide: bool = False, ties_on=None, memo: dict | None = None) -> dict:
    """Re-plan on scaled hardware; the choice changes only if the old plan falls out of the tie.
    ``subspace``: (:func:`whatif.feasible_subspace` of ``sweep``, the most bytes any plan of
    ``sweep`` sends, :func:`_bounds` of ``sweep`` or None): only the configurations that can win
    are re-evaluated (:func:`_near`). ``redecide``: the planner decided recomputation by speed,
    so the re-plan decides it again on the scaled links (:func:`_recomputation_switched`).
    ``ties_on``: the planner's ties of a re-plan (scenario ties where the fastest plan's interval is
    wide, :func:`costmodel.planner.recommend._tie_set`); the old plan stays while tied."""
    label, system2 = whatif.what_if_system(system, sweep.space, factor)
    base = float(sweep.samples_per_s[index])
    if subspace is None:
        space, sent_max, near = sweep.space, None, None
    else:  # the old plan is feasible, so inside the sub-space: its index there
        (space, kept), sent_max, bounds = subspace
        index = _local(kept, index)
        near = None if bounds is None else _near(space, kept, index, bounds, factor, tolerance)
    other = grid.sweep(setting, system2, space if near is None else near[0])
    scores = objective_scores(other, setting, objective, constraints.tokens, constraints)
    if near is not None:
        _, near_index, ceiling = near
        if scores[near_index] <= ceiling:
            index = near_index
        else:  # the old plan slowed beyond the guess: the pruning may have left out a winner
            other = grid.sweep(setting, system2, space)
            scores = objective_scores(other, setting, objective, constraints.tokens, constraints)
    old = rows_at(other, setting, scores, [index])[0]
    switched = _recomputation_switched(sweep, setting, system2, objective, constraints, scores, tolerance,
                                       ties_on, memo) if redecide else None
    if switched is None and not np.isfinite(scores).any():
        # no plan meets the deadline/budget on these links: no choice to compare
        return {"label": label, "changes": [], "samples_per_s": 0.0, "throughput_change": -1.0,
                "no_plan": True}
    row = old  # while the old plan stays tied, it stays the choice
    if switched is not None:
        row = switched
    else:
        keys = _keys_once(other, setting, scores, sent_max)
        if not _still_fastest(scores, index, keys):  # the fastest is tied with itself
            near = _ties(ties_on, other, setting, system2, scores, keys)
            tied = choose.within(scores[index], float(np.min(scores)), tolerance) if near is None else \
                int(np.ravel_multi_index(index, scores.shape)) in near
            if not tied:  # the rules' first plan
                row = _first_by_rules(other, setting, scores, tolerance, keys, near)
    changes = [(name, _value(f, getattr(row, f)), _value(f, getattr(old, f)))
               for f, name in CHANGED_FIELDS if getattr(row, f) != getattr(old, f)]
    return {"label": label, "changes": changes, "samples_per_s": row.samples_per_s,
            "throughput_change": row.samples_per_s / base - 1.0,
            # this plan itself on the scaled links: where the choice changes, the new one can beat
            # this plan's throughput today (it was tied with it here, and lost on a tie-break)
            "kept_throughput_change": old.samples_per_s / base - 1.0,
            # whether this plan still meets the deadline/budget there (not: the limits moved the choice)
            "kept_meets_limits": bool(np.isfinite(scores[index]))}


def _recomputation_switched(sweep, setting, system2, objective, constraints, scores, band: float, ties_on=None,
                            memo: dict | None = None):
    """The rules' first plan with recomputation the other way round, on links ``system2``, where
    the planner's rule (:func:`recomputation.taken`) turns it there; else None. ``sweep`` is the
    plan's own (its floor bounds a sweep with recomputation on any links) and ``scores`` those of
    the plan's setting on ``system2`` (a sub-space holding their best)."""
    flipped = replace(setting, recompute=not setting.recompute)

    def score_of(candidate, candidate_setting):
        return objective_scores(candidate, candidate_setting, objective, constraints.tokens, constraints)

    if flipped.recompute and not recomputation.may_win(sweep, flipped, float(np.min(scores)), score_of, band, memo):
        return None
    other = grid.sweep(flipped, system2, sweep.space)  # the whole space: what fits depends on recomputation
    other_scores = score_of(other, flipped)
    without, recomputing = (scores, other_scores) if flipped.recompute else (other_scores, scores)
    if recomputation.taken(without, recomputing, band) != flipped.recompute:
        return None
    keys = _keys_once(other, flipped, other_scores, None)
    return _first_by_rules(other, flipped, other_scores, band, keys, _ties(ties_on, other, flipped, system2,
                                                                         other_scores, keys))


def _keys_once(sweep, setting, scores, sent_max):
    """The tie-break keys of a re-plan (:func:`choose.rule_keys`), computed at the first ask and
    kept: the fastest check, the ties and the rules' first plan read the same ones."""
    return functools.cache(lambda: choose.rule_keys(sweep, setting.workload.params, scores, sent_max))


def _still_fastest(scores, index, keys) -> bool:
    """Whether the old plan (``index``) is the re-plan's fastest (:func:`choose.fastest`): then it
    stays whatever ties (the fastest is always tied), and its intervals need not be computed.
    ``keys()``: the re-plan's tie-break keys, asked only where two scores are the best's."""
    best = choose.tied(scores, 0.0)  # the scores that are the best's (choose's own rule)
    flat = int(np.ravel_multi_index(index, scores.shape))
    if flat not in best:
        return False
    return best.size == 1 or choose.fastest(scores, keys()) == flat  # one best score: no rule decides


def _ties(ties_on, sweep, setting, system, scores, keys):
    """The planner's scenario ties of a re-plan (flat indices), or None (the band alone ties)."""
    if ties_on is None or not np.isfinite(scores).any():
        return None
    return ties_on(sweep, setting, system, scores, keys())


def _first_by_rules(sweep, setting, scores, band: float, keys, near=None):
    """The row of ``sweep`` the tie-break rules (``keys()``, :func:`_keys_once`) put first among the
    tied plans (``near``, else those within ``band`` of the best)."""
    top = np.unravel_index(choose.order(scores, keys(), band, 1, near)[0], scores.shape)
    return rows_at(sweep, setting, scores, [tuple(int(i) for i in top)])[0]


def _local(kept, index) -> tuple[int, ...]:
    """``index`` (of a space) in the sub-space that kept ``kept`` of each axis (which holds it)."""
    return tuple(int(np.searchsorted(axis, i)) for axis, i in zip(kept, index))


# Relative slack on the pruning bounds: a bound and the score it bounds come from different
# float operations.
_BOUND_SLACK = 1e-9


def _bounds(sweep, setting, objective, constraints):
    """(floor, guess) for the what-if's pruning, over ``sweep``: ``floor`` the scores of a step
    without communication (:func:`grid.comm_free_s`, below any links' score), ``guess(g)`` the
    scores with the rest of each step (its communication and what waits on it) scaled by ``g``."""
    free = grid.comm_free_s(sweep)

    def scores_at(step_s):
        return objective_scores(replace(sweep, samples_per_s=grid.samples_per_s(sweep.space, step_s)),
                                setting, objective, constraints.tokens, constraints)

    return scores_at(free), lambda g: scores_at(free + (sweep.total_s - free) * g)


def _near(space, kept, index, bounds, factor, tolerance):
    """(the sub-space of ``space`` holding every configuration that may win on links ``factor``
    times as fast, the old plan's index there, the old plan's guessed score there), or None
    where nothing is left out. ``kept``: the axes of ``sweep`` that ``space`` kept; ``index``:
    the old plan's in ``space``.

    The new best scores at most what the old plan scores there; a configuration whose floor
    lies beyond the tie band of that can be neither the new plan nor tied with it (the band's
    edge grows with the score while ``tolerance`` < 1). The old plan's score is guessed with the
    rest of its step scaled by ``1 / factor`` (none faster on faster links) and checked once
    the sub-space is swept (:func:`_what_if_once` sweeps the whole sub-space when the guess
    was low). None too where the smallest sub-space holding the rest is ``space`` itself: the
    same sweep, with a check and possibly a second sweep for nothing."""
    assert 0 <= tolerance < 1, tolerance  # plan() refuses a tie band of 1 or more
    floor, guess = bounds
    ceiling = float(guess(max(1.0, 1.0 / factor))[np.ix_(*kept)][index])
    if not np.isfinite(ceiling):
        return None
    ceiling += _BOUND_SLACK * abs(ceiling)
    edge = ceiling + tolerance * abs(ceiling)
    within = floor[np.ix_(*kept)] <= edge + _BOUND_SLACK * abs(edge)
    within[index] = True  # the old plan itself, whose score checks the guess
    if within.all():
        return None
    near, inner = whatif.subspace(space, within)
    if near.shape == space.shape:  # the configurations left out span every kept value of each axis
        return None
    return near, _local(inner, index), ceiling


def what_if(sweep, setting, system, objective, constraints, index, tolerance, sent=None,
            redecide: bool = False, ties_on=None) -> list[dict]:
    """The plan again with the bottleneck bandwidth scaled: what changes, and by how much.
    ``sent``: the sweep's :func:`choose.bytes_sent`, where the caller has it; ``redecide``: the
    planner decided recomputation by speed, and decides it again there; ``ties_on``: ties as the
    planner takes them (scenarios of the model's uncertainty), else the band alone."""
    found = []
    sent = choose.bytes_sent(sweep, setting.workload.params) if sent is None else sent
    subspace = (whatif.feasible_subspace(sweep), float(sent.max()), _bounds(sweep, setting, objective, constraints))
    memo: dict = {}  # what every factor shares: the recomputed floor's score (no link changes it)
    for factor in whatif.WHAT_IF_BANDWIDTH_FACTORS:
        found.append(_what_if_once(sweep, setting, system, objective, constraints, index, factor,
                                   tolerance, subspace, redecide, ties_on, memo))
        if found[-1]["changes"]:
            break
    return found


def zero_options_unused(setting, best) -> str | None:
    """The ZeRO options given that the recommended plan's stage does not take (it won over every
    plan they were swept on, by its score or, inside the tie band, by the tie-break: a ZeRO-2 plan
    over a quantised ZeRO-3 one, where "scored better than every plan that did" was false: review,
    2026-11-30): said, where the text and an --emit deepspeed file were the same as without them."""
    from costmodel.training.gradsync import QUANTIZED_STAGE

    z = best.zero_stage
    given = [(flag, ok) for flag, wanted, ok in (
        ("--offload-optimizer", setting.offload_optimizer, z >= 1),
        ("--quantize-weights", setting.quantize[0] is not None, z == QUANTIZED_STAGE),
        ("--quantize-grads", setting.quantize[1] is not None, z == QUANTIZED_STAGE),
        ("--overlap-param-gather", setting.overlap_param_gather, z in (1, 2)),
        (f"--shard {setting.shard}", setting.shard != "full", z == 3)) if wanted]
    unused = [flag for flag, ok in given if not ok]
    if not unused:
        return None
    one = len(unused) == 1
    return (f"{', '.join(unused)} {'applies' if one else 'apply'} only to the ZeRO stages "
            f"{'it was' if one else 'they were'} swept on; the recommended ZeRO-{z} plan "
            f"{'does not use it' if one else 'uses none of them'}: no plan that did scored better beyond the "
            "tie band")


def explain(*, sweep, setting, system, scores, ranked, objective, tokens, max_gpus, tolerance,
            recompute_state: dict | None = None, on_step=None, keys=None, constraints=None,
            rows=None, tables=None, sent=None, fastest: int | None = None, gpu_limits: dict | None = None,
            tied=None, ties_on=None):
    """(findings, reason, sensitivity) for the best plan ``ranked[0]``; ``tied``: the flat indices
    of the plans tied with the fastest in every scenario (:func:`choose.scenario_tied`), None where
    the tie band ``tolerance`` alone decides; ``ties_on(sweep, setting, system, scores, keys)``: the
    same ties of a re-plan (the what-if's), None where a band was given.

    ``recompute_state`` says whether activation recomputation is on and why (the planner's
    ``{"chosen", "requested", "leanest_without_bytes", "decided"}``); ``on_step`` is called after each of
    the crossover, the what-if re-plans and the sensitivity (progress). ``keys`` are the
    tie-break keys (:func:`choose.rule_keys`), ``constraints`` the deadline/budget/tokens,
    ``tables`` the sweep's collective tables (the sensitivity's unscaled rows reuse them) and
    ``sent`` its bytes sent per GPU (:func:`choose.bytes_sent`) and ``fastest`` the flat index of
    :func:`choose.fastest`, where the caller has them. ``gpu_limits``: why no more GPUs than the
    sweep's most could be used (:func:`costmodel.planner.recommend.gpu_limits`), for the reason.
    """
    from costmodel.planner.rank import Constraints

    step = on_step or (lambda: None)
    constraints = constraints or Constraints(tokens=tokens)
    sent = choose.bytes_sent(sweep, setting.workload.params) if sent is None else sent
    keys = keys if keys is not None else choose.rule_keys(sweep, setting.workload.params, scores, sent=sent)
    index = ranked[0]
    fastest = choose.fastest(scores, keys) if fastest is None else fastest
    exact = tuple(int(i) for i in np.unravel_index(fastest, scores.shape))
    best = rows[0] if rows else rows_at(sweep, setting, scores, [index], constraints)[0]
    second = runner_up(sweep, scores, index, ranked, rows, keys=keys)
    # the winner's call size: its bucket, or its calls' mean where whole tensors make them another size
    calls = (grid.whole_tensor_calls(setting, best) if second else None) or best.bucket_bytes
    reference = best.bucket_bytes if abs(math.log(calls / best.bucket_bytes)) <= math.log(WHOLE_CALLS) else calls
    cross = crossover(system, sweep.space, index, second["algorithm"], setting.backend, setting.comm_params,
                      reference, sweep.quantize, sweep.shard) if second else None
    if cross is not None and reference != best.bucket_bytes:
        cross = {**cross, "call_bytes": reference}
    step()
    # every tied plan lies within the band of the fastest (scenario ties are a subset of the band's),
    # so the band is the what-if's margin too: the old plan stays while within it of the new best
    changes = what_if(sweep, setting, system, objective, constraints, index, tolerance, sent,
                      redecide=bool((recompute_state or {}).get("decided")), ties_on=ties_on)
    step()
    flat = np.ravel_multi_index(index, scores.shape)
    rule = choose.deciding_rule(keys, int(flat), int(fastest))
    findings = {
        **bound(best), "next_micro_batch": next_micro_batch(sweep, index),
        "runner_up": second, "crossover": cross, "what_if": changes,
        "algorithms_swept": list(sweep.space.algorithms), "backend": setting.backend,
        "tie_break": {"tolerance": tolerance, "fastest_step_s": float(sweep.total_s[exact]),
                      "rule": rule,
                      "tied": int((choose.tied(scores, tolerance) if tied is None else tied).size),
                      "fastest_headroom_bytes": sweep.capacity_bytes - float(sweep.memory_bytes[exact]),
                      "fastest_bytes_sent": float(sent[exact]),
                      "fastest_zero_stage": int(sweep.space.zero_stages[exact[1]]),
                      "fastest_gpus": int(sweep.space.gpus[exact[4]]),
                      "fastest_accumulation_steps": int(np.broadcast_to(sweep.space.accumulation,
                                                                        scores.shape)[exact])}
        if exact != index else None,
        "tie_band": tolerance,
        "memory_reserve_bytes": sweep.reserve_bytes,
        "constraints": {"deadline_hours": constraints.deadline_hours, "budget": constraints.budget},
        "max_gpus_considered": int(sweep.space.gpus.max()), "max_gpus_allowed": int(max_gpus),
        "gpu_limits": gpu_limits, "more_gpus": more_gpus(sweep, scores, index, tables, tied),
        "memory_parts": memory_parts(sweep, setting, index),
        "zero0_fits": zero0_fits(sweep, index),
        # the cluster link's calibrated regimes, which a plan's collectives cannot use (as iteration says)
        "regimes_unused": regimes_unused_note(system, best.nodes),
        "zero_options_unused": zero_options_unused(setting, best),
        "rate_mismatch": "; ".join(rate_mismatch_notes(system, best.nodes > 1, best.gpus_per_node > 1)) or None,
        "comm_sweep": comm_sweep(system, sweep.space, index, setting.backend, setting.comm_params, sweep.quantize,
                                 sweep.shard),
        "recompute": recompute_state or {"chosen": setting.recompute, "requested": setting.recompute,
                                         "leanest_without_bytes": None, "decided": False},
    }
    if second:
        second.pop("index")
    rows = whatif.sensitivity(sweep, setting, system, index, tables)
    step()
    return findings, reason_text(best, findings, objective), rows


__all__ = ["explain", "percent", "rate"]
