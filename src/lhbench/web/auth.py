"""Annotator accounts, password hashing (stdlib scrypt), sessions and CSRF tokens."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from lhbench.errors import LhbenchError
from lhbench.store import Store, UserRecord

__all__ = [
    "add_user",
    "check_password",
    "csrf_ok",
    "hash_password",
    "new_csrf_token",
    "verify_user",
]

_N, _R, _P = 2**14, 8, 1


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
    """Create (or reset the password and role of) an annotator; True when new."""
    if not name.strip() or len(password) < 8:
        raise LhbenchError("a user needs a name and a password of at least 8 characters")
    return store.put_user(name, hash_password(password), admin=admin)


_DUMMY = hash_password("dummy-password")


def verify_user(store: Store, name: str, password: str) -> UserRecord | None:
    """The user, if the password is right."""
    row = store.get_user(name)
    if row is None:
        check_password(password, _DUMMY)  # same work either way
        return None
    return row if check_password(password, row.password_hash) else None


def new_csrf_token() -> str:
    """A fresh CSRF token for a session."""
    return secrets.token_urlsafe(32)


def csrf_ok(session_token: str | None, form_token: str | None) -> bool:
    """Whether a submitted form carries the session's CSRF token."""
    return (
        bool(session_token)
        and bool(form_token)
        and hmac.compare_digest(session_token or "", form_token or "")
    )
