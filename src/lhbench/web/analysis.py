"""The overview's figures per agent, from the store's SQL aggregates.

One row per agent (harness, model and version tags by default): the weighted tier score
of each rubric tier with its task-bootstrap CI, the check pass rate with its Wilson CI,
the human Bradley–Terry Elo with its bootstrap CI, how often the agent judge's verdicts
agree with the checks, the judges' noise floor on the agent's runs, cost and tokens.

These are the report's figures, computed by the report's code: each agent's leaderboard
row per tier is :func:`lhbench.reporting.leaderboard_row` (mean, CI, n, tasks, judge
means, variance, incomplete panel) and its pass rate :func:`lhbench.reporting.pass_rate_row`,
fed with per-run panel scores from :func:`lhbench.judges.panel_score` and outcomes from
:func:`lhbench.reporting.label_outcomes`. Only the inputs differ: per-(run, judge) sums
that the database aggregates instead of every grade document, which is what makes the
first request at 10,000 runs take a fraction of a second. Reused as well: the
current-vs-stale policy (:func:`lhbench.reporting.current_grades`, asked once per distinct
rubric content × judge; :func:`lhbench.reporting.label_is_stale` for check labels), group
labels, judge names, the noise floor's unit (:func:`lhbench.judges.repeat_sd`) and the Elo
code. ``tests/web/test_analysis.py`` checks every row against the report's on one store.
"""

from __future__ import annotations

import gc
import math
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from itertools import repeat
from operator import attrgetter, methodcaller
from typing import Any
from urllib.parse import urlencode

import numpy as np

from lhbench._gc import collector_paused
from lhbench.judges import PanelScoreTable, RunTierScore, TierKey, panel_score, repeat_sd
from lhbench.reporting import (
    Exclusions,
    LeaderboardRow,
    PassRateRow,
    current_grades,
    group_label,
    label_is_stale,
    label_outcomes,
    leaderboard_notes,
    leaderboard_row,
    pass_rate_row,
)
from lhbench.schema import (
    FailureKind,
    Grade,
    GradeStatus,
    JudgeIdentity,
    JudgeKind,
    Run,
    RunStatus,
    Task,
    TierKind,
    judge_labels,
)
from lhbench.stats import EloResult, bradley_terry_elo, proportion
from lhbench.stats.elo import VoteArrays
from lhbench.store import GradeCombo, LabelFact, RunFact, Store, StoreChanges, VerdictFact
from lhbench.store.aggregates import (
    CELL_GRADES,
    CELL_PARSE,
    CELL_SCORED,
    CELL_TOTAL,
    CELL_TOTAL_SQ,
)
from lhbench.web.cells import GradeCells, Part, TierScores

__all__ = [
    "AgentRow",
    "Analysis",
    "Estimate",
    "Front",
    "SavedSummary",
    "analyse",
    "default_group_by",
    "grade_is_current",
    "pack_tasks",
    "parse_group_by",
    "rank_by_ci",
    "refresh",
    "settle_heap",
    "sort_agents",
]

BASE_KEYS = ("harness", "model")
_KEY = re.compile(r"^[A-Za-z0-9_.\-]{1,60}$")


@dataclass(frozen=True)
class Estimate:
    """A figure with its 95% interval; ``n`` what it is over (runs, checks, games)."""

    value: float
    lo: float
    hi: float
    n: int
    k: int | None = None


@dataclass
class AgentRow:
    """Everything the overview shows about one agent (a group of runs).

    ``leaderboard`` and ``passes`` are the report's rows for this agent (its leaderboard
    row per tier, its pass-rate row); ``scores`` and ``pass_rate`` show them as estimates.
    """

    label: str
    harness: str | None
    model: str | None
    versions: dict[str, str]
    run_ids: list[str]
    tasks: int
    leaderboard: dict[TierKey, LeaderboardRow] = field(default_factory=dict)
    passes: PassRateRow | None = None
    elo: Estimate | None = None
    aj: Estimate | None = None
    noise: float | None = None
    noise_cells: int = 0
    cost_total: float | None = None
    cost_per_run: float | None = None
    tokens_per_run: tuple[float, float] | None = None
    rank: int | None = None
    tied: bool = False
    # how many runs ``run_ids`` holds (kept when a saved overview leaves the ids out)
    n_runs: int = 0

    @property
    def scores(self) -> dict[TierKey, Estimate]:
        """Each tier's mean panel score with its CI (the leaderboard row, as an estimate)."""
        return {k: Estimate(r.mean, r.ci[0], r.ci[1], r.n) for k, r in self.leaderboard.items()}

    @property
    def pass_rate(self) -> Estimate | None:
        """The pass rate with its Wilson CI (None when no check decided a run)."""
        p = self.passes
        if p is None or p.n == 0:
            return None
        return Estimate(p.rate, p.ci[0], p.ci[1], p.n, p.passed)

    @property
    def undecided(self) -> int:
        """Checked runs no check could decide."""
        return self.passes.undecided if self.passes else 0

    def runs_query(self) -> str:
        """The runs page's filters that list this agent's runs."""
        params = {"harness": self.harness or "", "model": self.model or ""}
        tags = ",".join(f"{k}={v}" for k, v in self.versions.items() if v != "-")
        if tags:
            params["versions"] = tags
        return urlencode({k: v for k, v in params.items() if v})


@dataclass
class Front:
    """What the overview shows of an analysis, and what a run page reads of it.

    Small (a row per agent, the current rubric and judge combinations, judge names), so
    it is saved beside the store's version (:mod:`lhbench.web.front`) and a restarted
    server answers its first overview from it while the per-run summary is made.
    """

    by: tuple[str, ...]
    runs: int
    tasks: int
    verdicts: int
    grades_total: int
    grades_used: int
    votes: int
    notes: list[str]
    tier_keys: list[TierKey]
    tier_runs: list[int]
    tier_notes: list[list[str]]
    agents: list[AgentRow]
    current: set[tuple[str, str, str, str, str, str]]
    judge_names: dict[str, str]

    def default_tier(self) -> TierKey | None:
        """The tier with the most scored runs (as :meth:`Analysis.default_tier`)."""
        if not self.tier_keys:
            return None
        runs = dict(zip(self.tier_keys, self.tier_runs, strict=True))
        return max(self.tier_keys, key=lambda k: runs[k])


