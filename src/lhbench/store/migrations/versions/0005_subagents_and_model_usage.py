"""Steps name the sub-agent that took them; runs keep their usage per model.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-26 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("steps", schema=None) as b:
        b.add_column(sa.Column("agent_id", sa.String(length=200), nullable=True))
    with op.batch_alter_table("runs", schema=None) as b:
        b.add_column(
            sa.Column(
                "model_usage",
                sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
                nullable=True,
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as b:
        b.drop_column("model_usage")
    with op.batch_alter_table("steps", schema=None) as b:
        b.drop_column("agent_id")
