"""Structured answers judges must give, and their validation against the rubric."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field
from pydantic_ai import ModelRetry

from lhbench.schema import Tier
from lhbench.schema.answers import JudgeInt, JudgeNumber

__all__ = [
    "DimensionAnswer",
    "JudgeInt",
    "JudgeNumber",
    "PairwiseAnswer",
    "RubricAnswer",
    "check_rubric_answer",
]


class DimensionAnswer(BaseModel):
    """One dimension's judgement."""

    dimension_id: str = Field(description="The dimension id exactly as in the rubric.")
    evidence: str = Field(
        description="What you observed that decided the level (cite steps/files)."
    )
    score: JudgeInt | None = Field(
        description="The matched level on the dimension's scale; null if unscorable."
    )
    unscorable_reason: str | None = Field(
        default=None, description="Why no level can be matched; only when score is null."
    )


class RubricAnswer(BaseModel):
    """The judgement of a whole rubric tier."""

    dimensions: list[DimensionAnswer]


class PairwiseAnswer(BaseModel):
    """Which of two attempts is better."""

    reasoning: str = Field(description="The comparison, dimension by dimension, in brief.")
    preferred: Literal["first", "second", "tie"]


def check_rubric_answer(answer: RubricAnswer, tier: Tier) -> RubricAnswer:
    """Every dimension exactly once, scores inside their scales; else ModelRetry saying what."""
    expected = {d.id: d for d in tier.dimensions}
    seen: dict[str, int] = {}
    problems = []
    for a in answer.dimensions:
        seen[a.dimension_id] = seen.get(a.dimension_id, 0) + 1
        dim = expected.get(a.dimension_id)
        if dim is None:
            problems.append(f"'{a.dimension_id}' is not a dimension of this rubric")
        elif a.score is None:
            if not (a.unscorable_reason or "").strip():
                problems.append(f"'{a.dimension_id}' has no score and no unscorable_reason")
        elif a.score not in dim.scale.levels:
            problems.append(
                f"'{a.dimension_id}' score {a.score} is outside its scale {list(dim.scale.levels)}"
            )
    problems += [f"'{d}' is answered {n} times" for d, n in seen.items() if n > 1]
    problems += [f"'{d}' is missing" for d in expected if d not in seen]
    if problems:
        raise ModelRetry(
            "Your answer does not fit the rubric: "
            + "; ".join(problems)
            + f". Answer every dimension exactly once: {', '.join(expected)}."
        )
    return answer
