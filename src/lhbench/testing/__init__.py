"""The local model stub: a real OpenAI-compatible HTTP server on 127.0.0.1, run from a script.

Used by tests, ``bench/`` scripts and users dry-running a judge configuration offline.
"""

from lhbench.testing.scripts import (
    auto_script,
    dimension_ids,
    hashed_scale_scores,
    hashed_scores,
    manifest_planner_script,
    pairwise_judge_script,
    rubric_judge_script,
    run_mark,
    stub_agent_script,
    verdict_judge_script,
)
from lhbench.testing.server import ThreadedServer
from lhbench.testing.stub import (
    FAULTS,
    Fault,
    ModelStub,
    StubReply,
    StubRequest,
    StubScript,
    load_script,
)

__all__ = [
    "FAULTS",
    "Fault",
    "ModelStub",
    "StubReply",
    "StubRequest",
    "StubScript",
    "ThreadedServer",
    "auto_script",
    "dimension_ids",
    "hashed_scale_scores",
    "hashed_scores",
    "load_script",
    "manifest_planner_script",
    "pairwise_judge_script",
    "rubric_judge_script",
    "run_mark",
    "stub_agent_script",
    "verdict_judge_script",
]
