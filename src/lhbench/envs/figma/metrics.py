"""Fidelity of one captured frame against its Figma frame: texts, layout, colour, type, assets.

Reference blocks come from the Figma file (exact text, boxes, fills and fonts), candidate
blocks from the live DOM, so no OCR and no reference HTML is needed. Texts are matched by
an assignment on ``−similarity + 0.5 · distance`` (similarity: Ratcliff–Obershelp on
lower-cased, whitespace-collapsed text without the auto-junk heuristic; distance: the
larger of the centre offsets over the frame's width and height), keeping pairs at least
0.5 similar; the distance term keeps two identical paragraphs from swapping places.
Positions are also compared after subtracting each section's median offset (a page that
is right but shifted scores as right). Colours are compared in CIEDE2000.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from rapidfuzz.distance import Indel
from rapidfuzz.process import cdist
from scipy.optimize import linear_sum_assignment
from scipy.stats import kendalltau

from lhbench.envs.figma.design import DesignBlock, FrameDesign
from lhbench.envs.figma.imaging import Arr, delta_e2000, rgb_to_lab, thumb_distance

__all__ = [
    "AGGREGATE_WEIGHTS",
    "DESIGN_MEASURES",
    "IMAGE_MEASURES",
    "DomText",
    "FrameScores",
    "css_color",
    "dom_texts",
    "match_texts",
    "score_frame",
]

Box = tuple[float, float, float, float]
RGBA = tuple[float, float, float, float]
_MIN_SIM = 0.5
_LAMBDA = 0.5
_DE_MAX = 20.0


def css_color(value: str | None) -> RGBA | None:
    """A computed CSS colour (``rgb()``/``rgba()``, or ``#hex``) as RGBA in 0..1."""
    if not value:
        return None
    value = value.strip()
    m = re.match(r"rgba?\(([^)]*)\)", value)
    if m:
        nums = [x for x in re.split(r"[,\s/]+", m.group(1).strip()) if x]
        try:
            vals = [float(x.rstrip("%")) for x in nums]
        except ValueError:
            return None
        if len(vals) < 3:
            return None
        a = vals[3] if len(vals) > 3 else 1.0
        if len(nums) > 3 and nums[3].endswith("%"):
            a /= 100
        return vals[0] / 255, vals[1] / 255, vals[2] / 255, a
    m = re.match(r"#([0-9a-fA-F]{3,8})$", value)
    if m:
        h = m.group(1)
        if len(h) in (3, 4):
            h = "".join(c * 2 for c in h)
        r, g, b = (int(h[i : i + 2], 16) / 255 for i in (0, 2, 4))
        a = int(h[6:8], 16) / 255 if len(h) == 8 else 1.0
        return r, g, b, a
    return None


def _over(fg: RGBA | None, bg: RGBA | None) -> tuple[float, float, float] | None:
    if fg is None:
        return None
    b = bg or (1.0, 1.0, 1.0, 1.0)
    a = fg[3]
    return tuple(fg[i] * a + b[i] * (1 - a) for i in range(3))  # type: ignore[return-value]


def _de(c1: tuple[float, float, float], c2: tuple[float, float, float]) -> float:
    lab = rgb_to_lab(np.array([c1, c2], dtype=np.float64))
    return float(delta_e2000(lab[0], lab[1]))


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


@dataclass(frozen=True)
class DomText:
    """A text block of the captured page, in CSS px of the page."""

    text: str
    box: Box
    color: RGBA | None
    bg: RGBA | None
    families: tuple[str, ...]
    size: float
    weight: float
    line_height: float
    letter_spacing: float


def _px(value: Any, default: float) -> float:
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and value.endswith("px"):
        try:
            return float(value[:-2])
        except ValueError:
            return default
    return default


def _families(value: str) -> tuple[str, ...]:
    return tuple(f.strip().strip("\"'").lower() for f in value.split(",") if f.strip())


def dom_texts(raw: Sequence[dict[str, Any]]) -> list[DomText]:
    """The page's text nodes, with vertically adjacent nodes of one style merged.

    A heading split by ``<br>`` (or an inline tag) arrives as several text nodes; merging
    consecutive nodes that share element, class and style and touch vertically or sit on
    one line gives one block, as the Figma TEXT node is one.
    """
    out: list[DomText] = []
    last_key: str | None = None
    for item in sorted(raw, key=lambda t: t.get("order", 0)):
        size = float(item.get("fontSize") or 16)
        box = (float(item["x"]), float(item["y"]), float(item["w"]), float(item["h"]))
        block = DomText(
            text=str(item.get("text", "")),
            box=box,
            color=css_color(item.get("color")),
            bg=css_color(item.get("bg")),
            families=_families(str(item.get("fontFamily", ""))),
            size=size,
            weight=float(item.get("fontWeight") or 400),
            line_height=_px(item.get("lineHeight"), size * 1.2),
            letter_spacing=_px(item.get("letterSpacing"), 0.0),
        )
        key = str(item.get("key", ""))
        if out and key == last_key:
            prev = out[-1]
            px0, py0, pw, ph = prev.box
            gap = box[1] - (py0 + ph)
            same_line = abs(box[1] - py0) < size * 0.6
            overlap = min(px0 + pw, box[0] + box[2]) - max(px0, box[0])
            if (same_line and box[0] - (px0 + pw) < size * 1.5) or (
                -size < gap < size * 0.8 and overlap > -size * 4
            ):
                x0, y0 = min(px0, box[0]), min(py0, box[1])
                x1 = max(px0 + pw, box[0] + box[2])
                y1 = max(py0 + ph, box[1] + box[3])
                out[-1] = DomText(
                    f"{prev.text} {block.text}",
                    (x0, y0, x1 - x0, y1 - y0),
                    prev.color,
                    prev.bg,
                    prev.families,
                    prev.size,
                    prev.weight,
                    prev.line_height,
                    prev.letter_spacing,
                )
                continue
        out.append(block)
        last_key = key
    return out


def _centre(b: Box) -> tuple[float, float]:
    return b[0] + b[2] / 2, b[1] + b[3] / 2


def match_texts(
    ref: Sequence[DesignBlock], cand: Sequence[DomText], width: float, height: float
) -> list[tuple[int, int, float]]:
    """Matched (reference index, candidate index, similarity) pairs."""
    if not ref or not cand:
        return []
    rc = [_centre(r.box) for r in ref]
    cc = [_centre(c.box) for c in cand]
    sim = np.asarray(
        cdist(
            [_norm(r.text) for r in ref],
            [_norm(c.text) for c in cand],
            scorer=Indel.normalized_similarity,
            score_cutoff=_MIN_SIM,
            dtype=np.float64,
        ),
        dtype=np.float64,
    )
    r_xy, c_xy = np.array(rc, dtype=np.float64), np.array(cc, dtype=np.float64)
    dist = np.maximum(
        np.abs(r_xy[:, None, 0] - c_xy[None, :, 0]) / width,
        np.abs(r_xy[:, None, 1] - c_xy[None, :, 1]) / height,
    )
    cost = -sim + _LAMBDA * dist
    cost[sim < _MIN_SIM] = 1e6
    rows, cols = linear_sum_assignment(cost)
    return [
        (int(i), int(j), float(sim[i, j]))
        for i, j in zip(rows, cols, strict=True)
        if sim[i, j] >= _MIN_SIM
    ]


def _iou(a: Box, b: Box) -> float:
    ix = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    iy = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    if ix <= 0 or iy <= 0:
        return 0.0
    inter = ix * iy
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


#: Measures that need the Figma file's nodes (skipped, never 0, when the file is absent).
DESIGN_MEASURES = (
    "text_recall",
    "text_precision",
    "text_sim",
    "block_match",
    "position",
    "position_dc",
    "text_color",
    "text_color_d2c",
    "fill_color",
    "typography",
    "asset_coverage",
    "interaction",
)
#: Measures that need the ground-truth image (skipped, never 0, when it is absent).
IMAGE_MEASURES = ("band_edge_f1", "band_ssim", "height_ratio", "palette")
#: The per-frame fidelity aggregate: measure (colour is the mean of text and fill colour)
#: and weight. A measure that is skipped drops out and the others' weights are
#: renormalised: the one rule for every skipped measure (assets and colour alike).
AGGREGATE_WEIGHTS = (
    ("text_recall", 0.25),
    ("position_dc", 0.15),
    ("colour", 0.15),
    ("typography", 0.15),
    ("asset_coverage", 0.10),
    ("band_edge_f1", 0.20),
)


@dataclass
class FrameScores:
    """Every measure of one frame, with the evidence a judge or a person can read.

    Two kinds of missing are kept apart. A measure that could not be taken because the
    *page* lacks what the design has (no text of the design on the page, so no colour or
    type to compare) is **0**. A measure skipped because the *ground truth* lacks the data
    (no Figma file or node, no ground-truth image, a design with no text, fill, asset or
    hover variant) is **None**, excluded from every mean, and named in :attr:`skipped`
    with the reason.
    """

    text_recall: float | None = None
    text_precision: float | None = None
    text_sim: float | None = None
    block_match: float | None = None
    position: float | None = None
    position_dc: float | None = None
    order_tau: float | None = None
    text_color: float | None = None
    text_color_d2c: float | None = None
    fill_color: float | None = None
    typography: float | None = None
    typography_parts: dict[str, float] = field(default_factory=dict)
    asset_coverage: float | None = None
    broken_images: float = 0.0
    component_matched: int = 0
    component_total: int = 0
    band_edge_f1: float | None = None
    band_ssim: float | None = None
    height_ratio: float | None = None
    palette: float | None = None
    interaction: float | None = None
    missing_texts: list[str] = field(default_factory=list)
    color_outliers: list[str] = field(default_factory=list)
    fill_outliers: list[str] = field(default_factory=list)
    missing_assets: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)

    def skip(self, reason: str, *measures: str) -> None:
        """Mark ``measures`` as skipped for lack of ground-truth data: None, named."""
        for m in measures:
            setattr(self, m, None)
            self.skipped.setdefault(m, reason)

    @property
    def component_coverage(self) -> float | None:
        """Matched over total design elements (texts, assets, component instances).

        None when the design gives no element to look for (no Figma file, or an empty frame).
        """
        return self.component_matched / self.component_total if self.component_total else None

    def colour(self) -> float | None:
        """Mean of text and fill colour over those measured (None when neither is)."""
        colours = [v for v in (self.text_color, self.fill_color) if v is not None]
        return sum(colours) / len(colours) if colours else None

    def aggregate_parts(self) -> tuple[dict[str, float], list[str]]:
        """The aggregate's measures with their value, and the ones skipped (None)."""
        used: dict[str, float] = {}
        skipped: list[str] = []
        for name, _w in AGGREGATE_WEIGHTS:
            v = self.colour() if name == "colour" else getattr(self, name)
            if v is None:
                skipped.append(name)
            else:
                used[name] = float(v)
        return used, skipped

    def aggregate(self) -> float | None:
        """The deterministic per-frame fidelity, 0..1 (None when no measure could be taken).

        ``0.25·text recall + 0.15·drift-corrected position + 0.15·colour + 0.15·typography
        + 0.10·asset coverage + 0.20·band edge F1`` (the reference notes' proposal), over
        the measures taken: a skipped measure (None) is left out and the remaining weights
        renormalised; a measure the page failed (0) counts as 0.
        """
        used, _skipped = self.aggregate_parts()
        weights = dict(AGGREGATE_WEIGHTS)
        total = sum(weights[k] for k in used)
        if not total:
            return None
        return sum(weights[k] * v for k, v in used.items()) / total

    def zero(self) -> FrameScores:
        """The scores of a gated frame (blank, leaking, not built): every measure taken is 0.

        Measures skipped for lack of ground-truth data stay skipped (None, named).
        """
        out = FrameScores(
            component_total=self.component_total,
            missing_texts=self.missing_texts,
            skipped=dict(self.skipped),
        )
        for m in (*DESIGN_MEASURES, *IMAGE_MEASURES):
            setattr(out, m, None if m in self.skipped else 0.0)
        return out


