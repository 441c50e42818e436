"""What judges produce: rubric grades, binary verdicts, preference votes and labels."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Any, Literal, Protocol

from pydantic import AwareDatetime, Field, NonNegativeFloat, NonNegativeInt, model_validator

from lhbench.schema.base import Schema, Usage, utcnow
from lhbench.schema.rubric import Scale, TierKind
from lhbench.schema.run import FailureKind

__all__ = [
    "DimensionScore",
    "Grade",
    "GradeLike",
    "GradeStatus",
    "JudgeIdentity",
    "JudgeKind",
    "JudgeLike",
    "Label",
    "PreferenceVote",
    "ScoreLike",
    "Verdict",
    "VerdictValue",
    "VoteStatus",
    "grade_key",
    "judge_labels",
    "label_key",
    "verdict_key",
    "vote_key",
]


def _digest(doc: object) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


def grade_key(run_id: str, judge_key: str, rubric_hash: str, tier: str, repeat: int) -> str:
    """A grade's identity: one run, one judge config, one rubric content, one tier, one repeat.

    Two runs never share a grade, even when their evidence is identical (the model
    response cache, keyed by the request, is what saves the second call).
    """
    return _digest(["grade", run_id, judge_key, rubric_hash, str(tier), repeat])


def vote_key(
    judge_key: str, rubric_hash: str, tier: str, run_a: str, run_b: str, repeat: int = 0
) -> str:
    """A pairwise judge's vote identity: judge config, rubric content, tier, ordered pair."""
    return _digest(["vote", judge_key, rubric_hash, str(tier), run_a, run_b, repeat])


def verdict_key(run_id: str, judge_key: str, state_id: str, repeat: int) -> str:
    """A verdict's identity: the run, the judge config, the replayed state, the repeat."""
    return _digest(["verdict", run_id, judge_key, state_id, repeat])


def label_key(run_id: str, source: str, check_hash: str) -> str:
    """A check's label identity: the run, the check, and the check's content."""
    return _digest(["label", run_id, source, check_hash])


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
    endpoint: str | None = Field(
        default=None, description="Base URL of the server asked (None: the provider's own)."
    )
    prompt_version: str | None = None
    settings: dict[str, Any] = Field(default_factory=dict, description="temperature, seed, …")

    @property
    def key(self) -> str:
        """Hash of everything that can change this judge's answers.

        Model, endpoint, kind, prompt version and settings; not the family, which is a
        label. A changed setting makes the judge's earlier grades stale.
        """
        return _digest(
            [self.kind.value, self.model, self.endpoint, self.prompt_version, self.settings]
        )

    @property
    def label(self) -> str:
        """How reports name the judge: the model string, with the server when not the default."""
        if not self.endpoint:
            return self.model
        host = self.endpoint.split("://", 1)[-1].split("/", 1)[0]
        return f"{self.model}@{host}"


class JudgeLike(Protocol):
    """What figures read of a judge: its config hash and its name (a ``JudgeIdentity``)."""

    @property
    def key(self) -> str:
        """The judge config's hash."""

    @property
    def label(self) -> str:
        """The judge's name in reports."""


def judge_labels(identities: Iterable[JudgeLike]) -> dict[str, str]:
    """Judge config hash -> the name reports show: the label, and more when two share it."""
    by_label: dict[str, list[str]] = {}
    for ident in {i.key: i for i in identities}.values():
        by_label.setdefault(ident.label, []).append(ident.key)
    out = {}
    for label, keys in by_label.items():
        for key in keys:
            out[key] = label if len(keys) == 1 else f"{label} [{key[:6]}]"
    return out


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


class ScoreLike(Protocol):
    """What figures read of one dimension's score (a ``DimensionScore``)."""

    @property
    def dimension_id(self) -> str:
        """The dimension scored."""

    @property
    def scale(self) -> Scale:
        """The dimension's scale."""

    @property
    def score(self) -> int | None:
        """The score (None: unscorable)."""


class GradeLike(Protocol):
    """What panel scores and agreement read of a grade.

    A ``Grade``, or a lean stand-in read from the store's columns (a report over a million
    grades need not validate a million documents, nor hash each judge's settings per grade).
    """

    @property
    def run_id(self) -> str:
        """The run graded."""

    @property
    def rubric_id(self) -> str:
        """The rubric's id."""

    @property
    def rubric_version(self) -> str:
        """The rubric's version."""

    @property
    def rubric_hash(self) -> str:
        """The rubric content graded with."""

    @property
    def tier(self) -> TierKind:
        """The tier graded."""

    @property
    def judge(self) -> JudgeLike:
        """Who graded."""

    @property
    def status(self) -> GradeStatus:
        """Whether it holds scores."""

    @property
    def scores(self) -> Sequence[ScoreLike]:
        """Per-dimension scores."""

    @property
    def tier_score(self) -> float | None:
        """The weighted tier score."""

    @property
    def repeat(self) -> int:
        """Which repeat of the judge."""


