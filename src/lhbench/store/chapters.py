"""Programmatic content in the store: chapter rubric versions and per-chapter grades."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import and_, select
from sqlalchemy.orm import Session

from lhbench.schema import ChapterGrade, ChapterRubricRecord
from lhbench.store.base import ResultState, StoreBase, chunks, matching
from lhbench.store.tables import ChapterGradeRow, ChapterRubricRow

__all__ = ["ChapterStore"]


def _grade_row(cg: ChapterGrade) -> dict[str, Any]:
    g = cg.grade
    return {
        "id": g.id,
        "key": cg.key,
        "run_id": g.run_id,
        "chapter_id": cg.chapter_id,
        "scale": cg.scale.value,
        "kind": cg.kind,
        "rubric_id": g.rubric_id,
        "rubric_hash": g.rubric_hash,
        "judge_key": g.judge.key,
        "status": g.status.value,
        "retryable": g.retryable,
        "tier_score": g.tier_score,
        "document": cg.model_dump(mode="json"),
        "created_at": g.created_at,
    }


class ChapterStore(StoreBase):
    """Chapter rubric versions (by provenance) and chapter grades (by key)."""

    def save_chapter_rubric(self, record: ChapterRubricRecord) -> bool:
        """Store a chapter rubric version; False when one with its provenance key exists."""
        r = record.rubric
        row = {
            "key": record.key,
            "pack_id": record.pack_id,
            "task_id": record.task_id,
            "chapter_id": record.chapter_id,
            "scale": record.scale.value,
            "rubric_id": r.id,
            "family": r.family,
            "version": r.version,
            "content_hash": r.content_hash,
            "annotations_sha256": record.annotations_sha256,
            "ground_truth_sha256": record.ground_truth_sha256,
            "model": record.model,
            "prompt_version": record.prompt_version,
            "document": record.model_dump(mode="json"),
            "created_at": record.created_at,
        }
        with Session(self.engine) as s, s.begin():
            return self._insert_ignore(s, ChapterRubricRow, [row]) == 1

    def get_chapter_rubric(self, key: str) -> ChapterRubricRecord | None:
        """The chapter rubric stored under this provenance key, or None."""
        with Session(self.engine) as s:
            row = s.get(ChapterRubricRow, key)
            return None if row is None else ChapterRubricRecord.model_validate(row.document)

    def list_chapter_rubrics(
        self,
        *,
        pack_id: str | None = None,
        task_id: str | None = None,
        chapter_id: str | None = None,
        scale: str | None = None,
    ) -> list[ChapterRubricRecord]:
        """Chapter rubric versions matching every filter given, oldest first."""
        conds = matching(
            (ChapterRubricRow.pack_id, pack_id),
            (ChapterRubricRow.task_id, task_id),
            (ChapterRubricRow.chapter_id, chapter_id),
            (ChapterRubricRow.scale, scale),
        )
        with Session(self.engine) as s:
            rows = s.scalars(
                select(ChapterRubricRow)
                .where(and_(True, *conds))
                .order_by(ChapterRubricRow.created_at, ChapterRubricRow.key)
            ).all()
            return [ChapterRubricRecord.model_validate(r.document) for r in rows]

    def save_chapter_grades(self, grades: Sequence[ChapterGrade]) -> int:
        """Write chapter grades; a stored failure is replaced, a stored ok grade kept."""
        return self._upsert_unless_ok(
            ChapterGradeRow,
            [_grade_row(g) for g in grades],
            index="key",
            ok=ChapterGradeRow.status != "ok",
        )

    def chapter_grade_states(self, keys: Sequence[str]) -> dict[str, ResultState]:
        """Stored state of each chapter grade key (keys not stored are absent)."""
        return self._states(ChapterGradeRow, keys)

    def list_chapter_grades(
        self, *, run_ids: Iterable[str] | None = None, scale: str | None = None
    ) -> list[ChapterGrade]:
        """Chapter grades (failed ones included), oldest first."""
        conds = matching((ChapterGradeRow.scale, scale))
        ids = None if run_ids is None else list(run_ids)
        out: list[ChapterGrade] = []
        with Session(self.engine) as s:
            for part in [None] if ids is None else chunks(ids):
                where = conds if part is None else [*conds, ChapterGradeRow.run_id.in_(part)]
                rows = s.scalars(
                    select(ChapterGradeRow)
                    .where(and_(True, *where))
                    .order_by(ChapterGradeRow.created_at, ChapterGradeRow.id)
                ).all()
                out.extend(ChapterGrade.model_validate(r.document) for r in rows)
        return out
