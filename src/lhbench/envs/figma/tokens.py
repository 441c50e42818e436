"""Design-token coverage: the design's values, and whether the app's theme files hold them.

Tokens are taken from the Figma frames deterministically (colours with their area or
text weight, font sizes, families and weights, corner radii, drop shadows, auto-layout
spacing; icon fonts left out), then looked for by **value** in the app's theme files
(CSS custom properties and ``@theme`` blocks, token JSON, Tailwind config): names are
the agent's choice, values are the design's. Literal colours in component files that
equal a token are counted as leaks, ``var(--…)`` uses as token references.
"""

from __future__ import annotations

import colorsys
import contextlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lhbench.envs.figma.design import ICON_FONTS, Node, is_pua, iter_nodes, paint_rgba

__all__ = ["TokenReport", "app_theme", "design_tokens", "token_coverage"]

_SKIP_DIRS = {"node_modules", "dist", "build", "out", ".git", ".lhbench", "ground_truth"}
_THEME_NAME = re.compile(r"(token|theme|variable|global|base|index|style|app|main|root)", re.I)
_COLOR = re.compile(
    r"#[0-9a-fA-F]{8}\b|#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3,4}\b|rgba?\([^)]*\)|hsla?\([^)]*\)"
)
_LENGTH = re.compile(r"(-?\d*\.?\d+)(px|rem)\b")
_MAX_FILE = 1 << 20


@dataclass
class DesignTokens:
    """What the design uses, by value."""

    colors: dict[tuple[str, int], float] = field(default_factory=dict)  # (hex, alpha%) -> weight
    sizes: set[float] = field(default_factory=set)
    families: set[str] = field(default_factory=set)
    weights: set[int] = field(default_factory=set)
    radii: set[float] = field(default_factory=set)
    shadows: set[tuple[float, float, float, float, str]] = field(default_factory=set)
    spacing: set[float] = field(default_factory=set)
    borders: set[float] = field(default_factory=set)


def _hex(rgba: tuple[float, float, float, float]) -> tuple[str, int]:
    r, g, b, a = rgba
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}", round(a * 100)


def design_tokens(frames: Iterable[Node], named: set[str] | None = None) -> DesignTokens:
    """The tokens used by the visible nodes of ``frames``; named-style colours count twice."""
    t = DesignTokens()
    for frame in frames:
        for n in iter_nodes(frame, visible_only=True):
            bb = n.get("absoluteBoundingBox") or {}
            area = float(bb.get("width", 0) or 0) * float(bb.get("height", 0) or 0)
            styled = bool(named and (n.get("styles") or {}).get("fill") in named)
            if n.get("type") == "TEXT":
                st = n.get("style") or {}
                fam = str(st.get("fontFamily", ""))
                text = str(n.get("characters", ""))
                if is_pua(text) or fam.lower().startswith(ICON_FONTS):
                    continue
                size = float(st.get("fontSize") or 0)
                if size:
                    t.sizes.add(size)
                if fam:
                    t.families.add(fam.lower())
                if st.get("fontWeight"):
                    t.weights.add(int(st["fontWeight"]))
                weight = len(text) * size * size
            else:
                weight = area
                r = n.get("cornerRadius")
                h = min(float(bb.get("width", 0) or 0), float(bb.get("height", 0) or 0))
                if isinstance(r, int | float) and r > 0 and abs(r - h / 2) > 0.5:
                    t.radii.add(round(float(r), 1))
                for key in (
                    "itemSpacing",
                    "paddingLeft",
                    "paddingRight",
                    "paddingTop",
                    "paddingBottom",
                ):
                    v = n.get(key)
                    if (
                        n.get("layoutMode") in ("HORIZONTAL", "VERTICAL")
                        and isinstance(v, int | float)
                        and v > 0
                    ):
                        t.spacing.add(round(float(v), 1))
                for e in n.get("effects") or ():
                    if e.get("type") == "DROP_SHADOW" and e.get("visible", True):
                        c = e.get("color") or {}
                        shadow_hex, _a = _hex(
                            (c.get("r", 0), c.get("g", 0), c.get("b", 0), c.get("a", 1))
                        )
                        off = e.get("offset") or {}
                        t.shadows.add(
                            (
                                float(off.get("x", 0)),
                                float(off.get("y", 0)),
                                float(e.get("radius", 0)),
                                float(e.get("spread", 0) or 0),
                                shadow_hex,
                            )
                        )
                if n.get("strokes") and n.get("strokeWeight"):
                    t.borders.add(float(n["strokeWeight"]))
            for paint in [*(n.get("fills") or ()), *(n.get("strokes") or ())]:
                rgba = paint_rgba(paint)
                if rgba is None:
                    continue
                ckey = _hex(rgba)
                t.colors[ckey] = t.colors.get(ckey, 0.0) + max(weight, 1.0) * (2 if styled else 1)
    return t


