"""One protocol for every judge, and the items judges are given.

Every judge kind (rubric, pairwise, verdict, programmatic check) says who it is
(``identity``, whose hash is part of every result's identity), computes the identity of
the result it would give for an item without calling a model (``key``), and gives that
result (``judge``). The job runner (``lhbench.jobs``) drives all of them the same way:
plan keys, skip those stored with a final result, judge the rest.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart

from lhbench.schema import (
    Artifact,
    JudgeIdentity,
    Role,
    Rubric,
    Run,
    StepKind,
    Task,
    Tier,
    Trajectory,
)

__all__ = [
    "Evidence",
    "GradeItem",
    "Judge",
    "PairItem",
    "StateRef",
    "VerdictItem",
    "final_output",
    "new_id",
    "raw_output",
]

# Result ids: 128 random bits without a system call per id (``uuid4`` reads os.urandom,
# which on a busy event loop also gives up the GIL); seeded from os.urandom, and again in
# every forked child so two processes never share a sequence.
_IDS = random.Random(os.urandom(32))
os.register_at_fork(after_in_child=lambda: _IDS.seed(os.urandom(32)))


def new_id(prefix: str) -> str:
    """A fresh result id, e.g. ``grade-3f2a…`` (32 hex digits)."""
    return f"{prefix}-{_IDS.getrandbits(128):032x}"


ItemT = TypeVar("ItemT", contravariant=True)
ResultT = TypeVar("ResultT", covariant=True)


class Judge(Protocol[ItemT, ResultT]):
    """What every judge is: an identity, a key per item, and a result per item."""

    @property
    def identity(self) -> JudgeIdentity:
        """Who judges: model (or check), endpoint, settings, prompt version."""
        ...

    def key(self, item: ItemT) -> str:
        """The identity of the result this judge gives for ``item`` (no model call)."""
        ...

    async def judge(self, item: ItemT) -> ResultT:
        """The result for ``item``: always returned, a failure recorded, never raised."""
        ...


@dataclass
class Evidence:
    """What a judge may look at for one run."""

    run: Run
    task: Task | None
    trajectory: Trajectory | None = None
    artifacts: list[Artifact] = field(default_factory=list)


@dataclass
class GradeItem:
    """One run to grade on one rubric tier (``evidence`` is loaded by the job)."""

    run: Run
    rubric: Rubric
    tier: Tier
    repeat: int = 0
    evidence: Evidence | None = None


@dataclass
class PairItem:
    """Two runs of one task to compare on one rubric tier."""

    run_a: Run
    run_b: Run
    rubric: Rubric
    tier: Tier
    evidence_a: Evidence | None = None
    evidence_b: Evidence | None = None


@dataclass(frozen=True)
class StateRef:
    """A run's final state, replayed or kept, as a judge's tools see it."""

    state_id: str
    root: Path | None = None
    db_url: str | None = None
    trajectory_file: Path | None = None


@dataclass
class VerdictItem:
    """One run to give a PASS/FAIL verdict on, in its final state."""

    run: Run
    task: Task | None
    trajectory: Trajectory
    state: StateRef
    repeat: int = 0


def raw_output(messages: list[ModelMessage]) -> str:
    """The last thing the model said (text or tool-call arguments), for failure records."""
    for m in reversed(messages):
        if isinstance(m, ModelResponse):
            parts = []
            for p in m.parts:
                if isinstance(p, TextPart):
                    parts.append(p.content)
                elif isinstance(p, ToolCallPart):
                    args = p.args if isinstance(p.args, str) else json.dumps(p.args)
                    parts.append(f"{p.tool_name}({args})")
            if parts:
                return "\n".join(parts)
    return ""


def final_output(trajectory: Trajectory | None) -> str:
    """The agent's last message (its final answer), or ''."""
    if trajectory is None:
        return ""
    for s in reversed(trajectory.steps):
        if s.role == Role.ASSISTANT and s.kind == StepKind.MESSAGE and s.content:
            return s.content
    return ""
