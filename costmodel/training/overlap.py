"""Overlap of bucketed gradient communication with the backward pass (PyTorch DDP style).

Backward produces the ``G`` gradient bytes over its duration ``T``, last layers first: by a
share ``ρ(x)`` of ``T`` it has produced a share ``x`` of them (:func:`ready_share`; ``ρ(x) = x``
when they come evenly, :data:`UNIFORM`). DDP packs them in that order into buckets: a small
first bucket (``b1``, 1 MiB by default: it holds the last layers' gradients, so communication
starts early), then full buckets of ``b`` bytes (25 MiB), then a final partial bucket of ``r``
bytes. A bucket's collective starts when its last byte is produced and the previous collective
has finished (one communication stream). Bucket ``j`` becomes ready at
``T · ρ((bytes up to and including j) / G)`` and the last collective finishes at

    F = max_j ( ready_j + Σ_{i ≥ j} c_i )

(a standard result for a single server fed in order: the finish time is the latest
"ready + remaining work" over all jobs). With the three bucket kinds the terms of the full
buckets are linear in their index between the knots of ``ρ`` and convex across a knot where it
bends up, so the maximum is over five candidates (``m`` full buckets taking ``c`` each, first
and last buckets taking ``c1`` and ``cr``), each a line in ``T``:

    T·ρ(b1/G) + c1 + m·c + cr          the first bucket
    T·ρ((b1 + b)/G) + m·c + cr         the first full bucket   (m ≥ 1)
    T·ρ((b1 + m·b)/G) + c + cr         the last full bucket    (m ≥ 1)
    T + cr                             the partial bucket (ready when backward ends)

and two more at each knot where ``ρ`` bends down (the full buckets on either side of it). For m
equal buckets, evenly and no first/partial bucket this is ``max(T/m + m·c, T + c)``.
Exposed communication is ``F − T`` (what finishes after backward), hidden is the rest.
The closed form works elementwise on numpy arrays; :func:`simulate_bucket_schedule` is the
explicit per-bucket event simulation that the tests use as an oracle.

The same function serves ZeRO-3's forward all-gather prefetch: reversing time turns "gather
unit j before computing it" into "communicate bucket j after producing it".
"""

from __future__ import annotations

import functools
import math

from dpbase import elementwise as ew
from dpbase.errors import InputError, is_real
from dpbase.lazynp import is_array, np
from dpbase.values import frozen

# PyTorch torch/nn/parallel/distributed.py: bucket_cap_mb = 25 (× 1024 × 1024 bytes) and
# dist._DEFAULT_FIRST_BUCKET_BYTES = 1024 × 1024 ("Experiments showed 1MB is a reasonable value").
DDP_BUCKET_BYTES = 25 * 1024 * 1024
MIN_BUCKET_BYTES = 4  # one fp32 gradient element: a smaller bucket holds nothing
MAX_BUCKETS = 10**6  # buckets listed one by one; DDP's default 25 MB buckets give ~10^4 for a 1T-parameter model
DDP_FIRST_BUCKET_BYTES = 1024 * 1024


@frozen
class BucketLayout:
    """The first bucket, ``full_count`` buckets of ``bucket_bytes``, and a partial last one.

    ``mix``: where the first and full calls are the gradient's tensors one by one (``--sync
    per-tensor``), their sizes as (size over ``bucket_bytes``, share of the calls) pairs, so each
    call kind is timed as the mean of the tensors' times, not the time of their mean size (a
    collective's time is not linear in its size: latency, NCCL's protocols); empty: every call
    of a kind is its size."""

    first_bytes: object
    full_count: object
    bucket_bytes: object
    last_bytes: object
    mix: tuple = ()

    @property
    def count(self):
        """Number of buckets (collective calls)."""
        return 1 + self.full_count + ew.greater(self.last_bytes, 0)


