"""Pausing Python's cyclic garbage collector while a report loads or computes.

Loading a team's store builds hundreds of thousands of long-lived objects (a Grade is
a dozen), and every few thousand allocations the collector walks them all again: on a
10,000-run store it spent 22 of the 30 s ``list_grades`` took. The objects form no
cycles worth finding mid-load, so the collector waits and runs once afterwards.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off (reference counting still frees).

    Nests; the collector is back on afterwards only if it was on before.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
