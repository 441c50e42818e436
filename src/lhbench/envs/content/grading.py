"""The content checks of one task of a pack, on one workspace: report and grade.

A programmatic-content task freezes its sources in ``tasks/<task>/<initial>/context`` (what
the agent's tools read, a pristine copy the checks use) and its annotated chapters in
``ground_truth/<task>/chapters.json``. :func:`check_task_workspace` runs every check,
slides included when a sandbox is given; the caller stores
:meth:`~lhbench.envs.content.checks.CourseReport.grade` on the pack's ``content-checks``
rubric.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lhbench.envs.content.checks import CourseReport, SlideResult, check_course
from lhbench.envs.content.course import SLIDES_DIR, GroundTruth, course_files, load_ground_truth
from lhbench.envs.content.errors import SourceError
from lhbench.envs.content.scenes import (
    SceneMedia,
    ffmpeg_available,
    measure_scenes,
    rendered_scenes,
)
from lhbench.envs.content.slides import check_slides, chromium_path, require_slide_renderer
from lhbench.envs.content.sources import SourceSet, load_sources
from lhbench.sandbox import Sandbox
from lhbench.schema import Rubric, Task, TaskPack

__all__ = [
    "CHECKS_RUBRIC",
    "TaskMaterials",
    "check_task_workspace",
    "checks_rubric",
    "task_materials",
]

CHECKS_RUBRIC = "content-checks"


@dataclass(frozen=True)
class TaskMaterials:
    """A task's frozen sources and its annotated chapters (None if it has none)."""

    sources: SourceSet
    ground_truth: GroundTruth | None


def task_materials(pack_dir: Path, task: Task) -> TaskMaterials:
    """The frozen sources and ground truth of ``task``; :class:`SourceError` when missing."""
    task_dir = pack_dir / "tasks" / task.id
    initial = task.environment.initial_state
    if initial is None:
        raise SourceError(task_dir / "task.yaml", "no initial_state holding context/")
    sources = load_sources(task_dir / initial / "context")
    gt = None
    if task.ground_truth:
        gt_file = pack_dir / "ground_truth" / task.ground_truth[0] / "chapters.json"
        if gt_file.is_file():
            gt = load_ground_truth(gt_file)
    return TaskMaterials(sources, gt)


def checks_rubric(pack: TaskPack) -> Rubric | None:
    """The pack's ``content-checks`` rubric, if it has one."""
    return next((r for r in pack.rubrics if r.id == CHECKS_RUBRIC), None)


def check_task_workspace(
    pack_dir: Path, task: Task, workspace: Path, *, sandbox: Sandbox | None = None
) -> CourseReport:
    """Every check of ``task`` on ``workspace``.

    Slides are rendered only with a sandbox and an installed Chromium (otherwise
    unmeasured); decks that hang or crash the renderer fail. Chromium without playwright
    raises :class:`~lhbench.errors.MissingDependency` (``lhbench[content]``): a renderer
    that cannot start is infrastructure, never a failed deck. Rendered video scenes are
    measured with ffprobe/ffmpeg in the sandbox when both are installed (otherwise timed
    from their manifest and narration WAV); a measurement that crashes fails those scenes.
    """
    mats = task_materials(pack_dir, task)
    slides = None
    if sandbox is not None and chromium_path() is not None:
        decks = course_files(workspace, SLIDES_DIR, ".html")
        if decks:
            require_slide_renderer()  # no renderer here is infrastructure, not failed decks
        try:
            slides = check_slides(workspace, decks, sandbox)
        except RuntimeError as exc:  # a deck that hangs or kills the renderer fails them all
            slides = [
                SlideResult(deck, 0, "any", False, (f"the decks could not be checked: {exc}",))
                for deck in decks
            ]
    media: dict[str, SceneMedia] | None = None
    if sandbox is not None and ffmpeg_available():
        try:
            media = measure_scenes(workspace, sandbox)
        except RuntimeError as exc:  # the measuring process died: no scene passes unmeasured
            media = {
                w: SceneMedia(error=f"not measured: {exc}") for w in rendered_scenes(workspace)
            }
    return check_course(workspace, mats.sources, mats.ground_truth, slides=slides, media=media)
