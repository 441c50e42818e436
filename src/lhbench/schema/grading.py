"""What judges produce: rubric grades, binary verdicts, preference votes and labels."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import AwareDatetime, Field, NonNegativeFloat, NonNegativeInt, model_validator

from lhbench.schema.base import Schema, Usage, utcnow
from lhbench.schema.rubric import Scale, TierKind

__all__ = [
    "DimensionScore",
    "Grade",
    "GradeStatus",
    "JudgeIdentity",
    "JudgeKind",
    "Label",
    "PreferenceVote",
    "Verdict",
    "VerdictValue",
]


class JudgeKind(StrEnum):
    """How a judgement was made."""

    PROGRAMMATIC = "programmatic"
    LLM = "llm"
    VLM = "vlm"
    AGENT = "agent"
    HUMAN = "human"


class JudgeIdentity(Schema):
    """Who judged: the model (or person or check), its family, and its pinned settings."""

    kind: JudgeKind
    model: str = Field(min_length=1, description="Model string, check name, or annotator.")
    family: str | None = Field(default=None, description="Model family (anthropic, openai, …).")
    prompt_version: str | None = None
    settings: dict[str, Any] = Field(default_factory=dict, description="temperature, seed, …")


class DimensionScore(Schema):
    """One dimension's score with the evidence behind it, or why it could not be scored."""

    dimension_id: str
    scale: Scale
    score: int | None = None
    matched_level: str | None = Field(default=None, description="The anchor the judge matched.")
    evidence: str = ""
    unscorable_reason: str | None = None

    @model_validator(mode="after")
    def _score_in_scale(self) -> DimensionScore:
        if self.score is None:
            if not self.unscorable_reason:
                raise ValueError(f"'{self.dimension_id}' has no score and no unscorable_reason")
        elif self.score not in self.scale.levels:
            raise ValueError(
                f"score {self.score} for '{self.dimension_id}' is outside scale "
                f"{self.scale.value} (levels {list(self.scale.levels)})"
            )
        return self


class GradeStatus(StrEnum):
    """A grade either holds scores, or records why it does not (never a coerced score)."""

    OK = "ok"
    PARSE_ERROR = "parse_error"
    ERROR = "error"


class Grade(Schema):
    """One judge × one run × one rubric tier (at one rubric version).

    ``cache_key`` = hash(judge config, rubric version, inputs): writing the same key twice
    is a no-op, so re-grading is free and a crashed job resumes without duplicates.
    """

    id: str = Field(min_length=1)
    run_id: str
    rubric_id: str
    rubric_version: str
    tier: TierKind
    judge: JudgeIdentity
    status: GradeStatus = GradeStatus.OK
    scores: list[DimensionScore] = Field(default_factory=list)
    tier_score: float | None = None
    repeat: NonNegativeInt = 0
    raw_output: str | None = None
    error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    cost_usd: NonNegativeFloat | None = None
    latency_s: NonNegativeFloat | None = None
    cache_key: str = Field(min_length=8)
    created_at: AwareDatetime = Field(default_factory=utcnow)

    @model_validator(mode="after")
    def _status_consistent(self) -> Grade:
        if self.status == GradeStatus.OK:
            if not self.scores:
                raise ValueError("an ok grade needs dimension scores")
        elif self.tier_score is not None or any(s.score is not None for s in self.scores):
            raise ValueError(f"a {self.status} grade carries no scores")
        elif not (self.error or self.raw_output):
            raise ValueError(f"a {self.status} grade must keep the raw output or the error")
        ids = [s.dimension_id for s in self.scores]
        if len(ids) != len(set(ids)):
            raise ValueError("a dimension is scored twice in one grade")
        return self

    def score_map(self) -> dict[str, int | None]:
        """Dimension id -> score (None where unscorable)."""
        return {s.dimension_id: s.score for s in self.scores}


VerdictValue = Literal["PASS", "FAIL"]


class Verdict(Schema):
    """A binary judgement of whether a run completed its task, with the evidence gathered.

    ``verdict`` is None only when the judge produced no parseable verdict; then ``error``
    says why. It is never defaulted to PASS or FAIL.
    """

    id: str = Field(min_length=1)
    run_id: str
    judge: JudgeIdentity
    verdict: VerdictValue | None
    evidence: list[str] = Field(default_factory=list)
    confidence: float | None = Field(default=None, ge=0, le=1)
    tool_calls: NonNegativeInt = 0
    tools_used: list[str] = Field(default_factory=list, description="Tools called, in order.")
    repeat: NonNegativeInt = 0
    failure_mode: str | None = Field(default=None, description="Tag for a wrong verdict.")
    raw_output: str | None = None
    error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    cost_usd: NonNegativeFloat | None = None
    latency_s: NonNegativeFloat | None = None
    cache_key: str = Field(min_length=8)
    created_at: AwareDatetime = Field(default_factory=utcnow)

    @model_validator(mode="after")
    def _error_when_missing(self) -> Verdict:
        if self.verdict is None and not self.error:
            raise ValueError("a verdict without a value must say why in 'error'")
        return self


class PreferenceVote(Schema):
    """A pairwise preference between two runs of the same task.

    ``left`` records which run was shown on the left, so position bias can be tested.
    ``quality`` rates the preferred output (1–5); for a tie it rates both.
    """

    id: str = Field(min_length=1)
    pack_id: str
    task_id: str
    run_a: str
    run_b: str
    left: Literal["a", "b"]
    winner: Literal["a", "b", "tie"]
    quality: int | None = Field(default=None, ge=1, le=5)
    annotator: str = Field(min_length=1)
    rater_kind: JudgeKind = JudgeKind.HUMAN
    created_at: AwareDatetime = Field(default_factory=utcnow)

    @model_validator(mode="after")
    def _distinct_runs(self) -> PreferenceVote:
        if self.run_a == self.run_b:
            raise ValueError("a preference vote compares two different runs")
        return self


class Label(Schema):
    """The ground-truth outcome of a run (from a verify script on the replayed state)."""

    run_id: str
    passed: bool
    source: str = Field(min_length=1, description="'verify:<script>' or 'human:<name>'.")
    detail: str = ""
    created_at: AwareDatetime = Field(default_factory=utcnow)
