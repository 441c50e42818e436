"""Chapter-level preference votes: ``votes.chapter_id``.

A human preference on programmatic content compares one chapter of two courses (LH-Bench's
275 matched chapter-level comparisons); the column names that chapter. NULL, as for every
vote stored before, is a vote on the two runs as a whole (the arena's).

Revision ID: 0016
Revises: the newest revision below 0016 present
Create Date: 2026-11-27 05:30:00
"""

from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
# other work in progress may add revisions below 0016: follow the newest one present
down_revision: str | None = max(
    p.name[:4] for p in Path(__file__).parent.glob("00[0-9][0-9]_*.py") if p.name[:4] < "0016"
)
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("votes") as batch:
        batch.add_column(sa.Column("chapter_id", sa.String(length=200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("votes") as batch:
        batch.drop_column("chapter_id")
