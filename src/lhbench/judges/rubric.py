"""The rubric judge: one model scores one run on one rubric tier, with evidence per dimension.

A grade is one request answered through one output tool, sent on the model's direct path
(no agent loop). A missing or invalid answer is re-asked (bounded by ``retries``); after
that the grade is stored as a parse failure with the raw text, never coerced into a score.
Model errors that survive the model layer's retries become an error grade, not a missing
one.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass

from pydantic_ai import BinaryContent
from pydantic_ai.messages import UserContent
from pydantic_ai.models import Model

from lhbench.judges.base import Evidence, GradeItem, final_output, new_id
from lhbench.judges.output import RubricAnswer, check_rubric_answer
from lhbench.judges.prompts import (
    RUBRIC_PROMPT_VERSION,
    rubric_instructions,
    rubric_text,
    task_text,
)
from lhbench.judges.render import fence, render_trajectory
from lhbench.judges.structured import ask_structured
from lhbench.models import (
    Ask,
    ImagePart,
    ModelSpec,
    OutputSchema,
    PreparedRequest,
    UserPart,
    current_ledger,
    direct_client,
    is_transport_error,
)
from lhbench.schema import (
    DimensionScore,
    Grade,
    GradeStatus,
    JudgeIdentity,
    JudgeKind,
    Rubric,
    Tier,
    Trajectory,
    grade_key,
)

__all__ = ["RUBRIC_OUTPUT", "PreparedPrompt", "RubricJudge", "repeat_salt", "rubric_judge_identity"]

DEFAULT_RETRIES = 2
DEFAULT_BUDGET_TOKENS = 24_000
RUBRIC_OUTPUT = OutputSchema.of(RubricAnswer)


def repeat_salt(repeat: int) -> str:
    """The cache salt of a repeat (repeat 0 shares answers with any identical request)."""
    return f"repeat={repeat}" if repeat else ""


def rubric_judge_identity(
    spec: ModelSpec,
    *,
    retries: int = DEFAULT_RETRIES,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
) -> JudgeIdentity:
    """The identity a rubric judge over ``spec`` records (and whose grades are current)."""
    return JudgeIdentity(
        kind=JudgeKind.LLM,
        model=spec.model_string,
        family=spec.family,
        endpoint=spec.endpoint,
        prompt_version=RUBRIC_PROMPT_VERSION,
        settings={
            "temperature": spec.temperature,
            "seed": spec.seed,
            "retries": retries,
            "budget_tokens": budget_tokens,
        },
    )


_TEXT_TYPES = ("text/", "application/json", "application/xml", "image/svg+xml")
_MAX_ARTIFACT_CHARS = 20_000


@dataclass(frozen=True)
class PreparedPrompt:
    """A rendered judge prompt and the hash of every input in it."""

    parts: list[UserContent]
    inputs_hash: str


class RubricJudge:
    """Scores runs on a rubric tier with one model.

    Args:
        model: The model to ask (a ManagedModel from a ModelPool: its direct client is used;
            any other pydantic-ai model is asked through pydantic-ai's request API).
        spec: The judge's model spec (identity, family, pinned settings).
        retries: How many times an invalid answer is re-asked before a parse failure.
        budget_tokens: Trajectory rendering budget.
    """

    kind = JudgeKind.LLM

    def __init__(
        self,
        model: Model,
        spec: ModelSpec,
        *,
        retries: int = DEFAULT_RETRIES,
        budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    ) -> None:
        self.model = model
        self.spec = spec
        self.retries = retries
        self.budget_tokens = budget_tokens
        self.client = direct_client(model, spec)
        self.identity = rubric_judge_identity(spec, retries=retries, budget_tokens=budget_tokens)
        self._judge_key = self.identity.key

    def key(self, item: GradeItem) -> str:
        """The grade's identity: (run, this judge's config, rubric content, tier, repeat)."""
        return grade_key(
            item.run.id,
            self._judge_key,
            item.rubric.content_hash,
            item.tier.kind.value,
            item.repeat,
        )

    def prompt(
        self, evidence: Evidence, rubric: Rubric, tier: Tier
    ) -> tuple[list[UserContent], str]:
        """The user prompt parts and a hash of every input they carry."""
        h = hashlib.sha256()
        head = (
            f"# Task given to the agent\n{fence('task', task_text(evidence.task))}\n\n"
            f"# Rubric: {rubric.title} (v{rubric.version}), {tier.kind.value} tier\n"
            f"{rubric_text(tier)}\n\n"
        )
        parts: list[UserContent] = []
        if tier.evidence_source == "trajectory":
            traj = evidence.trajectory or Trajectory(run_id=evidence.run.id)
            rendered = render_trajectory(traj, budget_tokens=self.budget_tokens)
            body = (
                f"# Evidence: the agent's trajectory ({len(traj.steps)} steps"
                f"{f', {rendered.omitted_steps} omitted' if rendered.omitted_steps else ''})\n"
                f"{fence('trajectory', rendered.text)}"
            )
            parts.append(head + body)
        else:
            texts, images = [], []
            for a in evidence.artifacts:
                if a.content is None:
                    continue
                h.update(a.sha256.encode())
                if a.media_type.startswith("image/") and a.media_type != "image/svg+xml":
                    images.append(a)
                elif a.media_type.startswith(_TEXT_TYPES):
                    text = a.content.decode("utf-8", errors="replace")[:_MAX_ARTIFACT_CHARS]
                    texts.append(f"## {a.name} ({a.media_type})\n{fence('artifact', text)}")
            if not texts and not images:
                texts.append(
                    f"## Final answer\n{fence('agent_output', final_output(evidence.trajectory))}"
                )
            parts.append(head + "# Evidence: the agent's output artifacts\n" + "\n\n".join(texts))
            for a in images:
                parts.append(f"Image artifact {a.name}:")
                parts.append(BinaryContent(data=a.content or b"", media_type=a.media_type))
        h.update(json.dumps([p for p in parts if isinstance(p, str)]).encode())
        return parts, h.hexdigest()

    def prepare(self, evidence: Evidence, rubric: Rubric, tier: Tier) -> PreparedPrompt:
        """Render the prompt once; its hash gives every repeat's cache key."""
        parts, inputs = self.prompt(evidence, rubric, tier)
        return PreparedPrompt(parts=parts, inputs_hash=inputs)

    def ask(self, prepared: PreparedPrompt) -> Ask:
        """The question for a rendered prompt: instructions, prompt parts, the output tool."""
        user: list[UserPart] = [
            p
            if isinstance(p, str)
            else ImagePart(p.data, p.media_type)
            if isinstance(p, BinaryContent)
            else str(p)
            for p in prepared.parts
        ]
        return Ask(rubric_instructions(), tuple(user), RUBRIC_OUTPUT)

    def request(
        self,
        evidence: Evidence,
        rubric: Rubric,
        tier: Tier,
        *,
        repeat: int = 0,
        prepared: PreparedPrompt | None = None,
    ) -> PreparedRequest:
        """The grade's first request, encoded once (a job looks its key up in bulk)."""
        prepared = prepared or self.prepare(evidence, rubric, tier)
        return self.client.prepare(self.ask(prepared), salt=repeat_salt(repeat))

    async def judge(self, item: GradeItem) -> Grade:
        """The grade of ``item`` (its evidence loaded): ok, a parse failure, or an error."""
        if item.evidence is None:
            raise ValueError(f"grade item for run {item.run.id} has no evidence loaded")
        return await self.grade(item.evidence, item.rubric, item.tier, repeat=item.repeat)

    async def grade(
        self,
        evidence: Evidence,
        rubric: Rubric,
        tier: Tier,
        *,
        repeat: int = 0,
        prepared: PreparedPrompt | None = None,
        request: PreparedRequest | None = None,
        key: str | None = None,
    ) -> Grade:
        """Ask the model once (plus bounded re-asks); always returns a Grade.

        ``request`` and ``key``: the first request and the grade's key, when the job has them.
        """
        if request is None:
            request = self.request(evidence, rubric, tier, repeat=repeat, prepared=prepared)
        key = key or self.key(GradeItem(evidence.run, rubric, tier, repeat))
        started = time.monotonic()
        status, answer, raw, error = GradeStatus.OK, None, None, None
        retryable = False
        with current_ledger() as ledger:
            outcome = await ask_structured(
                self.client,
                request.ask,
                RubricAnswer,
                retries=self.retries,
                check=lambda a: check_rubric_answer(a, tier),
                salt=repeat_salt(repeat),
                first=request,
            )
        tool = RUBRIC_OUTPUT.name
        exc = outcome.failure
        if isinstance(exc, TimeoutError):
            status, raw = GradeStatus.ERROR, outcome.raw(tool) or None
            error = f"timed out after {self.spec.timeout_s}s"
            retryable = True
        elif exc is not None:
            status, raw = GradeStatus.ERROR, outcome.raw(tool) or None
            error = f"{type(exc).__name__}: {exc}"
            retryable = is_transport_error(exc)
        elif outcome.answer is None:
            status, raw, error = GradeStatus.PARSE_ERROR, outcome.raw(tool), outcome.problem
        else:
            answer = outcome.answer
        scores: list[DimensionScore] = []
        tier_score = None
        if answer is not None:
            by_id = {a.dimension_id: a for a in answer.dimensions}
            for d in tier.dimensions:
                a = by_id[d.id]
                scores.append(
                    DimensionScore(
                        dimension_id=d.id,
                        scale=d.scale,
                        score=a.score,
                        matched_level=d.anchors[a.score] if a.score is not None else None,
                        evidence=a.evidence,
                        unscorable_reason=a.unscorable_reason if a.score is None else None,
                    )
                )
            tier_score = tier.score({s.dimension_id: s.score for s in scores})
        return Grade(
            id=new_id("grade"),
            run_id=evidence.run.id,
            rubric_id=rubric.id,
            rubric_version=rubric.version,
            rubric_hash=rubric.content_hash,
            tier=tier.kind,
            judge=self.identity,
            status=status,
            retryable=retryable,
            scores=scores,
            tier_score=tier_score,
            repeat=repeat,
            raw_output=raw if status != GradeStatus.OK else None,
            error=error,
            usage=ledger.usage(),
            cost_usd=ledger.cost_usd,
            latency_s=time.monotonic() - started,
            key=key,
        )
