"""The loops that ran beside the job runner now run through it: stored work is skipped.

``lhbench content grade``, the chapter-rubric synthesis and ``lhbench failures --llm``
each plan keyed units, skip what is stored, run the rest bounded and print the runner's
summary; a unit that fails does not stop the others, and the next run does only it.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from lhbench.config import load_settings
from lhbench.jobs.content import synthesize_chapter_rubrics
from lhbench.schema import RunStatus
from lhbench.store import Store
from lhbench.testing import ModelStub
from lhbench.testing.scripts import auto_script
from lhbench.testing.stub import StubReply, StubRequest
from tests.cli.helpers import cli
from tests.envs.content.conftest import REFERENCE
from tests.factories import make_run, make_trajectory


def test_content_grade_skips_runs_whose_checks_grade_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lhbench.envs.content.grading as grading

    home = tmp_path / "home"
    db = f"sqlite:///{tmp_path / 's.db'}"
    with Store.open(db) as store:
        for rid in ("run-a", "run-b"):
            ws = home / "runs" / rid / "workspace"
            shutil.copytree(REFERENCE, ws)
            store.save_run(
                make_run(
                    rid,
                    pack_id="content-mini",
                    task_id="course",
                    harness="native",
                    status=RunStatus.COMPLETED,
                    metadata={"workspace": str(ws)},
                )
            )
    checked: list[Path] = []
    real = grading.check_task_workspace

    def counting(*args: Any, **kw: Any) -> Any:
        checked.append(args[2])
        return real(*args, **kw)

    monkeypatch.setattr(grading, "check_task_workspace", counting)
    env = {"LHBENCH_HOME": str(home)}
    args = ["content", "grade", "content-mini", "--no-slides", "--db", db, "--json"]
    first = cli(*args, env=env)
    assert first.exit_code == 0, first.stderr
    assert len(checked) == 2
    assert "content-grade: planned 2 · skipped 0 (stored) · done 2" in first.stderr
    rows = {r["run"]: r for r in json.loads(first.stdout)}
    assert all(r["stored"] and r["tier_score"] is not None for r in rows.values())

    again = cli(*args, env=env)
    assert again.exit_code == 0, again.stderr
    assert len(checked) == 2  # nothing checked again
    assert "planned 2 · skipped 2 (stored) · done 0" in again.stderr
    assert json.loads(again.stdout) == list(rows.values())
    with Store.open(db) as store:
        assert len(store.list_grades(rubric_id="content-checks")) == 2


def _fails_on(chapter: str, broken: dict[str, bool]):  # type: ignore[no-untyped-def]
    """Valid chapter rubrics, except a server error for one chapter while ``broken``."""
    fallback = auto_script()

    def script(req: StubRequest) -> StubReply:
        if broken["on"] and f"({chapter})\nInstruction" in req.text():
            return StubReply(fault="500")
        return fallback(req)

    return script


def test_chapter_rubric_synthesis_goes_on_past_a_failure_and_resumes_with_the_rest(
    tmp_path: Path,
) -> None:
    broken = {"on": True}
    with ModelStub(_fails_on("efficiency", broken)) as stub:
        settings = load_settings(
            home=tmp_path / "home",
            db_url=f"sqlite:///{tmp_path / 's.db'}",
            models={"writer": {"model": "openai:w", "base_url": stub.base_url, "max_retries": 0}},
        )
        with Store.open(settings.database_url) as store:
            res = asyncio.run(
                synthesize_chapter_rubrics(store, settings, pack="content-mini", model="writer")
            )
            s = res.summary
            # the failing chapter (both scales) did not stop the other chapters
            assert (s.planned, s.skipped, s.done, s.failed) == (6, 0, 4, 2)
            assert len(store.list_chapter_rubrics()) == 4
            failed = [r for r in res.rows if r.error]
            assert {r.chapter_id for r in failed} == {"efficiency"}
            calls = stub.count

            broken["on"] = False
            again = asyncio.run(
                synthesize_chapter_rubrics(store, settings, pack="content-mini", model="writer")
            )
            # only the two missing rubrics are asked for
            assert (again.summary.skipped, again.summary.done) == (4, 2)
            assert stub.count == calls + 2
            assert all(r.error is None for r in again.rows) and len(again.rows) == 6
            assert sum(r.new for r in again.rows) == 2
            third = asyncio.run(
                synthesize_chapter_rubrics(store, settings, pack="content-mini", model="writer")
            )
            assert third.summary.skipped == 6 and stub.count == calls + 2


def test_failures_llm_asks_the_model_once_per_run(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    with Store.open(db) as store:
        for rid in ("r1", "r2", "r3"):
            store.save_run(make_run(rid))
            traj = make_trajectory(rid)
            # distinct prompts: identical requests in flight are answered by one call
            traj.steps[0] = traj.steps[0].model_copy(update={"content": f"Build page {rid}"})
            store.save_trajectory(traj)

    def answer(req: StubRequest) -> StubReply:
        return StubReply.call(req.tool_names[0], {"errors": []})

    with ModelStub(answer) as stub:
        args = ["failures", "--llm", f"openai:extractor@{stub.base_url}", "--db", db, "--json"]
        first = cli(*args)
        assert first.exit_code == 0, first.stderr
        assert stub.count == 3
        assert "failure-extraction: planned 3 · skipped 0 (stored) · done 3" in first.stderr
        agree = json.loads(first.stdout)["llm_agreement"]
        second = cli(*args)
        assert second.exit_code == 0, second.stderr
        assert stub.count == 3  # every run's extraction is stored: no model call
        assert "planned 3 · skipped 3 (stored) · done 0" in second.stderr
        assert json.loads(second.stdout)["llm_agreement"] == agree
    with Store.open(db) as store:
        assert store.delete_run("r1")["failure_extractions"] == 1
