"""Capturing a built app in headless Chromium: routes, screenshots, DOM, probes.

For each ground-truth frame: resolve its route (pattern values scraped from the app's
links; the path first, then hash routing ``/#/route``; a fresh page each time; a route
counts as resolved when it renders and differs from a 404 probe), wait for fonts, images
and a quiet DOM, take a full-page screenshot at the frame's width, and extract text
blocks, filled elements, images and icons with their computed styles. Then, per route,
the responsive probe at 375/768/1440 and hover probes of buttons; and the strict server's
answers for the index, its assets and each route.

An agent's app is untrusted code: :func:`capture_sandboxed` runs this module as its own
process in the sandbox (no network; it serves the build on the sandbox's loopback), and
:func:`capture_app` runs it here with a browser the caller owns (for apps you trust:
tests, benchmarks).
"""

from __future__ import annotations

import hashlib
import html.parser
import json
import re
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lhbench.envs import browser
from lhbench.envs.figma.page_js import (
    EXTRACT,
    FIND_TEXT,
    LINKS,
    RESPONSIVE,
    SETTLE,
    STYLE_OF,
)
from lhbench.envs.figma.serve import AppServer
from lhbench.errors import InfrastructureError, MissingDependency
from lhbench.sandbox import Sandbox, run_sandboxed_sync

__all__ = [
    "CHROMIUM_ARGS",
    "CapturePlan",
    "FramePlan",
    "capture_app",
    "capture_sandboxed",
    "chromium_path",
    "launch_browser",
    "resolve_pattern",
]

CHROMIUM_ARGS = [
    *browser.CHROMIUM_ARGS,
    "--disable-sync",
    "--hide-scrollbars",
    "--font-render-hinting=none",
]
PROBE = "/__lhbench_404__"
# two animation frames: a resize's media queries and resize listeners have run
FRAMES_2 = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
NO_MOTION = (
    "*,*::before,*::after{transition:none!important;animation:none!important;"
    "caret-color:transparent!important}"
)


def capture_requirements() -> list[MissingDependency]:
    """What the sandboxed capture needs and is missing here (empty: it can run)."""
    return browser.browser_requirements("the Figma capture", "figma")


def require_capture() -> None:
    """Raise the first missing capture dependency.

    Raises:
        MissingDependency: playwright or Chromium is not installed.
    """
    missing = capture_requirements()
    if missing:
        raise missing[0]


def chromium_path() -> str | None:
    """Debian's headless Chromium (or a full Chromium), if installed."""
    return browser.chromium_path()


@dataclass
class FramePlan:
    """What to capture for one frame."""

    slug: str
    route: str
    width: int
    height: int = 900
    hover_texts: list[tuple[str, float, float]] = field(default_factory=list)


