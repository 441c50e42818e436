"""Every page of the web app, over a store with a payload in every field, in real Chromium.

The app (uvicorn on 127.0.0.1) serves a store where run, task, pack, model, version,
rubric, step, tool, artifact, grade, verdict, label, vote, user and annotation text are all
payloads (tests/security/web_hostile.py). Every GET route is read from FastAPI's router and
filled with real ids and with payloads in its path and query parameters
(tests/security/web_routes.py); every URL is loaded signed in as an admin and as an
annotator:

- in Chromium with the pages' Content-Security-Policy switched off (``bypass_csp``), so that
  escaping alone must hold: a ``dialog`` handler, a ``pageerror`` hook and the ``__pwn``
  global every payload calls record anything that ran, and the DOM is searched for what
  only an injection would put there (handler attributes, foreign scripts, ``javascript:``
  URLs, unsandboxed frames, template output);
- in Chromium with the policy on, where a ``securitypolicyviolation`` listener and the
  console record any script the policy had to block (an injection the policy caught is
  still an injection), and a string handed to ``innerHTML`` must be refused (Trusted Types);
- over HTTP, where each HTML page is parsed for the same markers.

A run's own files (``/files/…``, ``/arena/f/…``) hold the payloads as their content by
design; their promise is the sandboxing policy they are served with, so they are opened
with the policy on only, and must run nothing.
"""

from __future__ import annotations

import ast
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import pytest

from lhbench.config import Settings
from lhbench.store import Store
from lhbench.web.deps import WebApp
from lhbench.web.security import PAGE_CSP
from tests.security.web_hostile import SSTI_OUTPUT
from tests.security.web_routes import (
    Hostile,
    browser,
    browser_login,
    hostile,
    http_client,
    missing_fillers,
)

__all__ = ["browser", "hostile"]  # module-scoped fixtures used here

WEB = Path(__file__).resolve().parents[2] / "src" / "lhbench" / "web"
SHOTS = Path(__file__).resolve().parents[2] / ".lhbench" / "screens"

# set up in every frame before any of the page's own scripts
HOOKS = """
(() => {
  const hits = [];
  const record = (what) => {
    try { window.top.__hits.push(String(what)); } catch (e) { hits.push(String(what)); }
  };
  Object.defineProperty(window, "__hits", { value: hits });
  window.__pwn = (n) => record("ran payload " + n);
  document.addEventListener("securitypolicyviolation", (e) =>
    record("policy blocked " + e.violatedDirective + " " + (e.sample || e.blockedURI)));
})();
"""

# what the loaded page holds that only an injection would put there
DOM_CHECK = """
async () => {
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const out = [];
  const bad = /^(javascript|vbscript|data):/i;
  for (const el of document.querySelectorAll("*")) {
    for (const a of el.attributes) {
      const name = a.name.toLowerCase();
      if (name.startsWith("on")) out.push(`${el.tagName} has ${name}`);
      if (name === "srcdoc") out.push(`${el.tagName} has srcdoc`);
      if (["href", "src", "action", "formaction", "data", "xlink:href"].includes(name)
          && bad.test(a.value.replace(/[\\u0000-\\u0020]/g, "")))
        out.push(`${el.tagName} ${name}=${a.value.slice(0, 40)}`);
    }
  }
  for (const s of document.scripts) {
    const url = s.src ? new URL(s.src) : null;
    if (!url || url.origin !== location.origin || !url.pathname.startsWith("/static/"))
      out.push("a script that is not the app's: " + (s.src || s.textContent.slice(0, 40)));
  }
  for (const f of document.querySelectorAll("iframe, frame, embed, object")) {
    const sb = f.getAttribute("sandbox");
    if (f.tagName !== "IFRAME" || sb === null || sb.includes("allow-scripts"))
      out.push(`${f.tagName} without a script-free sandbox`);
  }
  if ((document.body ? document.body.innerText : "").includes("SSTI"))
    out.push("template output");
  // what ran first, then what the DOM holds
  return (window.__hits || []).concat(out);
}
""".replace("SSTI", SSTI_OUTPUT)

# Trusted Types: no script of the page may hand a string to an HTML sink (run after the
# page's own console is read: the refusal it provokes is logged)
TRUSTED_TYPES = """
() => {
  try {
    document.createElement("div").innerHTML = "<b>text</b>";
    return ["innerHTML took a string (no Trusted Types)"];
  } catch (e) {
    return e.name === "TypeError" ? [] : ["innerHTML: " + e];
  }
}
"""


def is_file(response: httpx.Response) -> bool:
    """A run's own bytes, served under the sandboxing policy (not an app page)."""
    return "sandbox" in response.headers.get("content-security-policy", "")


