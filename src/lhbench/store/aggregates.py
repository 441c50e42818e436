"""Lean reads for pages over large stores: plain columns and SQL aggregates, no documents.

The web app's overview reads 10,000 runs and 30,000 grades on its first request. Parsing
every grade's JSON document into a model takes seconds; the overview needs only each
(run, rubric content, tier, judge config)'s count, sum and sum of squares of tier scores,
which the database computes in one GROUP BY. The store's ``data_version`` is a counter
that database triggers bump on every write to an analysed table (migration 0007), so a
page cache keyed on it is never stale, whichever process wrote.
"""

from __future__ import annotations

import contextlib
import math
import queue
import threading
from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import orjson
from sqlalchemy import (
    BigInteger,
    Select,
    Text,
    and_,
    case,
    cast,
    delete,
    extract,
    func,
    insert,
    literal,
    literal_column,
    select,
    text,
    update,
)
from sqlalchemy.orm import Session
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.util import ClauseAdapter

from lhbench.schema import (
    FailureKind,
    GradeStatus,
    JudgeIdentity,
    JudgeKind,
    Role,
    RunStatus,
    StepKind,
    StepView,
    TierKind,
    failure_kind_of,
)
from lhbench.store.base import chunks
from lhbench.store.grade_parts import (
    STATUSES,
    GradeScoresError,
    JudgeName,
    ScoreFact,
    score_facts,
)
from lhbench.store.runs import RunStore, step_counts_select
from lhbench.store.tables import (
    AnalysisChangeRow,
    ChapterGradeRow,
    GradeRow,
    LabelRow,
    RunRow,
    StepRow,
    StoreIdentityRow,
    StoreVersionRow,
    VerdictRow,
    VoteRow,
)

if TYPE_CHECKING:  # numpy is read only where the grades are read (a light import)
    from numpy.typing import NDArray

    from lhbench.store.grade_columns import GradeColumns

__all__ = [
    "CELL_ERRORS",
    "CELL_GRADES",
    "CELL_PARSE",
    "CELL_RETRY",
    "CELL_SCORED",
    "CELL_TOTAL",
    "CELL_TOTAL_SQ",
    "AggregateStore",
    "CellKey",
    "GradeCombo",
    "GradeSummary",
    "JudgeFact",
    "JudgeName",
    "LabelFact",
    "RunFact",
    "ScoreFact",
    "StepCounts",
    "StepTally",
    "StoreChanges",
    "VerdictDetail",
    "VerdictFact",
]


# The facts below are made by the hundred thousand per summary: not frozen (a frozen
# dataclass sets each field through object.__setattr__, 3x the cost of building one), still
# hashed by value as frozen ones are. Nothing assigns to them.
@dataclass(slots=True, unsafe_hash=True)
class RunFact:
    """A run's columns a listing or an aggregate needs (no trajectory, no metadata)."""

    id: str
    pack_id: str
    task_id: str
    harness: str
    harness_version: str | None
    model: str
    versions: dict[str, str]
    status: str
    repeat: int
    cost_usd: float | None
    input_tokens: int
    output_tokens: int
    started_at: datetime | None = None
    failure_kind: str | None = None


# (run, rubric id, rubric version, rubric content hash, tier, judge config hash)
CellKey = tuple[str, str, str, str, str, str]
# per cell: grades, scored (ok with a tier score), sum and sum of squares of the scores,
# parse errors, final errors, retryable errors
CELL_GRADES, CELL_SCORED, CELL_TOTAL, CELL_TOTAL_SQ, CELL_PARSE, CELL_ERRORS, CELL_RETRY = range(7)


@dataclass(frozen=True, slots=True)
class GradeCombo:
    """The grades of one judge config on one rubric content and tier over a pack's runs.

    ``pack_id`` is None for grades whose run is not in the store. ``last_at`` is the time
    of the judge config's newest grade anywhere (the report's "most recent judge
    settings" compares these per judge).
    """

    pack_id: str | None
    rubric_id: str
    rubric_version: str
    rubric_hash: str
    tier: str
    judge_key: str
    grades: int
    last_at: datetime


@dataclass(frozen=True)
class GradeSummary:
    """Every grade, summed per cell and counted per combination.

    A cell is one run, rubric content, tier and judge config (a judge's repeats of a run);
    a combination has the run's pack in place of the run.
    """

    cells: dict[CellKey, list[float]]
    combos: list[GradeCombo]


@dataclass
class StoreChanges:
    """What was written since a change-log mark: runs per table, and tables as a whole."""

    mark: int
    runs: dict[str, set[str]] = field(default_factory=dict)
    whole: set[str] = field(default_factory=set)
    # the newest mark the log was trimmed to: a reader older than it missed entries
    trimmed: int = 0


@dataclass(slots=True, unsafe_hash=True)  # see RunFact
class LabelFact:
    """A check's outcome for a run (``passed`` None: the check could not decide)."""

    run_id: str
    source: str
    passed: bool | None
    # the task content a script's or hook check's label was made with, and why it failed
    check_hash: str = ""
    failure_kind: str | None = None


@dataclass(slots=True, unsafe_hash=True)  # see RunFact
class VerdictFact:
    """A binary verdict's columns."""

    run_id: str
    judge_kind: str
    judge_model: str
    judge_key: str
    verdict: str | None
    repeat: int


@dataclass(frozen=True, slots=True)
class StepCounts:
    """A run's steps, tool calls and errors, counted in the database."""

    steps: int
    tool_calls: int
    errors: int


_RUN_COLUMNS = (
    RunRow.id,
    RunRow.pack_id,
    RunRow.task_id,
    RunRow.harness,
    RunRow.harness_version,
    RunRow.model,
    # as text: a store holds few distinct tag sets, each decoded once (see _versions)
    cast(RunRow.versions, Text),
    RunRow.status,
    RunRow.repeat,
    RunRow.cost_usd,
    RunRow.usage["input_tokens"].as_integer(),
    RunRow.usage["output_tokens"].as_integer(),
    RunRow.failure_kind,
)

RUN_SORTS = {
    "id": (RunRow.id,),
    "task": (RunRow.pack_id, RunRow.task_id, RunRow.id),
    "agent": (RunRow.harness, RunRow.model, RunRow.id),
    "status": (RunRow.status, RunRow.id),
    "cost": (RunRow.cost_usd, RunRow.id),
    "started": (RunRow.started_at, RunRow.id),
}


