"""ORM tables. JSON columns are JSONB on PostgreSQL; datetimes are stored as UTC."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "AnalysisChangeRow",
    "AnnotationVersionRow",
    "ArtifactRow",
    "Base",
    "ChapterGradeRow",
    "ChapterRubricRow",
    "ComparisonRow",
    "GradeRow",
    "LabelRow",
    "LoginFailureRow",
    "PackRow",
    "ResponseCacheRow",
    "RubricRow",
    "RunRow",
    "SessionRow",
    "StepRow",
    "StoreIdentityRow",
    "StoreVersionRow",
    "TaskRow",
    "UserRow",
    "VerdictRow",
    "VoteRow",
]

JsonDoc = JSON().with_variant(JSONB(), "postgresql")


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware in and out, on SQLite (which stores naive text) as on PostgreSQL."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store; use timezone-aware UTC")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


_NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Declarative base with stable constraint names (Alembic needs them on SQLite)."""

    metadata = MetaData(naming_convention=_NAMING)


class PackRow(Base):
    """A pack version, by content hash; ``document`` is its manifest part."""

    __tablename__ = "packs"
    content_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    id: Mapped[str] = mapped_column(String(200), index=True)
    version: Mapped[str] = mapped_column(String(100))
    environment: Mapped[str] = mapped_column(String(50))
    document: Mapped[dict[str, Any]] = mapped_column(JsonDoc)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # last time a command loaded this content from disk: the newest is the pack's current one
    seen_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # the directory it was last loaded from, and its files' stat hash then (the cheap gate
    # of the freshness check: lhbench.jobs.packs.refresh_packs)
    source_dir: Mapped[str | None] = mapped_column(Text, nullable=True)
    disk_stat: Mapped[str | None] = mapped_column(String(64), nullable=True)


class TaskRow(Base):
    """A task inside one pack version."""

    __tablename__ = "tasks"
    pack_hash: Mapped[str] = mapped_column(
        ForeignKey("packs.content_hash", ondelete="CASCADE"), primary_key=True
    )
    task_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    content_hash: Mapped[str] = mapped_column(String(64), index=True)
    position: Mapped[int] = mapped_column(Integer)
    document: Mapped[dict[str, Any]] = mapped_column(JsonDoc)


class RubricRow(Base):
    """A rubric inside one pack version."""

    __tablename__ = "rubrics"
    pack_hash: Mapped[str] = mapped_column(
        ForeignKey("packs.content_hash", ondelete="CASCADE"), primary_key=True
    )
    rubric_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    family: Mapped[str] = mapped_column(String(200), index=True)
    version: Mapped[str] = mapped_column(String(100))
    content_hash: Mapped[str] = mapped_column(String(64))
    position: Mapped[int] = mapped_column(Integer)
    document: Mapped[dict[str, Any]] = mapped_column(JsonDoc)


class RunRow(Base):
    """One run; ``versions`` is queryable per key on both backends."""

    __tablename__ = "runs"
    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    pack_id: Mapped[str] = mapped_column(String(200))
    pack_hash: Mapped[str] = mapped_column(String(64))
    task_id: Mapped[str] = mapped_column(String(200))
    harness: Mapped[str] = mapped_column(String(100))
    harness_version: Mapped[str | None] = mapped_column(String(100))
    model: Mapped[str] = mapped_column(String(200))
    versions: Mapped[dict[str, str]] = mapped_column(JsonDoc)
    repeat: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(30), index=True)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    usage: Mapped[dict[str, Any]] = mapped_column(JsonDoc)
    # usage per model (sub-agents, routers); NULL for runs stored before it existed
    model_usage: Mapped[dict[str, Any] | None] = mapped_column(JsonDoc)
    cost_usd: Mapped[float | None] = mapped_column(Float)
    error: Mapped[str | None] = mapped_column(Text)
    # whose failure a failed run was (agent, infrastructure); infrastructure is no score
    failure_kind: Mapped[str | None] = mapped_column(String(30))
    source: Mapped[str | None] = mapped_column(Text)
    metadata_: Mapped[dict[str, Any]] = mapped_column("metadata", JsonDoc)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)

    __table_args__ = (
        Index("ix_runs_pack_task", "pack_id", "task_id"),
        Index("ix_runs_harness_model", "harness", "model"),
        # the runs page's default order (newest first): 50 rows without sorting them all
        Index("ix_runs_started_at_id", "started_at", "id"),
    )


