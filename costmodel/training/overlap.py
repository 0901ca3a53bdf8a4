"""Overlap of bucketed gradient communication with the backward pass (PyTorch DDP style).

Backward produces the ``G`` gradient bytes uniformly over its duration ``T``, last layers
first. DDP packs them in that order into buckets: a small first bucket (``b1``, 1 MiB by
default: it holds the last layers' gradients, so communication starts early), then full
buckets of ``b`` bytes (25 MiB), then a final partial bucket of ``r`` bytes. A bucket's
collective starts when the bucket is full and the previous collective has finished (one
communication stream). Bucket ``j`` becomes ready at ``T · (bytes up to and including j) / G``
and the last collective finishes at

    F = max_j ( ready_j + Σ_{i ≥ j} c_i )

(a standard result for a single server fed in order: the finish time is the latest
"ready + remaining work" over all jobs). With the three bucket kinds the terms are linear in
the full-bucket index, so the maximum is over five candidates (``t1 = T·b1/G``, ``m`` full
buckets taking ``c`` each, first and last buckets taking ``c1`` and ``cr``):

    t1 + c1 + m·c + cr                 the first bucket
    t1 + T·b/G + m·c + cr              the first full bucket   (m ≥ 1)
    t1 + T·m·b/G + c + cr              the last full bucket    (m ≥ 1)
    T + cr                             the partial bucket (ready when backward ends)

For m equal buckets and no first/partial bucket this is ``max(T/m + m·c, T + c)``.
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
    """The first bucket, ``full_count`` buckets of ``bucket_bytes``, and a partial last one."""

    first_bytes: object
    full_count: object
    bucket_bytes: object
    last_bytes: object

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


def finish_lines(grad_bytes, layout: BucketLayout, first_comm_s, full_comm_s, last_comm_s,
                 late_fraction=0.0) -> FinishLines:
    """The candidates of the module docstring; elementwise on arrays.

    ``late_fraction`` of the gradient bytes (the input embedding's, :attr:`Workload.late_fraction`)
    is ready only when backward ends: the rest is produced uniformly over backward, so a bucket
    is ready at ``T · min(1, bytes so far / ((1 − late) G))``. The full buckets' finish terms are
    then concave in their index, and the maximum may sit where readiness reaches ``T``: the full
    buckets ``j*`` and ``j* − 1`` around it are two more candidates (absent when nothing is late).
    """
    producing = ew.maximum(grad_bytes * (1.0 - late_fraction), 1e-300)
    per_byte = 1.0 / producing
    m = layout.full_count
    b1, b = layout.first_bytes, layout.bucket_bytes
    tail = ew.where(ew.greater(layout.last_bytes, 0), last_comm_s, 0.0)
    after_full = m * full_comm_s + tail
    some_full = ew.greater(m, 0.5)  # a whole number: >= 1
    absent = ew.where(some_full, 0.0, -math.inf)  # the full-bucket lines need a full bucket
    slopes = (ew.minimum(per_byte * b1, 1.0), 1.0,
              ew.minimum(per_byte * (b1 + b), 1.0) * some_full,
              ew.minimum(per_byte * (b1 + m * b), 1.0) * some_full)
    offsets = (first_comm_s + after_full, tail, after_full + absent, full_comm_s + tail + absent)
    if not ew.any_true(ew.greater(late_fraction, 0.0)):
        return FinishLines(slopes, offsets)
    # j*: the first full bucket ready only when backward ends (1-based); the lines exist for 1 <= j <= m
    j_star = ew.ceil((producing - b1) / b)
    at = ew.greater(late_fraction, 0.0) & ew.greater(j_star, 0.5) & ew.greater(m + 0.5, j_star)
    before = at & ew.greater(j_star, 1.5)
    slopes += (ew.where(at, 1.0, 0.0), ew.where(before, ew.minimum(per_byte * (b1 + (j_star - 1) * b), 1.0), 0.0))
    offsets += (ew.where(at, (m - j_star + 1) * full_comm_s + tail, -math.inf),
                ew.where(before, (m - j_star + 2) * full_comm_s + tail, -math.inf))
    return FinishLines(slopes, offsets)


@functools.lru_cache(maxsize=1024, typed=True)
def _scalar_lines(grad_bytes, layout: BucketLayout, first_comm_s: float, full_comm_s: float, last_comm_s: float,
                  late_fraction) -> FinishLines:
    """:func:`finish_lines` of one configuration (Python floats), memoised: the lines do not
    depend on the compute time, so every micro-batch and accumulation count of a (model, dtype,
    bucket, group, algorithm) shares them (``typed``: an int and an equal float stay apart)."""
    return finish_lines(grad_bytes, layout, first_comm_s, full_comm_s, last_comm_s, late_fraction)


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
                   last_comm_s, overlap=True, late_fraction=0.0):
    """Communication finishing after backward; all of it when ``overlap`` is off."""
    if type(overlap) is bool:  # one flag for every element: only the branch it takes
        if not overlap:
            return total_comm_s(layout, first_comm_s, full_comm_s, last_comm_s)
        scalar = type(first_comm_s) is float and type(full_comm_s) is float and type(last_comm_s) is float
        lines = (_scalar_lines if scalar else finish_lines)(grad_bytes, layout, first_comm_s, full_comm_s,
                                                             last_comm_s, late_fraction)
        return exposed_after(backward_s, lines)
    total = total_comm_s(layout, first_comm_s, full_comm_s, last_comm_s)
    lines = finish_lines(grad_bytes, layout, first_comm_s, full_comm_s, last_comm_s, late_fraction)
    return ew.where(overlap, exposed_after(backward_s, lines), total)


def simulate_bucket_schedule(backward_s: float, sizes: list[float],
                             comm_s: list[float], late_fraction: float = 0.0) -> list[tuple[float, float, float]]:
    """Event simulation: (ready, start, end) of each bucket's collective, in order; the last
    ``late_fraction`` of the bytes is ready only when backward ends."""
    producing = sum(sizes) * (1.0 - late_fraction)
    produced, stream_free, events = 0.0, 0.0, []
    for size, duration in zip(sizes, comm_s):
        produced += size
        ready = backward_s * min(1.0, produced / producing)
        start = max(ready, stream_free)
        stream_free = start + duration
        events.append((ready, start, stream_free))
    return events
