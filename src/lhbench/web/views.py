"""Page data computed from the store, cached until the store's version changes.

The version is a counter that database triggers bump on every write to runs, grades,
verdicts, votes, labels, artifacts, packs and comparisons (``Store.data_version``), so an
in-place update (a label replaced, a run's status or tags changed) invalidates the cache
as surely as a new row, whichever process wrote it. Each value is computed once per
version even when several requests ask for it at the same time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from lhbench.store import Store

__all__ = ["StoreCache"]

T = TypeVar("T")
# updatable values kept across writes (the overview's default grouping and one more)
KEEP_PREVIOUS = 2


class StoreCache:
    """Memoises page data per store version."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._version: int | None = None
        self._values: dict[Hashable, Any] = {}
        self._key_locks: dict[Hashable, threading.Lock] = {}
        self._previous: dict[Hashable, Any] = {}
        self._updatable: set[Hashable] = set()

    def version(self) -> int:
        """The store's current version (one small query)."""
        return self.store.data_version()

    def get(
        self,
        key: Hashable,
        compute: Callable[[], T],
        update: Callable[[T], T] | None = None,
    ) -> T:
        """The value for ``key`` at the store's current version, computed on a miss.

        With ``update``, a miss after a write brings the previous version's value up to
        date (``update(old)``) instead of computing it from scratch.
        """
        version = self.version()
        with self._lock:
            if version != self._version:
                self._version = version
                # values that know how to follow a write are kept for it: the last few
                # asked (an analysis of 100,000 runs holds a few hundred MB)
                for k, v in self._values.items():
                    if k in self._updatable:
                        self._previous.pop(k, None)  # newest last
                        self._previous[k] = v
                while len(self._previous) > KEEP_PREVIOUS:
                    self._previous.pop(next(iter(self._previous)))
                self._values.clear()
                self._key_locks.clear()
            if key in self._values:
                return self._values[key]  # type: ignore[no-any-return]
            lock = self._key_locks.setdefault(key, threading.Lock())
        with lock:
            with self._lock:
                if self._version == version and key in self._values:
                    return self._values[key]  # type: ignore[no-any-return]
                previous = self._previous.pop(key, None) if update is not None else None
                if update is not None:
                    self._updatable.add(key)
            value = compute() if previous is None or update is None else update(previous)
            with self._lock:
                # a write landed while computing: keep the value only for its own version
                if self._version == version:
                    self._values[key] = value
                elif update is not None:
                    # still the newest there is to update from
                    self._previous[key] = value
            return value
