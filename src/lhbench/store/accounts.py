"""Web accounts in the store: users, server-side sessions, and failed sign-ins.

A session is a row keyed by the hash of the browser's cookie (the cookie itself is never
stored). Changing a user's password or role, or removing the user, deletes every session
of theirs in the same transaction, so a stolen or stale cookie stops working at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from lhbench.schema import utcnow
from lhbench.store.base import StoreBase
from lhbench.store.tables import LoginFailureRow, SessionRow, UserRow

__all__ = ["AccountStore", "SessionRecord", "UserRecord"]


@dataclass(frozen=True)
class UserRecord:
    """An account (the password only as its hash)."""

    name: str
    password_hash: str
    is_admin: bool
    created_at: datetime


@dataclass(frozen=True)
class SessionRecord:
    """A live session: whose it is, their current role, and its CSRF token."""

    id: str
    user: str
    is_admin: bool
    csrf: str
    expires_at: datetime


def _user(r: UserRow) -> UserRecord:
    return UserRecord(r.name, r.password_hash, r.is_admin, r.created_at)


class AccountStore(StoreBase):
    """Users, their sessions, and the failed sign-ins that rate-limit logins."""

    # users ---------------------------------------------------------------------------------

    def put_user(self, name: str, password_hash: str, *, admin: bool) -> bool:
        """Create an account or replace its password and role; True when it was new.

        A changed password or role revokes every session of the user.
        """
        with Session(self.engine) as s, s.begin():
            row = s.get(UserRow, name)
            if row is None:
                s.add(
                    UserRow(
                        name=name, password_hash=password_hash, is_admin=admin, created_at=utcnow()
                    )
                )
                return True
            if row.password_hash != password_hash or row.is_admin != admin:
                s.execute(delete(SessionRow).where(SessionRow.user == name))
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
        """Remove an account and its sessions; False when there was none."""
        with Session(self.engine) as s, s.begin():
            s.execute(delete(SessionRow).where(SessionRow.user == name))
            result = s.execute(delete(UserRow).where(UserRow.name == name))
            return bool(result.rowcount)  # type: ignore[attr-defined]

    # sessions ------------------------------------------------------------------------------

    def create_session(self, session_id: str, user: str, csrf: str, expires_at: datetime) -> None:
        """Record a signed-in browser (``session_id`` is the cookie's hash, never the cookie)."""
        with Session(self.engine) as s, s.begin():
            # expired sessions go when a new one is made: no GET ever writes
            s.execute(delete(SessionRow).where(SessionRow.expires_at <= utcnow()))
            s.add(
                SessionRow(
                    id=session_id,
                    user=user,
                    csrf=csrf,
                    created_at=utcnow(),
                    expires_at=expires_at,
                )
            )

    def get_session(self, session_id: str) -> SessionRecord | None:
        """The live session with this id and its user's current role (None if gone or expired)."""
        with Session(self.engine) as s:
            row = s.execute(
                select(SessionRow, UserRow.is_admin)
                .join(UserRow, UserRow.name == SessionRow.user)
                .where(SessionRow.id == session_id, SessionRow.expires_at > utcnow())
            ).first()
            if row is None:
                return None
            sess, is_admin = row
            return SessionRecord(sess.id, sess.user, bool(is_admin), sess.csrf, sess.expires_at)

    def delete_session(self, session_id: str) -> bool:
        """End one session (logout); False when it did not exist."""
        with Session(self.engine) as s, s.begin():
            result = s.execute(delete(SessionRow).where(SessionRow.id == session_id))
            return bool(result.rowcount)  # type: ignore[attr-defined]

    def revoke_sessions(self, user: str) -> int:
        """End every session of a user; returns how many there were."""
        with Session(self.engine) as s, s.begin():
            result = s.execute(delete(SessionRow).where(SessionRow.user == user))
            return int(result.rowcount or 0)  # type: ignore[attr-defined]

    def count_sessions(self, user: str) -> int:
        """Live sessions of a user."""
        with Session(self.engine) as s:
            return int(
                s.scalar(
                    select(func.count())
                    .select_from(SessionRow)
                    .where(SessionRow.user == user, SessionRow.expires_at > utcnow())
                )
                or 0
            )

    # failed sign-ins -------------------------------------------------------------------------

    def record_login_failure(self, name: str, address: str, *, keep_since: datetime) -> None:
        """Count a failed sign-in; failures older than ``keep_since`` are dropped."""
        with Session(self.engine) as s, s.begin():
            s.execute(delete(LoginFailureRow).where(LoginFailureRow.created_at < keep_since))
            s.add(LoginFailureRow(name=name[:100], address=address[:100], created_at=utcnow()))

    def login_failures(self, name: str, address: str, since: datetime) -> tuple[int, int]:
        """Failed sign-ins since ``since``: (for this name, from this address)."""
        with Session(self.engine) as s:
            recent = LoginFailureRow.created_at >= since
            by_name = s.scalar(
                select(func.count())
                .select_from(LoginFailureRow)
                .where(recent, LoginFailureRow.name == name[:100])
            )
            by_address = s.scalar(
                select(func.count())
                .select_from(LoginFailureRow)
                .where(recent, LoginFailureRow.address == address[:100])
            )
            return int(by_name or 0), int(by_address or 0)

    def clear_login_failures(self, name: str) -> None:
        """Forget a name's failed sign-ins (after it signed in)."""
        with Session(self.engine) as s, s.begin():
            s.execute(delete(LoginFailureRow).where(LoginFailureRow.name == name[:100]))
