"""Task packs: tasks, their environments and ground truth, rubrics and expert skills."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, NonNegativeInt, PositiveFloat, PositiveInt, model_validator

from lhbench.schema.base import Schema, VersionLabel
from lhbench.schema.rubric import Rubric

__all__ = [
    "ArenaSpec",
    "ComplexityTags",
    "EnvironmentKind",
    "EnvironmentSpec",
    "HookSpec",
    "McpServerSpec",
    "Skill",
    "Task",
    "TaskLimits",
    "TaskPack",
]

_ID = r"^[a-z0-9][a-z0-9_.\-]*$"


class EnvironmentKind(StrEnum):
    """The kinds of environment a pack's tasks run in."""

    FILESYSTEM = "filesystem"
    SQL = "sql"
    WEB = "web"
    GUI = "gui"
    FIGMA_TO_CODE = "figma-to-code"
    PROGRAMMATIC_CONTENT = "programmatic-content"
    MIXED = "mixed"
    NONE = "none"


class HookSpec(Schema):
    """A post-tool verification hook: after a matching tool call, run a check.

    The check is a Python script run as ``python CHECK --root WORKSPACE``; it prints one
    JSON object ``{"ok": bool, "diagnosis": str, "next_action": str}`` that goes back to
    the agent with the tool's result, and exits 0 when ``ok``, 1 when not (an exit code
    that contradicts ``ok`` is an error, never a pass: :func:`lhbench.sandbox.read_check_answer`).
    """

    after_tool: str = Field(min_length=1, description="Tool name or glob (write_file, mcp__*).")
    check: str = Field(min_length=1, description="Script path, relative to the task directory.")
    timeout_s: PositiveFloat = 60.0


class McpServerSpec(Schema):
    """An MCP server a pack offers its tasks, started over stdio by every harness.

    ``command`` may use ``{python}`` (the interpreter running lhbench) and ``{workspace}``
    (the run's workspace directory).
    """

    command: list[str] = Field(min_length=1, description="Program and arguments.")
    env: dict[str, str] = Field(default_factory=dict)
    startup_timeout_s: PositiveFloat = Field(
        default=60.0, description="How long a harness waits for the server to start."
    )

    def argv(self, python: str, workspace: str) -> list[str]:
        """The command with its placeholders filled in."""
        return [
            a.replace("{python}", python).replace("{workspace}", workspace) for a in self.command
        ]


class EnvironmentSpec(Schema):
    """Where a task's initial state comes from and how its final state is checked.

    Paths are relative to the task's directory.
    """

    kind: EnvironmentKind | None = Field(
        default=None, description="This task's environment, when the pack's is 'mixed'."
    )
    initial_state: str | None = Field(default=None, description="Directory copied per run.")
    database: str | None = Field(default=None, description="Schema + data dump (SQL).")
    verify: str | None = Field(default=None, description="Python script that checks the state.")
    mcp_servers: list[str] = Field(default_factory=list, description="Pack MCP servers to wire.")
    hooks: list[HookSpec] = Field(default_factory=list, description="Post-tool verification.")
    checks: list[str] = Field(
        default_factory=list,
        description="Named state checks (built in or from plugins: `lhbench plugins list`), "
        "run with the verify script.",
    )


class ComplexityTags(Schema):
    """What makes a task hard, for slicing results (LH-Bench groups by these)."""

    category: str | None = None
    subdomain: str | None = None
    frame_count: NonNegativeInt | None = None
    asset_density: str | None = None
    route_complexity: str | None = None
    extra: dict[str, str | int | float | bool] = Field(default_factory=dict)


class TaskLimits(Schema):
    """Per-run limits; a run that exceeds one is stopped and recorded as such."""

    wall_seconds: PositiveFloat | None = None
    tool_calls: PositiveInt | None = None
    disk_mb: PositiveInt | None = Field(
        default=None,
        description="How many MiB the run's commands may write (default 2048); "
        "more ends the run with a disk limit.",
    )


