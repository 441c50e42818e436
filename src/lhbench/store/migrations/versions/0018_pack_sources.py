"""Where a pack version was loaded from: ``packs.source_dir`` and ``packs.disk_stat``.

Commands that read a pack's figures (report, aj score, the web app) check the registered
pack against its directory: ``disk_stat`` (paths, sizes and modification times of its
files, recorded at registration) is the cheap gate before the pack is hashed again.
NULL, as for every pack stored before: no directory known, nothing to check.

Revision ID: 0018
Revises: the newest revision below 0018 present
Create Date: 2026-11-27 09:40:00
"""

from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
# other work in progress may add revisions below 0018: follow the newest one present
down_revision: str | None = max(
    p.name[:4] for p in Path(__file__).parent.glob("00[0-9][0-9]_*.py") if p.name[:4] < "0018"
)
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # plain ALTER TABLE (no batch copy): on SQLite a copied-and-dropped packs table would
    # cascade to its tasks and rubrics
    op.add_column("packs", sa.Column("source_dir", sa.Text(), nullable=True))
    op.add_column("packs", sa.Column("disk_stat", sa.String(length=64), nullable=True))


def downgrade() -> None:
    op.drop_column("packs", "disk_stat")
    op.drop_column("packs", "source_dir")
