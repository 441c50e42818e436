"""Lean reads for pages, the store version, and arena votes decided once, on both backends."""

from __future__ import annotations

import dataclasses
import threading
import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from lhbench.schema import (
    Artifact,
    FailureKind,
    GradeStatus,
    Label,
    PreferenceVote,
    RunStatus,
)
from lhbench.store import Store
from lhbench.store.aggregates import (
    CELL_ERRORS,
    CELL_GRADES,
    CELL_PARSE,
    CELL_RETRY,
    CELL_SCORED,
    CELL_TOTAL,
    CELL_TOTAL_SQ,
)
from tests.factories import make_grade, make_run, make_trajectory


def _bumps(store: Store, write: Callable[[], object]) -> bool:
    before = store.data_version()
    write()
    return store.data_version() > before


def test_every_write_an_analysed_table_sees_bumps_the_version(store: Store) -> None:
    run = make_run("r1")
    assert _bumps(store, lambda: store.save_run(run))
    # in place: the same row updated, no count changes
    assert _bumps(
        store, lambda: store.save_run(run.model_copy(update={"status": RunStatus.FAILED}))
    )
    art = Artifact(run_id="r1", name="a.txt", sha256="0" * 64, size=1, content=b"x")
    assert _bumps(store, lambda: store.save_artifact(art))
    assert _bumps(store, lambda: store.save_grade(make_grade("r1")))
    label = Label(run_id="r1", passed=True, source="verify:t/verify.py")
    assert _bumps(store, lambda: store.save_label(label))
    assert _bumps(store, lambda: store.save_label(label.model_copy(update={"passed": False})))
    vote = PreferenceVote(
        id="v1", pack_id="p", task_id="t", run_a="r1", run_b="r2", left="a", winner="a",
        annotator="x",
    )  # fmt: skip
    assert _bumps(store, lambda: store.save_vote(vote))
    assert _bumps(
        store,
        lambda: store.add_comparison(
            token="t1", annotator="ann", pack_id="p", task_id="t", run_a="r1", run_b="r2", left="a"
        ),
    )
    assert _bumps(store, lambda: store.delete_run("r1"))
    # reads do not
    v = store.data_version()
    store.list_runs(), store.grade_summary({}), store.run_facts(), store.list_comparisons()
    assert store.data_version() == v


def test_run_facts_page_and_cells(store: Store) -> None:
    for i in range(7):
        store.save_run(
            make_run(f"r{i}", harness="a" if i % 2 else "b", versions={"skill": f"v{i % 3}"})
        )
    store.save_trajectory(make_trajectory("r1"))
    facts = store.run_facts()
    assert [f.id for f in facts] == [f"r{i}" for i in range(7)]
    assert facts[0].versions == {"skill": "v0"} and facts[0].input_tokens == 1200
    # every field from its own column (the facts are built positionally)
    failed = make_run("r9", harness="c", versions={"k": "x"}).model_copy(
        update={
            "status": RunStatus.FAILED,
            "repeat": 3,
            "cost_usd": 0.25,
            "harness_version": "2.0.1",
            "failure_kind": FailureKind.INFRASTRUCTURE,
            "started_at": datetime(2026, 5, 1, 12, tzinfo=UTC),
        }
    )
    store.save_run(failed)
    got = store.run_facts()[-1]
    want = (
        failed.id, failed.pack_id, failed.task_id, "c", "2.0.1", failed.model, {"k": "x"},
        "failed", 3, 0.25, failed.usage.input_tokens, failed.usage.output_tokens,
        None, "infrastructure",
    )  # fmt: skip
    assert dataclasses.astuple(got) == want
    [(paged, _)] = [store.run_page(harness="c")]
    assert paged[0].started_at == failed.started_at and paged[0].failure_kind == "infrastructure"
    page, total = store.run_page(harness="a", sort="id", descending=True, offset=1, limit=2)
    assert total == 3 and [f.id for f in page] == ["r3", "r1"]
    page, total = store.run_page(versions={"skill": "v2"})
    assert total == 2 and {f.id for f in page} == {"r2", "r5"}
    counts = store.step_counts(["r1", "r2"])
    assert set(counts) == {"r1"} and (counts["r1"].steps, counts["r1"].tool_calls) == (7, 2)
    assert counts["r1"].errors == 1
    store.save_grade(make_grade("r1", scores=(4, 3, 5, 2)))
    store.save_grade(make_grade("r1", scores=(2, 2, 2, 2), repeat=1))
    summary = store.grade_summary({"r1": "pack"})
    [(key, cell)] = summary.cells.items()
    assert key[0] == "r1" and cell[CELL_GRADES] == 2 and cell[CELL_SCORED] == 2
    first = 0.3 * 4 + 0.25 * 3 + 0.25 * 5 + 0.2 * 2
    assert cell[CELL_TOTAL] == pytest.approx(first + 2.0)
    assert cell[CELL_TOTAL_SQ] == pytest.approx(first**2 + 4.0)
    [combo] = summary.combos
    assert combo.pack_id == "pack" and combo.grades == 2
    assert combo.last_at == max(g.created_at for g in store.list_grades())
    # a grade whose run is unknown counts under no pack
    [orphan] = store.grade_summary({}).combos
    assert orphan.pack_id is None and orphan.grades == 2


