"""Matplotlib figures as SVG text, for the HTML report and the web app (no network needed).

Figures are made with matplotlib's object API (``Figure``, drawn by the SVG backend on
``savefig``), never pyplot: pyplot's global state and backend machinery cost a report a
few tenths of a second at start and hold every figure until it is closed.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import Any

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.text import Text

from lhbench.stats import EloResult, PanelAgreement

__all__ = ["aj_f1_svg", "elo_svg", "kappa_heatmap_svg", "leaderboard_svg", "to_svg"]

# Labels come from data (model names, run names, rubric titles): never read them as
# mathtext ("$x$") or TeX. The defaults say so, and to_svg says so again on every text of
# the figure, so a library resetting matplotlib's settings cannot bring mathtext back.
_RC: Any = {
    "svg.fonttype": "none",
    "font.size": 9,
    "svg.hashsalt": "lhbench",
    "text.parse_math": False,
    "text.usetex": False,
}
matplotlib.rcParams.update(_RC)


def _plain_text(fig: Figure) -> None:
    """Every text of the figure drawn as the characters it holds."""
    for text in fig.findobj(Text):
        text.set_parse_math(False)
        text.set_usetex(False)


def to_svg(fig: Figure) -> str:
    """Render and close a figure; returns the ``<svg>`` element (no XML prolog).

    Labels are never interpreted: ``$x^2$`` in a model name is drawn as those characters.
    """
    _plain_text(fig)
    buf = io.StringIO()
    with matplotlib.rc_context(_RC):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg") :]


def leaderboard_svg(
    title: str, groups: Sequence[str], means: Sequence[float], cis: Sequence[tuple[float, float]]
) -> str:
    """Horizontal bars with CI whiskers, best on top."""
    fig = Figure(figsize=(6.5, 0.45 * len(groups) + 1.0))
    ax = fig.subplots()
    y = np.arange(len(groups))[::-1]
    # whiskers are distances, never negative (a CI bound can miss a tied mean by 1e-16)
    lo = [
        max(0.0, m - c[0]) if not math.isnan(c[0]) else 0.0 for m, c in zip(means, cis, strict=True)
    ]
    hi = [
        max(0.0, c[1] - m) if not math.isnan(c[1]) else 0.0 for m, c in zip(means, cis, strict=True)
    ]
    ax.barh(y, means, xerr=[lo, hi], color="#4C78A8", capsize=3)
    ax.set_yticks(y, labels=list(groups))
    ax.set_xlabel("mean panel score (95% CI)")
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    return to_svg(fig)


def kappa_heatmap_svg(title: str, agreement: PanelAgreement) -> str:
    """Pairwise κ between judges as a heatmap with values written in."""
    judges = agreement.judges
    k = len(judges)
    mat = np.eye(k)
    for (a, b), v in agreement.pairwise_kappa.items():
        i, j = judges.index(a), judges.index(b)
        mat[i, j] = mat[j, i] = v
    fig = Figure(figsize=(1.2 * k + 2.5, 1.0 * k + 1.5))
    ax = fig.subplots()
    im = ax.imshow(mat, vmin=-0.2, vmax=1.0, cmap="viridis")
    ax.set_xticks(range(k), labels=judges, rotation=30, ha="right")
    ax.set_yticks(range(k), labels=judges)
    for i in range(k):
        for j in range(k):
            text = "n/a" if math.isnan(mat[i, j]) else f"{mat[i, j]:.2f}"
            ax.text(
                j, i, text, ha="center", va="center", color="white" if mat[i, j] < 0.6 else "black"
            )
    fig.colorbar(im, ax=ax, label="κ (quadratic)")
    ax.set_title(title)
    return to_svg(fig)


def elo_svg(result: EloResult) -> str:
    """Elo point estimates with bootstrap CIs, best on top."""
    models = result.models
    fig = Figure(figsize=(6.5, 0.45 * len(models) + 1.0))
    ax = fig.subplots()
    y = np.arange(len(models))[::-1]
    r = [result.ratings[m] for m in models]
    lo = [result.ratings[m] - result.ci[m][0] for m in models]
    hi = [result.ci[m][1] - result.ratings[m] for m in models]
    ax.errorbar(r, y, xerr=[lo, hi], fmt="o", color="#E45756", capsize=3)
    ax.axvline(1000, color="grey", lw=0.8, ls="--")
    ax.set_yticks(y, labels=models)
    ax.set_xlabel("Bradley–Terry Elo (95% CI)")
    ax.set_title(f"Arena: {result.n_votes} votes")
    ax.grid(axis="x", alpha=0.3)
    return to_svg(fig)


def aj_f1_svg(subdomains: Sequence[str], f1: dict[tuple[str, str], list[float]]) -> str:
    """Grouped bars of F1 per subdomain and overall, one bar per (model, agentic?)."""
    cats = [*subdomains, "overall"]
    fig = Figure(figsize=(1.2 * len(cats) + 3, 3.2))
    ax = fig.subplots()
    width = 0.8 / max(1, len(f1))
    x = np.arange(len(cats))
    for i, ((model, kind), vals) in enumerate(sorted(f1.items())):
        ax.bar(
            x + i * width,
            np.nan_to_num(vals),
            width,
            label=f"{model} ({'agent' if kind == 'agent' else 'llm'})",
        )
    ax.set_xticks(x + width * (len(f1) - 1) / 2, labels=cats)
    ax.set_ylabel("F1 (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7)
    ax.set_title("Judge F1 against labels")
    return to_svg(fig)
