"""The rubric judge: one model scores one run on one rubric tier, with evidence per dimension.

A missing or invalid answer is re-asked (bounded by ``retries``); after that the grade is
stored as a parse failure with the raw text, never coerced into a score. Model errors
that survive the model layer's retries become an error grade, not a missing one.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import Agent, BinaryContent, RunContext, capture_run_messages
from pydantic_ai.exceptions import ModelAPIError, UnexpectedModelBehavior
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, UserContent
from pydantic_ai.models import Model

from lhbench.judges.output import RubricAnswer, check_rubric_answer
from lhbench.judges.prompts import (
    RUBRIC_PROMPT_VERSION,
    rubric_instructions,
    rubric_text,
    task_text,
)
from lhbench.judges.render import fence, render_trajectory
from lhbench.models import ModelSpec, cache_salt, current_ledger
from lhbench.schema import (
    Artifact,
    DimensionScore,
    Grade,
    GradeStatus,
    JudgeIdentity,
    JudgeKind,
    Role,
    Rubric,
    Run,
    StepKind,
    Task,
    Tier,
    Trajectory,
)

__all__ = ["Evidence", "PreparedPrompt", "RubricJudge", "grade_cache_key", "raw_output"]

_TEXT_TYPES = ("text/", "application/json", "application/xml", "image/svg+xml")
_MAX_ARTIFACT_CHARS = 20_000


@dataclass(frozen=True)
class PreparedPrompt:
    """A rendered judge prompt and the hash of every input in it."""

    parts: list[UserContent]
    inputs_hash: str


@dataclass
class Evidence:
    """What a judge may look at for one run."""

    run: Run
    task: Task | None
    trajectory: Trajectory | None = None
    artifacts: list[Artifact] = field(default_factory=list)


def raw_output(messages: list[ModelMessage]) -> str:
    """The last thing the model said (text or tool-call arguments), for parse-failure records."""
    for m in reversed(messages):
        if isinstance(m, ModelResponse):
            parts = []
            for p in m.parts:
                if isinstance(p, TextPart):
                    parts.append(p.content)
                elif isinstance(p, ToolCallPart):
                    args = p.args if isinstance(p.args, str) else json.dumps(p.args)
                    parts.append(f"{p.tool_name}({args})")
            if parts:
                return "\n".join(parts)
    return ""


def _final_output(trajectory: Trajectory | None) -> str:
    if trajectory is None:
        return ""
    for s in reversed(trajectory.steps):
        if s.role == Role.ASSISTANT and s.kind == StepKind.MESSAGE and s.content:
            return s.content
    return ""


def grade_cache_key(
    spec_doc: dict[str, Any], rubric: Rubric, tier: Tier, inputs_hash: str, repeat: int
) -> str:
    """hash(judge config, rubric version, inputs, repeat): the grade's identity."""
    doc = {
        "judge": spec_doc,
        "rubric": [rubric.id, rubric.version, rubric.content_hash, tier.kind.value],
        "inputs": inputs_hash,
        "repeat": repeat,
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


class RubricJudge:
    """Scores runs on a rubric tier with one model.

    Args:
        model: The model to ask (a ManagedModel from a ModelPool, or any pydantic-ai model).
        spec: The judge's model spec (identity, family, pinned settings).
        retries: How many times an invalid answer is re-asked before a parse failure.
        budget_tokens: Trajectory rendering budget.
    """

    kind = JudgeKind.LLM

    def __init__(
        self, model: Model, spec: ModelSpec, *, retries: int = 2, budget_tokens: int = 24_000
    ) -> None:
        self.model = model
        self.spec = spec
        self.retries = retries
        self.budget_tokens = budget_tokens
        # one agent serves every grade (building one costs milliseconds); the tier to
        # validate against travels in deps
        self._agent: Agent[Tier, RubricAnswer] = Agent(
            model,
            output_type=RubricAnswer,
            deps_type=Tier,
            instructions=rubric_instructions(),
            retries={"output": retries},
        )

        @self._agent.output_validator
        def _validate(ctx: RunContext[Tier], answer: RubricAnswer) -> RubricAnswer:
            return check_rubric_answer(answer, ctx.deps)

        self._identity_doc = self.identity().model_dump(mode="json")

    def identity(self, *, vision: bool = False) -> JudgeIdentity:
        """Who this judge is, as recorded on each grade."""
        return JudgeIdentity(
            kind=JudgeKind.VLM if vision else self.kind,
            model=self.spec.model_string,
            family=self.spec.family,
            prompt_version=RUBRIC_PROMPT_VERSION,
            settings={
                "temperature": self.spec.temperature,
                "seed": self.spec.seed,
                "retries": self.retries,
            },
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
                    f"## Final answer\n{fence('agent_output', _final_output(evidence.trajectory))}"
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

    def cache_key(
        self,
        evidence: Evidence,
        rubric: Rubric,
        tier: Tier,
        repeat: int = 0,
        *,
        prepared: PreparedPrompt | None = None,
    ) -> str:
        """The key the grade will carry (computed without calling the model)."""
        prepared = prepared or self.prepare(evidence, rubric, tier)
        return grade_cache_key(self._identity_doc, rubric, tier, prepared.inputs_hash, repeat)

    async def grade(
        self,
        evidence: Evidence,
        rubric: Rubric,
        tier: Tier,
        *,
        repeat: int = 0,
        prepared: PreparedPrompt | None = None,
    ) -> Grade:
        """Ask the model once (plus bounded re-asks); always returns a Grade."""
        prepared = prepared or self.prepare(evidence, rubric, tier)
        parts = prepared.parts
        vision = any(isinstance(p, BinaryContent) for p in parts)
        identity = self.identity(vision=vision)
        key = grade_cache_key(self._identity_doc, rubric, tier, prepared.inputs_hash, repeat)
        agent = self._agent
        started = time.monotonic()
        status, answer, raw, error = GradeStatus.OK, None, None, None
        salt = f"repeat={repeat}" if repeat else ""
        with current_ledger() as ledger, cache_salt(salt), capture_run_messages() as messages:
            try:
                result = await agent.run(parts, deps=tier)
                answer = result.output
                raw = raw_output(result.all_messages())
            except UnexpectedModelBehavior as exc:
                status, raw, error = GradeStatus.PARSE_ERROR, raw_output(messages), str(exc)
            except ModelAPIError as exc:
                status, raw, error = (
                    GradeStatus.ERROR,
                    raw_output(messages) or None,
                    f"{type(exc).__name__}: {exc}",
                )
            except TimeoutError:
                status, error = GradeStatus.ERROR, f"timed out after {self.spec.timeout_s}s"
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
            id=f"grade-{uuid.uuid4().hex}",
            run_id=evidence.run.id,
            rubric_id=rubric.id,
            rubric_version=rubric.version,
            tier=tier.kind,
            judge=identity,
            status=status,
            scores=scores,
            tier_score=tier_score,
            repeat=repeat,
            raw_output=raw if status != GradeStatus.OK else None,
            error=error,
            usage=ledger.usage(),
            cost_usd=ledger.cost_usd,
            latency_s=time.monotonic() - started,
            cache_key=key,
        )
