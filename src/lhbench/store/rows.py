"""Rows to and from schema objects (the only place that knows both shapes)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from lhbench.schema import STEP_JSON_FIELDS, STEP_ROW, Run, Step, step_to_row, utcnow
from lhbench.store._step_writer import sqlite_step_params as _writer_params
from lhbench.store._step_writer import sqlite_timestamp
from lhbench.store.tables import RunRow

__all__ = [
    "PG_STEP_COPY",
    "PG_STEP_INSERT",
    "PG_STEP_TYPES",
    "SQLITE_STEP_INSERT",
    "STEP_COLUMNS",
    "TS_INDEX",
    "pg_step_params",
    "run_from",
    "run_row",
    "sqlite_step_insert",
    "sqlite_step_params",
    "sqlite_timestamp",
    "step_record",
    "step_row",
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
        "model_usage": {m: u.model_dump(mode="json") for m, u in run.model_usage.items()} or None,
        "cost_usd": run.cost_usd,
        "error": run.error,
        "failure_kind": run.failure_kind.value if run.failure_kind else None,
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
            "model_usage": row.model_usage or {},
            "cost_usd": row.cost_usd,
            "error": row.error,
            "failure_kind": row.failure_kind,
            "source": row.source,
            "metadata": row.metadata_,
        }
    )


# the steps table's names where they are not Step's: its column, and StepRow's attribute
_COLUMN = {"index": "idx"}
_ATTRIBUTE = {"index": "idx", "metadata": "metadata_"}


def step_row(run_id: str, step: Step) -> dict[str, Any]:
    """A step as its row."""
    row = step.model_dump()  # usage as a dict, the JSON columns as Python values
    row["role"], row["kind"] = step.role.value, step.kind.value
    row = {_COLUMN.get(name, name): value for name, value in row.items()}
    row["run_id"] = run_id
    return row


# the steps columns in schema.STEP_ROW order, then run_id
_STEP_COLUMNS = (*(_COLUMN.get(f, f) for f in STEP_ROW), "run_id")
# the steps table's columns in schema.STEP_ROW order
STEP_COLUMNS = _STEP_COLUMNS[:-1]


def sqlite_step_insert(run_literal: str) -> str:
    """The steps' INSERT naming the run by ``run_literal``: rows bound without their run id.

    ``run_literal`` is SQLite's own ``quote()`` of the id, checked to read back as the id
    (``bulk._run_literal``); ``"?"`` binds the id as each row's last value instead.
    """
    values = ", ".join("?" * len(STEP_COLUMNS))
    return f"INSERT INTO steps ({', '.join(_STEP_COLUMNS)}) VALUES ({values}, {run_literal})"


# the run id bound as each row's last value (the in-process path's rows carry it)
SQLITE_STEP_INSERT = sqlite_step_insert("?")

_JSON_FIELDS = {STEP_ROW.index(f) for f in STEP_JSON_FIELDS}
PG_STEP_INSERT = (
    f"INSERT INTO steps ({', '.join(_STEP_COLUMNS)}) VALUES ("
    + ", ".join("%s::jsonb" if i in _JSON_FIELDS else "%s" for i in range(len(_STEP_COLUMNS)))
    + ")"
)
# COPY in binary format: psycopg writes each row in C (no escaping), the server reads
# numbers, booleans and times without parsing text, and reads the JSON columns' text as
# jsonb, as the cast in PG_STEP_INSERT does (the same stored values, see the tests)
PG_STEP_COPY = f"COPY steps ({', '.join(_STEP_COLUMNS)}) FROM STDIN (FORMAT binary)"
_PG_TYPES = {
    "idx": "int4",
    "is_error": "bool",
    "exit_code": "int4",
    "timestamp": "timestamptz",
    **dict.fromkeys(("tool_input", "usage", "metadata"), "jsonb"),
}
# each column's type for the binary COPY (the others are text or varchar: the same bytes)
PG_STEP_TYPES = tuple(_PG_TYPES.get(c, "text") for c in _STEP_COLUMNS)
TS_INDEX = STEP_ROW.index("timestamp")


def step_record(step: Step) -> tuple[Any, ...]:
    """A Step as a flat row (``schema.STEP_ROW`` order, JSON fields as text)."""
    return tuple(step_to_row(step))


def sqlite_step_params(run_id: str, rows: Iterable[Sequence[Any]]) -> list[list[Any]]:
    """Flat step rows as SQLite parameters (timestamps as the naive UTC text SQLite keeps)."""
    return _writer_params(run_id, rows, TS_INDEX)


def _no_nul(value: Any) -> Any:
    # PostgreSQL text and jsonb hold no NUL character; a transcript can (escaped in JSON)
    if isinstance(value, str) and "\x00" in value:
        return value.replace("\x00", "\ufffd")
    return value


def pg_step_params(run_id: str, rows: Iterable[Sequence[Any]]) -> list[tuple[Any, ...]]:
    """Flat step rows as PostgreSQL parameters (NUL characters replaced: it cannot keep them)."""
    out = []
    for r in rows:
        vals = [_no_nul(v) for v in r]
        for i in _JSON_FIELDS:
            if isinstance(vals[i], str) and "\\u0000" in vals[i]:
                vals[i] = vals[i].replace("\\u0000", "\\ufffd")
        out.append((*vals, run_id))
    return out