def bucket_layout(grad_bytes, bucket_bytes=DDP_BUCKET_BYTES,
                  first_bucket_bytes=DDP_FIRST_BUCKET_BYTES) -> BucketLayout:
    """Split ``grad_bytes`` into DDP buckets; elementwise on arrays."""
    first = ew.minimum(grad_bytes, first_bucket_bytes)
    rest = ew.maximum(ew.as_float(grad_bytes) - first, 0.0)
    full = ew.floor(rest / bucket_bytes)
    last = rest - full * bucket_bytes
    # a whole number of buckets up to rounding: rest / bucket rounded up to an integer left a last
    # bucket a few ulp below 0 (per-tensor calls of mpt-30b's gradient / its tensors: "size_bytes:
    # got -1.5e-05"), or above it, one more call of nothing
    # (only after a full bucket: a bucket far larger than the rest leaves that rest whole)
    tiny = ew.as_float(bucket_bytes) * BUCKET_ROUNDING
    last = ew.where(ew.greater(full, 0), ew.where(ew.greater(last, tiny), last, 0.0), ew.maximum(last, 0.0))
    return BucketLayout(first, full, bucket_bytes, last)


# What is left of a whole number of buckets below this share of one is rounding, not a bucket.
BUCKET_ROUNDING = 1e-9


def packed_sizes(tensor_bytes, bucket_bytes: float, first_bucket_bytes: float,
                 within: bool = False) -> tuple[float, ...]:
    """Buckets of whole tensors (``tensor_bytes`` in the order backward produces them).

    DDP's (``within`` False): a tensor joins the open bucket, and a bucket holding its cap or more
    closes (the first's cap ``first_bucket_bytes``, then ``bucket_bytes``), so a bucket is its cap
    plus part of a tensor, and a tensor larger than the cap closes a bucket with what came before
    it (``compute_bucket_assignment_by_size`` in PyTorch's reducer.cpp). Horovod's (``within``):
    ready tensors are fused while the buffer holds them, so a tensor that would overflow it starts
    the next fusion, and one larger than the buffer is reduced alone (Horovod docs, "Tensor
    Fusion")."""
    sizes, held, cap = [], 0.0, float(first_bucket_bytes)
    for size in tensor_bytes:
        if within and held > 0 and held + size > cap:
            sizes.append(held)
            held, cap = 0.0, float(bucket_bytes)
        held += size
        if held >= cap:
            sizes.append(held)
            held, cap = 0.0, float(bucket_bytes)
    if held > 0:
        sizes.append(held)
    return tuple(sizes)


def packed_layout(sizes: tuple[float, ...], bucket_bytes: float, total_bytes: float) -> BucketLayout:
    """:class:`BucketLayout` of packed buckets: the first, the middle ones at their mean size (the
    closed form's full buckets: their count and bytes exact), and the last, which the gradient's
    ``total_bytes`` less the others makes exact. ``bucket_bytes`` stands for the full buckets'
    size where there are none."""
    if len(sizes) <= 1:
        return BucketLayout(float(total_bytes), 0, float(bucket_bytes), 0.0)
    middle = sizes[1:-1]
    last = max(float(total_bytes) - sum(sizes[:-1]), 0.0)
    return BucketLayout(float(sizes[0]), len(middle), sum(middle) / len(middle) if middle else float(bucket_bytes),
                        last)


def check_bucket_sizes(bucket_bytes: float, first_bucket_bytes: float) -> None:
    """Both bucket sizes from ``MIN_BUCKET_BYTES`` to 1 ZiB (:func:`bucket_size_ok`)."""
    for field, value in (("bucket", bucket_bytes), ("first_bucket", first_bucket_bytes)):
        if not bucket_size_ok(value):  # above 1 ZiB, the collective's size check named "size"
            raise InputError(field, value, f"a size from {MIN_BUCKET_BYTES} bytes to 1 ZiB")


def bucket_size_ok(value) -> bool:
    """A bucket size: a finite number of bytes from ``MIN_BUCKET_BYTES`` to 1 ZiB (iteration's
    buckets and the planner's swept ones alike)."""
    from dpbase.limits import MAX_SIZE_BYTES

    return is_real(value) and math.isfinite(value) and MIN_BUCKET_BYTES <= value <= MAX_SIZE_BYTES


def bucket_sizes(grad_bytes: float, bucket_bytes: float = DDP_BUCKET_BYTES,
                 first_bucket_bytes: float = DDP_FIRST_BUCKET_BYTES) -> list[float]:
    """Bucket sizes in the order backward fills them (scalar)."""
    check_bucket_sizes(bucket_bytes, first_bucket_bytes)
    layout = bucket_layout(grad_bytes, bucket_bytes, first_bucket_bytes)
    if layout.full_count > MAX_BUCKETS:
        raise InputError("bucket", bucket_bytes, f"a size giving at most {MAX_BUCKETS} buckets "
                                                 f"for {grad_bytes:.4g} bytes of gradients")
    sizes = [float(layout.first_bytes)] + [float(bucket_bytes)] * int(layout.full_count)
    return sizes + ([float(layout.last_bytes)] if layout.last_bytes > 0 else [])


