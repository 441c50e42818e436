"""The arena section's figures are all over the votes Elo rates, and say how many."""

from __future__ import annotations

import re

import pytest
from scipy import stats as sps

from lhbench.reporting import ReportData
from lhbench.reporting.arena import arena_section
from lhbench.schema import PreferenceVote
from tests.factories import make_run

BY = ("harness", "model")


def _vote(i: int, a: str, b: str, left: str, winner: str, quality: int | None) -> PreferenceVote:
    return PreferenceVote(
        id=f"v{i}",
        pack_id="pack",
        task_id="task-1",
        run_a=a,
        run_b=b,
        left=left,  # type: ignore[arg-type]
        winner=winner,  # type: ignore[arg-type]
        quality=quality,
        annotator="sme",
    )


def test_position_bias_and_kruskal_wallis_use_the_votes_elo_uses() -> None:
    runs = [
        make_run("a1", harness="claude-code", model="anthropic:opus"),
        make_run("a2", harness="claude-code", model="anthropic:opus"),
        make_run("b1", harness="codex", model="openai:gpt-5.2"),
    ]
    votes = [
        # the four votes between the two groups (what Elo rates)
        _vote(1, "a1", "b1", "a", "a", 4),  # left won; A rated 4
        _vote(2, "a1", "b1", "b", "a", 5),  # right won; A rated 5
        _vote(3, "b1", "a1", "a", "a", 2),  # left won; B rated 2
        _vote(4, "a1", "b1", "a", "tie", 3),
        # not rated by Elo: two runs of one group, and a run the store does not hold
        *[_vote(10 + i, "a1", "a2", "a", "a", 1) for i in range(5)],
        *[_vote(20 + i, "a1", "ghost", "a", "a", 1) for i in range(3)],
    ]
    sec, elo = arena_section(ReportData.build(runs, votes=votes), BY)
    assert elo is not None and elo.n_votes == 4
    notes = " ".join(sec.tables[0].notes)
    # ties excluded: 2 of the 3 decisive Elo votes were won by the left-shown run
    assert "left-shown won 2/3" in notes
    assert "left-shown won 2/4" in notes  # ties counted as not-left
    h = float(re.search(r"H = ([0-9.]+)", notes).group(1))  # type: ignore[union-attr]
    assert h == pytest.approx(sps.kruskal([4, 5], [2]).statistic, abs=5e-4)
    assert "n = 3 rated wins" in notes
    assert "over the 4 human votes Elo rates" in notes and "8 other human vote(s)" in notes
    # winner pass rate (quality >= 4) over the same votes: A won twice, both rated >= 4
    passes = {r[0]: r[1:3] for r in sec.tables[2].rows}
    assert passes == {"claude-code / anthropic:opus": [2, 2], "codex / openai:gpt-5.2": [0, 1]}
