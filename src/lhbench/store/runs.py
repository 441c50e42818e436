"""Runs in the store: the run record, its trajectory (steps) and its artifacts."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson
from sqlalchemy import Text, and_, case, cast, delete, func, select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from lhbench.errors import StoreError
from lhbench.schema import (
    STEP_JSON_FIELDS,
    STEP_ROW,
    Artifact,
    Role,
    Run,
    Step,
    StepKind,
    StepView,
    Trajectory,
    step_from_row,
)
from lhbench.store.base import StoreBase, chunks, matching
from lhbench.store.bulk import WRITER_AFTER_ROWS, StepAppender
from lhbench.store.pg_copy import copy_batch, copy_data, step_copy_cursor
from lhbench.store.rows import (
    PG_STEP_INSERT,
    SQLITE_STEP_INSERT,
    STEP_COLUMNS,
    pg_step_params,
    run_from,
    run_row,
    sqlite_step_params,
    step_record,
    step_row,
)
from lhbench.store.tables import (
    ArtifactRow,
    ChapterGradeRow,
    ComparisonRow,
    FailureExtractionRow,
    GradeRow,
    LabelRow,
    RunRow,
    StepRow,
    VerdictRow,
    VoteRow,
)

if TYPE_CHECKING:
    from lhbench.store.aggregates import ReportRun

__all__ = ["GradeRunRow", "RunStore", "RunSummary", "group_key", "group_runs"]


class GradeRunRow(NamedTuple):
    """A run's columns a grade job needs to choose and print it, plain (no ``Run`` model)."""

    id: str
    task_id: str
    harness: str
    model: str
    status: str
    failure_kind: str | None
    error: str | None

    @property
    def infrastructure_failure(self) -> bool:
        """As :attr:`Run.infrastructure_failure`."""
        return self.failure_kind == "infrastructure"


def step_counts_select(run_ids: Sequence[str]) -> Any:
    """Per run among ``run_ids``: (run id, steps, tool calls, errors), counted in the database."""
    return (
        select(
            StepRow.run_id,
            func.count(),
            func.sum(case((StepRow.kind == StepKind.TOOL_CALL.value, 1), else_=0)),
            func.sum(case(((StepRow.kind == StepKind.ERROR.value) | StepRow.is_error, 1), else_=0)),
        )
        .where(StepRow.run_id.in_(run_ids))
        .group_by(StepRow.run_id)
    )


@dataclass(frozen=True)
class RunSummary:
    """A run with the counts a listing shows."""

    run: Run
    steps: int
    tool_calls: int
    errors: int
    # the run's check outcome (the last source by name with a decided label), None: none
    passed: bool | None = None


def group_key(run: Run | ReportRun, key: str) -> str | None:
    """The value of ``key`` for ``run``: a Run field, or ``versions.K`` / a bare version key."""
    if key.startswith("versions."):
        return run.versions.get(key.removeprefix("versions."))
    if key in ("harness", "model", "harness_version", "pack_id", "task_id", "status"):
        value = getattr(run, key)
        return None if value is None else str(value)
    if key in ("pack", "task"):
        return str(getattr(run, f"{key}_id"))
    return run.versions.get(key)


def group_runs(runs: Iterable[Run], by: Sequence[str]) -> dict[tuple[str | None, ...], list[Run]]:
    """Group runs by (harness, model, any versions key …), keeping input order inside groups."""
    groups: dict[tuple[str | None, ...], list[Run]] = {}
    for run in runs:
        groups.setdefault(tuple(group_key(run, k) for k in by), []).append(run)
    return groups


