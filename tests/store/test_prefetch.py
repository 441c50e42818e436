"""PostgreSQL batches fetched one ahead on a thread: same rows, errors raised, no thread left."""

from __future__ import annotations

import threading

import psycopg
import pytest
from sqlalchemy import text

from lhbench.store import Store


@pytest.fixture
def pg(pg_url: str):
    with Store.open(pg_url) as store:
        yield store


def _prefetchers() -> int:
    return sum(t.name == "lhbench-prefetch" for t in threading.enumerate())


def test_every_row_in_order_in_batches_of_the_size(pg: Store) -> None:
    stmt = text("SELECT g, repeat('x', mod(g, 7)) FROM generate_series(1, 50000) AS g ORDER BY g")
    batches = list(pg._raw_batches(stmt, 7000))
    assert [len(b) for b in batches] == [7000] * 7 + [1000]
    assert [r[0] for b in batches for r in b] == list(range(1, 50001))
    assert _prefetchers() == 0


def test_leaving_early_stops_the_thread_and_frees_the_connection(pg: Store) -> None:
    for _ in range(5):
        gen = pg._raw_batches(text("SELECT g FROM generate_series(1, 100000) AS g"), 1000)
        assert len(next(gen)) == 1000
        gen.close()
        assert _prefetchers() == 0
    with pg.engine.connect() as conn:  # the pool's connections are usable
        assert conn.execute(text("SELECT 1")).scalar() == 1


def test_a_failure_in_a_later_batch_is_raised_to_the_reader(pg: Store) -> None:
    stmt = text("SELECT 1 / (30000 - g) FROM generate_series(1, 40000) AS g")
    got = 0
    with pytest.raises(psycopg.errors.DivisionByZero):
        for batch in pg._raw_batches(stmt, 1000):
            got += len(batch)
    assert got < 30000
    assert _prefetchers() == 0