class ArenaSpec(Schema):
    """What the preference arena shows of a run of this task, the same on both sides.

    ``artifacts`` are paths or globs relative to the run's workspace (``*`` within one
    path segment, ``**`` across segments); ``final_answer`` adds the agent's last message.
    A task without this shows its runs' files (harness-internal ones left out) and the
    final answer.
    """

    artifacts: list[str] = Field(
        default_factory=list, description="Workspace paths or globs to compare (site/**/*.html)."
    )
    final_answer: bool = Field(default=False, description="Also compare the last message.")

    @model_validator(mode="after")
    def _something_to_compare(self) -> ArenaSpec:
        if not self.artifacts and not self.final_answer:
            raise ValueError("declare 'artifacts' (paths or globs) or 'final_answer: true'")
        for pattern in self.artifacts:
            if not pattern.strip() or pattern.startswith("/") or ".." in pattern.split("/"):
                raise ValueError(f"artifact pattern {pattern!r} must be a relative path or glob")
        return self


class Task(Schema):
    """One task: a single instruction, or a list of user turns for a multi-turn task."""

    id: str = Field(pattern=_ID)
    title: str = Field(min_length=1)
    instruction: str | None = None
    turns: list[str] | None = None
    environment: EnvironmentSpec = Field(default_factory=EnvironmentSpec)
    ground_truth: list[str] = Field(
        default_factory=list, description="Paths under the pack's ground_truth/."
    )
    rubrics: list[str] = Field(default_factory=list, description="Rubric ids in the pack.")
    skills: list[str] = Field(default_factory=list, description="Skill names in the pack.")
    tags: ComplexityTags = Field(default_factory=ComplexityTags)
    limits: TaskLimits = Field(default_factory=TaskLimits)
    arena: ArenaSpec | None = Field(
        default=None, description="What the preference arena compares of two runs."
    )
    content_hash: str = Field(default="", description="Set by the pack loader.")

    @model_validator(mode="after")
    def _one_prompt_form(self) -> Task:
        if (self.instruction is None) == (self.turns is None):
            raise ValueError("give exactly one of 'instruction' (one prompt) or 'turns' (a list)")
        if self.turns is not None and (not self.turns or any(not t.strip() for t in self.turns)):
            raise ValueError("'turns' must be a non-empty list of non-empty user messages")
        if self.instruction is not None and not self.instruction.strip():
            raise ValueError("'instruction' is empty")
        return self

    @property
    def user_turns(self) -> list[str]:
        """The user messages in order (one for a single-instruction task)."""
        return list(self.turns) if self.turns is not None else [self.instruction or ""]


class Skill(Schema):
    """An expert SKILL.md and its named variants (``skills/<name>/versions/<v>.md``)."""

    name: str = Field(pattern=_ID)
    description: str = ""
    content_hash: str = ""
    versions: dict[str, str] = Field(
        default_factory=dict, description="Variant name -> content hash of versions/<v>.md."
    )


class TaskPack(Schema):
    """A task pack as loaded from disk, identified by its content hash."""

    id: str = Field(pattern=_ID)
    version: VersionLabel
    environment: EnvironmentKind
    description: str = ""
    tasks: list[Task] = Field(default_factory=list)
    rubrics: list[Rubric] = Field(default_factory=list)
    skills: list[Skill] = Field(default_factory=list)
    mcp_servers: dict[str, McpServerSpec] = Field(
        default_factory=dict, description="MCP servers by name (pack.yaml mcp_servers)."
    )
    versions: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Ablation keys a run of this pack may carry, with their allowed values "
        "(besides 'skill', whose values are the skills' versions/ files, 'default' and 'none').",
    )
    content_hash: str = Field(default="", description="Hash of every file in the pack.")

    def task(self, task_id: str) -> Task:
        """The task with this id (KeyError if none)."""
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise KeyError(task_id)

    def rubric(self, rubric_id: str) -> Rubric:
        """The rubric with this id (KeyError if none)."""
        for r in self.rubrics:
            if r.id == rubric_id:
                return r
        raise KeyError(rubric_id)