@dataclass
class CapturePlan:
    """Everything the capture needs; plain data, so it can cross into the sandbox."""

    dist: str
    out: str
    frames: list[FramePlan]
    responsive_widths: tuple[int, ...] = (375, 768, 1440)
    quiet_ms: int = 100
    settle_cap_ms: int = 5000
    nav_timeout_ms: int = 20000

    def to_json(self) -> str:
        """JSON text."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> CapturePlan:
        """Back from :meth:`to_json`."""
        doc = json.loads(text)
        doc["frames"] = [
            FramePlan(**{**f, "hover_texts": [tuple(h) for h in f.get("hover_texts", [])]})
            for f in doc["frames"]
        ]
        doc["responsive_widths"] = tuple(doc.get("responsive_widths", (375, 768, 1440)))
        return cls(**doc)


def launch_browser(playwright: Any) -> Any:
    """Chromium with the flags the capture needs.

    Raises:
        RuntimeError: no Chromium is installed.
    """
    exe = chromium_path()
    if exe is None:
        raise RuntimeError(
            "no Chromium found: install Debian's chromium-headless-shell "
            "(apt-get install chromium-headless-shell)"
        )
    return playwright.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)


def resolve_pattern(route: str, links: list[str]) -> str:
    """A concrete path for a route pattern: ``:param`` from a matching link, else ``1``.

    ``*`` becomes the 404 probe; optional markers (``?``) are dropped.
    """
    if route.strip() == "*" or route.endswith("/*"):
        return PROBE
    route = route.replace("?", "")
    if ":" not in route and "*" not in route:
        return route
    parts = [p for p in route.split("/") if p]
    rx = (
        "^/?"
        + "/".join("[^/?#]+" if p.startswith(":") or p == "*" else re.escape(p) for p in parts)
        + "/?$"
    )
    for href in links:
        path = href.split("#", 1)[1] if href.startswith("#") else href
        path = re.sub(r"^https?://[^/]+", "", path).split("?", 1)[0]
        if re.match(rx, path):
            return path if path.startswith("/") else "/" + path
    return "/" + "/".join("1" if p.startswith(":") or p == "*" else p for p in parts)


class _Assets(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "script" and a.get("src"):
            self.urls.append(str(a["src"]))
        if tag == "link" and a.get("href") and "stylesheet" in (a.get("rel") or ""):
            self.urls.append(str(a["href"]))


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except (urllib.error.URLError, OSError):
        return 0


def _strict(dist: Path, routes: list[str]) -> dict[str, Any]:
    """The strict server's answers: index, its scripts and styles, each route."""
    with AppServer(dist, lenient=False) as srv:
        index_status = _status(srv.url + "/")
        parser = _Assets()
        if index_status == 200:
            _status_code, body, _ctype, _fb = srv.resolve("/")
            parser.feed(body.decode("utf-8", "replace"))
        assets = []
        for u in parser.urls:
            if re.match(r"^(https?:)?//", u):
                continue
            full = (
                srv.url + "/" + u.lstrip("./").lstrip("/") if not u.startswith("/") else srv.url + u
            )
            assets.append({"url": u, "status": _status(full)})
        route_status = {r: _status(srv.url + r.split("#", 1)[0]) for r in dict.fromkeys(routes)}
    return {"index_status": index_status, "assets": assets, "routes": route_status}


def _new_page(ctx: Any, events: dict[str, list[Any]]) -> Any:
    page = ctx.new_page()
    page.on("pageerror", lambda e: events["errors"].append(f"pageerror: {e}"))
    page.on(
        "console",
        lambda m: (
            events["errors"].append(f"console.error: {m.text}") if m.type == "error" else None
        ),
    )
    page.on(
        "response",
        lambda r: events["failed"].append(f"{r.status} {r.url}") if r.status >= 400 else None,
    )
    page.on("requestfailed", lambda r: events["failed"].append(f"failed {r.url}"))

    def keep_image(resp: Any) -> None:
        if resp.request.resource_type == "image" and resp.status < 400:
            try:
                events["images"].append((resp.url, hashlib.sha256(resp.body()).hexdigest()))
            except Exception:
                return

    page.on("response", keep_image)
    return page


def _load(page: Any, url: str, plan: CapturePlan) -> tuple[int | None, str | None]:
    try:
        resp = page.goto(url, wait_until="load", timeout=plan.nav_timeout_ms)
    except Exception as exc:
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
    try:
        page.add_style_tag(content=NO_MOTION)
        page.evaluate(SETTLE, [plan.quiet_ms, plan.settle_cap_ms])
    except Exception as exc:
        return (resp.status if resp else None), f"settle: {type(exc).__name__}: {exc}"[:300]
    return (resp.status if resp else None), None


def _text_of(page: Any) -> str:
    try:
        return str(page.evaluate("() => (document.body ? document.body.innerText : '').trim()"))
    except Exception:
        return ""