def _section_offsets(
    pairs: list[tuple[int, int, float]], ref: Sequence[DesignBlock], cand: Sequence[DomText]
) -> tuple[dict[str, tuple[float, float]], tuple[float, float]]:
    by_section: dict[str, list[tuple[float, float]]] = {}
    every: list[tuple[float, float]] = []
    for i, j, _s in pairs:
        (rx, ry), (cx, cy) = _centre(ref[i].box), _centre(cand[j].box)
        by_section.setdefault(ref[i].section, []).append((cx - rx, cy - ry))
        every.append((cx - rx, cy - ry))
    med = {
        k: (float(np.median([d[0] for d in v])), float(np.median([d[1] for d in v])))
        for k, v in by_section.items()
    }
    overall = (
        (float(np.median([d[0] for d in every])), float(np.median([d[1] for d in every])))
        if every
        else (0.0, 0.0)
    )
    return med, overall


def _container_fill(box: Box, fills: Sequence[DesignBlock], background: RGBA | None) -> RGBA:
    best: DesignBlock | None = None
    for f in fills:
        fx, fy, fw, fh = f.box
        if (
            fx <= box[0] + 1
            and fy <= box[1] + 1
            and fx + fw >= box[0] + box[2] - 1
            and (fy + fh >= box[1] + box[3] - 1)
            and (best is None or fw * fh < best.box[2] * best.box[3])
        ):
            best = f
    if best is not None and best.rgba is not None:
        return best.rgba
    return background or (1.0, 1.0, 1.0, 1.0)


