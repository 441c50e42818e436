"""The recorded web: corpus format, FTS5 index, search / open / find, answers split into items."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest

from lhbench.envs.web import (
    NOT_RECORDED,
    RecordedWeb,
    build_index,
    load_answers,
    load_corpus,
    normalize_url,
    readable_text,
)
from lhbench.errors import PackError
from lhbench.packs import resolve_pack_dir


def write_corpus(d: Path, pages: list[dict], lines: list[str] | None = None) -> Path:
    (d / "pages").mkdir(parents=True, exist_ok=True)
    out = []
    for n, p in enumerate(pages):
        f = p.get("file", f"pages/{n}.html")
        if "html" in p:
            (d / f).write_text(p["html"])
        out.append(
            json.dumps(
                {
                    "url": p["url"],
                    "captured_at": p.get("captured_at", "2026-01-01T00:00:00+00:00"),
                    "file": f,
                }
            )
        )
    (d / "pages.jsonl").write_text("\n".join(lines if lines is not None else out) + "\n")
    return d


PAGES = [
    {
        "url": "https://a.example/brenna/",
        "html": "<html><head><title>Brenna Hut</title><script>var secret=1</script></head>"
        "<body><p>Brenna Hut stands at 2,140 m.</p><p>Open in summer.</p></body></html>",
    },
    {
        "url": "https://mirror.example/wiki/brenna",
        "html": "<html><head><title>Brenna Hut - mirror</title></head>"
        "<body><p>Brenna Hut stands at 2,140 m.</p></body></html>",
    },
    {
        "url": "https://forum.example/t/1",
        "html": "<html><head><title>Thread</title></head><body><p>I heard Brenna Hut is at "
        "2,090 m.</p></body></html>",
    },
    {
        "url": "https://a.example/other",
        "html": "<html><head><title>Other lodge</title></head><body><p>Istra Lodge, 1,900 m."
        "</p></body></html>",
    },
]


@pytest.fixture
def web(tmp_path: Path) -> RecordedWeb:
    pages = load_corpus(write_corpus(tmp_path / "corpus", PAGES))
    w = RecordedWeb(build_index(pages, tmp_path / "idx.sqlite"))
    yield w
    w.close()


def test_normalize_url() -> None:
    assert normalize_url("HTTPS://A.Example:443/x/#frag") == "https://a.example/x"
    assert normalize_url("http://a.example") == "http://a.example/"
    assert normalize_url("http://a.example:8080/p?q=1") == "http://a.example:8080/p?q=1"
    for bad in ("file:///etc/passwd", "javascript:alert(1)", "/relative", "ftp://a.example/"):
        with pytest.raises(ValueError):
            normalize_url(bad)


def test_readable_text_drops_scripts_and_markup() -> None:
    title, text = readable_text(PAGES[0]["html"])
    assert title == "Brenna Hut"
    assert "2,140 m" in text and "secret" not in text and "<p>" not in text


def test_search_ranks_by_bm25_and_returns_near_duplicates(web: RecordedWeb) -> None:
    hits = web.search("Brenna Hut elevation")
    urls = [h[0] for h in hits]
    assert set(urls[:3]) == {
        "https://a.example/brenna",
        "https://mirror.example/wiki/brenna",
        "https://forum.example/t/1",
    }
    assert "https://a.example/other" not in urls  # no query word on it
    assert "[Brenna]" in hits[0][3]  # the snippet marks the match
    assert web.search("Istra")[0][0] == "https://a.example/other"


@pytest.mark.parametrize(
    "query",
    ["title:Brenna", 'Brenna" OR "x', "NEAR(a b)", "*", "Brenna AND", "'; DROP TABLE pages; --"],
)
def test_search_treats_fts_syntax_as_text(web: RecordedWeb, query: str) -> None:
    hits = web.search(query)  # never an FTS5 syntax error
    assert all(h[0].startswith("https://") for h in hits)
    assert web.open_url("https://a.example/brenna").startswith("Title: Brenna Hut")


def test_open_url_and_find_in_page(web: RecordedWeb) -> None:
    page = web.open_url("https://A.example/brenna#top")
    assert "URL: https://a.example/brenna" in page and "2,140 m" in page
    assert "Captured: 2026-01-01" in page
    missing = web.open_url("https://live.example/brenna")
    assert missing.startswith(NOT_RECORDED)
    assert web.find_in_page("https://forum.example/t/1", "2,090").startswith("1: I heard")
    assert "no line" in web.find_in_page("https://forum.example/t/1", "2,140")
    assert web.find_in_page("https://nope.example/", "x").startswith(NOT_RECORDED)


def _problems(tmp_path: Path, pages: list[dict], lines: list[str] | None = None) -> str:
    with pytest.raises(PackError) as exc:
        load_corpus(write_corpus(tmp_path / "c", pages, lines))
    return str(exc.value)


def test_corpus_errors_name_file_and_line(tmp_path: Path) -> None:
    ok = PAGES[0]
    msg = _problems(tmp_path, [ok, {**PAGES[1], "url": "https://a.example/brenna"}])
    assert "pages.jsonl:2" in msg and "already on line 1" in msg
    msg = _problems(tmp_path, [{**ok, "url": "file:///etc/passwd"}])
    assert "pages.jsonl:1" in msg and "http(s)" in msg
    msg = _problems(tmp_path, [{**ok, "captured_at": "2026-01-01T00:00:00"}])
    assert "pages.jsonl:1" in msg and "captured_at" in msg
    msg = _problems(tmp_path, [ok], lines=["{not json"])
    assert "pages.jsonl:1" in msg and "JSON" in msg
    msg = _problems(tmp_path, [ok], lines=[json.dumps({"url": "https://x.example/", "extra": 1})])
    assert "pages.jsonl:1" in msg


def test_corpus_files_outside_the_corpus_are_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.html"
    secret.write_text("<p>TOP-SECRET</p>")
    msg = _problems(tmp_path, [{"url": "https://x.example/", "file": "../secret.html"}])
    assert "outside the corpus" in msg
    c = tmp_path / "c2"
    (c / "pages").mkdir(parents=True)
    os.symlink(secret, c / "pages" / "link.html")
    with pytest.raises(PackError, match="outside the corpus"):
        load_corpus(write_corpus(c, [{"url": "https://x.example/", "file": "pages/link.html"}]))
    # a symlink that stays inside is not followed either
    (c / "pages" / "real.html").write_text("<p>x</p>")
    os.symlink(c / "pages" / "real.html", c / "pages" / "inner.html")
    with pytest.raises(PackError, match="not a regular file"):
        load_corpus(write_corpus(c, [{"url": "https://x.example/", "file": "pages/inner.html"}]))


def test_huge_page_is_refused(tmp_path: Path) -> None:
    big = {"url": "https://x.example/", "html": "<p>" + "a" * 2_100_000 + "</p>"}
    assert "bytes (at most" in _problems(tmp_path, [big])


def test_answers_are_split_into_items_with_checked_ids(tmp_path: Path) -> None:
    task = tmp_path / "task"
    (task / "answers").mkdir(parents=True)
    good = {"answer": "A", "items": [{"id": "i1", "text": "x", "sources": []}]}
    (task / "answers" / "a1.json").write_text(json.dumps(good))
    (task / "answers" / "a1.jsonl").write_text("")
    [ans] = load_answers(task)
    assert ans.id == "a1" and ans.item("i1").text == "x"
    dup = {"answer": "A", "items": [good["items"][0], good["items"][0]]}
    (task / "answers" / "a2.json").write_text(json.dumps(dup))
    (task / "answers" / "a2.jsonl").write_text("")
    (task / "answers" / "a3.json").write_text(json.dumps({"answer": "A", "items": []}))
    (task / "answers" / "a3.jsonl").write_text("")
    (task / "answers" / "a4.json").write_text(json.dumps(good))
    with pytest.raises(PackError) as exc:
        load_answers(task)
    text = str(exc.value)
    assert "a2.json" in text and "appears twice" in text
    assert "a3.json" in text and "items" in text
    assert "a4.json" in text and "no trajectory" in text


def test_bundled_pack_meets_the_issue_sizes() -> None:
    pack = resolve_pack_dir("aj-search-mini")
    pages = load_corpus(pack / "corpus")
    assert len(pages) >= 60
    answers = [a for t in sorted((pack / "tasks").iterdir()) for a in load_answers(t)]
    assert len(answers) >= 10
    assert sum(len(a.items) for a in answers) >= 50
    # near-duplicates (mirrors share the article's text) and contradicting pages
    assert sum(1 for p in pages if "wikimirror.example" in p.url) >= 20
    near = [
        (a.url, b.url)
        for a, b in itertools.pairwise(pages)
        if a.text != b.text and len(set(a.text.splitlines()) & set(b.text.splitlines())) >= 2
    ]
    assert len(near) >= 20
    assert sum(1 for p in pages if "old 1998 survey" in p.text) >= 8
