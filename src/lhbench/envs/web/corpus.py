"""A recorded web: the pages a search task's answers were made from, as a pack stores them.

A search pack keeps its corpus at ``corpus/pages.jsonl`` (one page a line: ``url``,
``captured_at`` with a timezone, ``file`` relative to ``corpus/``, optional ``title``) and
the HTML files it names. Loading checks every line and names the file and line of the
first thing wrong: URLs must be http(s) and unique after normalisation, files must stay
inside ``corpus/`` and be regular files under a size cap. The corpus is then compiled
into a SQLite FTS5 index (BM25 ranking) that the judge's tools open read-only.
"""

from __future__ import annotations

import json
import sqlite3
import stat
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from bs4 import BeautifulSoup
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from lhbench.errors import PackError, Problem

__all__ = [
    "CORPUS_FILE",
    "MAX_PAGES",
    "MAX_PAGE_BYTES",
    "RecordedPage",
    "build_index",
    "load_corpus",
    "normalize_url",
    "readable_text",
]

CORPUS_FILE = "pages.jsonl"
MAX_PAGE_BYTES = 2_000_000
MAX_PAGES = 50_000
MAX_LINE_BYTES = 20_000


class _PageLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1, max_length=2000)
    captured_at: AwareDatetime
    file: str = Field(min_length=1, max_length=500)
    title: str | None = Field(default=None, max_length=500)


@dataclass(frozen=True)
class RecordedPage:
    """One captured page: its URL (normalised), when it was captured, its title and text."""

    url: str
    captured_at: datetime
    title: str
    text: str


def normalize_url(url: str) -> str:
    """The form a URL is stored and looked up under.

    Lower-case scheme and host, no default port, no fragment, no trailing slash (except
    the root path). Raises ValueError for anything but an absolute http(s) URL.
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an absolute http(s) URL: {url[:200]!r}")
    host = parts.hostname.lower()
    port = parts.port
    if port is not None and (scheme, port) not in (("http", 80), ("https", 443)):
        host = f"{host}:{port}"
    path = parts.path or "/"
    if len(path) > 1:
        path = path.rstrip("/")
    return urlunsplit((scheme, host, path, parts.query, ""))


def readable_text(html: str) -> tuple[str, str]:
    """(title, text) of an HTML page: scripts, styles and markup dropped, one block a line."""
    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style", "noscript", "template", "iframe", "object"]):
        tag.decompose()
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    body = soup.body or soup
    lines = [ln.strip() for ln in body.get_text("\n").splitlines()]
    return title, "\n".join(ln for ln in lines if ln)


def _read_page(corpus_dir: Path, rel: str) -> str:
    """The page file's text; it must be a regular file inside ``corpus_dir`` under the cap."""
    path = (corpus_dir / rel).resolve()
    root = corpus_dir.resolve()
    if Path(rel).is_absolute() or root not in path.parents:
        raise ValueError(f"file {rel!r} is outside the corpus directory")
    st = (corpus_dir / rel).lstat()
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"file {rel!r} is not a regular file (symlinks are not followed)")
    if st.st_size > MAX_PAGE_BYTES:
        raise ValueError(f"file {rel!r} has {st.st_size} bytes (at most {MAX_PAGE_BYTES})")
    return (corpus_dir / rel).read_bytes().decode("utf-8", errors="replace")


def load_corpus(corpus_dir: Path) -> list[RecordedPage]:
    """Every page of a pack's ``corpus/`` directory, checked.

    Raises:
        PackError: naming ``pages.jsonl`` and the line of each problem.
    """
    index = corpus_dir / CORPUS_FILE
    if not index.is_file():
        raise PackError([Problem(index, "missing: a search pack's corpus lists its pages here")])
    pages: list[RecordedPage] = []
    seen: dict[str, int] = {}
    problems: list[Problem] = []
    with index.open("rb") as fh:
        for n, raw in enumerate(fh, 1):
            if len(raw) > MAX_LINE_BYTES:
                problems.append(Problem(index, f"line longer than {MAX_LINE_BYTES} bytes", n))
                continue
            if not raw.strip():
                continue
            if len(pages) >= MAX_PAGES:
                problems.append(Problem(index, f"more than {MAX_PAGES} pages", n))
                break
            try:
                line = _PageLine.model_validate(json.loads(raw))
                url = normalize_url(line.url)
                if url in seen:
                    raise ValueError(f"URL {url} is already on line {seen[url]}")
                title, text = readable_text(_read_page(corpus_dir, line.file))
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                problems.append(Problem(index, f"not a JSON object: {exc}", n))
                continue
            except ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(p) for p in err["loc"]) or None
                problems.append(Problem(index, err["msg"], n, where))
                continue
            except (ValueError, OSError) as exc:
                problems.append(Problem(index, str(exc), n))
                continue
            seen[url] = n
            pages.append(RecordedPage(url, line.captured_at, line.title or title or url, text))
    if problems:
        raise PackError(problems)
    if not pages:
        raise PackError([Problem(index, "the corpus has no pages")])
    return pages


def build_index(pages: list[RecordedPage], out: Path) -> Path:
    """Compile pages into a SQLite FTS5 index at ``out`` (written whole, then renamed)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.unlink(missing_ok=True)
    con = sqlite3.connect(tmp)
    try:
        con.executescript(
            """
            CREATE TABLE pages (url TEXT PRIMARY KEY, title TEXT NOT NULL,
                                captured_at TEXT NOT NULL, body TEXT NOT NULL);
            CREATE VIRTUAL TABLE pages_fts USING fts5(
                url UNINDEXED, title, body, tokenize = 'porter unicode61');
            """
        )
        con.executemany(
            "INSERT INTO pages VALUES (?, ?, ?, ?)",
            [(p.url, p.title, p.captured_at.isoformat(), p.text) for p in pages],
        )
        con.execute("INSERT INTO pages_fts (url, title, body) SELECT url, title, body FROM pages")
        con.commit()
    finally:
        con.close()
    tmp.replace(out)
    return out
