"""PostgreSQL: a step's run checked once per statement, not once per row.

The foreign key ``fk_steps_run_id_runs`` made PostgreSQL run a ``SELECT … FOR KEY SHARE``
of the run for every step inserted, though every row of an import's batch (a COPY of 5,000
steps) names the same run: half the server's CPU of a 200 MB import (1.9-2.0 s of 2.0 s
without it; ``bench/ingest.py``, docs/performance.md), and the importer waited for it.

On PostgreSQL the constraint is replaced by statement-level triggers doing the same work
once per statement over its transition table (``STEPS_RUN_CHECK`` in ``store.tables``):

- after an ``INSERT``/``COPY`` or ``UPDATE`` of steps, the runs the new rows name are
  locked ``FOR KEY SHARE`` (as the key's check locked each; a concurrent delete of the run
  waits for this transaction, or this one sees the run gone) and a step whose run is
  missing fails the statement with the key's SQLSTATE ``23503`` (``foreign_key_violation``)
  and its constraint name, so callers see the same ``IntegrityError``;
- after a ``DELETE`` of runs, their steps are deleted (the key's ``ON DELETE CASCADE``);
- an ``UPDATE`` of a run's id that steps still name fails, as the key's ``NO ACTION`` did.

SQLite keeps the key: its check is a B-tree lookup in the importing process.

Revision ID: 0023
Revises: the newest revision below 0023 present
Create Date: 2026-11-28 00:40:00
"""

from collections.abc import Sequence
from pathlib import Path

from alembic import op

from lhbench.store.tables import STEPS_RUN_CHECK_DROP, STEPS_RUN_CHECK_SQL

revision: str = "0023"
down_revision: str | None = max(
    p.name[:4] for p in Path(__file__).parent.glob("00[0-9][0-9]_*.py") if p.name[:4] < "0023"
)
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.drop_constraint("fk_steps_run_id_runs", "steps", type_="foreignkey")
    for statement in STEPS_RUN_CHECK_SQL:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for statement in STEPS_RUN_CHECK_DROP:
        op.execute(statement)
    op.create_foreign_key(
        "fk_steps_run_id_runs", "steps", "runs", ["run_id"], ["id"], ondelete="CASCADE"
    )
