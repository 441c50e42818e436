"""Chapter-specific rubrics synthesised by a model from the annotators' criteria.

For each annotated chapter (its instruction, design notes and evaluation criteria), a
model writes 1-3 dimensions on the requested scale (5-point ``1-5`` or 3-point ``0-2``),
each with an anchor for every level. The answer goes through one output tool; an answer
that does not make a valid rubric is sent back with the reason (bounded retries), and one
that never does is a :class:`SynthesisError`, never a rubric. The rubric records its
provenance: the model, the prompt version, and the hash of the annotations it came from.
Weights are equal (the paper's chapter rubrics carry no weights of their own).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import yaml
from pydantic import BaseModel, Field, ValidationError
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.models import Model

from lhbench.envs.content.course import AnnotatedChapter
from lhbench.errors import LhbenchError
from lhbench.schema import AuthorKind, Dimension, Rubric, Scale, Tier, TierKind
from lhbench.schema.answers import JudgeInt

__all__ = [
    "PROMPT_VERSION",
    "SynthesisError",
    "annotations_sha256",
    "chapter_rubric_id",
    "rubric_content_hash",
    "synthesise_chapter_rubric",
    "write_rubric",
]

PROMPT_VERSION = "chapter-rubrics/1"
RETRIES = 2

_INSTRUCTIONS = """You turn an expert annotator's notes on one chapter of a course into
grading criteria for that chapter alone. Write between one and three dimensions. Each
dimension judges one thing a grader can observe in the finished chapter (its narration,
slides or video), names the evidence to look at, and gives an anchor for every level of
the scale: what a chapter at that level looks like, lowest level first. Anchors must be
concrete and must differ from each other. Do not repeat generic qualities (clarity,
visual polish, pacing, audio-visual sync, technical accuracy in general): those are graded
separately. Answer only through the output tool."""


class SynthesisError(LhbenchError):
    """The model never gave a valid chapter rubric."""


class _Anchor(BaseModel):
    level: JudgeInt = Field(description="A level of the scale.")
    text: str = Field(min_length=1, description="What a chapter at this level looks like.")


class _Dimension(BaseModel):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_\-]{0,63}$", description="snake_case id")
    name: str = Field(min_length=1, max_length=120)
    description: str = Field(min_length=1, max_length=1000)
    evidence: list[str] = Field(default_factory=list, max_length=6)
    anchors: list[_Anchor] = Field(min_length=2, max_length=5)


class ChapterRubricAnswer(BaseModel):
    """One to three chapter-specific dimensions, each with an anchor for every level."""

    dimensions: list[_Dimension] = Field(min_length=1, max_length=3)


def chapter_rubric_id(chapter_id: str, scale: Scale) -> str:
    """``chapter-<id>-5pt`` or ``chapter-<id>-3pt``."""
    return f"chapter-{chapter_id}-{'5pt' if scale is Scale.ONE_TO_FIVE else '3pt'}"


def annotations_sha256(chapter: AnnotatedChapter, global_notes: str) -> str:
    """Hash of what a chapter rubric is written from: the chapter's annotations and the notes."""
    return hashlib.sha256(
        json.dumps([chapter.model_dump(mode="json"), global_notes], sort_keys=True).encode()
    ).hexdigest()


def rubric_content_hash(rubric: Rubric) -> str:
    """The content hash of a rubric kept in the store rather than in a pack file."""
    doc = rubric.model_dump(mode="json", exclude={"content_hash"})
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def _build(answer: ChapterRubricAnswer, scale: Scale) -> list[Dimension]:
    """Dimensions from an answer; ``ValueError`` saying what is wrong."""
    ids = [d.id for d in answer.dimensions]
    if len(set(ids)) != len(ids):
        raise ValueError("dimension ids must be unique")
    n = len(answer.dimensions)
    out = []
    for d in answer.dimensions:
        levels = [a.level for a in d.anchors]
        if len(set(levels)) != len(levels):
            raise ValueError(f"dimension '{d.id}': a level has two anchors")
        if len({a.text.strip().lower() for a in d.anchors}) != len(d.anchors):
            raise ValueError(f"dimension '{d.id}': two anchors say the same thing")
        out.append(
            Dimension(
                id=d.id,
                name=d.name,
                weight=1 / n,
                description=d.description,
                evidence=d.evidence,
                scale=scale,
                anchors={a.level: a.text for a in d.anchors},
            )
        )
    return out


def _prompt(chapter: AnnotatedChapter, scale: Scale, global_notes: str) -> str:
    levels = ", ".join(str(lv) for lv in scale.levels)
    criteria = "\n".join(f"- {c}" for c in chapter.criteria) or "- (none given)"
    return (
        f"Chapter: {chapter.title} ({chapter.id})\n"
        f"Instruction to the author: {chapter.instruction or '(none)'}\n"
        f"Design notes: {chapter.design_notes or '(none)'}\n"
        f"Evaluation criteria from the annotator:\n{criteria}\n"
        f"Notes on the whole course: {global_notes or '(none)'}\n\n"
        f"Scale: {scale.value}; give one anchor for each level: {levels}."
    )


async def synthesise_chapter_rubric(
    model: Model,
    chapter: AnnotatedChapter,
    scale: Scale,
    *,
    global_notes: str = "",
    model_name: str = "",
) -> Rubric:
    """A chapter rubric on ``scale`` from ``chapter``'s annotations (see module).

    Raises:
        SynthesisError: no valid rubric after the retries, or the model failed.
    """
    agent = Agent(
        model,
        output_type=ChapterRubricAnswer,
        instructions=_INSTRUCTIONS,
        retries=RETRIES,
    )

    @agent.output_validator
    def _valid(answer: ChapterRubricAnswer) -> ChapterRubricAnswer:
        try:
            _build(answer, scale)
        except ValidationError as exc:  # say what was wrong, not only that something was
            raise ModelRetry("; ".join(str(e["msg"]) for e in exc.errors())) from None
        except ValueError as exc:
            raise ModelRetry(str(exc)) from None
        return answer

    try:
        result = await agent.run(_prompt(chapter, scale, global_notes))
    except UnexpectedModelBehavior as exc:
        raise SynthesisError(
            f"chapter {chapter.id}: no valid {scale.value} rubric: {exc}"
        ) from None
    dims = _build(result.output, scale)
    source = annotations_sha256(chapter, global_notes)
    rubric = Rubric(
        id=chapter_rubric_id(chapter.id, scale),
        family=f"content-chapter-{chapter.id}",
        version=f"{'5pt' if scale is Scale.ONE_TO_FIVE else '3pt'}-{source[:8]}",
        title=f"Chapter '{chapter.title}' ({scale.value})",
        author=AuthorKind.LLM,
        description=(
            f"Synthesised by {model_name or model.model_name} with prompt {PROMPT_VERSION} "
            f"from the annotator criteria of chapter {chapter.id} (annotations sha256 {source})."
        ),
        tiers=[Tier(kind=TierKind.OUTPUT, evidence_source="artifacts", dimensions=dims)],
    )
    return rubric.model_copy(update={"content_hash": rubric_content_hash(rubric)})


def write_rubric(rubric: Rubric, directory: Path) -> Path:
    """The rubric as a pack rubric file ``<directory>/<id>.yaml``."""
    doc = rubric.model_dump(mode="json", exclude={"content_hash"}, exclude_defaults=False)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{rubric.id}.yaml"
    head = f"# {rubric.description}\n"
    path.write_text(head + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100))
    return path