class Grade(Schema):
    """One judge × one run × one rubric tier, at one rubric content.

    ``key`` = :func:`grade_key` (run, judge config, rubric content hash, tier, repeat) is
    its identity: a job skips keys stored with a final result. A failed grade is final
    when the model answered (a parse failure) and ``retryable`` when it did not (timeout,
    refused connection, 429, 5xx, cut-off body): the next run of the job asks again.
    """

    id: str = Field(min_length=1)
    run_id: str
    rubric_id: str
    rubric_version: str
    rubric_hash: str = Field(default="", description="Content hash of the rubric graded with.")
    tier: TierKind
    judge: JudgeIdentity
    status: GradeStatus = GradeStatus.OK
    retryable: bool = Field(default=False, description="A transport failure: ask again.")
    scores: list[DimensionScore] = Field(default_factory=list)
    tier_score: float | None = None
    repeat: NonNegativeInt = 0
    raw_output: str | None = None
    error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    cost_usd: NonNegativeFloat | None = None
    latency_s: NonNegativeFloat | None = None
    key: str = Field(min_length=8)
    created_at: AwareDatetime = Field(default_factory=utcnow)

    @property
    def judge_key(self) -> str:
        """The judge config's hash (see :attr:`JudgeIdentity.key`)."""
        return self.judge.key

    @property
    def final(self) -> bool:
        """Whether a job should keep this grade rather than ask again."""
        return not self.retryable

    @model_validator(mode="after")
    def _status_consistent(self) -> Grade:
        if self.retryable and self.status != GradeStatus.ERROR:
            raise ValueError("only an error grade can be retryable")
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
    says why, and ``retryable`` whether the judge never answered (transport) rather than
    answered badly. It is never defaulted to PASS or FAIL.
    """

    id: str = Field(min_length=1)
    run_id: str
    judge: JudgeIdentity
    state_id: str = Field(default="", description="Hash of the replayed final state judged.")
    verdict: VerdictValue | None
    evidence: list[str] = Field(default_factory=list)
    confidence: float | None = Field(default=None, ge=0, le=1)
    tool_calls: NonNegativeInt = 0
    tools_used: list[str] = Field(default_factory=list, description="Tools called, in order.")
    repeat: NonNegativeInt = 0
    failure_mode: str | None = Field(default=None, description="Tag for a wrong verdict.")
    raw_output: str | None = None
    error: str | None = None
    retryable: bool = False
    usage: Usage = Field(default_factory=Usage)
    cost_usd: NonNegativeFloat | None = None
    latency_s: NonNegativeFloat | None = None
    key: str = Field(min_length=8)
    created_at: AwareDatetime = Field(default_factory=utcnow)

    @model_validator(mode="after")
    def _error_when_missing(self) -> Verdict:
        if self.verdict is None and not self.error:
            raise ValueError("a verdict without a value must say why in 'error'")
        if self.retryable and self.verdict is not None:
            raise ValueError("a verdict with a value is not retryable")
        return self


VoteStatus = Literal["ok", "parse_error", "error"]


class PreferenceVote(Schema):
    """A pairwise preference between two runs of the same task.

    With ``chapter_id`` it compares one chapter of two courses (programmatic content:
    LH-Bench's chapter-level human preferences); without, the two runs as a whole.
    ``left`` records which run was shown on the left, so position bias can be tested.
    ``quality`` rates the preferred output (1–5); for a tie it rates both. A pairwise
    judge that failed leaves a vote with ``status`` ≠ ok, no winner, and the reason in
    ``error`` (``retryable`` when the model never answered): failures are kept, not lost.
    """

    id: str = Field(min_length=1)
    pack_id: str
    task_id: str
    run_a: str
    run_b: str
    left: Literal["a", "b"]
    winner: Literal["a", "b", "tie"] | None
    quality: int | None = Field(default=None, ge=1, le=5)
    annotator: str = Field(min_length=1)
    rater_kind: JudgeKind = JudgeKind.HUMAN
    status: VoteStatus = "ok"
    error: str | None = None
    retryable: bool = False
    rubric_id: str | None = None
    rubric_hash: str | None = None
    tier: TierKind | None = None
    judge_key: str | None = Field(default=None, description="The pairwise judge's config hash.")
    chapter_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="The chapter compared (programmatic content); None: the whole runs.",
    )
    created_at: AwareDatetime = Field(default_factory=utcnow)

    @model_validator(mode="after")
    def _distinct_runs(self) -> PreferenceVote:
        if self.run_a == self.run_b:
            raise ValueError("a preference vote compares two different runs")
        if (self.status == "ok") != (self.winner is not None):
            raise ValueError("an ok vote names a winner; a failed one names none")
        if self.status != "ok" and not self.error:
            raise ValueError("a failed vote must say why in 'error'")
        return self


class Label(Schema):
    """The ground-truth outcome of a run, from a check on its final state (or a person).

    ``passed`` is None when the check could not decide (it crashed, timed out, or answered
    in a shape it should not); ``error`` then says why, and ``failure_kind`` is
    ``infrastructure`` when what failed was around the check, not the run. ``check_hash``
    is the content of the check that gave it: after the check changes, the label is stale
    and re-checked.
    """

    run_id: str
    passed: bool | None
    source: str = Field(min_length=1, description="'verify:<task>/<script>' or 'human:<name>'.")
    detail: str = ""
    error: str | None = None
    check_hash: str = ""
    created_at: AwareDatetime = Field(default_factory=utcnow)
    failure_kind: FailureKind | None = Field(
        default=None,
        description="'infrastructure' when the check could not run for want of something "
        "around it (a package, a browser, the sandbox): retried, never a label.",
    )

    @model_validator(mode="after")
    def _error_when_undecided(self) -> Label:
        if self.passed is None and not self.error:
            raise ValueError("a label without an outcome must say why in 'error'")
        return self