class _Lazy:
    """The app's links on ``/`` and the 404 probes' texts, loaded only when a route needs them."""

    def __init__(self, ctx: Any, origin: str, plan: CapturePlan) -> None:
        self.ctx, self.origin, self.plan = ctx, origin, plan
        self._links: list[str] | None = None
        self.probes: dict[str, str] = {}

    def links(self) -> list[str]:
        if self._links is None:
            page = _new_page(self.ctx, {"errors": [], "failed": [], "images": []})
            _load(page, self.origin + "/", self.plan)
            try:
                self._links = [str(h) for h in page.evaluate(LINKS)][:500]
            except Exception:  # a page that cannot be read has no links
                self._links = []
            page.close()
        return self._links

    def probe(self, mode: str) -> str:
        if mode not in self.probes:
            url = self.origin + (PROBE if mode == "path" else "/#" + PROBE)
            page = _new_page(self.ctx, {"errors": [], "failed": [], "images": []})
            _load(page, url, self.plan)
            self.probes[mode] = _text_of(page)
            page.close()
        return self.probes[mode]


def capture_app(plan: CapturePlan, browser: Any) -> dict[str, Any]:
    """Capture every frame of ``plan`` with ``browser``; screenshots go to ``plan.out``."""
    dist, out = Path(plan.dist), Path(plan.out)
    (out / "frames").mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    result: dict[str, Any] = {"frames": {}, "responsive": {}}
    with AppServer(dist, lenient=True) as srv:
        ctx = browser.new_context(viewport={"width": 1440, "height": 900}, device_scale_factor=1)
        ctx.set_default_timeout(plan.nav_timeout_ms)
        try:
            lazy = _Lazy(ctx, srv.url, plan)
            for fp in plan.frames:
                result["frames"][fp.slug] = _capture_frame(
                    ctx, srv.url, fp, plan, lazy, out, result["responsive"]
                )
            result["probe"] = lazy.probes
            result["links"] = (lazy._links or [])[:200]
        finally:
            ctx.close()
        result["lenient_fallbacks"] = sorted(
            {f"{r.fallback} {r.path}" for r in srv.log if r.fallback}
        )[:50]
    concrete = [f.get("concrete_route", "/") for f in result["frames"].values()]
    result["strict"] = _strict(dist, ["/", *concrete])
    result["seconds"] = round(time.perf_counter() - t0, 3)
    return result


