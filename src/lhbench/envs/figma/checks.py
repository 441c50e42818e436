"""Output checks of a built Figma-to-code app against its ground truth (LH-Bench's output tier).

:func:`check_app` builds the app (in the sandbox, with time limits), serves it strictly
and leniently, captures every ground-truth frame's route in headless Chromium (in the
sandbox too, unless the caller passes a browser for an app it trusts), and measures:

- **build** and **deploy** (strict static serving; lenient with SPA and asset fallbacks);
- **routes**: path, then hash routing, a fresh page each; a frame whose route renders
  nothing or only the 404 probe's page is unresolved;
- **blank pages** (no element in ``#root``, under 20 characters of text, or under 0.5%
  ink in the first viewport) and **ground-truth leakage** (an image whose bytes are a GT
  PNG, a large image that looks like the frame, a GT file named in the app's files, or
  a page with almost no text whose edges match the frame): a blank or leaking frame
  scores 0 on every visual measure and is flagged;
- the fidelity measures of :mod:`lhbench.envs.figma.metrics` and
  :mod:`lhbench.envs.figma.imaging`, responsive checks at 375/768/1440, hover probes of
  components with a Hover variant, and design-token coverage of the app's theme files.

The report becomes two labels: the quality pass (:meth:`CheckReport.verdict`, fidelity at
least the calibrated threshold: LH-Bench's "quality ≥ 4 of 5"; see
:mod:`lhbench.envs.figma.fidelity`) and ``figma-deploy`` (:meth:`CheckReport.deployed`:
built, deployed, routes render, nothing leaks), plus a programmatic grade on the
``figma-checks`` rubric (:meth:`CheckReport.grade`).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from lhbench.envs.figma.build import DEFAULT_REGISTRY, BuildResult, build_app
from lhbench.envs.figma.capture import CapturePlan, FramePlan, capture_app, capture_sandboxed
from lhbench.envs.figma.design import FrameDesign, Node, find_node, frame_design
from lhbench.envs.figma.fidelity import (
    DEPLOY_DEFINITION,
    PASS_DEFINITION,
    Fidelity,
    frame_fidelity,
)
from lhbench.envs.figma.imaging import (
    band_metrics,
    edges,
    gray,
    ink_fraction,
    palette,
    palette_coverage,
    phash_distance,
    to_array,
)
from lhbench.envs.figma.manifest import GroundTruth, GtFrame, read_ground_truth
from lhbench.envs.figma.metrics import (
    DESIGN_MEASURES,
    IMAGE_MEASURES,
    FrameScores,
    score_frame,
)
from lhbench.envs.figma.tokens import TokenReport, app_theme, design_tokens, token_coverage
from lhbench.envs.levels import measured_grade, programmatic_identity, share_level
from lhbench.sandbox import Sandbox
from lhbench.schema import (
    Grade,
    JudgeIdentity,
    Rubric,
    TierKind,
)

__all__ = [
    "CHECKS_VERSION",
    "CheckReport",
    "FrameCheck",
    "check_app",
    "checks_identity",
    "find_design",
    "level",
]

CHECKS_VERSION = "figma-checks/2"  # 2: pass is the fidelity threshold; skipped ≠ 0
ANALYSIS_WIDTH = 480
_TEXT_SUFFIXES = {
    ".html",
    ".htm",
    ".js",
    ".mjs",
    ".cjs",
    ".jsx",
    ".ts",
    ".tsx",
    ".css",
    ".json",
    ".vue",
    ".svelte",
    ".md",
}


level = share_level


def checks_identity() -> JudgeIdentity:
    """Who graded: these checks, at this version."""
    return programmatic_identity(
        "figma-checks",
        CHECKS_VERSION,
        {"analysis_width": ANALYSIS_WIDTH, "band_css": 200, "de_max": 20},
    )


@dataclass
class FrameCheck:
    """One ground-truth frame: where it was found, whether it counts, and its scores."""

    name: str
    node_id: str
    slug: str
    route: str
    width: int
    url: str = ""
    mode: str = ""
    resolved: bool = False
    blank: bool = False
    blank_reasons: list[str] = field(default_factory=list)
    leak: bool = False
    leak_reasons: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    scores: FrameScores = field(default_factory=FrameScores)
    screenshot: str | None = None
    gt_image: str | None = None
    note: str = ""

    @property
    def gated(self) -> bool:
        """Blank or leaking: every visual measure is 0."""
        return self.blank or self.leak

    @property
    def route_ok(self) -> bool:
        """The route resolved, rendered, and threw no uncaught error."""
        return (
            self.resolved
            and not self.blank
            and not any(e.startswith("pageerror") for e in self.errors)
        )

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON."""
        sc = self.scores
        return {
            "name": self.name,
            "node_id": self.node_id,
            "route": self.route,
            "url": self.url,
            "mode": self.mode,
            "width": self.width,
            "resolved": self.resolved,
            "route_ok": self.route_ok,
            "blank": self.blank,
            "blank_reasons": self.blank_reasons,
            "leak": self.leak,
            "leak_reasons": self.leak_reasons,
            "errors": self.errors[:10],
            "failed_requests": self.failed_requests[:10],
            "screenshot": self.screenshot,
            "gt_image": self.gt_image,
            "note": self.note,
            "scores": {
                "text_recall": _r(sc.text_recall),
                "text_precision": _r(sc.text_precision),
                "text_sim": _r(sc.text_sim),
                "block_match": _r(sc.block_match),
                "position": _r(sc.position),
                "position_dc": _r(sc.position_dc),
                "order_tau": _r(sc.order_tau),
                "text_color": _r(sc.text_color),
                "text_color_d2c": _r(sc.text_color_d2c),
                "fill_color": _r(sc.fill_color),
                "typography": _r(sc.typography),
                "typography_parts": {k: round(v, 4) for k, v in sc.typography_parts.items()},
                "asset_coverage": _r(sc.asset_coverage),
                "broken_images": round(sc.broken_images, 4),
                "components": f"{sc.component_matched}/{sc.component_total}",
                "component_coverage": _r(sc.component_coverage),
                "band_edge_f1": _r(sc.band_edge_f1),
                "band_ssim": _r(sc.band_ssim),
                "height_ratio": _r(sc.height_ratio),
                "palette": _r(sc.palette),
                "interaction": _r(sc.interaction),
                "aggregate": _r(sc.aggregate()),
                "skipped": dict(sc.skipped),
            },
            "findings": {
                "missing_texts": sc.missing_texts[:15],
                "color_outliers": sc.color_outliers[:10],
                "fill_outliers": sc.fill_outliers[:10],
                "missing_assets": sc.missing_assets[:10],
            },
        }


