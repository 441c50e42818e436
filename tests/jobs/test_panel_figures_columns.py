"""``panel_figures`` sums a job's grade rows as columns: the figures of a loop over them.

``lhbench judge`` sums up to 400,000 grade rows per call. The figures are summed with numpy
now; they must stay those of the plain loop over the rows this module keeps as a reference
(the code before): equal floats, not close ones, in the same run order, on rows with
failures, missing scores, three and four repeats, a judge outside the panel and a judge
label two configs share.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Iterable, Mapping

import pytest

from lhbench.jobs import grading
from lhbench.jobs.grading import PanelFigures, RunFigures, panel_figures
from lhbench.judges import panel_score, repeat_sd
from lhbench.schema import JudgeIdentity, JudgeKind, judge_labels
from lhbench.store import PanelGradeRow


def _loop_figures(
    rows: Iterable[PanelGradeRow], identities: Mapping[str, JudgeIdentity]
) -> PanelFigures:
    """The figures as a loop over the rows gives them (``panel_figures`` before numpy)."""
    scores: dict[str, dict[str, list[float]]] = {}
    spent: dict[str, list[float]] = {}
    ok_grades = 0
    for row in rows:
        cell = spent.setdefault(row.run_id, [0, 0.0, 0, 0])
        cell[1] += row.cost_usd
        cell[2] += row.input_tokens
        cell[3] += row.output_tokens
        if row.status != "ok":
            cell[0] += 1
        else:
            ok_grades += 1
            if row.tier_score is not None and row.judge_key in identities:
                scores.setdefault(row.run_id, {}).setdefault(row.judge_key, []).append(
                    row.tier_score
                )
    scored = {k for judges in scores.values() for k in judges}
    labels = judge_labels(identities[k] for k in identities if k in scored)
    order = [k for k in identities if k in scored]
    runs: dict[str, RunFigures] = {}
    floor: dict[str, list[float]] = {}
    for run_id, cell in spent.items():
        judges = scores.get(run_id)
        score = None
        if judges:
            score = panel_score(
                run_id, {labels[k]: statistics.fmean(judges[k]) for k in order if k in judges}
            )
            for k, vals in judges.items():
                if len(vals) >= 2:
                    sq = math.fsum(v * v for v in vals)
                    floor.setdefault(labels[k], []).append(
                        repeat_sd(len(vals), math.fsum(vals), sq)
                    )
        runs[run_id] = RunFigures(score, int(cell[0]), cell[1], int(cell[2]), int(cell[3]))
    return PanelFigures(runs, ok_grades, {j: statistics.fmean(v) for j, v in sorted(floor.items())})


def _identity(model: str, endpoint: str = "http://127.0.0.1:1/v1") -> JudgeIdentity:
    return JudgeIdentity(kind=JudgeKind.LLM, model=model, family="openai", endpoint=endpoint)


def _rows(rng: random.Random, keys: list[str], n_runs: int, repeats: int) -> list[PanelGradeRow]:
    rows = []
    for r in rng.sample(range(n_runs), n_runs):  # runs not in id order
        for k in keys:
            for rep in range(rng.randint(1, repeats)):
                status = rng.choice(["ok"] * 8 + ["error", "parse_error"])
                # weighted level means: values whose sums round (0.1 + 0.2 ...)
                score = (
                    None if rng.random() < 0.05 else rng.choice([0.1, 0.2, 0.3, 0.7, 1 / 3, 2.25])
                )
                rows.append(
                    PanelGradeRow(
                        f"run-{r:04d}",
                        k,
                        rep,
                        status,
                        score,
                        rng.randint(0, 5000),
                        rng.randint(0, 900),
                        rng.choice([0.0, 0.1, 0.0003, 1e-7]),
                    )
                )
    rng.shuffle(rows)
    return rows


@pytest.mark.parametrize("repeats", [1, 2, 4])
def test_the_columns_give_the_loops_figures_exactly(repeats: int) -> None:
    rng = random.Random(repeats)
    # two configs that reports name alike ("... [abc123]"), one other judge
    twin = _identity("openai:judge-a").model_copy(update={"settings": {"temperature": 0.5}})
    panel = [_identity("openai:judge-a"), twin, _identity("openai:judge-c")]
    identities = {i.key: i for i in panel}
    assert len(identities) == 3 and len(set(judge_labels(panel).values())) == 3
    outsider = _identity("openai:not-in-panel").key  # counts as spent, never scored
    rows = _rows(rng, [*identities, outsider], 300, repeats)
    # a run with only failures, one with only unscored grades
    rows.append(PanelGradeRow("run-failed", panel[0].key, 0, "error", None, 3, 4, 0.5))
    rows.append(PanelGradeRow("run-unscored", panel[2].key, 0, "ok", None, 1, 1, 0.0))

    want = _loop_figures(rows, identities)
    got = panel_figures(iter(rows), identities)  # any iterable, as the job passes a generator

    assert list(got.runs) == list(want.runs)  # the order runs were first read in
    assert got.ok_grades == want.ok_grades
    assert got.noise_floor == want.noise_floor
    assert (len(got.noise_floor) == 3) == (repeats > 1)
    for run_id, w in want.runs.items():
        g = got.runs[run_id]
        assert (g.failed, g.cost_usd, g.input_tokens, g.output_tokens) == (
            w.failed,
            w.cost_usd,
            w.input_tokens,
            w.output_tokens,
        )
        if w.score is None:
            assert g.score is None
            continue
        assert g.score is not None
        assert g.score.run_id == run_id
        assert list(g.score.judge_scores.items()) == list(w.score.judge_scores.items())
        assert (g.score.mean, g.score.variance) == (w.score.mean, w.score.variance)
    assert got.runs["run-failed"].score is None and got.runs["run-failed"].failed == 1
    assert got.runs["run-unscored"].score is None


def test_three_repeats_are_summed_as_fsum_sums() -> None:
    # 0.1 + 0.2 + 0.3 is 0.6000000000000001 added in order; fsum rounds once: 0.6
    values = [0.1, 0.2, 0.3]
    assert math.fsum(values) != 0.1 + 0.2 + 0.3
    import numpy as np

    total, total_sq = grading._exact_sums(
        np.zeros(3, dtype=np.intp), np.array(values), np.array([3])
    )
    assert total.tolist() == [math.fsum(values)]
    assert total_sq.tolist() == [math.fsum(v * v for v in values)]


def test_no_rows_no_figures() -> None:
    assert panel_figures([], {}) == PanelFigures({}, 0, {})


def test_a_runs_plain_row_is_its_figures() -> None:
    # what `lhbench judge` prints is read as plain values: the RunFigures' values
    rng = random.Random(7)
    identities = {i.key: i for i in (_identity("openai:judge-a"), _identity("openai:judge-b"))}
    rows = _rows(rng, list(identities), 40, 2)
    rows.append(PanelGradeRow("run-failed", next(iter(identities)), 0, "error", None, 3, 4, 0.5))
    got = panel_figures(rows, identities)
    as_dict = PanelFigures(dict(got.runs), got.ok_grades, got.noise_floor)  # built elsewhere
    assert as_dict == got
    for run_id, fig in got.runs.items():
        spent = (fig.failed, fig.cost_usd, fig.input_tokens, fig.output_tokens)
        if fig.score is None:
            want: tuple[object, ...] = ({}, math.nan, math.nan, *spent)
            row = got.run_row(run_id)
            assert row is not None and row[0] == {} and all(map(math.isnan, row[1:3]))
            assert row[3:] == spent
        else:
            want = (fig.score.judge_scores, fig.score.mean, fig.score.variance, *spent)
            assert got.run_row(run_id) == want
        assert as_dict.run_row(run_id) == got.run_row(run_id) or fig.score is None
    assert got.run_row("run-never-graded") is None is as_dict.run_row("run-never-graded")
    assert got.runs["run-failed"].score is None and "run-failed" in got.runs
