"""``lhbench report`` reads grades as lean facts: every table, CSV and figure is unchanged.

The report's figures read a grade's columns and dimension scores only, so the report loads
``GradeFact``s (no document validated, no judge settings hashed per grade) and asks the
current-grade rule once per (pack, rubric content, tier, judge config). Here the lean
report of a store with every kind of grade (repeats, failures, unscorable dimensions,
stale rubric content, an earlier judge setting, a run not in the store) is compared,
byte for byte, with the report built from the full ``Grade`` documents.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from lhbench.reporting import ReportData, write_report
from lhbench.schema import (
    DimensionScore,
    GradeStatus,
    JudgeIdentity,
    Role,
    Run,
    RunStatus,
    Scale,
    Step,
    StepKind,
    Trajectory,
    Verdict,
)
from lhbench.store import ReportRun, Store
from tests.conftest import PG_URL, _pg_database
from tests.factories import make_run, make_trajectory
from tests.reporting.test_report import JUDGES, grade, seed_store


def _seed_every_kind(store: Store, tmp: Path) -> None:
    seed_store(store, tmp)
    # a run that failed for infrastructure, with a grade and a verdict (both left out), and
    # a run that ran without a sandbox (the header says so)
    store.save_run(
        make_run(
            "infra-t1",
            pack_id="demo-pack",
            task_id="t1",
            status=RunStatus.FAILED,
            error="SandboxUnavailable: bwrap: permission denied",
        )
    )
    store.save_grade(
        grade("infra-t1", JUDGES[0], (3, 3, 3, 3)).model_copy(update={"key": "i" * 64})
    )
    store.save_verdict(
        Verdict(
            id="infra-verdict",
            run_id="infra-t1",
            judge=JudgeIdentity(kind="agent", model="openai:gpt-5-mini"),
            verdict="PASS",
            key="iv" * 32,
        )
    )
    store.save_run(
        make_run("c-t1", pack_id="demo-pack", task_id="t1", metadata={"unsandboxed": True})
    )
    _seed_steps(store)


def _seed_steps(store: Store) -> None:
    """Trajectories of every shape the failure taxonomy reads (messages between the steps)."""
    store.save_trajectory(make_trajectory("a-t1"))
    store.save_trajectory(make_trajectory("b-t2"))
    # only messages: a run with steps, no tool call and no error
    msg = [Step(index=i, role=Role.ASSISTANT, kind=StepKind.MESSAGE, content="hm") for i in (0, 1)]
    store.save_trajectory(Trajectory(run_id="b-t1", steps=msg))
    # id-less calls answered in order, a soft failure, an error step, a recovery after a
    # message and thinking, a preview that failed and a deploy that worked
    steps = [
        Step(index=0, role=Role.ASSISTANT, kind=StepKind.TOOL_CALL, tool_name="Write",
             tool_input={"file_path": "/app/a.ts"}),
        Step(index=1, role=Role.ASSISTANT, kind=StepKind.TOOL_CALL, tool_name="preview_app"),
        Step(index=2, role=Role.TOOL, kind=StepKind.TOOL_RESULT, tool_name="Write",
             tool_output='{"error": "permission denied: /app/a.ts"}'),
        Step(index=3, role=Role.TOOL, kind=StepKind.TOOL_RESULT, tool_name="preview_app",
             tool_output="timeout after 30s", is_error=True),
        Step(index=4, role=Role.ASSISTANT, kind=StepKind.MESSAGE, content="retrying"),
        Step(index=5, role=Role.ASSISTANT, kind=StepKind.THINKING, content="maybe sudo"),
        Step(index=6, role=Role.HARNESS, kind=StepKind.ERROR, content="rate limit 429",
             is_error=True),
        Step(index=7, role=Role.ASSISTANT, kind=StepKind.TOOL_CALL, tool_name="Write",
             tool_call_id="w2", tool_input={"file_path": "/app/a.ts"}),
        Step(index=8, role=Role.TOOL, kind=StepKind.TOOL_RESULT, tool_call_id="w2",
             tool_output="ok"),
        Step(index=9, role=Role.ASSISTANT, kind=StepKind.TOOL_CALL, tool_name="deploy_site",
             tool_call_id="d"),
        Step(index=10, role=Role.TOOL, kind=StepKind.TOOL_RESULT, tool_call_id="d",
             exit_code=0),
        Step(index=11, role=Role.ASSISTANT, kind=StepKind.MESSAGE, content="done"),
    ]  # fmt: skip
    for rid in ("c-t1", "a-t3", "b-t4"):
        store.save_trajectory(Trajectory(run_id=rid, steps=steps))
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
    # runs and verdicts lean too: the report holds no model per run or verdict
    assert all(isinstance(r, ReportRun) for r in lean.runs.values())
    assert sorted(lean.runs) == sorted(full.runs) and "infra-t1" not in lean.runs
    assert lean.verdicts == [] and lean.verdict_count == len(full.verdicts) > 0
    assert len(lean.grade_columns) == len(full.grades) and len(full.grades) > 20
    assert lean.excluded == full.excluded
    if not include_stale:  # every reason is exercised
        ex = full.excluded
        assert ex.unknown_run == 1 and ex.stale_rubric and ex.stale_judge, ex
    for data, name in ((full, "full"), (lean, "lean")):
        write_report(data, tmp_path / name, ablation="skill", baseline="none")
    want, got = _files(tmp_path / "full"), _files(tmp_path / "lean")
    assert sorted(got) == sorted(want)
    assert {"report.md", "report.html", "grading_health.csv", "judge_agreement.csv"} <= set(got)
    # the failures section is made on both paths: 6 runs with steps, errors of several kinds
    assert "Failure taxonomy across 6 runs (8 errors)" in got["report.md"].decode()
    assert got["failure_types.csv"].count(b"\n") == 4 and b"recovery %" in got["failure_agents.csv"]
    for name, content in want.items():
        assert got[name] == content, f"{name} differs"


def test_lhbench_report_builds_no_run_verdict_or_step_model(
    seeded_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a team's store: 100,000 runs and 50,000 verdicts, each a pydantic model, were most
    # of the report's 1.6 GB; validating its 605,000 steps, a third of its time
    import lhbench

    built: Counter[str] = Counter()
    for model in (Run, Verdict, Step):
        validate = model.model_validate

        def counting(obj: object, *a: Any, _v: Any = validate, _n: str = model.__name__, **kw: Any):
            built[_n] += 1
            return _v(obj, *a, **kw)

        monkeypatch.setattr(model, "model_validate", counting)
    with Store.open(seeded_url) as store:
        rep = lhbench.report(store=store, out=tmp_path)
    assert rep.files is not None and "Agent-as-a-Judge" in rep.files.markdown.read_text()
    assert built == Counter(), f"models built: {dict(built)}"
    assert rep.data.verdict_count > 0 and len(rep.data.runs) > 8
