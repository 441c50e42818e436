"""OSWorld ``traj.jsonl``: one line per executed action, or a crash record.

``{"step_num", "action_timestamp": "%Y%m%d@%H%M%S", "action": str|dict, "reward", "done",
"info", "screenshot_file", "response"?}``. An action ``FAIL`` ends the episode with score
0. When the episode raises, OSWorld's runner appends ``{"Error": "<message>"}`` (often the
only line): the run is stored as failed with that message.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lhbench.ingest.base import ImportContext
from lhbench.ingest.builder import ASSISTANT, ERROR, HARNESS, MESSAGE
from lhbench.ingest.sessions import Item, LineSession, line_items
from lhbench.ingest.values import Clock, as_text, short
from lhbench.schema import RunStatus

__all__ = ["osworld_items", "sniff_osworld"]

FORMAT = "osworld"


def _crash_record(o: dict[str, Any]) -> bool:
    return len(o) == 1 and type(o.get("Error")) is str


def sniff_osworld(objs: list[dict[str, Any]]) -> bool:
    """Lines with step_num and action, or an OSWorld crash record ``{"Error": …}``."""
    return any(("step_num" in o and "action" in o) or _crash_record(o) for o in objs)


class _Session(LineSession):
    FORMAT = FORMAT

    def __init__(self, ctx: ImportContext) -> None:
        super().__init__(ctx, Clock("%Y%m%d@%H%M%S"))
        self.done = False
        self.crashed = False

    def line(self, obj: dict[str, Any]) -> None:
        info, b = self.info, self.b
        if "Error" in obj and "step_num" not in obj:
            message = as_text(obj["Error"]) or "episode crashed"
            info.error = message
            self.crashed = True
            b.step(HARNESS, ERROR, message, is_error=True)
            return
        n = obj["step_num"]
        if type(n) is not int or isinstance(n, bool):
            raise TypeError(f"step_num is {short(n)}, not a number")
        ts = self.time(obj.get("action_timestamp"))
        if obj.get("response"):
            b.step(ASSISTANT, MESSAGE, as_text(obj["response"]), ts=ts)
        action = obj["action"]
        call_id = f"step-{n}"
        b.call("computer", call_id, action if type(action) is dict else {"action": action}, ts=ts)
        detail = obj.get("info")
        failed = action == "FAIL" or bool(type(detail) is dict and detail.get("error"))
        reward = obj.get("reward")
        if not (reward is None or type(reward) in (int, float)):
            self.ctx.bad(f"reward {short(reward)} is not a number")
            reward = None
        shot = obj.get("screenshot_file")
        b.result(
            call_id,
            f"reward={reward} done={obj.get('done')}",
            is_error=failed,
            ts=ts,
            meta={"screenshot_file": shot if type(shot) is str else None, "reward": reward},
        )
        info.metadata["reward"] = reward
        if obj.get("done") is True or action in ("DONE", "FAIL"):
            self.done = True
            info.status = RunStatus.FAILED if action == "FAIL" else RunStatus.COMPLETED

    def finish(self) -> Item:
        if self.crashed:
            self.info.status = RunStatus.FAILED  # whatever came before, the episode raised
        elif not self.done or self.ctx.truncated:
            self.info.status = RunStatus.INCOMPLETE
        return self.end()


def osworld_items(ctx: ImportContext) -> Iterator[Item]:
    """Rows and the session end of an OSWorld trajectory."""
    return line_items(ctx, lambda: _Session(ctx))
