"""The reply cache in front of the store: what is answered while a lookup runs is known."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

from lhbench.models.ask import Reply
from lhbench.models.replies import CacheRow, ReplyCache


class SlowStore:
    """A store whose lookup blocks until told to answer (with nothing written yet)."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.go = threading.Event()
        self.rows: list[CacheRow] = []

    def get_cached_responses(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        self.asked.set()
        self.go.wait(10)
        return {}

    def put_cached_responses(self, rows: Sequence[CacheRow]) -> int:
        self.rows.extend(rows)
        return len(rows)


def test_a_reply_put_while_the_lookup_queries_is_found_not_absent() -> None:
    store = SlowStore()
    cache = ReplyCache(store)
    reply = Reply(tool_args='{"score": 4}', input_tokens=10, output_tokens=3)

    async def main() -> tuple[Reply | None, Reply | None]:
        looking = asyncio.create_task(cache.lookup("k1"))
        await asyncio.to_thread(store.asked.wait, 10)
        # an identical request finishes while the query is out: put, not yet written
        cache.put("k1", "openai:judge", reply)
        store.go.set()
        found = await looking
        return found, await cache.lookup("k1")

    found, again = asyncio.run(main())
    assert found == reply  # the lookup saw it: no second model call for the same request
    assert again == reply
    assert [r.key for r in cache.drain()] == ["k1"]  # still written once, by the job
