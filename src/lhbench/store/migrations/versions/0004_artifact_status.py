"""Artifacts say what was kept of them: ok, truncated or omitted, and why.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-26 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("artifacts", schema=None) as b:
        b.add_column(sa.Column("status", sa.String(length=20), nullable=False, server_default="ok"))
        b.add_column(sa.Column("note", sa.Text(), nullable=True))
    with op.batch_alter_table("artifacts", schema=None) as b:
        b.alter_column("status", server_default=None)


def downgrade() -> None:
    with op.batch_alter_table("artifacts", schema=None) as b:
        b.drop_column("note")
        b.drop_column("status")
