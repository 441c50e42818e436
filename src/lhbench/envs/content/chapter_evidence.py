"""What an output judge sees of one chapter: its text, its slides and its narration.

Per-chapter grading (LH-Bench: each chapter is scored on its own) gives the judge the
chapter's brief from the annotations, ``course/chapters/<id>.md``, ``course/slides/<id>.html``
and the narration of ``course/video/<id>/scenes.json`` when there is one. Files come from
the run's kept workspace (read beneath it: a symlink or an oversized file is refused and
said), else from the run's stored artifacts of the same names. A chapter with no file at
all is shown to the judge as missing, so it is graded as such, not skipped.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from lhbench.envs.content.course import CHAPTERS_DIR, SLIDES_DIR, AnnotatedChapter, read_course_file
from lhbench.envs.content.errors import SourceError
from lhbench.envs.content.scenes import VIDEO_DIR
from lhbench.schema import Artifact

__all__ = ["MAX_EVIDENCE_CHARS", "chapter_artifacts", "chapter_paths"]

MAX_EVIDENCE_CHARS = 20_000


def chapter_paths(chapter_id: str) -> list[tuple[str, str]]:
    """(workspace-relative path, media type) of the files that make up one chapter."""
    return [
        (f"{CHAPTERS_DIR}/{chapter_id}.md", "text/markdown"),
        (f"{SLIDES_DIR}/{chapter_id}.html", "text/html"),
        (f"{VIDEO_DIR}/{chapter_id}/scenes.json", "application/json"),
    ]


def _artifact(run_id: str, name: str, media_type: str, text: str) -> Artifact:
    data = text[:MAX_EVIDENCE_CHARS].encode()
    return Artifact(
        run_id=run_id,
        name=name,
        media_type=media_type,
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        content=data,
    )


def _narration(raw: str) -> str:
    """The scene manifest's narration, scene by scene (the manifest itself if unreadable)."""
    try:
        doc = json.loads(raw)
        scenes = doc["scenes"]
        return "\n".join(f"[{s['id']}] {s.get('narration', '')}" for s in scenes)
    except (ValueError, KeyError, TypeError):
        return raw


def chapter_artifacts(
    run_id: str,
    chapter: AnnotatedChapter,
    *,
    workspace: Path | None,
    stored: list[Artifact],
) -> list[Artifact]:
    """The chapter's evidence as text artifacts, its brief first (see module)."""
    brief = (
        f"Chapter {chapter.id}: {chapter.title}\n"
        f"Instruction: {chapter.instruction or '(none)'}\n"
        "Grade THIS chapter only, from the files below."
    )
    out = [_artifact(run_id, f"chapter-brief/{chapter.id}", "text/plain", brief)]
    by_name = {a.name: a for a in stored if a.content is not None}
    found = 0
    for rel, media in chapter_paths(chapter.id):
        text: str | None = None
        if workspace is not None:
            try:
                text = read_course_file(workspace, rel)
            except SourceError as exc:
                # the reason, never the host path (the judge may be a hosted model); the
                # file exists, so the chapter is not also reported missing
                found += 1
                reason = exc.problem.message
                if reason.startswith("refused"):
                    reason = "refused: a link, a special file or a path outside the course"
                out.append(_artifact(run_id, rel, "text/plain", f"(not shown: {reason})"))
                continue
        elif rel in by_name:
            text = (by_name[rel].content or b"").decode("utf-8", errors="replace")
        if text is None:
            continue
        found += 1
        if rel.endswith("scenes.json"):
            out.append(_artifact(run_id, f"{rel} (narration)", "text/plain", _narration(text)))
        else:
            out.append(_artifact(run_id, rel, media, text))
    if not found:
        out.append(
            _artifact(
                run_id,
                f"{CHAPTERS_DIR}/{chapter.id}.md",
                "text/plain",
                "(missing: the course has no file for this chapter)",
            )
        )
    return out
