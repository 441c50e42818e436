"""Identity and final results: grades keyed per run with the rubric's content hash and the
judge config; retryable failures; failed pairwise votes kept; undecided labels.

Grades stored before this revision carry no rubric hash: analysis counts them as stale.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-26 08:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from lhbench.store.tables import UTCDateTime

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("packs", schema=None) as b:
        b.add_column(sa.Column("seen_at", UTCDateTime(timezone=True), nullable=True))
    op.execute("UPDATE packs SET seen_at = created_at")
    with op.batch_alter_table("packs", schema=None) as b:
        b.alter_column("seen_at", existing_type=UTCDateTime(timezone=True), nullable=False)

    with op.batch_alter_table("grades", schema=None) as b:
        b.drop_constraint("uq_grades_cache_key", type_="unique")
        b.alter_column("cache_key", new_column_name="key", existing_type=sa.String(length=128))
        b.add_column(
            sa.Column("rubric_hash", sa.String(length=64), nullable=False, server_default="")
        )
        b.add_column(
            sa.Column("judge_key", sa.String(length=64), nullable=False, server_default="")
        )
        b.add_column(
            sa.Column("retryable", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        b.create_index(b.f("ix_grades_judge_key"), ["judge_key"], unique=False)
        b.create_index("ix_grades_rubric_tier", ["rubric_id", "tier"], unique=False)
    with op.batch_alter_table("grades", schema=None) as b:
        b.create_unique_constraint(b.f("uq_grades_key"), ["key"])
        for col in ("rubric_hash", "judge_key", "retryable"):
            b.alter_column(col, server_default=None)

    with op.batch_alter_table("verdicts", schema=None) as b:
        b.drop_constraint("uq_verdicts_cache_key", type_="unique")
        b.alter_column("cache_key", new_column_name="key", existing_type=sa.String(length=128))
        b.add_column(
            sa.Column("judge_key", sa.String(length=64), nullable=False, server_default="")
        )
        b.add_column(
            sa.Column("retryable", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        b.create_index(b.f("ix_verdicts_judge_key"), ["judge_key"], unique=False)
    with op.batch_alter_table("verdicts", schema=None) as b:
        b.create_unique_constraint(b.f("uq_verdicts_key"), ["key"])
        for col in ("judge_key", "retryable"):
            b.alter_column(col, server_default=None)

    with op.batch_alter_table("votes", schema=None) as b:
        b.alter_column("winner", existing_type=sa.String(length=3), nullable=True)
        b.add_column(sa.Column("status", sa.String(length=20), nullable=False, server_default="ok"))
        b.add_column(sa.Column("error", sa.Text(), nullable=True))
        b.add_column(
            sa.Column("retryable", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        b.add_column(sa.Column("rubric_id", sa.String(length=200), nullable=True))
        b.add_column(sa.Column("rubric_hash", sa.String(length=64), nullable=True))
        b.add_column(sa.Column("tier", sa.String(length=20), nullable=True))
        b.add_column(sa.Column("judge_key", sa.String(length=64), nullable=True))
    with op.batch_alter_table("votes", schema=None) as b:
        for col in ("status", "retryable"):
            b.alter_column(col, server_default=None)

    with op.batch_alter_table("labels", schema=None) as b:
        b.alter_column("passed", existing_type=sa.Boolean(), nullable=True)
        b.add_column(sa.Column("error", sa.Text(), nullable=True))
        b.add_column(
            sa.Column("check_hash", sa.String(length=64), nullable=False, server_default="")
        )
    with op.batch_alter_table("labels", schema=None) as b:
        b.alter_column("check_hash", server_default=None)


def downgrade() -> None:
    with op.batch_alter_table("packs", schema=None) as b:
        b.drop_column("seen_at")
    with op.batch_alter_table("labels", schema=None) as b:
        b.drop_column("check_hash")
        b.drop_column("error")
        b.alter_column("passed", existing_type=sa.Boolean(), nullable=False)
    with op.batch_alter_table("votes", schema=None) as b:
        for col in (
            "judge_key",
            "tier",
            "rubric_hash",
            "rubric_id",
            "retryable",
            "error",
            "status",
        ):
            b.drop_column(col)
        b.alter_column("winner", existing_type=sa.String(length=3), nullable=False)
    with op.batch_alter_table("verdicts", schema=None) as b:
        b.drop_index(b.f("ix_verdicts_judge_key"))
        b.drop_constraint(b.f("uq_verdicts_key"), type_="unique")
        b.drop_column("retryable")
        b.drop_column("judge_key")
        b.alter_column("key", new_column_name="cache_key", existing_type=sa.String(length=128))
        b.create_unique_constraint("uq_verdicts_cache_key", ["cache_key"])
    with op.batch_alter_table("grades", schema=None) as b:
        b.drop_index("ix_grades_rubric_tier")
        b.drop_index(b.f("ix_grades_judge_key"))
        b.drop_constraint(b.f("uq_grades_key"), type_="unique")
        b.drop_column("retryable")
        b.drop_column("judge_key")
        b.drop_column("rubric_hash")
        b.alter_column("key", new_column_name="cache_key", existing_type=sa.String(length=128))
        b.create_unique_constraint("uq_grades_cache_key", ["cache_key"])
