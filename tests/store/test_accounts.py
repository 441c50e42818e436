"""Accounts in the store: sessions die with a password or role change, login failures count."""

from __future__ import annotations

from datetime import timedelta

from lhbench.schema import utcnow
from lhbench.store import Store


def test_sessions_live_until_revoked_expired_or_changed(store: Store) -> None:
    assert store.put_user("ann", "hash-1", admin=False) is True
    later = utcnow() + timedelta(hours=1)
    store.create_session("s1", "ann", "csrf-1", later)
    store.create_session("s2", "ann", "csrf-2", later)
    rec = store.get_session("s1")
    assert rec is not None and (rec.user, rec.is_admin, rec.csrf) == ("ann", False, "csrf-1")
    # the same password and role: nothing revoked
    assert store.put_user("ann", "hash-1", admin=False) is False
    assert store.count_sessions("ann") == 2
    # a role change ends every session of the user
    store.put_user("ann", "hash-1", admin=True)
    assert store.count_sessions("ann") == 0 and store.get_session("s1") is None
    store.create_session("s3", "ann", "csrf-3", later)
    store.put_user("ann", "hash-2", admin=True)  # a password change too
    assert store.get_session("s3") is None
    store.create_session("s4", "ann", "csrf-4", later)
    assert store.delete_session("s4") is True and store.delete_session("s4") is False
    store.create_session("s5", "ann", "csrf-5", later)
    assert store.delete_user("ann") is True and store.get_session("s5") is None


def test_an_expired_session_is_gone_and_cleared_by_the_next_login(store: Store) -> None:
    store.put_user("bob", "h", admin=False)
    store.create_session("old", "bob", "c", utcnow() - timedelta(seconds=1))
    assert store.get_session("old") is None and store.count_sessions("bob") == 0
    store.create_session("new", "bob", "c", utcnow() + timedelta(hours=1))
    assert store.revoke_sessions("bob") == 1  # the expired one was deleted on the way


def test_login_failures_counted_per_name_and_address_in_a_window(store: Store) -> None:
    since = utcnow() - timedelta(minutes=15)
    for name in ("ann", "ann", "bob"):
        store.record_login_failure(name, "10.0.0.1", keep_since=since)
    store.record_login_failure("ann", "10.0.0.2", keep_since=since)
    assert store.login_failures("ann", "10.0.0.1", since) == (3, 3)
    assert store.login_failures("carol", "10.0.0.2", since) == (0, 1)
    assert store.login_failures("ann", "10.0.0.1", utcnow() + timedelta(seconds=1)) == (0, 0)
    store.clear_login_failures("ann")
    # only the name's own failures go: the address keeps the others'
    assert store.login_failures("ann", "10.0.0.1", since) == (0, 1)
