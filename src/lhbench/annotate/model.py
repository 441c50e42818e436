"""What an annotation set holds, and its checks against the task's frozen sources.

An annotation set is the SME's view of a course: chapters (id, title, instruction, design
notes, evaluation criteria, cited spans) and global notes. Every span names a source, a
1-based inclusive line range and the exact text selected; :func:`validate_annotations`
refuses a span whose source is not in the data room, whose lines are out of range, or
whose quote is not on those lines (starting on the first, ending on the last).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from lhbench.envs.content import AnnotatedChapter, AnnotatedSpan, GroundTruth, SourceSet
from lhbench.errors import LhbenchError, Problem

__all__ = [
    "MAX_CHAPTERS",
    "MAX_QUOTE",
    "MAX_SPANS",
    "AnnotationError",
    "AnnotationSet",
    "ChapterAnnotation",
    "CitedSpan",
    "from_ground_truth",
    "quote_on_lines",
    "to_ground_truth",
    "validate_annotations",
]

MAX_CHAPTERS = 100
MAX_SPANS = 500
MAX_QUOTE = 20_000
MAX_NOTES = 20_000
_CHAPTER_ID = r"^[a-z0-9][a-z0-9_\-]{0,63}$"


class AnnotationError(LhbenchError):
    """An annotation set that cannot be saved: names the place and what was wrong."""

    def __init__(self, where: str, message: str, *, file: str = "annotations") -> None:
        self.problem = Problem(file=file, message=message, where=where or None)
        self.where = where
        self.message = message
        super().__init__(f"{where}: {message}" if where else message)


class CitedSpan(BaseModel):
    """A highlighted span: source, lines ``start_line..end_line`` and the exact text."""

    model_config = ConfigDict(extra="forbid")
    source_id: str = Field(min_length=1, max_length=120)
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    quote: str = Field(min_length=1, max_length=MAX_QUOTE)

    @model_validator(mode="after")
    def _ordered(self) -> CitedSpan:
        if self.end_line < self.start_line:
            raise ValueError(f"end line {self.end_line} is before start line {self.start_line}")
        return self


class ChapterAnnotation(BaseModel):
    """One chapter: what it is for, how to judge it, and its evidence."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=_CHAPTER_ID)
    title: str = Field(min_length=1, max_length=300)
    instruction: str = Field(default="", max_length=MAX_NOTES)
    design_notes: str = Field(default="", max_length=MAX_NOTES)
    criteria: list[Annotated[str, Field(max_length=MAX_NOTES)]] = Field(
        default_factory=list, max_length=50
    )
    spans: list[CitedSpan] = Field(default_factory=list, max_length=MAX_SPANS)


class AnnotationSet(BaseModel):
    """The content of one version: the course title, global notes and the chapters."""

    model_config = ConfigDict(extra="forbid")
    course: str = Field(default="", max_length=300)
    global_notes: str = Field(default="", max_length=MAX_NOTES)
    chapters: list[ChapterAnnotation] = Field(default_factory=list, max_length=MAX_CHAPTERS)

    @model_validator(mode="after")
    def _unique(self) -> AnnotationSet:
        seen: set[str] = set()
        for i, c in enumerate(self.chapters):
            if c.id in seen:
                raise ValueError(f"chapter id {c.id!r} (chapters[{i}]) is used twice")
            seen.add(c.id)
        return self


def _where(loc: tuple[int | str, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")


def _quote_pattern(quote: str) -> re.Pattern[str]:
    # the same words in order; any run of whitespace (a line break too) matches any other
    return re.compile(r"\s+".join(re.escape(w) for w in quote.split()))


def quote_on_lines(quote: str, lines: list[str]) -> bool:
    """Whether ``quote`` is the text of ``lines``: on them, from the first to the last."""
    if not quote.strip() or not lines:
        return False
    text = "\n".join(lines)
    first_end = len(lines[0])
    last_start = len(text) - len(lines[-1])
    for m in _quote_pattern(quote).finditer(text):
        if m.start() <= first_end and m.end() >= last_start:
            return True
    return False


def validate_annotations(data: Any, sources: SourceSet) -> AnnotationSet:
    """``data`` (a JSON document) as an :class:`AnnotationSet` whose spans hold.

    Raises:
        AnnotationError: the document is malformed, or a span names an unknown source,
            lines out of range, or a quote that is not on its lines.
    """
    try:
        doc = AnnotationSet.model_validate(data)
    except ValidationError as exc:
        e = exc.errors()[0]
        msg = str(e["msg"]).removeprefix("Value error, ")
        raise AnnotationError(_where(tuple(e["loc"])), msg) from None
    for i, ch in enumerate(doc.chapters):
        for j, sp in enumerate(ch.spans):
            where = f"chapters[{i}].spans[{j}]"
            if sp.source_id not in sources:
                raise AnnotationError(
                    where, f"no source {sp.source_id!r} in the data room of this task"
                )
            n = sources.line_count(sp.source_id)
            if sp.end_line > n:
                raise AnnotationError(
                    where,
                    f"lines {sp.start_line}-{sp.end_line} are out of range: "
                    f"{sp.source_id} has {n} lines",
                )
            if not quote_on_lines(sp.quote, sources.span(sp.source_id, sp.start_line, sp.end_line)):
                raise AnnotationError(
                    where,
                    f"the quote {sp.quote[:80]!r} is not the text of "
                    f"{sp.source_id} lines {sp.start_line}-{sp.end_line}",
                )
    return doc


def to_ground_truth(doc: AnnotationSet) -> GroundTruth:
    """The pack's ``GroundTruth`` of an annotation set (what the coverage check reads).

    Raises:
        AnnotationError: the set has no chapter (a ground truth needs at least one).
    """
    if not doc.chapters:
        raise AnnotationError("chapters", "there is no chapter to export")
    return GroundTruth(
        course=doc.course,
        global_notes=doc.global_notes,
        chapters=[
            AnnotatedChapter(
                id=c.id,
                title=c.title,
                instruction=c.instruction,
                design_notes=c.design_notes,
                criteria=[x for x in c.criteria if x.strip()],
                spans=[
                    AnnotatedSpan(
                        source=s.source_id, start=s.start_line, end=s.end_line, quote=s.quote
                    )
                    for s in c.spans
                ],
            )
            for c in doc.chapters
        ],
    )


def from_ground_truth(gt: GroundTruth, sources: SourceSet) -> AnnotationSet:
    """An annotation set holding a pack's existing ground truth (a first draft to edit).

    A span without a quote gets the text of its lines (when its source is known).
    """

    def quote(s: AnnotatedSpan) -> str:
        if s.quote:
            return s.quote
        lines = sources.span(s.source, s.start, s.end) if s.source in sources else []
        return "\n".join(lines).strip() or f"{s.source}:L{s.start}-L{s.end}"

    return AnnotationSet(
        course=gt.course,
        global_notes=gt.global_notes,
        chapters=[
            ChapterAnnotation(
                id=c.id,
                title=c.title,
                instruction=c.instruction,
                design_notes=c.design_notes,
                criteria=list(c.criteria),
                spans=[
                    CitedSpan(
                        source_id=s.source, start_line=s.start, end_line=s.end, quote=quote(s)
                    )
                    for s in c.spans
                ],
            )
            for c in gt.chapters
        ],
    )
