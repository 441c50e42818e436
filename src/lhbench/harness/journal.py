"""A run's journal: every step appended to disk as it happens, and the turns finished.

A run killed with ``kill -9`` leaves its journal; the same command run again folds those
steps back in, notes the interruption, and resumes at the first unfinished turn. A line
cut off by the kill is dropped; nothing before it is.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from lhbench.schema import Role, Step, StepKind, utcnow

__all__ = ["Journal"]


class Journal:
    """``steps.jsonl`` and ``turns.json`` in a run directory."""

    def __init__(self, run_dir: Path) -> None:
        self.steps_file = run_dir / "steps.jsonl"
        self.turns_file = run_dir / "turns.json"
        run_dir.mkdir(parents=True, exist_ok=True)

    def prior_steps(self) -> list[Step]:
        """Steps journaled by earlier attempts, renumbered from 0 (a torn last line dropped)."""
        if not self.steps_file.exists():
            return []
        steps: list[Step] = []
        for line in self.steps_file.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                doc = json.loads(line)
                steps.append(Step.model_validate({**doc, "index": len(steps)}))
            except (ValueError, TypeError):
                continue  # the line the kill cut off
        return steps

    def turns_done(self) -> int:
        """How many user turns finished."""
        try:
            return int(json.loads(self.turns_file.read_text()).get("done", 0))
        except (OSError, ValueError, AttributeError):
            return 0

    def resume_note(self, prior: list[Step], turn: int) -> Step:
        """The step that says the run was interrupted and where it resumes."""
        note = Step(
            index=len(prior),
            role=Role.HARNESS,
            kind=StepKind.MESSAGE,
            content=f"run interrupted after {len(prior)} step(s); resumed at turn {turn + 1}",
            timestamp=utcnow(),
            metadata={"resumed": True, "prior_steps": len(prior)},
        )
        self.append(note)
        return note

    def append(self, step: Step) -> None:
        """Add one step (flushed to disk before the agent goes on)."""
        with self.steps_file.open("a", encoding="utf-8") as f:
            f.write(step.model_dump_json(exclude_defaults=True) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def finish_turn(self, n: int) -> None:
        """Record that turn ``n`` (0-based) finished."""
        tmp = self.turns_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"done": n + 1}))
        tmp.replace(self.turns_file)
