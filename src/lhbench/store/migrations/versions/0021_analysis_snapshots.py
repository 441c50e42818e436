"""The overview's summary kept across server starts: ``analysis_snapshots``; runs newest first.

A server summarising 100,000 runs from scratch took about 10 s after each start. It now
keeps its summary in ``analysis_snapshots`` (one row per server secret and grouping, the
blobs signed with that server's key; see :mod:`lhbench.web.snapshot`) and at the next
start reads it and the change log written since (migration 0020) instead.

Also ``ix_runs_started_desc``: the runs page orders ``started_at DESC NULLS LAST, id DESC
NULLS LAST``, which PostgreSQL could not read from ``ix_runs_started_at_id`` (a backward
scan gives NULLS FIRST) and sorted every run for (125 ms warm at 100,000 runs).

Revision ID: 0021
Revises: the newest revision below 0021 present
Create Date: 2026-11-27 18:30:00
"""

from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from alembic import op

import lhbench.store.tables

revision: str = "0021"
# other work in progress may add revisions below 0021: follow the newest one present
down_revision: str | None = max(
    p.name[:4] for p in Path(__file__).parent.glob("00[0-9][0-9]_*.py") if p.name[:4] < "0021"
)
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "analysis_snapshots",
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("mark", sa.BigInteger(), nullable=False),
        sa.Column("lhbench_version", sa.String(length=100), nullable=False),
        sa.Column("schema_revision", sa.String(length=40), nullable=False),
        sa.Column("mac", sa.String(length=64), nullable=False),
        sa.Column("front", sa.LargeBinary(), nullable=False),
        sa.Column("heavy", sa.LargeBinary(), nullable=False),
        sa.Column("made_at", lhbench.store.tables.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_analysis_snapshots")),
    )
    # SQLite takes no NULLS LAST in an index, and needs none: NULL sorts lowest there, so
    # DESC is already newest first with never-started runs last
    last = " NULLS LAST" if op.get_bind().dialect.name == "postgresql" else ""
    op.execute(f"CREATE INDEX ix_runs_started_desc ON runs (started_at DESC{last}, id DESC{last})")


def downgrade() -> None:
    op.drop_index("ix_runs_started_desc", table_name="runs")
    op.drop_table("analysis_snapshots")
