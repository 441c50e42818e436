"""Initial schema: packs, tasks, rubrics, runs, steps, artifacts, grades, verdicts,
votes, labels and the model response cache.

Revision ID: 0001
Revises:
Create Date: 2026-11-26 01:57:37.456893
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import lhbench.store.tables

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "grades",
        sa.Column("id", sa.String(length=200), nullable=False),
        sa.Column("cache_key", sa.String(length=128), nullable=False),
        sa.Column("run_id", sa.String(length=200), nullable=False),
        sa.Column("rubric_id", sa.String(length=200), nullable=False),
        sa.Column("rubric_version", sa.String(length=100), nullable=False),
        sa.Column("tier", sa.String(length=20), nullable=False),
        sa.Column("judge_kind", sa.String(length=20), nullable=False),
        sa.Column("judge_model", sa.String(length=200), nullable=False),
        sa.Column("judge_family", sa.String(length=100), nullable=True),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("tier_score", sa.Float(), nullable=True),
        sa.Column("repeat", sa.Integer(), nullable=False),
        sa.Column(
            "document",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("created_at", lhbench.store.tables.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_grades")),
        sa.UniqueConstraint("cache_key", name=op.f("uq_grades_cache_key")),
    )
    with op.batch_alter_table("grades", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_grades_run_id"), ["run_id"], unique=False)

    op.create_table(
        "labels",
        sa.Column("run_id", sa.String(length=200), nullable=False),
        sa.Column("source", sa.String(length=200), nullable=False),
        sa.Column("passed", sa.Boolean(), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("created_at", lhbench.store.tables.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "source", name=op.f("pk_labels")),
    )
    op.create_table(
        "packs",
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("id", sa.String(length=200), nullable=False),
        sa.Column("version", sa.String(length=100), nullable=False),
        sa.Column("environment", sa.String(length=50), nullable=False),
        sa.Column(
            "document",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("created_at", lhbench.store.tables.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("content_hash", name=op.f("pk_packs")),
    )
    with op.batch_alter_table("packs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_packs_id"), ["id"], unique=False)

    op.create_table(
        "response_cache",
        sa.Column("key", sa.String(length=128), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column(
            "response",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("created_at", lhbench.store.tables.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_response_cache")),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.String(length=200), nullable=False),
        sa.Column("pack_id", sa.String(length=200), nullable=False),
        sa.Column("pack_hash", sa.String(length=64), nullable=False),
        sa.Column("task_id", sa.String(length=200), nullable=False),
        sa.Column("harness", sa.String(length=100), nullable=False),
        sa.Column("harness_version", sa.String(length=100), nullable=True),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column(
            "versions",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("repeat", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=30), nullable=False),
        sa.Column("started_at", lhbench.store.tables.UTCDateTime(timezone=True), nullable=True),
        sa.Column("ended_at", lhbench.store.tables.UTCDateTime(timezone=True), nullable=True),
        sa.Column(
            "usage",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("cost_usd", sa.Float(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("source", sa.Text(), nullable=True),
        sa.Column(
            "metadata",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("updated_at", lhbench.store.tables.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
    )
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.create_index("ix_runs_harness_model", ["harness", "model"], unique=False)
        batch_op.create_index("ix_runs_pack_task", ["pack_id", "task_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_runs_status"), ["status"], unique=False)

    op.create_table(
        "verdicts",
        sa.Column("id", sa.String(length=200), nullable=False),
        sa.Column("cache_key", sa.String(length=128), nullable=False),
        sa.Column("run_id", sa.String(length=200), nullable=False),
        sa.Column("judge_kind", sa.String(length=20), nullable=False),
        sa.Column("judge_model", sa.String(length=200), nullable=False),
        sa.Column("verdict", sa.String(length=4), nullable=True),
        sa.Column("repeat", sa.Integer(), nullable=False),
        sa.Column(
            "document",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("created_at", lhbench.store.tables.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_verdicts")),
        sa.UniqueConstraint("cache_key", name=op.f("uq_verdicts_cache_key")),
    )
    with op.batch_alter_table("verdicts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_verdicts_run_id"), ["run_id"], unique=False)

    op.create_table(
        "votes",
        sa.Column("id", sa.String(length=200), nullable=False),
        sa.Column("pack_id", sa.String(length=200), nullable=False),
        sa.Column("task_id", sa.String(length=200), nullable=False),
        sa.Column("run_a", sa.String(length=200), nullable=False),
        sa.Column("run_b", sa.String(length=200), nullable=False),
        sa.Column("left", sa.String(length=1), nullable=False),
        sa.Column("winner", sa.String(length=3), nullable=False),
        sa.Column("quality", sa.Integer(), nullable=True),
        sa.Column("annotator", sa.String(length=200), nullable=False),
        sa.Column("rater_kind", sa.String(length=20), nullable=False),
        sa.Column("created_at", lhbench.store.tables.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_votes")),
    )
    with op.batch_alter_table("votes", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_votes_rater_kind"), ["rater_kind"], unique=False)
        batch_op.create_index(batch_op.f("ix_votes_run_a"), ["run_a"], unique=False)
        batch_op.create_index(batch_op.f("ix_votes_run_b"), ["run_b"], unique=False)

    op.create_table(
        "artifacts",
        sa.Column("run_id", sa.String(length=200), nullable=False),
        sa.Column("name", sa.String(length=500), nullable=False),
        sa.Column("media_type", sa.String(length=100), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=True),
        sa.Column("uri", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_artifacts_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", "name", name=op.f("pk_artifacts")),
    )
    with op.batch_alter_table("artifacts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_artifacts_sha256"), ["sha256"], unique=False)

    op.create_table(
        "rubrics",
        sa.Column("pack_hash", sa.String(length=64), nullable=False),
        sa.Column("rubric_id", sa.String(length=200), nullable=False),
        sa.Column("family", sa.String(length=200), nullable=False),
        sa.Column("version", sa.String(length=100), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column(
            "document",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["pack_hash"],
            ["packs.content_hash"],
            name=op.f("fk_rubrics_pack_hash_packs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("pack_hash", "rubric_id", name=op.f("pk_rubrics")),
    )
    with op.batch_alter_table("rubrics", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_rubrics_family"), ["family"], unique=False)

    op.create_table(
        "steps",
        sa.Column("run_id", sa.String(length=200), nullable=False),
        sa.Column("idx", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=20), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("tool_name", sa.String(length=200), nullable=True),
        sa.Column("tool_call_id", sa.String(length=200), nullable=True),
        sa.Column(
            "tool_input",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column("tool_output", sa.Text(), nullable=True),
        sa.Column("is_error", sa.Boolean(), nullable=False),
        sa.Column("exit_code", sa.Integer(), nullable=True),
        sa.Column("timestamp", lhbench.store.tables.UTCDateTime(timezone=True), nullable=True),
        sa.Column(
            "usage",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
        sa.Column(
            "metadata",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_steps_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", "idx", name=op.f("pk_steps")),
    )
    op.create_table(
        "tasks",
        sa.Column("pack_hash", sa.String(length=64), nullable=False),
        sa.Column("task_id", sa.String(length=200), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column(
            "document",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["pack_hash"],
            ["packs.content_hash"],
            name=op.f("fk_tasks_pack_hash_packs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("pack_hash", "task_id", name=op.f("pk_tasks")),
    )
    with op.batch_alter_table("tasks", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_tasks_content_hash"), ["content_hash"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("tasks", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tasks_content_hash"))

    op.drop_table("tasks")
    op.drop_table("steps")
    with op.batch_alter_table("rubrics", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_rubrics_family"))

    op.drop_table("rubrics")
    with op.batch_alter_table("artifacts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_artifacts_sha256"))

    op.drop_table("artifacts")
    with op.batch_alter_table("votes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_votes_run_b"))
        batch_op.drop_index(batch_op.f("ix_votes_run_a"))
        batch_op.drop_index(batch_op.f("ix_votes_rater_kind"))

    op.drop_table("votes")
    with op.batch_alter_table("verdicts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_verdicts_run_id"))

    op.drop_table("verdicts")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_runs_status"))
        batch_op.drop_index("ix_runs_pack_task")
        batch_op.drop_index("ix_runs_harness_model")

    op.drop_table("runs")
    op.drop_table("response_cache")
    with op.batch_alter_table("packs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_packs_id"))

    op.drop_table("packs")
    op.drop_table("labels")
    with op.batch_alter_table("grades", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_grades_run_id"))

    op.drop_table("grades")