def kind(response: httpx.Response) -> str:
    """``page`` (the app's HTML), ``file`` (a run's file shown inline), or ``other``."""
    inline = not response.headers.get("content-disposition", "").startswith("attachment")
    if is_file(response):
        return "file" if inline else "other"
    html = response.headers.get("content-type", "").startswith("text/html")
    return "page" if html else "other"


class _Markup(HTMLParser):
    """What an app page's HTML holds that only an injection would put there."""

    URL_ATTRS = ("href", "src", "action", "formaction", "data", "xlink:href")

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name.startswith("on") or name == "srcdoc":
                self.found.append(f"<{tag} {name}=…>")
            if name in self.URL_ATTRS and value:
                scheme = re.sub(r"[\x00-\x20]", "", value).split(":", 1)[0].lower()
                if ":" in value and scheme in ("javascript", "vbscript", "data"):
                    self.found.append(f"<{tag} {name}={value[:40]}>")
        if tag == "script":
            src = dict(attrs).get("src") or ""
            if not src.startswith("/static/"):
                self.found.append(f"<script src={src!r}>")


def markup_problems(html: str) -> list[str]:
    """Handler attributes, foreign scripts and script URLs in a page's HTML."""
    p = _Markup()
    p.feed(html)
    return p.found


def _name(hostile: Hostile, role: str) -> str:
    return hostile.world.admin if role == "admin" else hostile.world.annotator


def _named(hostile: Hostile, found: dict[str, list[str]]) -> dict[str, list[str]]:
    """Hits with the field each payload was planted in."""
    names = hostile.world.payloads.names

    def say(x: str) -> str:
        return re.sub(r"ran payload (\d+)", lambda m: f"ran {names.get(int(m[1]))}", x)

    return {url: [say(x) for x in xs] for url, xs in found.items()}


def test_every_get_route_is_loaded(hostile: Hostile) -> None:
    """Enumerated from the router: each GET route has real values for its path parameters."""
    assert missing_fillers(hostile.routes, hostile.world) == []
    paths = {r.path for r in hostile.routes}
    for page in ("/", "/tasks", "/runs", "/runs/{run_id}", "/compare", "/arena", "/judges"):
        assert page in paths
    for route in hostile.routes:
        prefix = route.path.split("{")[0]
        assert any(urlsplit(u).path.startswith(prefix) for u in hostile.urls), route.path
    # the query parameters the issue named carry payloads
    for query in ("/?by=", "/runs?pack=", "/tasks?pack="):
        assert any(u.startswith(query) or f"&{query.split('?')[1]}" in u for u in hostile.urls)


@pytest.mark.parametrize("role", ["admin", "annotator"])
def test_xss_no_page_holds_injected_markup(hostile: Hostile, role: str) -> None:
    """Every HTML page, parsed: no handler, no foreign script, no script URL, no SSTI."""
    problems: dict[str, list[str]] = {}
    pages = 0
    with http_client(hostile.url, _name(hostile, role)) as c:
        for url in hostile.urls:
            r = c.get(url)
            assert r.status_code < 500, (url, r.status_code)
            assert SSTI_OUTPUT not in r.text, url
            if kind(r) != "page":
                continue
            pages += 1
            assert r.headers["content-security-policy"] == PAGE_CSP, url
            found = markup_problems(r.text)
            if found:
                problems[url[:120]] = found[:3]
    assert pages > 40
    assert problems == {}