def _capture_frame(
    ctx: Any,
    origin: str,
    fp: FramePlan,
    plan: CapturePlan,
    lazy: _Lazy,
    out: Path,
    responsive: dict[str, Any],
) -> dict[str, Any]:
    needs_links = ":" in fp.route or "*" in fp.route.rstrip("*")
    concrete = resolve_pattern(fp.route, lazy.links() if needs_links else [])
    candidates = [("path", origin + concrete)]
    if concrete not in ("/", PROBE):
        candidates.append(("hash", origin + "/#" + concrete))
    attempts: list[dict[str, Any]] = []
    chosen: tuple[Any, dict[str, list[Any]], str, str] | None = None
    tried: list[tuple[Any, dict[str, list[Any]], str, str]] = []
    for mode, url in candidates:
        events: dict[str, list[Any]] = {"errors": [], "failed": [], "images": []}
        page = _new_page(ctx, events)
        page.set_viewport_size({"width": fp.width, "height": fp.height})
        status, err = _load(page, url, plan)
        text = _text_of(page)
        nonblank = len(re.sub(r"\s+", "", text)) >= 20
        differs = concrete in ("/", PROBE) or not nonblank or text != lazy.probe(mode)
        attempts.append(
            {
                "mode": mode,
                "url": url,
                "status": status,
                "error": err,
                "chars": len(text),
                "differs_from_404": differs,
            }
        )
        if nonblank and differs and err is None:
            chosen = (page, events, mode, url)
            break
        tried.append((page, events, mode, url))
    resolved = chosen is not None
    if chosen is None:
        chosen = tried.pop(0)
    for p, *_ in tried:
        p.close()
    page, events, mode, url = chosen
    frame: dict[str, Any] = {
        "route": fp.route,
        "concrete_route": concrete,
        "url": url,
        "mode": mode,
        "resolved": resolved,
        "attempts": attempts,
    }
    try:
        shot = out / "frames" / f"{fp.slug}.png"
        page.screenshot(path=str(shot), full_page=True, animations="disabled")
        frame["screenshot"] = str(shot)
        frame.update(page.evaluate(EXTRACT))
        hovers = []
        for text, cx, cy in fp.hover_texts:
            found = page.evaluate(FIND_TEXT, [text, cx, cy])
            if not found:
                hovers.append({"text": text, "found": False, "changed": False})
                continue
            before = page.evaluate(STYLE_OF)
            try:
                page.hover("[data-lhbench-probe]", timeout=3000)
                after = page.evaluate(STYLE_OF)
            except Exception:
                after = before
            hovers.append({"text": text, "found": True, "changed": before != after})
            page.mouse.move(0, 0)
        frame["hover"] = hovers
        if resolved and fp.route not in responsive:
            # the same page, resized: no second load
            widths: dict[str, Any] = {}
            # the frame's own width first: the page is already laid out at it
            order = sorted(plan.responsive_widths, key=lambda w: (w != fp.width, w))
            for w in order:
                if w != fp.width or fp.height != 900:
                    page.set_viewport_size({"width": w, "height": 900})
                    page.evaluate(FRAMES_2)
                widths[str(w)] = page.evaluate(RESPONSIVE)
            responsive[fp.route] = {str(w): widths[str(w)] for w in plan.responsive_widths}
    except Exception as exc:  # a page that crashes mid-capture is a finding
        frame["capture_error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
    frame["errors"] = events["errors"][:50]
    frame["failed_requests"] = events["failed"][:50]
    frame["image_hashes"] = dict(events["images"][:100])
    page.close()
    return frame


def capture_sandboxed(
    plan: CapturePlan, sandbox: Sandbox, *, timeout: float = 600.0
) -> dict[str, Any]:
    """Run the capture in the sandbox (dist read-only, ``plan.out`` writable, no network).

    Raises:
        RuntimeError: the capture process crashed or timed out (with its output's tail).
        InfrastructureError: it could not start here (playwright or Chromium missing).
    """
    out = Path(plan.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "plan.json").write_text(plan.to_json(), encoding="utf-8")
    policy = browser.browser_policy(
        out,
        readable=[Path(plan.dist)],
        timeout=timeout,
        name="lhbench-capture",
        file_mb=512,
        processes=512,
    )
    fin = run_sandboxed_sync(
        sandbox,
        [sys.executable, "-I", "-m", "lhbench.envs.figma.capture", str(out / "plan.json")],
        policy,
    )
    result_file = out / "capture.json"
    if fin.timed_out:
        raise RuntimeError(f"the capture timed out after {timeout:g}s")
    if fin.returncode != 0 or not result_file.is_file():
        err = fin.text("stderr") or fin.text()
        # the capture is lhbench's Python, never the app's: a module it cannot import or a
        # browser it cannot find is this machine's failure, not the app's
        if any(m in err for m in ("No module named", "ModuleNotFoundError", "no Chromium found")):
            require_capture()  # missing here too: say what to install
            raise InfrastructureError(f"the capture could not start: {err.strip()[-300:]}")
        tail = err.strip().splitlines()[-5:]
        raise RuntimeError(f"the capture exited {fin.returncode}: {' | '.join(tail)[-800:]}")
    doc = json.loads(result_file.read_text(encoding="utf-8"))
    if not isinstance(doc, dict):
        raise RuntimeError("the capture wrote no result")
    return doc


def main(argv: list[str] | None = None) -> int:
    """``python -m lhbench.envs.figma.capture PLAN.json``: capture, write capture.json."""
    from playwright.sync_api import sync_playwright

    args = list(sys.argv[1:] if argv is None else argv)
    plan = CapturePlan.from_json(Path(args[0]).read_text(encoding="utf-8"))
    with sync_playwright() as p:
        browser = launch_browser(p)
        try:
            result = capture_app(plan, browser)
        finally:
            browser.close()
    Path(plan.out, "capture.json").write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
