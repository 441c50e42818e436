"""Arena: annotator accounts and the comparisons shown to them.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-26 02:55:28.088471
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import lhbench.store.tables

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "comparisons",
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.Column("annotator", sa.String(length=100), nullable=False),
        sa.Column("pack_id", sa.String(length=200), nullable=False),
        sa.Column("task_id", sa.String(length=200), nullable=False),
        sa.Column("run_a", sa.String(length=200), nullable=False),
        sa.Column("run_b", sa.String(length=200), nullable=False),
        sa.Column("left", sa.String(length=1), nullable=False),
        sa.Column("created_at", lhbench.store.tables.UTCDateTime(timezone=True), nullable=False),
        sa.Column("voted_at", lhbench.store.tables.UTCDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("token", name=op.f("pk_comparisons")),
    )
    with op.batch_alter_table("comparisons", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_comparisons_annotator"), ["annotator"], unique=False)

    op.create_table(
        "users",
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("password_hash", sa.String(length=300), nullable=False),
        sa.Column("is_admin", sa.Boolean(), nullable=False),
        sa.Column("created_at", lhbench.store.tables.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_users")),
    )


def downgrade() -> None:
    op.drop_table("users")
    with op.batch_alter_table("comparisons", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_comparisons_annotator"))

    op.drop_table("comparisons")
