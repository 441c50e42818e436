from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from lhbench.schema import GradeStatus, PreferenceVote, Step, Task, Trajectory, Usage, Verdict
from tests.factories import make_grade, make_run, make_trajectory


def test_task_needs_exactly_one_prompt_form() -> None:
    assert Task(id="t", title="T", instruction="do it").user_turns == ["do it"]
    assert Task(id="t", title="T", turns=["a", "b"]).user_turns == ["a", "b"]
    with pytest.raises(ValidationError, match="exactly one"):
        Task(id="t", title="T")
    with pytest.raises(ValidationError, match="exactly one"):
        Task(id="t", title="T", instruction="x", turns=["y"])
    with pytest.raises(ValidationError, match="non-empty"):
        Task(id="t", title="T", turns=[])


def test_run_duration_and_naive_times_refused() -> None:
    assert make_run().duration_s == 720.0
    with pytest.raises(ValidationError):
        make_run(started_at=datetime(2026, 1, 1))  # noqa: DTZ001 - naive on purpose
    with pytest.raises(ValidationError, match="before started_at"):
        make_run(ended_at=datetime(2025, 1, 1, tzinfo=UTC))


def test_trajectory_indices_and_views() -> None:
    traj = make_trajectory()
    assert [s.index for s in traj.tool_calls] == [1, 4]
    assert [s.index for s in traj.errors] == [2]
    bad = traj.steps[:2] + traj.steps[3:]
    with pytest.raises(ValidationError, match=r"indices must be 0\.\.n-1"):
        Trajectory(run_id="r", steps=bad)
    with pytest.raises(ValidationError, match="needs tool_name or tool_call_id"):
        Step(index=0, role="assistant", kind="tool_call")


def test_grade_status_rules() -> None:
    g = make_grade()
    assert g.score_map()["design_inspection"] == 4
    # a parse failure keeps the raw text and carries no score
    failed = make_grade(
        status=GradeStatus.PARSE_ERROR, scores=(), tier_score=None, raw_output="oops"
    )
    assert failed.status == GradeStatus.PARSE_ERROR
    with pytest.raises(ValidationError, match="carries no scores"):
        make_grade(status=GradeStatus.PARSE_ERROR, raw_output="oops")
    with pytest.raises(ValidationError, match="raw output or the error"):
        make_grade(status=GradeStatus.ERROR, scores=(), tier_score=None)


def test_verdict_never_defaults() -> None:
    judge = make_grade().judge
    with pytest.raises(ValidationError, match="must say why"):
        Verdict(id="v", run_id="r", judge=judge, verdict=None, key="k" * 16)
    v = Verdict(id="v", run_id="r", judge=judge, verdict=None, error="budget", key="k" * 16)
    assert v.verdict is None


def test_vote_rules() -> None:
    kw = dict(
        id="v",
        pack_id="p",
        task_id="t",
        run_a="a",
        run_b="b",
        left="b",
        winner="a",
        annotator="ann",
    )
    assert PreferenceVote(**kw, quality=5).left == "b"
    with pytest.raises(ValidationError):
        PreferenceVote(**kw, quality=6)
    with pytest.raises(ValidationError, match="two different runs"):
        PreferenceVote(**{**kw, "run_b": "a"})


def test_usage_adds() -> None:
    total = Usage(input_tokens=1, cost_usd=0.5) + Usage(input_tokens=2, output_tokens=3)
    assert (total.input_tokens, total.output_tokens, total.cost_usd) == (3, 3, 0.5)
    assert (Usage() + Usage()).cost_usd is None


def test_step_row_is_steps_fields_and_round_trips() -> None:
    # the flat row, the store's steps table and the generic JSONL's step lines all follow
    # Step's own field list: a field added to Step reaches every one of them
    from lhbench.schema import STEP_ROW, step_from_row, step_to_row
    from lhbench.store.tables import StepRow

    assert tuple(Step.model_fields) == STEP_ROW
    columns = {c.name for c in StepRow.__table__.columns} - {"run_id"}
    assert columns == {"idx" if f == "index" else f for f in STEP_ROW}
    step = Step(
        index=3,
        role="assistant",
        kind="tool_call",
        tool_name="query",
        tool_call_id="c1",
        tool_input={"sql": "select 1", "nested": {"k": [1, 2.5, None]}},
        timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        usage=Usage(input_tokens=5, cost_usd=0.25),
        metadata={"message_id": "m"},
        agent_id="sub",
    )
    row = step_to_row(step)
    assert row[:3] == [3, "assistant", "tool_call"]
    assert all(type(row[STEP_ROW.index(f)]) is str for f in ("tool_input", "usage", "metadata"))
    assert step_from_row(row) == step
    with pytest.raises(ValueError):
        step_from_row(row[:-1])  # a row short of a field is refused, never shifted
