"""Structured answers judges must give, and their validation against the rubric."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field
from pydantic_ai import ModelRetry

from lhbench.schema import Tier

__all__ = [
    "DimensionAnswer",
    "JudgeInt",
    "JudgeNumber",
    "PairwiseAnswer",
    "RubricAnswer",
    "check_rubric_answer",
]


def _json_number(value: Any) -> Any:
    # pydantic's lax mode would read `true` as 1 and "5" as 5: a judge that answers so has
    # not given a number, and its answer is re-asked (never stored as a score)
    if isinstance(value, bool | str):
        raise ValueError("must be a JSON number, not true/false or text")
    return value


# an integer (5.0 is 5) or a number a judge gives; true/false and numbers as text refused
JudgeInt = Annotated[int, BeforeValidator(_json_number)]
JudgeNumber = Annotated[float, BeforeValidator(_json_number)]


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
