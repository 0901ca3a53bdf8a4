"""A progress bar for work that takes over a second (large plans, calibrating many logs).

``with progress("Sweeping plans") as update: … update(done, total)`` draws a rich bar on
stderr, but only when stderr is a terminal and only once the work has run for
``DELAY_S`` — a quick answer prints no bar, and pipes, files and ``--json`` consumers never
see one. The bar is transient: it disappears when the work is done.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

DELAY_S = 0.5  # show nothing for work that finishes sooner

Update = Callable[[int, int], None]


def wanted(stream: TextIO | None = None) -> bool:
    """A bar is drawn on ``stream`` (stderr) only for a person: a terminal, not TERM=dumb."""
    stream = stream if stream is not None else sys.stderr
    if os.environ.get("TERM") == "dumb" or os.environ.get("DPCOST_NO_PROGRESS"):
        return False
    return bool(getattr(stream, "isatty", None) and stream.isatty())


@contextmanager
def progress(label: str, *, stream: TextIO | None = None, enabled: bool | None = None,
             delay_s: float = DELAY_S) -> Iterator[Update]:
    """Yield ``update(done, total)``; a bar appears on ``stream`` once the work outlasts ``delay_s``."""
    stream = stream if stream is not None else sys.stderr
    show = wanted(stream) if enabled is None else enabled
    start = time.perf_counter()
    state: dict[str, Any] = {"bar": None, "task": None}

    def update(done: int, total: int) -> None:
        if not show:
            return
        if state["bar"] is None:
            if time.perf_counter() - start < delay_s:
                return
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            state["bar"] = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                    TimeElapsedColumn(), console=Console(file=stream, force_terminal=True),
                                    transient=True)
            state["bar"].start()
            state["task"] = state["bar"].add_task(label, total=max(total, 1))
        state["bar"].update(state["task"], completed=done, total=max(total, 1))

    try:
        yield update
    finally:
        if state["bar"] is not None:
            state["bar"].stop()