def _vote(token: str, annotator: str = "ann") -> PreferenceVote:
    return PreferenceVote(
        id=f"vote-{token}", pack_id="p", task_id="t", run_a="r1", run_b="r2", left="a",
        winner="a", annotator=annotator,
    )  # fmt: skip


def test_a_comparison_is_decided_once(store: Store) -> None:
    store.add_comparison(
        token="t1", annotator="ann", pack_id="p", task_id="t", run_a="r1", run_b="r2", left="a"
    )
    assert store.open_comparison("ann") is not None
    assert store.record_arena_vote("t1", "bob", "left", _vote("t1", "bob")) is False  # not bob's
    assert store.record_arena_vote("t1", "ann", "left", _vote("t1")) is True
    assert store.record_arena_vote("t1", "ann", "right", _vote("t1")) is False
    assert store.skip_comparison("t1", "ann") is False
    assert store.open_comparison("ann") is None
    rec = store.get_comparison("t1")
    assert rec is not None and (rec.outcome, rec.vote_id) == ("left", "vote-t1")
    assert [v.id for v in store.list_votes()] == ["vote-t1"]


def test_concurrent_votes_on_one_comparison_keep_one(store: Store) -> None:
    store.add_comparison(
        token="t2", annotator="ann", pack_id="p", task_id="t", run_a="r1", run_b="r2", left="b"
    )
    n = 8
    barrier = threading.Barrier(n)
    results: list[bool] = []
    lock = threading.Lock()

    def vote(i: int) -> None:
        barrier.wait()
        ok = store.record_arena_vote("t2", "ann", "left", _vote(f"t2-{i}"))
        with lock:
            results.append(ok)

    threads = [threading.Thread(target=vote, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * (n - 1) + [True]
    assert len(store.list_votes()) == 1


def _cell_summary_peak(store: Store, run_id: str, repeats: int) -> tuple[list[float], int]:
    """One cell of ``repeats`` grades of every status; its summary and the read's peak heap."""
    store.save_run(make_run(run_id))
    grades = []
    for i in range(repeats):
        kind = i % 5
        if kind == 0:
            kw: dict[str, object] = {"status": GradeStatus.PARSE_ERROR, "error": "no JSON"}
        elif kind == 1:
            kw = {"status": GradeStatus.ERROR, "error": "HTTP 400", "retryable": False}
        elif kind == 2:
            kw = {"status": GradeStatus.ERROR, "error": "HTTP 503", "retryable": True}
        else:
            kw = {}
        scores = () if kw else (1 + i % 5, 3, 5, 2)
        grades.append(make_grade(run_id, scores=scores, repeat=i, **kw))
    store.save_grades(grades)
    store.grade_summary({})  # warm: the statement's compilation is cached
    tracemalloc.start()
    try:
        summary = store.grade_summary({run_id: "pack"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    [cell] = [c for k, c in summary.cells.items() if k[0] == run_id]
    return cell, peak


def test_grade_summary_memory_does_not_grow_with_a_cells_grades(store: Store) -> None:
    """The database sums a cell's grades: the read holds one row per cell, not per grade.

    At 1,000,000 grades the per-grade rows were most of the web server's 1.7 GB.
    """
    _, small = _cell_summary_peak(store, "few", 10)
    cell, big = _cell_summary_peak(store, "many", 2000)
    assert cell[CELL_GRADES] == 2000 and cell[CELL_SCORED] == 800
    assert (cell[CELL_PARSE], cell[CELL_ERRORS], cell[CELL_RETRY]) == (400, 400, 400)
    scores = [0.3 * (1 + i % 5) + 0.25 * 3 + 0.25 * 5 + 0.2 * 2 for i in range(2000) if i % 5 > 2]
    assert cell[CELL_TOTAL] == pytest.approx(sum(scores))
    assert cell[CELL_TOTAL_SQ] == pytest.approx(sum(s * s for s in scores))
    # 2,000 nine-column rows held at once are > 1 MB; one row per cell is a few hundred bytes
    assert big - small < 200_000, (small, big)