def _crop(img: NDArray[Any], box: Box, scale: float) -> Arr | None:
    """A box of an image (uint8 or 0..1) as floats in 0..1, None when too small."""
    x0, y0 = max(0, round(box[0] * scale)), max(0, round(box[1] * scale))
    x1 = min(img.shape[1], round((box[0] + box[2]) * scale))
    y1 = min(img.shape[0], round((box[1] + box[3]) * scale))
    if x1 - x0 < 4 or y1 - y0 < 4:
        return None
    crop = img[y0:y1, x0:x1]
    return crop / 255.0 if crop.dtype == np.uint8 else np.asarray(crop, dtype=np.float64)


def score_frame(
    design: FrameDesign,
    frame: dict[str, Any],
    *,
    ref_css: NDArray[Any] | None,
    cand_css: NDArray[Any] | None,
) -> FrameScores:
    """Score a captured frame (``frame``: the capture's dict) against the Figma frame.

    ``ref_css`` and ``cand_css`` are the ground-truth and captured images at one CSS px
    per pixel (for asset crops); the banded and palette measures are set by the caller.
    """
    s = FrameScores()
    width = design.width or 1440.0
    height = max(design.height, 1.0)
    ref = design.texts
    cand = dom_texts(frame.get("texts") or [])
    pairs = match_texts(ref, cand, width, height)
    matched_ref = {i for i, _j, _s in pairs}
    s.missing_texts = [ref[i].text[:80] for i in range(len(ref)) if i not in matched_ref][:30]
    offsets, overall = _section_offsets(pairs, ref, cand)
    if not ref:
        s.skip("the design frame has no text", *_TEXT_MEASURES)
    else:
        # the design has texts: what the page does not match of them counts as 0
        s.text_recall = len(pairs) / len(ref)
        s.text_precision = len(pairs) / len(cand) if cand else 0.0
        for m in ("text_sim", "block_match", "position", "position_dc"):
            setattr(s, m, 0.0)
        if any(r.rgba is not None for r in ref):
            s.text_color = s.text_color_d2c = 0.0
        else:
            s.skip("the design's texts have no solid fill", "text_color", "text_color_d2c")
        if any(r.style for r in ref):
            s.typography = 0.0
        else:
            s.skip("the design's texts carry no type style", "typography")
    if pairs:
        s.text_sim = float(np.mean([p[2] for p in pairs]))
        d_plain, d_dc = [], []
        for i, j, _sim in pairs:
            (rx, ry), (cx, cy) = _centre(ref[i].box), _centre(cand[j].box)
            d_plain.append(max(abs(cx - rx) / width, abs(cy - ry) / height))
            ox, oy = offsets.get(ref[i].section, overall)
            d_dc.append(max(abs(cx - rx - ox) / width, abs(cy - ry - oy) / height))
        s.position = float(np.mean([max(0.0, 1 - d) for d in d_plain]))
        s.position_dc = float(np.mean([max(0.0, 1 - d) for d in d_dc]))
        if len(pairs) >= 3:
            tau = kendalltau(
                [_centre(ref[i].box)[1] for i, _j, _s in pairs],
                [_centre(cand[j].box)[1] for _i, j, _s in pairs],
            ).statistic
            s.order_tau = None if tau is None or np.isnan(tau) else float(tau)
        area_r = sum(r.box[2] * r.box[3] for r in ref) / (width * height)
        cw = float(frame.get("width") or width)
        ch = float(frame.get("height") or height)
        area_c = sum(c.box[2] * c.box[3] for c in cand) / (cw * ch)
        matched_area = sum(
            ref[i].box[2] * ref[i].box[3] / (width * height)
            + cand[j].box[2] * cand[j].box[3] / (cw * ch)
            for i, j, _s in pairs
        )
        s.block_match = matched_area / (area_r + area_c) if area_r + area_c else 0.0
        _colours(s, design, ref, cand, pairs)
        _typography(s, ref, cand, pairs)
    _fills(s, design, frame, offsets, overall)
    _assets(s, design, frame, offsets, overall, ref_css, cand_css)
    _components(s, design, frame, pairs, ref, offsets, overall)
    hover = frame.get("hover") or []
    if hover:
        s.interaction = sum(1 for h in hover if h.get("changed")) / len(hover)
    else:
        s.skip("no component of the design has a Hover variant to probe", "interaction")
    return s


