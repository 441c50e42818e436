"""Rows to and from schema objects (the only place that knows both shapes)."""

from __future__ import annotations

from datetime import UTC
from typing import Any

import orjson

from lhbench.schema import Run, Step, utcnow
from lhbench.store.tables import RunRow, StepRow

__all__ = [
    "SQLITE_STEP_INSERT",
    "json_or_none",
    "run_from",
    "run_row",
    "step_from",
    "step_row",
    "step_tuple",
]


def run_row(run: Run) -> dict[str, Any]:
    """A run as its row."""
    return {
        "id": run.id,
        "pack_id": run.pack_id,
        "pack_hash": run.pack_hash,
        "task_id": run.task_id,
        "harness": run.harness,
        "harness_version": run.harness_version,
        "model": run.model,
        "versions": dict(run.versions),
        "repeat": run.repeat,
        "status": run.status.value,
        "started_at": run.started_at,
        "ended_at": run.ended_at,
        "usage": run.usage.model_dump(mode="json"),
        "cost_usd": run.cost_usd,
        "error": run.error,
        "source": run.source,
        "metadata": run.metadata,
        "updated_at": utcnow(),
    }


def run_from(row: RunRow) -> Run:
    """A run from its row."""
    return Run.model_validate(
        {
            "id": row.id,
            "pack_id": row.pack_id,
            "pack_hash": row.pack_hash,
            "task_id": row.task_id,
            "harness": row.harness,
            "harness_version": row.harness_version,
            "model": row.model,
            "versions": row.versions,
            "repeat": row.repeat,
            "status": row.status,
            "started_at": row.started_at,
            "ended_at": row.ended_at,
            "usage": row.usage,
            "cost_usd": row.cost_usd,
            "error": row.error,
            "source": row.source,
            "metadata": row.metadata_,
        }
    )


def step_row(run_id: str, step: Step) -> dict[str, Any]:
    """A step as its row."""
    return {
        "run_id": run_id,
        "idx": step.index,
        "role": step.role.value,
        "kind": step.kind.value,
        "content": step.content,
        "tool_name": step.tool_name,
        "tool_call_id": step.tool_call_id,
        "tool_input": step.tool_input,
        "tool_output": step.tool_output,
        "is_error": step.is_error,
        "exit_code": step.exit_code,
        "timestamp": step.timestamp,
        "usage": step.usage.model_dump(mode="json") if step.usage else None,
        "metadata": step.metadata,
    }


_STEP_COLUMNS = (
    "run_id",
    "idx",
    "role",
    "kind",
    "content",
    "tool_name",
    "tool_call_id",
    "tool_input",
    "tool_output",
    "is_error",
    "exit_code",
    "timestamp",
    "usage",
    "metadata",
)
SQLITE_STEP_INSERT = (
    f"INSERT INTO steps ({', '.join(_STEP_COLUMNS)}) VALUES ({', '.join('?' * len(_STEP_COLUMNS))})"
)


def json_or_none(value: Any) -> str | None:
    """JSON text of a value, None for None."""
    return None if value is None else orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def step_tuple(run_id: str, step: Step) -> tuple[Any, ...]:
    """A step as SQLite stores it (the same text UTCDateTime and JSON columns write)."""
    ts = step.timestamp
    return (
        run_id,
        step.index,
        step.role.value,
        step.kind.value,
        step.content,
        step.tool_name,
        step.tool_call_id,
        json_or_none(step.tool_input),
        step.tool_output,
        step.is_error,
        step.exit_code,
        ts.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ") if ts else None,
        json_or_none(step.usage.model_dump(mode="json")) if step.usage else None,
        json_or_none(step.metadata),
    )


def step_from(row: StepRow) -> Step:
    """A step from its row."""
    return Step.model_validate(
        {
            "index": row.idx,
            "role": row.role,
            "kind": row.kind,
            "content": row.content,
            "tool_name": row.tool_name,
            "tool_call_id": row.tool_call_id,
            "tool_input": row.tool_input,
            "tool_output": row.tool_output,
            "is_error": row.is_error,
            "exit_code": row.exit_code,
            "timestamp": row.timestamp,
            "usage": row.usage,
            "metadata": row.metadata_,
        }
    )
