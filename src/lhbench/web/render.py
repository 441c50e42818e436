"""Rendering what runs produced: artifacts by type, and transcripts with tool calls folded.

Nothing from a run is ever trusted as markup. Markdown is rendered with raw HTML off (it is
shown as text) and unsafe link schemes refused; code and data are highlighted by Pygments,
which escapes them; images are ``<img>`` elements pointing at the artifact route; an HTML
artifact is shown only in a sandboxed frame (no scripts, an opaque origin) or as source.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from html import escape as html_escape
from json.encoder import encode_basestring as encode_json_string
from typing import Any, Literal, Protocol

from markdown_it import MarkdownIt
from markupsafe import Markup
from pygments import highlight as _pyg_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_by_name, get_lexer_for_filename
from pygments.util import ClassNotFound

from lhbench.schema import Artifact, Role, StepKind, Trajectory
from lhbench.stats import ErrorEvent
from lhbench.stats.taxonomy import StepLike

__all__ = [
    "Block",
    "RenderedArtifact",
    "ShownStep",
    "code_css",
    "final_answer",
    "fold_transcript",
    "highlight",
    "markdown",
    "render_artifact",
    "short",
    "tool_input_html",
]

MAX_TEXT = 300_000
MAX_CSV_ROWS = 200
IMAGE_TYPES = frozenset(
    {"image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml", "image/avif"}
)


@lru_cache(maxsize=1)
def _md() -> MarkdownIt:
    # raw HTML off: "<script>" in a run's notes is text; javascript: links are refused
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(
        ["table", "strikethrough"]
    )


def markdown(text: str) -> Markup:
    """Markdown as safe HTML (raw HTML shown as text, unsafe links dropped)."""
    return Markup(_md().render(text[:MAX_TEXT]))


_FORMATTER = HtmlFormatter(nowrap=True)


def code_css() -> str:
    """The highlighter's stylesheet, scoped to ``.hl``."""
    formatter: Any = HtmlFormatter(style="friendly")
    return str(formatter.get_style_defs(".hl"))


def _lexer(name: str | None, text: str) -> Lexer:
    if name:
        try:
            lexer: Lexer = get_lexer_for_filename(name, text[:2000], stripnl=False)
            return lexer
        except ClassNotFound:
            pass
    plain: Lexer = TextLexer(stripnl=False)
    return plain


@lru_cache(maxsize=64)
def _named_lexer(language: str) -> Lexer:
    # looking a lexer up by name scans pygments' registry: once per language, not per block
    lexer: Lexer = get_lexer_by_name(language, stripnl=False)
    return lexer


def _plain(text: str) -> str:
    """What Pygments' text lexer and ``_FORMATTER`` make of ``text``, without their machinery.

    A transcript page highlights thousands of tool outputs as plain text; this is the same
    string (one unstyled token: the lexer's input preprocessing, then escaped) at a
    fraction of the cost. ``tests/web/test_render_plain.py`` holds it to Pygments' output.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.endswith("\n"):
        text += "\n"
    return html_escape(text, quote=False)


def highlight(text: str, filename: str | None = None, language: str | None = None) -> Markup:
    """Source code as highlighted, escaped HTML (``<pre class="hl">``)."""
    text = text[:MAX_TEXT]
    if not filename and not language:
        body = _plain(text)
    else:
        try:
            lexer = _named_lexer(language) if language else _lexer(filename, text)
        except ClassNotFound:
            lexer = TextLexer(stripnl=False)
        body = _pyg_highlight(text, lexer, _FORMATTER)
    # one Markup of the joined string: the same text as adding three Markups, a third the work
    return Markup('<pre class="hl"><code>' + body + "</code></pre>")


_JSON_SCALAR_CLASS = {str: "s2", int: "mi", bool: "kc", type(None): "kc"}
_JSON_CONST = {True: "true", False: "false", None: "null"}


def tool_input_html(tool_input: dict[str, Any] | None) -> Markup:
    """A tool call's input as indented JSON, highlighted (what ``highlight`` makes of it).

    Most tool inputs are flat: names to strings, integers, booleans or null. Their
    highlighted form is written here directly, span for span what Pygments' JSON lexer and
    ``_FORMATTER`` make of ``json.dumps(..., indent=2)``, at a fraction of the cost (a
    transcript page shows 1,500 of them); anything else goes through Pygments.
    ``tests/web/test_render_plain.py`` holds the two to the same bytes.
    """
    value = tool_input or {}
    if not value:
        return Markup('<pre class="hl"><code><span class="p">{}</span>\n</code></pre>')
    lines = ['<pre class="hl"><code><span class="p">{</span>\n']
    size = 4
    last = len(value) - 1
    for i, (k, v) in enumerate(value.items()):
        cls = _JSON_SCALAR_CLASS.get(type(v))
        if cls is None or type(k) is not str:
            return _json_highlight(value)
        if cls == "s2":
            text = encode_json_string(v)
        else:  # by type: 1 == True, so the constants are not looked up for an integer
            text = _JSON_CONST[v] if cls == "kc" else int.__repr__(v)
        key = encode_json_string(k)
        size += len(key) + len(text) + 8
        lines.append(
            f'<span class="w">  </span><span class="nt">{html_escape(key, quote=False)}</span>'
            f'<span class="p">:</span><span class="w"> </span>'
            f'<span class="{cls}">{html_escape(text, quote=False)}</span>'
            + ('<span class="p">,</span>\n' if i != last else "\n")
        )
    if size >= MAX_TEXT:  # highlight would cut it: as it does
        return _json_highlight(value)
    lines.append('<span class="p">}</span>\n</code></pre>')
    return Markup("".join(lines))


def _json_highlight(value: dict[str, Any]) -> Markup:
    return highlight(json.dumps(value, indent=2, ensure_ascii=False), language="json")


def short(value: object, limit: int = 90) -> str:
    """One line of at most ``limit`` characters."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


