"""Pausing Python's cyclic garbage collector while a report loads or a page is made.

Loading a team's store builds hundreds of thousands of long-lived objects (a Grade is
a dozen), and every few thousand allocations the collector walks them all again: on a
10,000-run store it spent 22 of the 30 s ``list_grades`` took. A run page's 5,000 steps
did the same to a web server's heap (150 ms of collections a page, nine full ones in
thirteen pages). The objects form no cycles worth finding mid-load, so the collector
waits and runs once afterwards.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]

_lock = threading.Lock()
_pausers = 0
_was_enabled = True


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off (reference counting still frees).

    Nests, in one thread and across threads (a web server's requests and its summary
    overlap): the collector is back on when the last pause ends, and only if it was on
    when the first began.
    """
    global _pausers, _was_enabled
    with _lock:
        if _pausers == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pausers += 1
    try:
        yield
    finally:
        with _lock:
            _pausers -= 1
            if _pausers == 0 and _was_enabled:
                gc.enable()