_TEXT_MEASURES = (
    "text_recall",
    "text_precision",
    "text_sim",
    "block_match",
    "position",
    "position_dc",
    "text_color",
    "text_color_d2c",
    "typography",
)


def _colours(
    s: FrameScores,
    design: FrameDesign,
    ref: Sequence[DesignBlock],
    cand: Sequence[DomText],
    pairs: list[tuple[int, int, float]],
) -> None:
    scores, d2c = [], []
    for i, j, _sim in pairs:
        r, c = ref[i], cand[j]
        rc = _over(r.rgba, _container_fill(r.box, design.fills, design.background))
        cc = _over(c.color, c.bg)
        if rc is None or cc is None:
            continue
        de = _de(rc, cc)
        scores.append(max(0.0, 1 - de / _DE_MAX))
        d2c.append(max(0.0, 1 - de / 100))
        if de > 5:
            s.color_outliers.append(f"{r.text[:40]!r}: ΔE00 {de:.1f}")
    if scores:
        s.text_color = float(np.mean(scores))
        s.text_color_d2c = float(np.mean(d2c))
    elif s.text_color == 0.0:
        # matched texts, none with a colour on both sides: the design's matched texts lack one
        s.skip("no matched text has a colour in the design", "text_color", "text_color_d2c")


def _typography(
    s: FrameScores,
    ref: Sequence[DesignBlock],
    cand: Sequence[DomText],
    pairs: list[tuple[int, int, float]],
) -> None:
    fs, fw, lh, ls, ff = [], [], [], [], []
    for i, j, _sim in pairs:
        st, c = ref[i].style, cand[j]
        size = float(st.get("fontSize") or 0)
        if size > 0 and c.size > 0:
            fs.append(min(size, c.size) / max(size, c.size))
        if st.get("fontWeight") is not None:
            fw.append(1.0 if abs(float(st["fontWeight"]) - c.weight) < 50 else 0.0)
        lhp = float(st.get("lineHeightPx") or 0)
        if lhp > 0 and c.line_height > 0:
            lh.append(min(lhp, c.line_height) / max(lhp, c.line_height))
        ls.append(
            1.0 if abs(float(st.get("letterSpacing") or 0) - c.letter_spacing) <= 0.5 else 0.0
        )
        fam = str(st.get("fontFamily", "")).strip().lower()
        if fam:
            ff.append(1.0 if fam in c.families else 0.0)
    parts = {
        k: float(np.mean(v))
        for k, v in (
            ("font_size", fs),
            ("font_weight", fw),
            ("line_height", lh),
            ("letter_spacing", ls),
            ("font_family", ff),
        )
        if v
    }
    s.typography_parts = parts
    if parts:
        s.typography = float(np.mean(list(parts.values())))
    else:
        s.skip("no matched text has a type style in the design", "typography")


