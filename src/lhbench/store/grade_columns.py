"""Grades as columns: what the report's figures read of a million grades, as numpy arrays.

A report over 100,000 runs reads a million grades; a Python object per grade (and a loop
over them per figure) took most of its time. :class:`GradeColumns` holds one array per
field, the few distinct strings (run ids, rubric tiers, judges, score lists) in small
tables the arrays index, so panel scores, agreement and health counts are numpy
group-bys. A ``Grade`` list is converted with :meth:`GradeColumns.from_grades`, so the
document path and the store's lean path compute every figure the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from lhbench.schema import GradeLike, Scale
from lhbench.store.grade_parts import (
    OK,
    STATUSES,
    JudgeName,
    ScoreFact,
    TierTuple,
)

__all__ = ["STATUSES", "GradeColumns", "JudgeName", "ScoreFact", "TierTuple"]


@dataclass(frozen=True, eq=False)
class GradeColumns:
    """Grades, oldest first, one array per field; tables hold each distinct value once.

    ``run``, ``key``, ``judge`` and ``scores`` index ``run_ids``, ``keys``, ``judges`` and
    ``score_lists``; ``status`` indexes :data:`STATUSES`; ``tier_score`` is NaN where the
    grade holds none. Subsets (:meth:`take`) share the tables.
    """

    run_ids: Sequence[str]
    keys: Sequence[TierTuple]
    judges: Sequence[JudgeName]
    score_lists: Sequence[tuple[ScoreFact, ...]]
    run: NDArray[np.int64]
    key: NDArray[np.int64]
    judge: NDArray[np.int64]
    status: NDArray[np.int8]
    retryable: NDArray[np.bool_]
    tier_score: NDArray[np.float64]
    repeat: NDArray[np.int64]
    scores: NDArray[np.int64]

    def __len__(self) -> int:
        return int(self.run.size)

    @classmethod
    def empty(cls) -> GradeColumns:
        """No grades."""
        return cls.from_grades(())

    @classmethod
    def from_grades(cls, grades: Iterable[GradeLike]) -> GradeColumns:
        """The columns of grade documents or facts, in their order (a judge's key read once)."""
        runs: dict[str, int] = {}
        keys: dict[TierTuple, int] = {}
        judges: dict[JudgeName, int] = {}
        named: dict[int, int] = {}  # id(judge identity) -> its index: its key is a hash
        lists: dict[tuple[ScoreFact, ...], int] = {}
        cols: tuple[list[int], ...] = ([], [], [], [], [], [], [])
        run, key, judge, status, retryable, repeat, scores = cols
        tier_score: list[float] = []
        for g in grades:
            run.append(runs.setdefault(g.run_id, len(runs)))
            tk = (g.rubric_id, g.rubric_version, g.tier.value, g.rubric_hash)
            key.append(keys.setdefault(tk, len(keys)))
            j = named.get(id(g.judge))
            if j is None:
                name = JudgeName(g.judge.key, g.judge.label)
                j = named[id(g.judge)] = judges.setdefault(name, len(judges))
            judge.append(j)
            status.append(STATUSES.index(g.status))
            retryable.append(bool(getattr(g, "retryable", False)))  # not in GradeLike
            tier_score.append(np.nan if g.tier_score is None else float(g.tier_score))
            repeat.append(int(g.repeat))
            listed = tuple(ScoreFact(s.dimension_id, s.scale, s.score) for s in g.scores)
            scores.append(lists.setdefault(listed, len(lists)))
        return cls.from_lists(list(runs), list(keys), list(judges), list(lists), cols, tier_score)

    @classmethod
    def from_lists(
        cls,
        run_ids: Sequence[str],
        keys: Sequence[TierTuple],
        judges: Sequence[JudgeName],
        score_lists: Sequence[tuple[ScoreFact, ...]],
        cols: tuple[list[int], ...],
        tier_score: list[float],
    ) -> GradeColumns:
        """From the tables, the integer columns as lists and the tier scores.

        ``cols``: run, key, judge, status, retryable, repeat and scores, in that order.
        """
        run, key, judge, status, retryable, repeat, scores = cols
        return cls(
            run_ids=run_ids,
            keys=keys,
            judges=judges,
            score_lists=score_lists,
            run=np.asarray(run, dtype=np.int64),
            key=np.asarray(key, dtype=np.int64),
            judge=np.asarray(judge, dtype=np.int64),
            status=np.asarray(status, dtype=np.int8),
            retryable=np.asarray(retryable, dtype=np.bool_),
            tier_score=np.asarray(tier_score, dtype=np.float64),
            repeat=np.asarray(repeat, dtype=np.int64),
            scores=np.asarray(scores, dtype=np.int64),
        )

    def take(self, rows: NDArray[np.bool_] | NDArray[np.int64]) -> GradeColumns:
        """The grades ``rows`` selects (a mask or indexes), the tables shared."""
        return GradeColumns(
            run_ids=self.run_ids,
            keys=self.keys,
            judges=self.judges,
            score_lists=self.score_lists,
            run=self.run[rows],
            key=self.key[rows],
            judge=self.judge[rows],
            status=self.status[rows],
            retryable=self.retryable[rows],
            tier_score=self.tier_score[rows],
            repeat=self.repeat[rows],
            scores=self.scores[rows],
        )

    def of_key(self, key: TierTuple) -> GradeColumns:
        """The grades of one rubric tier at one content."""
        try:
            k = list(self.keys).index(tuple(key))  # type: ignore[arg-type]
        except ValueError:
            return self.take(np.zeros(len(self), dtype=np.bool_))
        return self.take(self.key == k)

    def by_key(self) -> dict[TierTuple, GradeColumns]:
        """The grades per rubric tier present, in sorted key order."""
        present = np.unique(self.key)
        out = {tuple(self.keys[int(k)]): self.take(self.key == k) for k in present}
        return {k: out[k] for k in sorted(out)}  # type: ignore[misc]

    @property
    def ok(self) -> NDArray[np.bool_]:
        """Grades whose status is ok."""
        ok: NDArray[np.bool_] = self.status == OK
        return ok

    def present_keys(self) -> list[TierTuple]:
        """The rubric tiers graded, sorted."""
        return sorted({tuple(self.keys[int(k)]) for k in np.unique(self.key)})  # type: ignore[misc]

    def score_scales(self) -> set[Scale]:
        """Every scale the grades' dimension scores are on."""
        return {s.scale for i in np.unique(self.scores) for s in self.score_lists[int(i)]}

    @cached_property
    def unscorable(self) -> NDArray[np.int64]:
        """Per grade: its dimensions left unscored."""
        per_list = np.array(
            [sum(1 for s in listed if s.score is None) for listed in self.score_lists] or [0],
            dtype=np.int64,
        )
        return per_list[self.scores] if len(self) else np.zeros(0, dtype=np.int64)

    def dimension_matrix(
        self, *, normalised: bool = False
    ) -> tuple[list[str], NDArray[np.float64]]:
        """The dimensions scored (sorted) and a grades × dimensions matrix of scores.

        NaN where a grade holds no score of a dimension (unscorable or absent); with
        ``normalised`` each score is its position on its own scale, (s − low) / (high − low).
        A score list naming a dimension twice keeps its last score (as a dict would).
        """
        used = np.unique(self.scores)
        dims = sorted({s.dimension_id for i in used for s in self.score_lists[int(i)]})
        col = {d: c for c, d in enumerate(dims)}
        table = np.full((len(self.score_lists) or 1, len(dims)), np.nan)
        for i in used:
            for s in self.score_lists[int(i)]:
                if s.score is None:
                    continue  # an unscorable entry never hides a score
                if normalised:
                    low, high = s.scale.low, s.scale.high
                    table[int(i), col[s.dimension_id]] = (s.score - low) / (high - low)
                else:
                    table[int(i), col[s.dimension_id]] = s.score
        return dims, table[self.scores]
