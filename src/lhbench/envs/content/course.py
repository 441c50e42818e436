"""A course in an agent's workspace, the pack's annotated chapters, and their layout.

Workspace layout (what the content tools write and the checks read)::

    research/notes.jsonl         one research note per line: {"id", "text", "citations"}
    course/plan.json             the chapter plan: {"chapters": [{"id", "title", "goal", ...}]}
    course/chapters/<id>.md      a chapter's script, its claims cited inline
    course/slides/<id>.html      a chapter's slide deck, one <section class="slide"> per slide

Ground truth (``ground_truth/<task>/chapters.json`` in the pack): the annotated chapters,
each with the spans an expert highlighted (source, lines, exact quote), design notes and
evaluation criteria, plus global notes on the course.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from lhbench.envs.content.errors import SourceError
from lhbench.envs.paths import EscapeError, NotARegularFile, read_beneath

__all__ = [
    "CHAPTERS_DIR",
    "MAX_COURSE_FILE_BYTES",
    "NOTES_FILE",
    "PLAN_FILE",
    "SLIDES_DIR",
    "AnnotatedChapter",
    "AnnotatedSpan",
    "ChapterPlan",
    "GroundTruth",
    "PlannedChapter",
    "course_files",
    "load_ground_truth",
    "read_course_file",
]

NOTES_FILE = "research/notes.jsonl"
PLAN_FILE = "course/plan.json"
CHAPTERS_DIR = "course/chapters"
SLIDES_DIR = "course/slides"
MAX_COURSE_FILE_BYTES = 2 * 1024 * 1024
MAX_COURSE_FILES = 200
_ID = r"^[a-z0-9][a-z0-9_\-]{0,63}$"


class AnnotatedSpan(BaseModel):
    """A highlighted span: a source's lines and the exact text selected."""

    model_config = ConfigDict(extra="forbid")
    source: str = Field(min_length=1)
    start: int = Field(ge=1)
    end: int = Field(ge=1)
    quote: str = ""

    @model_validator(mode="after")
    def _ordered(self) -> AnnotatedSpan:
        if self.end < self.start:
            raise ValueError(f"end line {self.end} is before start line {self.start}")
        return self


class AnnotatedChapter(BaseModel):
    """One chapter as an expert annotated it."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=_ID)
    title: str = Field(min_length=1)
    instruction: str = ""
    design_notes: str = ""
    criteria: list[str] = Field(default_factory=list)
    spans: list[AnnotatedSpan] = Field(default_factory=list)


class GroundTruth(BaseModel):
    """The annotated chapters of one course."""

    model_config = ConfigDict(extra="forbid")
    course: str = ""
    global_notes: str = ""
    chapters: list[AnnotatedChapter] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> GroundTruth:
        ids = [c.id for c in self.chapters]
        if len(ids) != len(set(ids)):
            raise ValueError("chapter ids must be unique")
        return self


class PlannedChapter(BaseModel):
    """One chapter of the agent's plan."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=_ID)
    title: str = Field(min_length=1, max_length=300)
    goal: str = Field(default="", max_length=4000)
    sources: list[str] = Field(default_factory=list, max_length=200)
    format: str = Field(default="slides", pattern=r"^(slides|video|text)$")


class ChapterPlan(BaseModel):
    """The agent's chapter plan (``course/plan.json``)."""

    model_config = ConfigDict(extra="forbid")
    chapters: list[PlannedChapter] = Field(min_length=1, max_length=100)

    @model_validator(mode="after")
    def _unique(self) -> ChapterPlan:
        ids = [c.id for c in self.chapters]
        if len(ids) != len(set(ids)):
            raise ValueError("chapter ids must be unique")
        return self


def load_ground_truth(path: Path) -> GroundTruth:
    """Read ``chapters.json``; :class:`SourceError` naming the file and place when broken."""
    try:
        data = json.loads(path.read_bytes()[:MAX_COURSE_FILE_BYTES])
        return GroundTruth.model_validate(data)
    except OSError as exc:
        raise SourceError(path, f"cannot read: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise SourceError(path, f"not JSON: {exc.msg}", line=exc.lineno) from None
    except ValidationError as exc:
        e = exc.errors()[0]
        where = ".".join(str(p) for p in e["loc"])
        raise SourceError(path, f"{where}: {e['msg']}") from None


def read_course_file(root: Path, rel: str) -> str | None:
    """A course file's text (None if absent); refused when a symlink, special or too big."""
    try:
        data, size = read_beneath(root, rel, limit=MAX_COURSE_FILE_BYTES + 1)
    except FileNotFoundError:
        return None
    except (EscapeError, NotARegularFile, IsADirectoryError) as exc:
        raise SourceError(root / rel, f"refused: {exc}") from None
    if size > MAX_COURSE_FILE_BYTES:
        raise SourceError(root / rel, f"{size} bytes (at most {MAX_COURSE_FILE_BYTES})")
    return data.decode("utf-8", errors="replace")


def course_files(root: Path, directory: str, suffix: str) -> list[str]:
    """Relative paths of ``directory/*suffix`` in the workspace, sorted, bounded."""
    d = root / directory
    if d.is_symlink() or not d.is_dir():
        return []
    names = sorted(
        p.name
        for p in d.iterdir()
        if p.name.endswith(suffix)
        and re.match(r"^[\w.\-]+$", p.name)
        and not p.is_symlink()  # a symlink could lead out of the workspace: never read
        and p.is_file()
    )
    return [f"{directory}/{n}" for n in names[:MAX_COURSE_FILES]]
