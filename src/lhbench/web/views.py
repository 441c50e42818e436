"""Page data computed from the store, cached until the store changes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from lhbench.report import ReportData
from lhbench.store import Store

__all__ = ["StoreCache"]


class StoreCache:
    """Memoises expensive page data (leaderboards, agreement) per store state.

    The state is the row counts of the store's tables: any new run, grade, vote or
    verdict invalidates every cached value.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._stamp: tuple[int, ...] | None = None
        self._values: dict[Any, Any] = {}
        self._data: ReportData | None = None

    def _fresh(self) -> None:
        stamp = tuple(self.store.counts().values())
        if stamp != self._stamp:
            self._stamp = stamp
            self._values.clear()
            self._data = None

    def data(self) -> ReportData:
        """Everything the report reads (loaded once per store state)."""
        with self._lock:
            self._fresh()
            if self._data is None:
                self._data = ReportData.from_store(self.store)
            return self._data

    def get(self, key: Any, compute: Callable[[ReportData], Any]) -> Any:
        """A cached value for ``key``, computed from the report data on a miss."""
        data = self.data()
        with self._lock:
            if key not in self._values:
                self._values[key] = compute(data)
            return self._values[key]
