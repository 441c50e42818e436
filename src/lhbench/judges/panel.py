"""A panel of rubric judges from different model families, run concurrently."""

from __future__ import annotations

import asyncio
import math
import statistics
from dataclasses import dataclass

from lhbench.judges.rubric import Evidence, RubricJudge
from lhbench.schema import Grade, GradeStatus, Rubric, Tier

__all__ = ["JudgePanel", "PanelResult"]


@dataclass(frozen=True)
class PanelResult:
    """Every judge's grade of one run, the panel mean and the cross-judge variance."""

    run_id: str
    grades: list[Grade]

    @property
    def scored(self) -> list[Grade]:
        """Grades that hold a tier score (failed and fully unscorable ones are left out)."""
        return [g for g in self.grades if g.status == GradeStatus.OK and g.tier_score is not None]

    @property
    def mean(self) -> float:
        """Panel score: mean of the judges' tier scores (NaN when no judge scored)."""
        s = [g.tier_score for g in self.scored if g.tier_score is not None]
        return sum(s) / len(s) if s else math.nan

    @property
    def variance(self) -> float:
        """Population variance of the judges' tier scores."""
        s = [g.tier_score for g in self.scored if g.tier_score is not None]
        return statistics.pvariance(s) if s else math.nan

    def dimension_mean(self, dimension_id: str) -> float:
        """Mean score of one dimension over the judges that scored it."""
        vals = [
            s.score
            for g in self.scored
            for s in g.scores
            if s.dimension_id == dimension_id and s.score is not None
        ]
        return sum(vals) / len(vals) if vals else math.nan


class JudgePanel:
    """N judges (default three, from different families) grading the same evidence."""

    def __init__(self, judges: list[RubricJudge]) -> None:
        if not judges:
            raise ValueError("a panel needs at least one judge")
        refs = [j.spec.ref for j in judges]
        if len(set(refs)) != len(refs):
            raise ValueError(f"a judge appears twice in the panel: {refs}")
        self.judges = judges

    @property
    def families(self) -> list[str]:
        """The judges' model families."""
        return [j.spec.family for j in self.judges]

    async def grade(
        self, evidence: Evidence, rubric: Rubric, tier: Tier, *, repeat: int = 0
    ) -> PanelResult:
        """Every judge grades concurrently; every grade is returned, failed ones included."""
        grades = await asyncio.gather(
            *(j.grade(evidence, rubric, tier, repeat=repeat) for j in self.judges)
        )
        return PanelResult(run_id=evidence.run.id, grades=list(grades))
