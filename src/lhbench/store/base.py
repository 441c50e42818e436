"""What every part of the Store shares: the engine and idempotent insert helpers."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Literal

from sqlalchemy import Engine, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from lhbench.store.tables import Base

__all__ = ["ResultState", "StoreBase", "chunks", "matching"]

# What a job needs to know of a stored result: keep it, or ask again.
ResultState = Literal["ok", "final_error", "retryable"]

_IN_CHUNK = 500


def chunks(items: Sequence[Any], size: int = _IN_CHUNK) -> Iterator[Sequence[Any]]:
    """``items`` in slices small enough for an ``IN (...)`` on every backend."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def matching(*pairs: tuple[Any, object]) -> list[Any]:
    """``column == value`` for every pair whose value is given (None means any)."""
    return [col == value for col, value in pairs if value is not None]


class StoreBase:
    """The engine and the insert helpers the Store's parts build on."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.engine.dialect.name

    def _insert(self, table: type[Base]) -> Any:
        dialect = postgresql if self.backend == "postgresql" else sqlite
        return dialect.insert(table)

    def _insert_ignore(
        self, session: Session, table: type[Base], rows: list[dict[str, Any]]
    ) -> int:
        """Insert rows, skipping any whose key already exists; returns how many were new."""
        if not rows:
            return 0
        # Counting RETURNING rows is exact on both backends; rowcount is not for
        # multi-row ON CONFLICT inserts.
        pk = next(iter(table.__table__.primary_key))
        stmt = self._insert(table).values(rows).on_conflict_do_nothing().returning(pk)
        return len(session.execute(stmt).all())

    def _upsert_unless_ok(
        self, table: type[Base], rows: list[dict[str, Any]], *, index: str, ok: Any
    ) -> int:
        """Insert rows; a row whose ``index`` exists replaces it unless the stored one is ok.

        A job's result for a unit that failed before replaces the failure; a result that
        is already ok is never overwritten (two jobs racing on one unit keep the first ok).
        Returns how many rows were written.
        """
        if not rows:
            return 0
        written = 0
        with Session(self.engine) as s, s.begin():
            for part in chunks(rows, 200):
                stmt = self._insert(table).values(list(part))
                cols = {k: stmt.excluded[k] for k in part[0] if k != index}
                stmt = stmt.on_conflict_do_update(index_elements=[index], set_=cols, where=ok)
                pk = next(iter(table.__table__.primary_key))
                written += len(s.execute(stmt.returning(pk)).all())
        return written

    def _states(
        self, table: type[Base], keys: Sequence[str], *, key_col: str = "key"
    ) -> dict[str, ResultState]:
        """Stored result states of ``keys`` in one query per chunk (missing keys absent)."""
        tbl = table.__table__
        col = tbl.c[key_col]
        out: dict[str, ResultState] = {}
        with self.engine.connect() as conn:
            for part in chunks(list(dict.fromkeys(keys))):
                rows = conn.execute(
                    select(col, tbl.c.status, tbl.c.retryable).where(col.in_(part))
                ).all()
                for key, status, retryable in rows:
                    out[key] = (
                        "retryable" if retryable else "ok" if status == "ok" else "final_error"
                    )
        return out
