"""Slide fit in headless Chromium, in the sandbox: the reference decks fit; bad slides fail."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from lhbench.envs.content import GroundTruth, SourceSet, check_course, check_slides
from lhbench.envs.content.slides import chromium_path
from lhbench.sandbox import Sandbox

pytestmark = pytest.mark.skipif(
    chromium_path() is None, reason="no Chromium (CI installs Debian's chromium-headless-shell)"
)

STYLE = (
    "<style>body{margin:0}.slide{box-sizing:border-box;width:100vw;height:100vh;"
    "overflow:hidden;padding:40px;font:24px sans-serif}</style>"
)


def _deck(*slides: str, head: str = STYLE) -> str:
    body = "".join(f'<section class="slide">{s}</section>' for s in slides)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'>{head}</head><body>{body}</body></html>"
    )


def test_the_reference_decks_fit_and_a_bad_deck_fails_exactly_slide_fit(
    course: Path, sources: SourceSet, ground_truth: GroundTruth, sandbox: Sandbox
) -> None:
    decks = sorted(
        p.relative_to(course).as_posix() for p in (course / "course/slides").glob("*.html")
    )
    good = check_slides(course, decks, sandbox)
    assert len(good) == 9 and all(r.fits for r in good)  # 3 decks x 3 slides
    tall = "".join(f"<p>Paragraph {i} of far too much text for one slide.</p>" for i in range(60))
    (course / "course/slides/efficiency.html").write_text(_deck("<h1>Fine</h1>", tall))
    results = check_slides(course, decks, sandbox)
    bad = [r for r in results if not r.fits]
    assert [(r.deck, r.index) for r in bad] == [("course/slides/efficiency.html", 1)]
    assert any("clipped" in why for why in bad[0].reasons)
    report = check_course(course, sources, ground_truth, slides=results)
    assert report.failed_checks() == {"slide_fit"}
    assert report.findings[0].where == "course/slides/efficiency.html#slide-2@1280x720"


def test_wide_content_small_text_and_a_deck_without_slides_fail(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    (tmp_path / "wide.html").write_text(
        _deck("<div style='width:2400px'>wide</div>", head=STYLE.replace("overflow:hidden;", ""))
    )
    (tmp_path / "small.html").write_text(_deck("<p style='font-size:9px'>tiny print</p>"))
    (tmp_path / "none.html").write_text("<html><body><p>no slides here</p></body></html>")
    (tmp_path / "ok.html").write_text(_deck("<h1>Fits</h1><p>Short.</p>"))
    res = {
        r.deck: r
        for r in check_slides(
            tmp_path, ["wide.html", "small.html", "none.html", "ok.html"], sandbox
        )
    }
    assert any("horizontally" in w for w in res["wide.html"].reasons)
    assert any("under 14.0px" in w or "under 14px" in w for w in res["small.html"].reasons)
    assert not res["none.html"].fits
    assert res["ok.html"].fits and not res["wide.html"].fits and not res["small.html"].fits


def test_a_deck_cannot_reach_the_network_or_files_outside(tmp_path: Path, sandbox: Sandbox) -> None:
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{srv.server_port}/beacon.png"
        deck = _deck(
            f"<img src='{url}'><script>fetch('{url}?js')</script><iframe src='file:///etc/hostname'></iframe>"
        )
        (tmp_path / "d.html").write_text(deck)
        [res] = check_slides(tmp_path, ["d.html"], sandbox)
    finally:
        srv.shutdown()
    assert hits == []
    assert res.deck == "d.html"


def test_a_page_that_never_stops_is_bounded(tmp_path: Path, sandbox: Sandbox) -> None:
    (tmp_path / "loop.html").write_text(_deck("<h1>x</h1><script>while(true){}</script>"))
    with pytest.raises(RuntimeError, match=r"timed out|exited"):
        check_slides(tmp_path, ["loop.html"], sandbox, timeout=20)
