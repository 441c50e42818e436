"""Votes read as columns (:class:`VoteFact`) give the report what the vote models gave.

Random votes of every kind (human and pairwise-judge, decided and failed, on whole runs
and on chapters, on runs that failed for infrastructure, two configurations of a judge),
written to a real store: the store's lean read and the report's vote lists are checked
against the models written, filtered and ordered by the rules the report states.
"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from lhbench.reporting.data import Exclusions, ReportData, current_votes
from lhbench.schema import JudgeKind, PreferenceVote, RunStatus, TierKind
from lhbench.store import Store, VoteFact
from tests.factories import T0, make_run

RUNS = [f"r{i}" for i in range(8)]
INFRA = {"r6", "r7"}


def _votes(seed: int, n: int = 160) -> list[PreferenceVote]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        a, b = rng.sample(RUNS, 2)
        human = rng.random() < 0.5
        failed = not human and rng.random() < 0.25
        winner = None if failed else rng.choice(["a", "b", "tie"])
        out.append(
            PreferenceVote(
                id=f"v{i:03d}",
                pack_id="pack",
                task_id=rng.choice(["task-1", "task-2"]),
                run_a=a,
                run_b=b,
                left=rng.choice(["a", "b"]),
                winner=winner,  # type: ignore[arg-type]
                quality=None if failed or rng.random() < 0.3 else rng.randint(1, 5),
                annotator=f"ann{rng.randint(0, 2)}" if human else f"judge-{rng.randint(0, 1)}",
                rater_kind=JudgeKind.HUMAN if human else JudgeKind.LLM,
                status="error" if failed else "ok",
                error="no answer" if failed else None,
                retryable=failed and rng.random() < 0.5,
                rubric_id=None if human else "rubric",
                rubric_hash=None if human else "h" * 64,
                tier=None if human else rng.choice([TierKind.PROCESS, TierKind.OUTPUT]),
                judge_key=None if human else rng.choice(["cfg-old", "cfg-new"]),
                chapter_id=f"ch{rng.randint(1, 3)}" if rng.random() < 0.3 else None,
                # some votes made in the same second: the id orders them
                created_at=T0 + timedelta(seconds=rng.randint(0, n // 3)),
            )
        )
    return out


def _ordered(votes: list[PreferenceVote]) -> list[PreferenceVote]:
    return sorted(votes, key=lambda v: (v.created_at, v.id))


@pytest.mark.parametrize("seed", [1, 2])
def test_vote_facts_are_the_stored_votes_as_tuples(store: Store, seed: int) -> None:
    written = _votes(seed)
    store.save_votes(written)
    cases: list[dict[str, object]] = [
        {},
        {"include_failed": True},
        {"include_failed": True, "chapter_level": None},
        {"chapter_level": True},
        {"rater_kind": "human", "chapter_level": True},
        {"task_id": "task-2", "include_failed": True},
    ]
    for kw in cases:
        facts = store.vote_facts(**kw)  # type: ignore[arg-type]
        chapter = kw.get("chapter_level", False)
        want = _ordered(
            [
                v
                for v in written
                if (kw.get("include_failed") or v.status == "ok")
                and (chapter is None or (v.chapter_id is not None) == chapter)
                and kw.get("rater_kind", v.rater_kind.value) == v.rater_kind.value
                and kw.get("task_id", v.task_id) == v.task_id
            ]
        )
        assert want, kw  # every case reads some votes
        assert all(isinstance(f, VoteFact) for f in facts)
        assert [f.to_model() for f in facts] == want, kw
        assert store.list_votes(**kw) == want, kw  # type: ignore[arg-type]
        # the fields the report reads, as the model has them (enums, times with a zone)
        for f, v in zip(facts, want, strict=True):
            assert f.rater_kind is v.rater_kind and f.tier == v.tier
            assert f.created_at == v.created_at and f.created_at.tzinfo is not None


def test_report_votes_read_as_columns_are_the_model_paths(store: Store) -> None:
    for rid in RUNS:
        run = (
            make_run(rid, status=RunStatus.FAILED, error="ModelAPIError: 503 from the endpoint")
            if rid in INFRA
            else make_run(rid)
        )
        store.save_run(run)
    written = _votes(7, 240)
    store.save_votes(written)
    ordered = _ordered(written)
    clean = [v for v in ordered if not {v.run_a, v.run_b} & INFRA]
    whole = [v for v in clean if v.chapter_id is None]
    chapter = [
        v
        for v in clean
        if v.chapter_id is not None and v.status == "ok" and v.rater_kind == JudgeKind.HUMAN
    ]
    dropped = sum(
        1
        for v in ordered
        if {v.run_a, v.run_b} & INFRA
        and (v.chapter_id is None or (v.status == "ok" and v.rater_kind == JudgeKind.HUMAN))
    )
    for lean in (True, False):
        data = ReportData.from_store(store, check_packs=False, lean=lean)
        assert set(data.runs) == set(RUNS) - INFRA
        ex = Exclusions()
        want_votes = current_votes(whole, data.runs, {}, {}, ex)
        # what is checked is not empty: each list holds votes, stale judge votes are left
        assert want_votes and chapter and dropped and sum(ex.stale_vote_judge.values())
        as_models = [
            [v.to_model() if isinstance(v, VoteFact) else v for v in got]
            for got in (data.votes, data.failed_votes, data.chapter_votes)
        ]
        assert as_models[0] == want_votes
        assert as_models[1] == [v for v in whole if v.status != "ok"]
        assert as_models[2] == chapter
        assert data.excluded.stale_vote_judge == ex.stale_vote_judge
        assert data.excluded.failed_votes == len(as_models[1])
        assert data.excluded.infra_judgements == dropped
