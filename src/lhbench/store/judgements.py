"""Judgements in the store: grades, verdicts, preference votes, labels, and the response cache.

Every judgement has an identity (its ``key``). Jobs ask which keys are stored and whether
the stored result is final (:meth:`JudgementStore.grade_states` …), and write results in
batches; a result replaces a stored failure of the same key, never a stored success.

The response cache is read and written many keys at a time: a job looks up every request
it plans in one query per 500 keys (:meth:`JudgementStore.get_cached_responses`) and writes
the new responses in the same transaction as the results they produced (``cache=`` on
:meth:`JudgementStore.save_grades`, :meth:`~JudgementStore.save_votes`,
:meth:`~JudgementStore.save_verdicts`). Votes reach the Elo fit as integer columns
from one query (:meth:`JudgementStore.vote_columns`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import orjson
from sqlalchemy import Connection, and_, false, func, select
from sqlalchemy.orm import Session

from lhbench._codes import sorted_codes
from lhbench.schema import (
    DimensionScore,
    Grade,
    JudgeKind,
    Label,
    PreferenceVote,
    TierKind,
    Verdict,
    utcnow,
)
from lhbench.store.base import ResultState, StoreBase, chunks, matching
from lhbench.store.tables import (
    Base,
    GradeRow,
    LabelRow,
    ResponseCacheRow,
    RunRow,
    VerdictRow,
    VoteRow,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["CacheRow", "JudgementStore", "PanelGradeRow", "VoteColumns", "VoteFact"]


class CacheRow(Protocol):
    """A response to keep (``lhbench.models.CacheRow`` is one)."""

    @property
    def key(self) -> str:
        """The request key."""
        ...

    @property
    def model(self) -> str:
        """The model that answered."""
        ...

    @property
    def response(self) -> dict[str, Any]:
        """The response document."""
        ...


@dataclass(frozen=True)
class VoteColumns:
    """Decided votes as integer columns: ``runs[a[i]]`` against ``runs[b[i]]``, ``outcome[i]``.

    ``outcome`` is 0 when a won, 1 for a tie, 2 when b won; ``rater`` indexes ``raters``
    (the rater kinds) and ``task`` indexes ``tasks``.
    """

    runs: list[str]
    a: NDArray[np.int32]
    b: NDArray[np.int32]
    outcome: NDArray[np.int8]
    raters: list[str]
    rater: NDArray[np.int8]
    tasks: list[str]
    task: NDArray[np.int32]

    def __len__(self) -> int:
        return int(self.a.size)


class PanelGradeRow(NamedTuple):
    """One grade as plain values (:meth:`JudgementStore.panel_grade_rows`); cost 0 if unknown."""

    run_id: str
    judge_key: str
    repeat: int
    status: str
    tier_score: float | None
    input_tokens: int
    output_tokens: int
    cost_usd: float
    retryable: bool = False


def complete_runs(rows: Iterable[PanelGradeRow], per_run: int) -> set[str]:
    """Runs with ``per_run`` grades stored ok, none retryable: nothing to plan for them.

    The rule of :meth:`JudgementStore.grade_complete_runs`, on a panel's rows already read
    (:meth:`JudgementStore.panel_grade_rows`: only the panel's judges and repeats, each
    (run, judge, repeat) once, as the grade's key is unique). Two forms of one rule, kept
    side by side: with the rows in hand (``lhbench judge`` reads them for its figures) a
    count here costs a tenth of the GROUP BY; without them, reading them costs twice it.
    """
    counts: dict[str, int] = {}
    for r in rows:
        if r.status == "ok" and not r.retryable:
            counts[r.run_id] = counts.get(r.run_id, 0) + 1
    return {run for run, n in counts.items() if n == per_run}


class VoteFact(NamedTuple):
    """A stored vote's fields, named as :class:`PreferenceVote` names them, as a plain tuple.

    What the report reads of 20,000 votes, with no model validated per vote
    (:meth:`JudgementStore.vote_facts`); ``vote.to_model()`` gives the model.
    """

    id: str
    pack_id: str
    task_id: str
    run_a: str
    run_b: str
    left: str
    winner: str | None
    quality: int | None
    annotator: str
    rater_kind: JudgeKind
    status: str
    error: str | None
    retryable: bool
    rubric_id: str | None
    rubric_hash: str | None
    tier: TierKind | None
    judge_key: str | None
    chapter_id: str | None
    created_at: datetime

    def to_model(self) -> PreferenceVote:
        """The vote as a validated :class:`PreferenceVote`."""
        return PreferenceVote.model_validate(self._asdict())


# what a grade spent, read from its document
_SPENT_PATHS = ("usage.input_tokens", "usage.output_tokens", "cost_usd")


def _sqlite_panel_rows(
    batch: Sequence[Any], keys: dict[str, str], out: list[PanelGradeRow]
) -> None:
    """SQLite's rows of :meth:`JudgementStore.panel_grade_rows` as PanelGradeRows, into ``out``.

    The last column is SQLite's ``json_extract`` of the three spent paths, a JSON array of
    two ints and a number: split, not ``json.loads`` (a third of the rows' cost), in one
    loop with no call per row (a second at 400,000 rows).
    """
    make = PanelGradeRow
    append = out.append
    for run_id, judge_key, repeat, status, score, retryable, packed in batch:
        tokens_in, tokens_out, cost = packed[1:-1].split(",") if packed else _NO_SPENT
        append(
            make(
                run_id,
                keys[judge_key],
                int(repeat),
                status,
                None if score is None else float(score),
                0 if tokens_in == "null" else int(tokens_in),
                0 if tokens_out == "null" else int(tokens_out),
                0.0 if cost == "null" else float(cost),
                bool(retryable),
            )
        )


_NO_SPENT = ("null", "null", "null")
_OUTCOME = {"a": 0, "tie": 1, "b": 2}
# a plan up to this many keys is looked up by key (one IN query)
_STATE_CHUNK = 500


def dim_scores_text(scores: Iterable[DimensionScore]) -> str:
    """A grade's ``dim_scores`` column: ``[[dimension_id, scale, score], …]`` as compact JSON.

    Read back by :meth:`AggregateStore.grade_columns`; migration 0022 wrote the same
    for the grades stored before it.
    """
    return orjson.dumps([[s.dimension_id, s.scale.value, s.score] for s in scores]).decode()


def _grade_row(grade: Grade) -> dict[str, Any]:
    return {
        "id": grade.id,
        "key": grade.key,
        "run_id": grade.run_id,
        "rubric_id": grade.rubric_id,
        "rubric_version": grade.rubric_version,
        "rubric_hash": grade.rubric_hash,
        "tier": grade.tier.value,
        "judge_kind": grade.judge.kind.value,
        "judge_model": grade.judge.model,
        "judge_family": grade.judge.family,
        "judge_key": grade.judge.key,
        "status": grade.status.value,
        "retryable": grade.retryable,
        "tier_score": grade.tier_score,
        "repeat": grade.repeat,
        "document": grade.model_dump(mode="json"),
        "created_at": grade.created_at,
        "dim_scores": dim_scores_text(grade.scores),
    }


def _verdict_row(verdict: Verdict) -> dict[str, Any]:
    return {
        "id": verdict.id,
        "key": verdict.key,
        "run_id": verdict.run_id,
        "judge_kind": verdict.judge.kind.value,
        "judge_model": verdict.judge.model,
        "judge_key": verdict.judge.key,
        "verdict": verdict.verdict,
        "retryable": verdict.retryable,
        "repeat": verdict.repeat,
        "document": verdict.model_dump(mode="json"),
        "created_at": verdict.created_at,
    }


def _vote_row(vote: PreferenceVote) -> dict[str, Any]:
    row = vote.model_dump()
    row["rater_kind"] = vote.rater_kind.value
    row["tier"] = vote.tier.value if vote.tier is not None else None
    return row


# the vote columns in :class:`VoteFact`'s order
_VOTE_COLUMNS = tuple(getattr(VoteRow, name) for name in VoteFact._fields)
_RATER_KINDS = {k.value: k for k in JudgeKind}
_TIERS = {t.value: t for t in TierKind}


def _vote_fact(r: Sequence[Any]) -> VoteFact:
    (vid, pack, task, run_a, run_b, left, winner, quality, annotator, kind, status, error,
     retryable, rubric_id, rubric_hash, tier, judge_key, chapter_id, created_at) = r  # fmt: skip
    return VoteFact(
        vid,
        pack,
        task,
        run_a,
        run_b,
        left,
        winner,
        quality,
        annotator,
        _RATER_KINDS.get(kind) or JudgeKind(kind),
        status,
        error,
        bool(retryable),
        rubric_id,
        rubric_hash,
        None if tier is None else _TIERS.get(tier) or TierKind(tier),
        judge_key,
        chapter_id,
        created_at,
    )


class JudgementStore(StoreBase):
    """Grades, verdicts, votes, labels and cached model responses."""

    # grades ------------------------------------------------------------------------------

    def save_grades(self, grades: Sequence[Grade], *, cache: Sequence[CacheRow] = ()) -> int:
        """Write grades (and the responses they came from) in one transaction.

        A grade replaces a stored failure with the same key (a retry); a stored ok grade
        is kept (the same grade is written once). Returns how many grades were written.
        """
        return self._save_with_cache(
            GradeRow,
            [_grade_row(g) for g in grades],
            index="key",
            ok=GradeRow.status != "ok",
            cache=cache,
        )

    def save_grade(self, grade: Grade) -> bool:
        """Write one grade; False when an ok grade with its key is already stored."""
        return self.save_grades([grade]) == 1

    def grade_states(self, keys: Sequence[str]) -> dict[str, ResultState]:
        """Stored state of each grade key (keys not stored are absent)."""
        return self._states(GradeRow, keys)

    def grade_states_in(
        self,
        keys: Sequence[str],
        *,
        rubric_hash: str,
        tier: str,
        judge_keys: Sequence[str],
    ) -> dict[str, ResultState]:
        """:meth:`grade_states` of a job's keys, all of one rubric content, tier and panel.

        A job over 100,000 runs plans hundreds of thousands of keys: rather than one
        ``IN`` query per 500 of them, one query reads the states of every grade the
        panel gave on this rubric content and tier, and keeps the planned keys. A small
        plan (one chunk) is still looked up by key.
        """
        if len(keys) <= _STATE_CHUNK:
            return self.grade_states(keys)
        wanted = set(keys)
        tbl = GradeRow.__table__
        stmt = select(tbl.c.key, tbl.c.status, tbl.c.retryable).where(
            tbl.c.rubric_hash == rubric_hash,
            tbl.c.tier == tier,
            tbl.c.judge_key.in_(list(dict.fromkeys(judge_keys))),
        )
        out: dict[str, ResultState] = {}
        with self.engine.connect() as conn:
            for key, status, retryable in conn.execute(stmt):
                if key in wanted:
                    out[key] = (
                        "retryable" if retryable else "ok" if status == "ok" else "final_error"
                    )
        return out

    def has_grade(self, key: str) -> bool:
        """Whether a grade with this key is stored (in any state)."""
        return key in self.grade_states([key])

    def list_grades(
        self,
        *,
        run_id: str | None = None,
        rubric_id: str | None = None,
        tier: str | None = None,
        status: str | None = None,
        run_ids: Iterable[str] | None = None,
    ) -> list[Grade]:
        """Grades matching every filter given, oldest first."""
        conds = matching(
            (GradeRow.run_id, run_id),
            (GradeRow.rubric_id, rubric_id),
            (GradeRow.tier, tier),
            (GradeRow.status, status),
        )
        ids = None if run_ids is None else list(run_ids)
        out: list[Grade] = []
        with Session(self.engine) as s:
            for part in [None] if ids is None else chunks(ids):
                where = conds if part is None else [*conds, GradeRow.run_id.in_(part)]
                # the documents alone, a batch at a time: no ORM object per row held beside
                # its Grade (a team's store has a million grades)
                docs = s.scalars(
                    select(GradeRow.document)
                    .where(and_(True, *where))
                    .order_by(GradeRow.created_at, GradeRow.id)
                    .execution_options(yield_per=2000)
                )
                out.extend(Grade.model_validate(doc) for doc in docs)
        return out

    # verdicts ----------------------------------------------------------------------------

    def save_verdicts(self, verdicts: Sequence[Verdict], *, cache: Sequence[CacheRow] = ()) -> int:
        """Write verdicts (and their responses, one transaction); never over a stored verdict."""
        return self._save_with_cache(
            VerdictRow,
            [_verdict_row(v) for v in verdicts],
            index="key",
            ok=VerdictRow.verdict.is_(None),
            cache=cache,
        )

    def save_verdict(self, verdict: Verdict) -> bool:
        """Write one verdict; False when a decided verdict with its key is stored."""
        return self.save_verdicts([verdict]) == 1

    def verdict_states(self, keys: Sequence[str]) -> dict[str, ResultState]:
        """Stored state of each verdict key."""
        tbl = VerdictRow.__table__
        out: dict[str, ResultState] = {}
        with self.engine.connect() as conn:
            for part in chunks(list(dict.fromkeys(keys))):
                for key, value, retryable in conn.execute(
                    select(tbl.c.key, tbl.c.verdict, tbl.c.retryable).where(tbl.c.key.in_(part))
                ).all():
                    out[key] = (
                        "retryable" if retryable else "ok" if value is not None else "final_error"
                    )
        return out

    def list_verdicts(
        self, *, run_id: str | None = None, judge_kind: str | None = None
    ) -> list[Verdict]:
        """Verdicts matching the filters, oldest first."""
        conds = matching((VerdictRow.run_id, run_id), (VerdictRow.judge_kind, judge_kind))
        with Session(self.engine) as s:
            docs = s.scalars(
                select(VerdictRow.document)
                .where(and_(True, *conds))
                .order_by(VerdictRow.created_at, VerdictRow.id)
                .execution_options(yield_per=2000)
            )
            return [Verdict.model_validate(doc) for doc in docs]

    def set_verdict_failure_mode(self, verdict_id: str, mode: str) -> bool:
        """A reviewer's failure-mode tag on a verdict; False when there is no such verdict."""
        with Session(self.engine) as s, s.begin():
            row = s.get(VerdictRow, verdict_id)
            if row is None:
                return False
            row.document = {**row.document, "failure_mode": mode}
            return True

    # votes -------------------------------------------------------------------------------

    def save_votes(self, votes: Sequence[PreferenceVote], *, cache: Sequence[CacheRow] = ()) -> int:
        """Write votes (and their responses, one transaction); never over an ok vote."""
        return self._save_with_cache(
            VoteRow,
            [_vote_row(v) for v in votes],
            index="id",
            ok=VoteRow.status != "ok",
            cache=cache,
        )

    def save_vote(self, vote: PreferenceVote) -> bool:
        """Write one vote; False when an ok vote with this id is already stored."""
        return self.save_votes([vote]) == 1

    def vote_states(self, ids: Sequence[str]) -> dict[str, ResultState]:
        """Stored state of each vote id."""
        return self._states(VoteRow, ids, key_col="id")

    def list_votes(
        self,
        *,
        rater_kind: str | None = None,
        task_id: str | None = None,
        include_failed: bool = False,
        chapter_level: bool | None = False,
    ) -> list[PreferenceVote]:
        """Votes, oldest first; failed pairwise-judge votes only with ``include_failed``.

        ``chapter_level``: False (default) gives votes on whole runs, the arena's; True
        votes on one chapter of two courses; None both. As models (:meth:`vote_facts`
        reads the same votes as plain tuples).
        """
        return [
            v.to_model()
            for v in self.vote_facts(
                rater_kind=rater_kind,
                task_id=task_id,
                include_failed=include_failed,
                chapter_level=chapter_level,
            )
        ]

    def vote_facts(
        self,
        *,
        rater_kind: str | None = None,
        task_id: str | None = None,
        include_failed: bool = False,
        chapter_level: bool | None = False,
    ) -> list[VoteFact]:
        """:meth:`list_votes` as :class:`VoteFact` tuples: the columns, no model per vote."""
        conds = matching((VoteRow.rater_kind, rater_kind), (VoteRow.task_id, task_id))
        if not include_failed:
            conds.append(VoteRow.status == "ok")
        if chapter_level is not None:
            conds.append(
                VoteRow.chapter_id.is_not(None) if chapter_level else VoteRow.chapter_id.is_(None)
            )
        stmt = (
            select(*_VOTE_COLUMNS)
            .where(and_(True, *conds))
            .order_by(VoteRow.created_at, VoteRow.id)
        )
        with self.engine.connect() as conn:
            return [_vote_fact(r) for r in conn.execute(stmt)]

    def vote_columns(
        self,
        *,
        rater_kind: str | None = None,
        task_id: str | None = None,
        run_ids: Iterable[str] | None = None,
    ) -> VoteColumns:
        """Decided votes on whole runs as integer columns, from one query (what Elo reads).

        Failed comparisons (no winner) and chapter-level votes are left out; ``run_ids``
        keeps votes whose two runs are both among them.
        """
        tbl = VoteRow.__table__
        stmt = (
            select(tbl.c.run_a, tbl.c.run_b, tbl.c.winner, tbl.c.rater_kind, tbl.c.task_id)
            .where(tbl.c.status == "ok", tbl.c.winner.is_not(None), tbl.c.chapter_id.is_(None))
            .order_by(tbl.c.created_at, tbl.c.id)
        )
        if rater_kind is not None:
            stmt = stmt.where(tbl.c.rater_kind == rater_kind)
        if task_id is not None:
            stmt = stmt.where(tbl.c.task_id == task_id)
        import numpy as np  # only the Elo fit reads votes as columns; most commands never do

        with self.engine.connect() as conn:
            rows = conn.execute(stmt).all()
        keep = None if run_ids is None else set(run_ids)
        if keep is not None:
            rows = [r for r in rows if r[0] in keep and r[1] in keep]
        n = len(rows)
        if not n:
            empty32 = np.zeros(0, dtype=np.int32)
            empty8 = np.zeros(0, dtype=np.int8)
            return VoteColumns([], empty32, empty32, empty8, [], empty8, [], empty32)
        run_a, run_b, winner, rater, task = zip(*rows, strict=True)
        runs, codes = sorted_codes(run_a + run_b, np.int32)
        raters, rater_codes = sorted_codes(rater, np.int8)
        tasks, task_codes = sorted_codes(task, np.int32)
        outcome = np.fromiter((_OUTCOME.get(w, 1) for w in winner), dtype=np.int8, count=n)
        return VoteColumns(
            runs=runs,
            a=codes[:n],
            b=codes[n:],
            outcome=outcome,
            raters=raters,
            rater=rater_codes,
            tasks=tasks,
            task=task_codes,
        )

    # labels ------------------------------------------------------------------------------

    def save_labels(self, labels: Sequence[Label]) -> None:
        """Insert or replace labels (a re-run check replaces what it said before)."""
        if not labels:
            return
        rows = [lab.model_dump() for lab in labels]
        with Session(self.engine) as s, s.begin():
            for part in chunks(rows, 200):
                stmt = self._insert(LabelRow).values(list(part))
                stmt = stmt.on_conflict_do_update(
                    index_elements=["run_id", "source"],
                    set_={
                        k: stmt.excluded[k]
                        for k in (
                            "passed",
                            "detail",
                            "error",
                            "check_hash",
                            "created_at",
                            "failure_kind",
                        )
                    },
                )
                s.execute(stmt)

    def save_label(self, label: Label) -> None:
        """Insert or replace the label a source gave a run."""
        self.save_labels([label])

    def list_labels(
        self, *, run_id: str | None = None, run_ids: Iterable[str] | None = None
    ) -> list[Label]:
        """Labels, by run and source (undecided ones included: ``passed`` is None)."""
        stmt = select(LabelRow).order_by(LabelRow.run_id, LabelRow.source)
        if run_id is not None:
            stmt = stmt.where(LabelRow.run_id == run_id)
        ids = None if run_ids is None else list(run_ids)
        out: list[Label] = []
        with Session(self.engine) as s:
            for part in [None] if ids is None else chunks(ids):
                q = stmt if part is None else stmt.where(LabelRow.run_id.in_(part))
                out.extend(
                    Label(
                        run_id=r.run_id,
                        passed=r.passed,
                        source=r.source,
                        detail=r.detail,
                        error=r.error,
                        check_hash=r.check_hash,
                        created_at=r.created_at,
                        failure_kind=r.failure_kind,
                    )
                    for r in s.scalars(q).all()
                )
        return out

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

    def get_cached_responses(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The cached response of each key that has one: one query per 500 keys."""
        table = ResponseCacheRow.__table__
        out: dict[str, dict[str, Any]] = {}
        with self.engine.connect() as conn:
            for part in chunks(list(dict.fromkeys(keys))):
                for key, doc in conn.execute(
                    select(table.c.key, table.c.response).where(table.c.key.in_(part))
                ):
                    out[key] = dict(doc)
        return out

    def put_cached_responses(self, rows: Sequence[CacheRow]) -> int:
        """Keep many responses in one transaction (first write of a key wins)."""
        if not rows:
            return 0
        with self.engine.begin() as conn:
            return self._put_cache_in(conn, rows)

    def _put_cache_in(self, conn: Connection, rows: Sequence[CacheRow]) -> int:
        now = utcnow()
        docs = [
            {"key": r.key, "model": r.model, "response": r.response, "created_at": now}
            for r in rows
        ]
        stmt = (
            self._insert(ResponseCacheRow).on_conflict_do_nothing().returning(ResponseCacheRow.key)
        )
        # executemany with one compiled statement (SQLAlchemy batches it as multi-row
        # INSERTs): a quarter of the CPU of a new multi-VALUES statement per batch
        return len(conn.execute(stmt, docs).all())

    def _save_with_cache(
        self,
        table: type[Base],
        rows: list[dict[str, Any]],
        *,
        index: str,
        ok: Any,
        cache: Sequence[CacheRow],
    ) -> int:
        """Results (a stored ok is never replaced) and cache rows, in one transaction."""
        if not rows and not cache:
            return 0
        written = 0
        pk = next(iter(table.__table__.primary_key))
        with self.engine.begin() as conn:
            if rows:
                stmt = self._insert(table)
                cols = {k: stmt.excluded[k] for k in rows[0] if k != index}
                stmt = stmt.on_conflict_do_update(
                    index_elements=[index], set_=cols, where=ok
                ).returning(pk)
                written = len(conn.execute(stmt, rows).all())
            if cache:
                self._put_cache_in(conn, cache)
        return written

    def cached_response_count(self) -> int:
        """How many responses the cache holds."""
        with self.engine.connect() as conn:
            return int(
                conn.execute(select(func.count()).select_from(ResponseCacheRow.__table__)).scalar()
                or 0
            )

    # one panel's grades on one rubric content and tier, set-based (the grade job) ---------

    def grade_complete_runs(
        self, *, rubric_hash: str, tier: str, judge_keys: Sequence[str], repeats: int
    ) -> set[str]:
        """Runs whose every (judge, repeat) grade of a panel is stored ok on this content and tier.

        What a grade job need not plan, from one GROUP BY: a grade's key is derived from
        these columns (``grade_key(run, judge, rubric content, tier, repeat)``), so a run
        counted here holds every key the job would plan for it, each stored ok; no key is
        computed per stored grade. :func:`complete_runs` is the same rule on rows in hand.
        """
        judges = list(dict.fromkeys(judge_keys))
        if not judges or repeats < 1:
            return set()
        tbl = GradeRow.__table__
        stmt = (
            select(tbl.c.run_id)
            .where(
                tbl.c.rubric_hash == rubric_hash,
                tbl.c.tier == tier,
                tbl.c.judge_key.in_(judges),
                tbl.c.repeat >= 0,
                tbl.c.repeat < repeats,
                tbl.c.status == "ok",
                tbl.c.retryable == false(),
            )
            .group_by(tbl.c.run_id)
            .having(func.count() == len(judges) * repeats)
        )
        with self.engine.connect() as conn:
            return set(conn.execute(stmt).scalars())

    def panel_grade_rows(
        self,
        *,
        rubric_id: str,
        rubric_hash: str,
        tier: str,
        judge_keys: Sequence[str],
        repeats: int,
        pack_id: str | None = None,
    ) -> list[PanelGradeRow]:
        """A panel's grades on one rubric content and tier as plain rows, no document validated.

        Each row: run id, judge key, repeat, status, tier score, input and output tokens,
        cost (these three read from the document in SQL: one JSON parse per row on
        SQLite) and whether it is retryable. What ``lhbench judge`` prints of 300,000
        grades, in seconds and megabytes rather than minutes and gigabytes of ``Grade``
        objects. ``pack_id``: only the
        grades of that pack's runs.
        """
        judges = list(dict.fromkeys(judge_keys))
        if not judges or repeats < 1:
            return []
        tbl = GradeRow.__table__
        doc = GradeRow.document
        sqlite = self.engine.dialect.name == "sqlite"
        # SQLite parses the document once per json_extract: one call with the three paths
        spent: list[Any] = (
            [func.json_extract(tbl.c.document, *(f"$.{p}" for p in _SPENT_PATHS))]
            if sqlite
            else [
                doc["usage"]["input_tokens"].as_integer(),
                doc["usage"]["output_tokens"].as_integer(),
                doc["cost_usd"].as_float(),
            ]
        )
        conds = [
            tbl.c.rubric_id == rubric_id,
            tbl.c.rubric_hash == rubric_hash,
            tbl.c.tier == tier,
            tbl.c.judge_key.in_(judges),
            tbl.c.repeat >= 0,
            tbl.c.repeat < repeats,
        ]
        if pack_id is not None:  # another pack's runs graded on the same rubric: not read
            runs = RunRow.__table__
            conds.append(tbl.c.run_id.in_(select(runs.c.id).where(runs.c.pack_id == pack_id)))
        stmt = select(
            tbl.c.run_id,
            tbl.c.judge_key,
            tbl.c.repeat,
            tbl.c.status,
            tbl.c.tier_score,
            tbl.c.retryable,
            *spent,
        ).where(*conds)
        keys = {k: k for k in judges}  # one copy of each judge key, not one per row
        out: list[PanelGradeRow] = []
        # plain tuples from the driver: text, numbers and casts need no type conversion,
        # and SQLAlchemy's per-row objects cost more than the query at 400,000 rows
        sql = str(stmt.compile(self.engine, compile_kwargs={"literal_binds": True}))
        with self.engine.connect() as conn:
            cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
            try:
                cursor.execute(sql)
                while batch := cursor.fetchmany(20_000):
                    if sqlite:
                        _sqlite_panel_rows(batch, keys, out)
                        continue
                    for row in batch:
                        tokens_in, tokens_out, cost = row[6:9]
                        score = row[4]
                        out.append(
                            PanelGradeRow(
                                row[0],
                                keys[row[1]],
                                int(row[2]),
                                row[3],
                                None if score is None else float(score),
                                int(tokens_in or 0),
                                int(tokens_out or 0),
                                float(cost or 0.0),
                                bool(row[5]),
                            )
                        )
            finally:
                cursor.close()
        return out