@dataclass
class Analysis:
    """The store, summarised for the overview, per-task, runs and compare pages."""

    by: tuple[str, ...]
    runs: dict[str, RunFact]
    tasks: dict[tuple[str, str], Task]
    tier_keys: list[TierKey]
    scores: dict[TierKey, Mapping[str, RunTierScore]]
    labels: dict[str, bool | None]
    verdicts: dict[str, list[VerdictFact]]
    excluded: Exclusions
    current: set[tuple[str, str, str, str, str, str]]
    agents: list[AgentRow]
    agent_of: dict[str, str]
    elo: EloResult | None
    tier_notes: dict[TierKey, list[str]]
    judge_names: dict[str, str]
    grades_total: int
    grades_used: int
    votes: int
    parse_errors: int
    # what it was asked with, and what :func:`refresh` updates it from
    by_asked: tuple[str, ...] | None = field(default=None, repr=False, compare=False)
    panel: set[str] | None = field(default=None, repr=False, compare=False)
    _summary: _Summary | None = field(default=None, repr=False, compare=False)
    # the runs page's filter options, counted over every run once per analysis
    _options: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def task_count(self) -> int:
        """Distinct (pack, task) of the runs (counted once, not on every warm request)."""
        return len({(r.pack_id, r.task_id) for r in self.runs.values()})

    @cached_property
    def verdict_count(self) -> int:
        """Binary verdicts on the runs."""
        return sum(len(vs) for vs in self.verdicts.values())

    @cached_property
    def front(self) -> Front:
        """What the overview shows (made once per analysis; the rows without run ids)."""
        return Front(
            by=self.by,
            runs=len(self.runs),
            tasks=self.task_count,
            verdicts=self.verdict_count,
            grades_total=self.grades_total,
            grades_used=self.grades_used,
            votes=self.votes,
            notes=self.excluded.notes(),
            tier_keys=list(self.tier_keys),
            tier_runs=[len(self.scores[k]) for k in self.tier_keys],
            tier_notes=[list(self.tier_notes.get(k, [])) for k in self.tier_keys],
            agents=[replace(r, run_ids=[]) for r in self.agents],
            current=set(self.current),
            judge_names=dict(self.judge_names),
        )

    def agent(self, label: str) -> AgentRow | None:
        """The row of an agent by its label."""
        return next((a for a in self.agents if a.label == label), None)

    def is_current(self, pack_id: str, grade: Grade) -> bool:
        """Whether a stored grade of a run of ``pack_id`` counts (current rubric and judge)."""
        return grade_is_current(self.current, pack_id, grade)

    def values(self, attr: str) -> list[str]:
        """Distinct values of a run attribute (pack_id, task_id, harness, model, status)."""
        if attr not in self._options:
            self._options[attr] = sorted({str(getattr(r, attr)) for r in self.runs.values()})
        return list(self._options[attr])

    def version_values(self) -> dict[str, list[str]]:
        """Every version key with its values."""
        if " versions" not in self._options:
            out: dict[str, set[str]] = defaultdict(set)
            for r in self.runs.values():
                for k, v in r.versions.items():
                    out[k].add(v)
            self._options[" versions"] = {k: sorted(v) for k, v in sorted(out.items())}
        return {k: list(v) for k, v in self._options[" versions"].items()}

    def default_tier(self) -> TierKey | None:
        """The tier with the most scored runs (never one that holds only failures)."""
        if not self.tier_keys:
            return None
        return max(self.tier_keys, key=lambda k: len(self.scores[k]))


def grade_is_current(
    current: set[tuple[str, str, str, str, str, str]], pack_id: str, grade: Grade
) -> bool:
    """Whether a stored grade of a run of ``pack_id`` is of one of the ``current`` combinations.

    A combination: pack, rubric id, version and content hash, tier, judge key.
    """
    return (
        pack_id,
        grade.rubric_id,
        grade.rubric_version,
        grade.rubric_hash,
        grade.tier.value,
        grade.judge.key,
    ) in current


_ID = attrgetter("id")


def default_group_by(runs: Sequence[RunFact]) -> tuple[str, ...]:
    """harness, model, and every version key the runs carry."""
    keys = sorted(set().union(*map(attrgetter("versions"), runs)))
    return (*BASE_KEYS, *(f"versions.{k}" for k in keys))


def parse_group_by(text: str | None) -> tuple[str, ...] | None:
    """``harness,model,versions.skill`` as keys (None for the default, or if malformed)."""
    if not text:
        return None
    keys = tuple(k.strip() for k in text.split(",") if k.strip())
    if not keys or len(keys) > 6 or not all(_KEY.match(k) for k in keys):
        return None
    return keys


def rank_by_ci(cis: Sequence[tuple[float, float] | None]) -> list[int | None]:
    """Chatbot Arena's rank: 1 + how many others' CIs lie wholly above this one's.

    Two agents get the same rank when no CI separates them from the same set above.
    """
    out: list[int | None] = []
    for ci in cis:
        if ci is None or math.isnan(ci[1]):
            out.append(None)
            continue
        out.append(1 + sum(1 for o in cis if o is not None and o is not ci and o[0] > ci[1]))
    return out


def _pack_metadata(
    store: Store,
) -> tuple[dict[tuple[str, str], str], dict[str, str], dict[tuple[str, str], Task]]:
    """Current rubric hashes per (pack, rubric), the rubric library, and current tasks."""
    rubric_hashes: dict[tuple[str, str], str] = {}
    library: dict[str, str] = {}
    tasks: dict[tuple[str, str], Task] = {}
    for pack_id, content_hash in store.current_packs().items():
        pack = store.get_pack(content_hash)
        for t in pack.tasks:
            tasks[(pack_id, t.id)] = t
        for r in pack.rubrics:
            rubric_hashes[(pack_id, r.id)] = r.content_hash
            library.setdefault(r.id, r.content_hash)
    return rubric_hashes, library, tasks


def pack_tasks(store: Store) -> dict[tuple[str, str], Task]:
    """Every current pack's tasks by (pack, task)."""
    return _pack_metadata(store)[2]


Combo = tuple[str, str, str, str, str, str]