# the runs page's default order as it asks for it (newest first, never-started last):
# PostgreSQL reads a plain index backwards as NULLS FIRST and sorted every run instead
Index(
    "ix_runs_started_desc",
    RunRow.started_at.desc().nulls_last(),
    RunRow.id.desc().nulls_last(),
)


# On PostgreSQL the steps -> runs key is not a constraint but these statement triggers
# (migration 0023, which says why: the key's check ran once per row, half the server's CPU
# of an import). They lock the runs a statement's new steps name FOR KEY SHARE and fail it
# with the key's SQLSTATE and name if one is missing, delete a deleted run's steps, and
# refuse to change the id of a run that steps still name. The ORM table keeps the key
# (SQLite has it); ``TRIGGER_CHECKED_KEYS`` names it for the schema comparison.
TRIGGER_CHECKED_KEYS = frozenset({"fk_steps_run_id_runs"})
STEPS_RUN_CHECK_SQL = (
    """
    CREATE FUNCTION lhbench_steps_run_check() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        missing text;
    BEGIN
        PERFORM 1 FROM runs WHERE id IN (SELECT DISTINCT run_id FROM new_steps)
            ORDER BY id FOR KEY SHARE;
        SELECT n.run_id INTO missing FROM (SELECT DISTINCT run_id FROM new_steps) AS n
            WHERE NOT EXISTS (SELECT 1 FROM runs AS r WHERE r.id = n.run_id) LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION USING
                ERRCODE = 'foreign_key_violation',
                CONSTRAINT = 'fk_steps_run_id_runs',
                MESSAGE = format(
                    'insert or update on table "steps" violates foreign key constraint '
                    '"fk_steps_run_id_runs": run %s is not present in table "runs"',
                    quote_nullable(missing));
        END IF;
        RETURN NULL;
    END $$
    """,
    """
    CREATE TRIGGER steps_run_check_insert AFTER INSERT ON steps
        REFERENCING NEW TABLE AS new_steps
        FOR EACH STATEMENT EXECUTE FUNCTION lhbench_steps_run_check()
    """,
    """
    CREATE TRIGGER steps_run_check_update AFTER UPDATE ON steps
        REFERENCING NEW TABLE AS new_steps
        FOR EACH STATEMENT EXECUTE FUNCTION lhbench_steps_run_check()
    """,
    """
    CREATE FUNCTION lhbench_runs_delete_steps() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM steps AS s USING old_runs AS o WHERE s.run_id = o.id;
        RETURN NULL;
    END $$
    """,
    """
    CREATE TRIGGER runs_delete_steps AFTER DELETE ON runs
        REFERENCING OLD TABLE AS old_runs
        FOR EACH STATEMENT EXECUTE FUNCTION lhbench_runs_delete_steps()
    """,
    """
    CREATE FUNCTION lhbench_runs_id_kept() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF EXISTS (SELECT 1 FROM steps WHERE run_id = OLD.id) THEN
            RAISE EXCEPTION USING
                ERRCODE = 'foreign_key_violation',
                CONSTRAINT = 'fk_steps_run_id_runs',
                MESSAGE = format(
                    'update on table "runs" violates foreign key constraint '
                    '"fk_steps_run_id_runs": run %s is still referenced from table "steps"',
                    quote_nullable(OLD.id));
        END IF;
        RETURN NULL;
    END $$
    """,
    """
    CREATE TRIGGER runs_id_kept AFTER UPDATE OF id ON runs
        FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id)
        EXECUTE FUNCTION lhbench_runs_id_kept()
    """,
)
STEPS_RUN_CHECK_DROP = (
    "DROP TRIGGER runs_id_kept ON runs",
    "DROP FUNCTION lhbench_runs_id_kept()",
    "DROP TRIGGER runs_delete_steps ON runs",
    "DROP FUNCTION lhbench_runs_delete_steps()",
    "DROP TRIGGER steps_run_check_update ON steps",
    "DROP TRIGGER steps_run_check_insert ON steps",
    "DROP FUNCTION lhbench_steps_run_check()",
)