def _parse_color(text: str) -> tuple[tuple[float, float, float], float] | None:
    text = text.strip().lower()
    if text.startswith("#"):
        h = text[1:]
        if len(h) in (3, 4):
            h = "".join(c * 2 for c in h)
        try:
            r, g, b = (int(h[i : i + 2], 16) / 255 for i in (0, 2, 4))
        except ValueError:
            return None
        return (r, g, b), (int(h[6:8], 16) / 255 if len(h) == 8 else 1.0)
    m = re.match(r"(rgba?|hsla?)\(([^)]*)\)", text)
    if not m:
        return None
    parts = [p for p in re.split(r"[,\s/]+", m.group(2).strip()) if p]
    try:
        nums = [float(p.rstrip("%deg")) for p in parts]
    except ValueError:
        return None
    if len(nums) < 3:
        return None
    alpha = nums[3] if len(nums) > 3 else 1.0
    if len(parts) > 3 and parts[3].endswith("%"):
        alpha /= 100
    if m.group(1).startswith("rgb"):
        return (nums[0] / 255, nums[1] / 255, nums[2] / 255), alpha
    r, g, b = colorsys.hls_to_rgb(nums[0] / 360, nums[2] / 100, nums[1] / 100)
    return (r, g, b), alpha


@dataclass
class AppTheme:
    """Values found in the app's theme files, and literal use elsewhere."""

    files: list[str] = field(default_factory=list)
    colors: list[tuple[tuple[float, float, float], float]] = field(default_factory=list)
    lengths: set[float] = field(default_factory=set)
    families: set[str] = field(default_factory=set)
    weights: set[int] = field(default_factory=set)
    shadows: list[str] = field(default_factory=list)
    literal_colors: list[tuple[str, tuple[float, float, float]]] = field(default_factory=list)
    references: int = 0


def _files(root: Path) -> list[Path]:
    out: list[Path] = []
    if not root.is_dir():
        return out
    stack = [root]
    while stack and len(out) < 2000:
        d = stack.pop()
        try:
            entries = sorted(d.iterdir())
        except OSError:
            continue
        for p in entries:
            if p.is_symlink():
                continue
            if p.is_dir():
                if p.name not in _SKIP_DIRS and not p.name.startswith("."):
                    stack.append(p)
            elif p.suffix in (
                ".css",
                ".scss",
                ".json",
                ".js",
                ".ts",
                ".jsx",
                ".tsx",
                ".html",
                ".vue",
                ".svelte",
                ".mjs",
                ".cjs",
            ):
                out.append(p)
    return out


def _is_theme(path: Path, text: str) -> bool:
    if path.name in ("package.json", "package-lock.json", "tsconfig.json", "manifest.json"):
        return False
    if path.name.startswith(("tailwind.config", "design_tokens", "tokens", "theme")):
        return True
    if path.suffix in (".css", ".scss"):
        return ":root" in text or "@theme" in text or bool(_THEME_NAME.search(path.stem))
    return path.suffix == ".json" and bool(re.search(r"token|theme", path.stem, re.I))