def _current_combos(
    combos: Sequence[GradeCombo],
    identities: dict[str, JudgeIdentity],
    rubric_hashes: dict[tuple[str, str], str],
    library: dict[str, str],
    panel: set[str] | None,
) -> tuple[set[Combo], Exclusions]:
    """Which (pack, rubric, version, content, tier, judge) combinations are current.

    The report's policy is applied to one representative grade per combination (at its
    newest time), and each exclusion is counted for every grade of the combination.
    """
    ex = Exclusions()
    known = [c for c in combos if c.pack_id is not None]
    ex.unknown_run = sum(c.grades for c in combos if c.pack_id is None)
    packs = {str(c.pack_id) for c in known}
    # stand-ins for the runs of each pack: the policy reads only the pack id
    rep_runs = {
        f"pack:{p}": Run.model_construct(
            id=f"pack:{p}", pack_id=p, task_id="", harness="", model=""
        )
        for p in packs
    }
    reps: dict[str, GradeCombo] = {}
    grades = []
    for i, c in enumerate(known):
        ident = identities.get(c.judge_key) or JudgeIdentity(kind=JudgeKind.LLM, model="unknown")
        key = f"combo-{i}"
        reps[key] = c
        grades.append(
            Grade.model_construct(
                id=key,
                run_id=f"pack:{c.pack_id}",
                rubric_id=c.rubric_id,
                rubric_version=c.rubric_version,
                rubric_hash=c.rubric_hash,
                tier=TierKind(c.tier),
                judge=ident,
                status=GradeStatus.OK,
                scores=[],
                key=key,
                created_at=c.last_at,
            )
        )
    kept, _ = current_grades(grades, rep_runs, rubric_hashes, library, panel=panel)
    kept_keys = {g.key for g in kept}
    for g in grades:
        if g.key in kept_keys:
            continue
        n = reps[g.key].grades
        # the reason: asked alone, a grade is never stale by judge (it is its own latest)
        _, alone = current_grades([g], rep_runs, rubric_hashes, library, panel=panel)
        if alone.stale_rubric:
            ex.stale_rubric[(g.rubric_id, g.rubric_version)] += n
        elif alone.not_in_panel:
            ex.not_in_panel[g.judge.label] += n
        else:
            ex.stale_judge[g.judge.label] += n
    current = {
        (str(c.pack_id), c.rubric_id, c.rubric_version, c.rubric_hash, c.tier, c.judge_key)
        for k, c in reps.items()
        if k in kept_keys
    }
    return current, ex


def _group_column(facts: Sequence[RunFact], key: str) -> list[object]:
    """Per run, the column :func:`lhbench.store.runs.group_key` reads for ``key``."""
    if key in ("harness", "model", "harness_version", "pack_id", "task_id", "status"):
        return list(map(attrgetter(key), facts))
    if key in ("pack", "task"):
        return list(map(attrgetter(f"{key}_id"), facts))
    name = key.removeprefix("versions.")
    return list(map(methodcaller("get", name), map(attrgetter("versions"), facts)))


def _infra_reasons(store: Store, infra: Sequence[RunFact]) -> dict[str, str]:
    """Each infrastructure-failed run's first error line (the first 50 read; then status)."""
    out = {}
    for i, fact in enumerate(infra):
        run = store.find_run(fact.id) if i < 50 else None
        first = ((run.error if run else None) or fact.status).strip().splitlines()
        out[fact.id] = (first[0] if first else fact.status)[:120]
    return out


# the collector paused for a summary (nested and across threads: see lhbench._gc).
# Summarising 10,000 runs allocates a few hundred thousand small objects and no cycles;
# the collections they trigger walk the whole heap and cost about a third of the work
gc_paused = collector_paused


@dataclass
class SavedSummary:
    """What a full summary read of the store, at a change-log ``mark``.

    The grade cells (the database's sums over every grade, most of a full summary's time
    at 1,000,000 grades) and combination counts, kept per run as :class:`_Summary` holds
    them, and the run, label and verdict facts it read (at 100,000 runs, half a second of
    a restarted server's summary to read again). A restarted server loads it
    (:mod:`lhbench.web.front`) instead of reading them again, and brings it up to date
    with the change log as a running server does: a write of grades, labels or verdicts
    names its runs there, and any write of runs, packs, tasks or rubrics makes the saved
    summary unusable (:func:`_from_saved`).
    """

    mark: int
    # per run, (rubric id, version, content hash, tier, judge config) -> the cell's sums
    cells: GradeCells
    # (run's pack or None, rubric id, version, content hash, tier, judge) -> grades
    combo_counts: dict[tuple[str | None, str, str, str, str, str], int]
    # judge config -> its newest grade's time
    newest: dict[str, datetime]
    # every run's facts (Store.run_facts), every label's and every verdict's, as read
    runs: list[RunFact]
    labels: list[LabelFact]
    verdicts: list[VerdictFact]
    # the overview's saved front, valid at change-log mark ``front_mark``: its agent rows
    # are the rows a summary at that mark computes (used when the update ends there)
    front: Front | None = None
    front_mark: int = -1


def analyse(
    store: Store,
    *,
    by: Sequence[str] | None = None,
    panel: set[str] | None = None,
    load: Callable[[], SavedSummary | None] | None = None,
    save: Callable[[SavedSummary], None] | None = None,
) -> Analysis:
    """Summarise the store for the pages.

    ``by`` are the keys that make an agent (default: harness, model and every version key).
    ``load`` gives what a summary saved at an earlier mark, used when the change log still
    says what was written since (else ignored); ``save`` is given what a summary made from
    the store read (:class:`SavedSummary`), before anything can change it.
    """
    settle_heap()
    with gc_paused():
        # loaded with the collector off: its 100,000s of facts would trigger collections
        # that walk the whole heap (2.6 s instead of 0.4 s at 100,000 runs)
        saved = load() if load is not None else None
        summary = _from_saved(store, by, panel, saved) if saved is not None else None
        if summary is None:
            summary = _Summary.full(store, by=by, panel=panel, save=save)
        out = summary.analysis()
        # the summary lives until the next write and holds no cycles: out of the
        # collector's way, or the requests after it pay for walking it (see settle_heap).
        # Frozen before the collector is back: the allocations counted while it was off
        # would start a full collection of them at once (0.1 s, the interpreter held)
        gc.freeze()
    # a log the summary no longer needs is cut (other readers then summarise again)
    store.trim_changes(summary.mark)
    return out


def _from_saved(
    store: Store, by: Sequence[str] | None, panel: set[str] | None, saved: SavedSummary
) -> _Summary | None:
    """A summary from a saved one, updated as :func:`refresh` would (None: unusable)."""
    # a log behind the saved mark: this database is not where the file was read (restored)
    if store.change_mark() < saved.mark:
        return None
    changes = store.changes_since(saved.mark)
    if changes.whole - {"votes"} or changes.trimmed > saved.mark:
        return None
    front = saved.front if saved.front_mark == changes.mark else None
    summary = _Summary.full(store, by=by, panel=panel, saved=saved, front=front)
    if not changes.runs and changes.mark == saved.mark:
        return summary
    # rows from the front are already those at the mark the update ends at
    return summary.update(store, changes, rows=not summary.rows_saved)


