"""lhbench: evaluate long-horizon agents on subjective work.

Runs harnesses on task packs, grades runs with rubric judge panels, programmatic
checks and pairwise human preference, and turns the grades into numbers users can act on.
"""

from typing import TYPE_CHECKING, Any

from lhbench._version import __version__

__all__ = [
    "Report",
    "__version__",
    "export_inspect",
    "grade",
    "import_transcripts",
    "judge_states",
    "open_store",
    "report",
    "run_agents",
    "verify",
]

if TYPE_CHECKING:
    from lhbench.api import (
        Report,
        export_inspect,
        grade,
        import_transcripts,
        judge_states,
        open_store,
        report,
        run_agents,
        verify,
    )


def __getattr__(name: str) -> Any:
    # the API loads on first use: `import lhbench` stays cheap for the hook program
    if name in __all__ and name != "__version__":
        from lhbench import api

        return getattr(api, name)
    raise AttributeError(f"module 'lhbench' has no attribute {name!r}")
