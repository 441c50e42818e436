"""Programmatic content: synthesised chapter rubrics and per-chapter grades.

- ``chapter_rubrics``: one row per chapter rubric version, keyed by its provenance (pack,
  task, chapter, scale, annotations hash, model, prompt version), so rerunning synthesis
  with the same inputs reuses the stored rubric.
- ``chapter_grades``: one judge's grade of one chapter of a run on one rubric at one
  scale, unique on its key (resumable, never duplicated).

Revision ID: 0010
Revises: the newest revision below 0010 present
Create Date: 2026-11-26 14:00:00
"""

from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

from lhbench.store.tables import UTCDateTime

revision: str = "0010"
# 0008 and 0009 are reserved for other work in progress: follow the newest one present
down_revision: str | None = max(
    p.name[:4] for p in Path(__file__).parent.glob("00[0-9][0-9]_*.py") if p.name[:4] < "0010"
)
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "chapter_rubrics",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("pack_id", sa.String(length=200), nullable=False),
        sa.Column("task_id", sa.String(length=200), nullable=False),
        sa.Column("chapter_id", sa.String(length=200), nullable=False),
        sa.Column("scale", sa.String(length=10), nullable=False),
        sa.Column("rubric_id", sa.String(length=200), nullable=False),
        sa.Column("family", sa.String(length=200), nullable=False),
        sa.Column("version", sa.String(length=100), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("annotations_sha256", sa.String(length=64), nullable=False),
        sa.Column("ground_truth_sha256", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("prompt_version", sa.String(length=100), nullable=False),
        sa.Column("document", _JSON, nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_chapter_rubrics")),
    )
    op.create_index(
        "ix_chapter_rubrics_task",
        "chapter_rubrics",
        ["pack_id", "task_id", "chapter_id"],
        unique=False,
    )
    op.create_table(
        "chapter_grades",
        sa.Column("id", sa.String(length=200), nullable=False),
        sa.Column("key", sa.String(length=128), nullable=False),
        sa.Column("run_id", sa.String(length=200), nullable=False),
        sa.Column("chapter_id", sa.String(length=200), nullable=False),
        sa.Column("scale", sa.String(length=10), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("rubric_id", sa.String(length=200), nullable=False),
        sa.Column("rubric_hash", sa.String(length=64), nullable=False),
        sa.Column("judge_key", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("retryable", sa.Boolean(), nullable=False),
        sa.Column("tier_score", sa.Float(), nullable=True),
        sa.Column("document", _JSON, nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chapter_grades")),
        sa.UniqueConstraint("key", name=op.f("uq_chapter_grades_key")),
    )
    op.create_index(op.f("ix_chapter_grades_run_id"), "chapter_grades", ["run_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_chapter_grades_run_id"), table_name="chapter_grades")
    op.drop_table("chapter_grades")
    op.drop_index("ix_chapter_rubrics_task", table_name="chapter_rubrics")
    op.drop_table("chapter_rubrics")
