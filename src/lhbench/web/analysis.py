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
import threading
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property
from urllib.parse import urlencode

import numpy as np

from lhbench.judges import RunTierScore, TierKey, panel_score, repeat_sd
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
from lhbench.store import GradeCombo, RunFact, Store, VerdictFact
from lhbench.store.aggregates import (
    CELL_GRADES,
    CELL_PARSE,
    CELL_SCORED,
    CELL_TOTAL,
    CELL_TOTAL_SQ,
)

__all__ = [
    "AgentRow",
    "Analysis",
    "Estimate",
    "analyse",
    "default_group_by",
    "parse_group_by",
    "rank_by_ci",
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
class Analysis:
    """The store, summarised for the overview, per-task, runs and compare pages."""

    by: tuple[str, ...]
    runs: dict[str, RunFact]
    tasks: dict[tuple[str, str], Task]
    tier_keys: list[TierKey]
    scores: dict[TierKey, dict[str, RunTierScore]]
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

    @cached_property
    def task_count(self) -> int:
        """Distinct (pack, task) of the runs (counted once, not on every warm request)."""
        return len({(r.pack_id, r.task_id) for r in self.runs.values()})

    @cached_property
    def verdict_count(self) -> int:
        """Binary verdicts on the runs."""
        return sum(len(vs) for vs in self.verdicts.values())

    def agent(self, label: str) -> AgentRow | None:
        """The row of an agent by its label."""
        return next((a for a in self.agents if a.label == label), None)

    def is_current(self, pack_id: str, grade: Grade) -> bool:
        """Whether a stored grade of a run of ``pack_id`` counts (current rubric and judge)."""
        return (
            pack_id,
            grade.rubric_id,
            grade.rubric_version,
            grade.rubric_hash,
            grade.tier.value,
            grade.judge.key,
        ) in self.current

    def values(self, attr: str) -> list[str]:
        """Distinct values of a run attribute (pack_id, task_id, harness, model, status)."""
        return sorted({str(getattr(r, attr)) for r in self.runs.values()})

    def version_values(self) -> dict[str, list[str]]:
        """Every version key with its values."""
        out: dict[str, set[str]] = defaultdict(set)
        for r in self.runs.values():
            for k, v in r.versions.items():
                out[k].add(v)
        return {k: sorted(v) for k, v in sorted(out.items())}

    def default_tier(self) -> TierKey | None:
        """The tier with the most scored runs (never one that holds only failures)."""
        if not self.tier_keys:
            return None
        return max(self.tier_keys, key=lambda k: len(self.scores[k]))


def default_group_by(runs: Sequence[RunFact]) -> tuple[str, ...]:
    """harness, model, and every version key the runs carry."""
    keys = sorted({k for r in runs for k in r.versions})
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


def _group_value(fact: RunFact, key: str) -> object:
    """The run column :func:`lhbench.store.runs.group_key` reads for ``key``."""
    if key.startswith("versions."):
        return fact.versions.get(key.removeprefix("versions."))
    if key in ("harness", "model", "harness_version", "pack_id", "task_id", "status"):
        return getattr(fact, key)
    if key in ("pack", "task"):
        return getattr(fact, f"{key}_id")
    return fact.versions.get(key)


def _infra_reasons(store: Store, infra: Sequence[RunFact]) -> dict[str, str]:
    """Each infrastructure-failed run's first error line (the first 50 read; then status)."""
    out = {}
    for i, fact in enumerate(infra):
        run = store.find_run(fact.id) if i < 50 else None
        first = ((run.error if run else None) or fact.status).strip().splitlines()
        out[fact.id] = (first[0] if first else fact.status)[:120]
    return out


_gc_lock = threading.Lock()
_gc_pausers = 0
_gc_was_enabled = True


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off for a block (nested and across threads).

    Summarising 10,000 runs allocates a few hundred thousand small objects and no cycles;
    the collections they trigger walk the whole heap (every imported module) and cost
    about a third of the work. Reference counting still frees everything as usual.
    """
    global _gc_pausers, _gc_was_enabled
    with _gc_lock:
        if _gc_pausers == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pausers += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pausers -= 1
            if _gc_pausers == 0 and _gc_was_enabled:
                gc.enable()


def analyse(
    store: Store,
    *,
    by: Sequence[str] | None = None,
    panel: set[str] | None = None,
) -> Analysis:
    """Summarise the store for the pages.

    ``by`` are the keys that make an agent (default: harness, model and every version key).
    """
    settle_heap()
    with gc_paused():
        out = _analyse(store, by=by, panel=panel)
    # the summary lives until the next write and holds no cycles: out of the collector's
    # way, or the requests after it pay for walking it (see settle_heap)
    gc.freeze()
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
    gc.unfreeze()
    gc.collect()


def _analyse(
    store: Store,
    *,
    by: Sequence[str] | None,
    panel: set[str] | None,
) -> Analysis:
    every = store.run_facts()
    # a run that failed for infrastructure is no score: in no figure here, named in the notes
    infra = [r for r in every if r.failure_kind == FailureKind.INFRASTRUCTURE.value]
    facts = [r for r in every if r.failure_kind != FailureKind.INFRASTRUCTURE.value]
    runs = {r.id: r for r in facts}
    group_by = tuple(by) if by else default_group_by(facts)
    rubric_hashes, library, tasks = _pack_metadata(store)
    summary = store.grade_summary({r.id: r.pack_id for r in every})
    identities = store.judge_identities()
    current, excluded = _current_combos(summary.combos, identities, rubric_hashes, library, panel)
    excluded.infra_runs = _infra_reasons(store, infra)

    # group labels exactly as the report writes them (one Run per distinct signature)
    reps: dict[tuple[object, ...], str] = {}
    agent_of: dict[str, str] = {}
    shown: dict[str, RunFact] = {}
    for r in facts:
        # what group_label reads of the run: one stand-in per agent, not per task
        sig = tuple(_group_value(r, k) for k in group_by)
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
            label = reps[sig] = group_label(stand_in, group_by)
        agent_of[r.id] = label
        shown.setdefault(label, r)

    # per tier: judge means per run (repeats averaged), then the panel's mean and variance
    by_tier: dict[TierKey, dict[str, dict[str, tuple[int, float]]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    # the tier's panel, as the report counts it: every judge with a current grade on it
    panels: dict[TierKey, set[str]] = defaultdict(set)
    noise_cells: dict[str, list[float]] = defaultdict(list)
    grades_used = parse_errors = 0
    for (run_id, rubric_id, version, rubric_hash, tier, judge_key), c in summary.cells.items():
        fact = runs.get(run_id)
        if fact is None:
            continue
        parse_errors += int(c[CELL_PARSE])
        if (fact.pack_id, rubric_id, version, rubric_hash, tier, judge_key) not in current:
            continue
        grades_used += int(c[CELL_GRADES])
        key = TierKey(rubric_id, version, tier, rubric_hash)
        panels[key].add(judge_key)
        scored = int(c[CELL_SCORED])
        if scored:
            total = c[CELL_TOTAL]
            by_tier[key][run_id][judge_key] = (scored, total)
            if scored >= 2:
                noise_cells[agent_of[run_id]].append(repeat_sd(scored, total, c[CELL_TOTAL_SQ]))
    judge_names: dict[str, str] = {}
    scores: dict[TierKey, dict[str, RunTierScore]] = {}
    for key in sorted(by_tier):
        per_run = by_tier[key]
        names = judge_labels(identities[j] for j in {j for js in per_run.values() for j in js})
        judge_names.update(names)
        scores[key] = {
            run_id: panel_score(run_id, {names[j]: total / n for j, (n, total) in judges.items()})
            for run_id, judges in per_run.items()
        }

    # check labels: stale ones (their task changed since) set apart, as the report does
    task_hashes = {k: t.content_hash for k, t in tasks.items()}
    every_by_id = {r.id: r for r in every}
    label_list, infra_labels = [], []
    for lab in store.label_facts():
        owner = every_by_id.get(lab.run_id)
        now = task_hashes.get((owner.pack_id, owner.task_id)) if owner else None
        if label_is_stale(lab.source, lab.check_hash, now):
            excluded.stale_labels += 1
        elif owner is None or lab.run_id in runs:
            label_list.append(lab)
        else:
            infra_labels.append(lab)
    excluded.infra_labels = sum(
        1
        for lab in label_list
        if lab.passed is None and lab.failure_kind == FailureKind.INFRASTRUCTURE.value
    )
    labels = label_outcomes(label_list)
    verdict_facts = store.verdict_facts()
    if excluded.infra_runs:
        # what the report counts as left out with those runs: their grades, votes,
        # verdicts, current labels and chapter grades
        infra_ids = set(excluded.infra_runs)
        excluded.infra_judgements = (
            int(sum(c[CELL_GRADES] for k, c in summary.cells.items() if k[0] in infra_ids))
            + sum(1 for vf in verdict_facts if vf.run_id in infra_ids)
            + sum(1 for lab in infra_labels if lab.run_id in infra_ids)
            + store.votes_and_chapter_grades_about(sorted(infra_ids))
        )
    verdicts: dict[str, list[VerdictFact]] = defaultdict(list)
    for vf in verdict_facts:
        if vf.run_id in runs:
            verdicts[vf.run_id].append(vf)

    # decided human votes as integer columns from one query, rated between agent groups
    cols = store.vote_columns(rater_kind=JudgeKind.HUMAN.value)
    human_votes = len(cols)
    known = np.array([r in agent_of for r in cols.runs], dtype=bool)
    both = known[cols.a] & known[cols.b] if human_votes else known
    between = VoteArrays(cols.runs, cols.a[both], cols.b[both], cols.outcome[both]).regroup(
        [agent_of.get(r, "") for r in cols.runs]
    )
    elo = bradley_terry_elo(between, seed=0) if len(between) else None

    members: dict[str, list[str]] = defaultdict(list)
    for run_id in sorted(runs):
        members[agent_of[run_id]].append(run_id)
    agents = []
    for label, run_ids in members.items():
        rep = shown[label]
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
        )
        for key, tier_runs in scores.items():
            mine = [r for r in run_ids if r in tier_runs]
            if mine:
                row.leaderboard[key] = leaderboard_row(
                    label,
                    [tier_runs[r] for r in mine],
                    [(runs[r].pack_id, runs[r].task_id) for r in mine],
                    panel=len(panels[key]),
                )
        checked = [labels[r] for r in run_ids if r in labels]
        if checked:
            row.passes = pass_rate_row(label, checked)
        if elo is not None and label in elo.ratings:
            row.elo = Estimate(elo.ratings[label], *elo.ci[label], elo.games(label))
        agree = [
            (v.verdict == "PASS") == labels[r]
            for r in run_ids
            for v in verdicts.get(r, [])
            if v.judge_kind == JudgeKind.AGENT.value
            and v.verdict is not None
            and labels.get(r) is not None
        ]
        if agree:
            res = proportion(sum(agree), len(agree))
            row.aj = Estimate(res.rate, res.ci[0], res.ci[1], res.n, res.k)
        if noise_cells.get(label):
            row.noise = statistics.fmean(noise_cells[label])
            row.noise_cells = len(noise_cells[label])
        costs = [runs[r].cost_usd for r in run_ids if runs[r].cost_usd is not None]
        if costs:
            row.cost_total = float(sum(c for c in costs if c is not None))
            row.cost_per_run = row.cost_total / len(costs)
        row.tokens_per_run = (
            statistics.fmean(runs[r].input_tokens for r in run_ids),
            statistics.fmean(runs[r].output_tokens for r in run_ids),
        )
        agents.append(row)

    tier_notes = {
        key: leaderboard_notes(
            sorted(
                (a.leaderboard[key] for a in agents if key in a.leaderboard),
                key=lambda r: (-r.mean, r.group),
            )
        )
        for key in sorted(scores)
    }
    return Analysis(
        by=group_by,
        runs=runs,
        tasks=tasks,
        tier_keys=sorted(scores),
        scores=scores,
        labels=labels,
        verdicts=dict(verdicts),
        excluded=excluded,
        current=current,
        agents=agents,
        agent_of=agent_of,
        elo=elo,
        tier_notes=tier_notes,
        judge_names=judge_names,
        grades_total=int(sum(c[CELL_GRADES] for c in summary.cells.values())),
        grades_used=grades_used,
        votes=human_votes,
        parse_errors=parse_errors,
    )


def sort_agents(analysis: Analysis, metric: str) -> tuple[list[AgentRow], str]:
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
