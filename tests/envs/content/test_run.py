"""``lhbench run content-mini --harness native`` with the model stub, graded end to end.

The stub agent (``lhbench.testing.content_agent``) uses the content tools over MCP in
the sandbox; the task's verify script and the content checks label the run (the checks
store the programmatic grade, which ``lhbench content grade`` recomputes on demand); the
generic rubrics are graded on both scales by a stub judge.
"""

from __future__ import annotations

import json
from pathlib import Path

import lhbench
from lhbench.config import load_settings
from lhbench.envs.content import load_ground_truth
from lhbench.schema import JudgeKind, Scale
from lhbench.testing import ModelStub
from lhbench.testing.content_agent import content_agent_script
from tests.cli.helpers import cli
from tests.envs.content.conftest import GT_FILE

TOOLS = {
    "check_slides",
    "list_sources",
    "read_source",
    "search_sources",
    "record_note",
    "write_chapter_plan",
    "write_chapter",
}


def test_a_native_run_uses_the_tools_and_is_graded_end_to_end(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'e2e.db'}"
    settings = load_settings(home=tmp_path / "home")
    with ModelStub(content_agent_script()) as stub, lhbench.open_store(db) as store:
        model = f"openai:stub-agent@{stub.base_url}"
        [run] = lhbench.run_agents("content-mini", model=model, store=store, settings=settings).runs
        assert run.status.value == "completed"
        steps = store.get_trajectory(run.id).steps
        called = {s.tool_name.split("content_", 1)[-1] for s in steps if s.tool_name}
        assert called >= TOOLS
        assert not [s for s in steps if s.tool_name and s.is_error]  # every tool call worked
        slide_out = "\n".join(
            s.tool_output or s.content
            for s in steps
            if (s.tool_name or "").endswith("check_slides")
        )
        # rendered inside the sandbox, by the tools' own server
        assert slide_out.count(": fits") == 3, slide_out
        labels = {lab.source: lab for lab in store.list_labels() if lab.run_id == run.id}
        assert set(labels) == {"verify:course/verify.py", "content:course"}
        assert all(lab.passed is True for lab in labels.values()), labels
        # the run's verification already ran the content checks and stored their grade
        [auto] = store.list_grades(run_id=run.id, rubric_id="content-checks")
        assert {s.dimension_id: s.score for s in auto.scores}["citation_validity"] == 5
        ws = Path(run.metadata["workspace"])
        chapters = {c.id for c in load_ground_truth(GT_FILE).chapters}
        assert {p.stem for p in (ws / "course/chapters").glob("*.md")} == chapters
        assert (ws / "research/notes.jsonl").read_text().count("\n") == 1

        # the programmatic grade, through the CLI as a user runs it
        res = cli(
            "content",
            "grade",
            "content-mini",
            "--db",
            db,
            "--json",
            env={"LHBENCH_HOME": str(tmp_path / "home")},
        )
        assert res.exit_code == 0, res.stderr
        [row] = json.loads(res.stdout)
        assert row["run"] == run.id and row["stored"] is True
        [checks] = store.list_grades(run_id=run.id, rubric_id="content-checks")
        assert checks.judge.kind is JudgeKind.PROGRAMMATIC
        scores = {s.dimension_id: s.score for s in checks.scores}
        assert scores["citation_validity"] == 5 and scores["chapter_completeness"] == 5
        assert scores["slide_fit"] in (5, None)  # None only where Chromium is missing
        assert scores["source_coverage"] is not None and scores["source_coverage"] < 5

        # the generic rubrics, both scales, by a (stub) judge panel
        judge = f"openai:judge-a@{stub.base_url}"
        five = lhbench.grade(
            "content-mini",
            panel=[judge],
            tier="output",
            rubric="content-generic-5pt",
            store=store,
            settings=settings,
        )
        three = lhbench.grade(
            "content-mini",
            panel=[judge],
            tier="output",
            rubric="content-generic-3pt",
            store=store,
            settings=settings,
        )
    assert [g.status.value for g in five.grades + three.grades] == ["ok", "ok"]
    assert {s.scale for s in five.grades[0].scores} == {Scale("1-5")}
    assert {s.scale for s in three.grades[0].scores} == {Scale("0-2")}
    assert len(five.grades[0].scores) == len(three.grades[0].scores) == 5
