"""Pairwise judging: which of two runs of one task is better, asked in both orders.

If the answers from the two orders disagree, the outcome is a tie: a judge whose
preference follows the position, not the work, contributes no preference (position-bias
control). Outcomes are stored as PreferenceVotes with ``rater_kind`` = llm, apart from
human votes, so the two can be compared.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass
from typing import Literal

from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelAPIError, UnexpectedModelBehavior
from pydantic_ai.models import Model

from lhbench.judges.output import PairwiseAnswer
from lhbench.judges.prompts import (
    PAIRWISE_PROMPT_VERSION,
    pairwise_instructions,
    rubric_text,
    task_text,
)
from lhbench.judges.render import fence, render_trajectory
from lhbench.judges.rubric import Evidence, _final_output
from lhbench.models import ModelSpec
from lhbench.schema import JudgeKind, PreferenceVote, Rubric, Run, Tier

__all__ = ["PairwiseJudge", "PairwiseOutcome", "candidate_pairs"]

Winner = Literal["a", "b", "tie"]


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
    """Both orders' answers and the resulting vote (None when a call failed)."""

    a_first: Winner | None
    b_first: Winner | None
    vote: PreferenceVote | None
    error: str | None = None

    @property
    def consistent(self) -> bool:
        """Whether both orders named the same winner."""
        return self.a_first is not None and self.a_first == self.b_first


class PairwiseJudge:
    """Compares two runs of the same task on a rubric tier."""

    def __init__(
        self, model: Model, spec: ModelSpec, *, retries: int = 2, budget_tokens: int = 12_000
    ) -> None:
        self.model = model
        self.spec = spec
        self.retries = retries
        self.budget_tokens = budget_tokens

    def _attempt(self, evidence: Evidence, tier: Tier) -> str:
        if tier.evidence_source == "trajectory" and evidence.trajectory is not None:
            return render_trajectory(evidence.trajectory, budget_tokens=self.budget_tokens).text
        texts = [
            f"{a.name}:\n{a.content.decode('utf-8', errors='replace')[:10_000]}"
            for a in evidence.artifacts
            if a.content is not None and not a.media_type.startswith("image/")
        ]
        return "\n\n".join(texts) or _final_output(evidence.trajectory)

    async def _ask(self, first: Evidence, second: Evidence, rubric: Rubric, tier: Tier) -> str:
        prompt = (
            f"# Task\n{fence('task', task_text(first.task))}\n\n"
            f"# Rubric ({tier.kind.value} tier)\n{rubric_text(tier)}\n\n"
            f"# First attempt\n{fence('attempt', self._attempt(first, tier))}\n\n"
            f"# Second attempt\n{fence('attempt', self._attempt(second, tier))}"
        )
        agent: Agent[None, PairwiseAnswer] = Agent(
            self.model,
            output_type=PairwiseAnswer,
            instructions=pairwise_instructions(),
            retries={"output": self.retries},
        )
        return (await agent.run(prompt)).output.preferred

    def vote_id(self, rubric: Rubric, tier: Tier, run_a: str, run_b: str) -> str:
        """The stored vote's id: one per judge, rubric tier and ordered pair."""
        doc = [
            self.spec.model_string,
            PAIRWISE_PROMPT_VERSION,
            rubric.id,
            rubric.version,
            tier.kind.value,
            run_a,
            run_b,
        ]
        return "pairwise-" + hashlib.sha256(json.dumps(doc).encode()).hexdigest()[:24]

    async def compare(
        self, a: Evidence, b: Evidence, rubric: Rubric, tier: Tier
    ) -> PairwiseOutcome:
        """Ask with A first, then with B first; disagreement is a tie."""
        if a.run.task_id != b.run.task_id:
            raise ValueError(f"runs {a.run.id} and {b.run.id} are of different tasks")
        try:
            p1 = await self._ask(a, b, rubric, tier)
            p2 = await self._ask(b, a, rubric, tier)
        except (UnexpectedModelBehavior, ModelAPIError) as exc:
            return PairwiseOutcome(None, None, None, error=f"{type(exc).__name__}: {exc}")
        first: Winner = {"first": "a", "second": "b", "tie": "tie"}[p1]  # type: ignore[assignment]
        second: Winner = {"first": "b", "second": "a", "tie": "tie"}[p2]  # type: ignore[assignment]
        winner: Winner = first if first == second else "tie"
        ident = self.vote_id(rubric, tier, a.run.id, b.run.id)
        vote = PreferenceVote(
            id=ident,
            pack_id=a.run.pack_id,
            task_id=a.run.task_id,
            run_a=a.run.id,
            run_b=b.run.id,
            left="a",
            winner=winner,
            annotator=self.spec.model_string,
            rater_kind=JudgeKind.LLM,
        )
        return PairwiseOutcome(first, second, vote)
