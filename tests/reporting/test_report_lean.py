"""``lhbench report`` reads grades as lean facts: every table, CSV and figure is unchanged.

The report's figures read a grade's columns and dimension scores only, so the report loads
``GradeFact``s (no document validated, no judge settings hashed per grade) and asks the
current-grade rule once per (pack, rubric content, tier, judge config). Here the lean
report of a store with every kind of grade (repeats, failures, unscorable dimensions,
stale rubric content, an earlier judge setting, a run not in the store) is compared,
byte for byte, with the report built from the full ``Grade`` documents.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from lhbench.reporting import ReportData, write_report
from lhbench.schema import DimensionScore, GradeStatus, Scale
from lhbench.store import Store
from tests.conftest import PG_URL, _pg_database
from tests.reporting.test_report import JUDGES, grade, seed_store


def _seed_every_kind(store: Store, tmp: Path) -> None:
    seed_store(store, tmp)
    # repeats: a judge's second opinion of a run (κ reads the first, scores average both)
    for t in ("t1", "t2"):
        store.save_grade(grade(f"a-{t}", JUDGES[0], (5, 4, 3, 4), repeat=1))
    # an unscorable dimension (counted in health, left out of κ and the dimension means)
    g = grade("b-t3", "openai:unscorable", (2, 3, 4, 5))
    scores = [*g.scores[:3], DimensionScore(dimension_id=g.scores[3].dimension_id,
              scale=Scale.ONE_TO_FIVE, unscorable_reason="no preview")]  # fmt: skip
    store.save_grade(g.model_copy(update={"scores": scores, "key": "u" * 64, "id": "g-u"}))
    # a retryable error, and a grade of a run the store does not hold
    err = grade("b-t2", JUDGES[1], (1, 1, 1, 1), repeat=3)
    store.save_grade(
        err.model_copy(
            update={
                "status": GradeStatus.ERROR,
                "retryable": True,
                "error": "timeout",
                "scores": [],
                "tier_score": None,
                "key": "e" * 64,
                "id": "g-e",
            }
        )
    )
    store.save_grade(grade("gone", JUDGES[0], (3, 3, 3, 3)).model_copy(update={"key": "x" * 64}))
    # stale rubric content, and an earlier judge setting (older than the judge's newest)
    store.save_grade(
        grade("a-t3", JUDGES[1], (1, 2, 1, 2), repeat=5).model_copy(
            update={"rubric_hash": "0" * 64, "key": "s" * 64, "id": "g-s"}
        )
    )
    old = grade("a-t4", JUDGES[2], (5, 5, 5, 5), repeat=7)
    judge = old.judge.model_copy(update={"settings": {"temperature": 0.7}})
    store.save_grade(
        old.model_copy(
            update={
                "judge": judge,
                "created_at": old.created_at - timedelta(days=1),
                "key": "o" * 64,
                "id": "g-o",
            }
        )
    )


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def seeded_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp(f"lean-{request.param}")
    if request.param == "sqlite":
        urls = iter([f"sqlite:///{tmp / 'lhbench.db'}"])
    elif not PG_URL:
        pytest.skip("LHBENCH_TEST_PG_URL is not set (CI sets it; see .ci/run)")
    else:
        urls = _pg_database()
    url = next(urls)
    with Store.open(url) as store:
        _seed_every_kind(store, tmp)
    yield url
    for _ in urls:  # the PostgreSQL database is dropped when its generator ends
        pass


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


@pytest.mark.parametrize("include_stale", [False, True])
def test_the_lean_report_is_byte_identical_to_the_documents_one(
    seeded_url: str, tmp_path: Path, include_stale: bool
) -> None:
    with Store.open(seeded_url) as store:
        full = ReportData.from_store(store, include_stale=include_stale, check_packs=False)
        lean = ReportData.from_store(
            store, include_stale=include_stale, check_packs=False, lean=True
        )
    assert lean.grades == [] and lean.all_grades == []
    assert len(lean.grade_facts) == len(full.grades) and len(full.grades) > 20
    assert lean.excluded == full.excluded
    if not include_stale:  # every reason is exercised
        ex = full.excluded
        assert ex.unknown_run == 1 and ex.stale_rubric and ex.stale_judge, ex
    for data, name in ((full, "full"), (lean, "lean")):
        write_report(data, tmp_path / name, ablation="skill", baseline="none")
    want, got = _files(tmp_path / "full"), _files(tmp_path / "lean")
    assert sorted(got) == sorted(want)
    assert {"report.md", "report.html", "grading_health.csv", "judge_agreement.csv"} <= set(got)
    for name, content in want.items():
        assert got[name] == content, f"{name} differs"
