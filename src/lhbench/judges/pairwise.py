"""Pairwise judging: which of two runs of one task is better, asked in both orders.

If the answers from the two orders disagree, the outcome is a tie: a judge whose
preference follows the position, not the work, contributes no preference (position-bias
control). Outcomes are stored as PreferenceVotes with ``rater_kind`` = llm, apart from
human votes, so the two can be compared; a comparison that failed is stored too, as a
vote with no winner and the reason (``retryable`` when the model never answered).
Each order is one request answered through one output tool, on the model's direct path.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Literal

from pydantic_ai.models import Model

from lhbench.judges.base import Evidence, PairItem, final_output
from lhbench.judges.output import PairwiseAnswer
from lhbench.judges.prompts import (
    PAIRWISE_PROMPT_VERSION,
    pairwise_instructions,
    rubric_text,
    task_text,
)
from lhbench.judges.render import fence, render_trajectory
from lhbench.judges.structured import ask_structured
from lhbench.models import (
    Ask,
    ModelSpec,
    OutputSchema,
    PreparedRequest,
    direct_client,
    is_transport_error,
)
from lhbench.schema import JudgeIdentity, JudgeKind, PreferenceVote, Rubric, Run, Tier, vote_key

__all__ = ["PAIRWISE_OUTPUT", "PairwiseJudge", "PairwiseOutcome", "candidate_pairs"]

Winner = Literal["a", "b", "tie"]
PAIRWISE_OUTPUT = OutputSchema.of(PairwiseAnswer)


def candidate_pairs(runs: list[Run]) -> list[tuple[str, str, str, str]]:
    """(pack, task, run a, run b) for every two runs of one task from different groups."""
    by_task: dict[tuple[str, str], list[Run]] = {}
    for r in runs:
        by_task.setdefault((r.pack_id, r.task_id), []).append(r)
    pairs = []
    for (pack, task), rs in sorted(by_task.items()):
        for a, b in itertools.combinations(sorted(rs, key=lambda r: r.id), 2):
            if (a.harness, a.model) != (b.harness, b.model):
                pairs.append((pack, task, a.id, b.id))
    return pairs


@dataclass(frozen=True)
class PairwiseOutcome:
    """Both orders' answers and the resulting vote (failed when a call failed)."""

    a_first: Winner | None
    b_first: Winner | None
    vote: PreferenceVote

    @property
    def consistent(self) -> bool:
        """Whether both orders named the same winner."""
        return self.a_first is not None and self.a_first == self.b_first


