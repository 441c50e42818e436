"""Ablation pooling and CIs: each figure says what it computes; few tasks flagged per group."""

from __future__ import annotations

import pytest

from lhbench.reporting import ReportData
from lhbench.reporting.ablation import ablation_section
from lhbench.stats import PairedDelta, pooled_by_groups, pooled_by_runs
from tests.factories import make_grade, make_run

# LH-Bench Table 7, per harness: paired runs n, and Δ for Insp., Token, Arch., Build, Overall
TABLE7 = {
    "claude": (3, (0.34, 0.33, 0.12, -0.33, 0.15)),
    "codex": (2, (0.83, 0.34, 0.83, 1.67, 0.87)),
    "gemini": (2, (-0.33, 0.17, 0.17, 0.34, 0.05)),
}
TABLE7_POOLED = (0.28, 0.28, 0.37, 0.56, 0.33)


def _groups(col: int) -> list[PairedDelta]:
    return [
        PairedDelta("with", "without", d[col], (0.0, 0.0), n_tasks=n, n_runs=n)
        for n, d in TABLE7.values()
    ]


def test_table7_pooled_row_mixes_two_poolings() -> None:
    weighted = [pooled_by_runs(_groups(c)) for c in range(5)]
    plain = [pooled_by_groups(_groups(c)) for c in range(5)]
    # the rubric columns are the plain mean of the harness Δs, not the run-weighted one
    for c in range(4):
        assert round(plain[c], 2) == TABLE7_POOLED[c]
    assert [round(w, 3) for w in weighted[:4]] == [0.289, 0.287, 0.337, 0.433]
    # the Overall column is the run-weighted mean (2.29 / 7), not the plain one (1.07 / 3)
    assert round(weighted[4], 2) == TABLE7_POOLED[4] and weighted[4] == pytest.approx(2.29 / 7)
    assert round(plain[4], 3) == 0.357


def _data() -> ReportData:
    """Group A (claude) paired on 2 tasks, group B (codex) on 5: one score per run."""
    runs, grades = [], []
    plan = {
        ("claude-code", "anthropic:opus"): {"t1": (2, 3), "t2": (3, 3)},
        ("codex", "openai:gpt"): {f"t{i}": (2, 4) for i in range(1, 6)},
    }
    for (harness, model), tasks in plan.items():
        for task, (without, with_) in tasks.items():
            for skill, score in (("none", without), ("v1", with_)):
                rid = f"{harness}-{task}-{skill}"
                runs.append(
                    make_run(
                        rid, task_id=task, harness=harness, model=model, versions={"skill": skill}
                    )
                )
                s = (score,) * 4
                grades.append(make_grade(rid, "openai:j", scores=s, key=f"{rid}-key"))
    return ReportData.build(runs, grades=grades)


def test_few_paired_tasks_are_flagged_per_group_and_pooled_rows_say_what_they_are() -> None:
    sec = ablation_section(_data(), "skill", "none", ["harness", "model"])
    table = next(t for t in sec.tables if t.slug.startswith("ablation_delta"))
    warnings = [n for n in table.notes if "warning" in n]
    # group A's CI resamples 2 tasks: flagged; group B's 5 are enough: not flagged, though
    # the two groups together hold 5 distinct tasks
    assert warnings == [
        "claude-code / anthropic:opus, Δ v1 − none: warning: the bootstrap resamples only "
        "2 paired tasks (< 5); its CI understates the uncertainty."
    ]
    pooled = {str(r[1]): r for r in table.rows if r[0] == "pooled"}
    overall = table.columns.index("overall")
    by_label = {label.split(": ", 1)[1]: row[overall] for label, row in pooled.items()}
    # A: Δ = (1 + 0) / 2 = 0.5 over 2 paired runs; B: Δ = 2 over 5
    assert by_label == pytest.approx(
        {
            "pooled Δ: mean over every paired task of every group (no CI)": (1 + 0 + 2 * 5) / 7,
            "pooled Δ: group Δs weighted by paired runs (no CI; LH-Bench Table 7's pooled "
            "Overall is this, its rubric columns are not)": (0.5 * 2 + 2 * 5) / 7,
            "pooled Δ: plain mean of the group Δs (no CI; LH-Bench Table 7's pooled rubric "
            "columns are this, its Overall is not)": (0.5 + 2) / 2,
        }
    )
    assert not any("(LH-Bench Table 7):" in label for label in pooled)


def test_the_leaderboard_flags_few_tasks_per_group_not_over_all_groups() -> None:
    from lhbench.reporting.leaderboard import leaderboard_section

    # the 'none' runs only: claude on 2 tasks, codex on 5; the tier holds 5 distinct tasks
    data = _data()
    data.runs = {k: r for k, r in data.runs.items() if r.versions["skill"] == "none"}
    data.grades = [g for g in data.grades if g.run_id in data.runs]
    sec = leaderboard_section(data, ["harness", "model"])
    warnings = [n for n in sec.tables[0].notes if "warning" in n]
    assert warnings == [
        "claude-code / anthropic:opus: warning: the bootstrap resamples only 2 tasks (< 5); "
        "its CI understates the uncertainty."
    ]
