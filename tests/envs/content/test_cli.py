"""``lhbench content extract|check`` as a user runs them, and the pack's verify script."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from lhbench.envs import run_verify
from lhbench.sandbox import Sandbox
from tests.cli.helpers import cli
from tests.envs.content.conftest import CONTEXT, PACK
from tests.envs.content.helpers import cite_of, replace_in

VERIFY = PACK / "tasks/course/verify.py"


def test_extract_writes_the_frozen_files_and_prints_the_sources(tmp_path: Path) -> None:
    res = cli(
        "content", "extract", str(PACK / "data_room"), "--out", str(tmp_path / "ctx"), "--json"
    )
    assert res.exit_code == 0, res.stderr
    rows = json.loads(res.stdout)
    assert [r["id"] for r in rows] == sorted(r["id"] for r in rows)
    assert (tmp_path / "ctx/sources.json").read_bytes() == (CONTEXT / "sources.json").read_bytes()


def test_extract_of_a_broken_data_room_is_a_short_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "room").mkdir()
    (tmp_path / "room/deck.pptx").write_text("not a zip")
    res = cli("content", "extract", str(tmp_path / "room"), "--out", str(tmp_path / "o"))
    assert res.exit_code == 2
    assert "deck.pptx" in res.stderr and "not a valid Office file" in res.stderr
    assert "Traceback" not in res.stderr


def test_check_exits_0_on_the_reference_and_1_naming_the_bad_citation(course: Path) -> None:
    ok = cli("content", "check", str(course), "--pack", "content-mini", "--no-slides", "--json")
    assert ok.exit_code == 0 and json.loads(ok.stdout)["passed"] is True
    eff = course / "course/chapters/efficiency.md"
    replace_in(eff, cite_of(eff, "SCOP averages"), "[ghost:L2]")
    bad = cli("content", "check", str(course), "--pack", "content-mini", "--no-slides", "--json")
    assert bad.exit_code == 1
    doc = json.loads(bad.stdout)
    assert doc["failed_checks"] == ["exists"]
    assert doc["findings"][0]["evidence"] == "[ghost:L2]"


def test_the_verify_script_labels_in_the_sandbox(course: Path, sandbox: Sandbox) -> None:
    good = run_verify(VERIFY, root=course, sandbox=sandbox)
    assert good.passed and "every check passed" in good.detail
    eff = course / "course/chapters/efficiency.md"
    replace_in(eff, "median SCOP of only 2.6.", "median SCOP of only 1.6.")
    bad = run_verify(VERIFY, root=course, sandbox=sandbox)
    assert not bad.passed and "supported failed 1" in bad.detail


def test_the_verify_script_fails_a_symlinked_course_file_without_reading_it(
    course: Path, sandbox: Sandbox
) -> None:
    notes = course / "research/notes.jsonl"
    notes.unlink()
    notes.symlink_to("/etc/hostname")
    res = run_verify(VERIFY, root=course, sandbox=sandbox)
    assert not res.passed and "course file refused" in res.detail


def test_check_refuses_a_workspace_that_is_not_a_directory(tmp_path: Path) -> None:
    res = cli("content", "check", str(tmp_path / "nope"), "--pack", "content-mini", "--no-slides")
    assert res.exit_code == 2 and "not a directory" in res.stderr


def test_the_generated_pack_has_no_stray_files() -> None:
    # everything under the pack is made by the script; nothing else sneaks in
    names = {p.relative_to(PACK).parts[0] for p in PACK.iterdir()}
    assert names == {
        "README.md",
        "pack.yaml",
        "data_room",
        "ground_truth",
        "reference",
        "rubrics",
        "tasks",
    }


def test_grade_stores_a_grade_per_run_and_never_scores_what_it_cannot_check(
    course: Path, tmp_path: Path
) -> None:
    import lhbench
    from tests.factories import make_run

    db = f"sqlite:///{tmp_path / 'g.db'}"
    eff = course / "course/chapters/efficiency.md"
    replace_in(eff, cite_of(eff, "SCOP averages"), "[ghost:L2]")
    # workspaces where the harness keeps them (<home>/runs/<run id>/workspace)
    runs = tmp_path / "home" / "runs"
    good = runs / "good" / "workspace"
    shutil.copytree(course, good)
    hostile = runs / "hostile" / "workspace"
    shutil.copytree(course, hostile)
    (hostile / "research/notes.jsonl").unlink()
    (hostile / "research/notes.jsonl").symlink_to("/etc/hostname")
    # a workspace not shaped as the harness keeps one is never taken as a run's state
    stray = tmp_path / "stray"
    shutil.copytree(course, stray)
    with lhbench.open_store(db) as store:
        for rid, ws in (
            ("good", good),
            ("gone", runs / "gone" / "workspace"),
            ("hostile", hostile),
            ("stray", stray),
        ):
            store.save_run(
                make_run(
                    rid, pack_id="content-mini", task_id="course", metadata={"workspace": str(ws)}
                )
            )
    res = cli("content", "grade", "content-mini", "--db", db, "--no-slides", "--json")
    assert res.exit_code == 0, res.stderr
    rows = {r["run"]: r for r in json.loads(res.stdout)}
    assert rows["good"]["stored"] is True and "exists failed 1" in rows["good"]["detail"]
    assert rows["gone"] == {"run": "gone", "stored": False, "detail": "no kept workspace"}
    assert rows["stray"] == {"run": "stray", "stored": False, "detail": "no kept workspace"}
    assert rows["hostile"]["stored"] is False and "refused" in rows["hostile"]["detail"]
    with lhbench.open_store(db) as store:
        grades = store.list_grades(rubric_id="content-checks")
    assert [g.run_id for g in grades] == ["good"]
    evidence = {s.dimension_id: s.evidence for s in grades[0].scores}
    assert "[ghost:L2]" in evidence["citation_validity"]
