"""The arena's records in the store: annotator accounts and the comparisons shown to them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from lhbench.schema import utcnow
from lhbench.store.base import StoreBase
from lhbench.store.tables import ComparisonRow, UserRow

__all__ = ["ArenaStore", "ComparisonRecord", "UserRecord"]


@dataclass(frozen=True)
class UserRecord:
    """An annotator account (the password only as its hash)."""

    name: str
    password_hash: str
    is_admin: bool
    created_at: datetime


@dataclass(frozen=True)
class ComparisonRecord:
    """A pair shown to one annotator behind an opaque token."""

    token: str
    annotator: str
    pack_id: str
    task_id: str
    run_a: str
    run_b: str
    left: str
    created_at: datetime
    voted_at: datetime | None


def _user(r: UserRow) -> UserRecord:
    return UserRecord(r.name, r.password_hash, r.is_admin, r.created_at)


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
    )


class ArenaStore(StoreBase):
    """Accounts and comparisons of the preference arena."""

    def put_user(self, name: str, password_hash: str, *, admin: bool) -> bool:
        """Create an account or replace its password and role; True when it was new."""
        with Session(self.engine) as s, s.begin():
            row = s.get(UserRow, name)
            if row is None:
                s.add(
                    UserRow(
                        name=name, password_hash=password_hash, is_admin=admin, created_at=utcnow()
                    )
                )
                return True
            row.password_hash = password_hash
            row.is_admin = admin
            return False

    def get_user(self, name: str) -> UserRecord | None:
        """The account, or None."""
        with Session(self.engine) as s:
            row = s.get(UserRow, name)
            return None if row is None else _user(row)

    def list_users(self) -> list[UserRecord]:
        """Every account, by name."""
        with Session(self.engine) as s:
            return [_user(r) for r in s.scalars(select(UserRow).order_by(UserRow.name)).all()]

    def delete_user(self, name: str) -> bool:
        """Remove an account; False when there was none."""
        with Session(self.engine) as s, s.begin():
            result = s.execute(delete(UserRow).where(UserRow.name == name))
            return bool(result.rowcount)  # type: ignore[attr-defined]

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

    def voted_comparisons(self, annotator: str) -> list[ComparisonRecord]:
        """The comparisons an annotator has voted on."""
        with Session(self.engine) as s:
            rows = s.scalars(
                select(ComparisonRow).where(
                    ComparisonRow.annotator == annotator, ComparisonRow.voted_at.is_not(None)
                )
            ).all()
            return [_comparison(r) for r in rows]

    def mark_voted(self, token: str, annotator: str) -> bool:
        """Mark a comparison voted, once: False when it is not this annotator's or was voted.

        A single conditional UPDATE, so two concurrent votes on one comparison cannot both
        succeed on either backend.
        """
        with Session(self.engine) as s, s.begin():
            result = s.execute(
                update(ComparisonRow)
                .where(
                    ComparisonRow.token == token,
                    ComparisonRow.annotator == annotator,
                    ComparisonRow.voted_at.is_(None),
                )
                .values(voted_at=utcnow())
            )
            return bool(result.rowcount)  # type: ignore[attr-defined]