@frozen
class FinishLines:
    """The closed form's candidates as lines in the backward time ``T``: finish = max_i (T·slope_i + offset_i).

    Slopes depend on the bucket layout only, offsets on the collective times; a line that
    does not exist (no full bucket) has offset −∞. The planner computes the lines once per
    (algorithm, ZeRO stage, dtype, bucket, GPU layout) and evaluates them for every batch split.
    """

    slopes: tuple
    offsets: tuple


# When backward has produced each share of the gradient bytes: knots (bytes share, backward-time
# share), the bytes share strictly rising from 0 to 1 and the time share never falling, the curve
# linear between them. Evenly over backward by default; a model's own from its layers
# (:attr:`Workload.readiness`: a CNN's classifier early, a transformer's input embedding last).
UNIFORM = ((0.0, 0.0), (1.0, 1.0))


def late_readiness(late_fraction: float) -> tuple[tuple[float, float], ...]:
    """Evenly over backward but the last ``late_fraction`` of the bytes, ready only as it ends."""
    if late_fraction <= 0.0 or 1.0 - late_fraction >= 1.0:  # (a share below float resolution: none)
        return UNIFORM
    if late_fraction >= 1.0:  # everything at the end
        return ((0.0, 1.0), (1.0, 1.0))
    return ((0.0, 0.0), (1.0 - late_fraction, 1.0), (1.0, 1.0))


@functools.lru_cache(maxsize=256)
def _knots(readiness: tuple) -> tuple[tuple[float, ...], tuple[float, ...], tuple[int, ...]]:
    """(bytes shares, time shares, the interior knots where the curve bends down): the finish
    terms of the full buckets are linear in their index between knots, and convex across a knot
    where the curve bends up, so only a knot bending down can hold their maximum inside."""
    xs, ys = tuple(float(x) for x, _ in readiness), tuple(float(y) for _, y in readiness)
    bends = tuple(k for k in range(1, len(xs) - 1)
                  if (ys[k] - ys[k - 1]) * (xs[k + 1] - xs[k]) > (ys[k + 1] - ys[k]) * (xs[k] - xs[k - 1]))
    return xs, ys, bends


def ready_share(share, readiness=UNIFORM):
    """The share of backward by which ``share`` of the gradient bytes is ready (floats or arrays)."""
    xs, ys, _ = _knots(readiness)
    if is_array(share):
        return np.interp(share, xs, ys)
    if share >= 1.0:
        return ys[-1]
    for k in range(1, len(xs)):
        if share <= xs[k]:
            return ys[k - 1] + (ys[k] - ys[k - 1]) * (max(share, 0.0) - xs[k - 1]) / (xs[k] - xs[k - 1])
    return ys[-1]


def finish_lines(grad_bytes, layout: BucketLayout, first_comm_s, full_comm_s, last_comm_s,
                 readiness=UNIFORM) -> FinishLines:
    """The candidates of the module docstring; elementwise on arrays.

    ``readiness``: when each share of the bytes is ready (:data:`UNIFORM` by default; a bucket
    is ready at ``T · ready_share(bytes so far / G)``). Where the curve bends down (the input
    embedding's bytes ready only at the end: :func:`late_readiness`), the full buckets' finish
    terms are concave in their index and the maximum may sit at the knot: the full buckets on
    either side of it are two more candidates (absent where no full bucket is there).
    """
    xs, _, bends = _knots(readiness)
    per_byte = 1.0 / ew.maximum(grad_bytes, 1e-300)
    m = layout.full_count
    b1, b = layout.first_bytes, layout.bucket_bytes
    tail = ew.where(ew.greater(layout.last_bytes, 0), last_comm_s, 0.0)
    after_full = m * full_comm_s + tail
    some_full = ew.greater(m, 0.5)  # a whole number: >= 1

    def ready(bytes_so_far):
        return ready_share(ew.minimum(per_byte * bytes_so_far, 1.0), readiness)

    absent = ew.where(some_full, 0.0, -math.inf)  # the full-bucket lines need a full bucket
    slopes = (ready(b1), 1.0, ready(b1 + b) * some_full, ready(b1 + m * b) * some_full)
    offsets = (first_comm_s + after_full, tail, after_full + absent, full_comm_s + tail + absent)
    for k in bends:
        # the first full bucket (1-based) reaching the knot's bytes, and the one before it
        first_past = ew.ceil((xs[k] / per_byte - b1) / b)
        for j in (first_past, first_past - 1):
            there = ew.greater(j, 0.5) & ew.greater(m + 0.5, j)
            slopes += (ew.where(there, ready(b1 + j * b), 0.0),)
            offsets += (ew.where(there, (m - j + 1) * full_comm_s + tail, -math.inf),)
    return FinishLines(slopes, offsets)


