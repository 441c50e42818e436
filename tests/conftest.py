"""Shared fixtures: a fresh store on SQLite and, where LHBENCH_TEST_PG_URL is set, PostgreSQL.

The order of the suite: the slowest modules (``SLOW_MODULES``) run first, longest first,
spread over the workers (:func:`pytest_collection_modifyitems`), so that no worker ends the
run alone in a minute-long test while the other has nothing left to do.

The suite runs in parallel (``pytest -n 2``, pytest-xdist; see the Makefile). Each worker
gets a database of its own on the test server, ``<database>_<worker>``, created here before
any test module reads ``LHBENCH_TEST_PG_URL`` and dropped when the worker ends: what one
worker's tests leave in it never meets another's. Tests make their own databases beside it
(:func:`_pg_database`, ``PostgresDatabases``) with random names, as before.
"""

from __future__ import annotations

import itertools
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
    # named after the run too: two runs against the same base database (two checkouts'
    # suites at once) must not drop each other's worker databases (.ci/run drops what a
    # killed worker leaves: every `<db>_gw%`)
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")[:8]
    name = f"{base.database}_{worker}_{run}" if run else f"{base.database}_{worker}"
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


@pytest.fixture(autouse=True)
def _no_whole_heap_collection(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process summaries skip ``settle_heap``'s collection of the whole heap.

    A summary first unfreezes and collects every object an earlier one froze; in a test
    worker that is every earlier test's heap, and it was most of the time of the tests
    that make fresh apps after each write (test_saved_summary, test_incremental: 3-4x
    their time alone). The figures never depend on it; its one job, finding the cycles
    that died while frozen, is tested on its own
    (test_analysis.py::test_the_cached_analysis_is_out_of_the_collectors_way).
    """
    from lhbench.web import analysis

    monkeypatch.setattr(analysis, "settle_heap", lambda: None)


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


# Modules whose tests take longest, in seconds summed over their tests (measured on the
# shared 2-core machine at load ~10, 2026-11-27: `pytest -n 2 --durations`; the web modules'
# and the demo's revised 2026-11-28; only the order matters). They run first: see
# pytest_collection_modifyitems. A module renamed here fails the collection, so the list
# cannot go stale silently.
SLOW_MODULES = {
    "tests/web/test_incremental.py": 60,  # PostgreSQL and SQLite analyses compared
    "tests/web/test_saved_summary.py": 90,  # a restart's summary against a fresh one
    "tests/security/test_web_pages.py": 330,  # hostile pages in Chromium
    "tests/packaging/test_wheel.py": 220,  # build, install, the demo twice, web app
    "tests/aj/test_gui_domain.py": 200,  # office documents rendered in the sandbox
    "tests/harness/test_ray_cluster.py": 190,  # a head and two worker nodes, one killed
    "tests/harness/test_resume_and_executors.py": 180,  # a killed run; local vs Ray
    "tests/harness/test_cli_agents.py": 150,  # npm installs; Codex with every core busy
    "tests/ingest/test_fuzz.py": 150,
    "tests/test_api_parity.py": 120,
    "tests/envs/figma/test_run.py": 105,  # the pack's rate limit: the agent waits out 429s
    "tests/aj/test_search_domain.py": 65,
    "tests/security/test_judge_tools.py": 70,
}


def _chunk_sizes(n: int, workers: int) -> list[int]:
    """How pytest-xdist's worksteal scheduler first splits n tests (contiguous, in order)."""
    sizes: list[int] = []
    for i in range(workers):
        sizes.append((n - sum(sizes)) // (workers - i))
    return sizes


@pytest.hookimpl(trylast=True)  # after -k/-m deselection: the chunks are of what runs
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slow modules first, longest first, dealt out over the workers' first chunks.

    ``--dist worksteal`` hands each worker a contiguous chunk of the collection and later
    moves tests from the end of a busy worker's queue to an idle one. With the long modules
    at the head of the chunks they start at once, and the run ends on short tests that
    spread over both workers, not on one worker alone in a minute-long test (the web and
    security modules came last alphabetically). A module moves whole: its module fixtures
    still start once. Every worker computes the same order from the same collection.
    """
    root = Path(str(config.rootpath))
    missing = [m for m in SLOW_MODULES if not (root / m).is_file()]
    if missing:
        raise pytest.UsageError(f"tests/conftest.py SLOW_MODULES names no file: {missing}")
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    slow = sorted((m for m in SLOW_MODULES if m in modules), key=lambda m: -SLOW_MODULES[m])
    if not slow:
        return
    workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    sizes = _chunk_sizes(len(items), workers)
    loads = [0] * workers
    heads: list[list[pytest.Item]] = [[] for _ in range(workers)]
    for module in slow:  # longest first, each to the chunk with the least slow work so far
        j = loads.index(min(loads))
        loads[j] += SLOW_MODULES[module]
        heads[j].extend(modules[module])
    moved = {id(i) for head in heads for i in head}
    rest = iter([i for i in items if id(i) not in moved])
    ordered: list[pytest.Item] = []
    for head, size in zip(heads, sizes, strict=True):
        ordered.extend(head)
        ordered.extend(itertools.islice(rest, max(0, size - len(head))))
    ordered.extend(rest)
    assert len(ordered) == len(items)
    items[:] = ordered