def _shift(
    box: Box, section: str, offsets: dict[str, tuple[float, float]], overall: tuple[float, float]
) -> Box:
    ox, oy = offsets.get(section, overall)
    return box[0] + ox, box[1] + oy, box[2], box[3]


def _fills(
    s: FrameScores,
    design: FrameDesign,
    frame: dict[str, Any],
    offsets: dict[str, tuple[float, float]],
    overall: tuple[float, float],
) -> None:
    elements = frame.get("elements") or []
    boxes = [(float(e["x"]), float(e["y"]), float(e["w"]), float(e["h"])) for e in elements]
    colours = [css_color(e.get("bg")) for e in elements]
    total, acc = 0.0, 0.0
    for f in design.fills:
        if f.rgba is None:
            continue
        mapped = _shift(f.box, f.section, offsets, overall)
        best, best_iou = -1, 0.0
        for k, b in enumerate(boxes):
            iou = _iou(mapped, b)
            if iou > best_iou:
                best, best_iou = k, iou
        w = float(np.sqrt(f.box[2] * f.box[3]))
        total += w
        if best < 0 or best_iou < 0.5 or colours[best] is None:
            s.fill_outliers.append(f"{f.name}: no element with this fill in place")
            continue
        rc = _over(f.rgba, design.background)
        cc = _over(colours[best], (1.0, 1.0, 1.0, 1.0))
        assert rc is not None and cc is not None
        de = _de(rc, cc)
        acc += w * max(0.0, 1 - de / _DE_MAX)
        if de > 5:
            s.fill_outliers.append(f"{f.name}: ΔE00 {de:.1f}")
    if total:
        s.fill_color = acc / total
    else:
        s.skip("the design frame has no solid fill large enough to compare", "fill_color")


