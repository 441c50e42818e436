"""Judgements in the store: grades, verdicts, preference votes, labels, and the response cache.

Every judgement has an identity (its ``key``). Jobs ask which keys are stored and whether
the stored result is final (:meth:`JudgementStore.grade_states` …), and write results in
batches; a result replaces a stored failure of the same key, never a stored success.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import and_, select
from sqlalchemy.orm import Session

from lhbench.schema import Grade, JudgeKind, Label, PreferenceVote, Verdict, utcnow
from lhbench.store.base import ResultState, StoreBase, chunks, matching
from lhbench.store.tables import GradeRow, LabelRow, ResponseCacheRow, VerdictRow, VoteRow

__all__ = ["JudgementStore"]


def _grade_row(grade: Grade) -> dict[str, Any]:
    return {
        "id": grade.id,
        "key": grade.key,
        "run_id": grade.run_id,
        "rubric_id": grade.rubric_id,
        "rubric_version": grade.rubric_version,
        "rubric_hash": grade.rubric_hash,
        "tier": grade.tier.value,
        "judge_kind": grade.judge.kind.value,
        "judge_model": grade.judge.model,
        "judge_family": grade.judge.family,
        "judge_key": grade.judge.key,
        "status": grade.status.value,
        "retryable": grade.retryable,
        "tier_score": grade.tier_score,
        "repeat": grade.repeat,
        "document": grade.model_dump(mode="json"),
        "created_at": grade.created_at,
    }


def _verdict_row(verdict: Verdict) -> dict[str, Any]:
    return {
        "id": verdict.id,
        "key": verdict.key,
        "run_id": verdict.run_id,
        "judge_kind": verdict.judge.kind.value,
        "judge_model": verdict.judge.model,
        "judge_key": verdict.judge.key,
        "verdict": verdict.verdict,
        "retryable": verdict.retryable,
        "repeat": verdict.repeat,
        "document": verdict.model_dump(mode="json"),
        "created_at": verdict.created_at,
    }


def _vote_row(vote: PreferenceVote) -> dict[str, Any]:
    row = vote.model_dump()
    row["rater_kind"] = vote.rater_kind.value
    row["tier"] = vote.tier.value if vote.tier is not None else None
    return row


def _vote_from(r: VoteRow) -> PreferenceVote:
    return PreferenceVote.model_validate(
        {
            "id": r.id,
            "pack_id": r.pack_id,
            "task_id": r.task_id,
            "run_a": r.run_a,
            "run_b": r.run_b,
            "left": r.left,
            "winner": r.winner,
            "quality": r.quality,
            "annotator": r.annotator,
            "rater_kind": JudgeKind(r.rater_kind),
            "status": r.status,
            "error": r.error,
            "retryable": r.retryable,
            "rubric_id": r.rubric_id,
            "rubric_hash": r.rubric_hash,
            "tier": r.tier,
            "judge_key": r.judge_key,
            "created_at": r.created_at,
        }
    )


class JudgementStore(StoreBase):
    """Grades, verdicts, votes, labels and cached model responses."""

    # grades ------------------------------------------------------------------------------

    def save_grades(self, grades: Sequence[Grade]) -> int:
        """Write grades in one transaction; returns how many were written.

        A grade replaces a stored failure with the same key (a retry); a stored ok grade
        is kept (the same grade is written once).
        """
        return self._upsert_unless_ok(
            GradeRow, [_grade_row(g) for g in grades], index="key", ok=GradeRow.status != "ok"
        )

    def save_grade(self, grade: Grade) -> bool:
        """Write one grade; False when an ok grade with its key is already stored."""
        return self.save_grades([grade]) == 1

    def grade_states(self, keys: Sequence[str]) -> dict[str, ResultState]:
        """Stored state of each grade key (keys not stored are absent)."""
        return self._states(GradeRow, keys)

    def has_grade(self, key: str) -> bool:
        """Whether a grade with this key is stored (in any state)."""
        return key in self.grade_states([key])

    def list_grades(
        self,
        *,
        run_id: str | None = None,
        rubric_id: str | None = None,
        tier: str | None = None,
        status: str | None = None,
        run_ids: Iterable[str] | None = None,
    ) -> list[Grade]:
        """Grades matching every filter given, oldest first."""
        conds = matching(
            (GradeRow.run_id, run_id),
            (GradeRow.rubric_id, rubric_id),
            (GradeRow.tier, tier),
            (GradeRow.status, status),
        )
        ids = None if run_ids is None else list(run_ids)
        out: list[Grade] = []
        with Session(self.engine) as s:
            for part in [None] if ids is None else chunks(ids):
                where = conds if part is None else [*conds, GradeRow.run_id.in_(part)]
                rows = s.scalars(
                    select(GradeRow)
                    .where(and_(True, *where))
                    .order_by(GradeRow.created_at, GradeRow.id)
                ).all()
                out.extend(Grade.model_validate(r.document) for r in rows)
        return out

    # verdicts ----------------------------------------------------------------------------

    def save_verdicts(self, verdicts: Sequence[Verdict]) -> int:
        """Write verdicts; one replaces a stored failure of its key, never a stored verdict."""
        return self._upsert_unless_ok(
            VerdictRow,
            [_verdict_row(v) for v in verdicts],
            index="key",
            ok=VerdictRow.verdict.is_(None),
        )

    def save_verdict(self, verdict: Verdict) -> bool:
        """Write one verdict; False when a decided verdict with its key is stored."""
        return self.save_verdicts([verdict]) == 1

    def verdict_states(self, keys: Sequence[str]) -> dict[str, ResultState]:
        """Stored state of each verdict key."""
        tbl = VerdictRow.__table__
        out: dict[str, ResultState] = {}
        with self.engine.connect() as conn:
            for part in chunks(list(dict.fromkeys(keys))):
                for key, value, retryable in conn.execute(
                    select(tbl.c.key, tbl.c.verdict, tbl.c.retryable).where(tbl.c.key.in_(part))
                ).all():
                    out[key] = (
                        "retryable" if retryable else "ok" if value is not None else "final_error"
                    )
        return out

    def list_verdicts(
        self, *, run_id: str | None = None, judge_kind: str | None = None
    ) -> list[Verdict]:
        """Verdicts matching the filters, oldest first."""
        conds = matching((VerdictRow.run_id, run_id), (VerdictRow.judge_kind, judge_kind))
        with Session(self.engine) as s:
            rows = s.scalars(
                select(VerdictRow)
                .where(and_(True, *conds))
                .order_by(VerdictRow.created_at, VerdictRow.id)
            ).all()
            return [Verdict.model_validate(r.document) for r in rows]

    def set_verdict_failure_mode(self, verdict_id: str, mode: str) -> bool:
        """A reviewer's failure-mode tag on a verdict; False when there is no such verdict."""
        with Session(self.engine) as s, s.begin():
            row = s.get(VerdictRow, verdict_id)
            if row is None:
                return False
            row.document = {**row.document, "failure_mode": mode}
            return True

    # votes -------------------------------------------------------------------------------

    def save_votes(self, votes: Sequence[PreferenceVote]) -> int:
        """Write votes; a vote replaces a stored failure with its id, never an ok vote."""
        return self._upsert_unless_ok(
            VoteRow, [_vote_row(v) for v in votes], index="id", ok=VoteRow.status != "ok"
        )

    def save_vote(self, vote: PreferenceVote) -> bool:
        """Write one vote; False when an ok vote with this id is already stored."""
        return self.save_votes([vote]) == 1

    def vote_states(self, ids: Sequence[str]) -> dict[str, ResultState]:
        """Stored state of each vote id."""
        return self._states(VoteRow, ids, key_col="id")

    def list_votes(
        self,
        *,
        rater_kind: str | None = None,
        task_id: str | None = None,
        include_failed: bool = False,
    ) -> list[PreferenceVote]:
        """Votes, oldest first; failed pairwise-judge votes only with ``include_failed``."""
        conds = matching((VoteRow.rater_kind, rater_kind), (VoteRow.task_id, task_id))
        if not include_failed:
            conds.append(VoteRow.status == "ok")
        with Session(self.engine) as s:
            rows = s.scalars(
                select(VoteRow).where(and_(True, *conds)).order_by(VoteRow.created_at, VoteRow.id)
            ).all()
            return [_vote_from(r) for r in rows]

    # labels ------------------------------------------------------------------------------

    def save_labels(self, labels: Sequence[Label]) -> None:
        """Insert or replace labels (a re-run check replaces what it said before)."""
        if not labels:
            return
        rows = [lab.model_dump() for lab in labels]
        with Session(self.engine) as s, s.begin():
            for part in chunks(rows, 200):
                stmt = self._insert(LabelRow).values(list(part))
                stmt = stmt.on_conflict_do_update(
                    index_elements=["run_id", "source"],
                    set_={
                        k: stmt.excluded[k]
                        for k in ("passed", "detail", "error", "check_hash", "created_at")
                    },
                )
                s.execute(stmt)

    def save_label(self, label: Label) -> None:
        """Insert or replace the label a source gave a run."""
        self.save_labels([label])

    def list_labels(
        self, *, run_id: str | None = None, run_ids: Iterable[str] | None = None
    ) -> list[Label]:
        """Labels, by run and source (undecided ones included: ``passed`` is None)."""
        stmt = select(LabelRow).order_by(LabelRow.run_id, LabelRow.source)
        if run_id is not None:
            stmt = stmt.where(LabelRow.run_id == run_id)
        ids = None if run_ids is None else list(run_ids)
        out: list[Label] = []
        with Session(self.engine) as s:
            for part in [None] if ids is None else chunks(ids):
                q = stmt if part is None else stmt.where(LabelRow.run_id.in_(part))
                out.extend(
                    Label(
                        run_id=r.run_id,
                        passed=r.passed,
                        source=r.source,
                        detail=r.detail,
                        error=r.error,
                        check_hash=r.check_hash,
                        created_at=r.created_at,
                    )
                    for r in s.scalars(q).all()
                )
        return out

    # model response cache ------------------------------------------------------------------

    def get_cached_response(self, key: str) -> dict[str, Any] | None:
        """The cached model response for a request key, or None."""
        # Core, not the ORM: this runs once per model call
        table = ResponseCacheRow.__table__
        with self.engine.connect() as conn:
            doc = conn.execute(select(table.c.response).where(table.c.key == key)).scalar()
            return None if doc is None else dict(doc)

    def put_cached_response(self, key: str, model: str, response: dict[str, Any]) -> None:
        """Keep a model response under its request key (first write wins)."""
        stmt = (
            self._insert(ResponseCacheRow)
            .values(key=key, model=model, response=response, created_at=utcnow())
            .on_conflict_do_nothing()
        )
        with self.engine.begin() as conn:
            conn.execute(stmt)

    def cached_response_count(self) -> int:
        """How many responses the cache holds."""
        from sqlalchemy import func

        with self.engine.connect() as conn:
            return int(
                conn.execute(select(func.count()).select_from(ResponseCacheRow.__table__)).scalar()
                or 0
            )
