"""Reports: data, sections, tables, plots, and Markdown/CSV/HTML rendering.

Report data keeps the current judgements and counts what it excluded. Every figure comes
from ``lhbench.stats`` or ``lhbench.judges.panel``; this package lays them out with their
definitions and n.
"""

import sys
import types
from typing import Any

from lhbench.report.ablation import ablation_section
from lhbench.report.agreement import agreement_section
from lhbench.report.aj import aj_section
from lhbench.report.arena import arena_section
from lhbench.report.data import Exclusions, ReportData, current_grades, group_label
from lhbench.report.failures import failures_section
from lhbench.report.health import grading_health_section
from lhbench.report.leaderboard import (
    LeaderboardRow,
    PassRateRow,
    leaderboard_rows,
    leaderboard_section,
    pass_rate_rows,
)
from lhbench.report.render import ReportFiles, build_sections, write_report
from lhbench.report.tables import Cell, Section, Table, fmt

__all__ = [
    "Cell",
    "Exclusions",
    "LeaderboardRow",
    "PassRateRow",
    "ReportData",
    "ReportFiles",
    "Section",
    "Table",
    "ablation_section",
    "agreement_section",
    "aj_section",
    "arena_section",
    "build_sections",
    "current_grades",
    "failures_section",
    "fmt",
    "grading_health_section",
    "group_label",
    "leaderboard_rows",
    "leaderboard_section",
    "pass_rate_rows",
    "write_report",
]


class _ReportModule(types.ModuleType):
    """``lhbench.report`` is this package and, called, the API's report function.

    Importing the package sets ``lhbench.report`` to it, which would hide the API function
    of the same name; calling the package runs that function instead.
    """

    def __call__(self, **kwargs: Any) -> Any:
        from lhbench.api import report

        return report(**kwargs)


sys.modules[__name__].__class__ = _ReportModule
