"""Grades oldest first, ordered in numpy: the same order as ``ORDER BY created_at, id``.

The store reads a million grades unsorted with their sort keys and orders them itself
(:mod:`lhbench.store.grade_order`); these tests hold that order to the database's own on
both backends: ties in time broken by id, timestamps of mixed precision and dates, ids
of mixed case, digits, punctuation and non-ASCII letters, SQLite texts of other forms
and of other types, and a PostgreSQL id collation that is not bytewise.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from sqlalchemy import text

from lhbench.store import Store
from lhbench.store.grade_order import (
    as_bytes,
    bytewise_keys,
    chronological_order,
    is_bytewise_collation,
    sqlite_time_keys,
)
from lhbench.store.grade_parts import JudgeName
from tests.factories import make_grade

# ids whose bytewise order differs from a dictionary's (case, digits, punctuation, accents)
IDS = ["g-10", "g-9", "G-1", "g_1", "g1", "g-1", "gé", "gz", "g-a", "g-B", "g", "g-é", "h"]


def _times() -> list[datetime]:
    base = datetime(2026, 1, 31, 23, 59, 59, tzinfo=UTC)
    return [
        base,
        base,  # a tie
        base + timedelta(microseconds=1),
        base - timedelta(microseconds=1),
        base + timedelta(seconds=1),  # the next day, month
        datetime(2026, 1, 31, 23, 59, 59, 500_000, tzinfo=UTC),
        datetime(2025, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
        datetime(2026, 2, 1, tzinfo=UTC),  # equal to base + 1 s
        datetime(2026, 10, 1, tzinfo=UTC),
        datetime(2026, 2, 1, 1, tzinfo=UTC) - timedelta(hours=1),  # base + 1 s again
    ]


def _save(store: Store, n: int = 60, seed: int = 0) -> None:
    rng = random.Random(seed)
    times = _times()
    grades = []
    for i in range(n):
        gid = f"{rng.choice(IDS)}-{rng.randrange(3)}" if i % 3 else rng.choice(IDS) + str(i)
        if any(g.id == gid for g in grades):
            gid += f"~{i}"
        scores = (rng.randint(1, 5), rng.randint(1, 5))
        grades.append(
            make_grade(f"run-{i:03d}", id=gid, created_at=rng.choice(times), scores=scores)
        )
    assert store.save_grades(grades) == n


def _sql_order(store: Store) -> list[str]:
    with store.engine.connect() as conn:
        return list(
            conn.execute(text("SELECT run_id FROM grades ORDER BY created_at, id")).scalars()
        )


def _read_order(store: Store, **kw: bool) -> list[str]:
    cols = store.grade_columns({}, **kw)
    return [cols.run_ids[i] for i in cols.run.tolist()]


def test_grades_are_read_in_the_order_of_order_by_created_at_and_id(store: Store) -> None:
    _save(store)
    expected = _sql_order(store)
    assert len(set(expected)) == len(expected) == 60  # one grade per run: runs name rows
    assert _read_order(store) == expected
    # the database's own sort, kept for what numpy cannot order, agrees
    assert _read_order(store, sort_in_database=True) == expected
    # every column follows the same permutation
    a, b = store.grade_columns({}), store.grade_columns({}, sort_in_database=True)
    for cols in (a, b):
        assert len(cols) == 60
    decoded = [
        [
            (c.run_ids[r], c.judges[j], c.score_lists[s], t)
            for r, j, s, t in zip(
                c.run.tolist(),
                c.judge.tolist(),
                c.scores.tolist(),
                c.tier_score.tolist(),
                strict=True,
            )
        ]
        for c in (a, b)
    ]
    assert decoded[0] == decoded[1]


def test_sqlite_texts_of_other_forms_and_types_keep_the_database_order(tmp_path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 's.db'}")
    try:
        _save(store, n=40, seed=1)
        with store.engine.begin() as conn:
            # other writers' forms: ISO with T and offset, no fraction, a short date
            conn.execute(
                text(
                    "UPDATE grades SET created_at = CASE rowid % 8"
                    " WHEN 0 THEN '2026-01-31T23:59:59+00:00'"
                    " WHEN 6 THEN '2026-01-31 23:59:59.5'"
                    " WHEN 2 THEN '2026-1-5 1:02:03' WHEN 4 THEN '2026-01-31 23:59:59'"
                    " ELSE created_at END"
                    " WHERE rowid % 2 = 0"
                )
            )
        expected = _sql_order(store)
        assert _read_order(store) == expected
        with store.engine.begin() as conn:
            # a number where a text belongs: SQLite sorts numbers before any text
            conn.execute(text("UPDATE grades SET created_at = 12345 WHERE rowid % 5 = 0"))
        expected = _sql_order(store)
        assert _read_order(store) == expected
    finally:
        store.close()


def test_postgresql_ids_under_another_collation_are_sorted_by_the_database(
    pg_url: str,
) -> None:
    store = Store.open(pg_url)
    try:
        _save(store, n=40, seed=2)
        assert store._ids_sort_bytewise() is True  # the test server's C.UTF-8
        with store.engine.begin() as conn:
            conn.execute(
                text('ALTER TABLE grades ALTER COLUMN id TYPE varchar(200) COLLATE "und-x-icu"')
            )
        assert store._ids_sort_bytewise() is False
        expected = _sql_order(store)
        # the ICU order differs from the bytes' here, so numpy's would be wrong
        with store.engine.connect() as conn:
            by_bytes = list(
                conn.execute(
                    text('SELECT run_id FROM grades ORDER BY created_at, id COLLATE "C"')
                ).scalars()
            )
        assert by_bytes != expected
        assert _read_order(store) == expected
    finally:
        store.close()


def test_sqlite_time_keys_order_as_the_texts_do() -> None:
    rng = random.Random(3)
    texts = [
        f"{rng.choice([1999, 2025, 2026, 9999]):04d}-{rng.randint(1, 12):02d}-"
        f"{rng.randint(1, 31):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
        f"{rng.randint(0, 59):02d}.{rng.choice([0, 1, 999_999, rng.randrange(10**6)]):06d}"
        for _ in range(3000)
    ]
    texts += texts[:500]  # ties
    keys = sqlite_time_keys(as_bytes(texts))
    assert len(keys) == 1  # parsed: one integer per text
    order = np.argsort(keys[0], kind="stable").tolist()
    assert [texts[i] for i in order] == sorted(texts)
    # equal texts, equal keys; different texts, different keys
    assert len(np.unique(keys[0])) == len(set(texts))


@pytest.mark.parametrize(
    "texts",
    [
        ["2026-01-31 23:59:59.000000", "2026-01-31T23:59:59+00:00", "2026-01-31 23:59:59"],
        ["2026-13-01 00:00:00.000000", "2026-12-31 23:59:59.999999"],  # month out of range
        ["2026-04-31 00:00:00.000000", "2026-05-01 00:00:00.000000"],  # one number apart
        ["2026-01-01 00:00:00.00000a", "2026-01-01 00:00:00.000009"],
        ["é", "e", "z", "", "E", "ee"],
    ],
)
def test_other_texts_are_compared_by_their_bytes(texts: list[str]) -> None:
    keys = sqlite_time_keys(as_bytes(texts))
    order = np.lexsort(keys[::-1]).tolist() if keys else list(range(len(texts)))
    assert [texts[i] for i in order] == sorted(texts, key=str.encode)


def test_bytewise_keys_order_as_memcmp() -> None:
    rng = random.Random(4)
    alphabet = "aAzZ09-_.~é€ "
    values = [
        "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 20))) for _ in range(2000)
    ]
    keys = bytewise_keys(as_bytes(values))
    order = np.lexsort(keys[::-1]).tolist()
    assert [values[i] for i in order] == sorted(values, key=str.encode)


def test_chronological_order_breaks_ties_by_id_only() -> None:
    rng = random.Random(5)
    times = [rng.randrange(20) for _ in range(500)]
    ids = [f"grade-{rng.getrandbits(64):016x}{rng.choice(['', 'x', 'É'])}" for _ in range(500)]
    order = chronological_order([np.array(times, dtype=np.int64)], as_bytes(ids)).tolist()
    expected = sorted(range(500), key=lambda i: (times[i], ids[i].encode()))
    assert order == expected
    # no ties: the time alone, ids never compared
    distinct = np.arange(500, dtype=np.int64)[::-1].copy()
    assert chronological_order([distinct], as_bytes(ids)).tolist() == list(range(500))[::-1]


def test_which_collations_sort_bytewise() -> None:
    assert is_bytewise_collation("C") and is_bytewise_collation("POSIX")
    assert is_bytewise_collation("C.UTF-8", "c") and is_bytewise_collation("C.utf8", "c")
    assert is_bytewise_collation("ucs_basic")
    assert is_bytewise_collation("C.UTF-8", "b")
    assert not is_bytewise_collation("en_US.UTF-8", "c")
    assert not is_bytewise_collation("und-x-icu", "i")
    assert not is_bytewise_collation("C.UTF-8", "i")


def test_judge_names_are_read_with_the_rows(store: Store) -> None:
    _save(store, n=12, seed=6)
    key = store.grade_columns({}).judges[0].key
    cols = store.grade_columns({key: JudgeName(key, "gpt")})
    assert {j.label for j in cols.judges} == {"gpt"}
