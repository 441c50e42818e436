"""Shared fixtures: a fresh store on SQLite and, where LHBENCH_TEST_PG_URL is set, PostgreSQL."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from lhbench.store import Store

PG_URL = os.environ.get("LHBENCH_TEST_PG_URL")


def _pg_database() -> Iterator[str]:
    """Create a throwaway database on the test server; drop it afterwards."""
    assert PG_URL is not None
    base = make_url(PG_URL.replace("postgresql://", "postgresql+psycopg://", 1))
    name = f"lhb_{uuid.uuid4().hex[:16]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
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
