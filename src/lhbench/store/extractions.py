"""Failure extractions in the store: a model's error events of a run, by key."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from lhbench.schema import FailureExtraction
from lhbench.store.base import ResultState, StoreBase, chunks
from lhbench.store.tables import FailureExtractionRow

__all__ = ["ExtractionStore"]


class ExtractionStore(StoreBase):
    """Failure extractions (``lhbench failures --llm``), one per (run, model, prompt)."""

    def save_failure_extractions(self, extractions: Sequence[FailureExtraction]) -> int:
        """Store extractions; one replaces a failed one under its key, never an ok one."""
        rows = [
            {
                "key": x.key,
                "run_id": x.run_id,
                "model": x.model,
                "status": x.status,
                "retryable": x.retryable,
                "document": x.model_dump(mode="json"),
                "created_at": x.created_at,
            }
            for x in extractions
        ]
        return self._upsert_unless_ok(
            FailureExtractionRow, rows, index="key", ok=FailureExtractionRow.status != "ok"
        )

    def failure_extraction_states(self, keys: Sequence[str]) -> dict[str, ResultState]:
        """Stored state of each extraction key (keys not stored are absent)."""
        return self._states(FailureExtractionRow, keys)

    def list_failure_extractions(self, keys: Iterable[str]) -> list[FailureExtraction]:
        """The extractions stored under these keys."""
        out: list[FailureExtraction] = []
        with Session(self.engine) as s:
            for part in chunks(list(dict.fromkeys(keys))):
                rows = s.scalars(
                    select(FailureExtractionRow).where(FailureExtractionRow.key.in_(part))
                ).all()
                out += [FailureExtraction.model_validate(r.document) for r in rows]
        return out
