"""Which runs' judgements changed: ``analysis_changes``, kept by triggers; runs by start.

The web overview summarises every grade of the store. Recomputing it after each write
cost 14 s at 1,000,000 grades; with this log a server reads what changed since its last
summary and recomputes only the runs written to. Triggers write the log, so every write
path (the store's, bulk loads, another process, hand-written SQL) is in it:

- ``grades``, ``labels``, ``verdicts``: one row per written run (old and new run of an
  update), ``run_id`` set;
- ``votes``: one row per write, ``run_id`` NULL (the Elo is recomputed);
- ``runs``, ``packs``, ``tasks``, ``rubrics`` and any TRUNCATE: one row, ``run_id`` NULL,
  meaning "summarise everything again".

``seq`` orders the log by commit: SQLite has one writer at a time, and on PostgreSQL the
trigger first takes the ``store_version`` row's lock (held to commit) before a ``seq`` is
drawn, so no reader ever sees a later ``seq`` committed before an earlier one. No backfill:
a server starts from a full summary and reads the log from then on.

Also ``ix_runs_started_at_id``: the runs page lists the newest runs first.

Revision ID: 0020
Revises: the newest revision below 0020 present
Create Date: 2026-11-27 15:00:00
"""

from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
# other work in progress may add revisions below 0020: follow the newest one present
down_revision: str | None = max(
    p.name[:4] for p in Path(__file__).parent.glob("00[0-9][0-9]_*.py") if p.name[:4] < "0020"
)
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PER_RUN = ("grades", "labels", "verdicts")
WHOLE = ("votes", "runs", "packs", "tasks", "rubrics")
_LOCK = "UPDATE store_version SET version = version + 1 WHERE id = 1"


def upgrade() -> None:
    # the runs page's default order (started_at, newest first): read from an index, not a
    # sort of every run (240 ms at 100,000 runs on SQLite)
    op.create_index("ix_runs_started_at_id", "runs", ["started_at", "id"], unique=False)
    op.create_table(
        "analysis_changes",
        sa.Column("seq", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("tbl", sa.String(length=20), nullable=False),
        sa.Column("run_id", sa.String(length=200), nullable=True),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_analysis_changes")),
        sqlite_autoincrement=True,
    )
    if op.get_bind().dialect.name == "postgresql":
        _postgresql_triggers()
    else:
        _sqlite_triggers()


def _sqlite_triggers() -> None:
    log = "INSERT INTO analysis_changes (tbl, run_id) VALUES"
    for table in PER_RUN:
        op.execute(
            f"CREATE TRIGGER lhb_changes_{table}_insert AFTER INSERT ON {table} "
            f"BEGIN {log} ('{table}', NEW.run_id); END"
        )
        op.execute(
            f"CREATE TRIGGER lhb_changes_{table}_delete AFTER DELETE ON {table} "
            f"BEGIN {log} ('{table}', OLD.run_id); END"
        )
        op.execute(
            f"CREATE TRIGGER lhb_changes_{table}_update AFTER UPDATE ON {table} "
            f"BEGIN {log} ('{table}', OLD.run_id); "
            f"INSERT INTO analysis_changes (tbl, run_id) SELECT '{table}', NEW.run_id "
            "WHERE NEW.run_id IS NOT OLD.run_id; END"
        )
    for table in WHOLE:
        for event in ("INSERT", "UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER lhb_changes_{table}_{event.lower()} AFTER {event} ON {table} "
                f"BEGIN {log} ('{table}', NULL); END"
            )


def _postgresql_triggers() -> None:
    # per statement, with the statement's rows as transition tables: a bulk load of a
    # million grades logs each run once per statement, not each grade
    for name, rows in (("new", "new_rows"), ("old", "old_rows")):
        op.execute(
            f"CREATE FUNCTION lhb_log_{name}_runs() RETURNS trigger LANGUAGE plpgsql AS $$ "
            f"BEGIN {_LOCK}; "
            "INSERT INTO analysis_changes (tbl, run_id) "
            f"SELECT DISTINCT TG_TABLE_NAME, run_id FROM {rows}; RETURN NULL; END $$"
        )
    op.execute(
        "CREATE FUNCTION lhb_log_whole() RETURNS trigger LANGUAGE plpgsql AS $$ "
        f"BEGIN {_LOCK}; "
        "INSERT INTO analysis_changes (tbl, run_id) VALUES "
        "(CASE WHEN TG_OP = 'TRUNCATE' THEN 'truncate' ELSE TG_TABLE_NAME END, NULL); "
        "RETURN NULL; END $$"
    )
    for table in PER_RUN:
        op.execute(
            f"CREATE TRIGGER lhb_changes_{table}_insert AFTER INSERT ON {table} "
            "REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT "
            "EXECUTE FUNCTION lhb_log_new_runs()"
        )
        op.execute(
            f"CREATE TRIGGER lhb_changes_{table}_delete AFTER DELETE ON {table} "
            "REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT "
            "EXECUTE FUNCTION lhb_log_old_runs()"
        )
        # an update logs the rows' old and new runs
        op.execute(
            f"CREATE TRIGGER lhb_changes_{table}_update_old AFTER UPDATE ON {table} "
            "REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT "
            "EXECUTE FUNCTION lhb_log_old_runs()"
        )
        op.execute(
            f"CREATE TRIGGER lhb_changes_{table}_update_new AFTER UPDATE ON {table} "
            "REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT "
            "EXECUTE FUNCTION lhb_log_new_runs()"
        )
        op.execute(
            f"CREATE TRIGGER lhb_changes_{table}_truncate AFTER TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION lhb_log_whole()"
        )
    for table in WHOLE:
        op.execute(
            f"CREATE TRIGGER lhb_changes_{table} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE "
            f"ON {table} FOR EACH STATEMENT EXECUTE FUNCTION lhb_log_whole()"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in PER_RUN:
            for suffix in ("insert", "delete", "update_old", "update_new", "truncate"):
                op.execute(f"DROP TRIGGER IF EXISTS lhb_changes_{table}_{suffix} ON {table}")
        for table in WHOLE:
            op.execute(f"DROP TRIGGER IF EXISTS lhb_changes_{table} ON {table}")
        for fn in ("lhb_log_new_runs", "lhb_log_old_runs", "lhb_log_whole"):
            op.execute(f"DROP FUNCTION IF EXISTS {fn}()")
    else:
        for table in (*PER_RUN, *WHOLE):
            for event in ("insert", "update", "delete"):
                op.execute(f"DROP TRIGGER IF EXISTS lhb_changes_{table}_{event}")
    op.drop_table("analysis_changes")
    op.drop_index("ix_runs_started_at_id", table_name="runs")
