"""Shared fixtures: a fresh store on SQLite and, where LHBENCH_TEST_PG_URL is set, PostgreSQL.

The suite runs in parallel (``pytest -n 2``, pytest-xdist; see the Makefile). Each worker
gets a database of its own on the test server, ``<database>_<worker>``, created here before
any test module reads ``LHBENCH_TEST_PG_URL`` and dropped when the worker ends: what one
worker's tests leave in it never meets another's. Tests make their own databases beside it
(:func:`_pg_database`, ``PostgresDatabases``) with random names, as before.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

from lhbench.store import Store

PG_URL = os.environ.get("LHBENCH_TEST_PG_URL")
_WORKER_DB: tuple[str, str] | None = None  # (the server's admin URL, this worker's database)


def _admin_engine(url: str) -> Engine:
    return create_engine(
        make_url(url.replace("postgresql://", "postgresql+psycopg://", 1)),
        isolation_level="AUTOCOMMIT",
    )


def pytest_configure(config: pytest.Config) -> None:
    """In an xdist worker: its own database, and LHBENCH_TEST_PG_URL pointing at it."""
    global PG_URL, _WORKER_DB
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not PG_URL or not worker or _WORKER_DB is not None:
        return
    base = make_url(PG_URL)
    name = f"{base.database}_{worker}"
    admin = _admin_engine(PG_URL)
    try:
        with admin.connect() as conn:
            # a database left by an interrupted run of the same name goes first
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        admin.dispose()
    _WORKER_DB = (PG_URL, name)
    PG_URL = base.set(database=name).render_as_string(hide_password=False)
    os.environ["LHBENCH_TEST_PG_URL"] = PG_URL


def pytest_unconfigure(config: pytest.Config) -> None:
    """Drop the worker's database."""
    global _WORKER_DB
    if _WORKER_DB is None:
        return
    url, name = _WORKER_DB
    admin = _admin_engine(url)
    try:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()
    _WORKER_DB = None


def _pg_database() -> Iterator[str]:
    """Create a throwaway database on the test server; drop it afterwards."""
    assert PG_URL is not None
    base = make_url(PG_URL.replace("postgresql://", "postgresql+psycopg://", 1))
    name = f"lhb_{uuid.uuid4().hex[:16]}"
    admin = _admin_engine(PG_URL)
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield base.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL for an empty database on each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'lhbench.db'}"
        return
    if not PG_URL:
        pytest.skip("LHBENCH_TEST_PG_URL is not set (CI sets it; see .ci/run)")
    yield from _pg_database()


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    """An opened, migrated store on each backend."""
    s = Store.open(store_url)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A URL for an empty PostgreSQL database (skips where LHBENCH_TEST_PG_URL is unset)."""
    if not PG_URL:
        pytest.skip("LHBENCH_TEST_PG_URL is not set (CI sets it; see .ci/run)")
    yield from _pg_database()
