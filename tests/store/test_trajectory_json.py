"""A trajectory's JSON columns read back whatever JSON the store holds.

``get_trajectory`` parses them with orjson; what orjson refuses and the stdlib reads (an
integer past 64 bits, which PostgreSQL's jsonb keeps; NaN, which a SQLite store written
with ``json.dumps`` may hold) is read as before, not an error.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

from sqlalchemy import text

from lhbench.schema import Role, Run, RunStatus, Step, StepKind, Trajectory
from lhbench.store import Store


def test_json_orjson_refuses_reads_back(store: Store) -> None:
    store.save_run(
        Run(
            id="r",
            pack_id="p",
            task_id="t",
            harness="h",
            model="m",
            status=RunStatus.COMPLETED,
            started_at=datetime(2026, 11, 28, tzinfo=UTC),
        )
    )
    call = Step(
        index=0,
        role=Role.ASSISTANT,
        kind=StepKind.TOOL_CALL,
        tool_name="Bash",
        tool_input={"command": "ls"},
        metadata={"k": [1, "two", None]},
    )
    store.save_trajectory(Trajectory(run_id="r", steps=[call]))
    sqlite = store.engine.dialect.name == "sqlite"
    big = "123456789012345678901234567890"
    as_json = ":doc" if sqlite else "CAST(:doc AS jsonb)"
    with store.engine.begin() as conn:
        # an integer past 64 bits alone (orjson would read a float), and beside NaN
        conn.execute(text(f"UPDATE steps SET metadata = {as_json}"), {"doc": f'{{"n": -{big}}}'})
        if sqlite:
            conn.execute(
                text(f"UPDATE steps SET tool_input = {as_json}"),
                {"doc": f'{{"big": {big}, "nan": NaN}}'},
            )
    (step,) = store.get_trajectory("r").steps
    assert step.metadata == {"n": -int(big)}
    assert isinstance(step.metadata["n"], int)
    if sqlite:
        assert step.tool_input is not None
        assert step.tool_input["big"] == int(big) and math.isnan(step.tool_input["nan"])
    else:
        assert step.tool_input == {"command": "ls"}
    # the JSON column left as written: JSON null
    assert step.usage is None
    assert step.model_dump(exclude={"tool_input", "metadata"}) == call.model_dump(
        exclude={"tool_input", "metadata"}
    )