class PairwiseJudge:
    """Compares two runs of the same task on a rubric tier (the Judge protocol on PairItem)."""

    def __init__(
        self, model: Model, spec: ModelSpec, *, retries: int = 2, budget_tokens: int = 12_000
    ) -> None:
        self.model = model
        self.spec = spec
        self.retries = retries
        self.budget_tokens = budget_tokens
        self.identity = JudgeIdentity(
            kind=JudgeKind.LLM,
            model=spec.model_string,
            family=spec.family,
            endpoint=spec.endpoint,
            prompt_version=PAIRWISE_PROMPT_VERSION,
            settings={
                "temperature": spec.temperature,
                "seed": spec.seed,
                "retries": retries,
                "budget_tokens": budget_tokens,
            },
        )
        self.client = direct_client(model, spec)

    def key(self, item: PairItem) -> str:
        """The vote's identity: judge config, rubric content, tier, ordered pair."""
        return vote_key(
            self.identity.key,
            item.rubric.content_hash,
            item.tier.kind.value,
            item.run_a.id,
            item.run_b.id,
        )

    def _attempt(self, evidence: Evidence, tier: Tier) -> str:
        if tier.evidence_source == "trajectory" and evidence.trajectory is not None:
            return render_trajectory(evidence.trajectory, budget_tokens=self.budget_tokens).text
        texts = [
            f"{a.name}:\n{a.content.decode('utf-8', errors='replace')[:10_000]}"
            for a in evidence.artifacts
            if a.content is not None and not a.media_type.startswith("image/")
        ]
        return "\n\n".join(texts) or final_output(evidence.trajectory)

    def _ask(self, first: Evidence, second: Evidence, tier: Tier) -> Ask:
        prompt = (
            f"# Task\n{fence('task', task_text(first.task))}\n\n"
            f"# Rubric ({tier.kind.value} tier)\n{rubric_text(tier)}\n\n"
            f"# First attempt\n{fence('attempt', self._attempt(first, tier))}\n\n"
            f"# Second attempt\n{fence('attempt', self._attempt(second, tier))}"
        )
        return Ask(pairwise_instructions(), (prompt,), PAIRWISE_OUTPUT)

    def requests(self, item: PairItem) -> tuple[PreparedRequest, PreparedRequest]:
        """Both orders' requests (A first, B first), encoded once (a job looks them up in bulk)."""
        a, b = item.evidence_a, item.evidence_b
        if a is None or b is None:
            raise ValueError(f"pair {item.run_a.id} / {item.run_b.id} has no evidence loaded")
        return (
            self.client.prepare(self._ask(a, b, item.tier)),
            self.client.prepare(self._ask(b, a, item.tier)),
        )

    def _vote(self, item: PairItem, winner: Winner | None, **failure: object) -> PreferenceVote:
        return PreferenceVote.model_validate(
            {
                "id": self.key(item),
                "pack_id": item.run_a.pack_id,
                "task_id": item.run_a.task_id,
                "run_a": item.run_a.id,
                "run_b": item.run_b.id,
                "left": "a",
                "winner": winner,
                "annotator": self.identity.label,
                "rater_kind": JudgeKind.LLM,
                "rubric_id": item.rubric.id,
                "rubric_hash": item.rubric.content_hash,
                "tier": item.tier.kind,
                "judge_key": self.identity.key,
                **failure,
            }
        )

    async def judge(self, item: PairItem) -> PreferenceVote:
        """The vote on ``item`` (evidence loaded); a failed comparison is a failed vote."""
        return (await self.compare_item(item)).vote

    async def compare_item(
        self,
        item: PairItem,
        requests: tuple[PreparedRequest, PreparedRequest] | None = None,
    ) -> PairwiseOutcome:
        """Ask with A first, then with B first; disagreement is a tie."""
        if item.run_a.task_id != item.run_b.task_id:
            raise ValueError(f"runs {item.run_a.id} and {item.run_b.id} are of different tasks")
        first_req, second_req = requests or self.requests(item)
        preferred: list[str] = []
        for req in (first_req, second_req):
            outcome = await ask_structured(
                self.client, req.ask, PairwiseAnswer, retries=self.retries, first=req
            )
            exc = outcome.failure
            if exc is not None:
                failed = self._vote(
                    item,
                    None,
                    status="error",
                    error=f"{type(exc).__name__}: {exc}",
                    retryable=is_transport_error(exc),
                )
                return PairwiseOutcome(None, None, failed)
            if outcome.answer is None:
                raw = outcome.raw(PAIRWISE_OUTPUT.name)
                failed = self._vote(
                    item, None, status="parse_error", error=f"{outcome.problem}: {raw[:500]}"
                )
                return PairwiseOutcome(None, None, failed)
            preferred.append(outcome.answer.preferred)
        p1, p2 = preferred
        first: Winner = {"first": "a", "second": "b", "tie": "tie"}[p1]  # type: ignore[assignment]
        second: Winner = {"first": "b", "second": "a", "tie": "tie"}[p2]  # type: ignore[assignment]
        winner: Winner = first if first == second else "tie"
        return PairwiseOutcome(first, second, self._vote(item, winner))

    async def compare(
        self, a: Evidence, b: Evidence, rubric: Rubric, tier: Tier
    ) -> PairwiseOutcome:
        """Compare two runs' evidence (both orders)."""
        return await self.compare_item(PairItem(a.run, b.run, rubric, tier, a, b))
