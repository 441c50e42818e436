"""The GUI-domain verdict judge: an office task judged in its final document.

The verdict judge (:class:`~lhbench.judges.VerdictJudge`) whose agent gets the GUI tools
(:mod:`lhbench.tools.gui_server`): the final document rendered and read structurally, and
the trajectory's screenshots and accessibility trees — one sandboxed tool worker with
read-only access to the materialized state (a copy) and the trajectory file, no network.
``modality`` is AJ-Bench's GUI ablation (what the judge perceives) and is stored in the
judge's settings, so each modality is a judge of its own in every table.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pydantic_ai.models import Model

from lhbench.envs.gui.view import MODALITIES
from lhbench.judges.base import VerdictItem
from lhbench.judges.verdict import VerdictJudge
from lhbench.models import ModelSpec
from lhbench.sandbox import Limits, Prepared, Sandbox, get_sandbox, policy_for
from lhbench.schema import Task, Trajectory

__all__ = ["GUI_PROMPT_VERSION", "GuiJudge", "gui_tool_server"]

GUI_PROMPT_VERSION = "aj-gui-v1"

_GUIDE = """# How to judge this office task
The agent worked in an office application; its final document is what counts. PASS only if
the final document does what the task asks, exactly (values, formulas, text, formatting,
slides). Use the tools to look at the final document itself — do not trust the agent's own
claim that it succeeded; the trajectory's screenshots and accessibility trees show how it
got there, not what was saved."""


def gui_tool_server(
    state: Path, modality: str, trajectory_file: Path | None
) -> tuple[str, list[str]]:
    """(command, args) of the GUI judge's sandboxed tool worker (:mod:`lhbench.tools.worker`)."""
    args = ["-I", "-m", "lhbench.tools.worker", "gui", "--state", str(state)]
    args += ["--modality", modality]
    if trajectory_file is not None:
        args += ["--trajectory", str(trajectory_file)]
    return sys.executable, args


class GuiJudge(VerdictJudge):
    """A verdict judge for an office task (agent: with the GUI tools of one modality)."""

    def __init__(self, model: Model, spec: ModelSpec, *, modality: str = "both", **kw: Any) -> None:
        if modality not in MODALITIES:
            raise ValueError(f"modality {modality!r}: expected one of {', '.join(MODALITIES)}")
        super().__init__(model, spec, **kw)
        self.modality = modality
        settings = dict(self.identity.settings)
        if self.agentic:
            settings["modality"] = modality
        self.identity = self.identity.model_copy(
            update={"prompt_version": GUI_PROMPT_VERSION, "settings": settings}
        )

    def prompt(self, task: Task | None, trajectory: Trajectory) -> str:
        """The task, the trajectory and how to judge an office task."""
        return f"{super().prompt(task, trajectory)}\n\n{_GUIDE}"

    def _tool_commands(self, item: VerdictItem) -> list[Prepared]:
        """The GUI server, sandboxed: the state and the trajectory read-only, no network."""
        state = item.state.root
        if state is None:
            raise LookupError(f"run {item.run.id!r} has no GUI state directory")
        traj = item.state.trajectory_file
        policy = policy_for(
            state,
            readable=[state] + ([traj] if traj is not None else []),
            endpoints=[],
            env={"LHBENCH_IN_SANDBOX": "1"},
            limits=Limits(wall_s=None, cpu_s=600, memory_mb=1024, file_mb=16, processes=16),
        )
        sandbox: Sandbox = self.sandbox or get_sandbox()
        cmd, args = gui_tool_server(state, self.modality, traj)
        return [sandbox.prepare([cmd, *args], policy)]
