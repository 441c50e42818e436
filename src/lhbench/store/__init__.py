"""Persistence on SQLAlchemy 2 + Alembic: SQLite by default, PostgreSQL by URL."""

from lhbench.store.arena import ComparisonRecord, UserRecord
from lhbench.store.base import ResultState
from lhbench.store.db import current_revision, head_revision, make_engine, upgrade
from lhbench.store.runs import RunSummary, group_key, group_runs
from lhbench.store.store import Store

__all__ = [
    "ComparisonRecord",
    "ResultState",
    "RunSummary",
    "Store",
    "UserRecord",
    "current_revision",
    "group_key",
    "group_runs",
    "head_revision",
    "make_engine",
    "upgrade",
]
