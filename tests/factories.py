"""Builders of valid schema objects for tests."""

from __future__ import annotations

import hashlib
import random
from datetime import UTC, datetime, timedelta
from typing import Any

from lhbench.schema import (
    DimensionScore,
    Grade,
    JudgeIdentity,
    JudgeKind,
    Role,
    Run,
    RunStatus,
    Scale,
    Step,
    StepKind,
    TierKind,
    Trajectory,
    Usage,
)

T0 = datetime(2026, 1, 31, 12, 0, tzinfo=UTC)


def make_run(run_id: str = "run-1", **kw: object) -> Run:
    base: dict[str, object] = {
        "id": run_id,
        "pack_id": "pack",
        "pack_hash": "0" * 64,
        "task_id": "task-1",
        "harness": "claude-code",
        "harness_version": "2.1.0",
        "model": "anthropic:claude-sonnet-4-6",
        "versions": {"skill": "v1", "prompt": "v0"},
        "status": RunStatus.COMPLETED,
        "started_at": T0,
        "ended_at": T0 + timedelta(minutes=12),
        "usage": Usage(input_tokens=1200, output_tokens=340, requests=5, cost_usd=0.42),
        "cost_usd": 0.42,
        "metadata": {"session_id": "abc"},
    }
    base.update(kw)
    return Run.model_validate(base)


def make_trajectory(run_id: str = "run-1") -> Trajectory:
    steps = [
        Step(
            index=0, role=Role.USER, kind=StepKind.MESSAGE, content="Build the page", timestamp=T0
        ),
        Step(
            index=1,
            role=Role.ASSISTANT,
            kind=StepKind.TOOL_CALL,
            tool_name="Bash",
            tool_call_id="t1",
            tool_input={"command": "npm run build", "nested": {"a": [1, 2]}},
            timestamp=T0 + timedelta(seconds=5),
            usage=Usage(input_tokens=100, output_tokens=20),
        ),
        Step(
            index=2,
            role=Role.TOOL,
            kind=StepKind.TOOL_RESULT,
            tool_name="Bash",
            tool_call_id="t1",
            tool_output="error TS2304: Cannot find name 'x'",
            is_error=True,
            exit_code=2,
        ),
        Step(index=3, role=Role.HARNESS, kind=StepKind.HOOK, content='{"next": "fix"}'),
        Step(
            index=4,
            role=Role.ASSISTANT,
            kind=StepKind.TOOL_CALL,
            tool_name="Bash",
            tool_call_id="t2",
            tool_input={"command": "npm run build"},
        ),
        Step(index=5, role=Role.TOOL, kind=StepKind.TOOL_RESULT, tool_call_id="t2", exit_code=0),
        Step(index=6, role=Role.ASSISTANT, kind=StepKind.MESSAGE, content="Done ✓"),
    ]
    return Trajectory(run_id=run_id, steps=steps)


def make_grade(
    run_id: str = "run-1",
    judge: str = "openai:gpt-5.2",
    scores: tuple[int, ...] = (4, 3, 5, 2),
    **kw: object,
) -> Grade:
    dims = ("design_inspection", "token_extraction", "component_architecture", "build_verification")
    weights = (0.30, 0.25, 0.25, 0.20)
    key = hashlib.sha256(f"{run_id}|{judge}|{scores}|{kw}".encode()).hexdigest()
    base: dict[str, object] = {
        "id": f"g-{key[:12]}",
        "run_id": run_id,
        "rubric_id": "figma-to-code",
        "rubric_version": "1.2",
        "tier": TierKind.PROCESS,
        "judge": JudgeIdentity(
            kind=JudgeKind.LLM, model=judge, family=judge.split(":")[0], settings={"temperature": 0}
        ),
        "scores": [
            DimensionScore(dimension_id=d, scale=Scale.ONE_TO_FIVE, score=s, evidence=f"saw {d}")
            for d, s in zip(dims, scores, strict=False)
        ],
        "tier_score": sum(w * s for w, s in zip(weights, scores, strict=False)) if scores else None,
        "key": key,
        "latency_s": 1.5,
        "cost_usd": 0.01,
    }
    base.update(kw)
    return Grade.model_validate(base)


# random runs with failures (for properties of error events and Table 11/12 counts)
_TOOLS = ["Bash", "Write", "Read", "preview_app", "PreviewSite", "deploy_site", "upload_dist",
         "figma_get_node", "mcp__fs__list"]  # fmt: skip
_COMMANDS = ["npm run build", "git push origin main", "bash -lc 'npm test'", "tsc --noEmit",
            "ls -la", ["pytest", "-q"], "make all"]  # fmt: skip
_OUTPUTS = ["ok", "error TS2322: Type 'string' is not assignable to type 'number'",
           "SyntaxError: Unexpected token '<'", '{"status": "error", "error": "429"}',
           "fatal: not a git repository", "Cannot find module 'react'", "timed out after 30s",
           "Figma API error: 429 - {}", "Traceback (most recent call last):\nKeyError: 'x'",
           '{"status": "ok"}', "Build failed", ""]  # fmt: skip


def _random_input(rng: random.Random, tool: str) -> dict[str, Any] | None:
    if tool == "Bash":
        return {"command": rng.choice(_COMMANDS)}
    if tool in ("Write", "Read"):
        return {"file_path": rng.choice(["/app/a.ts", "/app/b.ts"])}
    return rng.choice([None, {"url": "http://x"}])


def random_error_steps(rng: random.Random, most: int = 14) -> list[Step]:
    """A random run of up to ``most`` steps.

    Calls with and without ids answered in and out of order, failed results, errors,
    hooks and messages.
    """
    steps: list[Step] = []
    open_ids: list[str] = []
    idless = 0
    for _ in range(rng.randint(1, most)):
        i = len(steps)
        roll = rng.random()
        if roll < 0.35:
            tool = rng.choice(_TOOLS)
            cid = rng.choice([f"c{i}", None])
            if cid:
                open_ids.append(cid)
            else:
                idless += 1
            call = Step(index=i, role=Role.ASSISTANT, kind=StepKind.TOOL_CALL, tool_name=tool,
                        tool_call_id=cid, tool_input=_random_input(rng, tool))  # fmt: skip
            steps.append(call)
        elif roll < 0.75 and (open_ids or idless):
            if open_ids and (not idless or rng.random() < 0.5):
                cid: str | None = open_ids.pop(rng.randrange(len(open_ids)))
            else:
                cid, idless = None, idless - 1
            steps.append(
                Step(
                    index=i,
                    role=Role.TOOL,
                    kind=StepKind.TOOL_RESULT,
                    tool_call_id=cid,
                    # an id-less result names its tool (its call's, or another)
                    tool_name=rng.choice([None, None, *_TOOLS[:2]]) if cid else rng.choice(_TOOLS),
                    tool_output=rng.choice(_OUTPUTS),
                    is_error=rng.random() < 0.3,
                    exit_code=rng.choice([None, None, 0, 0, 1, 2]),
                )
            )
        elif roll < 0.85:
            kind = rng.choice([StepKind.ERROR, StepKind.HOOK])
            steps.append(Step(index=i, role=Role.HARNESS, kind=kind, is_error=rng.random() < 0.7,
                              content=rng.choice(_OUTPUTS)))  # fmt: skip
        else:
            kind = rng.choice([StepKind.MESSAGE, StepKind.THINKING])
            steps.append(Step(index=i, role=Role.ASSISTANT, kind=kind, content="hm"))
    return steps
