"""The suite runs in parallel (pytest-xdist): what workers must not share, they do not."""

from __future__ import annotations

import os

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

import tests.conftest as root


def test_a_worker_has_a_postgresql_database_of_its_own() -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None or not root.PG_URL:
        pytest.skip("runs in an xdist worker with LHBENCH_TEST_PG_URL set (as `make test` in CI)")
    url = root.PG_URL
    assert os.environ["LHBENCH_TEST_PG_URL"] == url  # what modules reading the variable see
    name = make_url(url).database
    # named after the worker and the run (two runs at once keep apart)
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")[:8]
    assert name is not None and name.endswith(f"_{worker}_{run}" if run else f"_{worker}")
    engine = create_engine(make_url(url.replace("postgresql://", "postgresql+psycopg://", 1)))
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT current_database()")).scalar() == name
    finally:
        engine.dispose()
