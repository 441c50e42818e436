"""Rendering a trajectory for a judge: faithful, compact, indices kept, elisions marked.

The rendered text is data produced by the agent under evaluation. It is fenced in a
``<trajectory>`` element and any closing tag inside it is neutralised, so nothing a
trajectory says can pass for the judge's instructions or its answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from lhbench.schema import Step, StepKind, Trajectory

__all__ = ["RenderedTrajectory", "estimate_tokens", "fence", "render_trajectory"]

_HEAD = 3
_TAIL = 5


def estimate_tokens(text: str) -> int:
    """A provider-neutral token estimate (~4 characters a token)."""
    return len(text) // 4 + 1


def fence(tag: str, text: str) -> str:
    """Wrap untrusted text in ``<tag untrusted="true">``; a closing tag inside is defused."""
    safe = text.replace(f"</{tag}", f"<\\/{tag}")
    return f'<{tag} untrusted="true">\n{safe}\n</{tag}>'


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    keep = max(limit // 2, 1)
    return f"{text[:keep]} …[{len(text) - 2 * keep} chars omitted]… {text[-keep:]}"


def _render_step(step: Step, limit: int) -> str:
    flags = []
    if step.is_error or step.kind == StepKind.ERROR:
        flags.append("ERROR")
    if step.exit_code is not None:
        flags.append(f"exit={step.exit_code}")
    head = f"[{step.index}] {step.role.value}/{step.kind.value}"
    if step.tool_name:
        head += f" {step.tool_name}"
    if flags:
        head += f" ({', '.join(flags)})"
    body = []
    if step.content:
        body.append(_clip(step.content, limit))
    if step.tool_input is not None:
        body.append("input: " + _clip(json.dumps(step.tool_input, ensure_ascii=False), limit))
    if step.tool_output is not None:
        body.append("output: " + _clip(step.tool_output, limit))
    return head + (":\n  " + "\n  ".join(b.replace("\n", "\n  ") for b in body) if body else "")


@dataclass(frozen=True)
class RenderedTrajectory:
    """The text a judge reads and what was left out of it."""

    text: str
    kept_steps: int
    omitted_steps: int
    tokens: int


def _keep_set(steps: list[Step]) -> set[int]:
    keep = set(range(min(_HEAD, len(steps)))) | set(range(max(0, len(steps) - _TAIL), len(steps)))
    for i, s in enumerate(steps):
        if not (s.is_error or s.kind == StepKind.ERROR):
            continue
        keep.add(i)
        # the call that failed, and the next attempt at the same tool (the recovery, or not)
        if i > 0:
            keep.add(i - 1)
        for j in range(i + 1, min(len(steps), i + 8)):
            if steps[j].tool_name and steps[j].tool_name == s.tool_name:
                keep.add(j)
                if j + 1 < len(steps):
                    keep.add(j + 1)
                break
    return keep


def render_trajectory(trajectory: Trajectory, *, budget_tokens: int = 24_000) -> RenderedTrajectory:
    """Render every step, or, over budget, the task-critical ones with marked elisions.

    Over budget, kept: the first and last steps, every error and failed tool call with
    the call before it and the next attempt at the same tool; fields are clipped harder
    until it fits. Each elided run becomes ``[steps a–b omitted: N tool calls, M errors]``.
    """
    steps = trajectory.steps
    for limit in (4000, 2000, 800, 300, 120):
        full = [_render_step(s, limit) for s in steps]
        text = "\n".join(full)
        if estimate_tokens(text) <= budget_tokens:
            return RenderedTrajectory(text, len(steps), 0, estimate_tokens(text))
    keep = _keep_set(steps)
    for limit in (2000, 800, 300, 120, 60):
        out: list[str] = []
        i = 0
        while i < len(steps):
            if i in keep:
                out.append(_render_step(steps[i], limit))
                i += 1
                continue
            j = i
            while j < len(steps) and j not in keep:
                j += 1
            gap = steps[i:j]
            tools = sum(1 for s in gap if s.kind == StepKind.TOOL_CALL)
            errors = sum(1 for s in gap if s.is_error or s.kind == StepKind.ERROR)
            span = f"{i}" if j - i == 1 else f"{i}–{j - 1}"
            out.append(f"[steps {span} omitted: {tools} tool calls, {errors} errors]")
            i = j
        text = "\n".join(out)
        if estimate_tokens(text) <= budget_tokens or limit == 60:
            return RenderedTrajectory(
                text, len(keep), len(steps) - len(keep), estimate_tokens(text)
            )
    raise AssertionError("unreachable")
