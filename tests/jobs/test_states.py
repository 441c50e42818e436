import os
from pathlib import Path

import pytest

from lhbench.envs import PostgresDatabases
from tests.jobs.helpers import fixture_states

PG_URL = os.environ.get("LHBENCH_TEST_PG_URL")
SQL_TASKS = (
    "add-column",
    "delete-inactive",
    "fix-typo",
    "monthly-summary",
    "raise-prices",
    "top-customers",
)


def test_pack_has_twelve_tasks_each_with_two_passing_and_two_failing(tmp_path: Path) -> None:
    items = fixture_states(tmp_path)
    by_task: dict[str, list[str]] = {}
    for it in items.values():
        by_task.setdefault(it.task.id, []).append(it.name)
    assert len(by_task) >= 12
    kinds = {it.state.kind.value for it in items.values()}
    assert kinds == {"filesystem", "sql"}
    for names in by_task.values():
        assert (
            sum(n.startswith("pass") for n in names) >= 2
            and sum(n.startswith("fail") for n in names) >= 2
        )


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_every_bundled_trajectory_replays_to_its_label(backend: str, tmp_path: Path) -> None:
    if backend == "postgresql" and not PG_URL:
        pytest.skip("LHBENCH_TEST_PG_URL is not set (CI sets it; see .ci/run)")
    pg = PostgresDatabases(PG_URL) if backend == "postgresql" else None
    try:
        sql_only = {f"sql-{t}" for t in SQL_TASKS} if pg else None
        out = list(fixture_states(tmp_path, sql_only, postgres=pg).values())
    finally:
        if pg is not None:
            pg.drop_all()
    assert len(out) >= (24 if pg else 48)
    wrong = [
        (r.run.id, r.label.detail if r.label else None)
        for r in out
        if r.label is None or r.label.passed != r.name.startswith("pass")
    ]
    assert wrong == []
    # replays are isolated: every run has its own state
    states = {r.state.ref.root or r.state.ref.db_url for r in out}
    assert len(states) == len(out)
