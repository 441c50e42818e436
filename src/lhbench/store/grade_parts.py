"""The small parts of a grade's columns, without numpy (the store's light import path).

:mod:`lhbench.store.grade_columns` holds the arrays; these names are what the store's
readers and the arrays' tables share.
"""

from __future__ import annotations

from typing import NamedTuple

from lhbench.schema import GradeStatus, Scale

__all__ = ["OK", "PARSE_ERROR", "STATUSES", "JudgeName", "ScoreFact", "TierTuple"]


class JudgeName(NamedTuple):
    """A judge config's hash and the name reports give it (see :class:`JudgeIdentity`)."""

    key: str
    label: str


class ScoreFact(NamedTuple):
    """One dimension's score of a grade (None: unscorable), without its evidence."""

    dimension_id: str
    scale: Scale
    score: int | None


# (rubric id, rubric version, tier, rubric content hash): a ``TierKey`` (a NamedTuple) equals it
TierTuple = tuple[str, str, str, str]
# a grade's status as its position here (``GradeColumns.status``)
STATUSES: tuple[GradeStatus, ...] = tuple(GradeStatus)
OK = STATUSES.index(GradeStatus.OK)
PARSE_ERROR = STATUSES.index(GradeStatus.PARSE_ERROR)
