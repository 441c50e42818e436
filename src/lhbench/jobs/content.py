"""Programmatic content: chapter rubrics into the store, and every chapter graded on both scales.

- :func:`synthesize_chapter_rubrics`: for each annotated chapter and scale, a model writes
  1-3 chapter rubrics; each is stored as a rubric version with its provenance (pack, task,
  chapter, scale, annotations and ground-truth hashes, model, prompt version). Its key is
  that provenance, so a rerun with the same inputs reuses the stored rubric (no model call,
  no duplicate).
- :class:`ChapterGradeJob` / :func:`grade_chapters`: the output judges grade EACH chapter of
  each run with the pack's generic rubric of a scale and the chapter's own rubric(s) on that
  scale. A grade's key is (run, chapter, judge config, rubric content, scale, repeat):
  reruns resume and never duplicate; an answer that does not parse is an error row.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lhbench.config import Settings
from lhbench.envs.content.chapter_evidence import chapter_artifacts
from lhbench.envs.content.course import AnnotatedChapter, GroundTruth
from lhbench.envs.content.grading import CHECKS_RUBRIC, task_materials
from lhbench.errors import ConfigError, LhbenchError
from lhbench.jobs.packs import LoadedPack, pack_for_id, resolve_pack
from lhbench.jobs.runner import Assessment, JobSummary, Unit, short_reason
from lhbench.jobs.states import kept_workspace
from lhbench.judges import Evidence, RubricJudge
from lhbench.models import ModelPool, ReplyCache, resolve_model
from lhbench.schema import (
    ChapterGrade,
    ChapterRubricRecord,
    GradeStatus,
    Rubric,
    Run,
    RunStatus,
    Scale,
    Task,
    Tier,
    TierKind,
    chapter_grade_key,
    chapter_rubric_key,
)
from lhbench.store import ResultState, Store

__all__ = [
    "SCALES",
    "ChapterGradeJob",
    "ChapterGradeOutcome",
    "ChapterRubricSet",
    "SynthesisRow",
    "chapter_rubric_sets",
    "content_task",
    "grade_chapters",
    "synthesize_chapter_rubrics",
]

SCALES = (Scale.ZERO_TO_TWO, Scale.ONE_TO_FIVE)
_GRADABLE = {s for s in RunStatus} - {RunStatus.RUNNING, RunStatus.PENDING}


def content_task(loaded: LoadedPack, task_id: str | None) -> tuple[Path, Task, GroundTruth]:
    """The pack directory, the task and its annotated chapters (ConfigError when missing)."""
    if loaded.directory is None:
        raise ConfigError(f"pack {loaded.pack.id}: not on disk (its sources are needed)")
    tasks = loaded.pack.tasks
    if task_id is None:
        if len(tasks) != 1:
            raise ConfigError(
                f"{loaded.pack.id}: give --task (one of {', '.join(t.id for t in tasks)})"
            )
        task = tasks[0]
    else:
        try:
            task = loaded.pack.task(task_id)
        except KeyError:
            raise ConfigError(f"{loaded.pack.id}: no task {task_id!r}") from None
    gt = task_materials(loaded.directory, task).ground_truth
    if gt is None:
        raise ConfigError(
            f"{loaded.pack.id}: task {task.id} has no annotated chapters "
            "(ground_truth/<task>/chapters.json)"
        )
    return loaded.directory, task, gt


def _gt_sha256(pack_dir: Path, task: Task) -> str:
    path = pack_dir / "ground_truth" / task.ground_truth[0] / "chapters.json"
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class SynthesisRow:
    """One chapter × scale of a synthesis: the rubric stored (or reused), or the error."""

    chapter_id: str
    scale: Scale
    rubric_id: str | None
    new: bool
    key: str
    path: str | None = None
    error: str | None = None


async def synthesize_chapter_rubrics(
    store: Store,
    settings: Settings,
    *,
    pack: str,
    model: str,
    task: str | None = None,
    out_dir: Path | None = None,
    wrapped: Any = None,
) -> list[SynthesisRow]:
    """Chapter rubrics for every annotated chapter on both scales, stored with provenance.

    Args:
        store: Where the rubric versions go.
        settings: Settings (model aliases, pack paths).
        pack: Pack directory or bundled name.
        model: Model string or alias that writes the rubrics.
        task: Task id (default: the pack's only task).
        out_dir: Also write each rubric as a pack rubric file here.
        wrapped: Test hook: a pydantic-ai model used instead of the real one.

    A chapter whose answer never makes a valid rubric is a row with ``error`` (nothing is
    stored for it); the others are stored.
    """
    from lhbench.envs.content.chapter_rubrics import (
        PROMPT_VERSION,
        SynthesisError,
        annotations_sha256,
        synthesise_chapter_rubric,
        write_rubric,
    )

    loaded = resolve_pack(pack, settings, store)
    pack_dir, t, gt = content_task(loaded, task)
    gt_hash = _gt_sha256(pack_dir, t)
    spec = resolve_model(model, settings.models)
    rows: list[SynthesisRow] = []
    pool = ModelPool(store)
    async with pool.session():
        managed = pool.get(spec, wrapped=wrapped)
        for chapter in gt.chapters:
            ann = annotations_sha256(chapter, gt.global_notes)
            for scale in SCALES:
                key = chapter_rubric_key(
                    loaded.pack.id, t.id, chapter.id, scale, ann, spec.model_string, PROMPT_VERSION
                )
                record = store.get_chapter_rubric(key)
                new = record is None
                if record is None:
                    try:
                        rubric = await synthesise_chapter_rubric(
                            managed,
                            chapter,
                            scale,
                            global_notes=gt.global_notes,
                            model_name=spec.model_string,
                        )
                    except SynthesisError as exc:
                        rows.append(
                            SynthesisRow(chapter.id, scale, None, False, key, error=str(exc))
                        )
                        continue
                    record = ChapterRubricRecord(
                        key=key,
                        pack_id=loaded.pack.id,
                        task_id=t.id,
                        chapter_id=chapter.id,
                        scale=scale,
                        annotations_sha256=ann,
                        ground_truth_sha256=gt_hash,
                        model=spec.model_string,
                        prompt_version=PROMPT_VERSION,
                        rubric=rubric,
                    )
                    new = store.save_chapter_rubric(record)
                path = str(write_rubric(record.rubric, out_dir)) if out_dir is not None else None
                rows.append(SynthesisRow(chapter.id, scale, record.rubric.id, new, key, path))
    return rows


@dataclass(frozen=True)
class ChapterRubricSet:
    """What one chapter is graded with on one scale: the generic rubric and its own."""

    task_id: str
    chapter: AnnotatedChapter
    scale: Scale
    generic: Rubric
    specific: list[Rubric]

    def rubrics(self) -> list[tuple[str, Rubric]]:
        """(kind, rubric): the generic one first."""
        return [("generic", self.generic), *(("chapter", r) for r in self.specific)]


def _scale_of(rubric: Rubric) -> Scale | None:
    try:
        tier = rubric.tier(TierKind.OUTPUT)
    except KeyError:
        return None
    scales = {d.scale for d in tier.dimensions}
    return next(iter(scales)) if len(scales) == 1 else None


def chapter_rubric_sets(
    store: Store,
    pack_id: str,
    task: Task,
    rubrics: Sequence[Rubric],
    gt: GroundTruth,
    scales: Sequence[Scale] = SCALES,
) -> list[ChapterRubricSet]:
    """Per chapter and scale: the task's generic rubric and the newest chapter rubric.

    Only chapter rubrics written from the chapter's current annotations count (edited
    annotations make earlier ones stale).

    Raises:
        ConfigError: the task has no generic rubric on a scale, or a chapter has no stored
            chapter rubric (run ``lhbench content synthesize-rubrics`` first).
    """
    from lhbench.envs.content.chapter_rubrics import annotations_sha256

    by_id = {r.id: r for r in rubrics}
    generic: dict[Scale, Rubric] = {}
    for rid in task.rubrics:
        r = by_id.get(rid)
        if r is None or r.id == CHECKS_RUBRIC:
            continue
        scale = _scale_of(r)
        if scale is not None:
            generic.setdefault(scale, r)
    out = []
    for scale in scales:
        if scale not in generic:
            raise ConfigError(
                f"{pack_id}: task {task.id} has no generic output rubric on the {scale.value} scale"
            )
        for chapter in gt.chapters:
            ann = annotations_sha256(chapter, gt.global_notes)
            stored = [
                rec
                for rec in store.list_chapter_rubrics(
                    pack_id=pack_id, task_id=task.id, chapter_id=chapter.id, scale=scale.value
                )
                if rec.annotations_sha256 == ann
            ]
            if not stored:
                raise ConfigError(
                    f"{pack_id}: chapter {chapter.id} has no {scale.value} chapter rubric in "
                    f"the store: run `lhbench content synthesize-rubrics {pack_id} --model M`"
                )
            out.append(
                ChapterRubricSet(task.id, chapter, scale, generic[scale], [stored[-1].rubric])
            )
    return out


@dataclass(frozen=True)
class _ChapterUnit:
    run: Run
    chapter: AnnotatedChapter
    scale: Scale
    kind: str
    rubric: Rubric
    tier: Tier
    judge: RubricJudge
    repeat: int


class ChapterGradeJob:
    """Every run × chapter × scale × rubric × judge × repeat (the Job protocol)."""

    name = "chapter-grade"

    def __init__(
        self,
        store: Store,
        runs: Sequence[Run],
        sets: Sequence[ChapterRubricSet],
        judges: Sequence[RubricJudge],
        *,
        tasks: Mapping[str, Task],
        repeats: int = 1,
    ) -> None:
        self.store = store
        self.runs = list(runs)
        self.sets = list(sets)
        self.judges = list(judges)
        self.tasks = dict(tasks)
        self.repeats = repeats
        self._evidence: dict[tuple[str, str], Evidence] = {}
        self.caches = list(
            {
                id(c): c
                for j in judges
                if isinstance(c := getattr(j.client, "cache", None), ReplyCache)
            }.values()
        )

    def plan(self) -> list[Unit[_ChapterUnit]]:
        """Run-major, then chapter, so one chapter's evidence serves all its grades."""
        out = []
        for run in self.runs:
            for cs in self.sets:
                for kind, rubric in cs.rubrics():
                    tier = rubric.tier(TierKind.OUTPUT)
                    for judge in self.judges:
                        for k in range(self.repeats):
                            key = chapter_grade_key(
                                run.id, cs.chapter.id, judge.identity.key,
                                rubric.content_hash, cs.scale, k,
                            )  # fmt: skip
                            label = (
                                f"{run.id} · {cs.chapter.id} · {rubric.id} × "
                                f"{judge.identity.label}" + (f" #{k}" if k else "")
                            )
                            payload = _ChapterUnit(
                                run, cs.chapter, cs.scale, kind, rubric, tier, judge, k
                            )
                            out.append(Unit(key, label, payload))
        return out

    def stored(self, keys: Sequence[str]) -> Mapping[str, ResultState]:
        """Stored chapter-grade states."""
        return self.store.chapter_grade_states(keys)

    def _chapter_evidence(self, run: Run, chapter: AnnotatedChapter) -> Evidence:
        ev = self._evidence.get((run.id, chapter.id))
        if ev is None:
            ws = kept_workspace(run)
            stored = [] if ws is not None else self.store.list_artifacts(run.id)
            ev = Evidence(
                run=run,
                task=self.tasks.get(run.task_id),
                trajectory=None,
                artifacts=chapter_artifacts(run.id, chapter, workspace=ws, stored=stored),
            )
            self._evidence[(run.id, chapter.id)] = ev
        return ev

    async def run(self, unit: Unit[_ChapterUnit]) -> ChapterGrade:
        """One judge's grade of one chapter on one rubric (a failure is a grade that says so)."""
        u = unit.payload
        evidence = self._chapter_evidence(u.run, u.chapter)
        grade = await u.judge.grade(evidence, u.rubric, u.tier, repeat=u.repeat, key=unit.key)
        return ChapterGrade(
            key=unit.key, chapter_id=u.chapter.id, scale=u.scale, kind=u.kind, grade=grade
        )

    def assess(self, result: ChapterGrade) -> Assessment:
        """Ok, a parse failure (final), or an error (retryable when transport)."""
        g = result.grade
        if g.status == GradeStatus.OK:
            return Assessment(True)
        if g.status == GradeStatus.PARSE_ERROR:
            return Assessment(False, "answer did not fit the rubric (parse error)")
        return Assessment(False, short_reason(g.error), g.retryable)

    def write(self, results: Sequence[ChapterGrade]) -> None:
        """The responses they came from, then the chapter grades."""
        for cache in self.caches:
            if cache.pending:
                cache.flush()
        self.store.save_chapter_grades(results)


