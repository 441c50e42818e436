"""The summary's figures read from the grade cells' columns equal the run-by-run ones.

A summary reads every run's contribution (counters, panel scores, noise floor units) with
numpy over the cells' columns (``_Summary._set_all_parts``), and an update recomputes a
written run's with ``_part_of`` and ``_score``. Both must give the same figures, bit for
bit: here the columns' are compared with the per-run code run over every run of a store
with several judges, repeats, a failed grade, stale and infrastructure-failed runs.
"""

from __future__ import annotations

import random
import shutil
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
from sqlalchemy import text

from lhbench.judges import panel_score
from lhbench.store import Store
from lhbench.web.analysis import _Summary
from lhbench.web.cells import GradeCells, TierScores
from tests.web.test_analysis import _disturb
from tests.web.test_incremental import INCREMENTAL


def _store(tmp_path: Path, template: Path, seed: int) -> Store:
    db = tmp_path / f"copy{seed}.db"
    shutil.copy(template, db)
    store = Store.open(f"sqlite:///{db}")
    _disturb(store)
    rng = random.Random(seed)
    for _ in range(25):
        rng.choice(INCREMENTAL)(store, rng)
    # the output tier scored too (its seeded grades failed to parse): most of them now
    # hold a score, repeats of one judge included
    with store.engine.begin() as conn:
        keys = conn.execute(text("SELECT key FROM grades WHERE tier = 'output'")).scalars().all()
        for key in keys:
            if rng.random() < 0.8:
                conn.execute(
                    text("UPDATE grades SET status = 'ok', tier_score = :s WHERE key = :k"),
                    {"s": rng.choice([0.25, 0.5, 1 / 3, rng.random()]), "k": key},
                )
    return store


def _by_runs(s: _Summary) -> tuple[int, int, dict, dict, dict, dict]:
    """What the summary's figures are, computed run by run as an update computes them."""
    tiers: dict = {}
    panel: defaultdict = defaultdict(Counter)
    scored: defaultdict = defaultdict(Counter)
    parse = used = 0
    parts = {}
    for run_id in s.runs:
        part = parts[run_id] = s._part_of(run_id, tiers)
        parse += part.parse
        used += part.used
        for key, judges in part.panel.items():
            panel[key].update(judges)
        for key, by in part.judges.items():
            scored[key].update(list(by))
    scores: defaultdict = defaultdict(dict)
    for run_id, part in parts.items():
        for key, judges in part.judges.items():
            names = s.names[key]
            by_name = sorted((names[j], total / n) for j, (n, total) in judges.items())
            scores[key][run_id] = panel_score(run_id, dict(by_name))
    noise = {r: sorted(p.noise) for r, p in parts.items() if p.noise}
    return parse, used, dict(panel), dict(scored), dict(scores), noise


def _exact(scores: dict) -> dict:
    return {
        key: {r: repr((s.run_id, s.judge_scores, s.mean, s.variance)) for r, s in by.items()}
        for key, by in scores.items()
    }


def test_columns_equal_the_per_run_figures(
    tmp_path: Path, seeded_template: tuple[Path, dict[str, list[str]]]
) -> None:
    for seed in range(3):
        store = _store(tmp_path, seeded_template[0], seed)
        try:
            s = _Summary.full(store, by=None, panel=None)
        finally:
            store.close()
        parse, used, panel, scored, scores, noise = _by_runs(s)
        assert s.grades_used == used and used > 0
        assert s.parse_errors == parse
        assert {k: +c for k, c in s.panel_count.items() if +c} == panel
        assert {k: +c for k, c in s.scored_count.items() if +c} == scored
        assert len(scored) >= 2  # two tiers at least
        # a tier's panel scores, every field exact (floats by repr)
        got = {k: dict(v) for k, v in s.scores.items() if v}
        assert _exact(got) == _exact(scores)
        assert any(len(x.judge_scores) >= 3 for by in scores.values() for x in by.values())
        # the noise floor's units of each run, and of each agent as its row reads them
        assert {r: sorted(s._noise([r])) for r in s.runs if s._noise([r])} == noise
        assert noise, "the store must hold repeated grades"
        for label, run_ids in s.members.items():
            want = sorted(v for r in run_ids for v in noise.get(r, []))
            assert sorted(s._noise(run_ids)) == want, label


def test_a_run_written_to_is_read_from_its_dict_not_its_rows() -> None:
    part = ("r", "1", "h" * 8, "process", "j")
    other = ("r", "1", "h" * 8, "process", "k")
    cells = GradeCells(
        ["b", "a"],
        [part, other],
        np.array([1, 0, 1], dtype=np.int64),  # not grouped by run: sorted on the way in
        np.array([0, 0, 1], dtype=np.int64),
        np.arange(21, dtype=np.float64).reshape(3, 7),
    )
    # rows 0 and 2 are run "a"'s, row 1 run "b"'s
    assert cells.get("a") == {part: [0.0, *range(1, 7)], other: [14.0, *range(15, 21)]}
    assert cells.get("b") == {part: [7.0, *range(8, 14)]}
    assert cells.get("none") == {}
    old = cells.replace("a", {other: [1.0] * 7})
    assert old[part][0] == 0.0
    assert cells.get("a") == {other: [1.0] * 7}
    # grouped by run: "b"'s row first, then "a"'s two, no longer read
    assert cells.row_is_read().tolist() == [True, False, False]
    runs, parts, run, part_no, values = cells.columns()
    got = {(runs[r], parts[p]): v for r, p, v in zip(run, part_no, values.tolist(), strict=True)}
    assert got == {("b", part): [7.0, *range(8, 14)], ("a", other): [1.0] * 7}


def test_tier_scores_written_runs_shadow_the_table() -> None:
    from lhbench.judges import PanelScoreTable

    matrix = np.array([[3.0, np.nan], [2.0, 4.0]])
    scores = TierScores(PanelScoreTable.of_judge_matrix(["r1", "r2"], ["A", "B"], matrix))
    assert scores["r2"] == panel_score("r2", {"A": 2.0, "B": 4.0})
    assert scores["r1"].judge_scores == {"A": 3.0} and scores["r1"].variance == 0.0
    kept = scores.copy()
    scores.pop("r1")
    assert "r1" not in scores and len(scores) == 1 and list(scores) == ["r2"]
    scores["r3"] = panel_score("r3", {"A": 1.0})
    assert len(scores) == 2 and set(scores) == {"r2", "r3"}
    # the copy an analysis published is not changed by later writes
    assert set(kept) == {"r1", "r2"} and len(kept) == 2
    assert scores.scored(["r1", "r2", "r3"]) == ["r2", "r3"]
    table = scores.table_of(["r3", "r2"])
    assert table.run_ids == ["r3", "r2"] and table.mean.tolist() == [1.0, 3.0]
    assert table.has_judge.tolist() == [[True, False], [True, True]]
    assert table.judge_scores.tolist() == [[1.0, 0.0], [2.0, 4.0]]
    # the leaderboard reads the same figures as from the runs' scores one by one
    from lhbench.reporting import leaderboard_row

    for ids in (["r3", "r2"], ["r2"], ["r3"]):
        objects = [scores[r] for r in ids]
        assert leaderboard_row("g", scores.table_of(ids), [("p", r) for r in ids], panel=2) == (
            leaderboard_row("g", objects, [("p", r) for r in ids], panel=2)
        )
    # a judge the table has no column for: built from the scores
    scores["r4"] = panel_score("r4", {"C": 2.0})
    assert scores.table_of(["r4", "r2"]).judges == ["A", "B", "C"]
