"""A tier that mixes scales: its report tables state its scale, and κ compares like with like."""

from __future__ import annotations

import pytest

from lhbench.packs import bundled_pack_dirs, load_pack
from lhbench.reporting import ReportData
from lhbench.reporting.agreement import agreement_section
from lhbench.reporting.leaderboard import leaderboard_section
from lhbench.schema import DimensionScore, Grade, JudgeIdentity, JudgeKind, Rubric, TierKind
from lhbench.stats import cohen_kappa
from tests.factories import make_run

SAMPLES = load_pack(next(d for d in bundled_pack_dirs() if d.name == "lhbench-samples"))
OUTPUT: Rubric = next(r for r in SAMPLES.rubrics if r.id == "samples-output")
TIER = OUTPUT.tier("output")
DIMS = [d.id for d in TIER.dimensions]  # deliverable (binary), correctness, clarity (0-2)


def _grade(run: str, judge: str, scores: tuple[int, int, int]) -> Grade:
    by_dim = dict(zip(DIMS, scores, strict=True))
    return Grade(
        id=f"g-{run}-{judge}",
        run_id=run,
        rubric_id=OUTPUT.id,
        rubric_version=OUTPUT.version,
        rubric_hash=OUTPUT.content_hash,
        tier=TierKind.OUTPUT,
        judge=JudgeIdentity(kind=JudgeKind.LLM, model=judge),
        scores=[
            DimensionScore(dimension_id=d.id, scale=d.scale, score=by_dim[d.id])
            for d in TIER.dimensions
        ],
        tier_score=TIER.score(dict(by_dim)),
        key=f"k-{run}-{judge}",
    )


def _data() -> ReportData:
    runs = [make_run("r1"), make_run("r2", task_id="t2")]
    grades = [
        _grade("r1", "openai:a", (1, 2, 2)),
        _grade("r1", "openai:b", (1, 2, 1)),
        _grade("r2", "openai:a", (0, 1, 1)),
        _grade("r2", "openai:b", (1, 0, 1)),
    ]
    return ReportData.build(runs, grades=grades, rubrics=[OUTPUT])


def test_the_leaderboard_states_the_tiers_scale_and_scores_reach_its_top() -> None:
    sec = leaderboard_section(_data(), ["harness", "model"])
    board, decomp = sec.tables[0], sec.tables[1]
    assert "(scale 0–1 (dimensions on 0-2, binary, each normalised to its scale))" in board.title
    assert any(n.startswith("Scale: a tier whose dimensions are on different") for n in board.notes)
    [row] = board.rows
    # r1: judges 1.0 and 0.85; r2: 0.4 and 0.35 -> mean over runs of the panel means
    assert row[2] == pytest.approx(((1.0 + 0.85) / 2 + (0.4 + 0.35) / 2) / 2)
    assert "deliverable binary, correctness 0-2, clarity 0-2" in " ".join(decomp.notes)


def test_kappa_on_a_mixed_tier_compares_scores_normalised_to_their_scale() -> None:
    sec, results = agreement_section(_data())
    [agree] = results.values()
    # units (run, dimension) in the agreement's order: sorted by run, then dimension id
    a = {"r1": (1, 2, 2), "r2": (0, 1, 1)}
    b = {"r1": (1, 2, 1), "r2": (1, 0, 1)}
    order = sorted((r, i) for r in ("r1", "r2") for i in range(3))
    order.sort(key=lambda u: (u[0], DIMS[u[1]]))
    scale_top = [1, 2, 2]
    na = [a[r][i] / scale_top[i] for r, i in order]
    nb = [b[r][i] / scale_top[i] for r, i in order]
    expected = cohen_kappa(na, nb, weights="quadratic", labels=[0.0, 0.5, 1.0])
    assert agree.mean_kappa == pytest.approx(expected)
    # raw levels would rank a binary 1 below a 0-2 2: a different κ
    raw = cohen_kappa(
        [a[r][i] for r, i in order],
        [b[r][i] for r, i in order],
        weights="quadratic",
        labels=[0, 1, 2],
    )
    assert raw != pytest.approx(expected)
    assert "mixes scales, so κ, α and variance compare scores normalised" in " ".join(
        sec.tables[0].notes
    )
