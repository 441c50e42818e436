"""A judging job's requests, prepared a window of units at a time, ahead of the calls.

Once the runner knows which units it will run (the plan minus what is stored), a judging
job prepares them in plan order, a window at a time, in a worker thread: each run's
evidence is loaded once, each prompt rendered once, each request encoded once, and the
cache keys of the whole window looked up in one query. Windows start small and double
(16, 32, … up to 1,024 units), so the first calls go out within milliseconds instead of
after the whole plan is rendered, and at most two windows are in memory (the next is
prepared while the current one runs).

Units the runner may not run (a stored final failure, re-asked only with
``--retry-errors``) are not prepared ahead; the job prepares such a unit when it runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Generic, TypeVar

from lhbench.jobs.runner import Unit
from lhbench.models import CacheRow, ReplyCache
from lhbench.store import ResultState

__all__ = ["RequestWindows", "drain_caches"]

P = TypeVar("P")
X = TypeVar("X")

DEFAULT_WINDOW = 1024
FIRST_WINDOW = 16


class RequestWindows(Generic[P, X]):
    """Prepared work per unit key, made a window at a time by ``prepare`` (run in a thread).

    Args:
        prepare: Blocking: the prepared work of each unit of a window, by unit key.
        size: Units in the largest window.
        first: Units in the first window (each next one twice the last, up to ``size``).
    """

    def __init__(
        self,
        prepare: Callable[[Sequence[Unit[P]]], dict[str, X]],
        *,
        size: int = DEFAULT_WINDOW,
        first: int = FIRST_WINDOW,
    ) -> None:
        if size < 1 or first < 1:
            raise ValueError("a window holds at least one unit")
        self._prepare = prepare
        self.size = size
        self.first = min(first, size)
        self._windows: list[list[Unit[P]]] = []
        self._where: dict[str, int] = {}
        self._ready: dict[int, asyncio.Future[dict[str, X]]] = {}
        self._left: dict[int, int] = {}

    def plan(self, units: Sequence[Unit[P]], states: Mapping[str, ResultState]) -> int:
        """Split the units the runner will run (not stored, or stored retryable) into windows.

        Returns how many units will be prepared ahead.
        """
        todo = list({u.key: u for u in units if states.get(u.key) in (None, "retryable")}.values())
        self._windows = []
        start, width = 0, self.first
        while start < len(todo):
            self._windows.append(todo[start : start + width])
            start, width = start + width, min(2 * width, self.size)
        self._where = {u.key: w for w, window in enumerate(self._windows) for u in window}
        self._left = {w: len(window) for w, window in enumerate(self._windows)}
        self._ready = {}
        return len(todo)

    def _start(self, w: int) -> asyncio.Future[dict[str, X]]:
        fut = self._ready.get(w)
        if fut is None:
            fut = asyncio.ensure_future(asyncio.to_thread(self._prepare, self._windows[w]))
            self._ready[w] = fut
        return fut

    async def get(self, unit: Unit[P]) -> X | None:
        """The unit's prepared work (None when it was not planned ahead: prepare it alone)."""
        w = self._where.pop(unit.key, None)
        if w is None:
            return None
        fut = self._start(w)
        if w + 1 < len(self._windows):
            self._start(w + 1)  # the next window is prepared while this one runs
        prepared = await asyncio.shield(fut)
        item = prepared.pop(unit.key, None)
        self._left[w] -= 1
        if self._left[w] == 0:
            del self._ready[w]  # the window's evidence and requests can go
        return item


def drain_caches(caches: Collection[ReplyCache], store: Any) -> list[CacheRow]:
    """The pending cache rows to write with a batch of results into ``store``.

    A cache kept in another store (or behind an adapter) is written on its own.
    """
    rows: list[CacheRow] = []
    for cache in caches:
        if cache.store is store:
            rows.extend(cache.drain())
        elif cache.pending:
            cache.flush()
    return rows
