from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine
from sqlalchemy import text as sa_text

from lhbench.store import Store, current_revision, head_revision, make_engine, upgrade
from lhbench.store.tables import TRIGGER_CHECKED_KEYS, Base


def test_migrations_build_exactly_the_orm_schema(store_url: str) -> None:
    engine = make_engine(store_url)
    assert current_revision(engine) is None
    upgrade(engine)
    upgrade(engine)  # idempotent
    assert current_revision(engine) == head_revision()
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    if engine.dialect.name == "postgresql":
        # the steps -> runs key is checked by statement triggers there (migration 0023):
        # exactly that key is missing, nothing else differs
        removed = {d[1].name for d in diff if d[0] == "add_fk"}
        assert removed == set(TRIGGER_CHECKED_KEYS)
        diff = [d for d in diff if not (d[0] == "add_fk" and d[1].name in removed)]
    assert diff == []
    engine.dispose()


def test_store_open_migrates(store_url: str) -> None:
    with Store.open(store_url) as s:
        assert current_revision(s.engine) == head_revision()
        assert s.counts()["runs"] == 0


def upgrade_down(engine: Engine, revision: str) -> None:
    from alembic import command

    from lhbench.store.db import alembic_config

    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, revision)


def _samples_grade(rubric_id: str, tier: str, scores: dict[str, tuple[str, int]], raw: float):
    from lhbench.packs import bundled_pack_dirs, load_pack
    from lhbench.schema import DimensionScore, Grade, JudgeIdentity, JudgeKind, Scale, TierKind

    pack = load_pack(next(d for d in bundled_pack_dirs() if d.name == "lhbench-samples"))
    rubric = next(r for r in pack.rubrics if r.id == rubric_id)
    return pack, Grade(
        id=f"g-{rubric_id}",
        run_id="r1",
        rubric_id=rubric_id,
        rubric_version=rubric.version,
        rubric_hash=rubric.content_hash,
        tier=TierKind(tier),
        judge=JudgeIdentity(kind=JudgeKind.LLM, model="openai:j"),
        scores=[
            DimensionScore(dimension_id=d, scale=Scale(scale), score=s)
            for d, (scale, s) in scores.items()
        ],
        tier_score=raw,
        key=f"key-{rubric_id}-{tier}",
    )


def _insert_grades_before_0022(engine: Engine, grades: list) -> None:
    """Grades as the store wrote them before ``grades.dim_scores`` existed."""
    from lhbench.store.judgements import _grade_row
    from lhbench.store.tables import GradeRow

    rows = [_grade_row(g) for g in grades]
    for row in rows:
        del row["dim_scores"]
    with engine.begin() as conn:
        conn.execute(GradeRow.__table__.insert(), rows)


def test_grades_stored_before_0022_get_their_dimension_scores_and_log_no_change(
    store_url: str,
) -> None:
    import orjson

    from lhbench.schema import DimensionScore, Scale
    from lhbench.store.judgements import dim_scores_text

    engine = make_engine(store_url)
    upgrade(engine, "0021")
    _, mixed = _samples_grade(
        "samples-output",
        "output",
        {"deliverable": ("binary", 1), "correctness": ("0-2", 2), "clarity": ("0-2", 0)},
        raw=0.7,
    )
    unscorable = mixed.model_copy(
        update={
            "id": "g-unscorable",
            "key": "key-unscorable",
            "run_id": "r2",
            "scores": [
                DimensionScore(
                    dimension_id="deliverable",
                    scale=Scale.BINARY,
                    evidence='no \x1f build, "quoted" ✓',
                    unscorable_reason="nothing was built",
                ),
                DimensionScore(dimension_id="clarity", scale=Scale.ZERO_TO_TWO, score=2),
            ],
        }
    )
    empty = mixed.model_copy(
        update={"id": "g-empty", "key": "key-empty", "run_id": "r3", "scores": []}
    )
    _insert_grades_before_0022(engine, [mixed, unscorable, empty])
    with engine.connect() as conn:
        logged = conn.execute(sa_text("SELECT count(*) FROM analysis_changes")).scalar()
    upgrade(engine)
    with engine.connect() as conn:
        stored = dict(conn.execute(sa_text("SELECT id, dim_scores FROM grades")).all())
        assert conn.execute(sa_text("SELECT count(*) FROM analysis_changes")).scalar() == logged
    # what the store writes for new grades, read back the same
    for g in (mixed, unscorable, empty):
        assert orjson.loads(stored[g.id]) == orjson.loads(dim_scores_text(g.scores))
    assert orjson.loads(stored["g-unscorable"]) == [
        ["deliverable", "binary", None],
        ["clarity", "0-2", 2],
    ]
    # the change log's update trigger is back: a later update of a grade is logged
    with engine.begin() as conn:
        conn.execute(sa_text("UPDATE grades SET tier_score = 0.5 WHERE id = 'g-empty'"))
        runs = conn.execute(
            sa_text("SELECT run_id FROM analysis_changes WHERE tbl = 'grades'")
        ).scalars()
        assert "r3" in set(runs)
    with Store(engine) as s:
        cols = s.grade_columns({})
    by_run = {
        cols.run_ids[cols.run[i]]: cols.score_lists[cols.scores[i]] for i in range(len(cols.run))
    }
    assert [tuple(f) for f in by_run["r2"]] == [
        ("deliverable", Scale.BINARY, None),
        ("clarity", Scale.ZERO_TO_TWO, 2),
    ]
    assert by_run["r3"] == ()
    # a row whose column is empty (written by another tool): its document's scores
    with engine.begin() as conn:
        conn.execute(sa_text("UPDATE grades SET dim_scores = NULL WHERE id = 'g-unscorable'"))
    with Store(engine) as s:
        again = s.grade_columns({})
    assert [
        tuple(f) for f in again.score_lists[again.scores[again.run_ids.index("r2") == again.run][0]]
    ] == [tuple(f) for f in by_run["r2"]]
    upgrade_down(engine, "0021")
    engine.dispose()


