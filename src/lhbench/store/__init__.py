"""Persistence on SQLAlchemy 2 + Alembic: SQLite by default, PostgreSQL by URL."""

from typing import TYPE_CHECKING

from lhbench._lazy import lazy_names
from lhbench.store.accounts import SessionRecord, UserRecord
from lhbench.store.aggregates import (
    CellKey,
    GradeCombo,
    GradeSummary,
    JudgeFact,
    JudgeName,
    LabelFact,
    ReportRun,
    RunFact,
    ScoreFact,
    StepCounts,
    StepTally,
    StoreChanges,
    VerdictDetail,
    VerdictFact,
)
from lhbench.store.annotations import AnnotationVersion, StaleVersionError
from lhbench.store.arena import OUTCOMES, ComparisonRecord
from lhbench.store.base import ResultState
from lhbench.store.db import current_revision, head_revision, make_engine, upgrade
from lhbench.store.grade_parts import GradeScoresError
from lhbench.store.judgements import PanelGradeRow, VoteColumns, VoteFact, complete_runs
from lhbench.store.runs import GradeRunRow, RunSummary, group_key, group_runs
from lhbench.store.store import Store

__all__ = [
    "OUTCOMES",
    "AnnotationVersion",
    "CellKey",
    "ComparisonRecord",
    "GradeColumns",
    "GradeCombo",
    "GradeRunRow",
    "GradeScoresError",
    "GradeSummary",
    "JudgeFact",
    "JudgeName",
    "LabelFact",
    "PanelGradeRow",
    "ReportRun",
    "ResultState",
    "RunFact",
    "RunSummary",
    "ScoreFact",
    "SessionRecord",
    "StaleVersionError",
    "StepCounts",
    "StepTally",
    "Store",
    "StoreChanges",
    "UserRecord",
    "VerdictDetail",
    "VerdictFact",
    "VoteColumns",
    "VoteFact",
    "complete_runs",
    "current_revision",
    "group_key",
    "group_runs",
    "head_revision",
    "make_engine",
    "upgrade",
]

# numpy only where grade columns are used (importing runs reads none)
__getattr__ = lazy_names(__name__, {"GradeColumns": "lhbench.store.grade_columns"}, globals())

if TYPE_CHECKING:
    from lhbench.store.grade_columns import GradeColumns
