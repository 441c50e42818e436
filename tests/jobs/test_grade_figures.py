"""A grade job's outcome sums its grades per run from plain columns: the same figures.

``lhbench judge`` prints every run's panel score, its failures and what its grades cost. At
a million stored grades, reading them as ``Grade`` objects took minutes and gigabytes; the
outcome's ``figures`` come from the grade rows' columns instead. They must be the figures
:func:`~lhbench.judges.panel_scores` and :func:`~lhbench.judges.noise_floor` give from the
``Grade`` objects, exactly, with repeats that differ, a parse failure and a stale judge.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

from lhbench.api import grade
from lhbench.config import Settings
from lhbench.judges import noise_floor, panel_scores, tier_keys
from lhbench.store import Store
from lhbench.testing import ModelStub, StubRequest, rubric_judge_script, run_mark
from tests.cli.helpers import cli
from tests.judges.helpers import JUDGE_NAMES, seed_runs, stub_specs


def _settings(tmp_path: Path, base_url: str) -> Settings:
    models = {
        s.ref: {"model": f"openai:{s.name}", "base_url": base_url, "family": s.family}
        for s in stub_specs(base_url)
    }
    return Settings(home=tmp_path / "home", models=models, judge_panel=list(JUDGE_NAMES))


def test_the_outcomes_figures_are_the_grades_figures(tmp_path: Path, store_url: str) -> None:
    url = store_url  # SQLite, and PostgreSQL where the tests have one
    turns = itertools.count()

    def score(model: str, dimension: str, req: StubRequest) -> int:
        if model.endswith("judge-gpt") and run_mark(req) == "r001":
            return 99  # off the scale every time: a parse failure, stored
        return 1 + next(turns) % 5  # repeats that differ: a noise floor above 0

    with Store.open(url) as store, ModelStub(rubric_judge_script(score)) as stub:
        runs = seed_runs(store, 6)
        settings = _settings(tmp_path, stub.base_url)
        kw = {"rubric": "figma-to-code", "store": store, "settings": settings, "repeats": 2}
        first = grade("figma-mini", **kw)  # type: ignore[arg-type]
        assert first.summary.done == 6 * 3 * 2 - 2 and first.summary.failed == 2
        # a third repeat of one judge: outside a plan of two repeats
        grade("figma-mini", panel=[JUDGE_NAMES[0]], **{**kw, "repeats": 3})  # type: ignore[arg-type]
        full = grade("figma-mini", **kw)  # type: ignore[arg-type]
        lean = grade("figma-mini", with_grades=False, **kw)  # type: ignore[arg-type]
        assert stub.count > 0
        # the command prints them: every run's row as the Grade objects give it
        panel = ",".join(f"openai:{n}@{stub.base_url}" for n in JUDGE_NAMES)
        args = ["judge", "--pack", "figma-mini", "--rubric", "figma-to-code", "--panel", panel]
        args += ["--repeats", "2", "--db", url]
        ran = cli(*args, "--json")
        assert ran.exit_code == 0, ran.stderr
        table = cli(*args)  # the table, as a person reads it
        assert table.exit_code == 0, table.stderr

    assert lean.grades == [] and len(full.grades) == 36
    for out in (full, lean):
        assert out.figures is not None
        figures = out.figures
        [key] = tier_keys(full.grades)
        want = panel_scores(full.grades, key)
        assert set(figures.runs) == {r.id for r in runs} == set(want)
        for run_id, fig in figures.runs.items():
            mine = [g for g in full.grades if g.run_id == run_id]
            assert fig.score is not None
            assert fig.score.judge_scores == want[run_id].judge_scores
            assert (fig.score.mean, fig.score.variance) == (
                want[run_id].mean,
                want[run_id].variance,
            )
            assert fig.failed == sum(1 for g in mine if g.status.value != "ok")
            assert fig.input_tokens == sum(g.usage.input_tokens for g in mine) > 0
            assert fig.output_tokens == sum(g.usage.output_tokens for g in mine) > 0
            assert math.isclose(fig.cost_usd, sum(g.cost_usd or 0.0 for g in mine))
        assert figures.runs["r001"].failed == 2
        assert figures.ok_grades == sum(1 for g in full.grades if g.status.value == "ok") == 34
        floor = noise_floor(full.grades)
        assert figures.noise_floor == floor and len(floor) == 3 and min(floor.values()) > 0

    doc = json.loads(ran.stdout)
    panel_keys = {g.judge.key for g in full.grades}
    with Store.open(url) as store:
        mine_all = [g for g in store.list_grades() if g.judge.key in panel_keys and g.repeat < 2]
    want = panel_scores(mine_all, key)
    assert doc["planned"] == doc["skipped"] == 36 and doc["ok_grades"] == 34
    assert {r["run"]: r["judges"] for r in doc["runs"]} == {
        r: s.judge_scores for r, s in want.items()
    }
    assert doc["noise_floor"] == noise_floor(mine_all)
    for run_id, score in want.items():
        assert f"{score.mean:.2f}" in table.stdout and run_id in table.stdout
    assert "noise floor" in table.stdout