def test_stored_scores_of_a_tier_that_mixes_scales_are_recomputed(store_url: str) -> None:
    from alembic.script import ScriptDirectory

    from lhbench.store.db import alembic_config
    from lhbench.store.packs import PackStore

    before = ScriptDirectory.from_config(alembic_config()).get_revision("0015").down_revision
    engine = make_engine(store_url)
    upgrade(engine, str(before))
    # the bundled sample output tier: deliverable (binary, w .2), correctness and clarity
    # (0-2, w .5 and .3); all at the top scored 1.8 before (0.2*1 + 0.5*2 + 0.3*2)
    pack, mixed = _samples_grade(
        "samples-output",
        "output",
        {"deliverable": ("binary", 1), "correctness": ("0-2", 2), "clarity": ("0-2", 1)},
        raw=0.2 * 1 + 0.5 * 2 + 0.3 * 1,
    )
    _, uniform = _samples_grade(
        "samples-process",
        "process",
        {"inspection": ("1-5", 4)},
        raw=3.7,  # a one-scale tier keeps whatever was stored
    )
    PackStore(engine).save_pack(pack)
    _insert_grades_before_0022(engine, [mixed, uniform])
    upgrade(engine)
    with Store(engine) as s:
        got = {g.rubric_id: g.tier_score for g in s.list_grades()}
        column = dict(
            s.engine.connect().execute(sa_text("SELECT rubric_id, tier_score FROM grades")).all()
        )
    # normalised: 0.2 * 1/1 + 0.5 * 2/2 + 0.3 * 1/2 = 0.85 on 0-1
    assert got == pytest.approx({"samples-output": 0.85, "samples-process": 3.7})
    assert column == pytest.approx(got)
    upgrade_down(engine, str(before))
    with engine.connect() as conn:
        back = dict(conn.execute(sa_text("SELECT rubric_id, tier_score FROM grades")).all())
    assert back == pytest.approx({"samples-output": 1.5, "samples-process": 3.7})
    engine.dispose()


def test_head_read_from_file_names_is_alembics_head() -> None:
    # Store.open skips Alembic when the store is at shipped_head(): the names must not lie
    from alembic.script import ScriptDirectory

    from lhbench.store.db import alembic_config, shipped_head

    scripts = ScriptDirectory.from_config(alembic_config())
    revisions = sorted(scripts.walk_revisions(), key=lambda sc: sc.revision)
    assert [Path(str(sc.path)).name[:4] for sc in revisions] == [sc.revision for sc in revisions]
    downs = [sc.down_revision for sc in revisions]
    assert downs == [None, *(sc.revision for sc in revisions[:-1])]
    assert shipped_head() == scripts.get_current_head() == revisions[-1].revision


def test_store_at_head_opens_without_alembic(tmp_path: Path) -> None:
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path / 's.db'}"
    Store.open(url).close()
    code = (
        "import sys; from lhbench.store import Store; "
        f"Store.open({url!r}).close(); print('alembic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_failed_runs_stored_before_failure_kinds_are_classified(store_url: str) -> None:
    from alembic.script import ScriptDirectory

    from lhbench.store.db import alembic_config

    before = ScriptDirectory.from_config(alembic_config()).get_revision("0017").down_revision
    engine = make_engine(store_url)
    upgrade(engine, str(before))
    cols = (
        "id, pack_id, pack_hash, task_id, harness, model, versions, repeat, status, usage,"
        " error, metadata, updated_at"
    )
    with engine.begin() as conn:
        for run_id, status, error in [
            ("infra", "failed", "ModelAPIError: Connection error."),
            ("agent", "timed_out", "wall-clock limit of 60s reached"),
            ("done", "completed", None),
        ]:
            conn.execute(
                sa_text(
                    f"INSERT INTO runs ({cols}) VALUES (:id, 'p', '', 't', 'native', 'm', '{{}}',"
                    " 0, :status, '{}', :error, '{}', '2026-11-27 00:00:00')"
                ),
                {"id": run_id, "status": status, "error": error},
            )
    upgrade(engine)
    with Store(engine) as s:
        kinds = {r.id: r.failure_kind for r in s.list_runs()}
        facts = {f.id: f.failure_kind for f in s.run_facts()}
    assert kinds == {"infra": "infrastructure", "agent": "agent", "done": None}
    assert facts == kinds
    upgrade_down(engine, str(before))
    engine.dispose()
