"""A model's failure extractions: ``failure_extractions``.

``lhbench failures --llm M`` asks a model for each run's error events; each answer (or why
there is none) is stored under its key (run, model, endpoint, prompt), so a rerun asks only
for what is missing and an interrupted one resumes.

Revision ID: 0019
Revises: the newest revision below 0019 present
Create Date: 2026-11-27 12:20:00
"""

from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

import lhbench.store.tables

revision: str = "0019"
# other work in progress may add revisions below 0019: follow the newest one present
down_revision: str | None = max(
    p.name[:4] for p in Path(__file__).parent.glob("00[0-9][0-9]_*.py") if p.name[:4] < "0019"
)
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "failure_extractions",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("run_id", sa.String(length=200), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("retryable", sa.Boolean(), nullable=False),
        sa.Column("document", sa.JSON().with_variant(JSONB(), "postgresql"), nullable=False),
        sa.Column("created_at", lhbench.store.tables.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_failure_extractions")),
    )
    op.create_index(
        op.f("ix_failure_extractions_run_id"), "failure_extractions", ["run_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_failure_extractions_run_id"), table_name="failure_extractions")
    op.drop_table("failure_extractions")
