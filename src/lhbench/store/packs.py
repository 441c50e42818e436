"""Packs in the store: each version by content hash, the newest registration current."""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from lhbench.errors import StoreError
from lhbench.schema import Rubric, Task, TaskPack, utcnow
from lhbench.store.base import StoreBase
from lhbench.store.tables import PackRow, RubricRow, TaskRow

__all__ = ["PackStore"]


class PackStore(StoreBase):
    """Pack versions with their tasks and rubrics."""

    def save_pack(
        self, pack: TaskPack, *, source_dir: str | None = None, disk_stat: str | None = None
    ) -> bool:
        """Register a pack version (with its tasks and rubrics) as the pack's current one.

        Returns False when this content was already stored (it still becomes current: the
        newest registration of a pack id is what analysis treats as its current content).
        ``source_dir`` and ``disk_stat``: the directory it was loaded from and its files'
        :func:`~lhbench.packs.hashing.stat_tree` then (kept when not given).
        """
        where = {"source_dir": source_dir, "disk_stat": disk_stat} if source_dir else {}
        if not pack.content_hash:
            raise StoreError(f"pack {pack.id!r} has no content hash; load it with load_pack")
        head = pack.model_dump(mode="json", exclude={"tasks", "rubrics"})
        now = utcnow()
        with Session(self.engine) as s, s.begin():
            # already the pack's current content, from the same place: nothing to write (a
            # write, even an INSERT that inserts nothing, bumps the store's version on
            # PostgreSQL, so every `lhbench judge` that found all its grades stored made the
            # web app recompute its summary)
            if self._pack_is_current(s, pack, where):
                return False
            new = self._insert_ignore(
                s,
                PackRow,
                [
                    {
                        "content_hash": pack.content_hash,
                        "id": pack.id,
                        "version": pack.version,
                        "environment": pack.environment.value,
                        "document": head,
                        "created_at": now,
                        "seen_at": now,
                        **where,
                    }
                ],
            )
            if not new:
                s.execute(
                    update(PackRow)
                    .where(PackRow.content_hash == pack.content_hash)
                    .values(seen_at=now, **where)
                )
                return False
            self._insert_ignore(
                s,
                TaskRow,
                [
                    {
                        "pack_hash": pack.content_hash,
                        "task_id": t.id,
                        "content_hash": t.content_hash,
                        "position": i,
                        "document": t.model_dump(mode="json"),
                    }
                    for i, t in enumerate(pack.tasks)
                ],
            )
            self._insert_ignore(
                s,
                RubricRow,
                [
                    {
                        "pack_hash": pack.content_hash,
                        "rubric_id": r.id,
                        "family": r.family,
                        "version": r.version,
                        "content_hash": r.content_hash,
                        "position": i,
                        "document": r.model_dump(mode="json"),
                    }
                    for i, r in enumerate(pack.rubrics)
                ],
            )
        return True

    @staticmethod
    def _pack_is_current(s: Session, pack: TaskPack, where: dict[str, str | None]) -> bool:
        """Whether ``pack``'s content is its id's newest registration, with ``where`` as stored.

        Not when another content of the id ties with it on (seen_at, created_at): which one
        is current would then be up to the database's order, and the write breaks the tie.
        """
        # the place's columns only when asked: a migration's data step saves packs into a
        # schema older than them
        place = [PackRow.source_dir, PackRow.disk_stat] if where else []
        newest = s.execute(
            select(PackRow.content_hash, PackRow.seen_at, PackRow.created_at, *place)
            .where(PackRow.id == pack.id)
            .order_by(PackRow.seen_at.desc(), PackRow.created_at.desc())
            .limit(2)
        ).all()
        if not newest or newest[0][0] != pack.content_hash:
            return False
        if len(newest) > 1 and tuple(newest[1][1:3]) == tuple(newest[0][1:3]):
            return False
        if not where:
            return True
        stored = {"source_dir": newest[0][3], "disk_stat": newest[0][4]}
        return all(stored[k] == v for k, v in where.items())

    def get_pack(self, content_hash: str) -> TaskPack:
        """The pack version with this hash (StoreError if it is not stored)."""
        with Session(self.engine) as s:
            row = s.get(PackRow, content_hash)
            if row is None:
                raise StoreError(f"no pack with hash {content_hash[:12]}… in the store")
            tasks = s.scalars(
                select(TaskRow).where(TaskRow.pack_hash == content_hash).order_by(TaskRow.position)
            ).all()
            rubrics = s.scalars(
                select(RubricRow)
                .where(RubricRow.pack_hash == content_hash)
                .order_by(RubricRow.position)
            ).all()
            return TaskPack.model_validate(
                {
                    **row.document,
                    "tasks": [Task.model_validate(t.document) for t in tasks],
                    "rubrics": [Rubric.model_validate(r.document) for r in rubrics],
                }
            )

    def get_task(self, pack_hash: str, task_id: str) -> Task | None:
        """One task of a stored pack version, or None."""
        with Session(self.engine) as s:
            row = s.get(TaskRow, (pack_hash, task_id))
            return None if row is None else Task.model_validate(row.document)

    def latest_pack_hash(self, pack_id: str) -> str | None:
        """Content hash of the pack's current version (the one registered last)."""
        with Session(self.engine) as s:
            return s.scalar(
                select(PackRow.content_hash)
                .where(PackRow.id == pack_id)
                .order_by(PackRow.seen_at.desc(), PackRow.created_at.desc())
                .limit(1)
            )

    def current_packs(self) -> dict[str, str]:
        """Pack id -> content hash of its current version."""
        with Session(self.engine) as s:
            rows = s.execute(
                select(PackRow.id, PackRow.content_hash).order_by(
                    PackRow.seen_at, PackRow.created_at
                )
            ).all()
        return {pack_id: h for pack_id, h in rows}

    def pack_sources(self) -> dict[str, tuple[str, str | None, str | None]]:
        """Pack id -> (current content hash, directory it was loaded from, its stat hash)."""
        with Session(self.engine) as s:
            rows = s.execute(
                select(
                    PackRow.id, PackRow.content_hash, PackRow.source_dir, PackRow.disk_stat
                ).order_by(PackRow.seen_at, PackRow.created_at)
            ).all()
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def set_pack_stat(self, content_hash: str, disk_stat: str) -> None:
        """Record a pack version's files' stat hash (its content checked unchanged)."""
        with Session(self.engine) as s, s.begin():
            s.execute(
                update(PackRow)
                .where(PackRow.content_hash == content_hash)
                .values(disk_stat=disk_stat)
            )

    def list_pack_versions(self) -> list[tuple[str, str, str]]:
        """(pack id, version, content hash) of every stored pack version."""
        with Session(self.engine) as s:
            rows = s.execute(
                select(PackRow.id, PackRow.version, PackRow.content_hash).order_by(
                    PackRow.id, PackRow.created_at
                )
            ).all()
            return [(r[0], r[1], r[2]) for r in rows]
