"""Panel scores, agreement and health counts from grade columns equal the per-grade rules.

The report computes them with numpy group-bys over :class:`GradeColumns`; the oracles
here are the per-grade definitions the report used before (a dict per judge, a loop per
grade, ``statistics.fmean``/``pvariance``, sklearn-checked ``cohen_kappa`` per pair), run
on random panels with repeats, missing judges, unscorable dimensions, mixed scales,
parse errors, failed grades, several rubric contents and duplicated first repeats.
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from lhbench.judges import TierKey, panel_scores
from lhbench.schema import (
    DimensionScore,
    Grade,
    GradeStatus,
    JudgeIdentity,
    JudgeKind,
    Scale,
    TierKind,
    judge_labels,
)
from lhbench.stats import cohen_kappa, krippendorff_alpha, panel_agreement
from lhbench.stats.agreement import normalised_score
from lhbench.store import GradeColumns, JudgeName, ScoreFact, Store

JUDGE_MODELS = ("anthropic:sonnet", "google-gla:gemini", "openai:gpt", "openai:gpt-mini")


@dataclass
class Fact:
    """A grade as the report reads it (satisfies ``GradeLike``)."""

    run_id: str
    rubric_id: str
    rubric_version: str
    rubric_hash: str
    tier: TierKind
    judge: JudgeName
    status: GradeStatus
    retryable: bool
    tier_score: float | None
    repeat: int
    scores: tuple[ScoreFact, ...]


def _random_facts(seed: int, *, mixed: bool, n_runs: int = 60) -> list[Fact]:
    rng = random.Random(seed)
    dims = {"plan": Scale.ONE_TO_FIVE, "tools": Scale.ONE_TO_FIVE, "done": Scale.ONE_TO_FIVE}
    if mixed:
        dims = {"plan": Scale.ONE_TO_FIVE, "tools": Scale.ZERO_TO_TWO, "done": Scale.BINARY}
    # two judges share a label (the same model at two settings): labels are disambiguated
    judges = [JudgeName(f"k{i}" * 8, m) for i, m in enumerate(JUDGE_MODELS)]
    judges.append(JudgeName("kz" * 8, JUDGE_MODELS[0]))
    out = []
    for r in range(n_runs):
        run_id = f"run-{rng.randrange(1000):03d}-{r}"
        for judge in judges:
            if rng.random() < 0.2:
                continue  # a missing judge
            for repeat in range(rng.choice((1, 1, 2, 3))):
                status = rng.choice([GradeStatus.OK] * 8 + [GradeStatus.PARSE_ERROR])
                if rng.random() < 0.05:
                    status = GradeStatus.ERROR
                scores = tuple(
                    ScoreFact(d, s, None if rng.random() < 0.1 else rng.choice(s.levels))
                    for d, s in dims.items()
                    if rng.random() < 0.95
                )
                scored = [normalised_score(x.score, x.scale) for x in scores if x.score is not None]
                ok = status == GradeStatus.OK and scored
                out.append(
                    Fact(
                        run_id=run_id,
                        rubric_id="r",
                        rubric_version="1",
                        rubric_hash=rng.choice(["h1", "h1", "h1", "h2"]),
                        tier=rng.choice([TierKind.PROCESS, TierKind.OUTPUT]),
                        judge=judge,
                        status=status,
                        retryable=status == GradeStatus.ERROR and rng.random() < 0.5,
                        tier_score=sum(scored) / len(scored) if ok else None,
                        # a judge's first repeat sometimes graded twice: the later one counts
                        repeat=0 if rng.random() < 0.05 else repeat,
                        scores=scores if status == GradeStatus.OK else (),
                    )
                )
    return out


def _key_of(g: Fact) -> TierKey:
    return TierKey(g.rubric_id, g.rubric_version, g.tier.value, g.rubric_hash)


def _panel_scores_per_grade(grades: list[Fact], key: TierKey) -> dict[str, tuple]:
    """The per-grade definition: judges' repeat means, their mean and pvariance."""
    chosen = [
        g
        for g in grades
        if _key_of(g) == key and g.status == GradeStatus.OK and g.tier_score is not None
    ]
    labels = judge_labels(g.judge for g in chosen)
    per_judge: dict = defaultdict(lambda: defaultdict(list))
    dims: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for g in chosen:
        judge = labels[g.judge.key]
        per_judge[g.run_id][judge].append(g.tier_score)
        for s in g.scores:
            if s.score is not None:
                dims[g.run_id][s.dimension_id][judge].append(s.score)
    out = {}
    for run_id, judges in per_judge.items():
        js = {j: statistics.fmean(v) for j, v in judges.items()}
        dm = {
            d: statistics.fmean(statistics.fmean(v) for v in by.values())
            for d, by in dims[run_id].items()
        }
        vals = list(js.values())
        var = statistics.pvariance(vals) if len(vals) > 1 else 0.0
        out[run_id] = (js, dm, statistics.fmean(vals), var)
    return out


