"""Each job's options, declared once: the API function's parameters are these fields.

``lhbench.run_agents(pack, model=…, …)`` builds a :class:`RunOptions` from its keywords
(its signature *is* the class's), the job reads it, and ``lhbench run`` passes its parsed
flags under the same names, so an option cannot be added to one face and missed by the
other (``tests/test_api_faces.py`` checks every command's flags against these fields).

Every class ends with where the job runs: ``store`` (default: open the configured one),
``settings`` (default: ``lhbench.toml`` and ``LHBENCH_*``, as the CLI reads them) and
``progress`` (a ``label -> context manager`` progress-bar factory; the CLI draws bars).
Each checks its values when it is made and says which one was wrong.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lhbench.errors import ConfigError

if TYPE_CHECKING:
    from lhbench.config import Settings
    from lhbench.store import Store

__all__ = [
    "ExportOptions",
    "GradeOptions",
    "ImportOptions",
    "JobPlace",
    "JudgeOptions",
    "ReportOptions",
    "RunOptions",
    "VerifyOptions",
]

TIERS = ("process", "output", "behavior")
JUDGES = ("agent", "llm")
LOG_FORMATS = ("eval", "json")


def _names(value: str | Sequence[str] | None, flag: str) -> tuple[str, ...] | None:
    # a comma-separated string (as typed on the command line) or a sequence of names
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else list(value)
    if not all(isinstance(v, str) for v in items):
        raise ConfigError(f"{flag}: expected names (strings), got {value!r}")
    names = tuple(v.strip() for v in items if v.strip())
    return names or None


def _at_least_one(value: int, flag: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{flag} {value!r}: expected a whole number >= 1")


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)  # normalising a frozen dataclass's own field


@dataclass(frozen=True, kw_only=True)
class JobPlace:
    """Where a job runs: the store, the settings and the progress bars (not what it does).

    Attributes:
        store: An open store (default: the configured one, opened and closed by the job).
        settings: Settings (default: ``lhbench.toml`` and ``LHBENCH_*``).
        progress: A ``label -> context manager`` progress factory (default: none).
    """

    store: Store | None = None
    settings: Settings | None = None
    progress: Any = None


@dataclass(frozen=True)
class RunOptions(JobPlace):
    """Running a harness on a pack's tasks (``lhbench run``).

    Attributes:
        pack: A bundled pack id, a pack under ``pack_paths``, or a directory.
        model: The agent's model string or alias.
        harness: native, claude-code, codex, gemini-cli or a plugin's harness.
        tasks: Only these task ids (a sequence, or comma-separated).
        repeats: Runs per task.
        versions: Version tags ``{"skill": "v1"}`` (checked against the pack's variants).
        parallel: Runs at once.
        executor: local or ray.
        ray_address: An existing Ray cluster (default: the ``ray_address`` setting).
        retry_errors: Also rerun timed-out or over-limit runs.
        verify: Run the tasks' checks on each run that ends.
        agent_model: A pydantic-ai model the agent uses instead of ``model``'s client
            (tests: ``FunctionModel``); runs on the local executor.
    """

    pack: str
    _: KW_ONLY
    model: str
    harness: str = "native"
    tasks: Sequence[str] | str | None = None
    repeats: int = 1
    versions: Mapping[str, str] | None = None
    parallel: int = 2
    executor: str = "local"
    ray_address: str | None = None
    retry_errors: bool = False
    verify: bool = True
    agent_model: Any = None

    def __post_init__(self) -> None:
        if not self.model:
            raise ConfigError("--model is required (a model string or an alias from lhbench.toml)")
        _at_least_one(self.repeats, "--repeats")
        _at_least_one(self.parallel, "--parallel")
        if self.executor not in ("local", "ray"):
            raise ConfigError(f"--executor {self.executor!r}: expected local or ray")
        _set(self, "tasks", _names(self.tasks, "--tasks"))
        _set(self, "versions", dict(self.versions or {}))


@dataclass(frozen=True)
class GradeOptions(JobPlace):
    """Grading a pack's stored runs with a judge panel, or pairwise (``lhbench judge``).

    Attributes:
        pack: The pack id (or directory) whose runs are graded.
        tier: process, output or behavior.
        panel: Judge models (aliases or model strings); default ``judge_panel``.
        rubric: Rubric id (default: the tasks' own rubric with that tier).
        run_ids: Only these runs (a sequence, or comma-separated).
        repeats: Grades per run and judge (the judge noise floor needs >= 2).
        concurrency: Grades in flight (model calls are further limited per endpoint).
        use_cache: Use the response cache (False: neither read nor written).
        retry_errors: Re-ask grades stored as final failures (parse errors).
        pairwise: Pairwise votes instead of rubric grades.
        judge_models: Model ref -> a pydantic-ai model used instead of the real one (tests).
        with_grades: Return the plan's grades as ``Grade`` objects (``outcome.grades``);
            False: only their figures per run (``outcome.figures``), all ``lhbench
            judge`` prints, read without a document (a million grades cost minutes and
            gigabytes as objects), and ``Run`` models built only for the runs with a grade
            not stored ok (``outcome.runs``; every run's plain columns in
            ``outcome.graded``).
        executor: local, or ray: rubric grades made on Ray workers, stored here.
        ray_address: An existing Ray cluster for ``executor="ray"`` (head:6379,
            ray://head:10001); default: the ``ray_address`` setting, else a Ray instance
            started here.
    """

    pack: str
    _: KW_ONLY
    tier: str = "process"
    panel: Sequence[str] | str | None = None
    rubric: str | None = None
    run_ids: Sequence[str] | str | None = None
    repeats: int = 1
    concurrency: int = 32
    use_cache: bool = True
    retry_errors: bool = False
    pairwise: bool = False
    judge_models: Mapping[str, Any] | None = None
    with_grades: bool = True
    executor: str = "local"
    ray_address: str | None = None

    def __post_init__(self) -> None:
        if self.tier not in TIERS:
            raise ConfigError(f"--tier {self.tier!r}: expected one of {', '.join(TIERS)}")
        _at_least_one(self.repeats, "--repeats")
        _at_least_one(self.concurrency, "--concurrency")
        _set(self, "panel", _names(self.panel, "--panel"))
        _set(self, "run_ids", _names(self.run_ids, "--runs"))


@dataclass(frozen=True)
class VerifyOptions(JobPlace):
    """Running the tasks' checks on stored runs' final states (``lhbench verify``).

    Attributes:
        pack: Only runs of this pack (default: every run with a known pack).
        run_ids: Only these runs (a sequence, or comma-separated).
        retry_errors: Re-run checks that crashed or timed out.
    """

    pack: str | None = None
    _: KW_ONLY
    run_ids: Sequence[str] | str | None = None
    retry_errors: bool = False

    def __post_init__(self) -> None:
        _set(self, "run_ids", _names(self.run_ids, "--runs"))


@dataclass(frozen=True)
class ImportOptions(JobPlace):
    """Importing transcripts as runs (``lhbench import``).

    Attributes:
        paths: Files, or directories to import whole.
        fmt: claude-code, codex, gemini-cli, osworld, inspect, jsonl, a plugin's format, or
            auto.
        pack: File the runs under this pack (id, name or directory).
        task: ...and this task id (then they are checked on their replayed final state).
        harness: Harness name (default: the format's).
        model: Model string (default: from the transcript).
        versions: Version tags ``{"skill": "v1"}``.
        strict: Stop a file at its first unreadable line.
        replace: Remove these files' earlier runs (and their grades) and import again.
        split_sessions: A file holding several sessions becomes one run per session
            (default: one run, whose status the last session decides).
    """

    paths: Sequence[str | Path]
    _: KW_ONLY
    fmt: str = "auto"
    pack: str | None = None
    task: str | None = None
    harness: str | None = None
    model: str | None = None
    versions: Mapping[str, str] | None = None
    strict: bool = False
    replace: bool = False
    split_sessions: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.paths, str | Path):
            raise ConfigError(f"paths: expected a list of files or directories, got {self.paths!r}")
        _set(self, "paths", tuple(Path(p) for p in self.paths))
        _set(self, "versions", dict(self.versions or {}))
        if self.task is not None and self.pack is None:
            raise ConfigError("--task needs --pack (the pack the task belongs to)")


@dataclass(frozen=True)
class JudgeOptions(JobPlace):
    """Agent-as-a-Judge on a pack: fixtures, labels, then verdicts (``lhbench aj run``).

    Attributes:
        pack: A bundled pack id, a pack under ``pack_paths``, or a directory.
        judge: agent (a tool-using judge in the replayed final state), llm (the plain judge
            reading the transcript), or None (label only, no model needed).
        model: The judge model (default: ``aj_model``).
        repeats: Verdicts per run.
        budget: Tool calls allowed per verdict.
        concurrency: Verdicts in flight.
        postgres_url: Replay SQL tasks on this PostgreSQL (SQL packs only).
        tool_set: The agent judge's tools, state or state+trajectory (search packs only).
        modality: The agent judge's perception, screenshot, a11y or both (GUI packs only).
        retry_errors: Re-ask verdicts that failed to parse.
        judge_model: A pydantic-ai model used instead of ``model``'s client (tests).
    """

    pack: str
    _: KW_ONLY
    judge: str | None = "agent"
    model: str | None = None
    repeats: int = 1
    budget: int = 20
    concurrency: int = 4
    postgres_url: str | None = None
    tool_set: str | None = None
    modality: str | None = None
    retry_errors: bool = False
    judge_model: Any = None

    def __post_init__(self) -> None:
        if self.judge == "none":  # as typed on the command line
            _set(self, "judge", None)
        if self.judge not in (None, *JUDGES):
            raise ConfigError(f"--judge {self.judge!r}: expected agent, llm or none")
        _at_least_one(self.repeats, "--repeats")
        _at_least_one(self.budget, "--budget")
        _at_least_one(self.concurrency, "--concurrency")


@dataclass(frozen=True, kw_only=True)
class ReportOptions(JobPlace):
    """The report over the store (``lhbench report``).

    Attributes:
        by: Group runs by these keys: harness, model, task, versions.K (or comma-separated).
        ablation: A versions key to report paired deltas for (e.g. skill).
        baseline: The ablation's baseline value.
        include_stale: Keep grades made with an earlier rubric content or judge settings.
        out: Write Markdown, CSV and HTML here (default: not written).
        seed: The bootstrap seed.
        notes: Lines put at the top of the written report (the demo's stub notice).
    """

    by: Sequence[str] | str = ("harness", "model")
    ablation: str | None = None
    baseline: str | None = None
    include_stale: bool = False
    out: str | Path | None = None
    seed: int = 0
    notes: Sequence[str] = ()

    def __post_init__(self) -> None:
        keys = _names(self.by, "--by")
        if not keys:
            raise ConfigError("--by: give at least one key (harness, model, task, versions.K)")
        _set(self, "by", keys)
        _set(self, "out", None if self.out is None else Path(self.out))


@dataclass(frozen=True)
class ExportOptions(JobPlace):
    """Inspect AI logs of the store's runs (``lhbench export inspect``).

    Attributes:
        out: The directory to write the logs into.
        pack: Only runs of this pack.
        formats: Which log files: eval (zip) and/or json.
        include_stale: Score with every grade, also those made with earlier rubric content
            or judge settings (left out by default, as in the report).
    """

    out: str | Path
    _: KW_ONLY
    pack: str | None = None
    formats: Sequence[str] | str = LOG_FORMATS
    include_stale: bool = False

    def __post_init__(self) -> None:
        formats = _names(self.formats, "--format") or ()
        if "both" in formats:  # as typed on the command line
            formats = LOG_FORMATS
        bad = [f for f in formats if f not in LOG_FORMATS]
        if bad or not formats:
            raise ConfigError(
                f"unknown Inspect log format(s) {bad or list(formats)}: use 'eval' and/or 'json'"
            )
        _set(self, "formats", tuple(formats))
        out = Path(self.out)
        if out.exists() and not out.is_dir():
            raise ConfigError(f"{out}: exists and is not a directory")
        _set(self, "out", out)
