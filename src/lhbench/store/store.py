"""The Store: every schema object in and out of the database, with idempotent writes."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC
from typing import Any, Self

import orjson
from sqlalchemy import Engine, and_, case, delete, func, insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from lhbench.errors import StoreError
from lhbench.schema import (
    Artifact,
    Grade,
    JudgeKind,
    Label,
    PreferenceVote,
    Rubric,
    Run,
    Step,
    StepKind,
    Task,
    TaskPack,
    Trajectory,
    Verdict,
    utcnow,
)
from lhbench.store.db import make_engine, upgrade
from lhbench.store.tables import (
    ArtifactRow,
    Base,
    GradeRow,
    LabelRow,
    PackRow,
    ResponseCacheRow,
    RubricRow,
    RunRow,
    StepRow,
    TaskRow,
    VerdictRow,
    VoteRow,
)

__all__ = ["RunSummary", "Store", "group_key", "group_runs"]


@dataclass(frozen=True)
class RunSummary:
    """A run with the counts a listing shows."""

    run: Run
    steps: int
    tool_calls: int
    errors: int


def group_key(run: Run, key: str) -> str | None:
    """The value of ``key`` for ``run``: a Run field, or ``versions.K`` / a bare version key."""
    if key.startswith("versions."):
        return run.versions.get(key.removeprefix("versions."))
    if key in ("harness", "model", "harness_version", "pack_id", "task_id", "status"):
        value = getattr(run, key)
        return None if value is None else str(value)
    return run.versions.get(key)


def group_runs(runs: Iterable[Run], by: Sequence[str]) -> dict[tuple[str | None, ...], list[Run]]:
    """Group runs by (harness, model, any versions key …), keeping input order inside groups."""
    groups: dict[tuple[str | None, ...], list[Run]] = defaultdict(list)
    for run in runs:
        groups[tuple(group_key(run, k) for k in by)].append(run)
    return dict(groups)


def _run_row(run: Run) -> dict[str, Any]:
    return {
        "id": run.id,
        "pack_id": run.pack_id,
        "pack_hash": run.pack_hash,
        "task_id": run.task_id,
        "harness": run.harness,
        "harness_version": run.harness_version,
        "model": run.model,
        "versions": dict(run.versions),
        "repeat": run.repeat,
        "status": run.status.value,
        "started_at": run.started_at,
        "ended_at": run.ended_at,
        "usage": run.usage.model_dump(mode="json"),
        "cost_usd": run.cost_usd,
        "error": run.error,
        "source": run.source,
        "metadata": run.metadata,
        "updated_at": utcnow(),
    }


def _run_from(row: RunRow) -> Run:
    return Run.model_validate(
        {
            "id": row.id,
            "pack_id": row.pack_id,
            "pack_hash": row.pack_hash,
            "task_id": row.task_id,
            "harness": row.harness,
            "harness_version": row.harness_version,
            "model": row.model,
            "versions": row.versions,
            "repeat": row.repeat,
            "status": row.status,
            "started_at": row.started_at,
            "ended_at": row.ended_at,
            "usage": row.usage,
            "cost_usd": row.cost_usd,
            "error": row.error,
            "source": row.source,
            "metadata": row.metadata_,
        }
    )


def _step_row(run_id: str, step: Step) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "idx": step.index,
        "role": step.role.value,
        "kind": step.kind.value,
        "content": step.content,
        "tool_name": step.tool_name,
        "tool_call_id": step.tool_call_id,
        "tool_input": step.tool_input,
        "tool_output": step.tool_output,
        "is_error": step.is_error,
        "exit_code": step.exit_code,
        "timestamp": step.timestamp,
        "usage": step.usage.model_dump(mode="json") if step.usage else None,
        "metadata": step.metadata,
    }


_STEP_COLUMNS = (
    "run_id",
    "idx",
    "role",
    "kind",
    "content",
    "tool_name",
    "tool_call_id",
    "tool_input",
    "tool_output",
    "is_error",
    "exit_code",
    "timestamp",
    "usage",
    "metadata",
)
_SQLITE_STEP_INSERT = (
    f"INSERT INTO steps ({', '.join(_STEP_COLUMNS)}) VALUES ({', '.join('?' * len(_STEP_COLUMNS))})"
)


def _json_or_none(value: Any) -> str | None:
    return None if value is None else orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def _step_tuple(run_id: str, step: Step) -> tuple[Any, ...]:
    """A step as SQLite stores it (the same text UTCDateTime and JSON columns write)."""
    ts = step.timestamp
    return (
        run_id,
        step.index,
        step.role.value,
        step.kind.value,
        step.content,
        step.tool_name,
        step.tool_call_id,
        _json_or_none(step.tool_input),
        step.tool_output,
        step.is_error,
        step.exit_code,
        ts.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ") if ts else None,
        _json_or_none(step.usage.model_dump(mode="json")) if step.usage else None,
        _json_or_none(step.metadata),
    )


def _step_from(row: StepRow) -> Step:
    return Step.model_validate(
        {
            "index": row.idx,
            "role": row.role,
            "kind": row.kind,
            "content": row.content,
            "tool_name": row.tool_name,
            "tool_call_id": row.tool_call_id,
            "tool_input": row.tool_input,
            "tool_output": row.tool_output,
            "is_error": row.is_error,
            "exit_code": row.exit_code,
            "timestamp": row.timestamp,
            "usage": row.usage,
            "metadata": row.metadata_,
        }
    )


def _matching(*pairs: tuple[Any, object]) -> list[Any]:
    """``column == value`` for every pair whose value is given (None means any)."""
    return [col == value for col, value in pairs if value is not None]


class Store:
    """Persistence for lhbench. Open with :meth:`open`; safe to share across threads."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @classmethod
    def open(cls, url: str, *, migrate: bool = True) -> Self:
        """Open the store at ``url``, bringing its schema to the newest migration."""
        engine = make_engine(url)
        if migrate:
            upgrade(engine)
        return cls(engine)

    def close(self) -> None:
        """Release every connection."""
        self.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.engine.dialect.name

    def _insert(self, table: type[Base]) -> Any:
        dialect = postgresql if self.backend == "postgresql" else sqlite
        return dialect.insert(table)

    def _insert_ignore(
        self, session: Session, table: type[Base], rows: list[dict[str, Any]]
    ) -> int:
        """Insert rows, skipping any whose key already exists; returns how many were new."""
        if not rows:
            return 0
        # Counting RETURNING rows is exact on both backends; rowcount is not for
        # multi-row ON CONFLICT inserts.
        pk = next(iter(table.__table__.primary_key))
        stmt = self._insert(table).values(rows).on_conflict_do_nothing().returning(pk)
        return len(session.execute(stmt).all())

    # packs ------------------------------------------------------------------------------

    def save_pack(self, pack: TaskPack) -> bool:
        """Store a pack version (with its tasks and rubrics); False if it was already there."""
        if not pack.content_hash:
            raise StoreError(f"pack {pack.id!r} has no content hash; load it with load_pack")
        head = pack.model_dump(mode="json", exclude={"tasks", "rubrics"})
        with Session(self.engine) as s, s.begin():
            new = self._insert_ignore(
                s,
                PackRow,
                [
                    {
                        "content_hash": pack.content_hash,
                        "id": pack.id,
                        "version": pack.version,
                        "environment": pack.environment.value,
                        "document": head,
                        "created_at": utcnow(),
                    }
                ],
            )
            if not new:
                return False
            self._insert_ignore(
                s,
                TaskRow,
                [
                    {
                        "pack_hash": pack.content_hash,
                        "task_id": t.id,
                        "content_hash": t.content_hash,
                        "position": i,
                        "document": t.model_dump(mode="json"),
                    }
                    for i, t in enumerate(pack.tasks)
                ],
            )
            self._insert_ignore(
                s,
                RubricRow,
                [
                    {
                        "pack_hash": pack.content_hash,
                        "rubric_id": r.id,
                        "family": r.family,
                        "version": r.version,
                        "content_hash": r.content_hash,
                        "position": i,
                        "document": r.model_dump(mode="json"),
                    }
                    for i, r in enumerate(pack.rubrics)
                ],
            )
        return True

    def get_pack(self, content_hash: str) -> TaskPack:
        """The pack version with this hash (StoreError if it is not stored)."""
        with Session(self.engine) as s:
            row = s.get(PackRow, content_hash)
            if row is None:
                raise StoreError(f"no pack with hash {content_hash[:12]}… in the store")
            tasks = s.scalars(
                select(TaskRow).where(TaskRow.pack_hash == content_hash).order_by(TaskRow.position)
            ).all()
            rubrics = s.scalars(
                select(RubricRow)
                .where(RubricRow.pack_hash == content_hash)
                .order_by(RubricRow.position)
            ).all()
            return TaskPack.model_validate(
                {
                    **row.document,
                    "tasks": [Task.model_validate(t.document) for t in tasks],
                    "rubrics": [Rubric.model_validate(r.document) for r in rubrics],
                }
            )

    def get_task(self, pack_hash: str, task_id: str) -> Task | None:
        """One task of a stored pack version, or None."""
        with Session(self.engine) as s:
            row = s.get(TaskRow, (pack_hash, task_id))
            return None if row is None else Task.model_validate(row.document)

    def latest_pack_hash(self, pack_id: str) -> str | None:
        """Content hash of the most recently stored version of a pack."""
        with Session(self.engine) as s:
            return s.scalar(
                select(PackRow.content_hash)
                .where(PackRow.id == pack_id)
                .order_by(PackRow.created_at.desc())
                .limit(1)
            )

    def list_pack_versions(self) -> list[tuple[str, str, str]]:
        """(pack id, version, content hash) of every stored pack version."""
        with Session(self.engine) as s:
            rows = s.execute(
                select(PackRow.id, PackRow.version, PackRow.content_hash).order_by(
                    PackRow.id, PackRow.created_at
                )
            ).all()
            return [(r[0], r[1], r[2]) for r in rows]

    # runs and trajectories ----------------------------------------------------------------

    def save_run(self, run: Run) -> None:
        """Insert or update a run (status, times, usage move as it progresses)."""
        row = _run_row(run)
        stmt = self._insert(RunRow).values(row)
        stmt = stmt.on_conflict_do_update(
            index_elements=["id"], set_={k: stmt.excluded[k] for k in row if k != "id"}
        )
        with Session(self.engine) as s, s.begin():
            s.execute(stmt)

    def get_run(self, run_id: str) -> Run:
        """The run with this id (StoreError if none)."""
        with Session(self.engine) as s:
            row = s.get(RunRow, run_id)
            if row is None:
                raise StoreError(f"no run {run_id!r} in the store")
            return _run_from(row)

    def _run_filters(
        self,
        pack_id: str | None,
        task_id: str | None,
        harness: str | None,
        model: str | None,
        status: str | None,
        versions: dict[str, str] | None,
    ) -> list[Any]:
        conds = _matching(
            (RunRow.pack_id, pack_id),
            (RunRow.task_id, task_id),
            (RunRow.harness, harness),
            (RunRow.model, model),
            (RunRow.status, status),
        )
        for key, value in (versions or {}).items():
            conds.append(RunRow.versions[key].as_string() == value)
        return conds

    def list_runs(
        self,
        *,
        pack_id: str | None = None,
        task_id: str | None = None,
        harness: str | None = None,
        model: str | None = None,
        status: str | None = None,
        versions: dict[str, str] | None = None,
    ) -> list[Run]:
        """Runs matching every filter given (``versions`` matches each key=value)."""
        conds = self._run_filters(pack_id, task_id, harness, model, status, versions)
        with Session(self.engine) as s:
            rows = s.scalars(select(RunRow).where(and_(True, *conds)).order_by(RunRow.id)).all()
            return [_run_from(r) for r in rows]

    def run_summaries(
        self,
        *,
        pack_id: str | None = None,
        task_id: str | None = None,
        harness: str | None = None,
        model: str | None = None,
        status: str | None = None,
        versions: dict[str, str] | None = None,
    ) -> list[RunSummary]:
        """Runs with their step, tool-call and error counts, counted in the database."""
        counts = (
            select(
                StepRow.run_id.label("run_id"),
                func.count().label("steps"),
                func.sum(case((StepRow.kind == StepKind.TOOL_CALL.value, 1), else_=0)).label(
                    "tool_calls"
                ),
                func.sum(
                    case(((StepRow.kind == StepKind.ERROR.value) | StepRow.is_error, 1), else_=0)
                ).label("errors"),
            )
            .group_by(StepRow.run_id)
            .subquery()
        )
        conds = self._run_filters(pack_id, task_id, harness, model, status, versions)
        stmt = (
            select(RunRow, counts.c.steps, counts.c.tool_calls, counts.c.errors)
            .outerjoin(counts, counts.c.run_id == RunRow.id)
            .where(and_(True, *conds))
            .order_by(RunRow.id)
        )
        with Session(self.engine) as s:
            return [
                RunSummary(
                    run=_run_from(row),
                    steps=int(steps or 0),
                    tool_calls=int(tools or 0),
                    errors=int(errors or 0),
                )
                for row, steps, tools, errors in s.execute(stmt).all()
            ]

    def save_trajectory(self, trajectory: Trajectory) -> None:
        """Store a run's steps, replacing any stored before (the run must exist)."""
        with Session(self.engine) as s, s.begin():
            if s.get(RunRow, trajectory.run_id) is None:
                raise StoreError(f"save run {trajectory.run_id!r} before its trajectory")
            s.execute(delete(StepRow).where(StepRow.run_id == trajectory.run_id))
            rows = [_step_row(trajectory.run_id, st) for st in trajectory.steps]
            for start in range(0, len(rows), 1000):
                s.execute(self._insert(StepRow).values(rows[start : start + 1000]))

    def append_steps(self, run_id: str, steps: Sequence[Step]) -> None:
        """Add steps to a run's trajectory (importers stream them in batches)."""
        if not steps:
            return
        if self.backend == "sqlite":
            # The DBAPI directly: SQLAlchemy's per-row parameter processing costs more than
            # SQLite's insert itself, and imports write millions of rows.
            rows = [_step_tuple(run_id, st) for st in steps]
            with self.engine.begin() as conn:
                conn.exec_driver_sql(_SQLITE_STEP_INSERT, rows)
            return
        with self.engine.begin() as conn:
            conn.execute(insert(StepRow), [_step_row(run_id, st) for st in steps])

    def delete_steps(self, run_id: str) -> None:
        """Remove a run's steps (before re-importing a partial import)."""
        with self.engine.begin() as conn:
            conn.execute(delete(StepRow).where(StepRow.run_id == run_id))

    def get_trajectory(self, run_id: str) -> Trajectory:
        """The run's steps in order (empty if none were stored)."""
        with Session(self.engine) as s:
            rows = s.scalars(
                select(StepRow).where(StepRow.run_id == run_id).order_by(StepRow.idx)
            ).all()
            return Trajectory(run_id=run_id, steps=[_step_from(r) for r in rows])

    def save_artifact(self, artifact: Artifact) -> None:
        """Insert or replace an artifact of a run."""
        row = artifact.model_dump()
        stmt = self._insert(ArtifactRow).values(row)
        stmt = stmt.on_conflict_do_update(
            index_elements=["run_id", "name"],
            set_={k: stmt.excluded[k] for k in row if k not in ("run_id", "name")},
        )
        with Session(self.engine) as s, s.begin():
            s.execute(stmt)

    def list_artifacts(self, run_id: str) -> list[Artifact]:
        """The run's artifacts by name."""
        with Session(self.engine) as s:
            rows = s.scalars(
                select(ArtifactRow).where(ArtifactRow.run_id == run_id).order_by(ArtifactRow.name)
            ).all()
            return [
                Artifact(
                    run_id=r.run_id,
                    name=r.name,
                    media_type=r.media_type,
                    sha256=r.sha256,
                    size=r.size,
                    content=r.content,
                    uri=r.uri,
                )
                for r in rows
            ]

    # judgements ------------------------------------------------------------------------

    def save_grade(self, grade: Grade) -> bool:
        """Store a grade; False (and nothing written) when its cache key is already stored."""
        row = {
            "id": grade.id,
            "cache_key": grade.cache_key,
            "run_id": grade.run_id,
            "rubric_id": grade.rubric_id,
            "rubric_version": grade.rubric_version,
            "tier": grade.tier.value,
            "judge_kind": grade.judge.kind.value,
            "judge_model": grade.judge.model,
            "judge_family": grade.judge.family,
            "status": grade.status.value,
            "tier_score": grade.tier_score,
            "repeat": grade.repeat,
            "document": grade.model_dump(mode="json"),
            "created_at": grade.created_at,
        }
        with Session(self.engine) as s, s.begin():
            return self._insert_ignore(s, GradeRow, [row]) == 1

    def has_grade(self, cache_key: str) -> bool:
        """Whether a grade with this cache key is stored."""
        table = GradeRow.__table__
        with self.engine.connect() as conn:
            found = conn.execute(select(table.c.id).where(table.c.cache_key == cache_key).limit(1))
            return found.first() is not None

    def list_grades(
        self,
        *,
        run_id: str | None = None,
        rubric_id: str | None = None,
        tier: str | None = None,
        status: str | None = None,
    ) -> list[Grade]:
        """Grades matching every filter given, oldest first."""
        conds = _matching(
            (GradeRow.run_id, run_id),
            (GradeRow.rubric_id, rubric_id),
            (GradeRow.tier, tier),
            (GradeRow.status, status),
        )
        with Session(self.engine) as s:
            rows = s.scalars(
                select(GradeRow)
                .where(and_(True, *conds))
                .order_by(GradeRow.created_at, GradeRow.id)
            ).all()
            return [Grade.model_validate(r.document) for r in rows]

    def save_verdict(self, verdict: Verdict) -> bool:
        """Store a verdict; False when its cache key is already stored."""
        row = {
            "id": verdict.id,
            "cache_key": verdict.cache_key,
            "run_id": verdict.run_id,
            "judge_kind": verdict.judge.kind.value,
            "judge_model": verdict.judge.model,
            "verdict": verdict.verdict,
            "repeat": verdict.repeat,
            "document": verdict.model_dump(mode="json"),
            "created_at": verdict.created_at,
        }
        with Session(self.engine) as s, s.begin():
            return self._insert_ignore(s, VerdictRow, [row]) == 1

    def list_verdicts(
        self, *, run_id: str | None = None, judge_kind: str | None = None
    ) -> list[Verdict]:
        """Verdicts matching the filters, oldest first."""
        conds = _matching((VerdictRow.run_id, run_id), (VerdictRow.judge_kind, judge_kind))
        with Session(self.engine) as s:
            rows = s.scalars(
                select(VerdictRow)
                .where(and_(True, *conds))
                .order_by(VerdictRow.created_at, VerdictRow.id)
            ).all()
            return [Verdict.model_validate(r.document) for r in rows]

    def set_verdict_failure_mode(self, verdict_id: str, mode: str) -> bool:
        """A reviewer's failure-mode tag on a verdict; False when there is no such verdict."""
        with Session(self.engine) as s, s.begin():
            row = s.get(VerdictRow, verdict_id)
            if row is None:
                return False
            row.document = {**row.document, "failure_mode": mode}
            return True

    def save_vote(self, vote: PreferenceVote) -> bool:
        """Store a preference vote; False when a vote with this id is already stored."""
        row = vote.model_dump()
        row["rater_kind"] = vote.rater_kind.value
        with Session(self.engine) as s, s.begin():
            return self._insert_ignore(s, VoteRow, [row]) == 1

    def list_votes(
        self, *, rater_kind: str | None = None, task_id: str | None = None
    ) -> list[PreferenceVote]:
        """Votes, oldest first; ``rater_kind='human'`` keeps pairwise-judge outcomes apart."""
        conds = _matching((VoteRow.rater_kind, rater_kind), (VoteRow.task_id, task_id))
        with Session(self.engine) as s:
            rows = s.scalars(
                select(VoteRow).where(and_(True, *conds)).order_by(VoteRow.created_at, VoteRow.id)
            ).all()
            return [
                PreferenceVote(
                    id=r.id,
                    pack_id=r.pack_id,
                    task_id=r.task_id,
                    run_a=r.run_a,
                    run_b=r.run_b,
                    left=r.left,
                    winner=r.winner,
                    quality=r.quality,
                    annotator=r.annotator,
                    rater_kind=JudgeKind(r.rater_kind),
                    created_at=r.created_at,
                )
                for r in rows
            ]

    def save_label(self, label: Label) -> None:
        """Insert or replace the label a source gave a run (a re-run verify script wins)."""
        row = label.model_dump()
        stmt = self._insert(LabelRow).values(row)
        stmt = stmt.on_conflict_do_update(
            index_elements=["run_id", "source"],
            set_={k: stmt.excluded[k] for k in ("passed", "detail", "created_at")},
        )
        with Session(self.engine) as s, s.begin():
            s.execute(stmt)

    def list_labels(self, *, run_id: str | None = None) -> list[Label]:
        """Labels, by run and source."""
        stmt = select(LabelRow).order_by(LabelRow.run_id, LabelRow.source)
        if run_id is not None:
            stmt = stmt.where(LabelRow.run_id == run_id)
        with Session(self.engine) as s:
            return [
                Label(
                    run_id=r.run_id,
                    passed=r.passed,
                    source=r.source,
                    detail=r.detail,
                    created_at=r.created_at,
                )
                for r in s.scalars(stmt).all()
            ]

    # model response cache ------------------------------------------------------------------

    def get_cached_response(self, key: str) -> dict[str, Any] | None:
        """The cached model response for a request key, or None."""
        # Core, not the ORM: this runs once per model call
        table = ResponseCacheRow.__table__
        with self.engine.connect() as conn:
            doc = conn.execute(select(table.c.response).where(table.c.key == key)).scalar()
            return None if doc is None else dict(doc)

    def put_cached_response(self, key: str, model: str, response: dict[str, Any]) -> None:
        """Keep a model response under its request key (first write wins)."""
        stmt = (
            self._insert(ResponseCacheRow)
            .values(key=key, model=model, response=response, created_at=utcnow())
            .on_conflict_do_nothing()
        )
        with self.engine.begin() as conn:
            conn.execute(stmt)

    def counts(self) -> dict[str, int]:
        """Rows per table, for summaries."""
        tables: dict[str, type[Base]] = {
            "packs": PackRow,
            "runs": RunRow,
            "steps": StepRow,
            "grades": GradeRow,
            "verdicts": VerdictRow,
            "votes": VoteRow,
            "labels": LabelRow,
        }
        with Session(self.engine) as s:
            return {
                name: int(s.scalar(select(func.count()).select_from(t)) or 0)
                for name, t in tables.items()
            }