def _assets(
    s: FrameScores,
    design: FrameDesign,
    frame: dict[str, Any],
    offsets: dict[str, tuple[float, float]],
    overall: tuple[float, float],
    ref_css: NDArray[Any] | None,
    cand_css: NDArray[Any] | None,
) -> None:
    images = frame.get("images") or []
    svgs = frame.get("svgs") or []
    shown = [
        ((float(i["x"]), float(i["y"]), float(i["w"]), float(i["h"])), bool(i.get("loaded")))
        for i in images
    ]
    icons_shown = [
        ((float(v["x"]), float(v["y"]), float(v["w"]), float(v["h"])), True) for v in svgs
    ]
    imgs = [i for i in images if i.get("kind") == "img"]
    if imgs:
        s.broken_images = sum(1 for i in imgs if not i.get("loaded")) / len(imgs)
    assets: list[tuple[DesignBlock, bool]] = [(a, False) for a in design.images]
    assets += [(a, True) for a in design.icons]
    if not assets:
        s.skip("the design frame has no image or icon", "asset_coverage")
        return
    matched = 0
    for a, is_icon in assets:
        mapped = _shift(a.box, a.section, offsets, overall)
        pool = shown + icons_shown if is_icon else shown
        best, best_iou = None, 0.0
        for box, loaded in pool:
            iou = _iou(mapped, box)
            if iou > best_iou:
                best, best_iou = (box, loaded), iou
        ok = best is not None and best_iou >= 0.3 and best[1]
        if ok and not is_icon and best is not None and ref_css is not None and cand_css is not None:
            rc, cc = _crop(ref_css, a.box, 1.0), _crop(cand_css, best[0], 1.0)
            if rc is not None and cc is not None and min(rc.shape[:2]) >= 16:
                ok = thumb_distance(rc, cc) <= 12
        if ok:
            matched += 1
        else:
            s.missing_assets.append(a.name)
    s.asset_coverage = matched / len(assets)
    s.component_matched += matched
    s.component_total += len(assets)


def _components(
    s: FrameScores,
    design: FrameDesign,
    frame: dict[str, Any],
    pairs: list[tuple[int, int, float]],
    ref: Sequence[DesignBlock],
    offsets: dict[str, tuple[float, float]],
    overall: tuple[float, float],
) -> None:
    matched_ids = {ref[i].node_id for i, _j, _s in pairs}
    s.component_matched += len(pairs)
    s.component_total += len(ref)
    boxes = [
        (float(e["x"]), float(e["y"]), float(e["w"]), float(e["h"]))
        for e in (frame.get("elements") or []) + (frame.get("images") or [])
    ]
    for inst in design.instances:
        s.component_total += 1
        texts = [t for t in inst.texts]
        if texts and sum(1 for t in texts if t in matched_ids) / len(texts) >= 0.5:
            s.component_matched += 1
            continue
        mapped = _shift(inst.box, inst.section, offsets, overall)
        if any(_iou(mapped, b) >= 0.5 for b in boxes):
            s.component_matched += 1
