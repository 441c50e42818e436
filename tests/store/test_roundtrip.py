import hashlib

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from lhbench.errors import StoreError
from lhbench.packs import bundled_pack_dirs, load_pack
from lhbench.schema import (
    Artifact,
    FailureKind,
    GradeStatus,
    JudgeIdentity,
    JudgeKind,
    Label,
    PreferenceVote,
    Run,
    RunStatus,
    Verdict,
)
from lhbench.store import Store, group_runs
from lhbench.store.tables import GradeRow
from tests.factories import make_grade, make_run, make_trajectory
from tests.packs.test_loader import write_pack


def test_pack_roundtrip_and_idempotent(store: Store, tmp_path) -> None:
    for pack in (
        load_pack(next(d for d in bundled_pack_dirs() if d.name == "lhbench-rubrics")),
        load_pack(write_pack(tmp_path / "p")),
    ):
        assert store.save_pack(pack) is True
        assert store.save_pack(pack) is False
        assert store.get_pack(pack.content_hash) == pack
    assert len(store.list_pack_versions()) == 2
    with pytest.raises(StoreError, match="no pack"):
        store.get_pack("f" * 64)


def test_run_trajectory_artifact_roundtrip(store: Store) -> None:
    run = make_run()
    store.save_run(run)
    assert store.get_run(run.id) == run
    # upsert: the status moves on, still one row
    # validated (not model_copy): a failed run's failure kind is classified from its error
    moved = Run.model_validate({**run.model_dump(), "status": RunStatus.FAILED, "error": "boom"})
    assert moved.failure_kind == FailureKind.AGENT
    store.save_run(moved)
    assert store.get_run(run.id) == moved
    assert len(store.list_runs()) == 1

    traj = make_trajectory(run.id)
    store.save_trajectory(traj)
    assert store.get_trajectory(run.id) == traj
    store.save_trajectory(traj)  # replacing keeps one copy
    assert store.get_trajectory(run.id) == traj

    data = b"\x89PNG fake bytes"
    art = Artifact(
        run_id=run.id,
        name="screens/frame-1.png",
        media_type="image/png",
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        content=data,
    )
    store.save_artifact(art)
    store.save_artifact(art)
    assert store.list_artifacts(run.id) == [art]

    with pytest.raises(StoreError, match="before its trajectory"):
        store.save_trajectory(make_trajectory("missing-run"))


def test_same_grade_twice_leaves_one_row(store: Store) -> None:
    store.save_run(make_run())
    grade = make_grade()
    assert store.save_grade(grade) is True
    again = grade.model_copy(update={"id": "another-id"})  # same cache key
    assert store.save_grade(again) is False
    with Session(store.engine) as s:
        assert s.scalar(select(func.count()).select_from(GradeRow)) == 1
    [stored] = store.list_grades(run_id=grade.run_id)
    assert stored == grade
    assert store.has_grade(grade.key)
    failed = make_grade(
        judge="google-gla:gemini-3.1-pro",
        status=GradeStatus.PARSE_ERROR,
        scores=(),
        tier_score=None,
        raw_output="score: five",
    )
    assert store.save_grade(failed)
    assert [g.status for g in store.list_grades(status="parse_error")] == [GradeStatus.PARSE_ERROR]
    assert store.grade_states([grade.key, failed.key, "nope"]) == {
        grade.key: "ok",
        failed.key: "final_error",
    }
    # a failure never replaces an ok grade; an ok grade replaces a failure of its key
    down = failed.model_copy(update={"key": grade.key, "id": "g-down"})
    assert store.save_grade(down) is False and store.list_grades(run_id=grade.run_id)[0] == grade
    fixed = grade.model_copy(update={"key": failed.key, "id": "g-fixed"})
    assert store.save_grade(fixed) is True
    assert store.grade_states([failed.key]) == {failed.key: "ok"}
    assert len(store.list_grades(run_id=grade.run_id)) == 2


def test_verdict_vote_label_roundtrip(store: Store) -> None:
    judge = JudgeIdentity(kind=JudgeKind.AGENT, model="openai:gpt-5", family="openai")
    v = Verdict(
        id="v1",
        run_id="run-1",
        judge=judge,
        verdict="FAIL",
        evidence=["out.csv sorted ascending"],
        confidence=0.8,
        tool_calls=4,
        key="c" * 32,
    )
    assert store.save_verdict(v) and not store.save_verdict(v)
    err = v.model_copy(
        update={"id": "v2", "verdict": None, "error": "budget exhausted", "key": "d" * 32}
    )
    store.save_verdict(err)
    assert store.list_verdicts(run_id="run-1") == [v, err]

    vote = PreferenceVote(
        id="vote-1",
        pack_id="p",
        task_id="t",
        run_a="r1",
        run_b="r2",
        left="b",
        winner="a",
        quality=4,
        annotator="ann",
    )
    judge_vote = vote.model_copy(
        update={"id": "vote-2", "rater_kind": JudgeKind.LLM, "annotator": "gpt"}
    )
    assert store.save_vote(vote) and not store.save_vote(vote)
    store.save_vote(judge_vote)
    assert store.list_votes(rater_kind="human") == [vote]
    assert store.list_votes() == [vote, judge_vote]

    label = Label(run_id="run-1", passed=True, source="verify:verify.py", detail="3/3 checks")
    store.save_label(label)
    flipped = label.model_copy(update={"passed": False, "detail": "rerun"})
    store.save_label(flipped)
    assert store.list_labels(run_id="run-1") == [flipped]


def test_filter_and_group_by_versions(store: Store) -> None:
    runs = [
        make_run("a", harness="claude-code", versions={"skill": "v1", "prompt": "v0"}),
        make_run("b", harness="claude-code", versions={"skill": "none", "prompt": "v0"}),
        make_run("c", harness="codex", model="openai:gpt-5.2", versions={"skill": "v1"}),
        make_run("d", harness="codex", model="openai:gpt-5.2", versions={}),
    ]
    for r in runs:
        store.save_run(r)
    assert [r.id for r in store.list_runs(versions={"skill": "v1"})] == ["a", "c"]
    assert [r.id for r in store.list_runs(versions={"skill": "v1", "prompt": "v0"})] == ["a"]
    assert [r.id for r in store.list_runs(harness="codex")] == ["c", "d"]
    groups = group_runs(store.list_runs(), ["harness", "versions.skill"])
    assert {k: [r.id for r in v] for k, v in groups.items()} == {
        ("claude-code", "v1"): ["a"],
        ("claude-code", "none"): ["b"],
        ("codex", "v1"): ["c"],
        ("codex", None): ["d"],
    }


def test_run_summaries_count_in_the_database(store: Store) -> None:
    store.save_run(make_run("a"))
    store.save_run(make_run("b"))
    store.save_trajectory(make_trajectory("a"))
    summaries = {s.run.id: s for s in store.run_summaries()}
    assert (summaries["a"].steps, summaries["a"].tool_calls, summaries["a"].errors) == (7, 2, 1)
    assert (summaries["b"].steps, summaries["b"].tool_calls, summaries["b"].errors) == (0, 0, 0)


def test_versions_column_is_jsonb_on_postgres(store: Store) -> None:
    if store.backend != "postgresql":
        pytest.skip("JSONB is PostgreSQL's")
    with store.engine.connect() as conn:
        kind = conn.execute(
            text(
                "select data_type from information_schema.columns"
                " where table_name='runs' and column_name='versions'"
            )
        ).scalar()
    assert kind == "jsonb"
