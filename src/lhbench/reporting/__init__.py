"""Reports: data, sections, tables, charts, and Markdown/CSV/HTML rendering.

Report data keeps the current judgements and counts what it excluded. Every figure comes
from ``lhbench.stats`` or ``lhbench.judges.panel``; this package lays them out with their
definitions and n.
"""

from lhbench.reporting.ablation import ablation_section
from lhbench.reporting.agreement import agreement_section
from lhbench.reporting.aj import aj_section
from lhbench.reporting.arena import arena_section
from lhbench.reporting.charts import (
    ci_bar,
    elo_forest,
    forest,
    grouped_bars,
    heatmap,
    kappa_heatmap,
    nice_ticks,
)
from lhbench.reporting.data import (
    Exclusions,
    ReportData,
    current_grades,
    group_label,
    label_is_stale,
    label_outcomes,
)
from lhbench.reporting.failures import failures_section
from lhbench.reporting.health import grading_health_section
from lhbench.reporting.leaderboard import (
    LeaderboardRow,
    PassRateRow,
    leaderboard_notes,
    leaderboard_row,
    leaderboard_rows,
    leaderboard_section,
    pass_rate_row,
    pass_rate_rows,
)
from lhbench.reporting.render import ReportFiles, build_sections, write_report
from lhbench.reporting.tables import Cell, Section, Table, fmt

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
    "ci_bar",
    "current_grades",
    "elo_forest",
    "failures_section",
    "fmt",
    "forest",
    "grading_health_section",
    "group_label",
    "grouped_bars",
    "heatmap",
    "kappa_heatmap",
    "label_is_stale",
    "label_outcomes",
    "leaderboard_notes",
    "leaderboard_row",
    "leaderboard_rows",
    "leaderboard_section",
    "nice_ticks",
    "pass_rate_row",
    "pass_rate_rows",
    "write_report",
]