def refresh(store: Store, previous: Analysis) -> Analysis:
    """``previous`` brought up to date with what the store's change log says was written.

    A write of grades, labels or verdicts costs the work of the runs written to: their
    cells are read again and their agents' rows recomputed; votes recompute the Elo. The
    result is the one :func:`analyse` would give (``tests/web/test_incremental.py``
    checks it after random writes). Anything else (runs, packs, a new judge or tier, a
    judge config turning stale) summarises the whole store again.
    """
    summary = previous._summary
    if summary is None:
        return analyse(store, by=previous.by_asked, panel=previous.panel)
    changes = store.changes_since(summary.mark)
    if changes.whole - {"votes"} or changes.trimmed > summary.mark:
        return analyse(store, by=previous.by_asked, panel=previous.panel)
    with gc_paused():
        # the old summary may be half-updated when this fails or gives up: never reused
        previous._summary = None
        updated = summary.update(store, changes)
        out = updated.analysis() if updated is not None else None
        if out is not None:
            gc.freeze()  # before the collector is back (see analyse)
    if out is None:
        return analyse(store, by=previous.by_asked, panel=previous.panel)
    return out


def settle_heap() -> None:
    """Give the collector back every object frozen by an earlier analysis, and collect.

    An analysis of 100,000 runs leaves millions of long-lived objects. Left in the
    collector's generations, the first collections after it walk them all, in whichever
    warm request triggers them (the overview's warm p95 was 659 ms at 100,000 runs against
    a 10 ms median). :func:`analyse` freezes them instead (``gc.freeze``: never walked,
    still freed by reference counting). Cycles that were alive at a freeze and died since
    are garbage no collection would see, so each analysis first unfreezes and collects,
    once, in the request that computes it, after the page cache dropped the old figures.
    """
    # with nothing frozen (a process's first analysis) the collector missed nothing: a
    # collection would only walk every imported module (0.3 s at a restarted server)
    if gc.get_freeze_count():
        gc.unfreeze()
        gc.collect()


_Part = Part
# a combination: the run's pack (None for grades of unknown runs) and the cell's part
_ComboKey = tuple[str | None, str, str, str, str, str]


@dataclass(slots=True)
class _RunPart:
    """What one run's cells add to the figures (recomputed when the run is written to)."""

    parse: int = 0
    used: int = 0
    panel: dict[TierKey, set[str]] = field(default_factory=dict)
    judges: dict[TierKey, dict[str, tuple[int, float]]] = field(default_factory=dict)
    noise: list[float] = field(default_factory=list)


@dataclass(slots=True)
class _LabelPart:
    """What one run's check labels add to the notes (kept only for a run they add to).

    ``stale``: made for an earlier version of the task; ``infra``: of a run left out
    with an infrastructure failure; ``undecided_infra``: counted, undecided because the
    check's own infrastructure failed.
    """

    stale: int = 0
    infra: int = 0
    undecided_infra: int = 0


