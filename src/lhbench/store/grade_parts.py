"""The small parts of a grade's columns, without numpy (the store's light import path).

:mod:`lhbench.store.grade_columns` holds the arrays; these names are what the store's
readers and the arrays' tables share.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import orjson

from lhbench.errors import StoreError
from lhbench.schema import GradeStatus, Scale

__all__ = [
    "OK",
    "PARSE_ERROR",
    "STATUSES",
    "GradeScoresError",
    "JudgeName",
    "ScoreFact",
    "TierTuple",
    "score_facts",
]


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


class GradeScoresError(StoreError):
    """A grade's stored dimension scores cannot be read: written by another tool, say.

    ``grades.dim_scores`` (or, where it is empty, the document's ``scores``) is not the
    ``[[dimension_id, scale, score], …]`` the store writes. Never read as some score: the
    report would quote a figure no judge gave. The grade is named when it is known.

    Attributes:
        problem: What is wrong with the column.
        grade_id: The grade's id (None until the row is found).
        run_id: The run the grade is of.
        judge: The grade's judge (its model and config hash).
        column: The column read (``dim_scores`` or ``document.scores``).
    """

    def __init__(
        self,
        problem: str,
        *,
        grade_id: str | None = None,
        run_id: str | None = None,
        judge: str | None = None,
        column: str = "dim_scores",
    ) -> None:
        self.problem = problem
        self.grade_id = grade_id
        self.run_id = run_id
        self.judge = judge
        self.column = column
        which = (
            f"grade {grade_id!r} (run {run_id!r}, judge {judge})"
            if grade_id is not None
            else "a grade"
        )
        super().__init__(
            f"{which}: its stored scores ({column}) cannot be read: {problem}; "
            "expected [[dimension_id, scale, score], ...] as the store writes it "
            "(re-grade the run, or set the column to NULL to read the grade's document)"
        )


# a scale's levels by its stored text: a score is read only if the scale allows it
_LEVELS = {s.value: (s, frozenset(s.levels)) for s in Scale}


def score_facts(text: str) -> tuple[ScoreFact, ...]:
    """A grade's stored dimension scores, each checked (:class:`GradeScoresError` if not).

    ``text`` is ``grades.dim_scores`` (``[[id, scale, score], …]``) or a document's
    ``scores`` (``[{"dimension_id", "scale", "score", …}, …]``). A score must be null or
    an integer level of its scale, as :class:`~lhbench.schema.DimensionScore` holds it.
    """
    try:
        items = orjson.loads(text)
    except orjson.JSONDecodeError as e:
        raise GradeScoresError(f"not JSON ({e})") from None
    if not isinstance(items, list):
        raise GradeScoresError(f"a JSON {type(items).__name__}, not a list")
    return tuple(_score_fact(i, item) for i, item in enumerate(items))


def _score_fact(i: int, item: Any) -> ScoreFact:
    if isinstance(item, list):
        if len(item) != 3:
            raise GradeScoresError(f"item {i} has {len(item)} values, not 3")
        dimension_id, scale, score = item
    elif isinstance(item, dict):
        missing = [k for k in ("dimension_id", "scale") if k not in item]
        if missing:
            raise GradeScoresError(f"item {i} has no {' or '.join(missing)}")
        dimension_id, scale, score = item["dimension_id"], item["scale"], item.get("score")
    else:
        raise GradeScoresError(f"item {i} is a JSON {type(item).__name__}, not a list")
    if not isinstance(dimension_id, str):
        raise GradeScoresError(f"item {i}'s dimension id {_shown(dimension_id)} is not text")
    known = _LEVELS.get(scale) if isinstance(scale, str) else None
    if known is None:
        raise GradeScoresError(
            f"item {i} ({_shown(dimension_id)}) has an unknown scale {_shown(scale)} "
            f"(one of {', '.join(_LEVELS)})"
        )
    levels = known[1]
    # bool is an int to Python; a float (3.0, or a huge integer JSON parsed as one) is no level
    if score is not None and (type(score) is not int or score not in levels):
        raise GradeScoresError(
            f"item {i} ({_shown(dimension_id)}) has score {_shown(score)}, not null or one of "
            f"the {scale} levels {sorted(levels)}"
        )
    return ScoreFact(dimension_id, known[0], score)


def _shown(value: Any) -> str:
    """A value from the column, in an error message: bounded (a forged one may be huge)."""
    text = orjson.dumps(value).decode()
    return text if len(text) <= 60 else f"{text[:57]}..."
