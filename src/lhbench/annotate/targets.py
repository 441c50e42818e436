"""Which pack tasks can be annotated, and their sources, ground truth and export.

A target is a programmatic-content task whose initial state holds a frozen extraction
(``context/sources.json``). Its annotations export to
``ground_truth/<task's ground truth>/chapters.json`` in the exact ``GroundTruth`` format
the citation-coverage check reads.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from lhbench.annotate.model import (
    AnnotationError,
    AnnotationSet,
    to_ground_truth,
    validate_annotations,
)
from lhbench.envs.content import GroundTruth, SourceSet, load_ground_truth, load_sources
from lhbench.envs.content.extract import SOURCES_FILE
from lhbench.errors import LhbenchError, StoreError
from lhbench.schema import Task
from lhbench.store import AnnotationVersion, Store

__all__ = [
    "AnnotationTarget",
    "annotation_target",
    "export_annotations",
    "find_targets",
    "ground_truth_json",
    "save_version",
]


@dataclass(frozen=True)
class AnnotationTarget:
    """A pack's task that can be annotated: where its sources and ground truth live."""

    pack_id: str
    pack_dir: Path
    task: Task

    @property
    def task_id(self) -> str:
        """The task's id."""
        return self.task.id

    @property
    def context_dir(self) -> Path:
        """The frozen extraction (``<source_id>.md`` plus ``sources.json``)."""
        return (
            self.pack_dir
            / "tasks"
            / self.task.id
            / (self.task.environment.initial_state or "")
            / "context"
        )

    @property
    def ground_truth_file(self) -> Path:
        """Where the export goes: ``ground_truth/<name>/chapters.json``."""
        name = self.task.ground_truth[0] if self.task.ground_truth else self.task.id
        return self.pack_dir / "ground_truth" / name / "chapters.json"

    def sources(self) -> SourceSet:
        """The task's frozen sources (:class:`~lhbench.envs.content.SourceError` if broken)."""
        return load_sources(self.context_dir)

    def ground_truth(self) -> GroundTruth | None:
        """The pack's current annotated chapters, if it has them."""
        f = self.ground_truth_file
        return load_ground_truth(f) if f.is_file() and not f.is_symlink() else None


def _task_targets(pack_dir: Path) -> list[AnnotationTarget]:
    from lhbench.packs import load_pack

    pack = load_pack(pack_dir)
    out = []
    for t in pack.tasks:
        if t.environment.initial_state is None:
            continue
        tgt = AnnotationTarget(pack.id, pack_dir, t)
        if (tgt.context_dir / SOURCES_FILE).is_file():
            out.append(tgt)
    return out


def find_targets(pack_paths: Iterable[Path] = ()) -> dict[tuple[str, str], AnnotationTarget]:
    """Every annotatable task of the packs under ``pack_paths``, then the bundled packs.

    A pack id found twice keeps its first directory (configured paths before bundled
    packs); packs that do not load are left out.
    """
    from lhbench.packs.bundled import bundled_pack_dirs, find_pack_dirs

    dirs = [d for root in pack_paths for d in find_pack_dirs(Path(root))] + bundled_pack_dirs()
    found: dict[tuple[str, str], AnnotationTarget] = {}
    packs_seen: set[str] = set()
    for d in dirs:
        try:
            targets = _task_targets(d)
        except LhbenchError:
            continue
        ids = {t.pack_id for t in targets}
        if ids & packs_seen:
            continue
        packs_seen |= ids
        for t in targets:
            found[(t.pack_id, t.task_id)] = t
    return found


def annotation_target(pack_dir: Path, task_id: str) -> AnnotationTarget:
    """The task ``task_id`` of the pack at ``pack_dir``.

    Raises:
        AnnotationError: the pack has no such task, or it has no frozen sources.
    """
    for t in _task_targets(pack_dir):
        if t.task_id == task_id:
            return t
    raise AnnotationError(
        "", f"{pack_dir}: no task {task_id!r} with frozen sources (context/sources.json)"
    )


def ground_truth_json(doc: AnnotationSet) -> str:
    """``chapters.json`` text of an annotation set (as the pack's generator writes it)."""
    gt = to_ground_truth(doc)
    return json.dumps(gt.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


def export_annotations(
    store: Store, target: AnnotationTarget, version: int | None = None
) -> tuple[Path, AnnotationVersion]:
    """Write a saved version (default: the newest) as the task's ``chapters.json``.

    Raises:
        StoreError: there is no such version.
        AnnotationError: the version has no chapter.
    """
    saved = store.get_annotations(target.pack_id, target.task_id, version)
    if saved is None:
        which = "no version" if version is None else f"no version {version}"
        raise StoreError(f"annotations of {target.pack_id}/{target.task_id}: {which} saved")
    text = ground_truth_json(AnnotationSet.model_validate(saved.content))
    out = target.ground_truth_file
    out.parent.mkdir(parents=True, exist_ok=True)
    # a fresh file (O_EXCL), renamed over the old one: never written through a link planted
    # at a fixed temporary name, and a crash leaves the old file whole
    fd, tmp = tempfile.mkstemp(prefix=".chapters-", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out, saved


def save_version(
    store: Store,
    target: AnnotationTarget,
    data: object,
    *,
    author: str,
    parent: int | None,
    sources: SourceSet | None = None,
) -> AnnotationVersion:
    """Check ``data`` against the task's sources and save it as a new version.

    Raises:
        AnnotationError: the content is malformed or a span does not hold.
        StaleVersionError: ``parent`` is not the newest version.
    """
    doc = validate_annotations(data, sources or target.sources())
    return store.save_annotations(
        target.pack_id, target.task_id, doc.model_dump(mode="json"), author=author, parent=parent
    )
