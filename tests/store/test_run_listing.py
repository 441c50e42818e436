"""Listing runs a page at a time: a store of any size starts listing at once, in bounded memory."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import event

from lhbench.schema import Label, RunStatus
from lhbench.store import Store
from lhbench.store.tables import RunRow
from tests.factories import make_run, make_trajectory

N = 1_203  # more than two pages of 500, the last one short


@pytest.fixture
def loads() -> Iterator[list[int]]:
    """How many run rows the ORM has loaded so far (one count, bumped per row)."""
    seen = [0]

    def bump(*_: object) -> None:
        seen[0] += 1

    event.listen(RunRow, "load", bump)
    try:
        yield seen
    finally:
        event.remove(RunRow, "load", bump)


def _seed(store: Store) -> None:
    for i in range(N):
        store.save_run(make_run(f"r{i:05d}", harness="codex" if i % 2 else "claude-code"))
    store.save_trajectory(make_trajectory("r00001"))
    store.save_labels(
        [
            # two sources: the last one by name with a decided label is the run's outcome
            Label(run_id="r00001", passed=False, source="a-check"),
            Label(run_id="r00001", passed=True, source="b-check"),
            Label(run_id="r00002", passed=None, source="a-check", error="timed out"),
            Label(run_id="r01202", passed=False, source="verify:verify.py"),
        ]
    )


def test_run_summaries_stream_a_page_at_a_time(store: Store, loads: list[int]) -> None:
    _seed(store)
    before = loads[0]
    it = store.iter_run_summaries(page=500)
    first = next(it)
    # the first summary comes after one page of runs, not after every run of the store
    assert first.run.id == "r00000" and loads[0] - before <= 500
    rest = list(it)
    got = [first, *rest]
    assert [s.run.id for s in got] == [f"r{i:05d}" for i in range(N)]
    by_id = {s.run.id: s for s in got}
    assert (by_id["r00001"].steps, by_id["r00001"].tool_calls, by_id["r00001"].errors) == (7, 2, 1)
    assert by_id["r00001"].passed is True and by_id["r01202"].passed is False
    assert by_id["r00002"].passed is None and by_id["r00000"].passed is None
    assert by_id["r00000"].steps == 0
    # filters apply on every page; run_summaries is the same listing, whole
    codex = list(store.iter_run_summaries(harness="codex", page=100))
    assert [s.run.id for s in codex] == [f"r{i:05d}" for i in range(1, N, 2)]
    assert store.run_summaries(harness="codex") == codex


def test_a_page_boundary_loses_and_repeats_nothing(store: Store) -> None:
    for i in range(10):
        store.save_run(make_run(f"r{i}", status=RunStatus.COMPLETED))
    ids = [s.run.id for s in store.iter_run_summaries(page=5)]  # exactly two full pages
    assert ids == [f"r{i}" for i in range(10)]
