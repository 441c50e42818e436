"""Chapter rubric versions and chapter grades in the store, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from lhbench.schema import (
    AuthorKind,
    ChapterGrade,
    ChapterRubricRecord,
    Dimension,
    GradeStatus,
    Rubric,
    Scale,
    Tier,
    TierKind,
    chapter_grade_key,
    chapter_rubric_key,
)
from lhbench.store import Store
from tests.factories import make_grade, make_run


def _rubric(scale: Scale, text: str = "x") -> Rubric:
    dim = Dimension(
        id="criteria",
        name="Criteria",
        weight=1.0,
        description="d",
        scale=scale,
        anchors={lv: f"{text} {lv}" for lv in scale.levels},
    )
    return Rubric(
        id=f"chapter-c1-{scale.value}",
        version="1",
        title="t",
        author=AuthorKind.LLM,
        tiers=[Tier(kind=TierKind.OUTPUT, evidence_source="artifacts", dimensions=[dim])],
        content_hash=f"hash-{scale.value}-{text}",
    )


def _record(scale: Scale, model: str = "m", text: str = "x") -> ChapterRubricRecord:
    key = chapter_rubric_key("p", "t", "c1", scale, "ann", model, "v1")
    return ChapterRubricRecord(
        key=key,
        pack_id="p",
        task_id="t",
        chapter_id="c1",
        scale=scale,
        annotations_sha256="ann",
        ground_truth_sha256="gt",
        model=model,
        prompt_version="v1",
        rubric=_rubric(scale, text),
    )


def test_a_chapter_rubric_is_stored_once_per_provenance(store: Store) -> None:
    rec = _record(Scale.ONE_TO_FIVE)
    assert store.save_chapter_rubric(rec) is True
    # the same provenance again (even another answer) is not a second version
    assert store.save_chapter_rubric(_record(Scale.ONE_TO_FIVE, text="other")) is False
    assert store.get_chapter_rubric(rec.key) == rec
    assert store.save_chapter_rubric(_record(Scale.ONE_TO_FIVE, model="m2")) is True
    assert store.save_chapter_rubric(_record(Scale.ZERO_TO_TWO)) is True
    five = store.list_chapter_rubrics(pack_id="p", chapter_id="c1", scale="1-5")
    assert [r.model for r in five] == ["m", "m2"]
    assert store.get_chapter_rubric("0" * 64) is None


def test_a_record_must_match_its_scale_and_have_a_hash() -> None:
    with pytest.raises(ValidationError, match="recorded as 0-2"):
        ChapterRubricRecord(
            **{**_record(Scale.ONE_TO_FIVE).model_dump(), "scale": Scale.ZERO_TO_TWO}
        )
    unhashed = _rubric(Scale.ZERO_TO_TWO).model_copy(update={"content_hash": ""})
    with pytest.raises(ValidationError, match="no content hash"):
        ChapterRubricRecord(**{**_record(Scale.ZERO_TO_TWO).model_dump(), "rubric": unhashed})


def _chapter_grade(ok: bool) -> ChapterGrade:
    key = chapter_grade_key("run-1", "c1", "jk", "rh", Scale.ONE_TO_FIVE)
    g = (
        make_grade(key=key)
        if ok
        else make_grade(scores=(), key=key, status=GradeStatus.PARSE_ERROR, raw_output="{oops")
    )
    return ChapterGrade(key=key, chapter_id="c1", scale=Scale.ONE_TO_FIVE, kind="generic", grade=g)


def test_chapter_grades_resume_a_failure_and_keep_an_ok(store: Store) -> None:
    store.save_run(make_run("run-1"))
    failed = _chapter_grade(ok=False)
    assert store.save_chapter_grades([failed]) == 1
    assert store.chapter_grade_states([failed.key]) == {failed.key: "final_error"}
    ok = _chapter_grade(ok=True)
    assert store.save_chapter_grades([ok]) == 1  # the failure is replaced
    assert store.save_chapter_grades([_chapter_grade(ok=False)]) == 0  # an ok is kept
    [stored] = store.list_chapter_grades(run_ids=["run-1"])
    assert stored.grade.status.value == "ok" and stored.key == ok.key
    assert store.list_chapter_grades(scale="0-2") == []
    assert store.delete_run("run-1")["chapter_grades"] == 1
    assert store.list_chapter_grades() == []


def test_a_forged_chapter_grade_is_refused() -> None:
    good = _chapter_grade(ok=True)
    with pytest.raises(ValidationError, match="key is its grade's key"):
        ChapterGrade(**{**good.model_dump(), "key": "f" * 64})
    with pytest.raises(ValidationError, match="not on the 0-2 scale"):
        ChapterGrade(**{**good.model_dump(), "scale": Scale.ZERO_TO_TWO})
    with pytest.raises(ValidationError, match="kind"):
        ChapterGrade(**{**good.model_dump(), "kind": "<script>"})
