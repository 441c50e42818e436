"""Annotations: immutable versions of an SME's annotated chapters per (pack, task).

- ``annotation_versions``: one row per save; ``version`` counts from 1 per (pack, task),
  ``parent`` is the version the author started from, and ``content`` holds the chapters
  (title, notes, criteria, cited spans) and the global notes. The unique constraint on
  ``(pack_id, task_id, version)`` refuses a second save on the same parent.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26 14:00:00
"""

from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from lhbench.store.tables import UTCDateTime

revision: str = "0008"
# follows the newest earlier revision present (0006 and 0007 are numbered per issue)
down_revision: str | None = max(p.name[:4] for p in Path(__file__).parent.glob("000[1-7]_*.py"))
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "annotation_versions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("pack_id", sa.String(length=200), nullable=False),
        sa.Column("task_id", sa.String(length=200), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("parent", sa.Integer(), nullable=True),
        sa.Column("author", sa.String(length=100), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column(
            "content",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_annotation_versions")),
        sa.UniqueConstraint(
            "pack_id", "task_id", "version", name=op.f("uq_annotation_versions_pack_id")
        ),
    )


def downgrade() -> None:
    op.drop_table("annotation_versions")
