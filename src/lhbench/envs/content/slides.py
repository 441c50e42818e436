"""Slide decks rendered in headless Chromium, each slide checked for fit.

A deck is an HTML file with one ``<section class="slide">`` (or ``.slide``) per slide.
At each viewport a slide fits when its box is no larger than the viewport, it does not
scroll (scroll size minus client size at most 1 px either way), no descendant with a
box lies outside it by more than 1 px (content clipped by ``overflow: hidden``), and no
visible text is smaller than the minimum font size. A deck with no slide, or one that
throws a page error, fails as a whole.

Agent decks are untrusted: :func:`check_slides` renders them in a fresh process in the
sandbox (the decks read-only, a result directory writable, no network; Chromium itself
also refuses every request that is not to the deck's own file tree).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lhbench.envs import browser as chromium
from lhbench.envs.content.checks import SlideResult
from lhbench.envs.content.worker import run_worker
from lhbench.errors import MissingDependency
from lhbench.sandbox import Sandbox

__all__ = [
    "MIN_FONT_PX",
    "VIEWPORTS",
    "SlidePlan",
    "check_slides",
    "chromium_path",
    "require_slide_renderer",
    "slide_renderer_requirements",
]

VIEWPORTS = ((1280, 720),)
MIN_FONT_PX = 14.0

# Per slide: its box against the viewport, its own scroll overflow, descendants outside
# it (clipped), and visible text under the minimum size. Returns one dict per slide.
_MEASURE_JS = """
(minFont) => {
  const slides = Array.from(document.querySelectorAll('section.slide, .slide'));
  const vw = window.innerWidth, vh = window.innerHeight;
  return slides.map((s, i) => {
    s.scrollIntoView({block: 'start', inline: 'start'});
    const r = s.getBoundingClientRect();
    const reasons = [];
    if (r.width === 0 || r.height === 0) reasons.push('the slide has no box (hidden?)');
    const dh = Math.round(r.height - vh), dw = Math.round(r.width - vw);
    if (r.height > vh + 1) reasons.push(`taller than the viewport by ${dh}px`);
    if (r.width > vw + 1) reasons.push(`wider than the viewport by ${dw}px`);
    const oy = s.scrollHeight - s.clientHeight, ox = s.scrollWidth - s.clientWidth;
    if (oy > 1) reasons.push(`content overflows vertically by ${oy}px`);
    if (ox > 1) reasons.push(`content overflows horizontally by ${ox}px`);
    let clipped = 0, small = 0, smallest = Infinity;
    for (const el of s.querySelectorAll('*')) {
      const b = el.getBoundingClientRect();
      const st = getComputedStyle(el);
      if (b.width === 0 || b.height === 0 || st.visibility === 'hidden') continue;
      const out = b.left < r.left - 1 || b.top < r.top - 1
        || b.right > r.right + 1 || b.bottom > r.bottom + 1;
      if (out) clipped++;
      const ownText = Array.from(el.childNodes)
        .some(n => n.nodeType === 3 && n.textContent.trim());
      const fs = parseFloat(st.fontSize);
      if (ownText && fs < minFont) { small++; smallest = Math.min(smallest, fs); }
    }
    if (clipped) reasons.push(`${clipped} element(s) outside the slide (clipped)`);
    if (small) reasons.push(`${small} text element(s) under ${minFont}px (smallest ${smallest}px)`);
    return {index: i, fits: reasons.length === 0, reasons};
  });
}
"""


def chromium_path() -> str | None:
    """Debian's headless Chromium, if installed."""
    return chromium.chromium_path()


@dataclass
class SlidePlan:
    """What the sandboxed renderer checks: decks (absolute paths) under ``root``."""

    root: str
    decks: list[str]
    viewports: list[tuple[int, int]] = field(default_factory=lambda: list(VIEWPORTS))
    min_font_px: float = MIN_FONT_PX
    settle_ms: int = 300


def slide_renderer_requirements() -> list[MissingDependency]:
    """What rendering slide decks needs and is missing here (empty: it can run)."""
    return chromium.browser_requirements("the content slide checks", "content")


def require_slide_renderer() -> None:
    """Raise the first missing slide-renderer dependency.

    Raises:
        MissingDependency: playwright or Chromium is not installed.
    """
    missing = slide_renderer_requirements()
    if missing:
        raise missing[0]


def _collector(errors: list[str]) -> Callable[[Any], None]:
    def collect(exc: Any) -> None:
        errors.append(str(exc)[:200])

    return collect


