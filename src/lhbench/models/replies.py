"""The response cache as a job sees it: looked up in bulk, written in batches.

A job knows every request it will make before it makes them, so it looks their keys up
in one query (:meth:`ReplyCache.preload`) and no call pays for a lookup. New replies are
kept in memory and handed to the job (:meth:`ReplyCache.drain`), which writes them in the
same transaction as the results they produced; what no job took is written when the
model pool closes (:meth:`ReplyCache.flush`). Recent replies stay in memory, so identical
requests in one job cost one call even before the first reply is written.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from lhbench.models.ask import Reply

__all__ = ["BatchedResponseCache", "CacheRow", "ReplyCache"]


@dataclass(frozen=True, slots=True)
class CacheRow:
    """One response to keep: its request key, the model, the reply document."""

    key: str
    model: str
    response: dict[str, Any]


@runtime_checkable
class BatchedResponseCache(Protocol):
    """Where responses are kept, read and written many at a time (the Store implements it)."""

    def get_cached_responses(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The stored response document of each key that has one."""
        ...

    def put_cached_responses(self, rows: Sequence[CacheRow]) -> int:
        """Keep responses (first write of a key wins); returns how many were new."""
        ...


class ReplyCache:
    """Replies by request key: memory in front of a batched store.

    Args:
        store: The persistent cache (None: memory only, as with ``--no-cache`` nothing is
            read or written; callers then do not create one).
        capacity: Replies kept in memory after use.
    """

    def __init__(self, store: BatchedResponseCache, *, capacity: int = 8192) -> None:
        self.store = store
        self.capacity = capacity
        self._recent: OrderedDict[str, Reply] = OrderedDict()
        self._preloaded: dict[str, Reply] = {}
        self._absent: set[str] = set()
        self._pending: dict[str, CacheRow] = {}
        # rows are added on the event loop and taken by a job's writer thread
        self._lock = threading.Lock()

    def preload(self, keys: Iterable[str]) -> int:
        """Look ``keys`` up in one query (chunked by the store); returns how many were found.

        Blocking: a job calls it from a worker thread while it prepares its requests.
        """
        wanted = [
            k
            for k in dict.fromkeys(keys)
            if k not in self._recent and k not in self._preloaded and k not in self._pending
        ]
        if not wanted:
            return 0
        found = self.store.get_cached_responses(wanted)
        hits = 0
        for k in wanted:
            doc = found.get(k)
            reply = Reply.from_doc(doc) if doc is not None else None
            if reply is None:
                self._absent.add(k)
            else:
                self._preloaded[k] = reply
                hits += 1
        return hits

    def get(self, key: str) -> Reply | None:
        """A reply known without a query (recent, preloaded or pending), or None."""
        reply = self._recent.get(key)
        if reply is not None:
            self._recent.move_to_end(key)
            return reply
        reply = self._preloaded.pop(key, None)
        if reply is None and (row := self._pending.get(key)) is not None:
            reply = Reply.from_doc(row.response)
        if reply is not None:
            self._remember(key, reply)
        return reply

    async def lookup(self, key: str) -> Reply | None:
        """The cached reply: from memory, or one query for a key no preload looked up."""
        reply = self.get(key)
        if reply is not None or key in self._absent:
            return reply
        found = await asyncio.to_thread(self.store.get_cached_responses, [key])
        doc = found.get(key)
        reply = Reply.from_doc(doc) if doc is not None else None
        if reply is None:
            # an identical request may have been answered (put, not yet written) while the
            # query ran: then it is known, not absent, and no second call is made
            reply = self.get(key)
            if reply is None:
                self._absent.add(key)
        else:
            self._remember(key, reply)
        return reply

    def put(self, key: str, model: str, reply: Reply) -> None:
        """A new reply: remembered, and pending until a job (or :meth:`flush`) writes it."""
        self._remember(key, reply)
        self._absent.discard(key)
        with self._lock:
            self._pending.setdefault(key, CacheRow(key, model, reply.to_doc()))

    @property
    def pending(self) -> int:
        """Rows not written yet."""
        return len(self._pending)

    def drain(self) -> list[CacheRow]:
        """Take the pending rows (the caller writes them with its results)."""
        with self._lock:
            rows, self._pending = list(self._pending.values()), {}
        return rows

    def flush(self) -> int:
        """Write what is pending; returns how many rows were new."""
        rows = self.drain()
        return self.store.put_cached_responses(rows) if rows else 0

    def _remember(self, key: str, reply: Reply) -> None:
        self._recent[key] = reply
        self._recent.move_to_end(key)
        while len(self._recent) > self.capacity:
            self._recent.popitem(last=False)
