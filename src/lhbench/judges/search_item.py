"""The search-domain verdict judge: one item of an answer, checked against the recorded web.

AJ-Bench labels search answers item by item. This judge is the verdict judge
(:class:`~lhbench.judges.VerdictJudge`) with two differences: its prompt shows the whole
answer and the one item under review, and the agent judge's tools are the recorded web
(``search``, ``open_url``, ``find_in_page``) and the trajectory's steps — one sandboxed
server with read-only access to the corpus index and the trajectory file, and no network.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_ai.models import Model

from lhbench.judges.base import VerdictItem
from lhbench.judges.render import fence
from lhbench.judges.verdict import VerdictJudge
from lhbench.models import ModelSpec
from lhbench.sandbox import Limits, Prepared, Sandbox, get_sandbox, policy_for
from lhbench.schema import Task, Trajectory

__all__ = [
    "SEARCH_PROMPT_VERSION",
    "TOOL_SETS",
    "ItemUnderReview",
    "SearchItemJudge",
    "web_tool_server",
]

SEARCH_PROMPT_VERSION = "aj-search-v1"
# the agent judge's tool sets (AJ-Bench's tool ablation; "none" is the plain LLM judge)
TOOL_SETS = ("state", "state+trajectory")

_GUIDE = """# How to judge this item
Judge only the item under review, not the rest of the answer. PASS only if the item's
claim is true according to the recorded web AND a page it cites states it. Use search and
open_url to read the cited pages; pages can copy each other or contradict each other, so
prefer the page that is the authority on the subject and check the cited page itself.
A cited URL that is not in the recorded web supports nothing."""


@dataclass(frozen=True)
class ItemUnderReview:
    """The answer an item belongs to, and the item."""

    answer: str
    item: str
    sources: tuple[str, ...] = ()


def web_tool_server(index: Path, trajectory_file: Path | None) -> tuple[str, list[str]]:
    """(command, args) of the search judge's sandboxed tool worker (:mod:`lhbench.tools.worker`)."""
    args = ["-I", "-m", "lhbench.tools.worker", "web", "--index", str(index)]
    if trajectory_file is not None:
        args += ["--trajectory", str(trajectory_file)]
    return sys.executable, args


class SearchItemJudge(VerdictJudge):
    """A verdict judge for one item of a search answer (agent: with the recorded web)."""

    def __init__(
        self,
        model: Model,
        spec: ModelSpec,
        *,
        index: Path,
        items: Mapping[str, ItemUnderReview],
        tool_set: str = "state+trajectory",
        **kw: Any,
    ) -> None:
        if tool_set not in TOOL_SETS:
            raise ValueError(f"tool set {tool_set!r}: expected one of {', '.join(TOOL_SETS)}")
        super().__init__(model, spec, **kw)
        self.index = Path(index).absolute()
        self.items = dict(items)
        self.tool_set = tool_set
        settings = dict(self.identity.settings)
        if self.agentic:
            settings["tool_set"] = tool_set
        self.identity = self.identity.model_copy(
            update={"prompt_version": SEARCH_PROMPT_VERSION, "settings": settings}
        )

    def prompt(self, task: Task | None, trajectory: Trajectory) -> str:
        """The task, the trajectory, the whole answer and the item under review."""
        base = super().prompt(task, trajectory)
        it = self.items.get(trajectory.run_id)
        if it is None:
            raise LookupError(f"run {trajectory.run_id!r} is not an item of a search answer")
        return (
            f"{base}\n\n# The agent's answer\n{fence('answer', it.answer)}\n\n"
            f"# The item under review\n{fence('item', it.item)}\n\n{_GUIDE}"
        )

    def _tool_commands(self, item: VerdictItem) -> list[Prepared]:
        """The web server, sandboxed: the index and the trajectory read-only, no network."""
        traj = item.state.trajectory_file if self.tool_set == "state+trajectory" else None
        readable = [self.index.parent] + ([traj] if traj is not None else [])
        cwd = item.state.root or self.index.parent
        policy = policy_for(
            cwd,
            readable=readable,
            endpoints=[],
            env={"LHBENCH_IN_SANDBOX": "1"},
            limits=Limits(wall_s=None, cpu_s=600, memory_mb=1024, file_mb=16, processes=16),
        )
        sandbox: Sandbox = self.sandbox or get_sandbox()
        cmd, args = web_tool_server(self.index, traj)
        return [sandbox.prepare([cmd, *args], policy)]