def app_theme(app_dir: Path) -> AppTheme:
    """What the app's theme files declare, and colour literals in its other source files."""
    th = AppTheme()
    for p in _files(app_dir):
        try:
            if p.stat().st_size > _MAX_FILE:
                continue
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        theme = _is_theme(p, text)
        th.references += text.count("var(--")
        if theme:
            th.files.append(p.relative_to(app_dir).as_posix())
            for c in _COLOR.findall(text):
                parsed = _parse_color(c)
                if parsed:
                    th.colors.append(parsed)
            for num, unit in _LENGTH.findall(text):
                v = float(num) * (16 if unit == "rem" else 1)
                th.lengths.add(round(v, 1))
            for fam in re.findall(
                r"font-family\s*:\s*([^;}{]+)|--font[\w-]*\s*:\s*([^;}{]+)", text
            ):
                for part in (fam[0] or fam[1]).split(","):
                    th.families.add(part.strip().strip("\"'").lower())
            if p.suffix == ".json":
                with contextlib.suppress(ValueError):
                    _json_values(json.loads(text), th)
            for w in re.findall(
                r"font-weight\s*:\s*(\d{3})|--font-weight[\w-]*\s*:\s*(\d{3})", text
            ):
                th.weights.add(int(w[0] or w[1]))
            for found in re.findall(
                r"box-shadow\s*:\s*([^;}{]+)|--shadow[\w-]*\s*:\s*([^;}{]+)", text
            ):
                th.shadows.append(found[0] or found[1])
        elif p.suffix in (
            ".css",
            ".scss",
            ".jsx",
            ".tsx",
            ".js",
            ".ts",
            ".vue",
            ".svelte",
            ".html",
        ):
            for c in _COLOR.findall(text):
                parsed = _parse_color(c)
                if parsed:
                    th.literal_colors.append((p.relative_to(app_dir).as_posix(), parsed[0]))
            for arb in re.findall(r"-\[(#[0-9a-fA-F]{3,8})\]", text):
                parsed = _parse_color(arb)
                if parsed:
                    th.literal_colors.append((p.relative_to(app_dir).as_posix(), parsed[0]))
    return th


def _json_values(doc: Any, th: AppTheme) -> None:
    if isinstance(doc, dict):
        for k, v in doc.items():
            if isinstance(v, str) and "font" in str(k).lower() and not _COLOR.fullmatch(v):
                for part in v.split(","):
                    th.families.add(part.strip().strip("\"'").lower())
            _json_values(v, th)
    elif isinstance(doc, list):
        for v in doc:
            _json_values(v, th)
    elif isinstance(doc, str):
        parsed = _parse_color(doc) if _COLOR.fullmatch(doc.strip()) else None
        if parsed:
            th.colors.append(parsed)
        for num, unit in _LENGTH.findall(doc):
            th.lengths.add(round(float(num) * (16 if unit == "rem" else 1), 1))
    elif isinstance(doc, int | float) and not isinstance(doc, bool):
        th.lengths.add(round(float(doc), 1))
        if 100 <= doc <= 900 and doc % 100 == 0:
            th.weights.add(int(doc))