class _Summary:
    """Everything :class:`Analysis` is built from, kept per run so a write updates it."""

    def __init__(
        self,
        store: Store,
        by: Sequence[str] | None,
        panel: set[str] | None,
        runs: list[RunFact] | None = None,
    ) -> None:
        """Everything but the grade cells, from the store (its run facts ``runs`` if given)."""
        self.by_asked = tuple(by) if by else None
        self.panel = panel
        # the change log's newest entry before anything is read: a write after it is
        # read again by the next update (runs are recomputed whole, so twice is harmless)
        self.mark = store.change_mark()
        self.every = store.run_facts() if runs is None else runs
        self.every_by_id = dict(zip(map(_ID, self.every), self.every, strict=True))
        # a run that failed for infrastructure is no score: in no figure, named in the notes
        kind = FailureKind.INFRASTRUCTURE.value
        infra = [r for r in self.every if r.failure_kind == kind]
        self.infra_ids = {r.id for r in infra}
        facts = [r for r in self.every if r.failure_kind != kind] if infra else self.every
        self.runs = dict(zip(map(_ID, facts), facts, strict=True))
        self.group_by = tuple(by) if by else default_group_by(facts)
        self.rubric_hashes, self.library, self.tasks = _pack_metadata(store)
        self.task_hashes = {k: t.content_hash for k, t in self.tasks.items()}
        self.identities = store.judge_identities()
        self.infra_reasons = _infra_reasons(store, infra)
        self.agent_of, self.shown = self._agents(facts)
        self.members: dict[str, list[str]] = defaultdict(list)
        for run_id in sorted(self.runs):
            self.members[self.agent_of[run_id]].append(run_id)
        self.cells = GradeCells.empty()
        self.combo_counts: dict[_ComboKey, int] = {}
        self.newest: dict[str, datetime] = {}
        self.grades_total = 0
        self.current: set[Combo] = set()
        self.combo_ex = Exclusions()
        # the parts of runs written to since the columns were read (the others' figures
        # are read from the columns by _set_all_parts)
        self.parts: dict[str, _RunPart] = {}
        # the noise floor's unit of every counted cell with repeats: its run's position
        # in the cells' columns, its value
        self.noise_run: np.ndarray[Any, np.dtype[np.int64]] = np.zeros(0, np.int64)
        self.noise_sd: np.ndarray[Any, np.dtype[np.float64]] = np.zeros(0)
        self.parse_errors = self.grades_used = 0
        self.panel_count: dict[TierKey, Counter[str]] = defaultdict(Counter)
        self.scored_count: dict[TierKey, Counter[str]] = defaultdict(Counter)
        self.names: dict[TierKey, dict[str, str]] = {}
        self.scores: dict[TierKey, TierScores] = {}
        self.label_parts: dict[str, _LabelPart] = {}
        self.labels: dict[str, bool | None] = {}
        # verdicts of the runs in the figures, and of the others (infrastructure, unknown)
        self.verdicts: dict[str, list[VerdictFact]] = {}
        self.other_verdicts: dict[str, list[VerdictFact]] = {}
        self.elo: EloResult | None = None
        self.human_votes = 0
        self.rows: dict[str, AgentRow] = {}
        self.chapter_infra = 0
        self._saved_rows: Sequence[AgentRow] | None = None
        # whether the agents' rows were taken from a saved front
        self.rows_saved = False

    @classmethod
    def full(
        cls,
        store: Store,
        *,
        by: Sequence[str] | None,
        panel: set[str] | None,
        saved: SavedSummary | None = None,
        front: Front | None = None,
        save: Callable[[SavedSummary], None] | None = None,
    ) -> _Summary:
        """The store summarised from scratch (from what ``saved`` holds, if given).

        With ``saved``, the summary is at the saved mark, made from what it holds: the
        runs written to since are the caller's to update (:func:`_from_saved`).
        ``front``: the overview's front at the mark that update ends at; its agents' rows
        are used if they are of these agents (the same grouping, labels and run counts),
        not computed again. ``save``: given what a summary made from the store read, once
        it is made (the labels' facts are kept no longer: 100,000 at scale).
        """
        s = cls(store, by, panel, None if saved is None else saved.runs)
        if front is not None and front.by == s.group_by:
            s._saved_rows = front.agents
        if saved is not None:
            s.mark, s.cells, s.combo_counts, s.newest = (
                saved.mark,
                saved.cells,
                saved.combo_counts,
                saved.newest,
            )
            # every cell's grades, as the combinations count them
            s.grades_total = sum(saved.combo_counts.values())
            s._finish(store, saved.labels, saved.verdicts)
            return s
        summary = store.grade_summary({r.id: r.pack_id for r in s.every})
        s.cells = GradeCells.from_flat(summary.cells)
        s.grades_total = int(s.cells.values[:, CELL_GRADES].sum())
        for combo in summary.combos:
            ckey: _ComboKey = (
                combo.pack_id,
                combo.rubric_id,
                combo.rubric_version,
                combo.rubric_hash,
                combo.tier,
                combo.judge_key,
            )
            s.combo_counts[ckey] = combo.grades
            s.newest[combo.judge_key] = combo.last_at
        labels, verdicts = store.label_facts(), store.verdict_facts()
        s._finish(store, labels, verdicts)
        if save is not None:
            save(SavedSummary(s.mark, s.cells, s.combo_counts, s.newest, s.every, labels, verdicts))
        return s

    def _finish(self, store: Store, labels: list[LabelFact], verdicts: list[VerdictFact]) -> None:
        """Everything after the grade cells: policy, parts, scores, labels, verdicts, rows.

        ``labels`` and ``verdicts``: every label's and verdict's facts.
        """
        s = self
        s._judge_policy()
        s._set_all_parts()
        s._set_labels(labels, None)
        s._set_verdicts(verdicts, ())
        s._rate(store)
        s._count_infra(store)
        saved = {r.label: r for r in s._saved_rows or ()}
        s._saved_rows = None
        if len(saved) != len(s.members) or any(
            label not in saved or saved[label].n_runs != len(run_ids)
            for label, run_ids in s.members.items()
        ):
            saved = {}
        s.rows_saved = bool(saved)
        for label, run_ids in s.members.items():
            row = saved.get(label)
            s.rows[label] = replace(row, run_ids=run_ids) if row else s._row(label, run_ids)

    def update(self, store: Store, changes: StoreChanges, *, rows: bool = True) -> _Summary | None:
        """This summary after ``changes`` (None: summarise everything again).

        ``rows`` False: the agents' rows are already those after ``changes`` (a saved
        front's at ``changes.mark``) and are not computed again.
        """
        self.mark = changes.mark
        graded = sorted(changes.runs.get("grades", set()))
        labelled = sorted(changes.runs.get("labels", set()))
        judged = sorted(changes.runs.get("verdicts", set()))
        touched: set[str] = set()
        if graded:
            before = (
                {key: set(c) for key, c in self.scored_count.items() if +c},
                {key: set(c) for key, c in self.panel_count.items() if +c},
            )
            current = set(self.current)
            fresh: dict[str, dict[_Part, list[float]]] = {r: {} for r in graded}
            for (run_id, *rest), c in store.grade_cells(graded).items():
                fresh[run_id][(rest[0], rest[1], rest[2], rest[3], rest[4])] = c
            # the runs' parts as their cells make them now: the counters take them back
            for run_id in graded:
                if run_id in self.runs and run_id not in self.parts:
                    self.parts[run_id] = self._part_of(run_id, {})
            judges: set[str] = set()
            packs = {r: f.pack_id if (f := self.every_by_id.get(r)) else None for r in graded}
            for run_id in graded:
                for part, c in self.cells.replace(run_id, fresh[run_id]).items():
                    self._count(packs[run_id], part, c, -1)
                    judges.add(part[4])
            for run_id in graded:
                for part, c in fresh[run_id].items():
                    self._count(packs[run_id], part, c, +1)
                    judges.add(part[4])
            if not judges <= set(self.identities):
                return None  # a judge never seen: its identity is read by a full summary
            self.newest = {k: t for k, t in self.newest.items() if k not in judges}
            self.newest.update(store.judge_newest(sorted(judges)))
            self._judge_policy()
            if self.current != current:
                return None
            for run_id in graded:
                if run_id in self.runs:
                    self._set_part(run_id)
            after = (
                {key: set(c) for key, c in self.scored_count.items() if +c},
                {key: set(c) for key, c in self.panel_count.items() if +c},
            )
            if after != before:
                return None  # a tier or a judge came or went: names and panels change
            for key in self.scores:
                for run_id in graded:
                    self.scores[key].pop(run_id)
            for run_id in graded:
                if run_id in self.parts:
                    self._score(run_id, self.parts[run_id])
            touched.update(graded)
        if labelled:
            for run_id in labelled:
                self.labels.pop(run_id, None)
            self._set_labels(store.label_facts(labelled), labelled)
            touched.update(labelled)
        if judged:
            self._set_verdicts(store.verdict_facts(judged), judged)
            touched.update(judged)
        if "votes" in changes.whole:
            self._rate(store)
        self._count_infra(store)
        if not rows:
            return self
        for label in {self.agent_of[r] for r in touched if r in self.agent_of}:
            self.rows[label] = self._row(label, self.members[label])
        return self

    def _agents(self, facts: Sequence[RunFact]) -> tuple[dict[str, str], dict[str, RunFact]]:
        """Each run's group label exactly as the report writes it, and a run per group."""
        reps: dict[tuple[object, ...], str] = {}
        agent_of: dict[str, str] = {}
        shown: dict[str, RunFact] = {}
        # what group_label reads of each run, a column per key (read at C speed)
        cols = [_group_column(facts, k) for k in self.group_by]
        sigs = zip(*cols, strict=True) if cols else repeat((), len(facts))
        for r, sig in zip(facts, sigs, strict=True):
            # one stand-in per agent, not per task
            label = reps.get(sig)
            if label is None:
                stand_in = Run.model_construct(
                    id=r.id,
                    pack_id=r.pack_id,
                    task_id=r.task_id,
                    harness=r.harness,
                    harness_version=r.harness_version,
                    model=r.model,
                    versions=r.versions,
                    status=RunStatus(r.status),
                )
                label = reps[sig] = group_label(stand_in, self.group_by)
            agent_of[r.id] = label
            shown.setdefault(label, r)
        return agent_of, shown

    def _count(self, pack: str | None, part: _Part, c: list[float], sign: int) -> None:
        """Add (or take back) a cell's grades to its combination's count and the total."""
        key: _ComboKey = (pack, *part)
        n = self.combo_counts.get(key, 0) + sign * int(c[CELL_GRADES])
        if n:
            self.combo_counts[key] = n
        else:
            self.combo_counts.pop(key, None)
        self.grades_total += sign * int(c[CELL_GRADES])

    def _judge_policy(self) -> None:
        """Which combinations are current, and the grades of the others by reason."""
        combos = [
            GradeCombo(*key[:6], grades=n, last_at=self.newest[key[5]])
            for key, n in sorted(self.combo_counts.items(), key=lambda kv: (kv[0][0] or "", kv[0]))
        ]
        self.current, self.combo_ex = _current_combos(
            combos, self.identities, self.rubric_hashes, self.library, self.panel
        )

    def _set_part(self, run_id: str) -> None:
        """Recompute a run's contribution from its cells (the counters follow)."""
        old = self.parts.pop(run_id, None)
        if old is not None:
            self._tally(old, -1)
        part = self.parts[run_id] = self._part_of(run_id, {})
        self._tally(part, +1)

    def _part_of(self, run_id: str, tiers: dict[tuple[str, _Part], TierKey | None]) -> _RunPart:
        """A run's part from its cells.

        ``tiers`` caches, per (pack, cell part), the tier key of a current combination or
        None: a few of them for 600,000 cells (valid while ``current`` does not change).
        """
        current = self.current
        pack = self.runs[run_id].pack_id
        part = _RunPart()
        for where, c in sorted(self.cells.get(run_id).items()):
            part.parse += int(c[CELL_PARSE])
            if (pack, where) in tiers:
                key = tiers[(pack, where)]
            else:
                rubric_id, version, rubric_hash, tier, judge_key = where
                key = tiers[(pack, where)] = (
                    TierKey(rubric_id, version, tier, rubric_hash)
                    if (pack, rubric_id, version, rubric_hash, tier, judge_key) in current
                    else None
                )
            if key is None:
                continue
            judge_key = where[4]
            part.used += int(c[CELL_GRADES])
            panel = part.panel.get(key)
            if panel is None:
                panel = part.panel[key] = set()
            panel.add(judge_key)
            scored = int(c[CELL_SCORED])
            if scored:
                part.judges.setdefault(key, {})[judge_key] = (scored, c[CELL_TOTAL])
                if scored >= 2:
                    part.noise.append(repeat_sd(scored, c[CELL_TOTAL], c[CELL_TOTAL_SQ]))
        return part

    def _set_all_parts(self) -> None:
        """What every run's cells add to the figures, read from the cells' columns.

        The counters, each tier's panel scores (a table, :class:`TierScores`) and the noise
        floor's units, with numpy over the 600,000 cells of 100,000 runs; no run's
        :class:`_RunPart` is made (an update makes those of the runs it writes). The same
        figures :meth:`_part_of` and :meth:`_score` give run by run: sums of integer counts
        (exact), a judge's score ``total / scored``, :func:`repeat_sd`'s arithmetic, and
        :func:`panel_score` once per distinct row of judge scores.
        """
        cells = self.cells
        vals = cells.values
        # per run of the columns: its pack's number, -1 for a run not in the figures
        packs: dict[str, int] = {}
        facts = map(self.runs.get, cells.runs)
        run_pack = np.array(
            [-1 if f is None else packs.setdefault(f.pack_id, len(packs)) for f in facts],
            dtype=np.int64,
        ).reshape(len(cells.runs))
        cell_pack = run_pack[cells.run]
        counted = np.flatnonzero(cell_pack >= 0)
        self.parse_errors += int(vals[counted, CELL_PARSE].sum())
        # per (pack, part) met: its current tier's number, -1 for a combination not current
        n_parts = max(len(cells.parts), 1)
        combo_no = cell_pack[counted] * n_parts + cells.part[counted]
        pack_names = list(packs)
        keys: dict[TierKey, int] = {}
        tier_of_combo = np.full(len(packs) * n_parts, -1, dtype=np.int64)
        for code in np.flatnonzero(np.bincount(combo_no, minlength=tier_of_combo.size)).tolist():
            pack_no, part_no = divmod(code, n_parts)
            rubric_id, version, rubric_hash, tier, judge_key = cells.parts[part_no]
            combo = (pack_names[pack_no], rubric_id, version, rubric_hash, tier, judge_key)
            if combo in self.current:
                key = TierKey(rubric_id, version, tier, rubric_hash)
                tier_of_combo[code] = keys.setdefault(key, len(keys))
        tier_no = tier_of_combo[combo_no]
        used = counted[tier_no >= 0]
        tier_no = tier_no[tier_no >= 0]
        self.grades_used += int(vals[used, CELL_GRADES].sum())
        # a run's part holds a (tier, judge) once: a used cell is one run on its panel
        judge_keys = sorted({p[4] for p in cells.parts})
        judge_of_part = np.array(
            [judge_keys.index(p[4]) for p in cells.parts], dtype=np.int64
        ).reshape(len(cells.parts))
        judge_no = judge_of_part[cells.part[used]]
        n_judges = max(len(judge_keys), 1)
        scored = vals[used, CELL_SCORED]
        tier_keys = list(keys)
        for counter, mask in ((self.panel_count, None), (self.scored_count, scored > 0)):
            pair = tier_no * n_judges + judge_no
            n = np.bincount(pair if mask is None else pair[mask], minlength=len(keys) * n_judges)
            for code in np.flatnonzero(n).tolist():
                k, j = divmod(code, n_judges)
                counter[tier_keys[k]][judge_keys[j]] += int(n[code])
        self._name_judges()
        # the noise floor's units: a judge's repeats of a run (population SD from the sums)
        many = scored >= 2
        n_rep, total = scored[many], vals[used[many], CELL_TOTAL]
        mean = total / n_rep
        total_sq = vals[used[many], CELL_TOTAL_SQ]
        self.noise_run = cells.run[used[many]]
        self.noise_sd = np.sqrt(np.maximum(0.0, total_sq / n_rep - mean * mean))
        # each tier's panel scores: per run, its judges' scores by name
        has_score = scored > 0
        for k, key in enumerate(tier_keys):
            mine = np.flatnonzero(has_score & (tier_no == k))
            if not mine.size:
                continue
            rows = used[mine]
            names = self.names[key]
            labels = sorted(set(names.values()))
            column = np.array(
                [labels.index(names[j]) if j in names else -1 for j in judge_keys], dtype=np.int64
            ).reshape(len(judge_keys))
            # the rows' runs ascend (the columns are grouped by run): a row per run
            run_of = cells.run[rows]
            first = np.empty(run_of.size, dtype=np.bool_)
            first[0], first[1:] = True, run_of[1:] != run_of[:-1]
            runs_here, run_row = run_of[first], np.cumsum(first) - 1
            matrix = np.full((runs_here.size, len(labels)), np.nan)
            matrix[run_row, column[judge_no[mine]]] = (
                vals[rows, CELL_TOTAL] / vals[rows, CELL_SCORED]
            )
            self.scores[key] = TierScores(
                PanelScoreTable.of_judge_matrix(
                    [cells.runs[i] for i in runs_here.tolist()], labels, matrix
                )
            )
        for key in sorted(self.scored_count):
            self.scores.setdefault(key, TierScores(PanelScoreTable.of([])))

    def _tally(self, part: _RunPart, sign: int) -> None:
        self.parse_errors += sign * part.parse
        self.grades_used += sign * part.used
        for key, judges in part.panel.items():
            self.panel_count[key].update({j: sign for j in judges})
        for key, scored in part.judges.items():
            self.scored_count[key].update({j: sign for j in scored})

    def _name_judges(self) -> None:
        self.names = {
            key: judge_labels(self.identities[j] for j in sorted(c) if c[j] > 0)
            for key, c in self.scored_count.items()
            if +c
        }

    def _score(self, run_id: str, part: _RunPart) -> None:
        """A run's panel score on each tier it has scored grades on (judges by name)."""
        for key, judges in part.judges.items():
            names = self.names[key]
            by_name = sorted((names[j], total / n) for j, (n, total) in judges.items())
            self.scores[key][run_id] = panel_score(run_id, dict(by_name))

    def _set_labels(self, facts: Sequence[LabelFact], run_ids: Sequence[str] | None) -> None:
        """Check labels of all runs (``run_ids`` None) or anew for those runs.

        ``facts`` are then those runs' labels: the counted ones decide outcomes, the notes
        count the others.
        """
        every, counted_runs, task_hashes = self.every_by_id, self.runs, self.task_hashes
        infra_kind = FailureKind.INFRASTRUCTURE.value
        # 100,000 labels at scale: a part only for a run with something in the notes
        parts: dict[str, _LabelPart] = {}
        counted: list[LabelFact] = []
        for lab in facts:
            run_id = lab.run_id
            owner = every.get(run_id)
            # only a label with a check hash can be stale (against its task's content now)
            if (
                lab.check_hash
                and owner is not None
                and label_is_stale(
                    lab.source, lab.check_hash, task_hashes.get((owner.pack_id, owner.task_id))
                )
            ):
                parts.setdefault(run_id, _LabelPart()).stale += 1
            elif owner is None or run_id in counted_runs:
                counted.append(lab)
                if lab.passed is None and lab.failure_kind == infra_kind:
                    parts.setdefault(run_id, _LabelPart()).undecided_infra += 1
            else:
                parts.setdefault(run_id, _LabelPart()).infra += 1
        for run_id in run_ids or ():
            self.label_parts.pop(run_id, None)
        self.label_parts.update(parts)
        # outcomes are per run: all at once, or the runs written to
        self.labels.update(label_outcomes(counted))

    def _set_verdicts(self, facts: Sequence[VerdictFact], run_ids: Sequence[str]) -> None:
        """Verdicts of all runs, or anew for ``run_ids`` (lists replaced, never changed)."""
        # a published analysis shares this dict: the next update writes a copy
        self.verdicts, self.other_verdicts = dict(self.verdicts), dict(self.other_verdicts)
        for run_id in run_ids:
            self.verdicts.pop(run_id, None)
            self.other_verdicts.pop(run_id, None)
        fresh: dict[str, list[VerdictFact]] = {}
        for vf in facts:
            fresh.setdefault(vf.run_id, []).append(vf)
        for run_id, vs in fresh.items():
            (self.verdicts if run_id in self.runs else self.other_verdicts)[run_id] = vs

    def _rate(self, store: Store) -> None:
        """Decided human votes as integer columns, rated between agent groups."""
        cols = store.vote_columns(rater_kind=JudgeKind.HUMAN.value)
        self.human_votes = len(cols)
        known = np.array([r in self.agent_of for r in cols.runs], dtype=bool)
        both = known[cols.a] & known[cols.b] if self.human_votes else known
        between = VoteArrays(cols.runs, cols.a[both], cols.b[both], cols.outcome[both]).regroup(
            [self.agent_of.get(r, "") for r in cols.runs]
        )
        self.elo = bradley_terry_elo(between, seed=0) if len(between) else None

    def _count_infra(self, store: Store) -> None:
        """What the report counts as left out with infrastructure-failed runs."""
        if not self.infra_reasons:
            return
        # their grades, verdicts, current labels, votes and chapter grades
        ids = sorted(self.infra_ids)
        self.chapter_infra = (
            int(sum(c[CELL_GRADES] for r in ids for c in self.cells.get(r).values()))
            + sum(len(self.other_verdicts.get(r, [])) for r in ids)
            + sum(p.infra for r in ids if (p := self.label_parts.get(r)))
            + store.votes_and_chapter_grades_about(ids)
        )

    def _row(self, label: str, run_ids: list[str]) -> AgentRow:
        """One agent's row (recomputed when any of its runs is written to)."""
        runs, labels, group_by = self.runs, self.labels, self.group_by
        rep = self.shown[label]
        row = AgentRow(
            label=label,
            harness=rep.harness if "harness" in group_by else None,
            model=rep.model if "model" in group_by else None,
            versions={
                k.removeprefix("versions."): rep.versions.get(k.removeprefix("versions."), "-")
                for k in group_by
                if k not in ("harness", "model")
                and k not in ("harness_version", "pack", "pack_id", "task", "task_id", "status")
            },
            run_ids=run_ids,
            tasks=len({(runs[r].pack_id, runs[r].task_id) for r in run_ids}),
            n_runs=len(run_ids),
        )
        for key in sorted(self.scores):
            tier_runs = self.scores[key]
            mine = tier_runs.scored(run_ids)
            if mine:
                row.leaderboard[key] = leaderboard_row(
                    label,
                    tier_runs.table_of(mine),
                    [(runs[r].pack_id, runs[r].task_id) for r in mine],
                    panel=sum(1 for n in self.panel_count[key].values() if n > 0),
                )
        checked = [labels[r] for r in run_ids if r in labels]
        if checked:
            row.passes = pass_rate_row(label, checked)
        agree = [
            (v.verdict == "PASS") == labels[r]
            for r in run_ids
            for v in self.verdicts.get(r, [])
            if v.judge_kind == JudgeKind.AGENT.value
            and v.verdict is not None
            and labels.get(r) is not None
        ]
        if agree:
            res = proportion(sum(agree), len(agree))
            row.aj = Estimate(res.rate, res.ci[0], res.ci[1], res.n, res.k)
        noise = self._noise(run_ids)
        if noise:
            row.noise = statistics.fmean(noise)
            row.noise_cells = len(noise)
        costs = [runs[r].cost_usd for r in run_ids if runs[r].cost_usd is not None]
        if costs:
            row.cost_total = float(sum(c for c in costs if c is not None))
            row.cost_per_run = row.cost_total / len(costs)
        row.tokens_per_run = (
            statistics.fmean(runs[r].input_tokens for r in run_ids),
            statistics.fmean(runs[r].output_tokens for r in run_ids),
        )
        return row

    def _noise(self, run_ids: Sequence[str]) -> list[float]:
        """The noise floor's units of these runs' cells (in no particular order)."""
        written = [sd for r in run_ids if (p := self.parts.get(r)) for sd in p.noise]
        index = self.cells.index
        mine = np.zeros(len(self.cells.runs), dtype=np.bool_)
        mine[[i for r in run_ids if r not in self.parts and (i := index.get(r)) is not None]] = True
        base: list[float] = self.noise_sd[mine[self.noise_run]].tolist()
        return base + written

    def analysis(self) -> Analysis:
        """The figures as the pages read them (copies: an older analysis may still be read)."""
        agents = []
        for label, row in self.rows.items():
            elo = self.elo
            row.elo = (
                Estimate(elo.ratings[label], *elo.ci[label], elo.games(label))
                if elo is not None and label in elo.ratings
                else None
            )
            agents.append(replace(row))
        excluded = replace(
            self.combo_ex,
            stale_rubric=Counter(self.combo_ex.stale_rubric),
            stale_judge=Counter(self.combo_ex.stale_judge),
            not_in_panel=Counter(self.combo_ex.not_in_panel),
            infra_runs=dict(self.infra_reasons),
            stale_labels=sum(p.stale for p in self.label_parts.values()),
            infra_labels=sum(p.undecided_infra for p in self.label_parts.values()),
            infra_judgements=self.chapter_infra if self.infra_reasons else 0,
        )
        judge_names: dict[str, str] = {}
        for key in sorted(self.names):
            judge_names.update(self.names[key])
        # copies of the dicts the next update changes in place (C-level, a few ms); the
        # verdicts' dict is replaced by its updates instead
        scores: dict[TierKey, Mapping[str, RunTierScore]] = {
            key: self.scores[key].copy() for key in sorted(self.scores) if self.scores[key]
        }
        tier_notes = {
            key: leaderboard_notes(
                sorted(
                    (a.leaderboard[key] for a in agents if key in a.leaderboard),
                    key=lambda r: (-r.mean, r.group),
                )
            )
            for key in sorted(scores)
        }
        out = Analysis(
            by=self.group_by,
            runs=self.runs,
            tasks=self.tasks,
            tier_keys=sorted(scores),
            scores=scores,
            labels=dict(self.labels),
            verdicts=self.verdicts,
            excluded=excluded,
            current=set(self.current),
            agents=agents,
            agent_of=self.agent_of,
            elo=self.elo,
            tier_notes=tier_notes,
            judge_names=judge_names,
            grades_total=self.grades_total,
            grades_used=self.grades_used,
            votes=self.human_votes,
            parse_errors=self.parse_errors,
        )
        out.by_asked, out.panel, out._summary = self.by_asked, self.panel, self
        return out


