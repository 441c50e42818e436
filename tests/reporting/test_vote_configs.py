"""Pairwise-judge votes: keyed by judge configuration, stale by the rule grades follow."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from lhbench.reporting import ReportData
from lhbench.reporting.arena import arena_section
from lhbench.schema import JudgeKind, PreferenceVote, utcnow
from lhbench.store import Store
from tests.factories import make_run

BY = ("harness", "model")
T0 = utcnow()


def _vote(
    i: int,
    a: str,
    b: str,
    winner: str,
    *,
    rater: JudgeKind = JudgeKind.HUMAN,
    annotator: str = "sme",
    judge_key: str | None = None,
    minutes: int = 0,
) -> PreferenceVote:
    return PreferenceVote(
        id=f"v{i}",
        pack_id="pack",
        task_id="task-1",
        run_a=a,
        run_b=b,
        left="a",
        winner=winner,  # type: ignore[arg-type]
        annotator=annotator,
        rater_kind=rater,
        judge_key=judge_key,
        created_at=T0 + timedelta(minutes=minutes),
    )


RUNS = [
    make_run("a1", harness="claude-code", model="anthropic:opus"),
    make_run("b1", harness="codex", model="openai:gpt-5.2"),
    make_run("a2", harness="claude-code", model="anthropic:opus"),
    make_run("b2", harness="codex", model="openai:gpt-5.2"),
]


def test_human_agreement_has_one_row_per_judge_configuration() -> None:
    llm = {"rater": JudgeKind.LLM, "annotator": "openai:judge"}
    votes = [
        _vote(1, "a1", "b1", "a"),
        _vote(2, "a2", "b2", "b"),
        # one model under two configurations: cold agrees with the humans on both pairs,
        # hot disagrees on both (its votes came last, so a model-string key kept only them)
        _vote(3, "a1", "b1", "a", judge_key="cold", **llm),  # type: ignore[arg-type]
        _vote(4, "a2", "b2", "b", judge_key="cold", **llm),  # type: ignore[arg-type]
        _vote(5, "a1", "b1", "b", judge_key="hot", **llm),  # type: ignore[arg-type]
        _vote(6, "a2", "b2", "a", judge_key="hot", **llm),  # type: ignore[arg-type]
    ]
    sec, _ = arena_section(ReportData.build(RUNS, votes=votes), BY)
    agree = next(t for t in sec.tables if t.slug == "rater_agreement")
    rows = {r[1]: r for r in agree.rows}
    assert set(rows) == {"openai:judge [cold]", "openai:judge [hot]"}
    raw = agree.columns.index("raw agreement")
    assert rows["openai:judge [cold]"][raw] == 1.0
    assert rows["openai:judge [hot]"][raw] == 0.0
    assert all(r[agree.columns.index("n")] == 2 for r in agree.rows)


def test_votes_of_an_earlier_judge_configuration_are_stale(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store:
        for r in RUNS:
            store.save_run(r)
        llm = {"rater": JudgeKind.LLM, "annotator": "openai:judge"}
        for v in [
            _vote(1, "a1", "b1", "a"),
            _vote(2, "a1", "b1", "a", judge_key="old", minutes=1, **llm),  # type: ignore[arg-type]
            _vote(3, "a2", "b2", "a", judge_key="old", minutes=2, **llm),  # type: ignore[arg-type]
            _vote(4, "a1", "b1", "b", judge_key="new", minutes=3, **llm),  # type: ignore[arg-type]
        ]:
            store.save_vote(v)
        data = ReportData.from_store(store)
        assert sorted(v.id for v in data.votes) == ["v1", "v4"]
        assert data.excluded.stale_vote_judge == {"openai:judge": 2}
        assert any(
            "2 pairwise-judge vote(s) by openai:judge excluded: made with earlier judge" in n
            for n in data.excluded.notes()
        )
        everything = ReportData.from_store(store, include_stale=True)
        assert len(everything.votes) == 4