@dataclass
class TokenReport:
    """Coverage per category and the leak rate."""

    color: float | None
    font_size: float | None
    font_family: float | None
    font_weight: float | None
    radius: float | None
    shadow: float | None
    spacing: float | None
    border: float | None
    categories_covered: int
    leaks: int
    references: int
    theme_files: list[str]

    @property
    def leak_rate(self) -> float | None:
        """Leaks over leaks plus token references."""
        total = self.leaks + self.references
        return self.leaks / total if total else None

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON."""
        return {
            **{k: (round(v, 3) if isinstance(v, float) else v) for k, v in self.__dict__.items()},
            "leak_rate": None if self.leak_rate is None else round(self.leak_rate, 3),
        }


def _near(values: set[float], target: float, tol: float) -> bool:
    return any(abs(v - target) <= tol for v in values)


def token_coverage(tokens: DesignTokens, theme: AppTheme) -> TokenReport:
    """How much of the design's token set the app's theme holds (values, not names)."""
    from lhbench.envs.figma.imaging import delta_e2000, rgb_to_lab

    color = None
    theme_lab = (
        rgb_to_lab(np.array([c for c, _a in theme.colors], dtype=np.float64))
        if theme.colors
        else None
    )
    theme_alpha = np.array([a for _c, a in theme.colors]) if theme.colors else None
    if tokens.colors:
        total = sum(tokens.colors.values())
        hit = 0.0
        for (hx, alpha), w in tokens.colors.items():
            rgb = tuple(int(hx[i : i + 2], 16) / 255 for i in (1, 3, 5))
            if theme_lab is not None and theme_alpha is not None:
                lab = rgb_to_lab(np.array(rgb, dtype=np.float64))
                de = delta_e2000(np.broadcast_to(lab, theme_lab.shape), theme_lab)
                if bool(((de <= 2) & (np.abs(theme_alpha - alpha / 100) <= 0.05)).any()):
                    hit += w
        color = hit / total if total else None

    def share(values: set[float], tol: float) -> float | None:
        if not values:
            return None
        return sum(1 for v in values if _near(theme.lengths, v, tol)) / len(values)

    fam = (
        sum(1 for f in tokens.families if f in theme.families) / len(tokens.families)
        if tokens.families
        else None
    )
    weight = (
        sum(
            1
            for w in tokens.weights
            # 400 is every browser's default weight: it needs no declaration
            if w in theme.weights or w == 400
        )
        / len(tokens.weights)
        if tokens.weights
        else None
    )
    shadow = None
    if tokens.shadows:
        ok = 0
        for x, y, blur, spread, _hx in tokens.shadows:
            for s in theme.shadows:
                nums = [float(v) for v in re.findall(r"(-?\d*\.?\d+)px", s)]
                if (
                    len(nums) >= 3
                    and abs(nums[0] - x) <= 1
                    and abs(nums[1] - y) <= 1
                    and abs(nums[2] - blur) <= 1
                    and (len(nums) < 4 or abs(nums[3] - spread) <= 1)
                ):
                    ok += 1
                    break
        shadow = ok / len(tokens.shadows)
    report = TokenReport(
        color=color,
        font_size=share(tokens.sizes, 0.5),
        font_family=fam,
        font_weight=weight,
        radius=share(tokens.radii, 1.0),
        shadow=shadow,
        spacing=share(tokens.spacing, 0.5),
        border=share(tokens.borders, 0.5),
        categories_covered=0,
        leaks=0,
        references=theme.references,
        theme_files=theme.files[:20],
    )
    typo = [v for v in (report.font_size, report.font_family) if v is not None]
    cats = [
        color,
        (sum(typo) / len(typo)) if typo else None,
        report.spacing,
        report.radius,
        report.shadow,
        report.border,
    ]
    report.categories_covered = sum(1 for c in cats if c is not None and c >= 0.5)
    if theme_lab is not None and theme.literal_colors:
        token_rgbs = [
            tuple(int(hx[i : i + 2], 16) / 255 for i in (1, 3, 5)) for hx, _a in tokens.colors
        ]
        if token_rgbs:
            tl = rgb_to_lab(np.array(token_rgbs, dtype=np.float64))
            for _f, rgb in theme.literal_colors:
                lab = rgb_to_lab(np.array(rgb, dtype=np.float64))
                if float(delta_e2000(np.broadcast_to(lab, tl.shape), tl).min()) <= 2:
                    report.leaks += 1
    return report
