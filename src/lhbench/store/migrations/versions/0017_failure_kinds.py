"""Whose failure a failed run or an undecided label was: ``failure_kind`` on runs and labels.

``infrastructure`` (the model endpoint, a package, a browser or the sandbox was missing or
unreachable) is never a score: reports leave such runs out of every comparison and name
them. Failed runs stored before are classified from their error, as new ones are
(:func:`lhbench.schema.failure_kind_of`); labels stored before keep NULL (their checks
are re-run when they are undecided).

Revision ID: 0017
Revises: the newest revision below 0017 present
Create Date: 2026-11-27 09:30:00
"""

from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
# other work in progress may add revisions below 0017: follow the newest one present
down_revision: str | None = max(
    p.name[:4] for p in Path(__file__).parent.glob("00[0-9][0-9]_*.py") if p.name[:4] < "0017"
)
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    from lhbench.schema import failure_kind_of

    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("failure_kind", sa.String(length=30), nullable=True))
    with op.batch_alter_table("labels") as batch:
        batch.add_column(sa.Column("failure_kind", sa.String(length=30), nullable=True))
    conn = op.get_bind()
    runs = sa.table(
        "runs",
        sa.column("id", sa.String),
        sa.column("status", sa.String),
        sa.column("error", sa.Text),
        sa.column("failure_kind", sa.String),
    )
    failed = conn.execute(
        sa.select(runs.c.id, runs.c.status, runs.c.error).where(
            runs.c.status.in_(["failed", "timed_out", "limit_exceeded", "incomplete"])
        )
    ).all()
    for run_id, status, error in failed:
        kind = failure_kind_of(status, error)
        if kind is not None:
            conn.execute(runs.update().where(runs.c.id == run_id).values(failure_kind=kind.value))


def downgrade() -> None:
    with op.batch_alter_table("labels") as batch:
        batch.drop_column("failure_kind")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("failure_kind")