@functools.lru_cache(maxsize=1024, typed=True)
def _scalar_lines(grad_bytes, layout: BucketLayout, first_comm_s: float, full_comm_s: float, last_comm_s: float,
                  readiness) -> FinishLines:
    """:func:`finish_lines` of one configuration (Python floats), memoised: the lines do not
    depend on the compute time, so every micro-batch and accumulation count of a (model, dtype,
    bucket, group, algorithm) shares them (``typed``: an int and an equal float stay apart)."""
    return finish_lines(grad_bytes, layout, first_comm_s, full_comm_s, last_comm_s, readiness)


def finish_at(backward_s, lines: FinishLines):
    """When the last bucket's collective ends for a backward of ``backward_s`` seconds."""
    finish = None
    for slope, offset in zip(lines.slopes, lines.offsets):
        line = offset + backward_s * slope
        if finish is None:
            finish = line
        elif is_array(finish) and finish.shape == np.broadcast(finish, line).shape:
            np.maximum(finish, line, out=finish)  # in place: whole-sweep arrays are large
        else:
            finish = ew.maximum(finish, line)
    return finish


def overlap_finish_s(backward_s, grad_bytes, layout: BucketLayout, first_comm_s, full_comm_s,
                     last_comm_s):
    """When the last bucket's collective ends, from the start of backward (closed form)."""
    return finish_at(backward_s, finish_lines(grad_bytes, layout, first_comm_s, full_comm_s,
                                              last_comm_s))


def total_comm_s(layout: BucketLayout, first_comm_s, full_comm_s, last_comm_s):
    """Sum of all bucket collectives; elementwise on arrays."""
    tail = ew.where(ew.greater(layout.last_bytes, 0), last_comm_s, 0.0)
    return first_comm_s + layout.full_count * full_comm_s + tail


def exposed_after(backward_s, lines: FinishLines):
    """Communication finishing after a backward of ``backward_s`` seconds (with overlap)."""
    return ew.maximum(finish_at(backward_s, lines) - backward_s, 0.0)


def exposed_comm_s(backward_s, grad_bytes, layout: BucketLayout, first_comm_s, full_comm_s,
                   last_comm_s, overlap=True, readiness=UNIFORM):
    """Communication finishing after backward; all of it when ``overlap`` is off."""
    if type(overlap) is bool:  # one flag for every element: only the branch it takes
        if not overlap:
            return total_comm_s(layout, first_comm_s, full_comm_s, last_comm_s)
        scalar = type(first_comm_s) is float and type(full_comm_s) is float and type(last_comm_s) is float
        lines = (_scalar_lines if scalar else finish_lines)(grad_bytes, layout, first_comm_s, full_comm_s,
                                                             last_comm_s, readiness)
        return exposed_after(backward_s, lines)
    total = total_comm_s(layout, first_comm_s, full_comm_s, last_comm_s)
    lines = finish_lines(grad_bytes, layout, first_comm_s, full_comm_s, last_comm_s, readiness)
    return ew.where(overlap, exposed_after(backward_s, lines), total)


def simulate_bucket_schedule(backward_s: float, sizes: list[float], comm_s: list[float],
                             readiness=UNIFORM) -> list[tuple[float, float, float]]:
    """Event simulation: (ready, start, end) of each bucket's collective, in order; a bucket is
    ready when backward has produced its last byte (``readiness``: when each share of them is)."""
    total = sum(sizes)
    produced, stream_free, events = 0.0, 0.0, []
    for size, duration in zip(sizes, comm_s):
        produced += size
        ready = backward_s * ready_share(min(1.0, produced / total), readiness)
        start = max(ready, stream_free)
        stream_free = start + duration
        events.append((ready, start, stream_free))
    return events
