"""Bounded caches that other threads may touch at the same time.

dpcost's caches are plain dicts, oldest entry dropped first when full. An integrator's thread
pool calls the API concurrently, and two threads evicting at once both picked the same oldest
key: the second ``pop`` raised ``KeyError``, and iterating a dict another thread was resizing
raised ``RuntimeError`` (review, 2026-11-29: 379-1,043 of 20,000 pooled ``predict`` calls
failed). An eviction that loses such a race has nothing left to do, so it stops; no answer
depends on which entry went first.

    >>> cache = {1: "a", 2: "b"}
    >>> evict_oldest(cache, 2); cache
    {2: 'b'}
    >>> evict_oldest({}, 1)
"""

from __future__ import annotations


def evict_oldest(cache: dict, size: int) -> None:
    """Drop ``cache``'s oldest entry if it holds ``size`` or more (safe against a concurrent
    eviction or insertion)."""
    if len(cache) < size:
        return
    try:
        cache.pop(next(iter(cache)), None)
    except (StopIteration, RuntimeError):  # emptied, or resized by another thread meanwhile
        pass
