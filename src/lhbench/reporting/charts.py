"""The SVG charts of the report and the web app, drawn with presentation attributes only.

One module draws every figure both show (intervals, forest plots, the κ heatmap, grouped
bars), so a figure looks the same in ``report.html`` and in the browser, and the report
needs no plotting library: writing the demo's five figures costs milliseconds, where
matplotlib cost a report about 0.8 s of import and drawing.

The web pages' Content-Security-Policy allows no inline style, so charts set geometry and
colour as SVG attributes (``fill="…"``), which the policy does not govern. Every element
is a :class:`~markupsafe.Markup` template filled by ``Markup.format``, which escapes each
value it is given (labels from data, and numbers alike): a model called ``<script>`` or
``$x$`` is drawn as those characters, and no value can end an attribute.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from markupsafe import Markup

if TYPE_CHECKING:
    from lhbench.stats import EloResult, PanelAgreement

__all__ = [
    "ci_bar",
    "elo_forest",
    "forest",
    "grouped_bars",
    "heatmap",
    "kappa_heatmap",
    "nice_ticks",
]

ACCENT = "#3b5bdb"
MUTED = "#adb5bd"
GRID = "#e9ecef"
TEXT = "#495057"


def _svg_open(width: int, height: int, label: str) -> Markup:
    """A chart's opening ``<svg>`` tag, named by ``label`` for screen readers."""
    return Markup(
        '<svg class="chart" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" '
        'aria-label="{label}">'
    ).format(w=width, h=height, label=label)


def _num(x: float) -> str:
    return f"{x:.1f}"


def _domain(values: Sequence[float], pad: float = 0.05) -> tuple[float, float]:
    finite = [v for v in values if not math.isnan(v)]
    if not finite:
        return 0.0, 1.0
    lo, hi = min(finite), max(finite)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    span = hi - lo
    return lo - pad * span, hi + pad * span


