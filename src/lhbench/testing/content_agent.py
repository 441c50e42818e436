"""A scripted course-writing agent for the model stub (a dry run of the tools, not a model).

``python -m lhbench.testing --script lhbench.testing.content_agent:content_agent_script``
serves it. It lists the sources, reads one, searches once per chapter the task names
(``  - <id>: <title>. <instruction>`` lines), records a note citing its first hit, writes
the chapter plan, one chapter per id made of the lines its search found (each cited with
the line number the tool reported) and a one-slide deck per chapter, checks the decks
with ``check_slides``, then finishes.
Everything comes from the conversation in the request: it is stateless. Tools are found
by suffix (harnesses prefix MCP tools with the server's name). Any other request (a
judge's) goes to ``lhbench.testing.scripts.auto_script``.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable

from lhbench.testing.scripts import auto_script
from lhbench.testing.stub import StubReply, StubRequest

__all__ = ["content_agent_script"]

_CHAPTER = re.compile(r"^\s*-\s+([a-z0-9][a-z0-9_\-]*):\s+([^.\n]+)\.\s*(.*)$", re.M)
_HIT = re.compile(r"^([a-z0-9][a-z0-9_.\-]*):L(\d+):\s(.+)$", re.M)
_SKIP = {"explain", "define", "where", "which", "about", "through", "their", "what"}


def _keyword(title: str, instruction: str) -> str:
    words = [
        w for w in re.findall(r"[A-Za-z]{5,}", f"{title} {instruction}") if w.lower() not in _SKIP
    ]
    return max(words, key=len).lower() if words else title.split()[0].lower()


def content_agent_script() -> Callable[[StubRequest], StubReply]:
    """The scripted agent (see module); judge requests fall through to ``auto_script``."""
    fallback = auto_script()

    def history(req: StubRequest) -> list[tuple[str, dict[str, object], str]]:
        results = {
            m.get("tool_call_id"): str(m.get("content", ""))
            for m in req.messages
            if m.get("role") == "tool"
        }
        out = []
        for m in req.messages:
            for c in m.get("tool_calls") or []:
                fn = c.get("function", {})
                out.append(
                    (
                        str(fn.get("name", "")),
                        json.loads(fn.get("arguments") or "{}"),
                        results.get(c.get("id"), ""),
                    )
                )
        return out

    def script(req: StubRequest) -> StubReply:
        def offered(name: str) -> str | None:
            return next((t for t in req.tool_names if t == name or t.endswith("_" + name)), None)

        if offered("list_sources") is None:
            return fallback(req)
        task = next(
            (str(m.get("content", "")) for m in req.messages if m.get("role") == "user"), ""
        )
        chapters = _CHAPTER.findall(task)
        done = history(req)
        results = [r for _n, _a, r in done]
        plan: list[tuple[str, dict[str, object]]] = [("list_sources", {})]
        listed = results[0] if results else ""
        first = listed.split("\t", 1)[0].strip() if listed else ""
        plan.append(("read_source", {"source_id": first or "x", "start_line": 1, "end_line": 30}))
        for _cid, title, instruction in chapters:
            plan.append(("search_sources", {"query": _keyword(title, instruction)}))
        searches = [r for n, _a, r in done if n.endswith("search_sources")]
        hits = [_HIT.findall(r) for r in searches]
        flat = [h for hs in hits for h in hs]
        if flat:
            sid, line, text = flat[0]
            plan.append(("record_note", {"text": f"{text.strip()} [{sid}:L{line}]"}))
        plan.append(
            (
                "write_chapter_plan",
                {"chapters": [{"id": c, "title": t, "goal": i[:300]} for c, t, i in chapters]},
            )
        )
        for k, (cid, title, _i) in enumerate(chapters):
            found = hits[k][:3] if k < len(hits) else []
            body = [f"# {title}", ""] + [f"{t.strip()} [{s}:L{n}]" for s, n, t in found]
            plan.append(("write_chapter", {"chapter_id": cid, "markdown": "\n".join(body) + "\n"}))
            items = "".join(f"<li>{html.escape(t.strip()[:120])}</li>" for _s, _n, t in found)
            deck = (
                "<!doctype html><html><head><meta charset='utf-8'><style>body{margin:0}"
                ".slide{box-sizing:border-box;width:100vw;height:100vh;overflow:hidden;"
                "padding:40px;font:24px sans-serif}</style></head><body>"
                f"<section class='slide'><h1>{html.escape(title)}</h1><ul>{items}</ul>"
                "<p>Written by the lhbench model stub (no model ran).</p></section></body></html>\n"
            )
            plan.append(("write_file", {"path": f"course/slides/{cid}.html", "content": deck}))
        plan.append(("check_slides", {}))
        plan.append(("complete_step", {"step": "course"}))
        steps = [(tool, args) for name, args in plan if (tool := offered(name)) is not None]
        for tool, args in steps[len(done) :]:
            return StubReply.call(tool, args)
        return StubReply(
            content="Wrote the course. (The lhbench model stub answered: no model ran.)"
        )

    return script
