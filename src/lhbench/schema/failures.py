"""The failure taxonomy's error types (LH-Bench Table 11)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ErrorType"]


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