def _mean_of_defined(values: list[float]) -> float:
    defined = [v for v in values if not math.isnan(v)]
    return float(np.mean(defined)) if defined else math.nan


def _agreement_per_grade(grades: list[Fact], levels: list[float], normalised: bool) -> dict:
    """The per-grade definition of κ, α, unit variance and the counts."""
    table: dict = defaultdict(dict)
    chosen = [g for g in grades if g.status == GradeStatus.OK and g.repeat == 0]
    names = judge_labels(g.judge for g in chosen)
    for g in chosen:
        for s in g.scores:
            if s.score is not None:
                table[names[g.judge.key]][(g.run_id, s.dimension_id)] = (
                    normalised_score(s.score, s.scale) if normalised else s.score
                )
    judges = sorted(table)
    units = sorted({u for t in table.values() for u in t})
    pairwise, dim_pairs = {}, defaultdict(list)
    for j1, j2 in itertools.combinations(judges, 2):
        shared = [u for u in units if u in table[j1] and u in table[j2]]
        if not shared:
            continue
        a, b = [table[j1][u] for u in shared], [table[j2][u] for u in shared]
        pairwise[(j1, j2)] = cohen_kappa(a, b, weights="quadratic", labels=levels)
        for d in sorted({d for _, d in units}):
            du = [u for u in shared if u[1] == d]
            if du:
                dim_pairs[d].append(
                    cohen_kappa(
                        [table[j1][u] for u in du],
                        [table[j2][u] for u in du],
                        weights="quadratic",
                        labels=levels,
                    )
                )
    data = np.full((len(judges), len(units)), np.nan)
    for i, j in enumerate(judges):
        for k, u in enumerate(units):
            if u in table[j]:
                data[i, k] = table[j][u]
    variances = [
        float(np.var([table[j][u] for j in judges if u in table[j]]))
        for u in units
        if sum(1 for j in judges if u in table[j]) >= 2
    ]
    return {
        "judges": judges,
        "pairwise": pairwise,
        "dims": {d: _mean_of_defined(v) for d, v in dim_pairs.items()},
        "alpha": krippendorff_alpha(data, values=levels),
        "variance": float(np.mean(variances)),
        "runs": len({r for r, _ in units}),
        "units": len(units),
        "ratings": sum(len(t) for t in table.values()),
    }


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_columnar_panel_scores_equal_the_per_grade_definition(seed: int) -> None:
    facts = _random_facts(seed, mixed=seed % 2 == 1)
    cols = GradeColumns.from_grades(facts)
    keys = sorted({_key_of(f) for f in facts})
    assert len(keys) == 4  # two tiers at two rubric contents
    for key in keys:
        want = _panel_scores_per_grade(facts, key)
        got = panel_scores(cols, key)
        assert sorted(got) == sorted(want) and len(want) > 10
        for run_id, (js, dm, mean, var) in want.items():
            s = got[run_id]
            assert s.judge_scores == pytest.approx(js, rel=1e-12)
            assert s.dimension_means == pytest.approx(dm, rel=1e-12)
            assert s.mean == pytest.approx(mean, rel=1e-12)
            assert s.variance == pytest.approx(var, rel=1e-12, abs=1e-15)
        # the document path converts to columns first: the same figures
        assert panel_scores(facts, key) == got
    # five judge configs, two sharing a label: both shown, told apart by their key
    labels = {j for s in panel_scores(cols, keys[0]).values() for j in s.judge_scores}
    assert {"anthropic:sonnet [k0k0k0]", "anthropic:sonnet [kzkzkz]"} <= labels


