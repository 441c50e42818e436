"""Programmatic content: checks grades, chapter rubrics, every chapter graded on both scales.

Each is a job the one runner drives (plan → skip stored → run bounded → write in batches):

- :class:`ContentGradeJob` / :func:`grade_content` (``lhbench content grade``): every run's
  programmatic grade on the pack's ``content-checks`` rubric, from its kept workspace. Its
  key is the grade's (run, the checks' identity, the rubric's content): a grade the verify
  job or an earlier run stored is not computed again.
- :class:`ChapterRubricJob` / :func:`synthesize_chapter_rubrics`: for each annotated chapter
  and scale, a model writes 1-3 chapter rubrics; each is stored as a rubric version with
  its provenance (pack, task, chapter, scale, annotations and ground-truth hashes, model,
  prompt version). Its key is that provenance, so a rerun with the same inputs reuses the
  stored rubric (no model call, no duplicate).
- :class:`ChapterGradeJob` / :func:`grade_chapters`: the output judges grade EACH chapter of
  each run with the pack's generic rubric of a scale and the chapter's own rubric(s) on that
  scale. A grade's key is (run, chapter, judge config, rubric content, scale, repeat):
  reruns resume and never duplicate; an answer that does not parse is an error row.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
    Grade,
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
    grade_key,
)
from lhbench.store import ResultState, Store

if TYPE_CHECKING:
    from lhbench.sandbox import Sandbox

__all__ = [
    "SCALES",
    "ChapterGradeJob",
    "ChapterGradeOutcome",
    "ChapterRubricJob",
    "ChapterRubricSet",
    "ContentGradeJob",
    "ContentGradeOutcome",
    "ContentGradeRow",
    "SynthesisOutcome",
    "SynthesisRow",
    "chapter_rubric_sets",
    "content_task",
    "grade_chapters",
    "grade_content",
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
    record: ChapterRubricRecord | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class _RubricUnit:
    chapter: AnnotatedChapter
    scale: Scale
    annotations: str


class ChapterRubricJob:
    """Every annotated chapter × scale of a task: its chapter rubric (the Job protocol).

    A unit's key is the rubric's provenance (pack, task, chapter, scale, annotations, model,
    prompt version): a rubric stored with it is reused, never asked for again. An answer
    that never makes a valid rubric is a failed row, nothing stored (asked again next time).
    """

    name = "chapter-rubrics"

    def __init__(
        self,
        store: Store,
        pack_id: str,
        task: Task,
        gt: GroundTruth,
        *,
        ground_truth_sha256: str,
        model: Any,
        model_string: str,
    ) -> None:
        self.store = store
        self.pack_id = pack_id
        self.task = task
        self.gt = gt
        self.gt_hash = ground_truth_sha256
        self.model = model
        self.model_string = model_string

    def plan(self) -> list[Unit[_RubricUnit]]:
        """One unit per chapter and scale."""
        from lhbench.envs.content.chapter_rubrics import PROMPT_VERSION, annotations_sha256

        out = []
        for chapter in self.gt.chapters:
            ann = annotations_sha256(chapter, self.gt.global_notes)
            for scale in SCALES:
                key = chapter_rubric_key(
                    self.pack_id,
                    self.task.id,
                    chapter.id,
                    scale,
                    ann,
                    self.model_string,
                    PROMPT_VERSION,
                )
                out.append(
                    Unit(key, f"{chapter.id} · {scale.value}", _RubricUnit(chapter, scale, ann))
                )
        return out

    def stored(self, keys: Sequence[str]) -> Mapping[str, ResultState]:
        """The keys a chapter rubric is stored under."""
        have = {
            r.key
            for r in self.store.list_chapter_rubrics(pack_id=self.pack_id, task_id=self.task.id)
        }
        return {k: "ok" for k in keys if k in have}

    async def run(self, unit: Unit[_RubricUnit]) -> SynthesisRow:
        """Ask the model for one chapter's rubric on one scale."""
        from lhbench.envs.content.chapter_rubrics import (
            PROMPT_VERSION,
            SynthesisError,
            synthesise_chapter_rubric,
        )

        u = unit.payload
        try:
            rubric = await synthesise_chapter_rubric(
                self.model,
                u.chapter,
                u.scale,
                global_notes=self.gt.global_notes,
                model_name=self.model_string,
            )
        except SynthesisError as exc:
            return SynthesisRow(u.chapter.id, u.scale, None, False, unit.key, error=str(exc))
        record = ChapterRubricRecord(
            key=unit.key,
            pack_id=self.pack_id,
            task_id=self.task.id,
            chapter_id=u.chapter.id,
            scale=u.scale,
            annotations_sha256=u.annotations,
            ground_truth_sha256=self.gt_hash,
            model=self.model_string,
            prompt_version=PROMPT_VERSION,
            rubric=rubric,
        )
        return SynthesisRow(u.chapter.id, u.scale, rubric.id, True, unit.key, record=record)

    def assess(self, result: SynthesisRow) -> Assessment:
        """A rubric is ok; an answer that never made one says why."""
        if result.record is not None:
            return Assessment(True)
        return Assessment(False, "no valid chapter rubric")

    def write(self, results: Sequence[SynthesisRow]) -> None:
        """The rubric versions (one already stored under a key is kept)."""
        for r in results:
            if r.record is not None:
                self.store.save_chapter_rubric(r.record)