def _prefetched(cursor: Any, size: int) -> Generator[Sequence[Any], None, None]:
    """A server-side cursor's batches, the next one fetched on a thread while this one is used.

    A ``FETCH`` makes the server compute its rows only when asked, so fetching inline the
    client and the server took turns: the report's read of 1,000,000 grades on PostgreSQL
    spent 3.4 s of the client's CPU and waited 2 s more for the server. Here the server
    computes batch n + 1 on its core while the caller uses batch n (one batch ahead at
    most). A failed fetch is raised here; leaving early stops the thread after its fetch.
    """
    ready: queue.Queue[Sequence[Any] | BaseException] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def hand_over(item: Sequence[Any] | BaseException) -> bool:
        """Give ``item`` to the caller; False if it left (the stop is set) first."""
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def fetch() -> None:
        try:
            while (batch := cursor.fetchmany(size)) and hand_over(batch):
                pass
            hand_over(batch)  # the empty batch that ends the read
        except BaseException as exc:  # handed to the caller's thread, unless it left
            hand_over(exc)

    thread = threading.Thread(target=fetch, name="lhbench-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            item = ready.get()
            if isinstance(item, BaseException):
                raise item
            if not item:
                return
            yield item
    finally:
        stop.set()
        with contextlib.suppress(queue.Empty):
            ready.get_nowait()  # a fetcher waiting to hand over its batch sees the stop
        thread.join()


# every distinct grades.judge_key, one index seek each (a "loose index scan": neither
# backend skips through an index for DISTINCT by itself)
_DISTINCT_JUDGE_KEYS = text(
    "WITH RECURSIVE k(key) AS ("
    " SELECT min(judge_key) FROM grades"
    " UNION ALL"
    " SELECT (SELECT min(g.judge_key) FROM grades AS g WHERE g.judge_key > k.key)"
    " FROM k WHERE k.key IS NOT NULL"
    ") SELECT key FROM k WHERE key IS NOT NULL"
)


def _as_datetime(value: Any) -> datetime:
    """A stored grade time (never NULL) as the datetime it is."""
    if not isinstance(value, datetime):
        raise TypeError(f"expected a stored time, got {value!r}")
    return value


@lru_cache(maxsize=4096)
def _versions(text: str | None) -> dict[str, str]:
    return {str(k): str(v) for k, v in (orjson.loads(text) if text else {}).items()}


# rows per fetch of a whole table's facts (a few milliseconds of the interpreter each)
_FACT_BATCH = 5_000


def _fact(row: Sequence[Any]) -> RunFact:
    # positional, in RunFact's field order (100,000 of these start a web summary; keyword
    # arguments cost a third more)
    return RunFact(
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        row[5],
        dict(_versions(row[6])),
        row[7],
        int(row[8] or 0),
        row[9],
        int(row[10] or 0),
        int(row[11] or 0),
        row[13] if len(row) > 13 else None,
        row[12],
    )


class AggregateStore(RunStore):
    """Plain-column reads and SQL aggregates for pages (see the module docstring)."""

    def _raw_rows(self, stmt: ClauseElement) -> list[tuple[Any, ...]]:
        """Plain tuples straight from the driver.

        For tens of thousands of rows of plain columns, SQLAlchemy's per-row objects cost
        more than the query. Only for statements whose columns need no type conversion
        (numbers, text) and whose parameters are constants.
        """
        sql = str(stmt.compile(self.engine, compile_kwargs={"literal_binds": True}))
        with self.engine.connect() as conn:
            cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
            try:
                cursor.execute(sql)
                return list(cursor.fetchall())
            finally:
                cursor.close()

    def data_version(self) -> int:
        """A number that changes after every write to runs, judgements, labels or packs."""
        with self.engine.connect() as conn:
            value = conn.execute(
                select(StoreVersionRow.version).where(StoreVersionRow.id == 1)
            ).scalar()
        return int(value or 0)

    def identity(self) -> str:
        """The database's token, made with it (see migration 0024; "" if it has none)."""
        with self.engine.connect() as conn:
            value = conn.execute(
                select(StoreIdentityRow.token).where(StoreIdentityRow.id == 1)
            ).scalar()
        return str(value or "")

    def run_facts(self) -> list[RunFact]:
        """Every run's listing columns, by id.

        Read in batches (:meth:`_raw_batches`; the columns are plain): a web server's other
        threads run between them, where one fetch of 100,000 rows held the interpreter.
        """
        stmt = select(*_RUN_COLUMNS).order_by(RunRow.id)
        return [_fact(r) for batch in self._raw_batches(stmt, _FACT_BATCH) for r in batch]

    def run_page(
        self,
        *,
        pack_id: str | None = None,
        task_id: str | None = None,
        harness: str | None = None,
        model: str | None = None,
        status: str | None = None,
        versions: dict[str, str] | None = None,
        sort: str = "id",
        descending: bool = False,
        offset: int = 0,
        limit: int = 50,
    ) -> tuple[list[RunFact], int]:
        """One page of runs matching every filter, and how many match in all."""
        conds = self._run_filters(pack_id, task_id, harness, model, status, versions)
        where = and_(True, *conds)
        # runs that never started (imports, fixtures) go last either way
        order = [
            (c.desc() if descending else c.asc()).nulls_last()
            for c in RUN_SORTS.get(sort, (RunRow.id,))
        ]
        with self.engine.connect() as conn:
            total = int(
                conn.execute(select(func.count()).select_from(RunRow).where(where)).scalar() or 0
            )
            rows = conn.execute(
                select(*_RUN_COLUMNS, RunRow.started_at)
                .where(where)
                .order_by(*order)
                .offset(max(0, offset))
                .limit(max(1, limit))
            ).all()
        return [_fact(r) for r in rows], total

    def _raw_batches(
        self, stmt: ClauseElement, size: int = 20_000
    ) -> Generator[Sequence[Any], None, None]:
        """:meth:`_raw_rows` a batch at a time: rows are summed as they come, never all held."""
        sql = str(stmt.compile(self.engine, compile_kwargs={"literal_binds": True}))
        with self.engine.connect() as conn:
            dbapi = conn.connection.dbapi_connection
            # PostgreSQL: a server-side cursor, or libpq holds the whole result at execute
            cursor = (
                dbapi.cursor(name="lhbench_batches")  # type: ignore[union-attr]
                if self.engine.dialect.name == "postgresql"
                else dbapi.cursor()  # type: ignore[union-attr]
            )
            try:
                cursor.execute(sql)
                if self.engine.dialect.name == "postgresql":
                    yield from _prefetched(cursor, size)
                else:
                    while batch := cursor.fetchmany(size):
                        yield batch
            finally:
                cursor.close()

    def change_mark(self) -> int:
        """The newest entry of the change log (0 when empty): read before a full summary."""
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.max(AnalysisChangeRow.seq))).scalar() or 0)

    def changes_since(self, mark: int, *, limit: int = 50_000) -> StoreChanges:
        """What the change log holds after ``mark`` (see migration 0020).

        More than ``limit`` entries come back as a change to everything: summarising
        again is then cheaper than run by run.
        """
        out = StoreChanges(mark=mark)
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(AnalysisChangeRow.seq, AnalysisChangeRow.tbl, AnalysisChangeRow.run_id)
                .where(AnalysisChangeRow.seq > mark)
                .order_by(AnalysisChangeRow.seq)
                .limit(limit + 1)
            ).all()
        if len(rows) > limit:
            out.whole.add("many")
        for seq, tbl, run_id in rows:
            out.mark = max(out.mark, int(seq))
            if tbl == "trim":
                out.trimmed = max(out.trimmed, int(run_id or 0))
            elif run_id is None:
                out.whole.add(str(tbl))
            else:
                out.runs.setdefault(str(tbl), set()).add(str(run_id))
        return out

    def trim_changes(self, mark: int, *, keep: int = 100_000) -> bool:
        """Drop the log up to ``mark`` when it holds more than ``keep`` entries.

        A ``trim`` entry after the cut, holding ``mark``, tells every reader whose mark is
        older to summarise again. Taking the store version's lock first keeps the log in
        commit order on PostgreSQL (the triggers do the same).
        """
        with self.engine.begin() as conn:
            n = conn.execute(select(func.count()).select_from(AnalysisChangeRow)).scalar() or 0
            if n <= keep:
                return False
            conn.execute(
                update(StoreVersionRow)
                .where(StoreVersionRow.id == 1)
                .values(version=StoreVersionRow.version + 1)
            )
            conn.execute(delete(AnalysisChangeRow).where(AnalysisChangeRow.seq <= mark))
            conn.execute(insert(AnalysisChangeRow).values(tbl="trim", run_id=str(mark)))
        return True

    @staticmethod
    def _cell_select(run_ids: Sequence[str] | None) -> Select[Any]:
        ok = GradeRow.status == "ok"
        scored = ok & GradeRow.tier_score.is_not(None)
        failed = ~scored & (GradeRow.status != "parse_error")
        key_columns = (
            GradeRow.run_id,
            GradeRow.rubric_id,
            GradeRow.rubric_version,
            GradeRow.rubric_hash,
            GradeRow.tier,
            GradeRow.judge_key,
        )
        stmt = select(
            *key_columns,
            func.count(),
            func.sum(case((scored, 1), else_=0)),
            func.sum(case((scored, GradeRow.tier_score), else_=None)),
            func.sum(case((scored, GradeRow.tier_score * GradeRow.tier_score), else_=None)),
            func.sum(case((GradeRow.status == "parse_error", 1), else_=0)),
            func.sum(case((failed & ~GradeRow.retryable, 1), else_=0)),
            func.sum(case((failed & GradeRow.retryable, 1), else_=0)),
        )
        if run_ids is not None:
            stmt = stmt.where(GradeRow.run_id.in_(list(run_ids)))
        return stmt.group_by(*key_columns)  # type: ignore[return-value]

    @staticmethod
    def _cell(row: Sequence[Any]) -> list[float]:
        return [
            int(row[6]),
            int(row[7] or 0),
            float(row[8] or 0.0),
            float(row[9] or 0.0),
            int(row[10] or 0),
            int(row[11] or 0),
            int(row[12] or 0),
        ]

    def grade_cells(self, run_ids: Sequence[str]) -> dict[CellKey, list[float]]:
        """The cells of :meth:`grade_summary` for these runs only (what a write changed)."""
        out: dict[CellKey, list[float]] = {}
        with self.engine.connect() as conn:
            for part in chunks(list(run_ids)):
                for row in conn.execute(self._cell_select(part)).all():
                    out[(row[0], row[1], row[2], row[3], row[4], row[5])] = self._cell(row)
        return out

    def judge_newest(self, judge_keys: Sequence[str]) -> dict[str, datetime]:
        """Each judge config's newest grade time (configs without grades absent)."""
        out: dict[str, datetime] = {}
        with self.engine.connect() as conn:
            # one key at a time: each is a seek at the end of the key's run in
            # ix_grades_overview (judge_key, created_at, …); an IN list scans them all
            for key in judge_keys:
                newest = conn.execute(
                    select(func.max(GradeRow.created_at)).where(GradeRow.judge_key == key)
                ).scalar()
                if newest is not None:
                    out[key] = _as_datetime(newest)
        return out

    def grade_summary(self, run_packs: Mapping[str, str]) -> GradeSummary:
        """Every grade summed per cell and counted per combination.

        ``run_packs`` maps run ids to their pack (grades of runs not in it get a combination
        with pack None). The database sums each cell (GROUP BY run, rubric content, tier and
        judge config: counts, Σ score, Σ score²), so what reaches Python is one row per
        cell, read in batches; a 3-judge panel's 1,000,000 grades were a list of 1,000,000
        nine-column rows (most of the web server's 1.7 GB) and as many loop turns.
        """
        stmt = self._cell_select(None)
        cells: dict[CellKey, list[float]] = {}
        counts: dict[tuple[str | None, str, str, str, str, str], int] = {}
        # a few distinct (rubric content, tier, judge) parts: one copy of their strings
        parts: dict[tuple[str, ...], tuple[str, str, str, str, str]] = {}
        for batch in self._raw_batches(stmt):
            for row in batch:
                part = row[1:6]
                rubric_id, version, rubric_hash, tier, judge = parts.setdefault(part, part)
                n = int(row[6])
                cells[(row[0], rubric_id, version, rubric_hash, tier, judge)] = self._cell(row)
                # per combination: the cells' counts with the run replaced by its pack
                combo = (run_packs.get(row[0]), rubric_id, version, rubric_hash, tier, judge)
                counts[combo] = counts.get(combo, 0) + n
        # a judge config's newest grade (what "the judge's current settings" compares)
        newest = self.judge_last_graded()
        combos = [
            GradeCombo(*combo, grades=n, last_at=newest[combo[5]]) for combo, n in counts.items()
        ]
        return GradeSummary(cells=cells, combos=combos)

    def judge_identities(self) -> dict[str, JudgeIdentity]:
        """Judge config hash -> the identity it stands for (one grade document read per judge)."""
        out: dict[str, JudgeIdentity] = {}
        with self.engine.connect() as conn:
            # the distinct keys by index seeks (a DISTINCT reads the whole index)
            keys = conn.execute(_DISTINCT_JUDGE_KEYS).scalars().all()
            for key in keys:
                doc = conn.execute(
                    select(GradeRow.document).where(GradeRow.judge_key == key).limit(1)
                ).scalar()
                if doc is not None:
                    out[key] = JudgeIdentity.model_validate(doc["judge"])
        return out

    def _rows_of_runs(
        self, stmt: Any, run_column: Any, run_ids: Sequence[str] | None
    ) -> list[Sequence[Any]]:
        """``stmt``'s rows: all of them, or those whose ``run_column`` is among ``run_ids``."""
        if run_ids is None:
            return [r for batch in self._raw_batches(stmt, _FACT_BATCH) for r in batch]
        rows: list[Sequence[Any]] = []
        with self.engine.connect() as conn:
            for part in chunks(list(run_ids)):
                rows.extend(conn.execute(stmt.where(run_column.in_(part))).all())
        return rows

    def label_facts(self, run_ids: Sequence[str] | None = None) -> list[LabelFact]:
        """Every check outcome (or those of ``run_ids``), by run and source."""
        stmt = select(
            LabelRow.run_id,
            LabelRow.source,
            LabelRow.passed,
            LabelRow.check_hash,
            LabelRow.failure_kind,
        ).order_by(LabelRow.run_id, LabelRow.source)
        rows = self._rows_of_runs(stmt, LabelRow.run_id, run_ids)
        return [
            LabelFact(r[0], r[1], None if r[2] is None else bool(r[2]), r[3] or "", r[4])
            for r in rows
        ]

    def votes_and_chapter_grades_about(self, run_ids: Sequence[str]) -> int:
        """Votes and chapter grades that involve any of ``run_ids``, as a report reads them.

        Votes on whole runs in any state, human votes on chapters that were decided, and
        chapter grades (what the overview counts for runs it leaves out).
        """
        ids = list(run_ids)
        n = 0
        with Session(self.engine) as s:
            for part in chunks(ids):
                touches = VoteRow.run_a.in_(part) | VoteRow.run_b.in_(part)
                chapter_vote = (
                    VoteRow.chapter_id.is_not(None)
                    & (VoteRow.rater_kind == "human")
                    & (VoteRow.status == "ok")
                )
                n += (
                    s.scalar(
                        select(func.count())
                        .select_from(VoteRow)
                        .where(touches & (VoteRow.chapter_id.is_(None) | chapter_vote))
                    )
                    or 0
                )
                n += (
                    s.scalar(
                        select(func.count())
                        .select_from(ChapterGradeRow)
                        .where(ChapterGradeRow.run_id.in_(part))
                    )
                    or 0
                )
        return n

    def verdict_facts(self, run_ids: Sequence[str] | None = None) -> list[VerdictFact]:
        """Every binary verdict's columns (or those of ``run_ids``), by run and key.

        Plain tuples: one per verdict, 50,000 at scale.
        """
        stmt = select(
            VerdictRow.run_id,
            VerdictRow.judge_kind,
            VerdictRow.judge_model,
            VerdictRow.judge_key,
            VerdictRow.verdict,
            VerdictRow.repeat,
        ).order_by(VerdictRow.run_id, VerdictRow.key)
        rows = self._rows_of_runs(stmt, VerdictRow.run_id, run_ids)
        return [VerdictFact(r[0], r[1], r[2], r[3], r[4], int(r[5] or 0)) for r in rows]

    def step_counts(self, run_ids: Sequence[str]) -> dict[str, StepCounts]:
        """Steps, tool calls and errors of the given runs (runs without steps absent)."""
        out: dict[str, StepCounts] = {}
        with Session(self.engine) as s:
            for part in chunks(list(run_ids)):
                for run_id, steps, tools, errors in s.execute(step_counts_select(part)):
                    out[run_id] = StepCounts(int(steps), int(tools or 0), int(errors or 0))
        return out

    def run_places(self) -> list[tuple[str, str, str, str, str | None]]:
        """Every run's (id, pack id, task id, pack content hash, failure kind), by id."""
        stmt = select(
            RunRow.id, RunRow.pack_id, RunRow.task_id, RunRow.pack_hash, RunRow.failure_kind
        ).order_by(RunRow.id)
        return [(r[0], r[1], r[2], r[3], r[4]) for r in self._raw_rows(stmt)]

    def run_metadata_having(self, key: str) -> dict[str, dict[str, Any]]:
        """Run id -> metadata, for the runs whose metadata has ``key`` at its top level, by id.

        The database keeps the runs whose metadata text names the key (a superset, on
        either backend's JSON text); only those documents are decoded.
        """
        text = cast(RunRow.metadata_, Text)
        needle = orjson.dumps(key).decode()
        stmt = (
            select(RunRow.id, text)
            .where(text.contains(needle, autoescape=True))
            .order_by(RunRow.id)
        )
        out: dict[str, dict[str, Any]] = {}
        with self.engine.connect() as conn:
            for run_id, doc in conn.execute(stmt):
                meta = orjson.loads(doc) if doc else None
                if isinstance(meta, dict) and key in meta:
                    out[run_id] = meta
        return out

    def verdict_details(self) -> list[VerdictDetail]:
        """Every verdict's fields the Agent-as-a-Judge tables read, oldest first.

        The database extracts the few document fields (judge settings, failure-mode tag,
        tools used), so no raw output or evidence is read or parsed.
        """
        doc = VerdictRow.document
        stmt = select(
            VerdictRow.id,
            VerdictRow.run_id,
            VerdictRow.judge_kind,
            VerdictRow.judge_model,
            VerdictRow.judge_key,
            VerdictRow.verdict,
            VerdictRow.repeat,
            cast(doc[("judge", "settings")], Text),
            doc["failure_mode"].as_string(),
            doc["tool_calls"].as_integer(),
            cast(doc["tools_used"], Text),
        ).order_by(VerdictRow.created_at, VerdictRow.id)
        with self.engine.connect() as conn:
            return [_detail(r) for r in conn.execute(stmt)]

    def judge_last_graded(self, excluding: Sequence[str] = ()) -> dict[str, datetime]:
        """Judge config hash -> the time of its newest grade (a judge's current settings).

        Grades of the runs ``excluding`` (a report leaves out runs that failed for
        infrastructure) are not looked at.
        """
        # the distinct judge keys by seeks in ix_grades_overview (judge_key, created_at, …),
        # then each key's newest grade by a seek at the end of its run: a GROUP BY read every
        # grade (1.1 s on PostgreSQL at 1,000,000 grades, quiet)
        with self.engine.connect() as conn:
            keys = list(conn.execute(_DISTINCT_JUDGE_KEYS).scalars())
            out: dict[str, datetime] = {}
            excluded = list(excluding)
            for key in keys:
                stmt = select(func.max(GradeRow.created_at)).where(GradeRow.judge_key == key)
                if excluded:
                    stmt = stmt.where(GradeRow.run_id.not_in(excluded))
                newest = conn.execute(stmt).scalar()
                if newest is not None:
                    out[key] = _as_datetime(newest)
        return out

    def report_runs(self) -> Iterator[ReportRun]:
        """Every run's fields a report reads (:class:`ReportRun`), by id, a batch at a time.

        No usage, model usage or validation per run: a team's store holds 100,000 runs,
        and a report holding each as a ``Run`` model took half a gigabyte. Tag sets and
        metadata are read as text and decoded once per distinct text, shared by the runs.
        """
        stmt = select(
            RunRow.id,
            RunRow.pack_id,
            RunRow.task_id,
            RunRow.harness,
            RunRow.harness_version,
            RunRow.model,
            cast(RunRow.versions, Text),
            RunRow.repeat,
            RunRow.status,
            RunRow.error,
            RunRow.failure_kind,
            cast(RunRow.metadata_, Text),
        ).order_by(RunRow.id)
        # plain tuples from the driver (text and numbers only), a batch at a time; a run
        # made positionally (100,000 of them: keywords cost a third of the read)
        run = ReportRun
        for batch in self._raw_batches(stmt, 5000):
            for rid, pack, task, harness, hv, model, vs, repeat, st, error, fk, meta in batch:
                status = _enum(RunStatus, st)
                yield run(
                    rid,
                    pack,
                    task,
                    harness,
                    hv,
                    model,
                    _versions(vs),
                    int(repeat or 0),
                    status,
                    error,
                    _enum(FailureKind, fk) if fk else failure_kind_of(status.value, error),
                    _metadata(meta),
                )

    def iter_error_steps(self, run_ids: Sequence[str]) -> Iterator[tuple[str, list[StepView]]]:
        """Per run of ``run_ids`` (in order), its steps that can hold or answer an error.

        Tool calls, tool results, errors and hooks, in order (messages and thinking never
        do), as :class:`StepView`: the fields the failure taxonomy reads, no model (a
        pydantic ``Step.model_construct`` looks up every default field's default, most of
        a report's time at 400,000 steps). Tool inputs decoded once per distinct text, a
        slice of runs per query: a report walks 600,000 steps in bounded memory.
        """
        kinds = [
            k.value
            for k in (StepKind.TOOL_CALL, StepKind.TOOL_RESULT, StepKind.ERROR, StepKind.HOOK)
        ]
        t = StepRow.__table__.c
        stmt = select(
            t.run_id,
            t.idx,
            t.role,
            t.kind,
            t.content,
            t.tool_name,
            t.tool_call_id,
            cast(t.tool_input, Text),
            t.tool_output,
            t.is_error,
            t.exit_code,
        )
        with self.engine.connect() as conn:
            for part in chunks(list(run_ids)):
                by_run: dict[str, list[StepView]] = {r: [] for r in part}
                rows = conn.execute(
                    stmt.where(t.run_id.in_(part), t.kind.in_(kinds)).order_by(t.run_id, t.idx)
                )
                for row in rows:
                    by_run[row[0]].append(
                        StepView(
                            row[1],
                            _enum(Role, row[2]),
                            _enum(StepKind, row[3]),
                            row[4],
                            row[5],
                            row[6],
                            _json_text(row[7]),
                            row[8],
                            bool(row[9]),
                            row[10],
                        )
                    )
                for rid in part:
                    yield rid, by_run[rid]

    def _ids_sort_bytewise(self) -> bool:
        """Whether the database orders ``grades.id`` by its UTF-8 bytes (see grade_order)."""
        if self.engine.dialect.name == "sqlite":
            return True  # BINARY, the schema names no other collation
        if self.engine.dialect.name != "postgresql":
            return False
        from lhbench.store.grade_order import is_bytewise_collation

        with self.engine.connect() as conn:
            row = conn.exec_driver_sql(
                "SELECT c.collname, c.collprovider, c.collcollate FROM pg_attribute a"
                " JOIN pg_collation c ON c.oid = a.attcollation"
                " WHERE a.attrelid = to_regclass('grades') AND a.attname = 'id'"
            ).first()
            if row is None:
                return False
            if row[0] != "default":
                return is_bytewise_collation(row[2] or row[0], row[1]) or (
                    is_bytewise_collation(row[0], row[1])
                )
            provider = "c"
            if conn.dialect.server_version_info >= (15,):  # type: ignore[operator]
                provider = conn.exec_driver_sql(
                    "SELECT datlocprovider FROM pg_database WHERE datname = current_database()"
                ).scalar_one()
            collate = conn.exec_driver_sql(
                "SELECT datcollate FROM pg_database WHERE datname = current_database()"
            ).scalar_one()
        return is_bytewise_collation(str(collate), str(provider))

    def grade_columns(
        self, judges: Mapping[str, JudgeName], *, sort_in_database: bool = False
    ) -> GradeColumns:
        """Every grade's columns and dimension scores, oldest first, as arrays.

        ``judges`` maps judge config hashes to their names (:meth:`judge_identities`; a
        hash missing from it is named by itself). No object per grade: a row's few
        low-variety columns (rubric tier, judge, status, repeat) are one pattern looked up
        in a small table, its scores (read as JSON text, without their documents) one of a
        panel's few distinct score lists, so a million grades cost a few arrays.

        Oldest first is ``ORDER BY created_at, id``: SQLite sorts; on PostgreSQL the rows
        are read unsorted with their sort keys and put in that order in numpy
        (:mod:`lhbench.store.grade_order`), the database sorting only where numpy cannot
        match it (``sort_in_database``, or ids under a collation other than bytewise).
        """
        import numpy as np

        from lhbench.store.grade_columns import GradeColumns
        from lhbench.store.grade_order import as_bytes, chronological_order

        # a row's low-variety columns as one text (one string per row to fetch and look up,
        # not eight); the free-text version last, so a separator in it cannot shift a field
        sep = literal(_SEP, Text)
        parts_sql = _pattern_parts()
        pattern_text = parts_sql[0] + sep
        for col in parts_sql[1:-1]:
            pattern_text = pattern_text + col + sep
        pattern_text = pattern_text + parts_sql[-1]
        sqlite = self.engine.dialect.name == "sqlite"
        coding = self._pattern_coding(judges)
        # the pattern's integer code where each of its columns holds a value known
        # beforehand (an integer is a fraction of a text's cost to make and fetch), else
        # its text: in one column on SQLite (whose columns hold either type), in two on
        # PostgreSQL (the code, and the text only where the code is NULL)
        if coding is None:
            pattern_sql: list[Any] = [pattern_text]
        elif sqlite:
            pattern_sql = [func.coalesce(coding.expression, pattern_text)]
        else:
            # the code written once: read from a subquery of the table (below), as the
            # planner would otherwise compute it twice a row
            code = literal_column("pattern_code", BigInteger)
            pattern_sql = [code, case((code.is_(None), pattern_text))]
        text_column = len(pattern_sql) == 2  # PostgreSQL's second pattern column
        columns: list[Any] = [
            GradeRow.run_id,
            GradeRow.tier_score,
            *pattern_sql,
            # the compact column (a grade written before migration 0022 and not
            # backfilled, say by another tool: its document's scores)
            func.coalesce(GradeRow.dim_scores, cast(GradeRow.document["scores"], Text)),
        ]
        # SQLite sorts the coded rows for less CPU than their keys cost to fetch and
        # order here (3.3 s against 4.3 s of CPU for the whole read at 100k, measured)
        in_numpy = not sort_in_database and not sqlite and self._ids_sort_bytewise()
        if in_numpy:
            # PostgreSQL sorts created_at as a timestamp: its microseconds since the epoch
            created = cast(extract("epoch", GradeRow.created_at) * 1_000_000, BigInteger)
            stmt = select(*columns, created, GradeRow.id)
        else:
            stmt = select(*columns).order_by(GradeRow.created_at, GradeRow.id)
        if text_column:
            assert coding is not None
            # OFFSET 0: a subquery PostgreSQL keeps (not merged into the outer query)
            coded_rows = (
                select(GradeRow.__table__, coding.expression.label("pattern_code"))
                .offset(0)
                .subquery("g")
            )
            stmt = ClauseAdapter(coded_rows).traverse(stmt)
        runs: dict[str, int] = {}
        patterns: dict[str, int] = {}
        coded: dict[int | str | None, int] = {}  # a row's code or text -> its pattern's index
        # score lists as stored (``dim_scores``, no evidence): a panel repeats a few, so most
        # rows are a lookup; bounded, in case a store's lists all differ
        texts: dict[str, int] = {}
        lists: dict[tuple[ScoreFact, ...], int] = {}
        parts: tuple[list[NDArray[Any]], ...] = ([], [], [], [], [], [])
        run, tier_score, pattern, scores, created_at, ids = parts
        batches = self._raw_batches(stmt)
        for batch in batches:
            # a batch's columns, each coded by a lookup in C (map), never a Python loop per row
            cols = list(zip(*batch, strict=True))
            for r in set(cols[0]).difference(runs):
                runs[r] = len(runs)
            run.append(np.fromiter(map(runs.__getitem__, cols[0]), np.int64, len(batch)))
            tier_score.append(np.array(cols[1], dtype=np.float64))  # None: NaN
            for p in set(cols[2]).difference(coded):
                if p is None:  # PostgreSQL: a value not known, the text in the next column
                    coded[p] = -1
                    continue
                text = p if coding is None or isinstance(p, str) else coding.text(p)
                coded[p] = patterns.setdefault(text, len(patterns))
            codes = np.fromiter(map(coded.__getitem__, cols[2]), np.int64, len(batch))
            if text_column:
                # the few rows read as text (a loop over them only)
                unknown = np.flatnonzero(codes < 0)
                codes[unknown] = [
                    patterns.setdefault(cols[3][i], len(patterns)) for i in unknown.tolist()
                ]
                del cols[3]
            pattern.append(codes)
            local: dict[str | None, int] = {}
            for text in set(cols[3]):
                listed = texts.get(text or "[]")
                if listed is None:
                    decoded = self._score_facts(text or "[]")
                    listed = lists.setdefault(decoded, len(lists))
                    if len(texts) >= 10_000:
                        texts.clear()
                    texts[text or "[]"] = listed
                local[text] = listed
            scores.append(np.fromiter(map(local.__getitem__, cols[3]), np.int64, len(batch)))
            if in_numpy:
                if None in cols[4]:  # not a time numpy can order as the database does
                    batches.close()
                    return self.grade_columns(judges, sort_in_database=True)
                created_at.append(np.array(cols[4], dtype=np.int64))
                ids.append(as_bytes(cols[5]))

        def joined(arrays: list[NDArray[Any]], dtype: Any) -> NDArray[Any]:
            return np.concatenate(arrays) if arrays else np.zeros(0, dtype=dtype)

        run_codes, pattern_codes = joined(run, np.int64), joined(pattern, np.int64)
        score_codes, tier_scores = joined(scores, np.int64), joined(tier_score, np.float64)
        if in_numpy and run_codes.size:
            times = joined(created_at, np.int64)
            order = chronological_order([times], joined(ids, np.bytes_))
            run_codes, pattern_codes = run_codes[order], pattern_codes[order]
            score_codes, tier_scores = score_codes[order], tier_scores[order]
        keys: dict[tuple[str, str, str, str], int] = {}
        names: dict[JudgeName, int] = {}
        known = dict(judges)
        # per pattern: key, judge, status, retryable, repeat
        table = np.zeros((max(len(patterns), 1), 5), dtype=np.int64)
        for text, i in patterns.items():
            rubric_id, tier, rubric_hash, judge_key, status, retry, rep, version = text.split(
                _SEP, 7
            )
            name = known.get(judge_key) or JudgeName(judge_key, judge_key)
            table[i] = (
                keys.setdefault((rubric_id, version, tier, rubric_hash), len(keys)),
                names.setdefault(name, len(names)),
                STATUSES.index(_enum(GradeStatus, status)),
                retry in ("1", "true"),  # SQLite's and PostgreSQL's text of a boolean
                int(rep or 0),
            )
        per_row = table[pattern_codes]
        return GradeColumns(
            run_ids=list(runs),
            keys=list(keys),
            judges=list(names),
            score_lists=list(lists),
            run=run_codes,
            key=per_row[:, 0].copy(),
            judge=per_row[:, 1].copy(),
            status=per_row[:, 2].astype(np.int8),
            retryable=per_row[:, 3].astype(np.bool_),
            tier_score=tier_scores,
            repeat=per_row[:, 4].copy(),
            scores=score_codes,
        )

    def _pattern_coding(self, judges: Mapping[str, JudgeName]) -> _PatternCoding | None:
        """The integer coding of grade patterns, or None where it cannot be one.

        Each column's known values: those of a sample of grades (SQLite: evenly spread
        rowids; PostgreSQL: the first rows and a sample of the table's pages), the values
        an enum column may hold, and the judges' keys. A row holding any other value is
        read as its text, so the sample decides the speed, never the result.
        """
        parts = _pattern_parts()
        sqlite = self.engine.dialect.name == "sqlite"
        if not sqlite and self.engine.dialect.name != "postgresql":
            return None
        with self.engine.connect() as conn:
            if sqlite:
                top = conn.exec_driver_sql("SELECT max(rowid) FROM grades").scalar()
                if top is None:
                    return None
                step = max(1, int(top) // _SAMPLE)
                rowids = sorted(
                    {*range(1, min(int(top), _SAMPLE) + 1), *range(1, int(top) + 1, step)}
                )
                sampled = conn.execute(
                    select(*parts).where(literal_column("grades.rowid").in_(rowids)).distinct()
                ).all()
            else:
                # the planner's count of rows (-1 or 0 before the first ANALYZE)
                rows = conn.exec_driver_sql(
                    "SELECT reltuples FROM pg_class WHERE oid = to_regclass('grades')"
                ).scalar()
                head = select(*parts).limit(_SAMPLE).subquery()
                queries: list[Any] = [select(*head.c).distinct()]
                if rows is not None and float(rows) > 2 * _SAMPLE:
                    # pages picked at random (SYSTEM reads those only): ten samples' worth
                    # of rows, a page's rows being often of one run
                    percent = min(100.0, 100.0 * 10 * _SAMPLE / float(rows))
                    sql = str(select(*parts).distinct().compile(self.engine))
                    queries.append(f"{sql} TABLESAMPLE SYSTEM ({percent:.6f}) REPEATABLE (0)")
                sampled = [
                    row
                    for q in queries
                    for row in (conn.exec_driver_sql(q) if isinstance(q, str) else conn.execute(q))
                ]
        domains: list[dict[str, int]] = [{} for _ in parts]
        extra: dict[int, Sequence[str]] = {
            1: [t.value for t in TierKind],
            3: list(judges) if len(judges) <= _MOST_VALUES else [],
            4: [s.value for s in GradeStatus],
            5: ["0", "1"] if sqlite else ["false", "true"],
            6: ["0", "1", "2"],
        }
        for c, domain in enumerate(domains):
            for value in [*(row[c] for row in sampled), *extra.get(c, ())]:
                if isinstance(value, str):
                    domain.setdefault(value, len(domain))
        radixes = [len(d) for d in domains]
        if not all(radixes) or max(radixes) > _MOST_VALUES:
            # no grade sampled (rowids left by deletes), or so many values that a row's
            # CASE (a comparison per value) would cost more than its text
            return None
        return _PatternCoding([list(d) for d in domains], radixes, wide=not sqlite)

    def failure_step_counts(self, run_ids: Sequence[str]) -> dict[str, StepTally]:
        """Steps and tool calls of ``run_ids``, flagged when the failure taxonomy must read them.

        Suspect: a step with the error flag, a tool result with a non-zero exit code or
        that may be a design/preview tool's error payload (its output names ``"status"``
        and ``"error"``), or a step of a preview or deploy tool (a success Table 12
        counts). A superset of the taxonomy's own tests: any run it would find an error,
        a preview or a deploy in is flagged, so the others are counted without reading a
        step. Two queries whatever the number of runs: the store's few tool names, then
        every run's counts.
        """
        t = StepRow.__table__.c
        # the taxonomy's own test of a name (operation_key), on the distinct names
        shown = [
            name
            for (name,) in self._raw_rows(select(t.tool_name).distinct())
            if name and any(w in name.lower() for w in ("preview", "deploy", "upload_dist"))
        ]
        result = t.kind == StepKind.TOOL_RESULT.value
        suspect = (
            t.is_error
            | (result & t.exit_code.is_not(None) & (t.exit_code != 0))
            | (
                result
                & t.tool_output.contains('"status"', autoescape=True)
                & t.tool_output.contains('"error"', autoescape=True)
            )
        )
        if shown:
            suspect = suspect | t.tool_name.in_(shown)
        stmt = select(
            t.run_id,
            func.count(),
            func.sum(case((t.kind == StepKind.TOOL_CALL.value, 1), else_=0)),
            func.max(case((suspect, 1), else_=0)),
        ).group_by(t.run_id)
        wanted = set(run_ids)
        # the whole table in one scan: a report asks for nearly every run
        return {
            row[0]: StepTally(row[1], row[2] or 0, bool(row[3]))
            for row in self._raw_rows(stmt)
            if row[0] in wanted
        }

    def _score_facts(self, text: str) -> tuple[ScoreFact, ...]:
        """:func:`score_facts` of a grade's stored scores; if unreadable, the grade named.

        The columns are decoded once per distinct text, not per row: only when one is
        malformed is the store asked which grade holds it (its oldest).
        """
        try:
            return score_facts(text)
        except GradeScoresError as e:
            stored = func.coalesce(GradeRow.dim_scores, cast(GradeRow.document["scores"], Text))
            stmt = (
                select(
                    GradeRow.id,
                    GradeRow.run_id,
                    GradeRow.judge_model,
                    GradeRow.judge_key,
                    GradeRow.dim_scores.is_(None),
                )
                .where(stored == text)
                .order_by(GradeRow.created_at, GradeRow.id)
                .limit(1)
            )
            with self.engine.connect() as conn:
                row = conn.execute(stmt).first()
            if row is None:
                raise
            grade_id, run_id, model, key, from_document = row
            raise GradeScoresError(
                e.problem,
                grade_id=grade_id,
                run_id=run_id,
                judge=f"{model} [{key}]",
                column="document.scores" if from_document else "dim_scores",
            ) from None


@dataclass(frozen=True, slots=True)
class JudgeFact:
    """The parts of a judge's identity the Agent-as-a-Judge tables group by."""

    model: str
    kind: JudgeKind
    key: str
    settings: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class VerdictDetail:
    """A binary verdict's fields the Agent-as-a-Judge tables and failure-mode rule read."""

    id: str
    run_id: str
    judge: JudgeFact
    verdict: str | None
    repeat: int
    failure_mode: str | None
    tool_calls: int
    tools_used: tuple[str, ...]


@lru_cache(maxsize=4096)
def _json_text(text: str | None) -> Any:
    # few distinct judge settings and tool lists in a store: each decoded once
    return None if text is None else orjson.loads(text)


@lru_cache(maxsize=4096)
def _judge_fact(kind: str, model: str, key: str, settings: str | None) -> JudgeFact:
    # a few judges in a store: one fact each, shared by their verdicts
    return JudgeFact(model, JudgeKind(kind), key, _json_text(settings) or {})


def _detail(row: Sequence[Any]) -> VerdictDetail:
    vid, run_id, kind, model, key, verdict, repeat, settings, mode, calls, tools = row
    return VerdictDetail(
        vid,
        run_id,
        _judge_fact(kind, model, key, settings),
        verdict,
        int(repeat or 0),
        mode,
        int(calls or 0),
        tuple(_json_text(tools) or ()),
    )


E = TypeVar("E", bound=Enum)


@lru_cache(maxsize=256)
def _enum(cls: type[E], value: str) -> E:
    """``cls(value)``, remembered: a column of few distinct values is read per row."""
    return cls(value)


@dataclass(slots=True)
class ReportRun:
    """A run's fields the report's sections read (:meth:`AggregateStore.report_runs`).

    Answers what a ``Run`` answers of them (its group, outcome, failure kind and
    metadata); ``versions`` and ``metadata`` are shared between runs, never to be changed.
    Read-only by contract, not frozen: a frozen dataclass sets each field through
    ``object.__setattr__``, five times the cost of making 100,000 of them (and with two
    dicts among its fields, it was never hashable).
    """

    id: str
    pack_id: str
    task_id: str
    harness: str
    harness_version: str | None
    model: str
    versions: dict[str, str]
    repeat: int
    status: RunStatus
    error: str | None
    failure_kind: FailureKind | None
    metadata: dict[str, Any]

    @property
    def infrastructure_failure(self) -> bool:
        """The run failed for infrastructure (as :attr:`Run.infrastructure_failure`)."""
        return self.failure_kind == FailureKind.INFRASTRUCTURE


# between the columns of a grade's pattern text (:meth:`AggregateStore.grade_columns`)
_SEP = "\x1f"
# grades read to learn the values of the patterns' columns (:meth:`_pattern_coding`)
_SAMPLE = 1_000
# the most values of one column the coding compares a row's value with
_MOST_VALUES = 64


def _pattern_parts() -> list[Any]:
    """A grade's low-variety columns, as text, in the order of its pattern text."""
    return [
        GradeRow.rubric_id,
        GradeRow.tier,
        GradeRow.rubric_hash,
        GradeRow.judge_key,
        GradeRow.status,
        cast(GradeRow.retryable, Text),
        cast(GradeRow.repeat, Text),
        GradeRow.rubric_version,
    ]


class _PatternCoding:
    """A pattern as one integer: each column's value's index in its known values, mixed radix.

    NULL in SQL where a column holds a value not known (then the row's text is read).
    """

    def __init__(self, domains: list[list[str]], radixes: list[int], *, wide: bool) -> None:
        self.domains = domains
        self.radixes = radixes
        self.weights = [math.prod(radixes[:c]) for c in range(len(radixes))]
        self.expression: Any = None
        for col, domain, weight in zip(_pattern_parts(), domains, self.weights, strict=True):
            digit = case({v: i * weight for i, v in enumerate(domain)}, value=col, else_=None)
            if self.expression is None:
                # wide: a 64-bit sum from the first digit (PostgreSQL's integer is 32 bits,
                # SQLite's 64)
                self.expression = cast(digit, BigInteger) if wide else digit
            else:
                self.expression = self.expression + digit

    def text(self, code: int) -> str:
        """The pattern text of a code (as the database writes it)."""
        return _SEP.join(
            domain[(code // weight) % radix]
            for domain, weight, radix in zip(self.domains, self.weights, self.radixes, strict=True)
        )


@lru_cache(maxsize=4096)
def _metadata(text: str | None) -> dict[str, Any]:
    # most runs' metadata is one of a few texts ("{}"): each decoded once
    return dict(orjson.loads(text)) if text else {}


class StepTally(NamedTuple):
    """A run's steps and tool calls, and whether the failure taxonomy must read its steps.

    ``suspect``: a step that may have failed, or a preview or deploy tool
    (:meth:`AggregateStore.failure_step_counts`). A tuple: one per run of 100,000.
    """

    steps: int
    tool_calls: int
    suspect: bool
