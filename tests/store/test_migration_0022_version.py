"""Migration 0022's backfill bumps the store version once, not once per grade.

On SQLite the store version's trigger (migration 0007) fires per row: the backfill of
1,002,012 grades bumped it 1,002,012 times. It is set aside for the statement and the
version bumped once, as PostgreSQL's per-statement trigger does; afterwards the trigger is
back, the same as before, and a later update of a grade bumps it again.
"""

from __future__ import annotations

from sqlalchemy import Engine
from sqlalchemy import text as sa_text

from lhbench.store import make_engine, upgrade
from tests.store.test_migrations import _insert_grades_before_0022, _samples_grade


def _version(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa_text("SELECT version FROM store_version")).scalar_one())


def _grade_triggers(engine: Engine) -> set[tuple[str, str]]:
    """The triggers on grades: (name, definition or enabled state)."""
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            rows = conn.execute(
                sa_text(
                    "SELECT tgname, tgenabled::text || pg_get_triggerdef(oid) FROM pg_trigger "
                    "WHERE tgrelid = 'grades'::regclass AND NOT tgisinternal"
                )
            )
        else:
            rows = conn.execute(
                sa_text(
                    "SELECT name, sql FROM sqlite_master "
                    "WHERE type = 'trigger' AND tbl_name = 'grades'"
                )
            )
        return {(r[0], r[1]) for r in rows}


def test_the_dim_scores_backfill_bumps_the_store_version_once(store_url: str) -> None:
    engine = make_engine(store_url)
    upgrade(engine, "0021")
    _, grade = _samples_grade(
        "samples-output",
        "output",
        {"deliverable": ("binary", 1), "correctness": ("0-2", 2), "clarity": ("0-2", 0)},
        raw=0.7,
    )
    grades = [
        grade.model_copy(update={"id": f"g{i}", "key": f"k{i}", "run_id": f"r{i}"})
        for i in range(5)
    ]
    _insert_grades_before_0022(engine, grades)
    before, triggers = _version(engine), _grade_triggers(engine)
    assert any("version" in name for name, _ in triggers)
    upgrade(engine)
    assert _version(engine) == before + 1
    with engine.connect() as conn:
        filled = conn.execute(sa_text("SELECT count(*) FROM grades WHERE dim_scores IS NULL"))
        assert filled.scalar_one() == 0
    # the triggers are back as they were: a later update of a grade bumps the version
    assert _grade_triggers(engine) == triggers
    with engine.begin() as conn:
        conn.execute(sa_text("UPDATE grades SET tier_score = 0.5 WHERE id = 'g1'"))
    # (on PostgreSQL the change log's triggers bump it too, to order their log)
    assert _version(engine) > before + 1
    engine.dispose()
