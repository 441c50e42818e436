"""JSON Schema export of every public model."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from lhbench.schema.grading import Grade, Label, PreferenceVote, Verdict
from lhbench.schema.pack import Task, TaskPack
from lhbench.schema.rubric import Rubric
from lhbench.schema.run import Artifact, Run, Step, Trajectory

__all__ = ["EXPORTED_MODELS", "export_json_schemas"]

EXPORTED_MODELS: tuple[type[BaseModel], ...] = (
    TaskPack,
    Task,
    Rubric,
    Run,
    Trajectory,
    Step,
    Artifact,
    Grade,
    Verdict,
    PreferenceVote,
    Label,
)


def export_json_schemas(directory: Path) -> list[Path]:
    """Write ``<Model>.schema.json`` for each exported model into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for model in EXPORTED_MODELS:
        path = directory / f"{model.__name__}.schema.json"
        schema = model.model_json_schema()
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        path.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        written.append(path)
    return written
