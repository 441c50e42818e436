"""A long transcript's page renders only the blocks it shows; the rest are counted."""

from __future__ import annotations

from typing import Any

import pytest

from lhbench.schema import Role, Step, StepKind, Trajectory
from lhbench.web import render
from lhbench.web.render import fold_transcript

PAIRS = 40


def _trajectory() -> Trajectory:
    steps = [Step(index=0, role=Role.USER, kind=StepKind.MESSAGE, content="go")]
    for k in range(PAIRS):
        steps.append(
            Step(
                index=len(steps),
                role=Role.ASSISTANT,
                kind=StepKind.TOOL_CALL,
                tool_name="Bash",
                tool_call_id=f"c{k}",
                tool_input={"command": f"make {k}"},
            )
        )
        steps.append(
            Step(
                index=len(steps),
                role=Role.TOOL,
                kind=StepKind.TOOL_RESULT,
                tool_name="Bash",
                tool_call_id=f"c{k}",
                tool_output=f"out {k}",
                is_error=k == PAIRS - 1,
            )
        )
    steps.append(Step(index=len(steps), role=Role.ASSISTANT, kind=StepKind.MESSAGE, content="ok"))
    return Trajectory(run_id="r", steps=steps)


def test_only_the_shown_blocks_are_highlighted(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = [0]

    def counting(real: Any) -> Any:
        def call(*args: object, **kw: object) -> object:
            calls[0] += 1
            return real(*args, **kw)

        return call

    # a tool call's input is highlighted by tool_input_html (a flat one without Pygments)
    monkeypatch.setattr(render, "highlight", counting(render.highlight))
    monkeypatch.setattr(render, "tool_input_html", counting(render.tool_input_html))
    traj = _trajectory()
    whole = fold_transcript(traj.steps, [])
    every = calls[0]
    calls[0] = 0
    shown = fold_transcript(traj.steps, [], render=range(5))
    # a tool block highlights its input and its output: 5 shown blocks, at most 10 calls
    assert every == 2 * PAIRS and calls[0] <= 10
    # every block is still there, in order, with its kind, title, steps and failure mark
    assert len(shown) == len(whole) == PAIRS + 2
    assert [(b.kind, b.title, b.index, b.failed) for b in shown] == [
        (b.kind, b.title, b.index, b.failed) for b in whole
    ]
    assert shown[-2].failed and shown[-2].kind == "tool" and shown[-2].outputs == []
    assert shown[1].outputs and shown[1].input is not None


def test_a_window_in_the_middle_renders_only_its_blocks() -> None:
    traj = _trajectory()
    whole = fold_transcript(traj.steps, [])
    window = range(10, 15)
    shown = fold_transcript(traj.steps, [], render=window)
    assert [(b.kind, b.title, b.index, b.failed) for b in shown] == [
        (b.kind, b.title, b.index, b.failed) for b in whole
    ]
    for i, (b, w) in enumerate(zip(shown, whole, strict=True)):
        if i in window:
            assert b.input == w.input and b.outputs == w.outputs and b.input is not None
        else:
            assert b.input is None and b.outputs == [] and b.body is None
