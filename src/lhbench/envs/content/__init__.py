"""The programmatic-content environment: line-addressable sources, citations, checks.

- :func:`extract_data_room`: a data room (PDF, DOCX, PPTX, HTML) to ``<id>.md`` plus
  ``sources.json``, byte-identical on rerun; :func:`load_sources` reads it back.
- :mod:`~lhbench.envs.content.citations`: the ``[source_id:L12-L15]`` syntax, the
  exists / in-range / supported checks, annotated-span coverage and quote anchoring.
- :func:`check_course`: a course in a workspace against its sources and annotated
  chapters, as findings, a label and a programmatic grade.
- :func:`check_slides`: slide decks rendered in headless Chromium (in the sandbox),
  each slide checked for overflow, clipped text and minimum font size.
- :func:`check_scenes`: per-scene narration timing of video chapters from their scene
  manifests (narration fits, bounded tail, no long silence).
- :mod:`~lhbench.envs.content.chapter_rubrics`: 1-3 chapter rubrics per annotated
  chapter, written by a model from the annotators' criteria (imported on its own: it
  loads pydantic-ai).
"""

from lhbench.envs.content.checks import (
    CHECK_NAMES,
    CHECKS_VERSION,
    CourseReport,
    Finding,
    SlideResult,
    check_course,
    checks_identity,
)
from lhbench.envs.content.citations import (
    CitationCheck,
    Coverage,
    GtSpan,
    ParsedCitation,
    anchor_quote,
    check_citation,
    coverage,
    parse_citations,
    support,
)
from lhbench.envs.content.course import (
    CHAPTERS_DIR,
    NOTES_FILE,
    PLAN_FILE,
    SLIDES_DIR,
    AnnotatedChapter,
    AnnotatedSpan,
    ChapterPlan,
    GroundTruth,
    PlannedChapter,
    load_ground_truth,
)
from lhbench.envs.content.errors import SourceError
from lhbench.envs.content.extract import (
    SOURCES_FILE,
    ExtractedSource,
    extract_data_room,
    extract_file,
)
from lhbench.envs.content.scenes import SceneFinding, check_scenes
from lhbench.envs.content.slides import check_slides
from lhbench.envs.content.sources import SourceRecord, SourceSet, load_sources

__all__ = [
    "CHAPTERS_DIR",
    "CHECKS_VERSION",
    "CHECK_NAMES",
    "NOTES_FILE",
    "PLAN_FILE",
    "SLIDES_DIR",
    "SOURCES_FILE",
    "AnnotatedChapter",
    "AnnotatedSpan",
    "ChapterPlan",
    "CitationCheck",
    "CourseReport",
    "Coverage",
    "ExtractedSource",
    "Finding",
    "GroundTruth",
    "GtSpan",
    "ParsedCitation",
    "PlannedChapter",
    "SceneFinding",
    "SlideResult",
    "SourceError",
    "SourceRecord",
    "SourceSet",
    "anchor_quote",
    "check_citation",
    "check_course",
    "check_scenes",
    "check_slides",
    "checks_identity",
    "coverage",
    "extract_data_room",
    "extract_file",
    "load_ground_truth",
    "load_sources",
    "parse_citations",
    "support",
]
