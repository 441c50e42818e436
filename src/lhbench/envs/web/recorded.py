"""The recorded web as the search judge sees it: BM25 search, open a page, find in a page.

Everything comes from the compiled FTS5 index, opened read-only (``mode=ro``, immutable):
nothing here fetches a URL, and a URL that was not captured gets a plain "not in the
recorded web" answer rather than an error the judge might retry against the live web.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from pathlib import Path
from typing import Any

from lhbench.envs.web.corpus import normalize_url

__all__ = ["NOT_RECORDED", "RecordedWeb"]

NOT_RECORDED = "NOT IN THE RECORDED WEB"
MAX_RESULTS = 20
MAX_QUERY_CHARS = 500
PAGE_CHARS = 6000
MAX_MATCHES = 20
_WORD = re.compile(r"\w+", re.UNICODE)


class RecordedWeb:
    """Read-only queries over one compiled corpus index."""

    def __init__(self, index: Path) -> None:
        path = Path(index).resolve()
        if not path.is_file():
            raise FileNotFoundError(f"no corpus index at {path}")
        # the MCP server runs sync tools in worker threads: one connection, one lock
        self._con = sqlite3.connect(
            f"file:{path}?mode=ro&immutable=1", uri=True, check_same_thread=False
        )
        self._con.execute("PRAGMA query_only = ON")
        self._lock = threading.Lock()

    def _rows(self, sql: str, params: tuple[object, ...]) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._con.execute(sql, params).fetchall()

    def close(self) -> None:
        """Close the index."""
        self._con.close()

    def search(self, query: str, limit: int = 8) -> list[tuple[str, str, str, str]]:
        """(url, title, captured_at, snippet) of the best BM25 matches of the query's words.

        The query is reduced to its words, each quoted, joined with OR: FTS5 operators
        and column filters in the judge's query are text, never syntax.
        """
        words = _WORD.findall(query[:MAX_QUERY_CHARS])[:32]
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', "") + '"' for w in words)
        rows = self._rows(
            "SELECT f.url, f.title, p.captured_at, "
            "snippet(pages_fts, 2, '[', ']', ' … ', 16) FROM pages_fts AS f "
            "JOIN pages AS p ON p.url = f.url "
            "WHERE pages_fts MATCH ? ORDER BY bm25(pages_fts, 0.0, 5.0, 1.0) LIMIT ?",
            (match, max(1, min(limit, MAX_RESULTS))),
        )
        return [(str(u), str(t), str(c), str(s)) for u, t, c, s in rows]

    def page(self, url: str) -> tuple[str, str, str] | None:
        """(title, captured_at, text) of a captured page, or None (not captured, or no URL)."""
        try:
            key = normalize_url(url)
        except ValueError:
            return None
        rows = self._rows("SELECT title, captured_at, body FROM pages WHERE url = ?", (key,))
        return None if not rows else (str(rows[0][0]), str(rows[0][1]), str(rows[0][2]))

    def open_url(self, url: str, offset: int = 0) -> str:
        """The page as readable text (a window of it), or the not-recorded answer."""
        page = self.page(url)
        if page is None:
            return (
                f"{NOT_RECORDED}: {url[:300]!r} was not captured. Only pages of the recorded "
                "corpus can be opened; use search to find them."
            )
        title, captured, text = page
        offset = max(0, offset)
        window = text[offset : offset + PAGE_CHARS]
        more = len(text) - offset - len(window)
        tail = f"\n[{more} more characters: call again with offset={offset + len(window)}]"
        return f"Title: {title}\nURL: {normalize_url(url)}\nCaptured: {captured}\n\n{window}" + (
            tail if more > 0 else ""
        )

    def find_in_page(self, url: str, text: str) -> str:
        """The lines of a captured page containing ``text`` (case-insensitive), numbered."""
        page = self.page(url)
        if page is None:
            return f"{NOT_RECORDED}: {url[:300]!r} was not captured."
        needle = text.strip().lower()[:MAX_QUERY_CHARS]
        if not needle:
            return "(give some text to find)"
        hits = [
            f"{n}: {line[:400]}"
            for n, line in enumerate(page[2].splitlines(), 1)
            if needle in line.lower()
        ]
        if not hits:
            return f"(no line of {normalize_url(url)} contains {text[:100]!r})"
        extra = f"\n[{len(hits) - MAX_MATCHES} more]" if len(hits) > MAX_MATCHES else ""
        return "\n".join(hits[:MAX_MATCHES]) + extra
