"""OSWorld ``traj.jsonl``: one line per executed action.

``{"step_num", "action_timestamp": "%Y%m%d@%H%M%S", "action": str|dict, "reward", "done",
"info", "screenshot_file", "response"?}``. An action ``FAIL`` ends the episode with score 0.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from lhbench.ingest.base import ImportContext, StepBuilder, TranscriptInfo, guarded, iter_json_lines
from lhbench.schema import Role, RunStatus, Step, StepKind

__all__ = ["read_osworld", "sniff_osworld"]

FORMAT = "osworld"


def sniff_osworld(objs: list[dict[str, Any]]) -> bool:
    """Lines with step_num and action."""
    return any("step_num" in o and "action" in o for o in objs)


def read_osworld(ctx: ImportContext, info: TranscriptInfo) -> Iterator[Step]:
    """Steps of an OSWorld trajectory: each action a tool call, its reward the result."""
    b = StepBuilder()
    done = False
    for lineno, obj in iter_json_lines(ctx):

        def handle(obj: dict[str, Any] = obj) -> Iterator[Step]:
            nonlocal done
            n = int(obj["step_num"])
            raw_ts = obj.get("action_timestamp")
            ts = datetime.strptime(raw_ts, "%Y%m%d@%H%M%S").replace(tzinfo=UTC) if raw_ts else None
            if ts:
                info.started_at = info.started_at or ts
                info.ended_at = ts
            if obj.get("response"):
                yield b.make(
                    Role.ASSISTANT, StepKind.MESSAGE, content=str(obj["response"]), timestamp=ts
                )
            action = obj["action"]
            call_id = f"step-{n}"
            tool_input = action if isinstance(action, dict) else {"action": action}
            yield b.make(
                Role.ASSISTANT,
                StepKind.TOOL_CALL,
                tool_name="computer",
                tool_call_id=call_id,
                tool_input=tool_input,
                timestamp=ts,
            )
            infod = obj.get("info") or {}
            failed = action == "FAIL" or bool(isinstance(infod, dict) and infod.get("error"))
            reward = obj.get("reward")
            yield b.make(
                Role.TOOL,
                StepKind.TOOL_RESULT,
                tool_call_id=call_id,
                tool_output=f"reward={reward} done={obj.get('done')}",
                is_error=failed,
                timestamp=ts,
                metadata={"screenshot_file": obj.get("screenshot_file"), "reward": reward},
            )
            info.metadata["reward"] = reward
            if obj.get("done") or action in ("DONE", "FAIL"):
                done = True
                info.status = RunStatus.FAILED if action == "FAIL" else RunStatus.COMPLETED

        yield from guarded(ctx, lineno, FORMAT, handle)
    if not done or ctx.truncated:
        info.status = RunStatus.INCOMPLETE