class StepRow(Base):
    """One trajectory step."""

    __tablename__ = "steps"
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    idx: Mapped[int] = mapped_column(Integer, primary_key=True)
    role: Mapped[str] = mapped_column(String(20))
    kind: Mapped[str] = mapped_column(String(20))
    content: Mapped[str] = mapped_column(Text)
    tool_name: Mapped[str | None] = mapped_column(String(200))
    tool_call_id: Mapped[str | None] = mapped_column(String(200))
    tool_input: Mapped[dict[str, Any] | None] = mapped_column(JsonDoc)
    tool_output: Mapped[str | None] = mapped_column(Text)
    is_error: Mapped[bool] = mapped_column(Boolean)
    exit_code: Mapped[int | None] = mapped_column(Integer)
    timestamp: Mapped[datetime | None] = mapped_column(UTCDateTime)
    usage: Mapped[dict[str, Any] | None] = mapped_column(JsonDoc)
    metadata_: Mapped[dict[str, Any]] = mapped_column("metadata", JsonDoc)
    agent_id: Mapped[str | None] = mapped_column(String(200))


class ArtifactRow(Base):
    """A file a run produced."""

    __tablename__ = "artifacts"
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    name: Mapped[str] = mapped_column(String(500), primary_key=True)
    media_type: Mapped[str] = mapped_column(String(100))
    sha256: Mapped[str] = mapped_column(String(64), index=True)
    size: Mapped[int] = mapped_column(Integer)
    content: Mapped[bytes | None] = mapped_column(LargeBinary)
    uri: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20))
    note: Mapped[str | None] = mapped_column(Text)


class GradeRow(Base):
    """One grade, unique on its identity ``key``.

    The key is (run, judge config, rubric content, tier, repeat): the same grade is stored
    once, and a retried one replaces its failure.
    """

    __tablename__ = "grades"
    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    key: Mapped[str] = mapped_column(String(128), unique=True)
    run_id: Mapped[str] = mapped_column(String(200), index=True)
    rubric_id: Mapped[str] = mapped_column(String(200))
    rubric_version: Mapped[str] = mapped_column(String(100))
    rubric_hash: Mapped[str] = mapped_column(String(64))
    tier: Mapped[str] = mapped_column(String(20))
    judge_kind: Mapped[str] = mapped_column(String(20))
    judge_model: Mapped[str] = mapped_column(String(200))
    judge_family: Mapped[str | None] = mapped_column(String(100))
    judge_key: Mapped[str] = mapped_column(String(64), index=True)
    status: Mapped[str] = mapped_column(String(20))
    retryable: Mapped[bool] = mapped_column(Boolean)
    tier_score: Mapped[float | None] = mapped_column(Float)
    repeat: Mapped[int] = mapped_column(Integer)
    document: Mapped[dict[str, Any]] = mapped_column(JsonDoc)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # the dimension scores alone, as compact JSON ``[[dimension_id, scale, score], …]``
    # (migration 0022): what the report's figures read of a million grades, without
    # parsing each document (its scores carry evidence, so no two grades' texts agree)
    dim_scores: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (Index("ix_grades_rubric_tier", "rubric_id", "tier"),)


