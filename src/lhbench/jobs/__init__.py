"""The application layer: one resumable job runner, and the jobs the public API runs.

Running agents, grading (rubric and pairwise), verification, importing, and
Agent-as-a-Judge are all jobs: plan units with an identity, skip those stored with a final
result, run the rest bounded, write in batches, sum up honestly.
"""

from typing import TYPE_CHECKING

from lhbench._lazy import lazy_names

if TYPE_CHECKING:
    from lhbench.jobs.agents import RunAgentsJob, store_outcome
    from lhbench.jobs.common import aj_judge_spec, panel_specs, sandbox_for
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
    "ImportJob",
    "ImportResult",
    "Job",
    "JobSummary",
    "LoadedPack",
    "PairwiseJob",
    "ProgressSink",
    "RichProgress",
    "RunAgentsJob",
    "RunState",
    "StateProvider",
    "Unit",
    "VerdictJob",
    "VerifyJob",
    "aj_judge_spec",
    "all_pack_dirs",
    "check_versions",
    "collect_files",
    "file_digest",
    "find_rubric",
    "fixture_files",
    "pack_for_id",
    "panel_specs",
    "resolve_pack",
    "run_job",
    "sandbox_for",
    "short_reason",
    "state_id",
    "store_outcome",
    "task_checks",
    "task_kind",
]

# Each name loads its module on first use: `lhbench import` needs the import job, not the
# agent harness (pydantic-ai) that running agents needs.
_MODULES = {
    "Assessment": "lhbench.jobs.runner",
    "Check": "lhbench.jobs.verification",
    "FixtureJob": "lhbench.jobs.fixtures",
    "GradeJob": "lhbench.jobs.grading",
    "ImportJob": "lhbench.jobs.imports",
    "ImportResult": "lhbench.jobs.imports",
    "Job": "lhbench.jobs.runner",
    "JobSummary": "lhbench.jobs.runner",
    "LoadedPack": "lhbench.jobs.packs",
    "PairwiseJob": "lhbench.jobs.grading",
    "ProgressSink": "lhbench.jobs.runner",
    "RichProgress": "lhbench.jobs.progress",
    "RunAgentsJob": "lhbench.jobs.agents",
    "RunState": "lhbench.jobs.states",
    "StateProvider": "lhbench.jobs.states",
    "Unit": "lhbench.jobs.runner",
    "VerdictJob": "lhbench.jobs.verdicts",
    "VerifyJob": "lhbench.jobs.verification",
    "aj_judge_spec": "lhbench.jobs.common",
    "all_pack_dirs": "lhbench.jobs.packs",
    "check_versions": "lhbench.jobs.packs",
    "collect_files": "lhbench.jobs.imports",
    "file_digest": "lhbench.jobs.imports",
    "find_rubric": "lhbench.jobs.packs",
    "fixture_files": "lhbench.jobs.fixtures",
    "pack_for_id": "lhbench.jobs.packs",
    "panel_specs": "lhbench.jobs.common",
    "resolve_pack": "lhbench.jobs.packs",
    "run_job": "lhbench.jobs.runner",
    "sandbox_for": "lhbench.jobs.common",
    "short_reason": "lhbench.jobs.runner",
    "state_id": "lhbench.jobs.states",
    "store_outcome": "lhbench.jobs.agents",
    "task_checks": "lhbench.jobs.verification",
    "task_kind": "lhbench.jobs.states",
}


__getattr__ = lazy_names(__name__, _MODULES, globals())
