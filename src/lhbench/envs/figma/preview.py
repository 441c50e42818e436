"""App previews for agents: build the workspace app, serve it on 127.0.0.1, and check it.

:class:`PreviewManager` backs the ``create_app_preview`` / ``get_preview_status`` /
``stop_app_preview`` tools. A preview builds the project (in the sandbox: the pack's MCP
server that owns the manager already runs in one, so steps run as its children with
time limits; elsewhere through :mod:`lhbench.sandbox`), serves the build on the
loopback, then opens each route in headless Chromium and reports what LH-Bench's
preview hook reports: uncaught errors (a router nested in a router, a failed import),
blank pages, routes that do not render. It returns the URL when all is well, or a
diagnosis and the next action, as structured JSON. Screenshots are saved in the
workspace under ``.preview/<task_id>/`` so the agent can look at them.

The in-run sandbox has no network: dependencies install only from the npm cache.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from lhbench.envs.figma.build import BuildResult, build_app, in_sandbox
from lhbench.envs.figma.capture import CapturePlan, FramePlan, capture_app, launch_browser
from lhbench.envs.figma.imaging import ink_fraction
from lhbench.envs.figma.manifest import ManifestError, read_ground_truth
from lhbench.envs.figma.serve import AppServer
from lhbench.envs.paths import EscapeError, inside

__all__ = ["PreviewManager"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass
class _Preview:
    task_id: str
    sandbox_id: str
    server: AppServer
    build: BuildResult
    scratch: Path
    files: int
    checks: dict[str, Any]


class PreviewManager:
    """Previews of one workspace, by task id (one running preview per id)."""

    def __init__(
        self,
        workspace: Path,
        *,
        registry: str | None = None,
        cache_dir: Path | None = None,
        build_timeout: float = 180.0,
    ) -> None:
        self.workspace = Path(workspace).resolve()
        self.registry = registry
        self.cache_dir = cache_dir
        self.build_timeout = build_timeout
        self._running: dict[str, _Preview] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        """Stop every preview."""
        for tid in list(self._running):
            self.stop(tid)

    # tools ---------------------------------------------------------------------------------

    def create(self, task_id: str, project_root: str = ".") -> dict[str, Any]:
        """Build and serve the project, check its routes; the URL or a diagnosis."""
        if not _NAME.match(task_id or ""):
            return _error(
                f"invalid task_id {task_id!r}",
                "use letters, digits, '-', '_' or '.' (at most 64)",
            )
        with self._lock:
            if task_id in self._running:
                return {
                    "status": "error",
                    "error": "Sandbox with this name already exists",
                    "next_action": f"call stop_app_preview('{task_id}') first, or use another "
                    "task_id",
                }
        try:
            root = inside(self.workspace, project_root or ".", must_exist=True)
        except (EscapeError, FileNotFoundError) as exc:
            return _error(f"project_root: {exc}", "give a directory inside the project")
        scratch = Path(tempfile.mkdtemp(prefix=f"lhbench-preview-{task_id}-"))
        sandbox = None
        if not in_sandbox():
            from lhbench.sandbox import get_sandbox

            sandbox = get_sandbox()
        build = build_app(
            root,
            scratch,
            sandbox=sandbox,
            cache_dir=self.cache_dir,
            registry=self.registry,
            build_timeout=self.build_timeout,
            install_timeout=self.build_timeout,
        )
        if not build.ok or build.output_dir is None:
            shutil.rmtree(scratch, ignore_errors=True)
            tail = build.steps[-1].tail.strip().splitlines()[-15:] if build.steps else []
            hint = ""
            failed = build.steps[-1].command if build.steps else ""
            if failed.startswith(("npm ci", "npm install")):
                hint = (
                    " The preview has no network: dependencies can only come from the npm "
                    "cache; build with Node's standard library, or vendor what you need."
                )
            return {
                "status": "error",
                "error": f"build failed: {build.reason}",
                "diagnosis": "\n".join(tail)[-3000:] + hint,
                "next_action": "fix the build error, then call create_app_preview again",
            }
        server = AppServer(build.output_dir, lenient=True).start()
        checks = self._check(task_id, root, server)
        files = sum(1 for p in build.output_dir.rglob("*") if p.is_file())
        problems = checks["problems"]
        if problems:
            server.stop()
            shutil.rmtree(scratch, ignore_errors=True)
            return {
                "status": "error",
                "error": "preview checks failed: " + "; ".join(problems[:5]),
                "diagnosis": checks,
                "next_action": "fix these errors, then call create_app_preview again",
            }
        preview = _Preview(task_id, uuid.uuid4().hex[:12], server, build, scratch, files, checks)
        with self._lock:
            self._running[task_id] = preview
        return self._info(preview)

    def status(self, task_id: str) -> dict[str, Any]:
        """The preview's URL and last checks, or not_found."""
        with self._lock:
            preview = self._running.get(task_id)
        if preview is None:
            return {
                "status": "not_found",
                "task_id": task_id,
                "note": "no preview with this task_id is running",
            }
        return self._info(preview)

    def stop(self, task_id: str) -> dict[str, Any]:
        """Stop a preview."""
        with self._lock:
            preview = self._running.pop(task_id, None)
        if preview is None:
            return {
                "status": "not_found",
                "task_id": task_id,
                "note": "no preview with this task_id is running",
            }
        preview.server.stop()
        shutil.rmtree(preview.scratch, ignore_errors=True)
        return {"status": "stopped", "task_id": task_id}

    # internals -----------------------------------------------------------------------------

    @staticmethod
    def _info(p: _Preview) -> dict[str, Any]:
        return {
            "status": "running",
            "preview_url": p.server.url,
            "frontend_url": p.server.url,
            "backend_url": None,
            "task_id": p.task_id,
            "files_count": p.files,
            "sandbox_name": f"preview-{p.task_id}",
            "sandbox_id": p.sandbox_id,
            "checks": p.checks,
            "note": "the URL answers inside the preview's sandbox; the screenshots of each "
            "route are in the project under .preview/",
        }

    def _routes(self, root: Path) -> list[tuple[str, int]]:
        routes: list[tuple[str, int]] = [("/", 1440)]
        for cand in (root / "ground_truth", self.workspace / "ground_truth"):
            try:
                gt = read_ground_truth(cand)
            except ManifestError:
                continue
            for f in gt.frames:
                width = f.viewport[0] if f.viewport else 1440
                if (f.route, width) not in routes:
                    routes.append((f.route, width))
            break
        return routes[:12]

    def _check(self, task_id: str, root: Path, server: AppServer) -> dict[str, Any]:
        from playwright.sync_api import sync_playwright

        shots = self.workspace / ".preview" / task_id
        shutil.rmtree(shots, ignore_errors=True)
        shots.mkdir(parents=True, exist_ok=True)
        frames: list[FramePlan] = []
        for r, w in self._routes(root):
            slug = re.sub(r"[^A-Za-z0-9]+", "-", r).strip("-") or "home"
            if any(f.slug == slug for f in frames):
                slug = f"{slug}-{w}"
            frames.append(FramePlan(slug, r, w, 900 if w >= 600 else 844))
        plan = CapturePlan(
            dist=str(server.root), out=str(shots), frames=frames, responsive_widths=()
        )
        problems: list[str] = []
        routes: list[dict[str, Any]] = []
        try:
            with sync_playwright() as p:
                browser = launch_browser(p)
                try:
                    cap = capture_app(plan, browser)
                finally:
                    browser.close()
        except Exception as exc:  # a browser that cannot start is reported, not raised
            return {"problems": [f"the preview browser failed: {exc}"[:500]], "routes": []}
        for f in frames:
            got = cap["frames"].get(f.slug) or {}
            errors = [e for e in got.get("errors", []) if e.startswith("pageerror")]
            chars = int(got.get("textChars") or 0)
            ink = 1.0
            shot = got.get("screenshot")
            if shot and Path(shot).is_file():
                with Image.open(shot) as im:
                    ink = ink_fraction(np.asarray(im.convert("RGB"))[: f.height] / 255.0)
            blank = got.get("rootChildren") == 0 or chars < 20 or ink < 0.005
            entry = {
                "route": f.route,
                "url": got.get("url"),
                "rendered": bool(got.get("resolved")) and not blank,
                "text_chars": chars,
                "errors": errors[:5],
                "failed_requests": (got.get("failed_requests") or [])[:5],
                "screenshot": str(Path(shot).relative_to(self.workspace)) if shot else None,
            }
            routes.append(entry)
            if errors:
                problems.append(f"{f.route}: uncaught error: {errors[0][:200]}")
            if blank:
                problems.append(f"{f.route}: blank page ({chars} characters of text)")
            elif not got.get("resolved"):
                problems.append(f"{f.route}: the route does not render its own page")
        return {"problems": problems, "routes": routes}


def _error(error: str, next_action: str) -> dict[str, Any]:
    return {"status": "error", "error": error, "next_action": next_action}