@dataclass
class SynthesisOutcome:
    """The synthesis job's summary and one row per chapter × scale."""

    summary: JobSummary[SynthesisRow]
    rows: list[SynthesisRow]


async def synthesize_chapter_rubrics(
    store: Store,
    settings: Settings,
    *,
    pack: str,
    model: str,
    task: str | None = None,
    out_dir: Path | None = None,
    concurrency: int = 4,
    progress: Any = None,
    wrapped: Any = None,
) -> SynthesisOutcome:
    """Chapter rubrics for every annotated chapter on both scales, stored with provenance.

    Args:
        store: Where the rubric versions go.
        settings: Settings (model aliases, pack paths).
        pack: Pack directory or bundled name.
        model: Model string or alias that writes the rubrics.
        task: Task id (default: the pack's only task).
        out_dir: Also write each rubric as a pack rubric file here.
        concurrency: Chapters asked at once.
        progress: Progress-bar factory.
        wrapped: Test hook: a pydantic-ai model used instead of the real one.

    A chapter whose answer never makes a valid rubric is a row with ``error`` (nothing is
    stored for it); the others are stored, and a rerun asks only for what is missing.
    """
    from lhbench.envs.content.chapter_rubrics import write_rubric
    from lhbench.jobs.runner import run_with_progress

    loaded = resolve_pack(pack, settings, store)
    pack_dir, t, gt = content_task(loaded, task)
    spec = resolve_model(model, settings.models)
    pool = ModelPool(store)
    async with pool.session():
        job = ChapterRubricJob(
            store,
            loaded.pack.id,
            t,
            gt,
            ground_truth_sha256=_gt_sha256(pack_dir, t),
            model=pool.get(spec, wrapped=wrapped),
            model_string=spec.model_string,
        )
        summary = await run_with_progress(
            job, progress, "synthesising chapter rubrics", concurrency=concurrency
        )
    ran = {r.key: r for r in summary.results}
    rows = []
    for unit in job.plan():
        u = unit.payload
        done = ran.get(unit.key)
        record = store.get_chapter_rubric(unit.key)
        if record is None:
            error = done.error if done is not None else "not synthesised: see the job summary"
            rows.append(SynthesisRow(u.chapter.id, u.scale, None, False, unit.key, error=error))
            continue
        path = str(write_rubric(record.rubric, out_dir)) if out_dir is not None else None
        new = done is not None and done.record is not None
        rows.append(
            SynthesisRow(u.chapter.id, u.scale, record.rubric.id, new, unit.key, path, None, record)
        )
    return SynthesisOutcome(summary, rows)


# -- content-checks grades ------------------------------------------------------------------


@dataclass(frozen=True)
class ContentGradeRow:
    """One run's content-checks grade (None when it could not be graded, and why)."""

    run_id: str
    grade: Grade | None
    detail: str
    error: str | None = None


