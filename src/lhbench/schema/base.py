"""Shared base model and small value types used across the schema."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    NonNegativeFloat,
    NonNegativeInt,
)

__all__ = ["Schema", "Usage", "VersionLabel", "utcnow"]


def _version_as_text(v: object) -> object:
    # YAML reads `version: 1.2` as a float; a version is a label, not a number.
    return str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v


VersionLabel = Annotated[str, BeforeValidator(_version_as_text), Field(min_length=1)]


def utcnow() -> datetime:
    """The current time, timezone-aware in UTC (naive datetimes are refused everywhere)."""
    return datetime.now(UTC)


class Schema(BaseModel):
    """Base of every lhbench model: unknown keys are errors, so typos in packs are caught."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)


class Usage(Schema):
    """Token usage of one call, one step, or a whole run."""

    input_tokens: NonNegativeInt = 0
    output_tokens: NonNegativeInt = 0
    cache_read_tokens: NonNegativeInt = 0
    cache_write_tokens: NonNegativeInt = 0
    reasoning_tokens: NonNegativeInt = 0
    requests: NonNegativeInt = Field(default=0, description="Model requests made.")
    cost_usd: NonNegativeFloat | None = Field(default=None, description="Known cost, if any.")

    def __add__(self, other: Usage) -> Usage:
        def _cost(a: float | None, b: float | None) -> float | None:
            return None if a is None and b is None else (a or 0.0) + (b or 0.0)

        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            requests=self.requests + other.requests,
            cost_usd=_cost(self.cost_usd, other.cost_usd),
        )