Kind = Literal["image", "markdown", "html", "code", "table", "text", "binary", "omitted", "missing"]


@dataclass
class RenderedArtifact:
    """One artifact, ready for a template."""

    name: str
    kind: Kind
    body: Markup = field(default_factory=Markup)
    source: Markup | None = None
    src: str | None = None
    note: str | None = None
    size: int = 0
    media_type: str = ""


def _text_of(a: Artifact) -> str | None:
    if a.content is None:
        return None
    head = a.content[:8192]
    if b"\x00" in head:
        return None
    try:
        return a.content.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _csv_table(text: str) -> Markup | None:
    try:
        rows = list(csv.reader(io.StringIO(text[:MAX_TEXT])))
    except csv.Error:
        return None
    if not rows:
        return None
    head, body = rows[0], rows[1 : MAX_CSV_ROWS + 1]
    out = [Markup('<table class="data"><thead><tr>')]
    out += [Markup("<th>{}</th>").format(h) for h in head]
    out.append(Markup("</tr></thead><tbody>"))
    for r in body:
        out.append(Markup("<tr>") + Markup("").join(Markup("<td>{}</td>").format(c) for c in r))
        out.append(Markup("</tr>"))
    out.append(Markup("</tbody></table>"))
    return Markup("").join(out)


def render_artifact(a: Artifact | None, name: str, url: str | None) -> RenderedArtifact:
    """An artifact for display; ``url`` serves its bytes (sandboxed) when it has any.

    ``a`` None means the run did not produce a file of that name.
    """
    if a is None:
        return RenderedArtifact(name, "missing", note="Not produced by this run.")
    base = RenderedArtifact(name, "binary", src=url, size=a.size, media_type=a.media_type)
    if a.status == "omitted" or a.content is None:
        base.kind = "omitted"
        base.note = a.note or "Listed without content."
        base.src = None
        return base
    if a.status == "truncated":
        base.note = a.note or "Truncated."
    lower = name.lower()
    if a.media_type in IMAGE_TYPES:
        base.kind = "image"
        return base
    text = _text_of(a)
    if text is None:
        base.note = base.note or f"Binary file ({a.media_type})."
        return base
    if a.media_type == "text/html" or lower.endswith((".html", ".htm")):
        base.kind = "html"
        base.source = highlight(text, "page.html")
        return base
    if a.media_type == "text/markdown" or lower.endswith((".md", ".markdown")):
        base.kind = "markdown"
        base.body = markdown(text)
        base.source = highlight(text, "notes.md")
        return base
    if lower.endswith(".csv") or a.media_type == "text/csv":
        table = _csv_table(text)
        if table is not None:
            base.kind = "table"
            base.body = table
            base.source = highlight(text, None)
            return base
    if lower.endswith(".json") or a.media_type == "application/json":
        with contextlib.suppress(ValueError):
            text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        base.kind = "code"
        base.body = highlight(text, language="json")
        return base
    base.kind = "code"
    base.body = highlight(text, name)
    if len(a.content) > MAX_TEXT:
        base.note = (base.note or "") + f" Showing the first {MAX_TEXT:,} characters."
    return base


class ShownStep(StepLike, Protocol):
    """What a transcript shows of a step: a ``Step``, or the store's ``StepView``."""

    @property
    def index(self) -> int:
        """The step's place in its run."""
        ...

    @property
    def role(self) -> Role:
        """Who took the step."""
        ...


def final_answer(steps: Trajectory | Sequence[ShownStep]) -> str | None:
    """The agent's last message (an imported run's answer), or None."""
    for s in reversed(steps.steps if isinstance(steps, Trajectory) else steps):
        if s.role == Role.ASSISTANT and s.kind == StepKind.MESSAGE and s.content.strip():
            return s.content
    return None