class ContentGradeJob:
    """Every run's programmatic grade on the pack's content-checks rubric (the Job protocol).

    A grade made without the sandboxed checks (``slides=False``: no slides, no rendered
    scenes) is made again by a job that has them; one made with them is kept.
    """

    name = "content-grade"

    def __init__(
        self,
        store: Store,
        pack: LoadedPack,
        runs: Sequence[Run],
        rubric: Rubric,
        *,
        sandbox: Sandbox | None,
    ) -> None:
        from lhbench.envs.content.checks import checks_identity

        self.store = store
        self.pack = pack
        self.runs = list(runs)
        self.rubric = rubric
        self.sandbox = sandbox
        self.judge_key = checks_identity().key

    def key(self, run: Run) -> str:
        """The grade's key (the verify job's content check stores the same)."""
        return grade_key(run.id, self.judge_key, self.rubric.content_hash, TierKind.OUTPUT.value, 0)

    def plan(self) -> list[Unit[Run]]:
        """One unit per run."""
        return [Unit(self.key(r), r.id, r) for r in self.runs]

    def stored(self, keys: Sequence[str]) -> Mapping[str, ResultState]:
        """Stored grades; a partial one (no sandboxed checks) is redone by a full job."""
        states = self.store.grade_states(keys)
        if self.sandbox is None:
            return states
        out = dict(states)
        for g in self.store.list_grades(
            rubric_id=self.rubric.id, run_ids=[r.id for r in self.runs]
        ):
            if g.key in out and _partial(g):
                out[g.key] = "retryable"
        return out

    async def run(self, unit: Unit[Run]) -> ContentGradeRow:
        """Check the run's kept workspace; its grade (never one coerced from a failure)."""
        from lhbench.envs.content import SourceError
        from lhbench.envs.content.grading import check_task_workspace

        run = unit.payload
        # only a workspace lhbench's harness kept (an imported run's word is not taken)
        ws = kept_workspace(run)
        if ws is None or self.pack.directory is None:
            return ContentGradeRow(run.id, None, "", "no kept workspace")
        try:
            report = await asyncio.to_thread(
                check_task_workspace,
                self.pack.directory,
                self.pack.pack.task(run.task_id),
                ws,
                sandbox=self.sandbox,
            )
        except SourceError as exc:  # never a coerced score: no grade, and why
            return ContentGradeRow(run.id, None, "", f"not graded: {exc}")
        grade = report.grade(run.id, self.rubric)
        if self.sandbox is None:
            raw = json.loads(grade.raw_output or "{}")
            raw["sandboxed"] = False
            grade = grade.model_copy(update={"raw_output": json.dumps(raw)})
        return ContentGradeRow(run.id, grade, report.detail())

    def assess(self, result: ContentGradeRow) -> Assessment:
        """Graded, or why not."""
        if result.grade is not None:
            return Assessment(True)
        return Assessment(False, (result.error or "not graded").split(":", 1)[0])

    def write(self, results: Sequence[ContentGradeRow]) -> None:
        """The grades (one replaces the run's grade under the same key)."""
        self.store.save_grades([r.grade for r in results if r.grade is not None])


def _partial(grade: Grade) -> bool:
    try:
        return json.loads(grade.raw_output or "{}").get("sandboxed") is False
    except ValueError:
        return False


@dataclass
class ContentGradeOutcome:
    """The job's summary and each run's row (its stored grade, or why it has none)."""

    summary: JobSummary[ContentGradeRow]
    rows: list[ContentGradeRow]


async def grade_content(
    store: Store,
    settings: Settings,
    *,
    pack: str,
    run_ids: Sequence[str] | None = None,
    slides: bool = True,
    concurrency: int = 2,
    progress: Any = None,
) -> ContentGradeOutcome:
    """Store each run's programmatic grade on the pack's content-checks rubric.

    Args:
        store: The store (runs, and where the grades go).
        settings: Settings (the sandbox, pack paths).
        pack: Pack id, directory or bundled name.
        run_ids: Only these runs (default: every run of the pack).
        slides: Run the sandboxed checks (slides in Chromium, rendered scenes).
        concurrency: Runs checked at once (each may start a browser).
        progress: Progress-bar factory.

    Raises:
        ConfigError: the pack has no content-checks rubric, or a run is not the pack's.
    """
    from lhbench.envs.content.grading import checks_rubric
    from lhbench.jobs.runner import run_with_progress

    loaded = pack_for_id(store, settings, pack) or resolve_pack(pack, settings, store)
    rubric = checks_rubric(loaded.pack)
    if rubric is None:
        raise ConfigError(f"{pack}: the pack has no content-checks rubric")
    runs = store.list_runs(pack_id=loaded.pack.id)
    if run_ids:
        missing = set(run_ids) - {r.id for r in runs}
        if missing:
            names = ", ".join(sorted(missing))
            raise ConfigError(f"--run: not in pack {loaded.pack.id!r}: {names}")
        runs = [r for r in runs if r.id in set(run_ids)]
    sandbox = None
    if slides:
        from lhbench.sandbox import get_sandbox

        sandbox = get_sandbox(
            settings.sandbox, unsafe=settings.unsafe_no_sandbox, image=settings.sandbox_image
        )
    job = ContentGradeJob(store, loaded, runs, rubric, sandbox=sandbox)
    summary = await run_with_progress(job, progress, "content checks", concurrency=concurrency)
    ran = {r.run_id: r for r in summary.results}
    grades = store.list_grades(rubric_id=rubric.id, run_ids=[r.id for r in runs])
    stored = {g.key: g for g in grades}
    rows = []
    for run in runs:
        g = stored.get(job.key(run))
        done = ran.get(run.id)
        if g is None:
            rows.append(done or ContentGradeRow(run.id, None, "", "not graded: see the summary"))
            continue
        detail = done.detail if done is not None else _stored_detail(g)
        rows.append(ContentGradeRow(run.id, g, detail))
    return ContentGradeOutcome(summary, rows)


def _stored_detail(grade: Grade) -> str:
    try:
        return str(json.loads(grade.raw_output or "{}").get("detail", ""))
    except ValueError:
        return ""


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