@pytest.mark.parametrize("seed", range(6))
def test_columnar_agreement_equals_the_per_grade_definition(seed: int) -> None:
    mixed = seed % 2 == 1
    facts = _random_facts(100 + seed, mixed=mixed)
    key = TierKey("r", "1", "process", "h1")
    tier = [f for f in facts if _key_of(f) == key]
    scales = [Scale.ONE_TO_FIVE, Scale.ZERO_TO_TWO, Scale.BINARY] if mixed else [Scale.ONE_TO_FIVE]
    levels = sorted({normalised_score(lv, s) if mixed else lv for s in scales for lv in s.levels})
    want = _agreement_per_grade(tier, levels, mixed)
    got = panel_agreement(GradeColumns.from_grades(tier), levels=levels, normalised=mixed)
    assert got.judges == want["judges"] and len(got.judges) == 5
    assert got.pairwise_kappa.keys() == want["pairwise"].keys() and len(want["pairwise"]) >= 6
    for pair, k in want["pairwise"].items():
        assert _same(got.pairwise_kappa[pair], k), pair
    assert got.dimension_kappa.keys() == want["dims"].keys()
    for d, k in want["dims"].items():
        assert _same(got.dimension_kappa[d], k), d
    assert _same(got.alpha, want["alpha"]) and not math.isnan(got.alpha)
    assert _same(got.mean_variance, want["variance"])
    assert (got.n_runs, got.n_units, got.n_ratings) == (
        want["runs"],
        want["units"],
        want["ratings"],
    )
    assert got.n_ratings > got.n_units > got.n_runs > 30


def test_agreement_refuses_a_score_outside_the_levels() -> None:
    facts = [f for f in _random_facts(7, mixed=False) if f.status == GradeStatus.OK]
    with pytest.raises(ValueError, match="not in labels"):
        panel_agreement(GradeColumns.from_grades(facts), levels=[1, 2, 3])


def _stored(run_id: str, judge: str, scores: tuple[int | None, ...], n: int, **kw) -> Grade:
    dims = ("plan", "tools", "done")
    scored = [s for s in scores if s is not None]
    failed = kw.get("status", GradeStatus.OK) != GradeStatus.OK
    return Grade(
        id=f"g{n}",
        run_id=run_id,
        rubric_id="r",
        rubric_version="1",
        rubric_hash=kw.pop("rubric_hash", "h" * 64),
        tier=kw.pop("tier", TierKind.PROCESS),
        judge=JudgeIdentity(kind=JudgeKind.LLM, model=judge, family=judge.split(":")[0]),
        scores=[
            DimensionScore(dimension_id=d, scale=Scale.ONE_TO_FIVE, score=s)
            if s is not None
            else DimensionScore(dimension_id=d, scale=Scale.ONE_TO_FIVE, unscorable_reason="x")
            for d, s in zip(dims, scores, strict=True)
            if not failed
        ],
        tier_score=sum(scored) / len(scored) if scored and not failed else None,
        key=f"{n:064d}",
        created_at=datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=n),
        **kw,
    )


