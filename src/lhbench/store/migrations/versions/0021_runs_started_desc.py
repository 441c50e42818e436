"""``ix_runs_started_desc``: the runs page's default order, newest first, never-started last.

The runs page orders ``started_at DESC NULLS LAST, id DESC NULLS LAST``, which PostgreSQL
could not read from ``ix_runs_started_at_id`` (a backward scan gives NULLS FIRST): it
sorted every run (125 ms warm at 100,000 runs; with this index an index-only scan,
0.08 ms in EXPLAIN ANALYZE).

Revision ID: 0021
Revises: the newest revision below 0021 present
Create Date: 2026-11-27 18:30:00
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

revision: str = "0021"
down_revision: str | None = max(
    p.name[:4] for p in Path(__file__).parent.glob("00[0-9][0-9]_*.py") if p.name[:4] < "0021"
)
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # SQLite takes no NULLS LAST in an index, and needs none: NULL sorts lowest there, so
    # DESC is already newest first with never-started runs last
    last = " NULLS LAST" if op.get_bind().dialect.name == "postgresql" else ""
    op.execute(f"CREATE INDEX ix_runs_started_desc ON runs (started_at DESC{last}, id DESC{last})")


def downgrade() -> None:
    op.drop_index("ix_runs_started_desc", table_name="runs")
