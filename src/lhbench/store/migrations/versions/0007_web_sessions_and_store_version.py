"""Web: server-side sessions, login failures, arena outcomes, and a store version.

- ``web_sessions``: one row per signed-in browser (the cookie's hash), deleted on logout,
  password change, role change and account removal.
- ``login_failures``: failed sign-ins, for rate limits per name and per address.
- ``comparisons.outcome`` (left, right, tie, both_bad, skip) and ``comparisons.vote_id``
  (unique: one vote per comparison, held by the database on both backends).
- ``ix_grades_overview``: an index covering the grade columns the web overview reads, so
  it never reads the grades' JSON documents.
- ``store_version``: a counter that triggers bump on every write to the tables pages
  are computed from, so page caches notice in-place updates from any process. Steps are
  left out (no cached page reads them, and a per-row trigger would slow bulk imports).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-27 10:00:00
"""

from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from alembic import op

from lhbench.store.tables import UTCDateTime

revision: str = "0007"
# 0005 and 0006 are reserved for other work in progress: until both exist this revision
# follows the newest one present, so the chain never forks (set "0006" once it lands)
down_revision: str | None = max(p.name[:4] for p in Path(__file__).parent.glob("000[1-6]_*.py"))
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# tables whose writes bump store_version (what cached pages are computed from)
VERSIONED = (
    "packs",
    "tasks",
    "rubrics",
    "runs",
    "artifacts",
    "grades",
    "verdicts",
    "votes",
    "labels",
    "comparisons",
)
_BUMP = "UPDATE store_version SET version = version + 1 WHERE id = 1"


def upgrade() -> None:
    op.create_table(
        "web_sessions",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("user", sa.String(length=100), nullable=False),
        sa.Column("csrf", sa.String(length=64), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user"], ["users.name"], name=op.f("fk_web_sessions_user_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_web_sessions")),
    )
    op.create_index(op.f("ix_web_sessions_user"), "web_sessions", ["user"], unique=False)

    op.create_table(
        "login_failures",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("address", sa.String(length=100), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_login_failures")),
    )
    for col in ("name", "address", "created_at"):
        op.create_index(op.f(f"ix_login_failures_{col}"), "login_failures", [col], unique=False)

    with op.batch_alter_table("comparisons", schema=None) as b:
        b.add_column(sa.Column("outcome", sa.String(length=10), nullable=True))
        b.add_column(sa.Column("vote_id", sa.String(length=200), nullable=True))
        b.create_unique_constraint(b.f("uq_comparisons_vote_id"), ["vote_id"])

    # the overview's columns of every grade, without its JSON document
    op.create_index(
        "ix_grades_overview",
        "grades",
        [
            "judge_key",
            "created_at",
            "rubric_hash",
            "tier",
            "rubric_id",
            "rubric_version",
            "run_id",
            "status",
            "retryable",
            "tier_score",
        ],
        unique=False,
    )
    op.create_table(
        "store_version",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_store_version")),
    )
    op.execute("INSERT INTO store_version (id, version) VALUES (1, 1)")
    # triggers last: a batch alter on SQLite recreates its table and drops its triggers
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION lhb_bump_store_version() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN {_BUMP}; RETURN NULL; END $$"
        )
        for table in VERSIONED:
            # once per statement: a bulk insert costs one update, not one per row
            op.execute(
                f"CREATE TRIGGER lhb_version_{table} AFTER INSERT OR UPDATE OR DELETE OR "
                f"TRUNCATE ON {table} FOR EACH STATEMENT EXECUTE FUNCTION "
                "lhb_bump_store_version()"
            )
    else:
        for table in VERSIONED:
            for event in ("INSERT", "UPDATE", "DELETE"):
                op.execute(
                    f"CREATE TRIGGER lhb_version_{table}_{event.lower()} AFTER {event} "
                    f"ON {table} BEGIN {_BUMP}; END"
                )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in VERSIONED:
            op.execute(f"DROP TRIGGER IF EXISTS lhb_version_{table} ON {table}")
        op.execute("DROP FUNCTION IF EXISTS lhb_bump_store_version()")
    else:
        for table in VERSIONED:
            for event in ("insert", "update", "delete"):
                op.execute(f"DROP TRIGGER IF EXISTS lhb_version_{table}_{event}")
    op.drop_table("store_version")
    op.drop_index("ix_grades_overview", table_name="grades")
    with op.batch_alter_table("comparisons", schema=None) as b:
        b.drop_constraint(b.f("uq_comparisons_vote_id"), type_="unique")
        b.drop_column("vote_id")
        b.drop_column("outcome")
    for col in ("created_at", "address", "name"):
        op.drop_index(op.f(f"ix_login_failures_{col}"), table_name="login_failures")
    op.drop_table("login_failures")
    op.drop_index(op.f("ix_web_sessions_user"), table_name="web_sessions")
    op.drop_table("web_sessions")
