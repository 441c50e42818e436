"""``grades.dim_scores``: each grade's dimension scores as compact JSON beside its document.

The report reads every grade's dimension scores (panel dimension means, κ, α). They were
read out of the document, whose scores carry the judge's evidence: at 1,000,000 grades
SQLite spent ~3 s extracting them and the report one JSON parse per grade, since no two
grades' evidence agrees. ``dim_scores`` holds ``[[dimension_id, scale, score], …]``
only (``store.judgements.dim_scores_text`` writes it), which a panel repeats a few ways.

The backfill rewrites every stored grade's row once. It changes no figure (the column
is derived from the document), so the web overview's change log (migration 0020) is not
told: its triggers on ``grades`` updates are set aside for the statement. The store
version (migration 0007) is bumped once: on SQLite its trigger fires per row (1,002,012
bumps at 100,000 runs), so it too is set aside and the version bumped by hand; on
PostgreSQL it fires once per statement already.

Revision ID: 0022
Revises: the newest revision below 0022 present
Create Date: 2026-11-27 19:45:00
"""

from collections.abc import Sequence
from pathlib import Path

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = max(
    p.name[:4] for p in Path(__file__).parent.glob("00[0-9][0-9]_*.py") if p.name[:4] < "0022"
)
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SQLITE_FILL = """
UPDATE grades SET dim_scores = (
  SELECT json_group_array(json_array(
           json_extract(e.value, '$.dimension_id'),
           json_extract(e.value, '$.scale'),
           json_extract(e.value, '$.score')))
  FROM (SELECT value FROM json_each(grades.document, '$.scores') ORDER BY key) AS e)
"""
_PG_FILL = """
UPDATE grades SET dim_scores = (
  SELECT coalesce(
           jsonb_agg(jsonb_build_array(e -> 'dimension_id', e -> 'scale', e -> 'score')
                     ORDER BY o),
           '[]'::jsonb)::text
  FROM jsonb_array_elements(
         CASE WHEN jsonb_typeof(document -> 'scores') = 'array'
              THEN document -> 'scores' ELSE '[]'::jsonb END) WITH ORDINALITY AS t(e, o))
"""
# the change log's triggers on grades updates (migration 0020), per backend
_SQLITE_TRIGGER = (
    "CREATE TRIGGER lhb_changes_grades_update AFTER UPDATE ON grades "
    "BEGIN INSERT INTO analysis_changes (tbl, run_id) VALUES ('grades', OLD.run_id); "
    "INSERT INTO analysis_changes (tbl, run_id) SELECT 'grades', NEW.run_id "
    "WHERE NEW.run_id IS NOT OLD.run_id; END"
)
_PG_TRIGGERS = ("lhb_changes_grades_update_old", "lhb_changes_grades_update_new")
# the store version's trigger on grades updates (migration 0007; SQLite: one per row)
_SQLITE_VERSION_TRIGGER = (
    "CREATE TRIGGER lhb_version_grades_update AFTER UPDATE ON grades "
    "BEGIN UPDATE store_version SET version = version + 1 WHERE id = 1; END"
)
_BUMP = "UPDATE store_version SET version = version + 1 WHERE id = 1"


def upgrade() -> None:
    op.add_column("grades", sa.Column("dim_scores", sa.Text(), nullable=True))
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        for name in _PG_TRIGGERS:
            op.execute(f"ALTER TABLE grades DISABLE TRIGGER {name}")
        op.execute(_PG_FILL)
        for name in _PG_TRIGGERS:
            op.execute(f"ALTER TABLE grades ENABLE TRIGGER {name}")
    else:
        op.execute("DROP TRIGGER IF EXISTS lhb_changes_grades_update")
        op.execute("DROP TRIGGER IF EXISTS lhb_version_grades_update")
        op.execute(_SQLITE_FILL)
        op.execute(_SQLITE_TRIGGER)
        op.execute(_SQLITE_VERSION_TRIGGER)
        op.execute(_BUMP)  # once, as PostgreSQL's statement trigger bumped it


def downgrade() -> None:
    op.drop_column("grades", "dim_scores")
