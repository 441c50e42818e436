"""Judges: one protocol for rubric, pairwise, verdict and check judges; the panel's figures."""

from lhbench.judges.base import (
    Evidence,
    GradeItem,
    Judge,
    PairItem,
    StateRef,
    VerdictItem,
    final_output,
    raw_output,
)
from lhbench.judges.failure_extract import ExtractedError, FailureExtractor
from lhbench.judges.output import DimensionAnswer, PairwiseAnswer, RubricAnswer, check_rubric_answer
from lhbench.judges.pairwise import (
    PAIRWISE_OUTPUT,
    PairwiseJudge,
    PairwiseOutcome,
    candidate_pairs,
)
from lhbench.judges.panel import (
    JudgePanel,
    PanelResult,
    RunTierScore,
    TierKey,
    judge_labels,
    noise_floor,
    panel_scores,
    tier_keys,
)
from lhbench.judges.prompts import PAIRWISE_PROMPT_VERSION, RUBRIC_PROMPT_VERSION
from lhbench.judges.render import RenderedTrajectory, estimate_tokens, fence, render_trajectory
from lhbench.judges.rubric import (
    RUBRIC_OUTPUT,
    PreparedPrompt,
    RubricJudge,
    repeat_salt,
    rubric_judge_identity,
)
from lhbench.judges.structured import StructuredOutcome, ask_structured
from lhbench.judges.verdict import (
    AGENT_PROMPT_VERSION,
    VERDICT_OUTPUT,
    VerdictAnswer,
    VerdictJudge,
    judge_tool_servers,
)

__all__ = [
    "AGENT_PROMPT_VERSION",
    "PAIRWISE_OUTPUT",
    "PAIRWISE_PROMPT_VERSION",
    "RUBRIC_OUTPUT",
    "RUBRIC_PROMPT_VERSION",
    "VERDICT_OUTPUT",
    "DimensionAnswer",
    "Evidence",
    "ExtractedError",
    "FailureExtractor",
    "GradeItem",
    "Judge",
    "JudgePanel",
    "PairItem",
    "PairwiseAnswer",
    "PairwiseJudge",
    "PairwiseOutcome",
    "PanelResult",
    "PreparedPrompt",
    "RenderedTrajectory",
    "RubricAnswer",
    "RubricJudge",
    "RunTierScore",
    "StateRef",
    "StructuredOutcome",
    "TierKey",
    "VerdictAnswer",
    "VerdictItem",
    "VerdictJudge",
    "ask_structured",
    "candidate_pairs",
    "check_rubric_answer",
    "estimate_tokens",
    "fence",
    "final_output",
    "judge_labels",
    "judge_tool_servers",
    "noise_floor",
    "panel_scores",
    "raw_output",
    "render_trajectory",
    "repeat_salt",
    "rubric_judge_identity",
    "tier_keys",
]