def _render(plan: SlidePlan) -> list[dict[str, Any]]:
    """Render every deck at every viewport (runs inside the sandbox)."""
    from playwright.sync_api import sync_playwright

    exe = chromium_path()
    if exe is None:
        raise RuntimeError("no Chromium: install Debian's chromium-headless-shell")
    root = Path(plan.root).resolve()
    out: list[dict[str, Any]] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=chromium.CHROMIUM_ARGS)
        try:
            for deck in plan.decks:
                rel = Path(deck).resolve().relative_to(root).as_posix()
                for w, h in plan.viewports:
                    ctx = browser.new_context(
                        viewport={"width": w, "height": h},
                        reduced_motion="reduce",
                        java_script_enabled=True,
                        offline=True,
                    )
                    page = ctx.new_page()
                    errors: list[str] = []
                    page.on("pageerror", _collector(errors))
                    page.route(
                        "**/*",
                        lambda route: (
                            route.continue_()
                            if route.request.url.startswith(root.as_uri() + "/")
                            else route.abort()
                        ),
                    )
                    vp = f"{w}x{h}"
                    try:
                        page.goto(Path(deck).resolve().as_uri(), wait_until="load", timeout=20_000)
                        page.wait_for_timeout(plan.settle_ms)  # let entry animations settle
                        slides = page.evaluate(_MEASURE_JS, plan.min_font_px)
                    except Exception as exc:  # a deck that cannot render fails, named
                        slides = None
                        errors.append(f"render failed: {type(exc).__name__}: {str(exc)[:200]}")
                    finally:
                        ctx.close()
                    if not slides:
                        why = errors or ['no <section class="slide"> found']
                        out.append(
                            {"deck": rel, "index": 0, "viewport": vp, "fits": False, "reasons": why}
                        )
                        continue
                    for s in slides:
                        reasons = list(s["reasons"]) + [f"page error: {e}" for e in errors]
                        out.append(
                            {
                                "deck": rel,
                                "index": int(s["index"]),
                                "viewport": vp,
                                "fits": bool(s["fits"]) and not errors,
                                "reasons": reasons,
                            }
                        )
        finally:
            browser.close()
    return out


def check_slides(
    root: Path,
    decks: list[str],
    sandbox: Sandbox | None,
    *,
    viewports: tuple[tuple[int, int], ...] = VIEWPORTS,
    min_font_px: float = MIN_FONT_PX,
    timeout: float = 180.0,
) -> list[SlideResult]:
    """Render ``decks`` (paths relative to ``root``) in the sandbox; one result per slide.

    ``sandbox=None`` is for a caller that already runs inside lhbench's sandbox (the
    content tools' server): the renderer is then a plain child process.

    Raises:
        RuntimeError: the renderer crashed or timed out (with its output's tail).
        ValueError: ``sandbox`` is None outside the sandbox.
    """
    if sandbox is None and os.environ.get("LHBENCH_IN_SANDBOX") != "1":
        raise ValueError("check_slides needs a sandbox unless it already runs inside one")
    if not decks:
        return []
    root = root.resolve()
    with tempfile.TemporaryDirectory(prefix="lhbench-slides-") as tmp:
        out = Path(tmp)
        plan = SlidePlan(
            str(root),
            [str(root / d) for d in decks],
            [(int(w), int(h)) for w, h in viewports],
            min_font_px,
        )
        (out / "plan.json").write_text(json.dumps(plan.__dict__), encoding="utf-8")
        policy = chromium.browser_policy(
            out, readable=[root], timeout=timeout, name="lhbench-slides"
        )
        argv = [sys.executable, "-I", "-m", "lhbench.envs.content.slides", str(out / "plan.json")]
        doc = run_worker(
            argv,
            sandbox=sandbox,
            policy=policy,
            timeout=timeout,
            result=out / "slides.json",
            what="slide check",
        )
    return [
        SlideResult(
            deck=str(d["deck"]),
            index=int(d["index"]),
            viewport=str(d["viewport"]),
            fits=bool(d["fits"]),
            reasons=tuple(str(r) for r in d["reasons"]),
        )
        for d in doc
    ]


def main(argv: list[str] | None = None) -> int:
    """``python -m lhbench.envs.content.slides PLAN.json``: render, write slides.json beside it."""
    args = list(sys.argv[1:] if argv is None else argv)
    plan_file = Path(args[0])
    doc = json.loads(plan_file.read_text(encoding="utf-8"))
    doc["viewports"] = [tuple(v) for v in doc["viewports"]]
    result = _render(SlidePlan(**doc))
    (plan_file.parent / "slides.json").write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
