"""Programmatic-content judgements: chapter rubrics with provenance, and per-chapter grades.

LH-Bench grades every chapter of a course with the five generic rubrics plus 1-3
chapter-specific rubrics an LLM wrote from the annotators' criteria, on a 3-point or a
5-point scale. A :class:`ChapterRubricRecord` is one synthesised rubric version with what it
came from; a :class:`ChapterGrade` is one judge's grade of one chapter of one run on one
rubric at one scale.
"""

from __future__ import annotations

from pydantic import AwareDatetime, Field, model_validator

from lhbench.schema.base import Schema, utcnow
from lhbench.schema.grading import Grade, _digest
from lhbench.schema.rubric import Rubric, Scale

__all__ = [
    "ChapterGrade",
    "ChapterRubricRecord",
    "chapter_grade_key",
    "chapter_rubric_key",
]


def chapter_rubric_key(
    pack_id: str,
    task_id: str,
    chapter_id: str,
    scale: Scale,
    annotations_sha256: str,
    model: str,
    prompt_version: str,
) -> str:
    """A synthesised rubric's identity: what it was written from, by whom, on which scale.

    Synthesis with the same inputs is not repeated: the stored rubric is reused.
    """
    return _digest(
        [
            "chapter-rubric",
            pack_id,
            task_id,
            chapter_id,
            scale.value,
            annotations_sha256,
            model,
            prompt_version,
        ]
    )


def chapter_grade_key(
    run_id: str,
    chapter_id: str,
    judge_key: str,
    rubric_hash: str,
    scale: Scale,
    repeat: int = 0,
) -> str:
    """A chapter grade's identity: run, chapter, judge config, rubric content, scale, repeat."""
    return _digest(
        ["chapter-grade", run_id, chapter_id, judge_key, rubric_hash, scale.value, repeat]
    )


class ChapterRubricRecord(Schema):
    """A chapter rubric version as stored, with its provenance.

    ``annotations_sha256`` is the hash of the chapter's annotations (instruction, design
    notes, criteria, spans) and the course notes it was written from; ``ground_truth_sha256``
    the hash of the whole ground-truth file (its version).
    """

    key: str = Field(min_length=8)
    pack_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    chapter_id: str = Field(min_length=1)
    scale: Scale
    annotations_sha256: str = Field(min_length=1)
    ground_truth_sha256: str = ""
    model: str = Field(min_length=1, description="The model that synthesised the rubric.")
    prompt_version: str = Field(min_length=1)
    rubric: Rubric
    created_at: AwareDatetime = Field(default_factory=utcnow)

    @model_validator(mode="after")
    def _consistent(self) -> ChapterRubricRecord:
        if not self.rubric.content_hash:
            raise ValueError(f"chapter rubric {self.rubric.id!r} has no content hash")
        scales = {d.scale for t in self.rubric.tiers for d in t.dimensions}
        if scales != {self.scale}:
            raise ValueError(
                f"chapter rubric {self.rubric.id!r} is on {sorted(s.value for s in scales)}, "
                f"recorded as {self.scale.value}"
            )
        return self


class ChapterGrade(Schema):
    """One judge's grade of one chapter of one run, on one rubric at one scale.

    ``grade`` is an ordinary :class:`Grade` (ok, parse failure or error: a failure is never
    a score); ``kind`` says whether the rubric is a generic one or the chapter's own.
    """

    key: str = Field(min_length=8)
    chapter_id: str = Field(min_length=1)
    scale: Scale
    kind: str = Field(pattern=r"^(generic|chapter)$")
    grade: Grade

    @model_validator(mode="after")
    def _consistent(self) -> ChapterGrade:
        if self.grade.key != self.key:
            raise ValueError("a chapter grade's key is its grade's key")
        wrong = [s.dimension_id for s in self.grade.scores if s.scale is not self.scale]
        if wrong:
            raise ValueError(f"dimension(s) {wrong} are not on the {self.scale.value} scale")
        return self

    @property
    def run_id(self) -> str:
        """The graded run."""
        return self.grade.run_id
