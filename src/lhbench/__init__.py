"""lhbench: evaluate long-horizon agents on subjective work.

Runs harnesses on task packs, grades runs with rubric judge panels, programmatic
checks and pairwise human preference, and turns the grades into numbers users can act on.
The jobs are functions here (``lhbench.run_agents``, ``lhbench.grade``, …, each with an
``_async`` twin): see :mod:`lhbench.api`.
"""

from typing import TYPE_CHECKING, Any

from lhbench._version import __version__

__all__ = [
    "ExportOptions",
    "ExportOutcome",
    "GradeOptions",
    "GradeOutcome",
    "ImportOptions",
    "ImportOutcome",
    "JudgeOptions",
    "JudgeOutcome",
    "Report",
    "ReportOptions",
    "RunOptions",
    "RunOutcome",
    "VerifyOptions",
    "VerifyOutcome",
    "__version__",
    "export_inspect",
    "export_inspect_async",
    "grade",
    "grade_async",
    "import_transcripts",
    "import_transcripts_async",
    "judge_states",
    "judge_states_async",
    "open_store",
    "report",
    "report_async",
    "run_agents",
    "run_agents_async",
    "verify",
    "verify_async",
]

if TYPE_CHECKING:
    from lhbench.api import (
        ExportOptions,
        ExportOutcome,
        GradeOptions,
        GradeOutcome,
        ImportOptions,
        ImportOutcome,
        JudgeOptions,
        JudgeOutcome,
        Report,
        ReportOptions,
        RunOptions,
        RunOutcome,
        VerifyOptions,
        VerifyOutcome,
        export_inspect,
        export_inspect_async,
        grade,
        grade_async,
        import_transcripts,
        import_transcripts_async,
        judge_states,
        judge_states_async,
        open_store,
        report,
        report_async,
        run_agents,
        run_agents_async,
        verify,
        verify_async,
    )


def __getattr__(name: str) -> Any:
    # the API loads on first use: `import lhbench` stays cheap for the hook program
    if name in __all__ and name != "__version__":
        from lhbench import api

        return getattr(api, name)
    raise AttributeError(f"module 'lhbench' has no attribute {name!r}")
