"""Persistence on SQLAlchemy 2 + Alembic: SQLite by default, PostgreSQL by URL."""

from lhbench.store.db import current_revision, head_revision, make_engine, upgrade
from lhbench.store.store import RunSummary, Store, group_key, group_runs

__all__ = [
    "RunSummary",
    "Store",
    "current_revision",
    "group_key",
    "group_runs",
    "head_revision",
    "make_engine",
    "upgrade",
]
