"""The application layer: one resumable job runner, and the jobs the CLI and the API run.

Running agents, grading (rubric and pairwise), verification, importing, and
Agent-as-a-Judge are all jobs: plan units with an identity, skip those stored with a final
result, run the rest bounded, write in batches, sum up honestly.
"""

from lhbench.jobs.agents import RunAgentsJob, store_outcome
from lhbench.jobs.api import (
    GradeOutcome,
    ImportOutcome,
    JudgeStatesOutcome,
    RunOutcomeSummary,
    grade_runs,
    import_transcripts,
    judge_states,
    panel_specs,
    run_agents,
    sandbox_for,
    verify_runs,
)
from lhbench.jobs.fixtures import FixtureJob, fixture_files
from lhbench.jobs.grading import GradeJob, PairwiseJob
from lhbench.jobs.imports import ImportJob, ImportResult, collect_files, file_digest
from lhbench.jobs.packs import (
    LoadedPack,
    all_pack_dirs,
    check_versions,
    find_rubric,
    pack_for_id,
    resolve_pack,
)
from lhbench.jobs.progress import RichProgress
from lhbench.jobs.runner import (
    Assessment,
    Job,
    JobSummary,
    ProgressSink,
    Unit,
    run_job,
    short_reason,
)
from lhbench.jobs.states import RunState, StateProvider, state_id, task_kind
from lhbench.jobs.verdicts import VerdictJob
from lhbench.jobs.verification import Check, VerifyJob, task_checks

__all__ = [
    "Assessment",
    "Check",
    "FixtureJob",
    "GradeJob",
    "GradeOutcome",
    "ImportJob",
    "ImportOutcome",
    "ImportResult",
    "Job",
    "JobSummary",
    "JudgeStatesOutcome",
    "LoadedPack",
    "PairwiseJob",
    "ProgressSink",
    "RichProgress",
    "RunAgentsJob",
    "RunOutcomeSummary",
    "RunState",
    "StateProvider",
    "Unit",
    "VerdictJob",
    "VerifyJob",
    "all_pack_dirs",
    "check_versions",
    "collect_files",
    "file_digest",
    "find_rubric",
    "fixture_files",
    "grade_runs",
    "import_transcripts",
    "judge_states",
    "pack_for_id",
    "panel_specs",
    "resolve_pack",
    "run_agents",
    "run_job",
    "sandbox_for",
    "short_reason",
    "state_id",
    "store_outcome",
    "task_checks",
    "task_kind",
    "verify_runs",
]