def nice_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """Round tick values covering [lo, hi] (steps of 1, 2, 2.5 or 5 × 10^k)."""
    span = hi - lo
    if span <= 0 or math.isnan(span):
        return [lo]
    raw = span / max(1, target - 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    ticks = []
    v = first
    while v <= hi + 1e-9 * step:
        ticks.append(round(v, 10))
        v += step
    return ticks


def ci_bar(
    value: float, lo: float, hi: float, domain: tuple[float, float], *, width: int = 96
) -> Markup:
    """A value with its interval on a shared axis (one table cell)."""
    d0, d1 = domain
    span = (d1 - d0) or 1.0

    def x(v: float) -> str:
        return _num(2 + (width - 4) * min(1.0, max(0.0, (v - d0) / span)))

    h = 14
    parts = [
        Markup(
            '<svg class="ci" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" '
            'aria-label="{label}">'
        ).format(w=width, h=h, label=f"{value:.2f} [{lo:.2f}, {hi:.2f}]"),
        Markup('<line x1="2" x2="{x2}" y1="7" y2="7" stroke="{grid}" stroke-width="1"/>').format(
            x2=width - 2, grid=GRID
        ),
    ]
    if not (math.isnan(lo) or math.isnan(hi)):
        parts.append(
            Markup(
                '<line x1="{x1}" x2="{x2}" y1="7" y2="7" stroke="{c}" stroke-width="2" '
                'stroke-linecap="round"/>'
            ).format(x1=x(lo), x2=x(hi), c=ACCENT)
        )
    if not math.isnan(value):
        parts.append(
            Markup('<circle cx="{cx}" cy="7" r="3.5" fill="{c}"/>').format(cx=x(value), c=ACCENT)
        )
    parts.append(Markup("</svg>"))
    return Markup("").join(parts)


def forest(
    rows: Sequence[tuple[str, float, float, float]],
    *,
    axis: str,
    reference: float | None = None,
    width: int = 640,
) -> Markup:
    """Labelled point estimates with intervals, one per row, best first as given."""
    if not rows:
        return Markup("")
    label_w = min(280, 12 + 7 * max(len(r[0]) for r in rows))
    plot_w = width - label_w - 20
    row_h = 26
    top = 8
    height = top + row_h * len(rows) + 44
    d0, d1 = _domain([v for r in rows for v in r[1:]] + ([reference] if reference else []))

    def x(v: float) -> str:
        return _num(label_w + plot_w * (v - d0) / (d1 - d0))

    out = [_svg_open(width, height, axis)]
    for v in nice_ticks(d0, d1):
        out.append(
            Markup(
                '<line x1="{x}" x2="{x}" y1="{top}" y2="{bottom}" stroke="{grid}"/>'
                '<text x="{x}" y="{ty}" font-size="11" fill="{ink}" text-anchor="middle">'
                "{tick}</text>"
            ).format(
                x=x(v),
                top=top,
                bottom=height - 36,
                grid=GRID,
                ty=height - 22,
                ink=TEXT,
                tick=f"{v:g}",
            )
        )
    if reference is not None:
        out.append(
            Markup(
                '<line x1="{x}" x2="{x}" y1="{top}" y2="{bottom}" stroke="{c}" '
                'stroke-dasharray="4 3"/>'
            ).format(x=x(reference), top=top, bottom=height - 36, c=MUTED)
        )
    fits = max(8, int((label_w - 14) / 6.6))
    for i, (label, value, lo, hi) in enumerate(rows):
        cy = top + row_h * i + row_h / 2
        shown = label if len(label) <= fits else label[: fits - 1] + "…"
        out.append(
            Markup(
                '<text x="{x}" y="{y}" font-size="12" fill="{ink}" text-anchor="end">'
                "{shown}<title>{label}</title></text>"
            ).format(x=label_w - 10, y=_num(cy + 4), ink=TEXT, shown=shown, label=label)
        )
        if not (math.isnan(lo) or math.isnan(hi)):
            out.append(
                Markup(
                    '<line x1="{x1}" x2="{x2}" y1="{y}" y2="{y}" stroke="{c}" '
                    'stroke-width="2.5" stroke-linecap="round"/>'
                ).format(x1=x(lo), x2=x(hi), y=_num(cy), c=ACCENT)
            )
        if not math.isnan(value):
            out.append(
                Markup('<circle cx="{x}" cy="{y}" r="5" fill="{c}"/>').format(
                    x=x(value), y=_num(cy), c=ACCENT
                )
            )
    out.append(
        Markup(
            '<text x="{x:.1f}" y="{y}" font-size="11" fill="{ink}" text-anchor="middle">'
            "{axis}</text></svg>"
        ).format(x=label_w + plot_w / 2, y=height - 4, ink=TEXT, axis=axis)
    )
    return Markup("").join(out)


def _cell_colour(v: float) -> str:
    if math.isnan(v):
        return "#f1f3f5"
    # white (κ ≤ 0) to the accent (κ = 1)
    t = max(0.0, min(1.0, v))
    r = round(255 + (59 - 255) * t)
    g = round(255 + (91 - 255) * t)
    b = round(255 + (219 - 255) * t)
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap(labels: Sequence[str], values: Sequence[Sequence[float]], *, title: str) -> Markup:
    """A square matrix (pairwise κ) with values written in."""
    k = len(labels)
    if k == 0:
        return Markup("")
    label_w = min(260, 12 + 7 * max(len(s) for s in labels))
    cell = 64
    width = label_w + cell * k + 8
    height = 24 + cell * k + 8
    out = [_svg_open(width, height, title)]
    for j, name in enumerate(labels):
        out.append(
            Markup(
                '<text x="{x:.1f}" y="16" font-size="11" fill="{ink}" text-anchor="middle">'
                "J{n}<title>{name}</title></text>"
            ).format(x=label_w + cell * j + cell / 2, ink=TEXT, n=j + 1, name=name)
        )
    for i, name in enumerate(labels):
        y = 24 + cell * i
        out.append(
            Markup(
                '<text x="{x}" y="{y:.1f}" font-size="12" fill="{ink}" text-anchor="end">'
                "J{n} {name}</text>"
            ).format(x=label_w - 8, y=y + cell / 2 + 4, ink=TEXT, n=i + 1, name=name)
        )
        for j in range(k):
            v = values[i][j]
            x = label_w + cell * j
            out.append(
                Markup(
                    '<rect x="{x}" y="{y}" width="{s}" height="{s}" rx="4" fill="{fill}" '
                    'stroke="{grid}"/>'
                    '<text x="{tx:.1f}" y="{ty:.1f}" font-size="13" fill="{ink}" '
                    'text-anchor="middle">{text}</text>'
                ).format(
                    x=x,
                    y=y,
                    s=cell - 2,
                    fill=_cell_colour(v),
                    grid=GRID,
                    tx=x + cell / 2 - 1,
                    ty=y + cell / 2 + 4,
                    ink="#ffffff" if not math.isnan(v) and v > 0.6 else "#212529",
                    text="n/a" if math.isnan(v) else f"{v:.2f}",
                )
            )
    out.append(Markup("</svg>"))
    return Markup("").join(out)


def kappa_heatmap(agreement: PanelAgreement, *, title: str) -> Markup:
    """A panel's pairwise κ (1 on the diagonal; n/a where a pair has none)."""
    kappa = dict(agreement.pairwise_kappa)
    kappa.update({(b, a): v for (a, b), v in agreement.pairwise_kappa.items()})
    judges = agreement.judges
    values = [[1.0 if a == b else kappa.get((a, b), math.nan) for b in judges] for a in judges]
    return heatmap(judges, values, title=title)


def elo_forest(result: EloResult) -> Markup:
    """Bradley–Terry Elo with bootstrap CIs, in the result's order, against the 1000 start."""
    return forest(
        [(m, result.ratings[m], *result.ci[m]) for m in result.models],
        axis="Bradley–Terry Elo (95% bootstrap CI)",
        reference=1000.0,
    )


# one colour per series, distinct in print and for the common colour-vision deficiencies
PALETTE = ("#3b5bdb", "#e8590c", "#2b8a3e", "#ae3ec9", "#1098ad", "#f08c00", "#c2255c", "#495057")


def grouped_bars(
    categories: Sequence[str],
    series: Sequence[tuple[str, Sequence[float]]],
    *,
    axis: str,
    domain: tuple[float, float] = (0.0, 100.0),
) -> Markup:
    """One group of bars per category, one bar per series (``(name, values)``), a legend.

    A missing value (NaN) has no bar and says ``n/a``; values outside ``domain`` are
    clipped to it.
    """
    if not categories or not series:
        return Markup("")
    d0, d1 = domain
    span = (d1 - d0) or 1.0
    left, top, plot_h = 48, 10, 180
    bar_w = 16 if len(series) <= 4 else 10
    # wide enough for the bars, and for a category name up to 20 characters
    longest = max(len(c) for c in categories)
    group_w = max(72, bar_w * len(series) + 24, min(144, int(6.6 * longest) + 12))
    legend_w = left + 16 + int(6.6 * max(len(name) for name, _ in series)) + 12
    width = max(left + group_w * len(categories) + 12, legend_w)
    base = top + plot_h
    legend_top = base + 36
    height = legend_top + 18 * len(series) + 4

    def y(v: float) -> float:
        return base - plot_h * min(1.0, max(0.0, (v - d0) / span))

    out = [_svg_open(width, height, axis)]
    for v in nice_ticks(d0, d1):
        out.append(
            Markup(
                '<line x1="{x1}" x2="{x2}" y1="{y}" y2="{y}" stroke="{grid}"/>'
                '<text x="{tx}" y="{ty}" font-size="11" fill="{ink}" text-anchor="end">'
                "{tick}</text>"
            ).format(
                x1=left,
                x2=width - 12,
                y=_num(y(v)),
                grid=GRID,
                tx=left - 6,
                ty=_num(y(v) + 4),
                ink=TEXT,
                tick=f"{v:g}",
            )
        )
    out.append(
        Markup(
            '<text x="12" y="{y:.1f}" font-size="11" fill="{ink}" text-anchor="middle" '
            'transform="rotate(-90 12 {y:.1f})">{axis}</text>'
        ).format(y=top + plot_h / 2, ink=TEXT, axis=axis)
    )
    fits = max(6, int((group_w - 8) / 6.6))
    for i, cat in enumerate(categories):
        x0 = left + group_w * i + (group_w - bar_w * len(series)) / 2
        for j, (name, values) in enumerate(series):
            v = values[i] if i < len(values) else math.nan
            bx = x0 + bar_w * j
            if math.isnan(v):
                out.append(
                    Markup(
                        '<text x="{x:.1f}" y="{y}" font-size="9" fill="{ink}" '
                        'text-anchor="middle">n/a<title>{name} · {cat}: n/a</title></text>'
                    ).format(x=bx + bar_w / 2, y=base - 3, ink=TEXT, name=name, cat=cat)
                )
                continue
            out.append(
                Markup(
                    '<rect x="{x:.1f}" y="{y}" width="{w}" height="{h}" fill="{c}">'
                    "<title>{name} · {cat}: {v}</title></rect>"
                ).format(
                    x=bx,
                    y=_num(y(v)),
                    w=bar_w - 2,
                    h=_num(base - y(v)),
                    c=PALETTE[j % len(PALETTE)],
                    name=name,
                    cat=cat,
                    v=f"{v:.1f}",
                )
            )
        shown = cat if len(cat) <= fits else cat[: fits - 1] + "…"
        out.append(
            Markup(
                '<text x="{x:.1f}" y="{y}" font-size="11" fill="{ink}" text-anchor="middle">'
                "{shown}<title>{cat}</title></text>"
            ).format(
                x=left + group_w * i + group_w / 2, y=base + 16, ink=TEXT, shown=shown, cat=cat
            )
        )
    out.append(
        Markup('<line x1="{x1}" x2="{x2}" y1="{y}" y2="{y}" stroke="{ink}"/>').format(
            x1=left, x2=width - 12, y=base, ink=MUTED
        )
    )
    for j, (name, _) in enumerate(series):
        ly = legend_top + 18 * j
        out.append(
            Markup(
                '<rect x="{x}" y="{y}" width="10" height="10" fill="{c}"/>'
                '<text x="{tx}" y="{ty}" font-size="11" fill="{ink}">{name}</text>'
            ).format(
                x=left,
                y=ly,
                c=PALETTE[j % len(PALETTE)],
                tx=left + 16,
                ty=ly + 9,
                ink=TEXT,
                name=name,
            )
        )
    out.append(Markup("</svg>"))
    return Markup("").join(out)
