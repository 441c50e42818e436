"""Judges: rubric judges, the multi-family panel, pairwise comparison, grading jobs."""

from lhbench.judges.failure_extract import ExtractedError, FailureExtractor
from lhbench.judges.job import JudgeJobSummary, load_evidence, noise_floor, run_judge_job
from lhbench.judges.output import DimensionAnswer, PairwiseAnswer, RubricAnswer, check_rubric_answer
from lhbench.judges.pairwise import PairwiseJudge, PairwiseOutcome, candidate_pairs
from lhbench.judges.panel import JudgePanel, PanelResult
from lhbench.judges.prompts import PAIRWISE_PROMPT_VERSION, RUBRIC_PROMPT_VERSION
from lhbench.judges.render import RenderedTrajectory, estimate_tokens, fence, render_trajectory
from lhbench.judges.rubric import (
    Evidence,
    PreparedPrompt,
    RubricJudge,
    grade_cache_key,
    raw_output,
)
from lhbench.judges.verdict import (
    AGENT_PROMPT_VERSION,
    VerdictAnswer,
    VerdictJudge,
    judge_tool_servers,
)

__all__ = [
    "AGENT_PROMPT_VERSION",
    "PAIRWISE_PROMPT_VERSION",
    "RUBRIC_PROMPT_VERSION",
    "DimensionAnswer",
    "Evidence",
    "ExtractedError",
    "FailureExtractor",
    "JudgeJobSummary",
    "JudgePanel",
    "PairwiseAnswer",
    "PairwiseJudge",
    "PairwiseOutcome",
    "PanelResult",
    "PreparedPrompt",
    "RenderedTrajectory",
    "RubricAnswer",
    "RubricJudge",
    "VerdictAnswer",
    "VerdictJudge",
    "candidate_pairs",
    "check_rubric_answer",
    "estimate_tokens",
    "fence",
    "grade_cache_key",
    "judge_tool_servers",
    "load_evidence",
    "noise_floor",
    "raw_output",
    "render_trajectory",
    "run_judge_job",
]
