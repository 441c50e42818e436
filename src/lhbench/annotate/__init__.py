"""The SME annotation tool's data: versioned chapter annotations over a task's sources.

- :class:`AnnotationSet`: chapters (title, instruction, design notes, criteria, cited
  spans) and global notes; :func:`validate_annotations` checks every span against the
  frozen sources (source exists, lines in range, quote on the lines).
- :func:`find_targets` / :func:`annotation_target`: the annotatable tasks of packs.
- :func:`save_version`: validate and save a new immutable version (stale parents are
  refused by the store); :func:`export_annotations` writes a saved version as the
  task's ``ground_truth/<task>/chapters.json``.
"""

from lhbench.annotate.model import (
    MAX_CHAPTERS,
    MAX_QUOTE,
    MAX_SPANS,
    AnnotationError,
    AnnotationSet,
    ChapterAnnotation,
    CitedSpan,
    from_ground_truth,
    quote_on_lines,
    to_ground_truth,
    validate_annotations,
)
from lhbench.annotate.targets import (
    AnnotationTarget,
    annotation_target,
    export_annotations,
    find_targets,
    ground_truth_json,
    save_version,
)

__all__ = [
    "MAX_CHAPTERS",
    "MAX_QUOTE",
    "MAX_SPANS",
    "AnnotationError",
    "AnnotationSet",
    "AnnotationTarget",
    "ChapterAnnotation",
    "CitedSpan",
    "annotation_target",
    "export_annotations",
    "find_targets",
    "from_ground_truth",
    "ground_truth_json",
    "quote_on_lines",
    "save_version",
    "to_ground_truth",
    "validate_annotations",
]