@dataclass
class ChapterGradeOutcome:
    """The chapter-grading jobs' summaries (one per task), rubrics, judges and grades."""

    summaries: list[JobSummary[Any]]
    runs: list[Run]
    sets: list[ChapterRubricSet]
    judges: list[str]
    grades: list[ChapterGrade] = field(default_factory=list)


async def grade_chapters(
    store: Store,
    settings: Settings,
    *,
    pack: str,
    panel: Sequence[str] | None = None,
    run_ids: Sequence[str] | None = None,
    scales: Sequence[Scale] = SCALES,
    repeats: int = 1,
    concurrency: int = 16,
    use_cache: bool = True,
    retry_errors: bool = False,
    progress: Any = None,
    models: dict[str, Any] | None = None,
) -> ChapterGradeOutcome:
    """Grade every chapter of a content pack's stored runs on both scales.

    Args:
        store: The store (runs, chapter rubrics, and where the grades go).
        settings: Settings (model aliases, ``judge_panel``, ``pack_paths``).
        pack: Pack id, directory or bundled name.
        panel: Judge models (default ``judge_panel``).
        run_ids: Only these runs.
        scales: The scales to grade on (default both).
        repeats: Grades per chapter, rubric and judge.
        concurrency: Grades in flight.
        use_cache: Use the response cache.
        retry_errors: Re-ask grades stored as parse failures.
        progress: Progress-bar factory.
        models: Test hook: model ref -> a pydantic-ai model used instead of the real one.
    """
    from lhbench.jobs.common import panel_specs
    from lhbench.jobs.common import run_with_progress as _run

    specs = panel_specs(panel, settings)
    loaded = pack_for_id(store, settings, pack) or resolve_pack(pack, settings, store)
    runs = [r for r in store.list_runs(pack_id=loaded.pack.id) if r.status in _GRADABLE]
    if run_ids:
        missing = set(run_ids) - {r.id for r in runs}
        if missing:
            raise LhbenchError(
                f"--run: not in pack {loaded.pack.id!r}: {', '.join(sorted(missing))}"
            )
        runs = [r for r in runs if r.id in set(run_ids)]
    if not runs:
        raise LhbenchError(f"no finished runs of pack {loaded.pack.id!r} in the store")
    tasks = {t.id: t for t in loaded.pack.tasks}
    sets: list[ChapterRubricSet] = []
    for task_id in sorted({r.task_id for r in runs}):
        _dir, task, gt = content_task(loaded, task_id)
        sets.extend(
            chapter_rubric_sets(store, loaded.pack.id, task, loaded.pack.rubrics, gt, scales)
        )
    pool = ModelPool(store if use_cache else None)
    wrapped = models or {}
    async with pool.session():
        judges = [RubricJudge(pool.get(s, wrapped=wrapped.get(s.ref)), s) for s in specs]
        summaries = []
        all_keys: set[str] = set()
        for task_id in sorted({r.task_id for r in runs}):
            mine = [r for r in runs if r.task_id == task_id]
            job = ChapterGradeJob(
                store,
                mine,
                [cs for cs in sets if cs.task_id == task_id],
                judges,
                tasks=tasks,
                repeats=repeats,
            )
            all_keys |= {u.key for u in job.plan()}
            summaries.append(
                await _run(
                    job,
                    progress,
                    "grading chapters",
                    concurrency=concurrency,
                    retry_errors=retry_errors,
                )
            )
    out = ChapterGradeOutcome(summaries, runs, sets, [j.identity.label for j in judges])
    out.grades = [
        g for g in store.list_chapter_grades(run_ids=[r.id for r in runs]) if g.key in all_keys
    ]
    return out
