"""Judges: one protocol for rubric, pairwise, verdict and check judges; the panel's figures."""

from typing import TYPE_CHECKING

from lhbench._lazy import lazy_names

if TYPE_CHECKING:
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
    from lhbench.judges.output import (
        DimensionAnswer,
        PairwiseAnswer,
        RubricAnswer,
        check_rubric_answer,
    )
    from lhbench.judges.pairwise import (
        PAIRWISE_OUTPUT,
        PairwiseJudge,
        PairwiseOutcome,
        candidate_pairs,
    )
    from lhbench.judges.panel import (
        JudgePanel,
        PanelResult,
        PanelScoreTable,
        RunTierScore,
        TierKey,
        judge_labels,
        noise_floor,
        panel_score,
        panel_score_table,
        panel_scores,
        repeat_sd,
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
    "PanelScoreTable",
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
    "panel_score",
    "panel_score_table",
    "panel_scores",
    "raw_output",
    "render_trajectory",
    "repeat_salt",
    "repeat_sd",
    "rubric_judge_identity",
    "tier_keys",
]

# Each name loads its module on first use: a report needs the panel's figures, not the
# judges' model stack (pydantic-ai).
_MODULES = {
    "AGENT_PROMPT_VERSION": "lhbench.judges.verdict",
    "DimensionAnswer": "lhbench.judges.output",
    "Evidence": "lhbench.judges.base",
    "ExtractedError": "lhbench.judges.failure_extract",
    "FailureExtractor": "lhbench.judges.failure_extract",
    "GradeItem": "lhbench.judges.base",
    "Judge": "lhbench.judges.base",
    "JudgePanel": "lhbench.judges.panel",
    "PAIRWISE_OUTPUT": "lhbench.judges.pairwise",
    "PAIRWISE_PROMPT_VERSION": "lhbench.judges.prompts",
    "PairItem": "lhbench.judges.base",
    "PairwiseAnswer": "lhbench.judges.output",
    "PairwiseJudge": "lhbench.judges.pairwise",
    "PairwiseOutcome": "lhbench.judges.pairwise",
    "PanelResult": "lhbench.judges.panel",
    "PanelScoreTable": "lhbench.judges.panel",
    "PreparedPrompt": "lhbench.judges.rubric",
    "RUBRIC_OUTPUT": "lhbench.judges.rubric",
    "RUBRIC_PROMPT_VERSION": "lhbench.judges.prompts",
    "RenderedTrajectory": "lhbench.judges.render",
    "RubricAnswer": "lhbench.judges.output",
    "RubricJudge": "lhbench.judges.rubric",
    "RunTierScore": "lhbench.judges.panel",
    "StateRef": "lhbench.judges.base",
    "StructuredOutcome": "lhbench.judges.structured",
    "TierKey": "lhbench.judges.panel",
    "VERDICT_OUTPUT": "lhbench.judges.verdict",
    "VerdictAnswer": "lhbench.judges.verdict",
    "VerdictItem": "lhbench.judges.base",
    "VerdictJudge": "lhbench.judges.verdict",
    "ask_structured": "lhbench.judges.structured",
    "candidate_pairs": "lhbench.judges.pairwise",
    "check_rubric_answer": "lhbench.judges.output",
    "estimate_tokens": "lhbench.judges.render",
    "fence": "lhbench.judges.render",
    "final_output": "lhbench.judges.base",
    "judge_labels": "lhbench.judges.panel",
    "judge_tool_servers": "lhbench.judges.verdict",
    "noise_floor": "lhbench.judges.panel",
    "panel_score": "lhbench.judges.panel",
    "panel_score_table": "lhbench.judges.panel",
    "panel_scores": "lhbench.judges.panel",
    "repeat_sd": "lhbench.judges.panel",
    "raw_output": "lhbench.judges.base",
    "render_trajectory": "lhbench.judges.render",
    "repeat_salt": "lhbench.judges.rubric",
    "rubric_judge_identity": "lhbench.judges.rubric",
    "tier_keys": "lhbench.judges.panel",
}


__getattr__ = lazy_names(__name__, _MODULES, globals())
