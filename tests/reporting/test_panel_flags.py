"""Panel figures say what they average: κ pairs left undefined, runs a judge failed on."""

from __future__ import annotations

import math

from lhbench.reporting import ReportData
from lhbench.reporting.agreement import agreement_section
from lhbench.reporting.leaderboard import leaderboard_section
from lhbench.schema import GradeStatus
from lhbench.stats import panel_agreement
from tests.factories import make_grade, make_run

BY = ("harness", "model")


def test_mean_pairwise_kappa_says_how_many_pairs_were_undefined() -> None:
    runs = [f"r{i}" for i in range(4)]
    grades = [
        # judges a and b agree and vary; c gives 3 everywhere and so does d: κ(c, d) = 0/0
        *[make_grade(r, judge="openai:a", scores=(i + 1,) * 4) for i, r in enumerate(runs)],
        *[make_grade(r, judge="google-gla:b", scores=(i + 1,) * 4) for i, r in enumerate(runs)],
        *[make_grade(r, judge="anthropic:c", scores=(3,) * 4) for r in runs],
        *[make_grade(r, judge="x:d", scores=(3,) * 4) for r in runs],
    ]
    agree = panel_agreement(grades, levels=[1, 2, 3, 4, 5])
    assert agree.n_pairs == 6
    assert sum(1 for k in agree.pairwise_kappa.values() if math.isnan(k)) == 1
    assert agree.undefined_pairs == 1
    assert agree.kappa_pairs_note == "5 of 6 pair(s) (1 undefined)"
    data = ReportData.build([make_run(r) for r in runs], grades=grades)
    sec, _ = agreement_section(data)
    summary = sec.tables[0]
    row = dict(zip(summary.columns, summary.rows[0], strict=True))
    assert row["κ pairs"] == 6 and row["undefined κ pairs"] == 1
    assert any("undefined κ pairs: pairs left out of the mean" in n for n in summary.notes)


def test_an_incomplete_panel_is_flagged_on_the_leaderboard() -> None:
    runs = [make_run(f"r{i}", task_id=f"t{i}") for i in range(3)]
    grades = [
        *[make_grade(r.id, judge="openai:a") for r in runs],
        make_grade("r0", judge="anthropic:b"),
        make_grade("r1", judge="anthropic:b"),
        # judge b failed on r2: r2's panel score is judge a's alone
        make_grade(
            "r2",
            judge="anthropic:b",
            scores=(),
            status=GradeStatus.ERROR,
            error="timed out",
        ),
    ]
    sec = leaderboard_section(ReportData.build(runs, grades=grades), BY)
    board = sec.tables[0]
    [row] = board.rows
    assert dict(zip(board.columns, row, strict=True))["incomplete panel"] == "1 of 3 runs"
    assert any(
        "incomplete panel on 1 of 3 run(s): scored by fewer than the tier's 2 judges" in n
        for n in board.notes
    )
    # a complete panel is not flagged
    whole = [g for g in grades if g.run_id != "r2"]
    sec = leaderboard_section(ReportData.build(runs[:2], grades=whole), BY)
    board = sec.tables[0]
    assert dict(zip(board.columns, board.rows[0], strict=True))["incomplete panel"] == ""
    assert not any("incomplete panel" in n for n in board.notes)
