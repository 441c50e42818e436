"""The judge's tools given inputs that would hold them: a backtracking regex, a huge step."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from lhbench.schema import Role, Step, StepKind, Trajectory
from lhbench.tools import build_fs_server
from lhbench.tools.trajectory_server import build_trajectory_server
from tests.security.helpers import bounded


def call(server: Any, tool: str, args: dict[str, Any]) -> Any:
    async def go() -> Any:
        async with Client(server) as c:
            return await c.call_tool(tool, args, raise_on_error=False)

    return asyncio.run(go())


def test_judge_regex_search_that_backtracks_without_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lhbench.tools.fs_server as fs_server

    # the agent's text, shaped for the pattern a judge is led to search with
    root = tmp_path / "root"
    root.mkdir()
    for i in range(3):
        (root / f"notes{i}.txt").write_text("a" * 34 + "b\n")
    monkeypatch.setattr(fs_server, "SEARCH_CPU_S", 0.3, raising=False)
    cpu = time.process_time()
    with bounded(120):
        res = call(build_fs_server(root), "search_files", {"pattern": "*", "content": "(a|aa)+$"})
    used = time.process_time() - cpu
    # Python's re spends about 2 CPU seconds per file here; the budget is for the search
    assert used < 2.0, f"the search used {used:.1f} s of CPU"
    text = res.content[0].text
    assert res.is_error and "CPU budget" in text, text


def test_judge_regex_search_still_finds(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("the answer is 42\n")
    (root / "b.txt").write_text("nothing here\n")
    res = call(build_fs_server(root), "search_files", {"pattern": "*.txt", "content": r"\d+"})
    assert not res.is_error and res.content[0].text == "a.txt"


def test_view_trajectory_step_of_two_megabytes(tmp_path: Path) -> None:
    huge = "x" * 2_000_000
    steps = [
        Step(index=0, role=Role.USER, kind=StepKind.MESSAGE, content="do it"),
        Step(
            index=1,
            role=Role.TOOL,
            kind=StepKind.TOOL_RESULT,
            tool_call_id="c1",
            tool_output=huge,
        ),
    ]
    path = tmp_path / "t.json"
    path.write_text(Trajectory(run_id="r", steps=steps).model_dump_json())
    server = build_trajectory_server(path)
    with bounded(60, mb=300):
        res = call(server, "view_trajectory_step", {"i": 1})
        small = call(server, "view_trajectory_step", {"i": 0})
    text = res.content[0].text
    assert len(text) <= 70_000, f"{len(text)} characters in one answer"
    assert "[step truncated: " in text and "[cut: 2000000 characters]" in text
    assert "tool_result" in text and "c1" in text  # what the step is stays readable
    assert "truncated" not in small.content[0].text and "do it" in small.content[0].text
