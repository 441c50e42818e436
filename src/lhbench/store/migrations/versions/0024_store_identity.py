"""``store_identity``: a random token made with the database, never changed.

A web server saves what its summary read (the grade cells, every run, label and verdict)
in a file beside the store, tagged with the store's URL and change-log mark, and its next
start reads only what the log says was written since. A database deleted and made again
at the same URL starts a new log whose marks reach the saved one with other writes; the
token tells the two databases apart, so such a file is never taken for the new one.

Revision ID: 0024
Revises: the newest revision below 0024 present
Create Date: 2026-11-29 03:45:00
"""

import secrets
from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | None = max(
    p.name[:4] for p in Path(__file__).parent.glob("00[0-9][0-9]_*.py") if p.name[:4] < "0024"
)
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    table = op.create_table(
        "store_identity",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_store_identity")),
    )
    op.bulk_insert(table, [{"id": 1, "token": secrets.token_hex(16)}])


def downgrade() -> None:
    op.drop_table("store_identity")
