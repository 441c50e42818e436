"""Runs of a harness on a task, and their trajectories and artifacts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

import orjson
from pydantic import (
    AwareDatetime,
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    ValidationError,
    model_validator,
)

from lhbench.schema.base import Schema, Usage

__all__ = [
    "RECORDED_OUTCOME_KEY",
    "REPLAY_REFUSED_KEY",
    "STEP_JSON_FIELDS",
    "STEP_ROW",
    "Artifact",
    "FailureKind",
    "RecordedOutcome",
    "Role",
    "Run",
    "RunStatus",
    "Step",
    "StepKind",
    "StepView",
    "Trajectory",
    "failure_kind_of",
    "step_from_row",
    "step_to_row",
]


class RunStatus(StrEnum):
    """Where a run stands. ``incomplete`` is a transcript that stopped mid-run."""

    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    TIMED_OUT = "timed_out"
    LIMIT_EXCEEDED = "limit_exceeded"
    INCOMPLETE = "incomplete"


class FailureKind(StrEnum):
    """Whose a failure was: the agent's, or the infrastructure's (never a score).

    ``infrastructure``: what the run or its check needed was missing or unreachable (the
    model endpoint, a package, a browser, the sandbox); such runs are left out of every
    comparison and named where they are left out. ``agent``: the run itself failed (out of
    time or tool calls, a harness error of its own).
    """

    AGENT = "agent"
    INFRASTRUCTURE = "infrastructure"


_FAILED = {"failed", "timed_out", "limit_exceeded", "incomplete"}
# how an error reads when what failed was around the agent, not the agent: the model
# endpoint (pydantic-ai's ModelAPIError family, HTTP 429/5xx, refused connections), a
# sandbox or a package that is not there, a registry that cannot be reached
_INFRA_MARKERS = (
    "modelapierror",
    "modelhttperror",
    "infrastructureerror",
    "missingdependency",
    "sandboxunavailable",
    "modulenotfounderror",
    "connection refused",
    "connection reset",
    "connecterror",
    "connection error",
    "apiconnectionerror",
    "failed to connect",
    "name or service not known",
    "temporary failure in name resolution",
    "getaddrinfo",
    "enotfound",
    "eai_again",
    "econnrefused",
    "econnreset",
    "status_code: 429",
    "status_code: 500",
    "status_code: 502",
    "status_code: 503",
    "status_code: 504",
    "status_code: 529",
    "overloaded_error",
    "no sandbox backend works",
)


def failure_kind_of(status: str, error: str | None) -> FailureKind | None:
    """Whose failure a run with this status and error was (None: it did not fail)."""
    if status not in _FAILED:
        return None
    low = (error or "").lower()
    if any(m in low for m in _INFRA_MARKERS):
        return FailureKind.INFRASTRUCTURE
    return FailureKind.AGENT


RECORDED_OUTCOME_KEY = "recorded_outcome"
# a tool call's step metadata key: an importer could not map the call into the task's
# environment (its path leaves the task root, its result is missing); a replay skips the
# call and gives this reason, so no check decides on a state that lacks it
REPLAY_REFUSED_KEY = "replay_refused"


class RecordedOutcome(Schema):
    """The outcome the system that made a run recorded for it (e.g. MCPMark's ``success``).

    It is that system's claim, kept beside lhbench's own labels (never as one) so the two
    can be shown and compared. ``passed`` is None when the source recorded no verdict (its
    own setup failed, say); ``detail`` then says why. A run keeps it in its metadata under
    :data:`RECORDED_OUTCOME_KEY`.
    """

    passed: bool | None
    source: str = Field(min_length=1, description="Where it was read, e.g. 'mcpmark:<log>'.")
    detail: str = ""

    @classmethod
    def from_metadata(cls, metadata: dict[str, Any]) -> RecordedOutcome | None:
        """The outcome a run's metadata holds under :data:`RECORDED_OUTCOME_KEY`, if valid."""
        raw = metadata.get(RECORDED_OUTCOME_KEY)
        if not isinstance(raw, dict):
            return None
        try:
            return cls.model_validate(raw)
        except ValidationError:
            return None  # a malformed claim is no claim; the label is lhbench's anyway


class Run(Schema):
    """One harness × model × task attempt, tagged with the versions it ran under."""

    id: str = Field(min_length=1)
    pack_id: str
    pack_hash: str = ""
    task_id: str
    harness: str = Field(min_length=1)
    harness_version: str | None = None
    model: str = Field(min_length=1)
    versions: dict[str, str] = Field(
        default_factory=dict, description='Ablation tags, e.g. {"skill": "v1", "prompt": "v0"}.'
    )
    repeat: NonNegativeInt = 0
    status: RunStatus = RunStatus.PENDING
    started_at: AwareDatetime | None = None
    ended_at: AwareDatetime | None = None
    usage: Usage = Field(default_factory=Usage)
    model_usage: dict[str, Usage] = Field(
        default_factory=dict,
        description="Usage per model, when the transcript names several (sub-agents, routers).",
    )
    cost_usd: NonNegativeFloat | None = None
    error: str | None = None
    failure_kind: FailureKind | None = Field(
        default=None,
        description="Whose failure a failed run was; read from its error when not given.",
    )
    source: str | None = Field(default=None, description="Where an imported run came from.")
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def infrastructure_failure(self) -> bool:
        """The run failed for infrastructure: it is no score and is left out of comparisons."""
        return self.failure_kind == FailureKind.INFRASTRUCTURE

    @property
    def recorded_outcome(self) -> RecordedOutcome | None:
        """What the run's own system recorded as its outcome, when it recorded one."""
        return RecordedOutcome.from_metadata(self.metadata)

    @property
    def duration_s(self) -> float | None:
        """Wall-clock seconds, when both ends are known."""
        if self.started_at is None or self.ended_at is None:
            return None
        return (self.ended_at - self.started_at).total_seconds()

    @model_validator(mode="after")
    def _ordered_times(self) -> Run:
        if self.started_at and self.ended_at and self.ended_at < self.started_at:
            raise ValueError("ended_at is before started_at")
        if self.failure_kind is None:
            kind = failure_kind_of(self.status.value, self.error)
            if kind is not None:
                object.__setattr__(self, "failure_kind", kind)
        return self


class Role(StrEnum):
    """Who produced a step."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    HARNESS = "harness"


class StepKind(StrEnum):
    """What a step is."""

    MESSAGE = "message"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    THINKING = "thinking"
    ERROR = "error"
    HOOK = "hook"
    COMPACTION = "compaction"


class Step(Schema):
    """One event of a trajectory, in order (``index`` is 0-based and contiguous)."""

    index: NonNegativeInt
    role: Role
    kind: StepKind
    content: str = ""
    tool_name: str | None = None
    tool_call_id: str | None = None
    tool_input: dict[str, Any] | None = None
    tool_output: str | None = None
    is_error: bool = False
    exit_code: int | None = None
    timestamp: AwareDatetime | None = None
    usage: Usage | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    agent_id: str | None = Field(
        default=None, description="The sub-agent that took this step; None for the main agent."
    )

    @model_validator(mode="after")
    def _tool_fields(self) -> Step:
        if self.kind in (StepKind.TOOL_CALL, StepKind.TOOL_RESULT) and not (
            self.tool_name or self.tool_call_id
        ):
            raise ValueError(f"a {self.kind} step needs tool_name or tool_call_id")
        return self


# A Step as a flat row, its fields in the order Step declares them (the one list of them):
# how importers hand steps to the store without building a Step per line. The JSON fields
# are JSON text in a row; timestamp an aware datetime; role and kind their values.
STEP_ROW: tuple[str, ...] = tuple(Step.model_fields)
STEP_JSON_FIELDS: tuple[str, ...] = ("tool_input", "usage", "metadata")
_JSON_IN_ROW = frozenset(STEP_JSON_FIELDS)


def step_to_row(step: Step) -> list[Any]:
    """A Step as a flat row (``STEP_ROW`` order)."""
    row: list[Any] = []
    for name in STEP_ROW:
        value = getattr(step, name)
        if name in _JSON_IN_ROW:
            if isinstance(value, Usage):
                value = value.model_dump(mode="json")
            if value is not None:
                value = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
        elif isinstance(value, StrEnum):
            value = value.value
        row.append(value)
    return row


def step_from_row(row: Sequence[Any], loads: Callable[[Any], Any] = orjson.loads) -> Step:
    """A flat row (``STEP_ROW`` order) as a validated Step; ``loads`` reads its JSON texts."""
    return Step.model_validate(
        {
            name: loads(value) if name in _JSON_IN_ROW and value is not None else value
            for name, value in zip(STEP_ROW, row, strict=True)
        }
    )


@dataclass(slots=True)
class StepView:
    """A stored step as a transcript page shows it: the fields read, nothing validated.

    The store validated every step as a :class:`Step` when it was written; a page that
    shows 5,000 of them reads them back as plain objects (a third of the time of building
    5,000 models, which was most of the page). Timestamps, usage and metadata are not read.
    Read-only by contract (a frozen dataclass costs more to make).
    """

    index: int
    role: Role
    kind: StepKind
    content: str
    tool_name: str | None
    tool_call_id: str | None
    tool_input: dict[str, Any] | None
    tool_output: str | None
    is_error: bool
    exit_code: int | None


class Trajectory(Schema):
    """Everything a run did, as one normalized list of steps."""

    run_id: str
    steps: list[Step] = Field(default_factory=list)

    @model_validator(mode="after")
    def _contiguous(self) -> Trajectory:
        for i, step in enumerate(self.steps):
            if step.index != i:
                raise ValueError(f"steps[{i}] has index {step.index}; indices must be 0..n-1")
        return self

    @property
    def tool_calls(self) -> list[Step]:
        """The tool-call steps."""
        return [s for s in self.steps if s.kind == StepKind.TOOL_CALL]

    @property
    def errors(self) -> list[Step]:
        """Steps that record an error: error events and failed tool results."""
        return [s for s in self.steps if s.kind == StepKind.ERROR or s.is_error]

    @property
    def started_at(self) -> datetime | None:
        """Timestamp of the first timestamped step."""
        return next((s.timestamp for s in self.steps if s.timestamp), None)


class Artifact(Schema):
    """A file a run produced (a screenshot, a build, a report), addressed by its hash.

    ``status`` says what was kept: ``ok`` (all of it), ``truncated`` (the first bytes;
    ``sha256`` is theirs) or ``omitted`` (listed without content); ``note`` says why.
    """

    run_id: str
    name: str = Field(min_length=1, description="Path-like name inside the run.")
    media_type: str = "application/octet-stream"
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: NonNegativeInt = Field(description="The file's size on disk.")
    content: bytes | None = Field(default=None, description="Inline bytes, for small files.")
    uri: str | None = Field(default=None, description="Where the bytes live otherwise.")
    status: Literal["ok", "truncated", "omitted"] = "ok"
    note: str | None = None