class RunStore(StoreBase):
    """Runs, trajectories and artifacts."""

    def save_run(self, run: Run) -> None:
        """Insert or update a run (status, times, usage move as it progresses)."""
        row = run_row(run)
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
            return run_from(row)

    def find_run(self, run_id: str) -> Run | None:
        """The run with this id, or None."""
        with Session(self.engine) as s:
            row = s.get(RunRow, run_id)
            return None if row is None else run_from(row)

    def runs_with_prefix(self, prefix: str) -> list[Run]:
        """Runs whose id starts with ``prefix`` (an imported file's runs)."""
        pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        with Session(self.engine) as s:
            rows = s.scalars(
                select(RunRow).where(RunRow.id.like(pattern, escape="\\")).order_by(RunRow.id)
            ).all()
            return [run_from(r) for r in rows]

    def imported(self, prefix: str) -> bool:
        """Whether a file's runs (``prefix``) are stored, each imported whole."""
        runs = self.runs_with_prefix(prefix)
        return bool(runs) and all(r.metadata.get("import") == "done" for r in runs)

    def _run_filters(
        self,
        pack_id: str | None,
        task_id: str | None,
        harness: str | None,
        model: str | None,
        status: str | None,
        versions: dict[str, str] | None,
    ) -> list[Any]:
        conds = matching(
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
            return [run_from(r) for r in rows]

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
        return list(
            self.iter_run_summaries(
                pack_id=pack_id,
                task_id=task_id,
                harness=harness,
                model=model,
                status=status,
                versions=versions,
            )
        )

    def iter_run_summaries(
        self,
        *,
        pack_id: str | None = None,
        task_id: str | None = None,
        harness: str | None = None,
        model: str | None = None,
        status: str | None = None,
        versions: dict[str, str] | None = None,
        page: int = 500,
    ) -> Iterator[RunSummary]:
        """:meth:`run_summaries` a page of runs at a time, by id, with their check outcome.

        A listing of 100,000 runs starts at once and holds one page in memory: each page
        is a keyset query on the runs' primary key, and its step counts and labels are
        read for that page's runs only (never a count over every step of the store).
        """
        conds = self._run_filters(pack_id, task_id, harness, model, status, versions)
        after: str | None = None
        while True:
            where = conds if after is None else [*conds, RunRow.id > after]
            with Session(self.engine) as s:
                rows = s.scalars(
                    select(RunRow).where(and_(True, *where)).order_by(RunRow.id).limit(page)
                ).all()
                if not rows:
                    return
                ids = [r.id for r in rows]
                counts = {
                    run_id: (int(n or 0), int(tools or 0), int(errors or 0))
                    for run_id, n, tools, errors in s.execute(step_counts_select(ids))
                }
                passed: dict[str, bool] = {}
                for run_id, ok in s.execute(
                    select(LabelRow.run_id, LabelRow.passed)
                    .where(LabelRow.run_id.in_(ids), LabelRow.passed.is_not(None))
                    .order_by(LabelRow.run_id, LabelRow.source)
                ):
                    passed[run_id] = bool(ok)
                page_out = [
                    RunSummary(run_from(r), *counts.get(r.id, (0, 0, 0)), passed.get(r.id))
                    for r in rows
                ]
            yield from page_out
            if len(rows) < page:
                return
            after = ids[-1]

    def save_trajectory(self, trajectory: Trajectory) -> None:
        """Store a run's steps, replacing any stored before (the run must exist)."""
        with Session(self.engine) as s, s.begin():
            if s.get(RunRow, trajectory.run_id) is None:
                raise StoreError(f"save run {trajectory.run_id!r} before its trajectory")
            s.execute(delete(StepRow).where(StepRow.run_id == trajectory.run_id))
            rows = [step_row(trajectory.run_id, st) for st in trajectory.steps]
            for start in range(0, len(rows), 1000):
                s.execute(self._insert(StepRow).values(rows[start : start + 1000]))

    def append_steps(self, run_id: str, steps: Sequence[Step]) -> None:
        """Add steps to a run's trajectory."""
        self.append_step_rows(run_id, [step_record(st) for st in steps])

    def append_step_rows(self, run_id: str, rows: Sequence[Sequence[Any]]) -> None:
        """Add flat step rows (``schema.STEP_ROW`` order) to a run's trajectory, in one transaction.

        Importers stream millions of rows: they go to the DBAPI directly, since SQLAlchemy's
        per-row parameter processing costs more than the insert itself.
        """
        if not rows:
            return
        if self.backend == "sqlite":
            with self.engine.begin() as conn:
                cur = conn.connection.cursor()
                # checkpoint the WAL every 64 MiB rather than every 4: a bulk import then
                # syncs the database file a few times, not once per few thousand rows
                cur.execute("PRAGMA wal_autocheckpoint=16384")
                cur.executemany(SQLITE_STEP_INSERT, sqlite_step_params(run_id, rows))
                cur.close()
            return
        if self.engine.dialect.driver == "psycopg":
            self._copy_step_rows(run_id, rows)
        else:  # another DBAPI driver named in the URL (psycopg2): no copy() to call
            self._insert_step_rows(run_id, rows)

    def _insert_step_rows(self, run_id: str, rows: Sequence[Sequence[Any]]) -> None:
        with self.engine.begin() as conn:
            conn.exec_driver_sql(PG_STEP_INSERT, pg_step_params(run_id, rows))

    def _copy_step_rows(self, run_id: str, rows: Sequence[Sequence[Any]]) -> None:
        """The rows in one COPY, one transaction (the same values ``_insert_step_rows`` stores).

        A binary COPY costs the importer a seventh of the CPU of the multi-row INSERT
        (0.10 s against 0.70 s per 50k rows of bench/ingest.py's stream); NUL characters
        are replaced as the INSERT path replaces them (``store.pg_copy``). Inline: a
        bulk import's batches go through ``step_appender``, which sends them on a thread.
        """
        conn = self.engine.raw_connection()
        try:
            raw = conn.driver_connection
            cur = step_copy_cursor(raw)
            copy_batch(raw, cur, run_id, rows, copy_data(cur, run_id, rows))
        finally:
            conn.close()

    def step_appender(
        self, run_id: str, *, writer_after_rows: int | None = WRITER_AFTER_ROWS
    ) -> StepAppender:
        """A bulk writer of a run's step rows, one transaction per batch (see ``store.bulk``).

        A batch's commit (on PostgreSQL its COPY too) overlaps the building of the next;
        a failed batch is raised by a later append (on PostgreSQL at most two later; with a
        writer process once it has stopped on it) or by ``close``, and nothing after it is
        stored. Past ``writer_after_rows`` rows (None: never) a SQLite file's batches go
        to a writer process; leaving the context (or ``close``) waits until every batch is
        committed.
        """
        return StepAppender(self, run_id, writer_after_rows=writer_after_rows)

    def delete_steps(self, run_id: str) -> None:
        """Remove a run's steps (before re-importing a partial import)."""
        with self.engine.begin() as conn:
            conn.execute(delete(StepRow).where(StepRow.run_id == run_id))

    def get_trajectory(self, run_id: str) -> Trajectory:
        """The run's steps in order (empty if none were stored)."""
        # plain rows, not ORM objects: a 5,000-step transcript loads in a third of the time;
        # the JSON columns read as text and parsed by orjson (the driver's json.loads was
        # half of the read)
        tbl = StepRow.__table__
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(*_step_columns()).where(tbl.c.run_id == run_id).order_by(tbl.c.idx)
            ).all()
        return Trajectory(run_id=run_id, steps=[_step_of(r) for r in rows])

    def step_views(self, run_id: str) -> list[StepView]:
        """The run's steps in order, as a transcript page shows them (:class:`StepView`)."""
        rows: Sequence[Sequence[Any]] | None = None
        if self.engine.dialect.name == "sqlite":
            rows = self._step_rows_as_json(run_id)
        if rows is None:
            t = StepRow.__table__.c
            with self.engine.connect() as conn:
                rows = conn.execute(
                    select(
                        *(cast(t[c], Text) if c == "tool_input" else t[c] for c in _VIEW_COLUMNS)
                    )
                    .where(t.run_id == run_id)
                    .order_by(t.idx)
                ).all()
        roles, kinds = {r.value: r for r in Role}, {k.value: k for k in StepKind}
        try:
            return self._views(rows, roles, kinds)
        except KeyError as exc:
            raise StoreError(
                f"run {run_id!r}: a stored step has the role or kind {exc.args[0]!r}, "
                "which this version of lhbench does not know"
            ) from None

    def _step_rows_as_json(self, run_id: str) -> list[list[Any]] | None:
        """SQLite: the steps' view columns as one JSON array built by SQLite (None: cannot).

        One ``sqlite3_step`` where reading rows takes one per step, each handing the
        interpreter to any other thread and waiting to get it back: beside a server's
        summary being made on its thread, a 5,000-step run page waited 170 ms that way
        for a read of 15. What SQLite refuses (no JSON functions, a transcript past its
        longest string) is read row by row.
        """
        try:
            with self.engine.connect() as conn:
                doc = conn.exec_driver_sql(_STEPS_AS_JSON, (run_id,)).scalar()
            rows: list[list[Any]] = orjson.loads(doc) if doc else []
        except (DBAPIError, orjson.JSONDecodeError):
            return None
        if any(rows[i][0] >= rows[i + 1][0] for i in range(len(rows) - 1)):
            rows.sort(key=lambda r: r[0])  # the subquery's order, kept by every SQLite known
        return rows

    @staticmethod
    def _views(
        rows: Sequence[Any], roles: dict[str, Role], kinds: dict[str, StepKind]
    ) -> list[StepView]:
        # idx, role, kind, content, tool name, call id, input (JSON text), output, error, exit
        return [
            StepView(
                r[0],
                roles[r[1]],
                kinds[r[2]],
                r[3],
                r[4],
                r[5],
                None if r[6] is None else _json_of(r[6]),
                r[7],
                bool(r[8]),
                r[9],
            )
            for r in rows
        ]

    def iter_trajectories(self, run_ids: Sequence[str]) -> Iterator[Trajectory]:
        """Each run's trajectory, in ``run_ids``' order, one query per slice of runs.

        What :meth:`get_trajectory` gives one run at a time, without a query per run; only
        a slice's steps are held at once, so a caller that reads each once and lets it go
        walks a store of any size in bounded memory.
        """
        tbl = StepRow.__table__
        cols = [tbl.c[c] for c in STEP_COLUMNS]
        with self.engine.connect() as conn:
            for part in chunks(list(run_ids)):
                by_run: dict[str, list[Step]] = {r: [] for r in part}
                rows = conn.execute(
                    select(tbl.c.run_id, *cols)
                    .where(tbl.c.run_id.in_(part))
                    .order_by(tbl.c.run_id, tbl.c.idx)
                )
                for row in rows:
                    by_run[row[0]].append(
                        Step.model_validate(dict(zip(STEP_ROW, row[1:], strict=True)))
                    )
                for rid in part:
                    yield Trajectory(run_id=rid, steps=by_run[rid])

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
                    status=r.status,
                    note=r.note,
                )
                for r in rows
            ]

    def delete_run(self, run_id: str) -> dict[str, int]:
        """Remove a run with everything about it; returns rows removed per table.

        Its steps, artifacts, grades (chapter grades too), verdicts, failure extractions,
        labels, and the votes and arena comparisons that name it.
        """
        removed: dict[str, int] = {}
        with Session(self.engine) as s, s.begin():
            if s.get(RunRow, run_id) is None:
                raise StoreError(f"no run {run_id!r} in the store")
            for name, stmt in (
                ("steps", delete(StepRow).where(StepRow.run_id == run_id)),
                ("artifacts", delete(ArtifactRow).where(ArtifactRow.run_id == run_id)),
                ("grades", delete(GradeRow).where(GradeRow.run_id == run_id)),
                (
                    "chapter_grades",
                    delete(ChapterGradeRow).where(ChapterGradeRow.run_id == run_id),
                ),
                ("verdicts", delete(VerdictRow).where(VerdictRow.run_id == run_id)),
                (
                    "failure_extractions",
                    delete(FailureExtractionRow).where(FailureExtractionRow.run_id == run_id),
                ),
                ("labels", delete(LabelRow).where(LabelRow.run_id == run_id)),
                (
                    "votes",
                    delete(VoteRow).where((VoteRow.run_a == run_id) | (VoteRow.run_b == run_id)),
                ),
                (
                    "comparisons",
                    delete(ComparisonRow).where(
                        (ComparisonRow.run_a == run_id) | (ComparisonRow.run_b == run_id)
                    ),
                ),
                ("runs", delete(RunRow).where(RunRow.id == run_id)),
            ):
                removed[name] = int(s.execute(stmt).rowcount or 0)  # type: ignore[attr-defined]
        return removed

    def iter_runs(self) -> Iterator[Run]:
        """Every run, by id, read a batch at a time.

        What :meth:`list_runs` gives unfiltered, without every run's ORM row held beside
        its ``Run`` until the last is read (a team's store has 100,000 runs).
        """
        with Session(self.engine) as s:
            rows = s.scalars(select(RunRow).order_by(RunRow.id).execution_options(yield_per=2000))
            for row in rows:
                yield run_from(row)

    def list_pack_runs(self, pack_id: str) -> list[Run]:
        """:meth:`list_runs` of one pack, read as plain rows rather than ORM objects.

        A grade job lists its pack's runs; at 67,000 runs the ORM's per-row objects cost
        most of the listing (6 of 9 s profiled). The same runs, in the same order.
        """
        tbl = RunRow.__table__
        # the columns a Run is made of (not updated_at: a date parsed per row for nothing)
        cols = [
            c.label("metadata_") if c.name == "metadata" else c
            for c in tbl.c
            if c.name != "updated_at"
        ]
        stmt = select(*cols).where(tbl.c.pack_id == pack_id).order_by(tbl.c.id)
        with self.engine.connect() as conn:
            return [run_from(r) for r in conn.execute(stmt)]  # type: ignore[arg-type]

    def pack_run_facts(self, pack_id: str) -> list[GradeRunRow]:
        """A pack's runs as :class:`GradeRunRow` rows, in :meth:`list_pack_runs`' order.

        What a grade job that builds no ``Run`` for a fully graded run reads of each: at
        67,000 runs the ``Run`` models (dates parsed, JSON columns decoded, validated)
        cost seconds; these plain rows a fraction of it.
        """
        tbl = RunRow.__table__
        stmt = (
            select(
                tbl.c.id,
                tbl.c.task_id,
                tbl.c.harness,
                tbl.c.model,
                tbl.c.status,
                tbl.c.failure_kind,
                tbl.c.error,
            )
            .where(tbl.c.pack_id == pack_id)
            .order_by(tbl.c.id)
        )
        with self.engine.connect() as conn:
            return [GradeRunRow(*r) for r in conn.execute(stmt)]

    def pack_runs_in(self, pack_id: str, run_ids: Iterable[str]) -> list[Run]:
        """:meth:`list_pack_runs` of only these runs (same order): a grade job's gaps."""
        wanted = set(run_ids)
        if not wanted:
            return []
        if len(wanted) > 2_000:  # most of the pack: one scan, filtered here
            return [r for r in self.list_pack_runs(pack_id) if r.id in wanted]
        tbl = RunRow.__table__
        cols = [
            c.label("metadata_") if c.name == "metadata" else c
            for c in tbl.c
            if c.name != "updated_at"
        ]
        out: list[Run] = []
        with self.engine.connect() as conn:
            for part in chunks(sorted(wanted), 500):
                stmt = select(*cols).where(tbl.c.pack_id == pack_id, tbl.c.id.in_(part))
                out.extend(run_from(r) for r in conn.execute(stmt))  # type: ignore[arg-type]
        return sorted(out, key=lambda r: r.id)


