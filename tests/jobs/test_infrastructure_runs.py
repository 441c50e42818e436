"""Runs that failed for infrastructure are no score: not graded, not compared, and named.

LH-Bench excludes infrastructure failures from comparisons; before issue 25 item 5 a run
whose model endpoint refused the connection was graded and averaged in like any other.
"""

from pathlib import Path

from lhbench.api import grade
from lhbench.config import Settings
from lhbench.jobs.verification import Check, VerifyJob
from lhbench.reporting import ReportData, write_report
from lhbench.reporting.leaderboard import pass_rate_rows
from lhbench.schema import FailureKind, Label, PreferenceVote, Run, RunStatus
from lhbench.store import Store
from lhbench.testing import ModelStub, hashed_scale_scores, rubric_judge_script
from lhbench.web.analysis import analyse
from tests.factories import make_run
from tests.judges.helpers import trajectory_for
from tests.packs.test_loader import write_pack

INFRA_ERROR = "ModelAPIError: Connection error."


def _store_runs(store: Store) -> None:
    for run_id, kw in {
        "r0": {},
        "r1": {"harness": "native"},
        "r2": {"status": RunStatus.FAILED, "error": INFRA_ERROR},
        "r3": {"status": RunStatus.TIMED_OUT, "error": "wall-clock limit of 60s reached"},
    }.items():
        run = make_run(run_id, pack_id="demo-pack", task_id="t1", pack_hash="", **kw)
        store.save_run(run)
        store.save_trajectory(trajectory_for(run.id))
    # what an earlier, careless pipeline stored about the infra-failed run
    store.save_labels(
        [
            Label(run_id=r, passed=r != "r2", source="verify:t1/verify.py")
            for r in ("r0", "r1", "r2")
        ]
    )
    store.save_votes(
        [
            PreferenceVote(
                id="v1",
                pack_id="demo-pack",
                task_id="t1",
                run_a="r1",
                run_b="r2",
                left="a",
                winner="a",
                annotator="ann",
            )
        ]
    )


def test_infrastructure_failed_runs_are_not_graded_and_the_report_names_them(
    store: Store, tmp_path: Path
) -> None:
    write_pack(tmp_path / "pack")
    _store_runs(store)
    assert store.find_run("r2").failure_kind == FailureKind.INFRASTRUCTURE  # type: ignore[union-attr]
    assert store.find_run("r3").failure_kind == FailureKind.AGENT  # type: ignore[union-attr]
    settings = Settings(home=tmp_path / "home", pack_paths=[tmp_path])
    with ModelStub(rubric_judge_script(hashed_scale_scores)) as stub:
        panel = [f"openai:judge@{stub.base_url}"]
        res = grade("demo-pack", panel=panel, store=store, settings=settings)
        assert stub.count == 3  # r0, r1 and the timed-out r3: the agent's own failure
    assert res.summary.planned == 3 and res.summary.done == 3
    assert [r.id for r in res.infra_skipped] == ["r2"]
    assert {g.run_id for g in store.list_grades()} == {"r0", "r1", "r3"}

    data = ReportData.from_store(store)
    assert set(data.runs) == {"r0", "r1", "r3"}
    assert data.votes == [] and {lab.run_id for lab in data.labels} == {"r0", "r1"}
    note = data.excluded.notes()[0]
    assert note.startswith("Excludes 1 run(s) that failed for infrastructure")
    assert f"r2 ({INFRA_ERROR})" in note
    rates = pass_rate_rows(data, ["harness"])
    assert sum(r.n for r in rates) == 2 and sum(r.passed for r in rates) == 2
    files = write_report(data, tmp_path / "report")
    assert "failed for infrastructure" in files.markdown.read_text()
    assert "r2 (ModelAPIError" in files.html.read_text()

    web = analyse(store)
    assert set(web.runs) == {"r0", "r1", "r3"}
    assert "r2" not in {r for a in web.agents for r in a.run_ids}
    assert any("failed for infrastructure" in n for n in web.excluded.notes())


def test_a_run_is_classified_by_its_error_when_its_harness_did_not_say() -> None:
    def run(status: RunStatus, error: str | None) -> Run:
        return make_run("x", status=status, error=error)

    assert run(RunStatus.COMPLETED, None).failure_kind is None
    assert run(RunStatus.FAILED, "SandboxUnavailable: no sandbox backend works").failure_kind == (
        FailureKind.INFRASTRUCTURE
    )
    assert run(RunStatus.FAILED, "HTTP status_code: 503 overloaded").infrastructure_failure
    assert run(RunStatus.LIMIT_EXCEEDED, "tool_calls_limit of 30").failure_kind == (
        FailureKind.AGENT
    )
    explicit = make_run("y", status=RunStatus.FAILED, error="boom", failure_kind="infrastructure")
    assert explicit.infrastructure_failure


def test_a_check_that_could_not_run_for_infrastructure_is_retried_not_kept(
    store: Store,
) -> None:
    job = VerifyJob(store, [], states=None)  # type: ignore[arg-type]
    infra = Label(
        run_id="r",
        passed=None,
        source="figma:t/gt",
        error="infrastructure: playwright is not installed; the Figma capture needs it",
        failure_kind=FailureKind.INFRASTRUCTURE,
    )
    verdict = job.assess(infra)
    assert not verdict.ok and verdict.retryable
    assert verdict.reason == "infrastructure: playwright is not installed"
    store.save_run(make_run("r"))
    store.save_labels([infra])
    [back] = store.list_labels()
    assert back.failure_kind == FailureKind.INFRASTRUCTURE
    job.runs = [store.find_run("r")]  # type: ignore[list-item]
    from lhbench.schema import label_key

    key = label_key("r", infra.source, infra.check_hash)
    assert job.stored([key]) == {key: "retryable"}
    # the label the figma check makes for the same failure has the same key: retried
    again = Check(Path("gt"), infra.source, "", "figma").label(
        job.runs[0], None, "", infra.error, kind=FailureKind.INFRASTRUCTURE
    )
    assert label_key(again.run_id, again.source, again.check_hash) == key
    assert job.assess(again).retryable


def test_checks_that_could_not_run_for_infrastructure_are_counted_as_such() -> None:
    runs = [make_run("a"), make_run("b")]
    labels = [
        Label(run_id="a", passed=True, source="verify:t/verify.py"),
        Label(
            run_id="b",
            passed=None,
            source="figma:t/gt",
            error="infrastructure: Chromium is not installed",
            failure_kind=FailureKind.INFRASTRUCTURE,
        ),
    ]
    data = ReportData.build(runs, labels=labels)
    assert data.excluded.infra_labels == 1
    assert any("1 check(s) could not run for infrastructure" in n for n in data.excluded.notes())
