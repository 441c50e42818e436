"""The arena's records in the store: the comparisons shown to annotators, and their votes.

A comparison is one pair of runs shown to one annotator behind an opaque token. It is
decided once: a vote (left, right, tie, both bad) or a skip. The decision is one
conditional UPDATE plus the vote's INSERT in a single transaction, and the comparison's
``vote_id`` is unique, so two concurrent votes on one comparison cannot both be kept on
either backend: the second gets ``False`` and its transaction is rolled back.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from lhbench.schema import PreferenceVote, utcnow
from lhbench.store.base import StoreBase
from lhbench.store.tables import ComparisonRow, VoteRow

__all__ = ["OUTCOMES", "ArenaStore", "ComparisonRecord"]

# what an annotator can decide about a pair
OUTCOMES = ("left", "right", "tie", "both_bad", "skip")


@dataclass(frozen=True)
class ComparisonRecord:
    """A pair shown to one annotator behind an opaque token, and what they decided."""

    token: str
    annotator: str
    pack_id: str
    task_id: str
    run_a: str
    run_b: str
    left: str
    created_at: datetime
    voted_at: datetime | None
    outcome: str | None = None
    vote_id: str | None = None

    @property
    def decided(self) -> bool:
        """Voted on or skipped."""
        return self.voted_at is not None

    @property
    def voted(self) -> bool:
        """Decided with a vote (not a skip)."""
        return self.voted_at is not None and self.outcome != "skip"

    @property
    def left_run(self) -> str:
        """The run shown on the left."""
        return self.run_a if self.left == "a" else self.run_b

    @property
    def right_run(self) -> str:
        """The run shown on the right."""
        return self.run_b if self.left == "a" else self.run_a


def _comparison(r: ComparisonRow) -> ComparisonRecord:
    return ComparisonRecord(
        r.token,
        r.annotator,
        r.pack_id,
        r.task_id,
        r.run_a,
        r.run_b,
        r.left,
        r.created_at,
        r.voted_at,
        r.outcome,
        r.vote_id,
    )


def _vote_row(vote: PreferenceVote) -> dict[str, Any]:
    row = vote.model_dump()
    row["rater_kind"] = vote.rater_kind.value
    row["tier"] = vote.tier.value if vote.tier is not None else None
    return row


class ArenaStore(StoreBase):
    """Comparisons of the preference arena and the votes they produce."""

    def add_comparison(
        self,
        *,
        token: str,
        annotator: str,
        pack_id: str,
        task_id: str,
        run_a: str,
        run_b: str,
        left: str,
    ) -> None:
        """Record a pair shown to an annotator."""
        with Session(self.engine) as s, s.begin():
            s.add(
                ComparisonRow(
                    token=token,
                    annotator=annotator,
                    pack_id=pack_id,
                    task_id=task_id,
                    run_a=run_a,
                    run_b=run_b,
                    left=left,
                    created_at=utcnow(),
                    voted_at=None,
                )
            )

    def get_comparison(self, token: str) -> ComparisonRecord | None:
        """The comparison behind a token, or None."""
        with Session(self.engine) as s:
            row = s.get(ComparisonRow, token)
            return None if row is None else _comparison(row)

    def open_comparison(self, annotator: str) -> ComparisonRecord | None:
        """The annotator's oldest pair still waiting for a decision, or None."""
        with Session(self.engine) as s:
            row = s.scalars(
                select(ComparisonRow)
                .where(ComparisonRow.annotator == annotator, ComparisonRow.voted_at.is_(None))
                .order_by(ComparisonRow.created_at, ComparisonRow.token)
                .limit(1)
            ).first()
            return None if row is None else _comparison(row)

    def voted_comparisons(self, annotator: str) -> list[ComparisonRecord]:
        """The comparisons an annotator has decided (voted on or skipped)."""
        with Session(self.engine) as s:
            rows = s.scalars(
                select(ComparisonRow).where(
                    ComparisonRow.annotator == annotator, ComparisonRow.voted_at.is_not(None)
                )
            ).all()
            return [_comparison(r) for r in rows]

    def list_comparisons(self, *, annotator: str | None = None) -> list[ComparisonRecord]:
        """Every comparison (of one annotator when given), oldest first."""
        stmt = select(ComparisonRow).order_by(ComparisonRow.created_at, ComparisonRow.token)
        if annotator is not None:
            stmt = stmt.where(ComparisonRow.annotator == annotator)
        with Session(self.engine) as s:
            return [_comparison(r) for r in s.scalars(stmt).all()]

    def _decide(
        self, s: Session, token: str, annotator: str, outcome: str, vote_id: str | None
    ) -> bool:
        result = s.execute(
            update(ComparisonRow)
            .where(
                and_(
                    ComparisonRow.token == token,
                    ComparisonRow.annotator == annotator,
                    ComparisonRow.voted_at.is_(None),
                )
            )
            .values(voted_at=utcnow(), outcome=outcome, vote_id=vote_id)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]

    def record_arena_vote(
        self, token: str, annotator: str, outcome: str, vote: PreferenceVote
    ) -> bool:
        """Decide a comparison with a vote, once; False when it is not this annotator's open one.

        False also when the comparison is someone else's, unknown, or already decided. The
        decision and the vote are written in one transaction; a concurrent second
        vote loses on the conditional update or on the unique ``vote_id`` and writes
        nothing.
        """
        if outcome not in OUTCOMES or outcome == "skip":
            raise ValueError(f"a vote's outcome is one of {OUTCOMES[:-1]}, not {outcome!r}")
        try:
            with Session(self.engine) as s, s.begin():
                if not self._decide(s, token, annotator, outcome, vote.id):
                    s.rollback()
                    return False
                s.execute(self._insert(VoteRow).values(_vote_row(vote)))
        except IntegrityError:
            return False
        return True

    def skip_comparison(self, token: str, annotator: str) -> bool:
        """Decide a comparison as skipped (no vote), once; False as for a vote."""
        try:
            with Session(self.engine) as s, s.begin():
                return self._decide(s, token, annotator, "skip", None)
        except IntegrityError:
            return False