_STEP_JSON_AT = tuple(i for i, f in enumerate(STEP_ROW) if f in STEP_JSON_FIELDS)


def _step_columns() -> list[Any]:
    """The steps table's columns in ``STEP_ROW`` order, the JSON ones as their text."""
    tbl = StepRow.__table__
    json_at = set(_STEP_JSON_AT)
    return [cast(tbl.c[c], Text) if i in json_at else tbl.c[c] for i, c in enumerate(STEP_COLUMNS)]


# a run of 19 digits may be an integer past 64 bits, which orjson reads as a float
_LONG_DIGITS = re.compile(r"\d{19}")


def _json_of(text: str) -> Any:
    if _LONG_DIGITS.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    # what orjson refuses or reads otherwise and the stdlib reads (NaN, integers past
    # 64 bits, lone surrogates), as a store written by json.dumps may hold
    return json.loads(text)


# what a StepView reads of a step, in its fields' order
_VIEW_COLUMNS = (
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
)
# SQLite: a run's view columns as one JSON array of arrays, in step order (the input as
# its JSON text, decoded as a row's is)
_STEPS_AS_JSON = (
    "SELECT json_group_array(json_array("
    + ", ".join("CAST(tool_input AS TEXT)" if c == "tool_input" else c for c in _VIEW_COLUMNS)
    + ")) FROM (SELECT * FROM steps WHERE run_id = ? ORDER BY idx)"
)


def _step_of(row: Sequence[Any]) -> Step:
    """A row of :func:`_step_columns` as a validated Step."""
    return step_from_row(row, _json_of)
