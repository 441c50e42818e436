"""The report's cost grows with the store, not with its square: bounds on queries and collections.

A store of a team's size (bench/scale.py: 10,000 runs, 100,000 grades) made ``lhbench report``
take over 300 s. Two causes, each bounded here without a wall clock:

- the failures section read each run's steps with a query of its own (10,000 queries);
- the cyclic garbage collector walked every Grade loaded so far, over and over, while the
  store loaded (22 of list_grades' 30 s).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from lhbench.reporting import ReportData, build_sections
from lhbench.schema import (
    DimensionScore,
    Grade,
    JudgeIdentity,
    JudgeKind,
    Scale,
    TierKind,
    Trajectory,
)
from lhbench.store import Store
from tests.factories import make_run, make_trajectory

JUDGES = ("openai:judge-a", "openai:judge-b", "openai:judge-c")


def _grade(run_id: str, judge: str, score: int) -> Grade:
    return Grade(
        id=f"g-{run_id}-{judge}",
        run_id=run_id,
        rubric_id="r",
        rubric_version="1",
        rubric_hash="h" * 64,
        tier=TierKind.OUTPUT,
        judge=JudgeIdentity(kind=JudgeKind.LLM, model=judge, settings={"temperature": 0}),
        scores=[DimensionScore(dimension_id="d", scale=Scale.ONE_TO_FIVE, score=score)],
        tier_score=float(score),
        key=f"k-{run_id}-{judge}",
    )


def _seed(store: Store, n: int) -> None:
    for i in range(n):
        rid = f"run-{i:04d}"
        store.save_run(make_run(rid, task_id=f"t{i % 7}", harness=("claude-code", "codex")[i % 2]))
        traj = make_trajectory(rid)
        store.save_trajectory(Trajectory(run_id=rid, steps=traj.steps))
        for j, judge in enumerate(JUDGES):
            store.save_grade(_grade(rid, judge, 1 + (i + j) % 5))


@contextmanager
def _counting(store: Store) -> Iterator[list[str]]:
    seen: list[str] = []

    def count(*args: object) -> None:
        seen.append(str(args[2]))

    event.listen(store.engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        event.remove(store.engine, "before_cursor_execute", count)


def _report_queries(url: str) -> int:
    with Store.open(url) as store, _counting(store) as seen:
        data = ReportData.from_store(store, check_packs=False)
        sections = build_sections(data)
    assert any(s.title == "Failures and recovery" and not s.empty for s in sections)
    return len(seen)


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[int, str]:
    out = {}
    for n in (10, 300):
        url = f"sqlite:///{tmp_path_factory.mktemp('scale') / f'{n}.db'}"
        with Store.open(url) as store:
            _seed(store, n)
        out[n] = url
    return out


def test_report_queries_do_not_grow_with_runs(stores: dict[int, str]) -> None:
    small, large = _report_queries(stores[10]), _report_queries(stores[300])
    # every run's steps, grades, labels: a query per kind (per slice of 500 runs), never per run
    assert large == small, f"{small} queries for 10 runs, {large} for 300"


def test_loading_the_store_runs_no_garbage_collection(stores: dict[int, str]) -> None:
    with Store.open(stores[300]) as store:
        gc.collect()
        before = [s["collections"] for s in gc.get_stats()]
        data = ReportData.from_store(store, check_packs=False)
        build_sections(data)
        after = [s["collections"] for s in gc.get_stats()]
    assert len(data.all_grades) == 900
    # the collector is paused while the store loads and while the sections are computed;
    # the one collection each pause leaves pending may run as it ends
    ran = [a - b for a, b in zip(after, before, strict=True)]
    assert sum(ran) <= 2, f"collections per generation: {ran}"
    assert gc.isenabled()


def _document_work(url: str, monkeypatch: pytest.MonkeyPatch, out: Path) -> tuple[int, int]:
    """Grade documents validated and judge settings hashed while ``lhbench report`` runs."""
    import lhbench

    validated, hashed = [0], [0]
    validate, key = Grade.model_validate, JudgeIdentity.key

    def counting_validate(obj: object, *args: Any, **kw: Any) -> Grade:
        validated[0] += 1
        return validate(obj, *args, **kw)

    def counting_key(self: JudgeIdentity) -> str:
        hashed[0] += 1
        return key.fget(self)  # type: ignore[attr-defined,no-any-return]

    with monkeypatch.context() as m:
        m.setattr(Grade, "model_validate", counting_validate)
        m.setattr(JudgeIdentity, "key", property(counting_key))
        with Store.open(url) as store:
            rep = lhbench.report(store=store, out=out)
    assert rep.files is not None and "Leaderboard" in rep.files.markdown.read_text()
    return validated[0], hashed[0]


def test_the_report_builds_no_grade_and_hashes_no_judge_per_grade(
    stores: dict[int, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # 30 and 900 grades: a Grade per grade row and a settings hash per grade and section
    # were most of a million-grade report's time and memory
    small = _document_work(stores[10], monkeypatch, tmp_path / "small")
    large = _document_work(stores[300], monkeypatch, tmp_path / "large")
    assert small[0] == large[0] == 0, f"Grade documents validated: {small[0]}, {large[0]}"
    assert large[1] == small[1], f"judge keys hashed for 10 runs: {small[1]}, 300: {large[1]}"
