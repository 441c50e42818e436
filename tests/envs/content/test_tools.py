"""The content tools over MCP: sources by line (cat -n), search, cited notes, plan, chapters."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from lhbench.envs.content import SourceSet, check_course, load_sources
from lhbench.envs.content.slides import chromium_path
from lhbench.tools.content_server import MAX_READ_LINES, build_content_server
from tests.envs.content.conftest import CONTEXT


def call(server: Any, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
    async def go() -> Any:
        async with Client(server) as c:
            return await c.call_tool(tool, args, raise_on_error=False)

    res = asyncio.run(go())
    return bool(res.is_error), res.content[0].text if res.content else ""


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(CONTEXT, root / "context")
    return root


def test_list_read_and_search(ws: Path, sources: SourceSet) -> None:
    srv = build_content_server(ws)
    ok_err, listing = call(srv, "list_sources", {})
    assert not ok_err
    assert listing.splitlines()[1].startswith("heat-pump-primer\t32 lines\tHeat Pumps: A Primer")
    _, text = call(
        srv, "read_source", {"source_id": "heat-pump-primer", "start_line": 14, "end_line": 15}
    )
    want = [f"{n:6d}\t{sources.lines['heat-pump-primer'][n - 1]}" for n in (14, 15)]
    assert text.splitlines() == want  # numbered like cat -n
    expected = subprocess.run(
        ["cat", "-n", str(CONTEXT / "heat-pump-primer.md")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()[13:15]
    assert text.splitlines() == expected
    _, hits = call(srv, "search_sources", {"query": "median SCOP"})
    assert hits.splitlines()[0].startswith("field-trial-2025:L11: Homes with a flow temperature")
    assert all("scop" in h.lower() for h in hits.splitlines())


def test_bad_reads_are_tool_errors_that_say_what_exists(ws: Path) -> None:
    srv = build_content_server(ws)
    err, text = call(srv, "read_source", {"source_id": "nope"})
    assert err and "heat-pump-primer" in text
    err, text = call(srv, "read_source", {"source_id": "heat-pump-primer", "start_line": 500})
    assert err and "has 32 lines" in text
    err, _ = call(srv, "search_sources", {"query": "x" * 500})
    assert err


def test_a_long_read_is_bounded(tmp_path: Path) -> None:
    room = tmp_path / "room"
    room.mkdir()
    (room / "long.md").write_text("\n\n".join(f"Sentence {i}." for i in range(1500)))
    from lhbench.envs.content import extract_data_room

    extract_data_room(room, tmp_path / "ws/context")
    srv = build_content_server(tmp_path / "ws")
    _, text = call(srv, "read_source", {"source_id": "long"})
    lines = text.splitlines()
    assert len(lines) == MAX_READ_LINES + 1 and lines[-1].startswith(
        f"[lines {MAX_READ_LINES + 1}-"
    )


def test_notes_need_citations_that_resolve(ws: Path, sources: SourceSet) -> None:
    srv = build_content_server(ws)
    err, text = call(srv, "record_note", {"text": "Heat pumps move heat."})
    assert err and "at least one citation" in text
    err, text = call(srv, "record_note", {"text": "Secret memo says so [memo:L1]."})
    assert err and "no source 'memo'" in text
    err, text = call(srv, "record_note", {"text": "Moves heat [heat-pump-primer:L6-L99]."})
    assert err and "outside heat-pump-primer" in text
    assert not (ws / "research/notes.jsonl").exists()
    err, text = call(
        srv,
        "record_note",
        {
            "text": "It moves heat that already exists in outdoor air, ground or water "
            "into a building.",
            "citations": ["heat-pump-primer:L6"],
        },
    )
    assert not err and text == "recorded n1 with 1 citation(s)"
    err, text = call(
        srv, "record_note", {"text": "The cycle has four stages [heat-pump-primer:L14]."}
    )
    assert text == "recorded n2 with 1 citation(s)"
    notes = [json.loads(line) for line in (ws / "research/notes.jsonl").read_text().splitlines()]
    assert [n["id"] for n in notes] == ["n1", "n2"]
    assert notes[0]["citations"] == ["[heat-pump-primer:L6]"]
    report = check_course(ws, sources)
    assert report.passed() and len(report.citations) == 2


def test_plan_and_chapters_are_validated_and_written_inside(ws: Path, sources: SourceSet) -> None:
    srv = build_content_server(ws)
    err, text = call(
        srv, "write_chapter_plan", {"chapters": [{"id": "a", "title": "A", "sources": ["memo"]}]}
    )
    assert err and "unknown sources" in text
    err, text = call(srv, "write_chapter_plan", {"chapters": [{"id": "A B", "title": "x"}]})
    assert err
    err, text = call(
        srv,
        "write_chapter_plan",
        {"chapters": [{"id": "efficiency", "title": "COP", "sources": ["heat-pump-primer"]}]},
    )
    assert (
        not err
        and json.loads((ws / "course/plan.json").read_text())["chapters"][0]["id"] == "efficiency"
    )
    md = (
        "# COP\n\nSCOP averages the COP over a whole heating season. [heat-pump-primer:L24]\n"
        "Bad [x:L1].\n"
    )
    err, text = call(srv, "write_chapter", {"chapter_id": "efficiency", "markdown": md})
    assert not err and "2 citation(s)" in text and "[x:L1]" in text and "fix:" in text
    assert (ws / "course/chapters/efficiency.md").read_text() == md
    for bad_id in ("../../escape", "/abs", "a/b"):
        err, text = call(srv, "write_chapter", {"chapter_id": bad_id, "markdown": "x"})
        assert err and "bad chapter id" in text
    assert not (ws.parent / "escape.md").exists()


def test_writes_never_follow_a_symlink_out_of_the_workspace(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "course").mkdir()
    (ws / "course/chapters").symlink_to(outside)
    srv = build_content_server(ws)
    err, text = call(srv, "write_chapter", {"chapter_id": "x", "markdown": "hi"})
    assert err and "refused" in text
    assert list(outside.iterdir()) == []


def test_the_server_runs_over_stdio_as_packs_start_it(ws: Path) -> None:
    from fastmcp.client.transports import StdioTransport

    async def go() -> str:
        transport = StdioTransport(
            sys.executable, ["-m", "lhbench.tools.content_server", "--workspace", str(ws)]
        )
        async with Client(transport) as c:
            tools = {t.name for t in await c.list_tools()}
            assert {
                "list_sources",
                "read_source",
                "search_sources",
                "record_note",
                "write_chapter_plan",
                "write_chapter",
            } <= tools
            res = await c.call_tool(
                "read_source", {"source_id": "training-deck", "start_line": 11, "end_line": 11}
            )
            return res.content[0].text

    assert (
        asyncio.run(go())
        == "    11\t> Notes: Stress that weather compensation should stay switched on."
    )


def test_the_context_is_loaded_from_the_workspace_only(ws: Path) -> None:
    (ws / "context/sources.json").unlink()
    srv = build_content_server(ws)
    err, text = call(srv, "list_sources", {})
    assert err and "sources.json" in text
    assert load_sources(CONTEXT).ids  # the pack's frozen copy is untouched


@pytest.mark.skipif(chromium_path() is None, reason="no Chromium (CI installs it)")
def test_check_slides_renders_the_decks_and_reports_each_slide(ws: Path) -> None:
    (ws / "course/slides").mkdir(parents=True)
    style = "<style>body{margin:0}.slide{width:100vw;height:100vh;overflow:hidden}</style>"
    tall = "".join(f"<p>line {i}</p>" for i in range(80))
    (ws / "course/slides/a.html").write_text(
        f"<html><head>{style}</head><body><section class='slide'><h1>Fits</h1></section>"
        f"<section class='slide'>{tall}</section></body></html>"
    )
    srv = build_content_server(ws)
    err, text = call(srv, "check_slides", {"chapter_id": "a"})
    assert not err
    lines = text.splitlines()
    assert lines[0] == "course/slides/a.html slide 1 at 1280x720: fits"
    assert lines[1].startswith("course/slides/a.html slide 2 at 1280x720: DOES NOT FIT:")
    err, text = call(srv, "check_slides", {"chapter_id": "missing"})
    assert err and "no deck" in text
