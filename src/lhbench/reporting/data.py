"""Everything a report reads, loaded once from the store, with stale judgements set apart.

By default a report uses only *current* judgements: grades and pairwise-judge votes made
with the current content of their rubric (the pack's newest registered version) and by
the current judges (the configured ``judge_panel``; without one, each judge model's most
recent settings). What it leaves out it counts, and every report says so ("12 grades for
rubric v1.0 excluded: the rubric changed since"). ``include_stale`` keeps everything.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from operator import attrgetter
from typing import Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray

from lhbench._gc import collector_paused
from lhbench.config import Settings
from lhbench.judges import PanelScoreTable, RunTierScore, TierKey, panel_score_table
from lhbench.schema import (
    ChapterGrade,
    ChapterRubricRecord,
    FailureKind,
    Grade,
    JudgeKind,
    JudgeLike,
    Label,
    PreferenceVote,
    Rubric,
    Run,
    StepView,
    Task,
    Trajectory,
    Verdict,
)
from lhbench.stats import PanelAgreement
from lhbench.store import (
    GradeColumns,
    JudgeName,
    LabelFact,
    ReportRun,
    StepTally,
    Store,
    VerdictDetail,
    VoteFact,
    group_key,
)

# a run as the report reads it: a model, or its lean fields (``from_store(lean=True)``)
AnyRun = Run | ReportRun
# a check label as the report reads it: a model, or its columns (``from_store(lean=True)``)
AnyLabel = Label | LabelFact
# a preference vote as the report reads it: a model, or its columns (what ``from_store`` reads)
AnyVote = PreferenceVote | VoteFact

__all__ = [
    "AnyLabel",
    "AnyRun",
    "AnyVote",
    "Exclusions",
    "ReportData",
    "configured_panel",
    "current_chapter_grades",
    "current_grade_columns",
    "current_grades",
    "current_votes",
    "group_label",
    "group_labeller",
    "label_is_stale",
    "label_outcomes",
    "outcome_labels",
]


class LabelLike(Protocol):
    """What deciding a run's outcome reads of a check label (a ``Label`` or a store fact)."""

    @property
    def run_id(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def passed(self) -> bool | None: ...


L = TypeVar("L", bound=LabelLike)


class JudgedLike(Protocol):
    """What deciding whether a judgement is current reads (a ``Grade`` or a stand-in)."""

    @property
    def run_id(self) -> str: ...
    @property
    def rubric_id(self) -> str: ...
    @property
    def rubric_version(self) -> str: ...
    @property
    def rubric_hash(self) -> str: ...
    @property
    def judge(self) -> JudgeLike: ...
    @property
    def created_at(self) -> datetime: ...


J = TypeVar("J", bound=JudgedLike)
V = TypeVar("V", bound=AnyVote)


def outcome_labels(labels: Iterable[L]) -> dict[str, L]:
    """Per run, the label that decides its outcome: a verify script's first, then other checks.

    The one precedence rule (report, web, Inspect export, AJ scores): only decided labels
    count, and figma-deploy (the app runs) is never the run's outcome.
    """
    # a stable sort on (not verify, source), done per distinct source (a few in 100,000
    # labels): each source's labels in input order, the sources in the key's order
    by_source: dict[str, list[L]] = {}
    for lab in labels:
        if lab.passed is not None:
            by_source.setdefault(lab.source, []).append(lab)
    best: dict[str, L] = {}
    for source in sorted(by_source, key=lambda s: (not s.startswith("verify"), s)):
        if source.startswith("figma-deploy:"):
            continue
        for lab in by_source[source]:
            best.setdefault(lab.run_id, lab)
    return best


def label_outcomes(labels: Iterable[LabelLike]) -> dict[str, bool | None]:
    """Every checked run (one with any label): its outcome, None when no check decided."""
    listed = list(labels)
    best = outcome_labels(listed)
    return {lab.run_id: (best[lab.run_id].passed if lab.run_id in best else None) for lab in listed}


def label_is_stale(source: str, check_hash: str | None, current: str | None) -> bool:
    """Whether a label was made by a verify script or check of a task whose content changed.

    A script's or hook check's label records its task's content hash (``check_hash``);
    ``current`` is the task's hash in its pack's current version (None: unknown).
    """
    scripted = source.startswith(("verify:", "check:"))
    return bool(scripted and check_hash and current and check_hash != current)


def configured_panel(settings: Settings) -> set[str] | None:
    """Judge config hashes of the configured ``judge_panel`` (None when none is configured)."""
    if not settings.judge_panel:
        return None
    from lhbench.judges import rubric_judge_identity
    from lhbench.models import resolve_model

    return {
        rubric_judge_identity(resolve_model(r, settings.models)).key for r in settings.judge_panel
    }


def group_label(run: AnyRun, by: Sequence[str]) -> str:
    """Human label of a run's group, e.g. ``claude-code / anthropic:opus / skill=v1``."""
    parts = []
    for key in by:
        value = group_key(run, key)
        name = key.removeprefix("versions.")
        bare = key in ("harness", "model", "task", "task_id", "pack", "pack_id")
        parts.append(f"{value}" if bare else f"{name}={value or '-'}")
    return " / ".join(parts)


# the run fields :func:`group_key` reads by name (``pack``/``task`` read ``pack_id``/``task_id``)
_RUN_FIELDS = {
    **{k: k for k in ("harness", "model", "harness_version", "pack_id", "task_id", "status")},
    "pack": "pack_id",
    "task": "task_id",
}


def _group_identity(by: Sequence[str]) -> Callable[[AnyRun], Hashable]:
    """What tells a run's group apart under ``by``: the raw values :func:`group_key` reads.

    Equal identities give equal labels, so a labeller formats each distinct one once; read
    with one ``attrgetter`` when ``by`` names only run fields (the usual harness, model).
    """
    if all(k in _RUN_FIELDS for k in by):
        return attrgetter(*(_RUN_FIELDS[k] for k in by)) if by else lambda run: ()
    return lambda run: tuple(group_key(run, k) for k in by)


def group_labeller(by: Sequence[str]) -> Callable[[AnyRun], str]:
    """:func:`group_label` over many runs, made once per distinct group (a few in 100,000)."""
    labels: dict[Hashable, str] = {}
    identity = _group_identity(by)

    def label(run: AnyRun) -> str:
        key = identity(run)
        found = labels.get(key)
        if found is None:
            found = labels[key] = group_label(run, by)
        return found

    return label


@dataclass
class Exclusions:
    """Judgements left out of the analysis, and why (counts per reason)."""

    stale_rubric: Counter[tuple[str, str]] = field(default_factory=Counter)
    stale_judge: Counter[str] = field(default_factory=Counter)
    not_in_panel: Counter[str] = field(default_factory=Counter)
    unknown_run: int = 0
    stale_votes: int = 0
    stale_vote_judge: Counter[str] = field(default_factory=Counter)
    stale_labels: int = 0
    # packs whose directory changed since they were registered (jobs.packs.refresh_packs)
    pack_changes: list[str] = field(default_factory=list)
    failed_votes: int = 0
    # runs that failed for infrastructure (run id -> why), and their judgements left out
    infra_runs: dict[str, str] = field(default_factory=dict)
    infra_judgements: int = 0
    # checks that could not run for infrastructure (no label; retried by `lhbench verify`)
    infra_labels: int = 0

    @property
    def total(self) -> int:
        """Grades excluded, all reasons."""
        return (
            sum(self.stale_rubric.values())
            + sum(self.stale_judge.values())
            + sum(self.not_in_panel.values())
            + self.unknown_run
        )

    def infra_note(self) -> str | None:
        """The sentence naming the runs left out because their infrastructure failed."""
        if not self.infra_runs:
            return None
        named = "; ".join(f"{r} ({why})" for r, why in sorted(self.infra_runs.items())[:10])
        more = len(self.infra_runs) - 10
        judged = (
            f" (and their {self.infra_judgements} grade(s), vote(s), verdict(s) and label(s))"
            if self.infra_judgements
            else ""
        )
        return (
            f"excludes {len(self.infra_runs)} run(s) that failed for infrastructure{judged}: "
            f"{named}{f'; and {more} more' if more > 0 else ''}. An infrastructure failure "
            "(model endpoint, package, browser, sandbox) is no score: these runs are in no "
            "leaderboard, pass rate, ablation, Elo pairing or grade (LH-Bench excludes them "
            "too); run them again."
        )

    def notes(self) -> list[str]:
        """One sentence per reason, for the report's header."""
        out = list(self.pack_changes)
        if (infra := self.infra_note()) is not None:
            out.append(infra[0].upper() + infra[1:])
        if self.infra_labels:
            out.append(
                f"{self.infra_labels} check(s) could not run for infrastructure (a package, "
                "browser or sandbox missing here): no label, in no pass rate; "
                "`lhbench verify` runs them again."
            )
        if self.stale_labels:
            out.append(
                f"{self.stale_labels} check label(s) excluded: made by a verify script or "
                "check of a task whose content changed since (`lhbench verify` checks the "
                "runs again; `--include-stale` keeps them)."
            )
        for (rubric, version), n in sorted(self.stale_rubric.items()):
            what = f"rubric {rubric} v{version}" if version else f"rubric {rubric}"
            out.append(
                f"{n} grade(s) for {what} excluded: made with content that is not the "
                "rubric's current one (`--include-stale` keeps them)."
            )
        for judge, n in sorted(self.stale_judge.items()):
            out.append(
                f"{n} grade(s) by {judge} excluded: made with earlier judge settings "
                "or prompt (`--include-stale` keeps them)."
            )
        for judge, n in sorted(self.not_in_panel.items()):
            out.append(f"{n} grade(s) by {judge} excluded: not in the configured judge_panel.")
        if self.unknown_run:
            out.append(f"{self.unknown_run} grade(s) excluded: their run is not in the store.")
        if self.stale_votes:
            out.append(
                f"{self.stale_votes} pairwise-judge vote(s) excluded: made with a rubric "
                "content that is not current."
            )
        for judge, n in sorted(self.stale_vote_judge.items()):
            out.append(
                f"{n} pairwise-judge vote(s) by {judge} excluded: made with earlier judge "
                "settings or prompt (`--include-stale` keeps them)."
            )
        if self.failed_votes:
            out.append(f"{self.failed_votes} pairwise-judge comparison(s) failed (not votes).")
        return out


def current_chapter_grades(
    grades: Iterable[ChapterGrade],
    runs: Mapping[str, AnyRun],
    rubric_hashes: dict[tuple[str, str], str],
    chapter_rubrics: Iterable[ChapterRubricRecord],
) -> tuple[list[ChapterGrade], int]:
    """Chapter grades made with the current rubrics, and how many were left out as stale.

    Current: a generic rubric's content in the pack's current version; a chapter's own
    rubric, the newest stored for (pack, task, chapter, scale) (``chapter_rubrics`` oldest
    first, as the store lists them). Grades of runs not in the store are left out too.
    """
    newest = {
        (r.pack_id, r.task_id, r.chapter_id, r.scale.value): r.rubric.content_hash
        for r in chapter_rubrics
    }
    keep, stale = [], 0
    for cg in grades:
        run = runs.get(cg.run_id)
        if run is None:
            stale += 1
            continue
        if cg.kind == "generic":
            current = rubric_hashes.get((run.pack_id, cg.grade.rubric_id))
        else:
            current = newest.get((run.pack_id, run.task_id, cg.chapter_id, cg.scale.value))
        if current is not None and cg.grade.rubric_hash != current:
            stale += 1
            continue
        keep.append(cg)
    return keep, stale


def current_grades(
    grades: Iterable[J],
    runs: Mapping[str, AnyRun],
    rubric_hashes: dict[tuple[str, str], str],
    library: dict[str, str],
    *,
    panel: set[str] | None = None,
) -> tuple[list[J], Exclusions]:
    """Grades made with the current rubric content by current judges, and what was left out.

    Args:
        grades: Every grade.
        runs: Runs by id.
        rubric_hashes: (pack id, rubric id) -> current content hash, per current pack.
        library: rubric id -> current content hash in any current pack (the rubric
            library, for a rubric graded on runs of another pack).
        panel: Judge config hashes that are current (the configured panel); None: each
            judge model's most recently used config.
    """
    ex = Exclusions()
    graded = list(grades)
    latest: dict[str, tuple[datetime, str]] = {}
    if panel is None:
        for g in graded:
            label = g.judge.label
            seen = latest.get(label)
            if seen is None or (g.created_at, g.judge.key) > seen:
                latest[label] = (g.created_at, g.judge.key)
    keep = []
    for g in graded:
        run = runs.get(g.run_id)
        if run is None:
            ex.unknown_run += 1
            continue
        current = rubric_hashes.get((run.pack_id, g.rubric_id)) or library.get(g.rubric_id)
        if current is not None and g.rubric_hash != current:
            ex.stale_rubric[(g.rubric_id, g.rubric_version)] += 1
            continue
        if panel is not None:
            if g.judge.key not in panel:
                ex.not_in_panel[g.judge.label] += 1
                continue
        elif latest[g.judge.label][1] != g.judge.key:
            ex.stale_judge[g.judge.label] += 1
            continue
        keep.append(g)
    return keep, ex


@dataclass(frozen=True)
class _Combo:
    """Stands for every grade of one judge config on one rubric content and tier in a pack."""

    run_id: str  # one of the grades' runs (of the pack, or not in the store)
    rubric_id: str
    rubric_version: str
    rubric_hash: str
    judge: JudgeName
    created_at: datetime  # the judge config's newest grade anywhere


def current_grade_columns(
    columns: GradeColumns,
    runs: Mapping[str, AnyRun],
    rubric_hashes: dict[tuple[str, str], str],
    library: dict[str, str],
    newest: dict[str, datetime],
    *,
    panel: set[str] | None = None,
) -> tuple[NDArray[np.bool_], Exclusions]:
    """:func:`current_grades` over grade columns: which grades are current, and what not.

    Whether a grade is current depends only on its run's pack, rubric content, tier and
    judge config (and the judge config's newest grade, ``newest``), so the rule is asked
    of one stand-in per combination and its answer, and exclusion counts, applied to
    all its grades (as the web overview does).
    """
    packs: dict[str | None, int] = {}
    run_pack = np.array(
        [
            packs.setdefault(run.pack_id if (run := runs.get(r)) else None, len(packs))
            for r in columns.run_ids
        ]
        or [0],
        dtype=np.int64,
    )
    pack_of = run_pack[columns.run] if len(columns) else np.zeros(0, dtype=np.int64)
    n_keys, n_judges = max(len(columns.keys), 1), max(len(columns.judges), 1)
    combo = (pack_of * n_keys + columns.key) * n_judges + columns.judge
    codes, first, inverse = np.unique(combo, return_index=True, return_inverse=True)
    counts = np.bincount(inverse.ravel(), minlength=codes.size)
    reps: list[_Combo] = []
    for at in first.tolist():
        rubric_id, version, _tier, rubric_hash = columns.keys[int(columns.key[at])]
        judge = columns.judges[int(columns.judge[at])]
        reps.append(
            _Combo(
                columns.run_ids[int(columns.run[at])],
                rubric_id,
                version,
                rubric_hash,
                judge,
                newest[judge.key],
            )
        )
    kept, _ = current_grades(reps, runs, rubric_hashes, library, panel=panel)
    current = {id(r) for r in kept}
    ex = Exclusions()
    # the combinations in the order their first grade comes (as the grades are read)
    for c in np.argsort(first, kind="stable").tolist():
        rep = reps[c]
        if id(rep) in current:
            continue
        n = int(counts[c])
        # the reason: asked alone, a stand-in is never stale by judge (it is its own latest)
        _, alone = current_grades([rep], runs, rubric_hashes, library, panel=panel)
        if alone.unknown_run:
            ex.unknown_run += n
        elif alone.stale_rubric:
            ex.stale_rubric[(rep.rubric_id, rep.rubric_version)] += n
        elif alone.not_in_panel:
            ex.not_in_panel[rep.judge.label] += n
        else:
            ex.stale_judge[rep.judge.label] += n
    keep = np.array([id(r) in current for r in reps] or [False], dtype=np.bool_)
    return keep[inverse.ravel()] if len(columns) else np.zeros(0, dtype=np.bool_), ex


def current_votes(
    votes: Iterable[V],
    runs: Mapping[str, AnyRun],
    rubric_hashes: dict[tuple[str, str], str],
    library: dict[str, str],
    ex: Exclusions,
) -> list[V]:
    """Votes made with the current rubric content by current pairwise judges.

    The rule grades follow (:func:`current_grades` without a panel): a pairwise judge's
    current configuration is its most recently used one (newest vote, failed ones
    included), so a vote made under earlier settings, prompt or endpoint is stale, and an
    LLM win rate never pools two configurations. Human votes are always current.
    Exclusions are counted in ``ex``.
    """
    listed = list(votes)
    latest: dict[str, tuple[datetime, str]] = {}
    for v in listed:
        if v.rater_kind != JudgeKind.HUMAN and v.judge_key:
            seen = latest.get(v.annotator)
            if seen is None or (v.created_at, v.judge_key) > seen:
                latest[v.annotator] = (v.created_at, v.judge_key)
    keep = []
    for v in listed:
        if v.status != "ok":
            continue
        if v.rater_kind == JudgeKind.HUMAN:
            keep.append(v)
            continue
        current = (
            None
            if v.rubric_id is None
            else library.get(v.rubric_id)
            if (run := runs.get(v.run_a)) is None
            else rubric_hashes.get((run.pack_id, v.rubric_id)) or library.get(v.rubric_id)
        )
        if current and v.rubric_hash != current:
            ex.stale_votes += 1
        elif v.judge_key and latest[v.annotator][1] != v.judge_key:
            ex.stale_vote_judge[v.annotator] += 1
        else:
            keep.append(v)
    return keep


def _infra_reason(run: AnyRun) -> str:
    """Why a run failed for infrastructure, in a few words."""
    first = (run.error or run.status.value).strip().splitlines()
    return (first[0] if first else run.status.value)[:120]


T = TypeVar("T")


class _Without:
    """Keeps what involves none of ``runs``; counts what it drops (``dropped``)."""

    def __init__(self, runs: Iterable[str]) -> None:
        self.runs = set(runs)
        self.dropped = 0

    def __call__(self, items: Iterable[T]) -> list[T]:
        if not self.runs:  # nothing to drop: no per-item look (a million grades)
            return list(items)
        out = []
        for item in items:
            ids = {getattr(item, a, None) for a in ("run_id", "run_a", "run_b")}
            if self.runs and ids & self.runs:
                self.dropped += 1
            else:
                out.append(item)
        return out


@dataclass
class ReportData:
    """Runs, judgements and pack metadata, indexed for the report sections.

    ``grades`` and ``votes`` hold the current judgements (all of them with
    ``include_stale``); ``all_grades`` everything stored, for health counts.
    """

    runs: dict[str, AnyRun]
    grades: list[Grade] = field(default_factory=list)
    votes: list[AnyVote] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    labels: list[AnyLabel] = field(default_factory=list)
    tasks: dict[tuple[str, str], Task] = field(default_factory=dict)
    rubrics: dict[tuple[str, str], Rubric] = field(default_factory=dict)
    load_trajectory: Callable[[str], Trajectory] | None = None
    # many runs' trajectories in their order, without a query per run (the store's)
    load_trajectories: Callable[[Sequence[str]], Iterator[Trajectory]] | None = None
    all_grades: list[Grade] = field(default_factory=list)
    excluded: Exclusions = field(default_factory=Exclusions)
    failed_votes: list[AnyVote] = field(default_factory=list)
    chapter_grades: list[ChapterGrade] = field(default_factory=list)
    stale_chapter_grades: int = 0
    # human votes on one chapter of two courses (programmatic content); never in ``votes``
    chapter_votes: list[AnyVote] = field(default_factory=list)
    # the lean load (``from_store(lean=True)``): every grade as columns, and which are
    # current; ``grades`` and ``all_grades`` left empty
    all_lean_grades: GradeColumns | None = None
    lean_current: NDArray[np.bool_] | None = None
    # the lean load: each run's steps that can hold an error (the store's), and step counts
    load_error_steps: Callable[[Sequence[str]], Iterator[tuple[str, list[StepView]]]] | None = None
    load_step_counts: Callable[[Sequence[str]], dict[str, StepTally]] | None = None
    # the lean load: verdicts as the AJ tables read them, ``verdicts`` left empty
    lean_verdicts: list[VerdictDetail] | None = None
    # each tier's panel agreement, once computed (leaderboard and agreement sections)
    agreements: dict[TierKey, tuple[PanelAgreement, bool]] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        runs: Iterable[AnyRun],
        *,
        grades: Iterable[Grade] = (),
        votes: Iterable[AnyVote] = (),
        verdicts: Iterable[Verdict] = (),
        labels: Iterable[AnyLabel] = (),
        tasks: Iterable[tuple[str, Task]] = (),
        rubrics: Iterable[Rubric] = (),
        trajectories: dict[str, Trajectory] | None = None,
    ) -> ReportData:
        """Assemble from plain lists (every grade kept); ``tasks`` are (pack id, task) pairs.

        Chapter-level votes go to ``chapter_votes``, the others to ``votes``.
        """
        every = list(runs)
        infra = {r.id: _infra_reason(r) for r in every if r.infrastructure_failure}
        keep = _Without(infra)
        grade_list = keep(grades)
        ok_votes = [v for v in keep(votes) if v.status == "ok"]
        verdict_list, label_list = keep(verdicts), keep(labels)
        data = cls(
            runs={r.id: r for r in every if r.id not in infra},
            grades=grade_list,
            all_grades=grade_list,
            votes=[v for v in ok_votes if v.chapter_id is None],
            chapter_votes=[
                v for v in ok_votes if v.chapter_id is not None and v.rater_kind == JudgeKind.HUMAN
            ],
            verdicts=verdict_list,
            labels=label_list,
            tasks={(pack_id, t.id): t for pack_id, t in tasks},
            rubrics={(r.id, r.version): r for r in rubrics},
            load_trajectory=(
                (lambda run_id: trajectories.get(run_id) or Trajectory(run_id=run_id))
                if trajectories is not None
                else None
            ),
        )
        data.excluded.infra_runs = infra
        data.excluded.infra_judgements = keep.dropped
        data.excluded.infra_labels = sum(
            1
            for lab in label_list
            if lab.passed is None and lab.failure_kind == FailureKind.INFRASTRUCTURE
        )
        return data

    @classmethod
    @collector_paused()  # hundreds of thousands of long-lived objects (see lhbench._gc)
    def from_store(
        cls,
        store: Store,
        *,
        include_stale: bool = False,
        panel: set[str] | None = None,
        check_packs: bool = True,
        graded: bool = True,
        lean: bool = False,
    ) -> ReportData:
        """Load what the report needs from ``store``.

        Args:
            store: The store.
            include_stale: Keep grades, votes and labels made with earlier rubric or
                check content or judge settings.
            panel: Judge config hashes of the configured panel (None: none configured).
            check_packs: First check every registered pack against its directory and
                re-register what changed (:func:`lhbench.jobs.packs.refresh_packs`; a
                stat of each file, hashed only when a stat changed), saying so in the
                notes, so an edited rubric or verify script is never read as current.
            graded: Load grades, votes and chapter grades. False: runs, verdicts and
                labels only (what the Agent-as-a-Judge tables read: ``aj score`` need not
                hold a team's million grades in memory).
            lean: Read grades as :class:`GradeFact` (columns and dimension scores, no
                document: what every report figure reads) into ``lean_grades`` and
                ``all_lean_grades``; ``grades`` and ``all_grades`` stay empty. Runs are
                read as :class:`ReportRun` and verdicts as :class:`VerdictDetail`
                (``lean_verdicts``; ``verdicts`` stays empty).
        """
        changes: list[str] = []
        if check_packs:
            from lhbench.jobs.packs import refresh_packs

            changes = [c.note for c in refresh_packs(store)]
        if lean and graded:
            # The database sorts the million grades (PostgreSQL in its own process, 2-3 s
            # before the first row at 100,000 runs; SQLite in its step call, which lets go
            # of the GIL): asked on a thread, while this one reads the runs, labels,
            # verdicts and votes.
            judges = {k: JudgeName(k, ident.label) for k, ident in store.judge_identities().items()}
            reader = ThreadPoolExecutor(1, thread_name_prefix="lhbench-grades")
            pending = reader.submit(store.grade_columns, judges)
            try:
                return cls._from_store(
                    store, changes, include_stale, panel, lean, graded, pending.result
                )
            finally:
                pending.cancel()
                reader.shutdown(wait=True)
        return cls._from_store(store, changes, include_stale, panel, lean, graded, None)

    @classmethod
    def _from_store(
        cls,
        store: Store,
        changes: list[str],
        include_stale: bool,
        panel: set[str] | None,
        lean: bool,
        graded: bool,
        grade_columns: Callable[[], GradeColumns] | None,
    ) -> ReportData:
        tasks: list[tuple[str, Task]] = []
        rubrics: list[Rubric] = []
        rubric_hashes: dict[tuple[str, str], str] = {}
        library: dict[str, str] = {}
        for pack_id, content_hash in store.current_packs().items():
            pack = store.get_pack(content_hash)
            tasks.extend((pack_id, t) for t in pack.tasks)
            for r in pack.rubrics:
                rubric_hashes[(pack_id, r.id)] = r.content_hash
                library.setdefault(r.id, r.content_hash)
        for _pack_id, _version, content_hash in store.list_pack_versions():
            rubrics.extend(store.get_pack(content_hash).rubrics)
        task_hashes = {(pack_id, t.id): t.content_hash for pack_id, t in tasks}
        # lean: the runs' fields and the verdicts' the sections read, no model per row
        runs: list[AnyRun] = list(store.report_runs() if lean else store.iter_runs())
        by_id = {r.id: r for r in runs}
        labels: list[AnyLabel] = []
        stale_labels = 0
        # lean: each label's columns (no detail, error or time: no section reads them)
        for lab in store.label_facts() if lean else store.list_labels():
            run = by_id.get(lab.run_id)
            current = task_hashes.get((run.pack_id, run.task_id)) if run else None
            if label_is_stale(lab.source, lab.check_hash, current):
                stale_labels += 1
                if not include_stale:
                    continue
            labels.append(lab)
        data = cls.build(
            runs,
            verdicts=() if lean else store.list_verdicts(),
            labels=labels,
            tasks=tasks,
            rubrics=rubrics,
        )
        data.load_trajectory = store.get_trajectory
        data.load_trajectories = store.iter_trajectories
        if lean:
            data.load_error_steps = store.iter_error_steps
            data.load_step_counts = store.failure_step_counts
            drop = _Without(data.excluded.infra_runs)
            data.lean_verdicts = drop(store.verdict_details())
            data.excluded.infra_judgements += drop.dropped
        if not graded:
            data.excluded.pack_changes = changes
            data.excluded.stale_labels = 0 if include_stale else stale_labels
            return data
        keep = _Without(data.excluded.infra_runs)
        # every vote in one read, as columns: those on whole runs in any state, and the
        # decided human ones on chapters (the two lists the report reads, oldest first)
        whole: list[AnyVote] = []
        chapter: list[AnyVote] = []
        for v in store.vote_facts(include_failed=True, chapter_level=None):
            if v.chapter_id is None:
                whole.append(v)
            elif v.status == "ok" and v.rater_kind == JudgeKind.HUMAN:
                chapter.append(v)
        all_votes = keep(whole)
        data.failed_votes = [v for v in all_votes if v.status != "ok"]
        ok_votes = [v for v in all_votes if v.status == "ok"]
        if lean:
            if grade_columns is None:
                judges = {
                    k: JudgeName(k, ident.label) for k, ident in store.judge_identities().items()
                }
                columns = store.grade_columns(judges)
            else:
                columns = grade_columns()
            infra = data.excluded.infra_runs
            if infra and len(columns):
                dropped = np.array([r in infra for r in columns.run_ids], dtype=np.bool_)
                out = dropped[columns.run]
                keep.dropped += int(out.sum())
                columns = columns.take(~out)
            data.all_lean_grades = columns
            data.lean_current = np.ones(len(columns), dtype=np.bool_)
        else:
            data.all_grades = keep(store.list_grades())
            data.grades = data.all_grades
        if include_stale:
            data.votes = ok_votes
        else:
            before = data.excluded
            if lean:
                newest = store.judge_last_graded(excluding=list(data.excluded.infra_runs))
                data.lean_current, data.excluded = current_grade_columns(
                    columns, data.runs, rubric_hashes, library, newest, panel=panel
                )
            else:
                data.grades, data.excluded = current_grades(
                    data.all_grades, data.runs, rubric_hashes, library, panel=panel
                )
            data.excluded.infra_runs = before.infra_runs
            data.excluded.infra_judgements = before.infra_judgements
            data.excluded.infra_labels = before.infra_labels
            data.votes = current_votes(
                [v for v in all_votes if v.chapter_id is None],
                data.runs,
                rubric_hashes,
                library,
                data.excluded,
            )
        data.excluded.failed_votes = len(data.failed_votes)
        data.excluded.pack_changes = changes
        if not include_stale:
            data.excluded.stale_labels = stale_labels
        data.chapter_grades = keep(store.list_chapter_grades())
        data.chapter_votes = keep(chapter)
        data.excluded.infra_judgements += keep.dropped
        if not include_stale:
            data.chapter_grades, data.stale_chapter_grades = current_chapter_grades(
                data.chapter_grades, data.runs, rubric_hashes, store.list_chapter_rubrics()
            )
        return data

    @cached_property
    def _columns(self) -> tuple[GradeColumns, GradeColumns, NDArray[np.bool_]]:
        if self.all_lean_grades is not None:
            every = self.all_lean_grades
            mask = self.lean_current
            if mask is None:
                mask = np.ones(len(every), dtype=np.bool_)
            return every.take(mask), every, mask
        every = GradeColumns.from_grades(self.all_grades)
        if self.grades is self.all_grades:
            return every, every, np.ones(len(every), dtype=np.bool_)
        current = {id(g) for g in self.grades}
        mask = np.array([id(g) in current for g in self.all_grades], dtype=np.bool_)
        if len(current) == int(mask.sum()):
            return every.take(mask), every, mask
        return GradeColumns.from_grades(self.grades), every, mask

    @property
    def grade_columns(self) -> GradeColumns:
        """The current grades as columns (what every report figure reads), oldest first."""
        return self._columns[0]

    @property
    def all_grade_columns(self) -> GradeColumns:
        """Every stored grade as columns (health counts)."""
        return self._columns[1]

    @property
    def current_mask(self) -> NDArray[np.bool_]:
        """Which of :attr:`all_grade_columns` are current."""
        return self._columns[2]

    @cached_property
    def columns_by_tier(self) -> dict[TierKey, GradeColumns]:
        """The current grades per rubric tier (:func:`tier_keys` order), oldest first."""
        return {TierKey(*k): c for k, c in self.grade_columns.by_key().items()}

    def panel_table(self, key: TierKey) -> PanelScoreTable:
        """One tier's panel scores as arrays (:func:`lhbench.judges.panel_score_table`), once."""
        if key not in self._panel_tables:
            self._panel_tables[key] = panel_score_table(
                self.columns_by_tier.get(key, GradeColumns.empty()), key
            )
        return self._panel_tables[key]

    def panel_scores(self, key: TierKey) -> dict[str, RunTierScore]:
        """Run id -> panel score on one tier (:func:`lhbench.judges.panel_scores`), once."""
        if key not in self._panel_scores:
            self._panel_scores[key] = self.panel_table(key).scores()
        return self._panel_scores[key]

    @cached_property
    def _panel_tables(self) -> dict[TierKey, PanelScoreTable]:
        return {}

    @cached_property
    def _panel_scores(self) -> dict[TierKey, dict[str, RunTierScore]]:
        return {}

    def group_labels(self, by: Sequence[str]) -> dict[str, str]:
        """Run id -> :func:`group_label`, computed once per grouping (every section asks)."""
        key = tuple(by)
        if key not in self._group_labels:
            label = group_labeller(by)
            self._group_labels[key] = {r.id: label(r) for r in self.runs.values()}
        return self._group_labels[key]

    @cached_property
    def _group_labels(self) -> dict[tuple[str, ...], dict[str, str]]:
        return {}

    def trajectories(self, run_ids: Sequence[str]) -> Iterator[Trajectory]:
        """The runs' trajectories in order (empty without a way to load them).

        From the store a slice of runs per query (:meth:`Store.iter_trajectories`), so a
        section that reads every run's steps costs a few queries, not one per run.
        """
        if self.load_trajectories is not None:
            yield from self.load_trajectories(run_ids)
        elif self.load_trajectory is not None:
            yield from map(self.load_trajectory, run_ids)

    def task_of(self, run: AnyRun) -> Task | None:
        """The task a run was on, if its pack is stored."""
        return self.tasks.get((run.pack_id, run.task_id))

    def rubric_for(self, rubric_id: str, version: str) -> Rubric | None:
        """A stored rubric by id and version."""
        return self.rubrics.get((rubric_id, version))

    @property
    def verdict_count(self) -> int:
        """Verdicts loaded (as models, or lean)."""
        return len(self.verdicts) if self.lean_verdicts is None else len(self.lean_verdicts)

    @cached_property
    def _label_index(self) -> dict[str, AnyLabel]:
        return outcome_labels(self.labels)

    @cached_property
    def outcomes(self) -> dict[str, bool | None]:
        """Run id -> :meth:`label_of`, for the runs a label decided (one lookup per run)."""
        return {run_id: lab.passed for run_id, lab in self._label_index.items()}

    def label_of(self, run_id: str) -> bool | None:
        """The run's ground-truth outcome: a verify-script label wins over other checks."""
        return self.outcomes.get(run_id)

    @cached_property
    def undecided_labels(self) -> dict[str, int]:
        """Runs whose checks could not decide, by source kind (shown, never counted)."""
        out: dict[str, int] = defaultdict(int)
        for lab in self.labels:
            if lab.passed is None and lab.run_id not in self._label_index:
                out[lab.source.split(":", 1)[0]] += 1
        return dict(out)