def _load_all(
    browser: Any, hostile: Hostile, name: str, *, bypass_csp: bool, files: bool
) -> dict[str, list[str]]:
    """Load every app page (or every run file) in one signed-in context: what ran, per URL."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=bypass_csp)
    context.add_init_script(HOOKS)
    page = browser_login(context, hostile.url, name)
    seen: list[str] = []
    page.on("dialog", lambda d: (seen.append(f"dialog {d.type}: {d.message}"), d.dismiss()))
    page.on("pageerror", lambda e: seen.append(f"page error: {e}"))

    def console(m: Any) -> None:
        if m.type == "error" and ("Content Security Policy" in m.text or "Trusted" in m.text):
            seen.append(f"console: {m.text[:200]}")

    page.on("console", console)
    cookies = {c["name"]: c["value"] for c in context.cookies()}
    with httpx.Client(
        base_url=hostile.url, timeout=60, cookies=cookies, follow_redirects=True
    ) as c:
        kinds = {u: kind(c.get(u)) for u in hostile.urls}
    out: dict[str, list[str]] = {}
    loaded = 0
    for url in hostile.urls:
        if kinds[url] != ("file" if files else "page"):
            continue
        loaded += 1
        seen.clear()
        page.goto(hostile.url + url, wait_until="load")
        if urlsplit(url).path.count("/") == 3 and page.locator("#an-sources").count():
            # the annotation tool renders sources, chapters and notes from JSON
            page.locator("#an-sources button.src").first.wait_for()
            for button in page.locator("#an-sources button.src").all():
                button.click()
                page.wait_for_timeout(50)
        if files:
            page.wait_for_timeout(50)
            found = list(page.evaluate("window.__hits || []"))
        else:
            found = list(page.evaluate(DOM_CHECK))
        found = seen + found
        if not files and not bypass_csp:
            found += page.evaluate(TRUSTED_TYPES)
        if found:
            out[url[:120]] = found[:6]
    context.close()
    assert loaded > (5 if files else 40)
    return out


@pytest.mark.parametrize("role", ["admin", "annotator"])
@pytest.mark.parametrize("policy", ["escaping_alone", "with_policy"])
def test_xss_no_payload_runs_on_any_page_in_chromium(
    browser: Any, hostile: Hostile, role: str, policy: str
) -> None:
    """Every page, every role: no dialog, no page error, no payload call, no blocked script."""
    ran = _load_all(
        browser, hostile, _name(hostile, role), bypass_csp=policy == "escaping_alone", files=False
    )
    assert _named(hostile, ran) == {}


def test_xss_run_files_run_no_script_when_opened(browser: Any, hostile: Hostile) -> None:
    """A run's HTML and SVG, opened directly by an admin, stay in their script-free sandbox."""
    ran = _load_all(browser, hostile, hostile.world.admin, bypass_csp=False, files=True)
    assert ran == {}


# the one escaping rule -----------------------------------------------------------------------

# functions that may wrap a computed string as Markup: their input went through an escaper
ESCAPERS = {
    ("render.py", "markdown"),  # markdown-it with raw HTML off and unsafe links refused
    ("render.py", "highlight"),  # Pygments' HTML formatter escapes the code
    # every key and value through html.escape, in element text only (the class names are
    # constants); held to Pygments' own bytes by tests/web/test_render_plain.py
    ("render.py", "tool_input_html"),
}


def _markup_calls(path: Path) -> list[tuple[str, int, str]]:
    """``Markup(x)`` calls whose ``x`` is not a literal, with the enclosing function."""
    tree = ast.parse(path.read_text())
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        for node in ast.walk(fn):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "Markup"
                and node.args
                and not isinstance(node.args[0], ast.Constant)
            ):
                out.append((fn.name, node.lineno, ast.unparse(node)[:60]))
    return out


def test_one_escaping_rule_markup_is_built_only_from_templates_that_escape(
    tmp_path: Path,
) -> None:
    """HTML comes from autoescaped templates and ``Markup.format``; raw Markup only from escapers.

    Jinja escapes every ``{{ }}`` (no ``|safe``, no ``Markup`` reachable from a template, no
    autoescape switched off); Python builds HTML with ``Markup("…{}…").format(value)``,
    which escapes each value; ``Markup(text)`` of a computed string is allowed only where
    an escaper produced the text.
    """
    unsafe = []
    for path in sorted(WEB.glob("*.py")):
        for fn, line, call in _markup_calls(path):
            if (path.name, fn) not in ESCAPERS:
                unsafe.append(f"{path.name}:{line} in {fn}: {call}")
    assert unsafe == []
    for path in sorted((WEB / "templates").glob("*.html")):
        text = path.read_text()
        for pattern in (r"\|\s*safe\b", r"\bMarkup\b", r"autoescape\s+false"):
            assert not re.search(pattern, text), (path.name, pattern)
    with Store.open(f"sqlite:///{tmp_path / 'x.db'}") as store:
        app = WebApp(store=store, settings=Settings(home=tmp_path), secret="s")  # type: ignore[call-arg]
        assert app.templates.env.autoescape is True
        assert "Markup" not in app.templates.env.globals


def test_screenshots_of_hostile_pages(browser: Any, hostile: Hostile) -> None:
    """The pages with payloads everywhere, as an admin sees them, for a reviewer's eye."""
    w = hostile.world
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = browser_login(context, hostile.url, w.admin)
    SHOTS.mkdir(parents=True, exist_ok=True)
    evil = quote(w.evil_run_ids[0], safe="")
    for name, path in (
        ("hostile-overview", "/"),
        ("hostile-runs", "/runs"),
        ("hostile-tasks", "/tasks"),
        ("hostile-run", f"/runs/{evil}"),
        ("hostile-compare", f"/compare?a={quote(w.run_ids[0], safe='')}&b={evil}"),
        ("hostile-judges", "/judges"),
    ):
        page.goto(hostile.url + path)
        # the payloads are on the page, as text
        assert w.payloads.mark(1) in page.inner_text("main") or "zq" in page.inner_text("main")
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    context.close()
