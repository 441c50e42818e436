"""The failure taxonomy's error types (LH-Bench Table 11), and a model's extraction of them."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import AwareDatetime, Field, NonNegativeInt

from lhbench.schema.base import Schema, utcnow
from lhbench.schema.grading import _digest

__all__ = ["ErrorType", "ExtractedEvent", "FailureExtraction", "extraction_key"]


class ErrorType(StrEnum):
    """LH-Bench's error types (Table 11), plus ``other``."""

    TOOL_CALL_FAILURE = "tool_call_failure"
    GIT_ERROR = "git_error"
    SYNTAX_ERROR = "syntax_error"
    DEPENDENCY_ERROR = "dependency_error"
    PREVIEW_DENY = "preview_deny"
    BUILD_ERROR = "build_error"
    TYPE_ERROR = "type_error"
    CONFIG_ERROR = "config_error"
    RUNTIME_ERROR = "runtime_error"
    OTHER = "other"


def extraction_key(
    run_id: str, model: str, endpoint: str | None, prompt_version: str, settings: str = ""
) -> str:
    """A failure extraction's identity: the run, the model and endpoint, the prompt."""
    return _digest(["failure-extraction", run_id, model, endpoint or "", prompt_version, settings])


class ExtractedEvent(Schema):
    """One error event as a model read it from a trajectory."""

    step: NonNegativeInt
    type: ErrorType
    recovered: bool


class FailureExtraction(Schema):
    """A model's error events of one run (``lhbench failures --llm``), stored by ``key``.

    ``status`` ``error`` records why there are none (``retryable``: the model was never
    reached); the events are never guessed.
    """

    key: str
    run_id: str
    model: str
    prompt_version: str
    events: list[ExtractedEvent] = Field(default_factory=list)
    status: Literal["ok", "error"] = "ok"
    error: str | None = None
    retryable: bool = False
    created_at: AwareDatetime = Field(default_factory=utcnow)
