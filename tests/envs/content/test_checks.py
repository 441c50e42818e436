"""The course checks: the reference passes; each kind of bad citation fails exactly its check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import lhbench
from lhbench.envs.content import (
    GroundTruth,
    SourceError,
    SourceSet,
    check_course,
    checks_identity,
)
from lhbench.envs.content.course import MAX_COURSE_FILE_BYTES
from lhbench.envs.content.grading import checks_rubric
from lhbench.packs import load_pack
from lhbench.schema import JudgeKind
from tests.envs.content.conftest import PACK
from tests.envs.content.helpers import cite_of, replace_in
from tests.factories import make_run

EFF = "course/chapters/efficiency.md"
HOW = "course/chapters/how-it-works.md"


def test_the_reference_course_passes_every_check_and_its_citations_resolve(
    course: Path, sources: SourceSet, ground_truth: GroundTruth
) -> None:
    report = check_course(course, sources, ground_truth)
    assert report.findings == []
    assert report.passed()
    assert len(report.citations) == 18  # 15 chapter claims + 3 notes
    assert all(c.failed is None for c in report.citations)
    assert [c.chapter for c in report.coverage] == ["how-it-works", "efficiency", "installation"]
    assert all(c.span_hit_rate == 1.0 and c.line_recall == 1.0 for c in report.coverage)


def test_a_fabricated_source_fails_exists_and_nothing_else(
    course: Path, sources: SourceSet, ground_truth: GroundTruth
) -> None:
    old = cite_of(course / EFF, "SCOP averages")
    replace_in(course / EFF, old, "[northwind-secret-memo:L3]")
    report = check_course(course, sources, ground_truth)
    assert report.failed_checks() == {"exists"}
    [f] = report.findings
    assert f.evidence == "[northwind-secret-memo:L3]"
    assert f.where == f"{EFF}:4"


def test_an_out_of_range_span_fails_in_range_and_nothing_else(
    course: Path, sources: SourceSet, ground_truth: GroundTruth
) -> None:
    n = sources.line_count("heat-pump-primer")
    old = cite_of(course / HOW, "The cycle has four stages")
    replace_in(course / HOW, old, f"[heat-pump-primer:L{n - 1}-L{n + 5}]")
    report = check_course(course, sources, ground_truth)
    assert report.failed_checks() == {"in_range"}
    [f] = report.findings
    assert f.evidence == f"[heat-pump-primer:L{n - 1}-L{n + 5}]"
    assert f"lines 1-{n}" in f.message


def test_a_claim_its_span_does_not_support_fails_supported_and_nothing_else(
    course: Path, sources: SourceSet, ground_truth: GroundTruth
) -> None:
    # the figure changed: the trial reported 2.6, not 1.6
    replace_in(course / EFF, "median SCOP of only 2.6.", "median SCOP of only 1.6.")
    # a claim cited to a line about something else entirely
    replace_in(
        course / HOW,
        "Even air at minus ten degrees Celsius still holds usable heat energy.",
        "Installers earn more from heat pumps than from boilers.",
    )
    report = check_course(course, sources, ground_truth)
    assert report.failed_checks() == {"supported"}
    assert sorted(f.where for f in report.findings) == [f"{EFF}:6", f"{HOW}:4"]
    assert any("1.6" in f.message for f in report.findings)


def test_all_three_at_once_fail_exactly_those_three(
    course: Path, sources: SourceSet, ground_truth: GroundTruth
) -> None:
    replace_in(course / EFF, cite_of(course / EFF, "SCOP averages"), "[made-up:L1]")
    replace_in(course / HOW, cite_of(course / HOW, "The cycle has"), "[heat-pump-primer:L900]")
    replace_in(course / EFF, "median SCOP of only 2.6.", "median SCOP of only 1.6.")
    report = check_course(course, sources, ground_truth)
    assert report.failed_checks() == {"exists", "in_range", "supported"}
    assert len(report.findings) == 3
    # coverage drops where the valid citation was replaced, and only there
    cov = {c.chapter: c.span_hit_rate for c in report.coverage}
    assert cov["installation"] == 1.0 and cov["efficiency"] < 1.0 and cov["how-it-works"] < 1.0


def test_an_annotated_chapter_not_written_fails_chapter_present(
    course: Path, sources: SourceSet, ground_truth: GroundTruth
) -> None:
    (course / "course/chapters/installation.md").unlink()
    report = check_course(course, sources, ground_truth)
    assert report.failed_checks() == {"chapter_present"}
    assert {c.chapter: c.span_hit_rate for c in report.coverage}["installation"] == 0.0


def test_malformed_citations_and_broken_note_lines_are_findings(
    course: Path, sources: SourceSet, ground_truth: GroundTruth
) -> None:
    with (course / EFF).open("a") as fh:
        fh.write("An extra claim [heat-pump-primer: L22].\n")
    with (course / "research/notes.jsonl").open("a") as fh:
        fh.write('{"id": "n9", "text": 42}\nnot json\n')
    report = check_course(course, sources, ground_truth)
    assert report.failed_checks() == {"syntax", "notes"}
    assert sorted(f.where for f in report.findings if f.check == "notes") == [
        "research/notes.jsonl:4",
        "research/notes.jsonl:5",
    ]


def test_a_course_with_no_citations_scores_lowest_on_validity(
    tmp_path: Path, sources: SourceSet, ground_truth: GroundTruth
) -> None:
    (tmp_path / "course/chapters").mkdir(parents=True)
    for ch in ground_truth.chapters:
        (tmp_path / f"course/chapters/{ch.id}.md").write_text(
            "# Chapter\n\nHeat pumps are great.\n"
        )
    report = check_course(tmp_path, sources, ground_truth)
    values = report.dimension_values()
    assert values["citation_validity"][0] == 0.0
    assert values["claim_support"][0] is None
    assert report.coverage_share() == 0.0


def test_a_symlinked_chapter_is_never_read(
    course: Path, sources: SourceSet, ground_truth: GroundTruth, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("Stolen [nowhere:L1].\n")
    (course / "course/chapters/extra.md").symlink_to(outside)
    report = check_course(course, sources, ground_truth)
    assert report.passed()  # the symlink was skipped, its citation never seen
    assert all(c.citation.source_id != "nowhere" for c in report.citations)


def test_a_symlinked_notes_file_is_refused_naming_it(
    course: Path, sources: SourceSet, tmp_path: Path
) -> None:
    notes = course / "research/notes.jsonl"
    notes.unlink()
    notes.symlink_to("/etc/passwd")
    with pytest.raises(SourceError, match=r"notes\.jsonl: refused"):
        check_course(course, sources)


def test_a_huge_chapter_is_refused_not_read(course: Path, sources: SourceSet) -> None:
    with (course / EFF).open("a") as fh:
        fh.write("x" * (MAX_COURSE_FILE_BYTES + 10))
    with pytest.raises(SourceError, match=r"efficiency\.md: \d+ bytes"):
        check_course(course, sources)


def test_the_report_becomes_a_programmatic_grade_with_the_offending_citation_as_evidence(
    course: Path, sources: SourceSet, ground_truth: GroundTruth, tmp_path: Path
) -> None:
    replace_in(course / EFF, cite_of(course / EFF, "SCOP averages"), "[made-up:L1]")
    report = check_course(course, sources, ground_truth)
    rubric = checks_rubric(load_pack(PACK))
    assert rubric is not None
    grade = report.grade("run-1", rubric)
    scores = {s.dimension_id: s for s in grade.scores}
    assert set(scores) == {
        "citation_validity",
        "claim_support",
        "source_coverage",
        "chapter_completeness",
        "slide_fit",
        "scene_timing",
    }
    assert scores["citation_validity"].score == 4  # 17 of 18 resolve: 0.944
    assert "[made-up:L1]" in scores["citation_validity"].evidence
    assert scores["claim_support"].score == 5
    assert scores["slide_fit"].score is None and scores["slide_fit"].unscorable_reason
    assert scores["scene_timing"].score is None  # no video chapter: unmeasured, not zero
    assert grade.judge.kind is JudgeKind.PROGRAMMATIC
    assert json.loads(grade.raw_output or "{}")["failed_checks"] == ["exists"]
    with lhbench.open_store(f"sqlite:///{tmp_path / 'g.db'}") as store:
        store.save_run(make_run("run-1"))
        store.save_grades([grade])
        store.save_grades([report.grade("run-1", rubric)])  # same identity: a no-op
        [stored] = store.list_grades(run_id="run-1", rubric_id="content-checks")
    assert stored.judge.model == checks_identity().model
    assert "[made-up:L1]" in next(
        s.evidence for s in stored.scores if s.dimension_id == "citation_validity"
    )
