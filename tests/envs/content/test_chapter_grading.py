"""Per-chapter grading: error rows for answers that never parse, resume, and what a judge sees."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from lhbench.config import load_settings
from lhbench.envs.content import GroundTruth
from lhbench.envs.content.chapter_evidence import MAX_EVIDENCE_CHARS, chapter_artifacts
from lhbench.errors import ConfigError
from lhbench.jobs.content import grade_chapters, synthesize_chapter_rubrics
from lhbench.schema import Artifact, GradeStatus, RunStatus, Scale
from lhbench.stats.course import course_scores
from lhbench.store import Store
from lhbench.testing import ModelStub
from lhbench.testing.scripts import auto_script
from lhbench.testing.stub import StubReply, StubRequest
from tests.cli.helpers import cli
from tests.envs.content.conftest import PACK, REFERENCE
from tests.factories import make_run

JUDGE = "judge-a"


def _judge_failing_on(chapter: str, failing: dict[str, bool]):  # type: ignore[no-untyped-def]
    """Valid grades, except prose (no output tool call) for one chapter while ``failing``."""
    fallback = auto_script()

    def script(req: StubRequest) -> StubReply:
        if failing["on"] and f"chapter-brief/{chapter}" in req.text():
            return StubReply(content="This chapter is fine, I think. Score: great.")
        return fallback(req)

    return script


def _kept_run(home: Path, run_id: str) -> Path:
    ws = home / "runs" / run_id / "workspace"
    shutil.copytree(REFERENCE, ws)
    return ws


def test_an_answer_that_never_parses_is_an_error_row_and_its_chapter_is_excluded(
    tmp_path: Path,
) -> None:
    settings = load_settings(home=tmp_path / "home", db_url=f"sqlite:///{tmp_path / 's.db'}")
    ws = _kept_run(tmp_path / "home", "run-a")
    with Store.open(settings.database_url) as store, ModelStub(auto_script()) as writer:
        rows = asyncio.run(
            synthesize_chapter_rubrics(
                store, settings, pack="content-mini", model=f"openai:w@{writer.base_url}"
            )
        ).rows
        assert all(r.new and r.error is None for r in rows) and len(rows) == 6
        run = make_run(
            "run-a",
            pack_id="content-mini",
            task_id="course",
            harness="native",
            status=RunStatus.COMPLETED,
            metadata={"workspace": str(ws)},
        )
        store.save_run(run)
        failing = {"on": True}
        with ModelStub(_judge_failing_on("efficiency", failing)) as stub:
            panel = [f"openai:{JUDGE}@{stub.base_url}"]
            res = asyncio.run(grade_chapters(store, settings, pack="content-mini", panel=panel))
            assert len(res.grades) == 3 * 2 * 2
            bad = [g for g in res.grades if g.chapter_id == "efficiency"]
            assert len(bad) == 4
            for g in bad:
                assert g.grade.status is GradeStatus.PARSE_ERROR
                assert g.grade.tier_score is None and not any(s.score for s in g.grade.scores)
                assert "fine, I think" in (g.grade.raw_output or "")
            good = [g for g in res.grades if g.chapter_id != "efficiency"]
            assert all(g.grade.status is GradeStatus.OK for g in good)
            scores = course_scores(store.list_chapter_grades())
            for scale in (Scale.ZERO_TO_TWO, Scale.ONE_TO_FIVE):
                cs = scores[("run-a", scale)]
                assert cs.n == 2 and cs.excluded == ("efficiency",)
            # a rerun keeps the final failures (no model call), and never duplicates
            calls = stub.count
            again = asyncio.run(grade_chapters(store, settings, pack="content-mini", panel=panel))
            assert again.summaries[0].skipped == 12 and again.summaries[0].done == 0
            assert stub.count == calls
            assert len(store.list_chapter_grades()) == 12
            # --retry-errors re-asks them; the judge now answers: the error rows are replaced
            failing["on"] = False
            retry = asyncio.run(
                grade_chapters(store, settings, pack="content-mini", panel=panel, retry_errors=True)
            )
            assert retry.summaries[0].retried == 4 and retry.summaries[0].done == 4
        after = store.list_chapter_grades()
        assert len(after) == 12 and all(g.grade.status is GradeStatus.OK for g in after)
        assert course_scores(after)[("run-a", Scale.ONE_TO_FIVE)].n == 3


def test_grading_without_stored_chapter_rubrics_says_what_to_run(tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path / "home", db_url=f"sqlite:///{tmp_path / 's.db'}")
    with Store.open(settings.database_url) as store:
        store.save_run(make_run("r", pack_id="content-mini", task_id="course"))
        with pytest.raises(ConfigError, match="synthesize-rubrics"):
            asyncio.run(
                grade_chapters(
                    store, settings, pack="content-mini", panel=["openai:j@http://127.0.0.1:9/v1"]
                )
            )


def _never_a_rubric(req: StubRequest) -> StubReply:
    return StubReply.call(req.tool_names[0], {"dimensions": []})


def test_synthesis_that_never_fits_exits_1_and_stores_nothing(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    with ModelStub(_never_a_rubric) as stub:
        res = cli(
            "content", "synthesize-rubrics", "content-mini",
            "--model", f"openai:bad@{stub.base_url}", "--db", db, "--json",
            env={"LHBENCH_HOME": str(tmp_path / "home")},
        )  # fmt: skip
    assert res.exit_code == 1, res.stderr
    rows = json.loads(res.stdout)
    assert len(rows) == 6 and all(r["error"] and r["rubric"] is None for r in rows)
    with Store.open(db) as store:
        assert store.list_chapter_rubrics() == []


def _texts(arts: list[Artifact]) -> dict[str, str]:
    return {a.name: (a.content or b"").decode() for a in arts}


def test_evidence_is_the_chapters_own_files(ground_truth: GroundTruth, course: Path) -> None:
    chapter = ground_truth.chapters[0]
    arts = _texts(chapter_artifacts("r", chapter, workspace=course, stored=[]))
    assert next(iter(arts)) == f"chapter-brief/{chapter.id}"
    assert f"course/chapters/{chapter.id}.md" in arts and f"course/slides/{chapter.id}.html" in arts
    assert not any(other.id in name for other in ground_truth.chapters[1:] for name in arts)


def test_a_symlinked_chapter_is_refused_not_followed(
    ground_truth: GroundTruth, course: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET host file")
    chapter = ground_truth.chapters[0]
    target = course / f"course/chapters/{chapter.id}.md"
    target.unlink()
    os.symlink(secret, target)
    listed = chapter_artifacts("r", chapter, workspace=course, stored=[])
    shown = "\n".join(_texts(listed).values())
    assert "TOP-SECRET" not in shown and "not shown" in shown
    # said once, as refused (not also as missing), and without the host's paths
    assert [a.name for a in listed].count(f"course/chapters/{chapter.id}.md") == 1
    assert "(missing:" not in shown
    assert str(course) not in shown and str(tmp_path) not in shown


def test_a_huge_or_missing_chapter_is_bounded_or_said(
    ground_truth: GroundTruth, course: Path
) -> None:
    chapter = ground_truth.chapters[1]
    (course / f"course/chapters/{chapter.id}.md").write_text("x" * (MAX_EVIDENCE_CHARS * 5))
    arts = chapter_artifacts("r", chapter, workspace=course, stored=[])
    assert all(len(a.content or b"") <= MAX_EVIDENCE_CHARS for a in arts)
    shutil.rmtree(course / "course")
    gone = _texts(chapter_artifacts("r", chapter, workspace=course, stored=[]))
    assert "missing" in "\n".join(gone.values())


def test_an_imported_run_is_graded_from_its_stored_artifacts(ground_truth: GroundTruth) -> None:
    chapter = ground_truth.chapters[2]
    body = b"# Imported chapter <script>alert(1)</script>"
    stored = [
        Artifact(
            run_id="r",
            name=f"course/chapters/{chapter.id}.md",
            media_type="text/markdown",
            sha256="0" * 64,
            size=len(body),
            content=body,
        )
    ]
    arts = _texts(chapter_artifacts("r", chapter, workspace=None, stored=stored))
    assert arts[f"course/chapters/{chapter.id}.md"].startswith("# Imported chapter")


def test_edited_annotations_make_stored_chapter_rubrics_stale(tmp_path: Path) -> None:
    pack = tmp_path / "pack"
    shutil.copytree(PACK, pack)
    settings = load_settings(home=tmp_path / "home", db_url=f"sqlite:///{tmp_path / 's.db'}")
    with Store.open(settings.database_url) as store, ModelStub(auto_script()) as writer:
        model = f"openai:w@{writer.base_url}"
        asyncio.run(synthesize_chapter_rubrics(store, settings, pack=str(pack), model=model))
        gt_file = pack / "ground_truth/course/chapters.json"
        doc = json.loads(gt_file.read_text())
        doc["chapters"][1]["criteria"].append("Shows the SCOP at 35 °C too.")
        gt_file.write_text(json.dumps(doc))
        store.save_run(make_run("r", pack_id="content-mini", task_id="course"))
        with pytest.raises(ConfigError, match="chapter efficiency has no 0-2 chapter rubric"):
            asyncio.run(
                grade_chapters(
                    store, settings, pack=str(pack), panel=[f"openai:j@{writer.base_url}"]
                )
            )
        rows = asyncio.run(
            synthesize_chapter_rubrics(store, settings, pack=str(pack), model=model)
        ).rows
        # only the edited chapter is written again (both scales); the rest is reused
        assert sorted((r.chapter_id, r.new) for r in rows if r.new) == [
            ("efficiency", True),
            ("efficiency", True),
        ]
        assert len(store.list_chapter_rubrics()) == 8