def test_the_store_reads_the_columns_the_documents_give(tmp_path: Path) -> None:
    """``Store.grade_columns`` reads a batch at a time (20,000 rows) without a model per
    grade; its columns hold what the grade documents hold, oldest first."""
    rng = random.Random(3)
    grades = []
    for n in range(45_000):  # three batches
        judge = JUDGE_MODELS[n % 3]
        scores = tuple(None if rng.random() < 0.05 else rng.randint(1, 5) for _ in range(3))
        extra = {}
        if n % 97 == 0:
            extra = {"status": GradeStatus.ERROR, "retryable": n % 2 == 0, "error": "timeout"}
        grades.append(_stored(f"run-{n // 9}", judge, scores, n, repeat=(n // 3) % 3, **extra))
    rng.shuffle(grades)  # saved in any order, read oldest first
    with Store.open(f"sqlite:///{tmp_path / 'lhbench.db'}") as store:
        for i in range(0, len(grades), 5000):
            store.save_grades(grades[i : i + 5000])
        judges = {k: JudgeName(k, i.label) for k, i in store.judge_identities().items()}
        got = store.grade_columns(judges)
    want = GradeColumns.from_grades(sorted(grades, key=lambda g: g.created_at))
    assert len(got) == len(want) == 45_000
    for table, column in (
        ("run_ids", "run"),
        ("keys", "key"),
        ("judges", "judge"),
        ("score_lists", "scores"),
    ):
        a = [getattr(got, table)[i] for i in getattr(got, column)]
        b = [getattr(want, table)[i] for i in getattr(want, column)]
        assert a == b, column
    for column in ("status", "retryable", "repeat"):
        assert np.array_equal(getattr(got, column), getattr(want, column)), column
    assert np.array_equal(got.tier_score, want.tier_score, equal_nan=True)
    assert int(np.isnan(got.tier_score).sum()) == sum(1 for g in grades if g.tier_score is None)
    # the tables hold each distinct value once: no object per grade
    assert len(got.run_ids) == 5000 and len(got.judges) == 3 and len(got.keys) == 1
    assert len(got.score_lists) < 1000


def test_a_pattern_the_sample_missed_is_read_as_its_text(tmp_path: Path) -> None:
    """On SQLite a grade's low-variety columns come as an integer code when every value is
    one a sample of grades (and the enums) knew, else as text: a store mixing both reads
    the same columns as its documents give, a rare judge, rubric content, repeat and
    status included."""
    rng = random.Random(5)
    grades = []
    for n in range(6000):
        judge = JUDGE_MODELS[n % 3]
        scores = tuple(rng.randint(1, 5) for _ in range(3))
        extra: dict = {"repeat": (n // 3) % 2}
        if n in (2002, 4003, 5999):  # rowids the sample (1..1000, then every 6th) skips
            judge = "openai:rare-judge"
            extra = {"repeat": 7, "rubric_hash": "f" * 64, "tier": TierKind.BEHAVIOR}
        if n == 3004:
            extra = {"repeat": 0, "status": GradeStatus.ERROR, "retryable": True, "error": "x"}
        grades.append(_stored(f"run-{n // 6}", judge, scores, n, **extra))
    with Store.open(f"sqlite:///{tmp_path / 'lhbench.db'}") as store:
        store.save_grades(grades)  # in rowid order
        judges = {k: JudgeName(k, i.label) for k, i in store.judge_identities().items()}
        known = {k: v for k, v in judges.items() if v.label != "openai:rare-judge"}
        coding = store._pattern_coding(known)
        got = store.grade_columns(known)
    # the rare rows were not sampled: they are read as text, the others as codes
    assert coding is not None
    assert "f" * 64 not in coding.domains[2] and "7" not in coding.domains[6]
    assert "h" * 64 in coding.domains[2] and "0" in coding.domains[6]
    want = GradeColumns.from_grades(grades)
    rename = {n.key: known.get(n.key, JudgeName(n.key, n.key)) for n in want.judges}
    assert [got.judges[i] for i in got.judge] == [rename[want.judges[i].key] for i in want.judge]
    assert [got.keys[i] for i in got.key] == [want.keys[i] for i in want.key]
    assert [got.run_ids[i] for i in got.run] == [want.run_ids[i] for i in want.run]
    for column in ("status", "retryable", "repeat"):
        assert np.array_equal(getattr(got, column), getattr(want, column)), column
    assert int((got.repeat == 7).sum()) == 3 and int((got.status != 0).sum()) == 1


def test_a_column_of_many_values_is_read_as_text(tmp_path: Path) -> None:
    """More than 64 values of one column (here rubric contents) would make each row's CASE
    cost more than its text: the grades are read as text, and read right."""
    grades = [
        _stored(f"run-{n}", JUDGE_MODELS[n % 3], (1, 2, 3), n, rubric_hash=f"{n % 70:064d}")
        for n in range(700)
    ]
    with Store.open(f"sqlite:///{tmp_path / 'lhbench.db'}") as store:
        store.save_grades(grades)
        judges = {k: JudgeName(k, i.label) for k, i in store.judge_identities().items()}
        assert store._pattern_coding(judges) is None
        got = store.grade_columns(judges)
    want = GradeColumns.from_grades(grades)
    assert [got.keys[i] for i in got.key] == [want.keys[i] for i in want.key]
    assert len(got.keys) == 70