class VerdictRow(Base):
    """One binary verdict; unique on its identity ``key`` (run, judge config, state, repeat)."""

    __tablename__ = "verdicts"
    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    key: Mapped[str] = mapped_column(String(128), unique=True)
    run_id: Mapped[str] = mapped_column(String(200), index=True)
    judge_kind: Mapped[str] = mapped_column(String(20))
    judge_model: Mapped[str] = mapped_column(String(200))
    judge_key: Mapped[str] = mapped_column(String(64), index=True)
    verdict: Mapped[str | None] = mapped_column(String(4))
    retryable: Mapped[bool] = mapped_column(Boolean)
    repeat: Mapped[int] = mapped_column(Integer)
    document: Mapped[dict[str, Any]] = mapped_column(JsonDoc)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class VoteRow(Base):
    """One pairwise preference vote (human, or a pairwise judge: see ``rater_kind``)."""

    __tablename__ = "votes"
    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    pack_id: Mapped[str] = mapped_column(String(200))
    task_id: Mapped[str] = mapped_column(String(200))
    run_a: Mapped[str] = mapped_column(String(200), index=True)
    run_b: Mapped[str] = mapped_column(String(200), index=True)
    left: Mapped[str] = mapped_column(String(1))
    winner: Mapped[str | None] = mapped_column(String(3))
    quality: Mapped[int | None] = mapped_column(Integer)
    annotator: Mapped[str] = mapped_column(String(200))
    rater_kind: Mapped[str] = mapped_column(String(20), index=True)
    status: Mapped[str] = mapped_column(String(20))
    error: Mapped[str | None] = mapped_column(Text)
    retryable: Mapped[bool] = mapped_column(Boolean)
    rubric_id: Mapped[str | None] = mapped_column(String(200))
    rubric_hash: Mapped[str | None] = mapped_column(String(64))
    tier: Mapped[str | None] = mapped_column(String(20))
    judge_key: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # the chapter compared (programmatic content); NULL: the whole runs
    chapter_id: Mapped[str | None] = mapped_column(String(200))


class LabelRow(Base):
    """A run's ground-truth label from one source."""

    __tablename__ = "labels"
    run_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    source: Mapped[str] = mapped_column(String(200), primary_key=True)
    passed: Mapped[bool | None] = mapped_column(Boolean)
    detail: Mapped[str] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    check_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    failure_kind: Mapped[str | None] = mapped_column(String(30))


class ResponseCacheRow(Base):
    """A model response, content-addressed by its request (used by lhbench.models)."""

    __tablename__ = "response_cache"
    key: Mapped[str] = mapped_column(String(128), primary_key=True)
    model: Mapped[str] = mapped_column(String(200))
    response: Mapped[dict[str, Any]] = mapped_column(JsonDoc)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class UserRow(Base):
    """An annotator account of the preference arena."""

    __tablename__ = "users"
    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    password_hash: Mapped[str] = mapped_column(String(300))
    is_admin: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class ComparisonRow(Base):
    """A pair shown to an annotator, behind an opaque token (no run id reaches the page)."""

    __tablename__ = "comparisons"
    token: Mapped[str] = mapped_column(String(64), primary_key=True)
    annotator: Mapped[str] = mapped_column(String(100), index=True)
    pack_id: Mapped[str] = mapped_column(String(200))
    task_id: Mapped[str] = mapped_column(String(200))
    run_a: Mapped[str] = mapped_column(String(200))
    run_b: Mapped[str] = mapped_column(String(200))
    left: Mapped[str] = mapped_column(String(1))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # when the annotator decided (voted or skipped); ``outcome`` says which
    voted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    outcome: Mapped[str | None] = mapped_column(String(10))
    # the vote this comparison produced: one per comparison, enforced by the database
    vote_id: Mapped[str | None] = mapped_column(String(200), unique=True)


class SessionRow(Base):
    """A signed-in browser: the cookie's hash, its user and CSRF token (server-side)."""

    __tablename__ = "web_sessions"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    user: Mapped[str] = mapped_column(
        String(100), ForeignKey("users.name", ondelete="CASCADE"), index=True
    )
    csrf: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)


class LoginFailureRow(Base):
    """A failed sign-in, for rate limits per user name and per address."""

    __tablename__ = "login_failures"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(100), index=True)
    address: Mapped[str] = mapped_column(String(100), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)


class StoreVersionRow(Base):
    """One counter, bumped by database triggers on every write to an analysed table.

    Page caches key on it, so an in-place update (a label, a tag, a status) shows at once,
    whichever process wrote it.
    """

    __tablename__ = "store_version"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    version: Mapped[int] = mapped_column(BigInteger)


