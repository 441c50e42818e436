"""The programmatic-content tools over MCP: sources by line, research notes, the course.

- ``list_sources``: every source with its title, origin and line count;
- ``read_source``: lines ``start..end`` of one source, numbered like ``cat -n``;
- ``search_sources``: case-insensitive text search, hits as ``source:L12: line``;
- ``record_note``: a research note with citations in the one syntax ``[source_id:L12-L15]``
  (refused when a citation names no source or lies outside it), appended to
  ``research/notes.jsonl``;
- ``write_chapter_plan``: the chapter plan, validated, to ``course/plan.json``;
- ``write_chapter``: a chapter's script to ``course/chapters/<id>.md``, answered with
  every citation that does not resolve (so the agent can fix it);
- ``check_slides``: render the decks in ``course/slides/`` in headless Chromium and say,
  per slide, whether it fits 1280x720 (overflow, clipped text, text under 14 px).

Sources are the frozen extraction in the workspace's ``context/`` (``sources.json`` and
``<id>.md``). Files are written only inside the workspace, never through a symlink;
every answer is bounded.

    python -m lhbench.tools.content_server --workspace DIR [--context DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

from lhbench.envs.content import (
    CHAPTERS_DIR,
    NOTES_FILE,
    PLAN_FILE,
    ChapterPlan,
    PlannedChapter,
    SourceError,
    SourceSet,
    check_citation,
    load_sources,
    parse_citations,
)
from lhbench.envs.content.course import (
    MAX_COURSE_FILE_BYTES,
    SLIDES_DIR,
    course_files,
    read_course_file,
)
from lhbench.envs.content.slides import check_slides as render_slides
from lhbench.envs.content.slides import chromium_path
from lhbench.envs.paths import EscapeError, NotARegularFile, write_beneath
from lhbench.sandbox import Sandbox, get_sandbox

__all__ = ["MAX_READ_LINES", "build_content_server", "main", "slide_sandbox"]

MAX_READ_LINES = 400
MAX_HITS = 100
MAX_NOTE_CHARS = 4_000
MAX_NOTES = 2_000
MAX_QUERY_CHARS = 200


def _resolving(text: str, sources: SourceSet, where: str) -> tuple[int, list[str]]:
    """How many citations ``text`` holds, and the problems of those that do not resolve."""
    cites, malformed = parse_citations(text, where)
    problems = [
        f"{where}:{n}: {raw} is not a citation; write [source_id:L12-L15]" for n, raw in malformed
    ]
    for c in cites:
        res = check_citation(c, sources)
        if res.failed in ("exists", "in_range"):
            problems.append(f"{c.where}: {c.raw}: {res.message}")
    return len(cites), problems


def _write(root: Path, rel: str, text: str) -> None:
    data = text.encode("utf-8")
    if len(data) > MAX_COURSE_FILE_BYTES:
        raise ToolError(f"{rel}: {len(data)} bytes (at most {MAX_COURSE_FILE_BYTES})")
    try:
        write_beneath(root, rel, data)
    except (EscapeError, NotARegularFile, OSError) as exc:
        raise ToolError(f"refused to write {rel}: {exc}") from None


def build_content_server(workspace: Path, context: Path | None = None) -> MCPServer:
    """An MCP server with the content tools over ``context`` (default ``workspace/context``)."""
    root = workspace.resolve()
    context_dir = (context or root / "context").resolve()
    server = MCPServer(
        "lhbench-content",
        instructions="Sources of the data room by line number; record cited notes; write "
        "the chapter plan and chapters. Cite as [source_id:L12-L15].",
    )
    cache: dict[str, SourceSet] = {}

    def sources() -> SourceSet:
        if "s" not in cache:
            try:
                cache["s"] = load_sources(context_dir)
            except SourceError as exc:
                raise ToolError(f"the sources cannot be read: {exc}") from None
        return cache["s"]

    def known(source_id: str) -> SourceSet:
        s = sources()
        if source_id not in s:
            raise ToolError(f"no source {source_id!r}; sources: {', '.join(s.ids)}")
        return s

    @server.tool()
    def list_sources() -> str:
        """Every source of the data room: id, line count, title and original file."""
        s = sources()
        rows = [
            f"{sid}\t{s.line_count(sid)} lines\t{s.records[sid].title}\t({s.records[sid].origin})"
            for sid in s.ids
        ]
        return "\n".join(rows) or "(no sources)"

    @server.tool()
    def read_source(source_id: str, start_line: int = 1, end_line: int | None = None) -> str:
        """Lines start_line..end_line (1-based, inclusive) of a source, numbered like cat -n."""
        s = known(source_id)
        n = s.line_count(source_id)
        start = max(1, start_line)
        end = n if end_line is None else min(end_line, n)
        if start > n:
            raise ToolError(f"{source_id} has {n} lines; start_line {start_line} is past the end")
        if end < start:
            raise ToolError(f"end_line {end_line} is before start_line {start_line}")
        stop = min(end, start + MAX_READ_LINES - 1)
        body = "\n".join(
            f"{i:6d}\t{line}" for i, line in enumerate(s.span(source_id, start, stop), start)
        )
        more = (
            f"\n[lines {stop + 1}-{end} not shown: at most {MAX_READ_LINES} per call]"
            if stop < end
            else ""
        )
        return body + more

    @server.tool()
    def search_sources(query: str, source_id: str | None = None) -> str:
        """Lines containing every word of the query (case-insensitive), as source:Lnn: text."""
        words = query.lower().split()
        if not words or len(query) > MAX_QUERY_CHARS:
            raise ToolError(f"give a query of 1 to {MAX_QUERY_CHARS} characters")
        s = known(source_id) if source_id else sources()
        hits: list[str] = []
        for sid in [source_id] if source_id else s.ids:
            for i, line in enumerate(s.lines[sid], 1):
                low = line.lower()
                if all(w in low for w in words):
                    hits.append(f"{sid}:L{i}: {line[:300]}")
                    if len(hits) >= MAX_HITS:
                        return "\n".join(hits) + f"\n[stopped at {MAX_HITS} hits]"
        return "\n".join(hits) or "(no matches)"

    @server.tool()
    def record_note(text: str, citations: list[str] | None = None) -> str:
        """Record a research note; cite claims inline or in citations as [source_id:L12-L15]."""
        body = " ".join(text.split())
        extra = [c.strip() for c in citations or [] if c.strip()]
        for c in extra:
            cite = c if c.startswith("[") else f"[{c}]"
            if cite not in body:
                body = f"{body} {cite}"
        if not body or len(body) > MAX_NOTE_CHARS:
            raise ToolError(f"a note holds 1 to {MAX_NOTE_CHARS} characters")
        count, problems = _resolving(body, sources(), "note")
        if count == 0:
            raise ToolError("a note needs at least one citation like [source_id:L12-L15]")
        if problems:
            raise ToolError("not recorded: " + "; ".join(problems[:10]))
        existing = read_course_file(root, NOTES_FILE) or ""
        lines = [ln for ln in existing.splitlines() if ln.strip()]
        if len(lines) >= MAX_NOTES:
            raise ToolError(f"at most {MAX_NOTES} notes")
        note_id = f"n{len(lines) + 1}"
        cites, _ = parse_citations(body, "note")
        doc = {"id": note_id, "text": body, "citations": sorted({c.raw for c in cites})}
        _write(
            root,
            NOTES_FILE,
            existing.rstrip("\n") + ("\n" if lines else "") + json.dumps(doc) + "\n",
        )
        return f"recorded {note_id} with {count} citation(s)"

    @server.tool()
    def write_chapter_plan(chapters: list[PlannedChapter]) -> str:
        """Write the course's chapter plan: each chapter's id, title, goal, sources and format."""
        try:
            plan = ChapterPlan(chapters=chapters)
        except ValidationError as exc:
            raise ToolError(f"invalid plan: {exc.errors()[0]['msg']}") from None
        s = sources()
        unknown = sorted({sid for c in plan.chapters for sid in c.sources if sid not in s})
        if unknown:
            raise ToolError(f"unknown sources in the plan: {', '.join(unknown)}")
        _write(root, PLAN_FILE, plan.model_dump_json(indent=2) + "\n")
        return f"wrote {PLAN_FILE} with {len(plan.chapters)} chapter(s)"

    @server.tool()
    def write_chapter(chapter_id: str, markdown: str) -> str:
        """Write a chapter's script (Markdown, every claim cited inline) to course/chapters/."""
        try:
            PlannedChapter(id=chapter_id, title="x")
        except ValidationError:
            raise ToolError(f"bad chapter id {chapter_id!r}: lower case, digits, - and _") from None
        rel = f"{CHAPTERS_DIR}/{chapter_id}.md"
        _write(root, rel, markdown if markdown.endswith("\n") else markdown + "\n")
        count, problems = _resolving(markdown, sources(), rel)
        head = f"wrote {rel} with {count} citation(s)"
        return head + ("; fix: " + "; ".join(problems[:10]) if problems else "; all resolve")

    @server.tool()
    def check_slides(chapter_id: str | None = None) -> str:
        """Render course/slides/<chapter_id>.html (or every deck) and report each slide's fit."""
        decks = course_files(root, SLIDES_DIR, ".html")
        if chapter_id is not None:
            decks = [d for d in decks if d == f"{SLIDES_DIR}/{chapter_id}.html"]
        if not decks:
            raise ToolError(f"no deck in {SLIDES_DIR}/ to check")
        if chromium_path() is None:
            raise ToolError("no Chromium here: the slides cannot be rendered")
        try:
            results = render_slides(root, decks, slide_sandbox(), timeout=120.0)
        except (RuntimeError, ValueError) as exc:
            raise ToolError(f"the decks could not be checked: {exc}") from None
        return "\n".join(
            f"{r.deck} slide {r.index + 1} at {r.viewport}: "
            + ("fits" if r.fits else "DOES NOT FIT: " + "; ".join(r.reasons))
            for r in results
        )

    return server


def slide_sandbox() -> Sandbox | None:
    """None inside lhbench's sandbox (render as a child), else the configured sandbox."""
    if os.environ.get("LHBENCH_IN_SANDBOX") == "1":
        return None
    return get_sandbox()


def main(argv: list[str] | None = None) -> int:
    """Start the content tools on stdio."""
    ap = argparse.ArgumentParser(prog="python -m lhbench.tools.content_server")
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--context", type=Path, default=None, help="default: WORKSPACE/context")
    args = ap.parse_args(argv)
    build_content_server(args.workspace, args.context).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
