"""The data model every other package speaks: packs, rubrics, runs, grades, votes, labels."""

from lhbench.schema.base import Schema, Usage, VersionLabel, utcnow
from lhbench.schema.export import EXPORTED_MODELS, export_json_schemas
from lhbench.schema.failures import ErrorType
from lhbench.schema.grading import (
    DimensionScore,
    Grade,
    GradeStatus,
    JudgeIdentity,
    JudgeKind,
    Label,
    PreferenceVote,
    Verdict,
    VerdictValue,
)
from lhbench.schema.pack import (
    ComplexityTags,
    EnvironmentKind,
    EnvironmentSpec,
    HookSpec,
    McpServerSpec,
    Skill,
    Task,
    TaskLimits,
    TaskPack,
)
from lhbench.schema.rubric import (
    WEIGHT_TOLERANCE,
    AuthorKind,
    Dimension,
    Rubric,
    Scale,
    Tier,
    TierKind,
)
from lhbench.schema.run import Artifact, Role, Run, RunStatus, Step, StepKind, Trajectory

__all__ = [
    "EXPORTED_MODELS",
    "WEIGHT_TOLERANCE",
    "Artifact",
    "AuthorKind",
    "ComplexityTags",
    "Dimension",
    "DimensionScore",
    "EnvironmentKind",
    "EnvironmentSpec",
    "ErrorType",
    "Grade",
    "GradeStatus",
    "HookSpec",
    "JudgeIdentity",
    "JudgeKind",
    "Label",
    "McpServerSpec",
    "PreferenceVote",
    "Role",
    "Rubric",
    "Run",
    "RunStatus",
    "Scale",
    "Schema",
    "Skill",
    "Step",
    "StepKind",
    "Task",
    "TaskLimits",
    "TaskPack",
    "Tier",
    "TierKind",
    "Trajectory",
    "Usage",
    "Verdict",
    "VerdictValue",
    "VersionLabel",
    "export_json_schemas",
    "utcnow",
]