class StoreIdentityRow(Base):
    """A random token made with the database (migration 0024): which database this is.

    Files saved beside a store (the web server's summary) are tagged with it, so a
    database made again at the same URL is never taken for the one they were read from.
    """

    __tablename__ = "store_identity"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token: Mapped[str] = mapped_column(String(64))


class AnalysisChangeRow(Base):
    """A write to a table the overview summarises, logged by triggers (migration 0020).

    ``run_id`` names the run whose grades, labels or verdicts changed; NULL means the
    table's change touches everything (runs, packs, votes).
    """

    __tablename__ = "analysis_changes"
    __table_args__ = ({"sqlite_autoincrement": True},)
    seq: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True
    )
    tbl: Mapped[str] = mapped_column(String(20))
    run_id: Mapped[str | None] = mapped_column(String(200))


class AnnotationVersionRow(Base):
    """One immutable version of an annotation set (a pack's task, chapter by chapter).

    ``(pack_id, task_id, version)`` is unique: two saves on the same parent race for one
    number and the database lets only one of them have it.
    """

    __tablename__ = "annotation_versions"
    __table_args__ = (UniqueConstraint("pack_id", "task_id", "version"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    pack_id: Mapped[str] = mapped_column(String(200))
    task_id: Mapped[str] = mapped_column(String(200))
    version: Mapped[int] = mapped_column(Integer)
    parent: Mapped[int | None] = mapped_column(Integer)
    author: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    content: Mapped[dict[str, Any]] = mapped_column(JsonDoc)


# The web overview reads these columns of every grade: an index that covers them spares
# reading each grade's JSON document, and finds each judge config's newest grade at once.
OVERVIEW_COLUMNS = (
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
)
Index("ix_grades_overview", *(GradeRow.__table__.c[c] for c in OVERVIEW_COLUMNS))


class ChapterRubricRow(Base):
    """A synthesised chapter rubric version, unique on its provenance ``key``."""

    __tablename__ = "chapter_rubrics"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    pack_id: Mapped[str] = mapped_column(String(200))
    task_id: Mapped[str] = mapped_column(String(200))
    chapter_id: Mapped[str] = mapped_column(String(200))
    scale: Mapped[str] = mapped_column(String(10))
    rubric_id: Mapped[str] = mapped_column(String(200))
    family: Mapped[str] = mapped_column(String(200))
    version: Mapped[str] = mapped_column(String(100))
    content_hash: Mapped[str] = mapped_column(String(64))
    annotations_sha256: Mapped[str] = mapped_column(String(64))
    ground_truth_sha256: Mapped[str] = mapped_column(String(64))
    model: Mapped[str] = mapped_column(String(200))
    prompt_version: Mapped[str] = mapped_column(String(100))
    document: Mapped[dict[str, Any]] = mapped_column(JsonDoc)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)

    __table_args__ = (Index("ix_chapter_rubrics_task", "pack_id", "task_id", "chapter_id"),)


class ChapterGradeRow(Base):
    """One judge's grade of one chapter on one rubric at one scale, unique on ``key``."""

    __tablename__ = "chapter_grades"
    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    key: Mapped[str] = mapped_column(String(128), unique=True)
    run_id: Mapped[str] = mapped_column(String(200), index=True)
    chapter_id: Mapped[str] = mapped_column(String(200))
    scale: Mapped[str] = mapped_column(String(10))
    kind: Mapped[str] = mapped_column(String(10))
    rubric_id: Mapped[str] = mapped_column(String(200))
    rubric_hash: Mapped[str] = mapped_column(String(64))
    judge_key: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(20))
    retryable: Mapped[bool] = mapped_column(Boolean)
    tier_score: Mapped[float | None] = mapped_column(Float)
    document: Mapped[dict[str, Any]] = mapped_column(JsonDoc)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class FailureExtractionRow(Base):
    """A model's error events of one run (``lhbench failures --llm``), unique on ``key``."""

    __tablename__ = "failure_extractions"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    run_id: Mapped[str] = mapped_column(String(200), index=True)
    model: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(20))
    retryable: Mapped[bool] = mapped_column(Boolean)
    document: Mapped[dict[str, Any]] = mapped_column(JsonDoc)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
