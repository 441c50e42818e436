"""A grade job asked for no objects builds a ``Run`` model only for a run with a gap.

``lhbench judge`` (``with_grades=False``) on a team's store finds 67,000 runs of a pack
fully graded; building a ``Run`` model for each (dates parsed, JSON columns decoded,
validated) cost seconds per call. The runs are read as plain rows, the runs with every
grade stored ok are counted from one GROUP BY, and ``Run`` models are built for the others
only. Bounded without a clock: which runs are built as models.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

import lhbench.store as store_module
from lhbench.api import grade
from lhbench.config import Settings
from lhbench.schema import Run
from lhbench.store import Store
from lhbench.testing import ModelStub, StubRequest, rubric_judge_script, run_mark
from tests.judges.helpers import JUDGE_NAMES, seed_runs, stub_specs


def _settings(tmp_path: Path, base_url: str) -> Settings:
    models = {
        s.ref: {"model": f"openai:{s.name}", "base_url": base_url, "family": s.family}
        for s in stub_specs(base_url)
    }
    return Settings(home=tmp_path / "home", models=models, judge_panel=list(JUDGE_NAMES))


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the ``Run`` models built from stored rows."""
    ids: list[str] = []
    real = Run.model_validate.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Run], obj: Any, *a: Any, **kw: Any) -> Run:
        run = real(cls, obj, *a, **kw)
        ids.append(run.id)
        return run

    monkeypatch.setattr(Run, "model_validate", classmethod(counted))
    return ids


def test_a_lean_grade_job_builds_runs_only_for_its_gaps(
    tmp_path: Path, store_url: str, built: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = itertools.count()

    def score(model: str, dimension: str, req: StubRequest) -> int:
        if model.endswith("judge-gpt") and run_mark(req) == "r002":
            return 99  # off the scale: a parse failure, stored (r002 keeps a gap)
        return 1 + next(turns) % 5

    with Store.open(store_url) as store, ModelStub(rubric_judge_script(score)) as stub:
        runs = seed_runs(store, 8)
        settings = _settings(tmp_path, stub.base_url)
        kw = {"rubric": "figma-to-code", "store": store, "settings": settings}
        first = grade("figma-mini", with_grades=False, **kw)  # type: ignore[arg-type]
        # nothing stored yet: every run has a gap, every run is built
        assert sorted(set(built)) == [r.id for r in runs]
        assert first.summary.done == 8 * 3 - 1 and first.summary.failed == 1
        calls = stub.count
        built.clear()
        sql: list[str] = []

        def seen(_conn: object, _cursor: object, statement: str, *_: object) -> None:
            sql.append(statement)

        event.listen(store.engine, "before_cursor_execute", seen)
        real_complete = store_module.complete_runs

        def slow_complete(*a: Any, **kw: Any) -> Any:
            time.sleep(0.3)
            return real_complete(*a, **kw)

        try:
            with monkeypatch.context() as m:
                m.setattr(store_module, "complete_runs", slow_complete)
                t0 = time.monotonic()
                again = grade("figma-mini", with_grades=False, **kw)  # type: ignore[arg-type]
                again_wall = time.monotonic() - t0
        finally:
            event.remove(store.engine, "before_cursor_execute", seen)
        lean_built = list(built)
        full = grade("figma-mini", **kw)  # type: ignore[arg-type]

    # the second call: the parse failure is final, kept; only r002 was built as a Run
    assert stub.count == calls
    assert again.summary.planned == again.summary.skipped == 24
    # the job's time counts its stored lookup, made before the job when lean (without it,
    # a job that found everything stored said 0.0 s, which bench/scale.py printed as the
    # job's): the lookup is made to take 0.3 s here
    assert 0.3 <= again.summary.seconds <= again_wall
    assert [r.id for r in again.runs] == ["r002"]
    assert [r.id for r in again.graded] == [r.id for r in runs] == [r.id for r in full.graded]
    assert [(r.harness, r.model) for r in again.graded] == [(r.harness, r.model) for r in runs]
    assert [r.id for r in full.runs] == [r.id for r in runs]  # the API's default: every Run
    assert lean_built == ["r002"]  # main: all 8
    # the panel's grades read once (on the driver's cursor: not seen here), the complete
    # runs counted from them and the figures reused (nothing ran); through SQLAlchemy only
    # the gap's states by key. Main: a GROUP BY of the grades besides
    on_grades = [q for q in sql if "FROM grades" in q]
    assert len(on_grades) == 1 and "GROUP BY" not in on_grades[0], on_grades
    assert "key IN" in on_grades[0].replace('"key"', "key")
    assert again.figures is not None and full.figures is not None
    assert again.figures == full.figures
