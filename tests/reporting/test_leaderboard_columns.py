"""The leaderboard from a tier's panel scores as arrays equals its per-run definition.

The report computes leaderboard rows from :class:`PanelScoreTable` columns (no object per
run); the web overview passes RunTierScores. Both go through the one ``leaderboard_row``
and must give what the per-run definition below gives: each judge's repeats averaged,
the panel's mean and variance (:func:`panel_score`), then per group the mean over runs,
each judge's and dimension's mean over the runs that have one, and incomplete panels.
"""

from __future__ import annotations

import math
import random
import statistics
from collections import defaultdict

import numpy as np

from lhbench.judges import (
    PanelScoreTable,
    RunTierScore,
    TierKey,
    panel_score,
    panel_score_table,
    panel_scores,
    tier_keys,
)
from lhbench.reporting import ReportData
from lhbench.reporting.leaderboard import LeaderboardRow, leaderboard_row, leaderboard_rows
from lhbench.schema import Grade, GradeStatus, judge_labels
from lhbench.stats import bootstrap_ci
from tests.factories import make_grade, make_run

JUDGES = ["openai:gpt-5.2", "anthropic:claude-opus", "google:gemini-pro"]


def _grades(n_runs: int = 40, seed: int = 0) -> tuple[list, list[Grade]]:
    rng = random.Random(seed)
    runs, grades = [], []
    for i in range(n_runs):
        runs.append(
            make_run(
                f"r{i:02d}",
                harness=rng.choice(["claude-code", "codex"]),
                model=rng.choice(["m:a", "m:b"]),
                task_id=f"t{rng.randrange(6)}",
            )
        )
        for judge in JUDGES:
            if rng.random() < 0.15:
                continue  # this judge never graded the run: an incomplete panel
            for repeat in range(rng.choice([1, 1, 2, 3])):
                # some judges score fewer dimensions; a few grades failed
                scores = tuple(rng.randint(1, 5) for _ in range(rng.choice([2, 4, 4])))
                extra: dict[str, object] = {"repeat": repeat}
                if rng.random() < 0.1:
                    extra |= {"status": GradeStatus.PARSE_ERROR, "error": "unparsed"}
                    scores = ()
                grades.append(make_grade(f"r{i:02d}", judge, scores, **extra))
    rng.shuffle(grades)
    return runs, grades


def _reference_scores(grades: list[Grade], key: TierKey) -> dict[str, RunTierScore]:
    """Per run, from its grades alone (the definition panel scores vectorise)."""
    chosen = [
        g
        for g in grades
        if g.status == GradeStatus.OK
        and g.tier_score is not None
        and (g.rubric_id, g.rubric_version, g.tier.value, g.rubric_hash) == tuple(key)
    ]
    labels = judge_labels(g.judge for g in chosen)
    by_run: dict[str, dict[str, list[Grade]]] = defaultdict(lambda: defaultdict(list))
    for g in chosen:
        by_run[g.run_id][labels[g.judge.key]].append(g)
    out = {}
    for run_id, judges in by_run.items():
        jscores: dict[str, float] = {}
        per_dim: dict[str, list[float]] = defaultdict(list)
        for name in sorted(judges):
            mine = judges[name]
            jscores[name] = sum(g.tier_score for g in mine) / len(mine)  # type: ignore[misc]
            dims: dict[str, list[float]] = defaultdict(list)
            for g in mine:
                for s in g.scores:
                    if s.score is not None:
                        dims[s.dimension_id].append(s.score)
            for d, vals in dims.items():
                per_dim[d].append(sum(vals) / len(vals))
        dmeans = {d: statistics.fmean(per_dim[d]) for d in sorted(per_dim)}
        out[run_id] = panel_score(run_id, jscores, dmeans)
    return out


def _reference_row(
    group: str, scores: list[RunTierScore], clusters: list[tuple[str, str]], panel: int
) -> LeaderboardRow:
    """A row from its runs' scores, one run at a time (the definition the arrays follow)."""
    vals = [s.mean for s in scores]
    by_judge: dict[str, list[float]] = defaultdict(list)
    by_dim: dict[str, list[float]] = defaultdict(list)
    for s in scores:
        for j, v in s.judge_scores.items():
            by_judge[j].append(v)
        for d, v in s.dimension_means.items():
            by_dim[d].append(v)
    mean = float(np.mean(vals))
    lo, hi = bootstrap_ci(vals, clusters=clusters, n_resamples=1000, seed=0)
    return LeaderboardRow(
        group=group,
        mean=mean,
        ci=(min(lo, mean), max(hi, mean)),
        n=len(vals),
        tasks=len(set(clusters)),
        judge_means={j: float(np.mean(by_judge[j])) for j in sorted(by_judge)},
        dimension_means={d: float(np.mean(by_dim[d])) for d in sorted(by_dim)},
        variance=float(np.mean([s.variance for s in scores])),
        incomplete=sum(1 for s in scores if len(s.judge_scores) < panel),
        panel=panel,
    )


def test_panel_score_table_holds_each_runs_panel_score() -> None:
    _, grades = _grades()
    [key] = tier_keys(grades)
    table = panel_score_table(grades, key)
    expected = _reference_scores(grades, key)
    assert sorted(table.run_ids) == sorted(expected)
    assert table.scores() == expected == panel_scores(grades, key)
    assert list(table.judges) == sorted(table.judges) and len(table.judges) == 3
    # the same columns from the RunTierScores
    again = PanelScoreTable.of([expected[r] for r in table.run_ids])
    for field in ("judge_scores", "has_judge", "dimension_means", "has_dimension", "mean"):
        assert np.array_equal(getattr(again, field), getattr(table, field)), field
    assert np.array_equal(again.variance, table.variance)


def test_leaderboard_row_from_columns_equals_the_per_run_definition() -> None:
    runs, grades = _grades(seed=1)
    [key] = tier_keys(grades)
    scores = _reference_scores(grades, key)
    table = panel_score_table(grades, key)
    by_run = {r.id: r for r in runs}
    members = sorted(range(len(table)), key=lambda i: table.run_ids[i])[:25]
    ids = [table.run_ids[i] for i in members]
    clusters = [(by_run[r].pack_id, by_run[r].task_id) for r in ids]
    expected = _reference_row("g", [scores[r] for r in ids], clusters, panel=3)
    assert expected.incomplete > 0 and len(expected.dimension_means) == 4
    from_table = leaderboard_row("g", table.take(np.array(members)), clusters, panel=3)
    from_objects = leaderboard_row("g", [scores[r] for r in ids], clusters, panel=3)
    assert from_table == expected == from_objects
    assert not math.isnan(from_table.mean)


def test_leaderboard_rows_equal_the_per_run_definition_per_group() -> None:
    runs, grades = _grades(n_runs=60, seed=2)
    data = ReportData.build(runs, grades=grades)
    [key] = tier_keys(grades)
    scores = _reference_scores(grades, key)
    labels = data.group_labels(("harness", "model"))
    groups: dict[str, list[str]] = defaultdict(list)
    for run_id in sorted(scores):
        groups[labels[run_id]].append(run_id)
    expected = [
        _reference_row(
            g,
            [scores[r] for r in ids],
            [(data.runs[r].pack_id, data.runs[r].task_id) for r in ids],
            panel=3,
        )
        for g, ids in groups.items()
    ]
    expected.sort(key=lambda r: (-r.mean, r.group))
    assert len(expected) >= 3
    assert leaderboard_rows(data, key, ("harness", "model")) == expected
    # one pack's runs only
    assert leaderboard_rows(data, key, ("harness", "model"), pack_id="other") == []