def _r(v: float | None) -> float | None:
    return None if v is None else round(v, 4)


def _mean(values: list[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return float(np.mean(got)) if got else None


@dataclass
class CheckReport:
    """Everything the checks found about one app."""

    app_dir: str
    gt_dir: str
    file_key: str | None
    build: BuildResult
    frames: list[FrameCheck] = field(default_factory=list)
    deploy: dict[str, Any] = field(default_factory=dict)
    responsive: dict[str, Any] = field(default_factory=dict)
    responsive_score: float | None = None
    tokens: TokenReport | None = None
    leaks_in_files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    capture_error: str | None = None

    @property
    def deploy_ok(self) -> bool:
        """Strict index and assets load, and at least one route renders."""
        return bool(self.deploy.get("ok"))

    def skipped(self) -> dict[str, str]:
        """Measures skipped on some frame for lack of ground-truth data, and why.

        ``{measure: "reason (k of n frames)"}``; a skipped measure is left out of every
        mean (never shown as 0).
        """
        reasons: dict[str, dict[str, int]] = {}
        for f in self.frames:
            for m, why in f.scores.skipped.items():
                reasons.setdefault(m, {}).setdefault(why, 0)
                reasons[m][why] += 1
        n = len(self.frames)
        return {
            m: "; ".join(f"{why} ({k} of {n} frames)" for why, k in whys.items())
            for m, whys in reasons.items()
        }

    def summary(self) -> dict[str, float | None]:
        """Means over frames (gated frames count as 0; skipped measures are left out)."""
        fs = [f.scores for f in self.frames]
        matched = sum(s.component_matched for s in fs)
        total = sum(s.component_total for s in fs)
        return {
            "frames": float(len(fs)),
            "routes_ok": float(sum(f.route_ok for f in self.frames)),
            "text_recall": _mean([s.text_recall for s in fs]),
            "text_precision": _mean([s.text_precision for s in fs]),
            "position_dc": _mean([s.position_dc for s in fs]),
            "text_color": _mean([s.text_color for s in fs]),
            "fill_color": _mean([s.fill_color for s in fs]),
            "typography": _mean([s.typography for s in fs]),
            "asset_coverage": _mean([s.asset_coverage for s in fs]),
            "component_coverage": matched / total if total else None,
            "band_edge_f1": _mean([s.band_edge_f1 for s in fs]),
            "band_ssim": _mean([s.band_ssim for s in fs]),
            "palette": _mean([s.palette for s in fs]),
            "interaction": _mean([s.interaction for s in fs]),
            "responsive": self.responsive_score,
            "aggregate": _mean([s.aggregate() for s in fs]),
        }

    def deployed(self) -> bool:
        """The ``figma-deploy`` label: built, deployed, every route renders, nothing leaks.

        Says the app runs; it is not the quality pass (:meth:`passed`).
        """
        return (
            self.build.ok
            and self.deploy_ok
            and bool(self.frames)
            and all(f.route_ok and not f.leak for f in self.frames)
        )

    def fidelity(self) -> Fidelity:
        """Mean frame aggregate over frames with ground-truth data (see :mod:`.fidelity`)."""
        return frame_fidelity(self.frames)

    def verdict(self, threshold: float | None = None) -> bool | None:
        """LH-Bench's pass (quality ≥ 4 of 5) as lhbench measures it; None: not measurable.

        Fails when the build failed or a frame leaks the ground truth; otherwise passes
        when the fidelity is at least ``threshold`` (default: the mode's, see
        :class:`~lhbench.envs.figma.fidelity.Fidelity`). None when the ground truth gives no
        measure for any frame (no Figma file and no ground-truth image).
        """
        if not self.build.ok or any(f.leak for f in self.frames):
            return False
        fid = self.fidelity()
        if fid.score is None:
            return None
        return fid.score >= (fid.threshold if threshold is None else threshold)

    def passed(self) -> bool:
        """The quality label: :meth:`verdict` is a pass (undecided counts as not passed)."""
        return self.verdict() is True

    def detail(self) -> str:
        """One line for a label."""
        s = self.summary()
        if not self.build.ok:
            return f"build failed: {self.build.reason}"
        parts = [
            self.fidelity().describe(),
            f"routes {int(s['routes_ok'] or 0)}/{len(self.frames)}",
            f"deploy {'ok' if self.deploy_ok else 'FAILED'}",
        ]
        for key in ("text_recall", "position_dc", "fill_color", "band_edge_f1", "aggregate"):
            if s[key] is not None:
                parts.append(f"{key} {s[key]:.2f}")
        skipped = sorted(k for k in self.skipped() if k in s and s[k] is None)
        if skipped:
            parts.append("skipped (no ground-truth data): " + ", ".join(skipped))
        flagged = [f"{f.name}: {'blank' if f.blank else 'leak'}" for f in self.frames if f.gated]
        if flagged:
            parts.append("flagged " + "; ".join(flagged))
        return ", ".join(parts)

    def dimension_values(self) -> dict[str, tuple[float | None, str]]:
        """The figma-checks rubric's dimensions: measured share and its evidence."""
        s = self.summary()
        fs = [f.scores for f in self.frames]
        comp = ", ".join(
            f"{f.name} {f.scores.component_matched}/{f.scores.component_total}" for f in self.frames
        )
        layout = _mean([s["position_dc"], s["band_edge_f1"]])
        colour = _mean([s["text_color"], s["fill_color"], s["palette"]])
        missing = [t for f in fs for t in f.missing_texts][:8]
        return {
            "component_coverage": (
                s["component_coverage"],
                f"matched/total per frame: {comp}"
                + (f"; missing texts: {missing}" if missing else ""),
            ),
            "layout_accuracy": (
                layout,
                f"position_dc {_fmt(s['position_dc'])}, band edge F1 {_fmt(s['band_edge_f1'])}, "
                f"height ratios {[_r(f.height_ratio) for f in fs]}",
            ),
            "color_accuracy": (
                colour,
                f"text colour {_fmt(s['text_color'])}, fill colour {_fmt(s['fill_color'])}, "
                f"palette {_fmt(s['palette'])}; outliers "
                f"{[o for f in fs for o in f.color_outliers + f.fill_outliers][:6]}",
            ),
            "typography_accuracy": (
                s["typography"],
                "; ".join(
                    f"{fr.name}: "
                    + ", ".join(f"{k} {v:.2f}" for k, v in fr.scores.typography_parts.items())
                    for fr in self.frames
                ),
            ),
            "asset_display": (
                s["asset_coverage"],
                f"asset coverage {_fmt(s['asset_coverage'])}; missing "
                f"{[a for f in fs for a in f.missing_assets][:8]}; broken image share "
                f"{_fmt(_mean([f.broken_images for f in fs]))}",
            ),
            "visual_fidelity": (
                s["band_edge_f1"],
                f"band edge F1 {_fmt(s['band_edge_f1'])}, band SSIM {_fmt(s['band_ssim'])}",
            ),
            "responsive_behavior": (
                self.responsive_score,
                json.dumps(self._responsive_problems())[:600],
            ),
            "interaction_fidelity": (
                s["interaction"],
                "elements of components with a Hover variant whose style changes on hover: "
                + "; ".join(f"{fr.name} {_fmt(fr.scores.interaction)}" for fr in self.frames),
            ),
        }

    def _responsive_problems(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for route, widths in self.responsive.items():
            for w, r in widths.items():
                if not isinstance(r, dict):
                    out.setdefault(route, []).append(f"{w}: {r}")
                    continue
                bad = _responsive_issues(r)
                if bad:
                    out.setdefault(route, []).append(f"{w}: {', '.join(bad)}")
        return out

    def grade(self, run_id: str, rubric: Rubric, *, repeat: int = 0) -> Grade:
        """The programmatic grade on ``rubric``'s output tier (``figma-checks``)."""
        values = dict(self.dimension_values())
        skipped = self.skipped()
        for d in rubric.tier(TierKind.OUTPUT).dimensions:
            value, evidence = values.get(d.id, (None, "not measured by the checks"))
            why = [f"{m}: {skipped[m]}" for m in _DIMENSION_MEASURES.get(d.id, ()) if m in skipped]
            if value is None and why:
                evidence = "skipped for lack of ground-truth data: " + "; ".join(why)
            if not self.build.ok:
                value, evidence = 0.0, f"the build failed: {self.build.reason}"
            values[d.id] = (value, evidence)
        return measured_grade(
            run_id,
            rubric,
            values,
            judge=checks_identity(),
            binary_cut=0.5,
            raw_output=json.dumps(self.as_dict()),
            repeat=repeat,
            latency_s=sum(self.seconds.values()),
            evidence_chars=1500,
            unmeasured="not measurable",
        )

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON (``lhbench figma check --json``)."""
        return {
            "app_dir": self.app_dir,
            "gt_dir": self.gt_dir,
            "figma_file_key": self.file_key,
            "passed": self.verdict(),
            "pass_definition": PASS_DEFINITION,
            "fidelity": _r(self.fidelity().score),
            "pass_threshold": self.fidelity().threshold,
            "deployed": self.deployed(),
            "deploy_definition": DEPLOY_DEFINITION,
            "detail": self.detail(),
            "build": self.build.as_dict(),
            "deploy": self.deploy,
            "frames": [f.as_dict() for f in self.frames],
            "summary": {k: _r(v) for k, v in self.summary().items()},
            "skipped": self.skipped(),
            "responsive": self.responsive,
            "responsive_score": _r(self.responsive_score),
            "tokens": self.tokens.as_dict() if self.tokens else None,
            "leaks_in_files": self.leaks_in_files,
            "warnings": self.warnings,
            "capture_error": self.capture_error,
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
        }


_DIMENSION_MEASURES = {
    "component_coverage": ("text_recall", "asset_coverage"),
    "layout_accuracy": ("position_dc", "band_edge_f1"),
    "color_accuracy": ("text_color", "fill_color", "palette"),
    "typography_accuracy": ("typography",),
    "asset_display": ("asset_coverage",),
    "visual_fidelity": ("band_edge_f1",),
    "interaction_fidelity": ("interaction",),
}


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def _responsive_issues(r: dict[str, Any]) -> list[str]:
    bad = []
    if r.get("overflow"):
        bad.append("horizontal overflow")
    if r.get("overlaps"):
        bad.append(f"{r['overlaps']} overlapping text boxes")
    if r.get("clipped"):
        bad.append(f"{r['clipped']} clipped texts")
    if r.get("minFont") is not None and r["minFont"] < 12:
        bad.append(f"text at {r['minFont']}px")
    return bad


def find_design(gt: GroundTruth, design: Path | None = None) -> tuple[Node | None, str | None]:
    """The Figma file for the ground truth: given, or found beside it; else a warning.

    ``design`` may be a ``file.json``, a directory holding one, or a fixture store
    (``<store>/<file_key>/file.json``). Without it, the ground-truth directory and its
    parents are searched for ``figma/<file_key>/file.json`` (a pack's layout),
    ``<file_key>/file.json``, ``file.json`` or ``design.json``.
    """
    key = gt.file_key or ""
    candidates: list[Path] = []
    if design is not None:
        design = Path(design)
        candidates += [design, design / "file.json", design / key / "file.json"]
    else:
        for d in [gt.root, *list(gt.root.parents)[:4]]:
            candidates += [d / "figma" / key / "file.json", d / key / "file.json"]
        candidates += [gt.root / "file.json", gt.root / "design.json"]
    for c in candidates:
        if c.is_file():
            try:
                doc = json.loads(c.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                return (
                    None,
                    f"{c}: not a readable Figma file ({exc}); text and layout checks skipped",
                )
            if isinstance(doc, dict) and isinstance(doc.get("document"), dict):
                return doc, None
    where = str(design) if design is not None else f"beside {gt.root}"
    return None, (
        f"no Figma file for {key or 'the manifest'} found {where}: the checks that need "
        "the design's nodes (texts, fills, assets, components) are skipped"
    )


def _hover_targets(doc: Node, frame: FrameDesign) -> list[tuple[str, float, float]]:
    comps = doc.get("components") or {}
    sets = doc.get("componentSets") or {}
    hover_sets = {
        c.get("componentSetId")
        for c in comps.values()
        if c.get("componentSetId") in sets and "hover" in str(c.get("name", "")).lower()
    }
    texts = {t.node_id: t for t in frame.texts}
    out = []
    for inst in frame.instances:
        comp = comps.get(inst.component_id or "")
        if not comp or comp.get("componentSetId") not in hover_sets:
            continue
        label = next((texts[t].text for t in inst.texts if t in texts), None)
        if label:
            cx, cy = inst.box[0] + inst.box[2] / 2, inst.box[1] + inst.box[3] / 2
            out.append((label, cx, cy))
    return out[:12]


def _files_naming(roots: list[Path], names: set[str]) -> list[str]:
    """``relative path: name`` for text files under ``roots`` that name a GT file."""
    hits: list[str] = []
    pattern = re.compile("|".join([r"ground_truth/", *(re.escape(n) for n in sorted(names))]), re.I)
    for root in roots:
        if not root.is_dir():
            continue
        for p in sorted(root.rglob("*")):
            if len(hits) >= 20:
                return hits
            if "node_modules" in p.parts or p.is_symlink() or not p.is_file():
                continue
            if p.suffix.lower() not in _TEXT_SUFFIXES or p.stat().st_size > 4 << 20:
                continue
            text = p.read_text(encoding="utf-8", errors="replace")
            m = pattern.search(text)
            if m:
                hits.append(f"{p.relative_to(root).as_posix()}: {m.group(0)}")
    return hits


def _data_url_sha(src: str) -> str | None:
    m = re.match(r"data:image/[\w.+-]+;base64,(.*)$", src or "", re.S)
    if not m:
        return None
    try:
        return hashlib.sha256(base64.b64decode(m.group(1))).hexdigest()
    except ValueError:
        return None


def check_app(
    app_dir: Path,
    gt_dir: Path,
    *,
    design: Path | None = None,
    work_dir: Path | None = None,
    sandbox: Sandbox | None = None,
    browser: Any = None,
    registry: str | None = DEFAULT_REGISTRY,
    cache_dir: Path | None = None,
    build_timeout: float = 180.0,
    install_timeout: float = 300.0,
    capture_timeout: float = 900.0,
    built: BuildResult | None = None,
) -> CheckReport:
    """Build, serve, capture and score ``app_dir`` against the ground truth in ``gt_dir``.

    ``browser`` (a Playwright browser) captures in this process: only for apps you trust.
    Otherwise the capture runs in ``sandbox`` (default: :func:`lhbench.sandbox.get_sandbox`).
    ``built`` reuses an earlier build of the same app (benchmarks, tests).

    Raises:
        ManifestError: the ground truth has no usable manifest.
        MissingDependency: playwright, Chromium or npm is not installed (before anything
            runs), so the check is no score.
        InfrastructureError: the npm registry could not be reached, or the capture could
            not start.
    """
    from lhbench.envs.figma.capture import require_capture
    from lhbench.sandbox import get_sandbox

    t_all = time.perf_counter()
    gt = read_ground_truth(Path(gt_dir))
    doc, warn = find_design(gt, design)
    work = Path(work_dir or tempfile.mkdtemp(prefix="lhbench-figma-")).absolute()
    work.mkdir(parents=True, exist_ok=True)
    if browser is None:
        # a capture that cannot run here is infrastructure, never a failed deploy or a 0
        require_capture()
    if sandbox is None and (browser is None or built is None):
        sandbox = get_sandbox()
    report = CheckReport(
        app_dir=str(app_dir),
        gt_dir=str(gt_dir),
        file_key=gt.file_key,
        build=built or BuildResult(False, None, work),
        warnings=list(gt.warnings) + ([warn] if warn else []),
    )
    t0 = time.perf_counter()
    if built is None:
        report.build = build_app(
            Path(app_dir),
            work / "build",
            sandbox=sandbox,
            cache_dir=cache_dir,
            registry=registry,
            build_timeout=build_timeout,
            install_timeout=install_timeout,
        )
    report.seconds["build"] = time.perf_counter() - t0
    designs: dict[str, FrameDesign | None] = {}
    plans: list[FramePlan] = []
    slugs: dict[str, GtFrame] = {}
    for f in gt.frames:
        node = find_node(doc["document"], f.node_id) if doc and f.node_id else None
        fd = frame_design(node, doc.get("components")) if node is not None and doc else None
        slug = f.slug
        while slug in slugs:
            slug += "-2"
        slugs[slug] = f
        designs[slug] = fd
        width = round(fd.width) if fd else (f.viewport[0] if f.viewport else 0)
        if not width and f.image is not None:
            with Image.open(f.image) as im:
                width = round(im.width / 2)
        height = f.viewport[1] if f.viewport and f.viewport[1] else (844 if width < 600 else 900)
        hover = _hover_targets(doc, fd) if doc and fd else []
        plans.append(FramePlan(slug, f.route, width or 1440, height, hover))
        report.frames.append(
            FrameCheck(
                name=f.name,
                node_id=f.node_id,
                slug=slug,
                route=f.route,
                width=width or 1440,
                gt_image=str(f.image) if f.image else None,
                note="" if fd else "no Figma node for this frame: image measures only",
            )
        )
    if not report.build.ok or report.build.output_dir is None:
        for fc in report.frames:
            fc.note = "not captured: the build failed"
            fc.scores = _design_totals(designs[fc.slug], slugs[fc.slug]).zero()
        report.deploy = {"ok": False, "reason": "the build failed"}
        report.seconds["total"] = time.perf_counter() - t_all
        return report
    dist = report.build.output_dir
    t0 = time.perf_counter()
    plan = CapturePlan(dist=str(dist), out=str(work / "capture"), frames=plans)
    try:
        if browser is not None:
            cap = capture_app(plan, browser)
        else:
            assert sandbox is not None
            cap = capture_sandboxed(plan, sandbox, timeout=capture_timeout)
    except (RuntimeError, OSError, ValueError) as exc:
        report.capture_error = str(exc)
        report.deploy = {"ok": False, "reason": f"the capture failed: {exc}"}
        for fc in report.frames:
            fc.scores = _design_totals(designs[fc.slug], slugs[fc.slug]).zero()
        report.seconds["capture"] = time.perf_counter() - t0
        report.seconds["total"] = time.perf_counter() - t_all
        return report
    report.seconds["capture"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    gt_pngs = [p for p in gt.root.rglob("*.png") if p.is_file()]
    gt_hashes = {hashlib.sha256(p.read_bytes()).hexdigest() for p in gt_pngs}
    frame_files = {Path(f.gt_image).name for f in report.frames if f.gt_image}
    app_src = [dist] + [p for p in (Path(app_dir) / "src", Path(app_dir) / "public") if p.is_dir()]
    report.leaks_in_files = _files_naming(app_src, frame_files)
    for fc in report.frames:
        _score(
            fc,
            cap["frames"].get(fc.slug) or {},
            designs[fc.slug],
            slugs[fc.slug],
            gt_hashes,
            report.leaks_in_files,
        )
    report.seconds["score"] = time.perf_counter() - t0
    report.responsive = cap.get("responsive") or {}
    checks = [
        r for widths in report.responsive.values() for r in widths.values() if isinstance(r, dict)
    ]
    report.responsive_score = (
        sum(1 for r in checks if not _responsive_issues(r)) / len(checks) if checks else None
    )
    strict = cap.get("strict") or {}
    assets = strict.get("assets") or []
    bad_assets = [a for a in assets if a.get("status") != 200]
    rendered = [f for f in report.frames if f.resolved and not f.blank]
    report.deploy = {
        "ok": strict.get("index_status") == 200 and not bad_assets and bool(rendered),
        "strict": strict,
        "asset_404_rate": len(bad_assets) / len(assets) if assets else 0.0,
        "lenient": {
            "routes_rendered": len(rendered),
            "fallbacks_used": cap.get("lenient_fallbacks") or [],
        },
        "strict_route_failures": sorted(
            r for r, st in (strict.get("routes") or {}).items() if st != 200
        ),
    }
    if doc is not None:
        frames = [find_node(doc["document"], f.node_id) for f in gt.frames if f.node_id]
        named = {k for k, v in (doc.get("styles") or {}).items() if v.get("styleType") == "FILL"}
        report.tokens = token_coverage(
            design_tokens([f for f in frames if f is not None], named), app_theme(Path(app_dir))
        )
    report.seconds["capture_inner"] = float(cap.get("seconds") or 0.0)
    report.seconds["total"] = time.perf_counter() - t_all
    return report


def _to_css(img: Image.Image, width: int) -> Image.Image:
    """A ground-truth image at one CSS px per pixel (box-reduced first when 2x or more)."""
    if img.width == width:
        return img
    factor = img.width // width
    if factor >= 2 and img.width % width == 0:
        img = img.reduce(factor)
        if img.width == width:
            return img
    return img.resize(
        (width, max(1, round(img.height * width / img.width))), Image.Resampling.LANCZOS
    )


@functools.lru_cache(maxsize=8)
def _reference(
    path: str, size: int, mtime_ns: int, width: int
) -> tuple[
    Image.Image,
    np.ndarray[Any, Any],
    np.ndarray[Any, Any],
    list[tuple[np.ndarray[Any, Any], float]],
]:
    """A ground-truth frame at CSS size, at the analysis width, its edges and palette.

    Cached by file identity (path, size, mtime): a task's frames are the same for every
    run checked against them, and decoding a 2x frame is a large share of a check.
    """
    del size, mtime_ns  # part of the cache key only
    with Image.open(path) as im:
        css = _to_css(im, width).convert("RGB")
    small = to_array(css, ANALYSIS_WIDTH)
    small.setflags(write=False)
    ref_edges = edges(gray(small))
    ref_edges.setflags(write=False)
    return css, small, ref_edges, palette(small)


_NO_DESIGN = "no Figma file or node for this frame (image-only mode)"
_NO_IMAGE = "no ground-truth image for this frame"


def _design_totals(fd: FrameDesign | None, gtf: GtFrame | None = None) -> FrameScores:
    s = FrameScores()
    if fd is None:
        s.skip(_NO_DESIGN, *DESIGN_MEASURES)
    if gtf is not None and gtf.image is None:
        s.skip(_NO_IMAGE, *IMAGE_MEASURES)
    if fd is not None:
        s.component_total = len(fd.texts) + len(fd.images) + len(fd.icons) + len(fd.instances)
        s.missing_texts = [t.text[:80] for t in fd.texts][:30]
    return s


def _score(
    fc: FrameCheck,
    cap: dict[str, Any],
    fd: FrameDesign | None,
    gtf: GtFrame,
    gt_hashes: set[str],
    leaks_in_files: list[str],
) -> None:
    fc.url, fc.mode, fc.resolved = (
        cap.get("url", ""),
        cap.get("mode", ""),
        bool(cap.get("resolved")),
    )
    fc.errors = list(cap.get("errors") or [])
    fc.failed_requests = list(cap.get("failed_requests") or [])
    if cap.get("capture_error"):
        fc.errors.append(f"capture: {cap['capture_error']}")
    shot = cap.get("screenshot")
    cand_img: Image.Image | None = None
    if shot and Path(shot).is_file():
        fc.screenshot = shot
        with Image.open(shot) as im:
            cand_img = im.convert("RGB") if im.mode != "RGB" else im.copy()
    ref_img: Image.Image | None = None
    ref_small: np.ndarray[Any, Any] | None = None
    ref_edges: np.ndarray[Any, Any] | None = None
    ref_palette: list[tuple[np.ndarray[Any, Any], float]] | None = None
    if gtf.image is not None:
        st = gtf.image.stat()
        ref_img, ref_small, ref_edges, ref_palette = _reference(
            str(gtf.image), st.st_size, st.st_mtime_ns, fc.width
        )
    cand_css = np.asarray(cand_img) if cand_img is not None else None
    ref_css = np.asarray(ref_img) if ref_img is not None else None
    view_h = 900 if fc.width >= 600 else 844
    # blank: nothing mounted, (almost) no text, or no ink in the first viewport
    if cap.get("rootChildren") == 0:
        fc.blank_reasons.append("#root has no element children")
    if int(cap.get("textChars") or 0) < 20:
        fc.blank_reasons.append(f"{int(cap.get('textChars') or 0)} characters of text")
    if cand_css is not None:
        ink = ink_fraction(cand_css[:view_h] / 255.0)
        if ink < 0.005:
            fc.blank_reasons.append(f"ink {ink:.2%} of the first viewport")
    else:
        fc.blank_reasons.append("no screenshot")
    fc.blank = bool(fc.blank_reasons)
    # leakage
    for url, digest in (cap.get("image_hashes") or {}).items():
        if digest in gt_hashes:
            fc.leak_reasons.append(f"loads a ground-truth PNG byte for byte: {url[-120:]}")
    for img in cap.get("images") or []:
        digest = _data_url_sha(str(img.get("src", "")))
        if digest and digest in gt_hashes:
            fc.leak_reasons.append("shows a ground-truth PNG as a data URL")
    if leaks_in_files:
        fc.leak_reasons.append(f"the app's files name ground-truth files: {leaks_in_files[:3]}")
    viewport_area = fc.width * view_h
    if cand_css is not None and ref_css is not None:
        whole, top = None, None
        for img in cap.get("images") or []:
            w, h = float(img.get("w", 0)), float(img.get("h", 0))
            if w * min(h, view_h) < 0.5 * viewport_area:
                continue
            x, y = max(0, int(img["x"])), max(0, int(img["y"]))
            crop = cand_css[y : y + int(h), x : x + int(w)] / 255.0
            if crop.shape[0] < 16 or crop.shape[1] < 16:
                continue
            if whole is None or top is None:
                whole = ref_css / 255.0
                top = whole[:view_h]
            d = min(phash_distance(crop, whole), phash_distance(crop[: top.shape[0]], top))
            if d <= 6:
                fc.leak_reasons.append(
                    f"a {int(w)}x{int(h)} image looks like the frame (phash {d})"
                )
                break
    scores = score_frame(fd, cap, ref_css=ref_css, cand_css=cand_css) if fd else FrameScores()
    if fd is None:
        scores.skip(_NO_DESIGN, *DESIGN_MEASURES)
    if ref_small is None:
        scores.skip(_NO_IMAGE, *IMAGE_MEASURES)
    if ref_small is not None and cand_img is not None:
        ra, ca = ref_small, to_array(cand_img, ANALYSIS_WIDTH)
        band = band_metrics(ra, ca, fc.width, ref_edges=ref_edges)
        scores.band_edge_f1, scores.band_ssim, scores.height_ratio = (
            band.edge_f1,
            band.ssim,
            band.height_ratio,
        )
        scores.palette = palette_coverage(ra, ca, ref_palette=ref_palette)
        n_texts = len(cap.get("texts") or [])
        if n_texts <= 2 and band.edge_f1 >= 0.9:
            fc.leak_reasons.append(
                f"{n_texts} text node(s) yet edges match the frame "
                f"(band edge F1 {band.edge_f1:.2f})"
            )
    fc.leak = bool(fc.leak_reasons)
    if fc.gated:
        base = _design_totals(fd, gtf)
        base.component_total = scores.component_total or base.component_total
        base.skipped = {**scores.skipped, **base.skipped}
        fc.scores = base.zero()
    else:
        fc.scores = scores
