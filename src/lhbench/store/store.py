"""The Store: the one way into the database, for every other package.

It is composed of one part per area (packs, runs, judgements, arena, accounts, and lean
aggregates for pages); web pages and jobs call its methods and never see an ORM row.
"""

from __future__ import annotations

from typing import Self

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from lhbench.store.accounts import AccountStore
from lhbench.store.aggregates import AggregateStore
from lhbench.store.annotations import AnnotationStore
from lhbench.store.arena import ArenaStore
from lhbench.store.chapters import ChapterStore
from lhbench.store.db import make_engine, upgrade
from lhbench.store.extractions import ExtractionStore
from lhbench.store.judgements import JudgementStore
from lhbench.store.packs import PackStore
from lhbench.store.runs import RunStore
from lhbench.store.tables import (
    Base,
    GradeRow,
    LabelRow,
    PackRow,
    RunRow,
    StepRow,
    VerdictRow,
    VoteRow,
)

__all__ = ["Store"]


class Store(
    PackStore,
    AggregateStore,
    RunStore,
    JudgementStore,
    ArenaStore,
    AccountStore,
    AnnotationStore,
    ChapterStore,
    ExtractionStore,
):
    """Persistence for lhbench. Open with :meth:`open`; safe to share across threads."""

    @classmethod
    def open(cls, url: str, *, migrate: bool = True) -> Self:
        """Open the store at ``url``, bringing its schema to the newest migration."""
        engine = make_engine(url)
        if migrate:
            upgrade(engine)
        return cls(engine)

    def close(self) -> None:
        """Release every connection."""
        self.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def counts(self) -> dict[str, int]:
        """Rows per table, for summaries."""
        tables: dict[str, type[Base]] = {
            "packs": PackRow,
            "runs": RunRow,
            "steps": StepRow,
            "grades": GradeRow,
            "verdicts": VerdictRow,
            "votes": VoteRow,
            "labels": LabelRow,
        }
        with Session(self.engine) as s:
            return {
                name: int(s.scalar(select(func.count()).select_from(t)) or 0)
                for name, t in tables.items()
            }
