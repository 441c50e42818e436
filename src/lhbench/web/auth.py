"""Accounts, passwords (stdlib scrypt), server-side sessions, CSRF tokens and login limits.

A session cookie is a random token; the store keeps only its SHA-256, with the user and
the session's CSRF token. Sign-in answers take the same time whatever went wrong (no such
user, wrong password, too many failures): every attempt does the scrypt work and is then
padded to a fixed floor, so timing says nothing about which names exist.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from lhbench.errors import LhbenchError
from lhbench.schema import utcnow
from lhbench.store import SessionRecord, Store, UserRecord

__all__ = [
    "LoginPolicy",
    "LoginResult",
    "add_user",
    "change_password",
    "check_password",
    "csrf_ok",
    "hash_password",
    "hash_token",
    "login",
    "new_csrf_token",
    "new_session",
    "verify_user",
]

_N, _R, _P = 2**14, 8, 1
MIN_PASSWORD = 8


def hash_password(password: str) -> str:
    """``scrypt$N$r$p$salt$hash`` (salted, memory-hard)."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=_N, r=_R, p=_P, dklen=32)
    b64 = base64.b64encode
    return f"scrypt${_N}${_R}${_P}${b64(salt).decode()}${b64(digest).decode()}"


def check_password(password: str, stored: str) -> bool:
    """Constant-time check of a password against a stored hash."""
    try:
        _, n, r, p, salt, digest = stored.split("$")
        got = hashlib.scrypt(
            password.encode(), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p), dklen=32
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, base64.b64decode(digest))


def add_user(store: Store, name: str, password: str, *, admin: bool = False) -> bool:
    """Create (or reset the password and role of) a user; True when new.

    A changed password or role signs the user out everywhere (the store revokes their
    sessions).
    """
    if not name.strip() or len(password) < MIN_PASSWORD:
        raise LhbenchError(
            f"a user needs a name and a password of at least {MIN_PASSWORD} characters"
        )
    if len(name) > 100:
        raise LhbenchError("a user name has at most 100 characters")
    return store.put_user(name, hash_password(password), admin=admin)


_DUMMY = hash_password("dummy-password")


def verify_user(store: Store, name: str, password: str) -> UserRecord | None:
    """The user, if the password is right (the same scrypt work either way)."""
    row = store.get_user(name)
    if row is None:
        check_password(password, _DUMMY)
        return None
    return row if check_password(password, row.password_hash) else None


def new_csrf_token() -> str:
    """A fresh CSRF token."""
    return secrets.token_urlsafe(32)


def csrf_ok(expected: str | None, given: str | None) -> bool:
    """Whether a submitted form carries the expected CSRF token."""
    return bool(expected) and bool(given) and hmac.compare_digest(expected or "", given or "")


def hash_token(token: str) -> str:
    """What the store keeps of a session cookie."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_session(store: Store, user: str, lifetime: timedelta) -> tuple[str, SessionRecord]:
    """Start a session: the cookie value (given to the browser only) and its record."""
    token = secrets.token_urlsafe(32)
    sid = hash_token(token)
    store.create_session(sid, user, new_csrf_token(), utcnow() + lifetime)
    record = store.get_session(sid)
    if record is None:  # pragma: no cover - the row was just written
        raise LhbenchError("could not start a session")
    return token, record


@dataclass(frozen=True)
class LoginPolicy:
    """Failed sign-ins allowed per name and per address in ``window``; the answer floor."""

    per_name: int = 5
    per_address: int = 20
    window: timedelta = timedelta(minutes=15)
    floor_s: float = 0.35


@dataclass(frozen=True)
class LoginResult:
    """What a sign-in attempt came to."""

    outcome: Literal["ok", "refused", "limited"]
    user: UserRecord | None = None


def login(store: Store, name: str, password: str, address: str, policy: LoginPolicy) -> LoginResult:
    """Check a sign-in under the rate limits; returns after ``policy.floor_s`` at the earliest.

    Over the limit for the name or the address, the attempt is refused without saying
    whether the password was right (and still does the password work). A failure is
    counted for the name and the address whether or not the name exists.
    """
    started = time.perf_counter()
    since = utcnow() - policy.window
    by_name, by_address = store.login_failures(name, address, since)
    limited = by_name >= policy.per_name or by_address >= policy.per_address
    user = verify_user(store, name, password)
    if limited:
        result = LoginResult("limited")
    elif user is None:
        result = LoginResult("refused")
    else:
        result = LoginResult("ok", user)
    if result.outcome == "ok":
        store.clear_login_failures(name)
    else:
        store.record_login_failure(name, address, keep_since=since)
    left = policy.floor_s - (time.perf_counter() - started)
    if left > 0:
        time.sleep(left)
    return result


def change_password(store: Store, user: UserRecord, current: str, new: str) -> str | None:
    """Set a new password after checking the current one; an error message, or None.

    The store revokes every session of the user (this browser signs in again).
    """
    if not check_password(current, user.password_hash):
        return "The current password is wrong."
    if len(new) < MIN_PASSWORD:
        return f"A password has at least {MIN_PASSWORD} characters."
    store.put_user(user.name, hash_password(new), admin=user.is_admin)
    return None
