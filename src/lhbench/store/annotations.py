"""SME annotations in the store: immutable versions per (pack, task), never overwritten.

Each save adds a version whose ``parent`` is the version its author started from. A save
whose parent is no longer the newest version is refused (:class:`StaleVersionError`):
two annotators editing at once never silently overwrite each other. The unique
``(pack_id, task_id, version)`` constraint makes that hold across processes too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from lhbench.errors import StoreError
from lhbench.schema import utcnow
from lhbench.store.base import StoreBase
from lhbench.store.tables import AnnotationVersionRow

__all__ = ["AnnotationStore", "AnnotationVersion", "StaleVersionError"]


class StaleVersionError(StoreError):
    """A save started from a version that is no longer the newest one."""

    def __init__(self, pack_id: str, task_id: str, parent: int | None, head: int | None) -> None:
        self.parent = parent
        self.head = head
        started = f"version {parent}" if parent else "no version"
        super().__init__(
            f"annotations of {pack_id}/{task_id}: this edit started from {started}, but "
            f"version {head} was saved since; reload it and apply your changes again"
        )


@dataclass(frozen=True)
class AnnotationVersion:
    """One saved version: who saved it, from which parent, and its content (a JSON doc)."""

    pack_id: str
    task_id: str
    version: int
    parent: int | None
    author: str
    created_at: datetime
    content: dict[str, Any]


def _record(r: AnnotationVersionRow) -> AnnotationVersion:
    return AnnotationVersion(
        r.pack_id, r.task_id, r.version, r.parent, r.author, r.created_at, dict(r.content)
    )


class AnnotationStore(StoreBase):
    """Versioned annotation sets (the annotation tool's saves)."""

    def _head(self, s: Session, pack_id: str, task_id: str) -> int | None:
        head = s.scalar(
            select(func.max(AnnotationVersionRow.version)).where(
                AnnotationVersionRow.pack_id == pack_id, AnnotationVersionRow.task_id == task_id
            )
        )
        return None if head is None else int(head)

    def save_annotations(
        self,
        pack_id: str,
        task_id: str,
        content: dict[str, Any],
        *,
        author: str,
        parent: int | None,
    ) -> AnnotationVersion:
        """Add a version on top of ``parent`` (None: the first version).

        Raises:
            StaleVersionError: ``parent`` is not the newest version (someone saved since).
        """
        with Session(self.engine) as s:
            head = self._head(s, pack_id, task_id)
            if head != parent:
                raise StaleVersionError(pack_id, task_id, parent, head)
            row = AnnotationVersionRow(
                pack_id=pack_id,
                task_id=task_id,
                version=(head or 0) + 1,
                parent=parent,
                author=author,
                created_at=utcnow(),
                content=content,
            )
            s.add(row)
            try:
                s.commit()
            except IntegrityError:
                # a concurrent save took this number between our read and our insert
                s.rollback()
                raise StaleVersionError(
                    pack_id, task_id, parent, self._head(s, pack_id, task_id)
                ) from None
            return _record(row)

    def get_annotations(
        self, pack_id: str, task_id: str, version: int | None = None
    ) -> AnnotationVersion | None:
        """A version (None: the newest), or None when there is no such version."""
        with Session(self.engine) as s:
            q = select(AnnotationVersionRow).where(
                AnnotationVersionRow.pack_id == pack_id, AnnotationVersionRow.task_id == task_id
            )
            if version is None:
                q = q.order_by(AnnotationVersionRow.version.desc()).limit(1)
            else:
                q = q.where(AnnotationVersionRow.version == version)
            row = s.scalars(q).first()
            return None if row is None else _record(row)

    def annotation_history(
        self, pack_id: str, task_id: str, *, limit: int = 100
    ) -> list[AnnotationVersion]:
        """The newest ``limit`` versions of a (pack, task), newest first, without content.

        Only who saved which version when is read (``content`` is empty): a history of many
        large saves costs no more than a short one. ``get_annotations`` gives a version whole.
        """
        row = AnnotationVersionRow
        with Session(self.engine) as s:
            rows = s.execute(
                select(row.version, row.parent, row.author, row.created_at)
                .where(row.pack_id == pack_id, row.task_id == task_id)
                .order_by(row.version.desc())
                .limit(limit)
            ).all()
            return [
                AnnotationVersion(pack_id, task_id, int(v), parent, author, created, {})
                for v, parent, author, created in rows
            ]