@dataclass
class Block:
    """A transcript entry: one step, or a tool call folded with its result(s)."""

    kind: str
    steps: list[ShownStep]
    title: str = ""
    summary: str = ""
    failed: bool = False
    error: ErrorEvent | None = None
    recovers: int | None = None
    body: Markup | None = None
    input: Markup | None = None
    outputs: list[tuple[ShownStep, Markup]] = field(default_factory=list)

    @property
    def index(self) -> int:
        """The first step's index."""
        return self.steps[0].index

    @property
    def anchors(self) -> list[int]:
        """Every step index the block covers."""
        return [s.index for s in self.steps]


def _input_summary(tool_input: dict[str, Any] | None) -> str:
    if not tool_input:
        return ""
    for key in ("command", "cmd", "path", "file_path", "filename", "query", "url", "pattern"):
        value = tool_input.get(key)
        if isinstance(value, str | list) and value:
            return short(" ".join(value) if isinstance(value, list) else value)
    return short(json.dumps(tool_input, ensure_ascii=False))


def _step_failed(s: ShownStep) -> bool:
    return s.is_error or s.kind == StepKind.ERROR or (s.exit_code not in (None, 0))


def _title(s: ShownStep) -> str:
    """A block's title, as the rendered branches below give it."""
    if s.kind == StepKind.TOOL_CALL:
        return s.tool_name or "tool"
    if s.kind == StepKind.TOOL_RESULT:
        return s.tool_name or "tool result"
    if s.kind == StepKind.HOOK:
        return s.tool_name or "hook"
    if s.kind == StepKind.MESSAGE:
        return s.role.value
    return {StepKind.THINKING: "thinking", StepKind.COMPACTION: "context compacted"}.get(
        s.kind, "error"
    )


_PLAIN_KINDS = {
    StepKind.MESSAGE: "message",
    StepKind.THINKING: "thinking",
    StepKind.HOOK: "hook",
    StepKind.COMPACTION: "compaction",
}


def fold_transcript(
    steps: Sequence[ShownStep], events: Sequence[ErrorEvent], *, render: range | None = None
) -> list[Block]:
    """Steps as blocks: each tool call with its results, errors marked with their recovery.

    ``render``: only the blocks at these positions get their bodies highlighted and
    rendered (a page shows a window of a long transcript; the rest are counted, with
    their titles). ``steps`` in order, each at its ``index``.
    """
    by_step = {e.step: e for e in events}
    recovers = {e.recovered_at: e.step for e in events if e.recovered_at is not None}
    results: dict[str, list[ShownStep]] = {}
    call_ids = {s.tool_call_id for s in steps if s.kind == StepKind.TOOL_CALL and s.tool_call_id}
    for s in steps:
        if s.kind == StepKind.TOOL_RESULT and s.tool_call_id in call_ids:
            results.setdefault(s.tool_call_id or "", []).append(s)
    folded = {s.index for rs in results.values() for s in rs}
    blocks: list[Block] = []
    for s in steps:
        if s.index in folded:
            continue
        if render is not None and len(blocks) not in render:  # counted, not rendered
            tool = s.kind in (StepKind.TOOL_CALL, StepKind.TOOL_RESULT)
            outs = results.get(s.tool_call_id or "", []) if s.kind == StepKind.TOOL_CALL else []
            b = Block(
                "tool" if tool else _PLAIN_KINDS.get(s.kind, "error"),
                [s, *outs],
                title=_title(s),
            )
        elif s.kind == StepKind.TOOL_CALL:
            outs = results.get(s.tool_call_id or "", [])
            b = Block(
                "tool",
                [s, *outs],
                title=s.tool_name or "tool",
                summary=_input_summary(s.tool_input),
                input=tool_input_html(s.tool_input),
                outputs=[(o, highlight(o.tool_output or o.content or "", None)) for o in outs],
            )
            if s.content.strip():
                b.body = markdown(s.content)
        elif s.kind == StepKind.TOOL_RESULT:
            b = Block(
                "tool",
                [s],
                title=s.tool_name or "tool result",
                outputs=[(s, highlight(s.tool_output or s.content or "", None))],
            )
        elif s.kind == StepKind.MESSAGE:
            b = Block("message", [s], title=s.role.value, body=markdown(s.content))
        elif s.kind == StepKind.THINKING:
            b = Block(
                "thinking",
                [s],
                title="thinking",
                summary=short(s.content),
                body=markdown(s.content),
            )
        elif s.kind == StepKind.HOOK:
            b = Block(
                "hook",
                [s],
                title=s.tool_name or "hook",
                summary=short(s.content),
                body=highlight(s.content, None),
            )
        elif s.kind == StepKind.COMPACTION:
            b = Block(
                "compaction",
                [s],
                title="context compacted",
                summary=short(s.content),
                body=markdown(s.content),
            )
        else:
            b = Block(
                "error",
                [s],
                title="error",
                summary=short(s.content or s.tool_output or ""),
                body=highlight(s.content or s.tool_output or "", None),
            )
        b.failed = any(_step_failed(x) for x in b.steps)
        for x in b.steps:
            if x.index in by_step and b.error is None:
                b.error = by_step[x.index]
            if x.index in recovers and b.recovers is None:
                b.recovers = recovers[x.index]
        blocks.append(b)
    return blocks