def sort_agents(analysis: Analysis | Front, metric: str) -> tuple[list[AgentRow], str]:
    """Agents ordered by ``metric``, ranked with ties from that metric's CIs.

    ``metric`` is ``tier:N``, ``pass``, ``elo``, ``aj``, ``cost`` or ``name``; an unknown one
    falls back to the tier with the most scored runs. Returns the metric actually used.
    """
    rows = [replace(r) for r in analysis.agents]  # the cached rows stay unranked
    tiers = analysis.tier_keys
    default = analysis.default_tier()

    def tier_of(m: str) -> TierKey | None:
        if m.startswith("tier:") and m[5:].isdigit() and int(m[5:]) < len(tiers):
            return tiers[int(m[5:])]
        return None

    if metric not in ("pass", "elo", "aj", "cost", "name") and tier_of(metric) is None:
        if default is not None:
            metric = f"tier:{tiers.index(default)}"
        elif any(r.pass_rate for r in rows):
            metric = "pass"
        elif any(r.elo for r in rows):
            metric = "elo"
        else:
            metric = "name"

    def est(r: AgentRow) -> Estimate | None:
        key = tier_of(metric)
        if key is not None:
            return r.scores.get(key)
        if metric == "pass":
            return r.pass_rate
        if metric == "elo":
            return r.elo
        if metric == "aj":
            return r.aj
        return None

    if metric == "name":
        rows.sort(key=lambda r: r.label)
    elif metric == "cost":
        rows.sort(key=lambda r: (r.cost_per_run is None, r.cost_per_run or 0.0, r.label))
    else:
        rows.sort(key=lambda r: (est(r) is None, -(est(r).value if est(r) else 0.0), r.label))  # type: ignore[union-attr]
    if metric in ("name", "cost"):
        for r in rows:
            r.rank, r.tied = None, False
        return rows, metric
    cis = [(e.lo, e.hi) if (e := est(r)) is not None else None for r in rows]
    ranks = rank_by_ci(cis)
    for r, rank in zip(rows, ranks, strict=True):
        r.rank = rank
        r.tied = rank is not None and sum(1 for x in ranks if x == rank) > 1
    return rows, metric
