"""``lhbench report``: Markdown, CSV and one self-contained HTML file from the store."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lhbench._gc import collector_paused
from lhbench.reporting.ablation import ablation_section
from lhbench.reporting.agreement import agreement_section
from lhbench.reporting.aj import aj_section
from lhbench.reporting.aj_breakdown import aj_breakdown_section
from lhbench.reporting.arena import arena_section
from lhbench.reporting.charts import elo_forest, forest, grouped_bars, kappa_heatmap
from lhbench.reporting.content import content_scales_section
from lhbench.reporting.data import ReportData
from lhbench.reporting.failures import failures_section
from lhbench.reporting.health import grading_health_section
from lhbench.reporting.leaderboard import LeaderboardRow, leaderboard_section
from lhbench.reporting.tables import Section
from lhbench.stats import EloResult, PanelAgreement

__all__ = ["ReportFiles", "build_sections", "write_report"]

_CSS = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}
td:first-child,td:nth-child(2),th{text-align:left}
caption{font-weight:600;text-align:left;padding:4px 0}
.note{color:#555;font-size:12px;margin:2px 0}
.empty{color:#777;font-style:italic}
.banner{background:#fff4d6;border:1px solid #e0b84c;padding:8px 12px;font-weight:600}
figure{margin:1em 0}
figcaption{font-size:13px;color:#444;margin-top:2px}
svg.chart text{font-family:system-ui,sans-serif}
"""


@dataclass(frozen=True)
class ReportFiles:
    """Where a report was written."""

    directory: Path
    markdown: Path
    html: Path
    csv: list[Path]


@collector_paused()  # the loaded store is large; the sections' temporaries make no cycles
def build_sections(
    data: ReportData,
    *,
    by: Sequence[str] = ("harness", "model"),
    ablation: str | None = None,
    baseline: str | None = None,
    seed: int = 0,
) -> list[Section]:
    """Compute every section (one that has no data says so in one line)."""
    sections = [leaderboard_section(data, by, seed=seed)]
    agreement, _ = agreement_section(data)
    sections.append(agreement)
    arena, _ = arena_section(data, by, seed=seed)
    sections.append(arena)
    if ablation:
        sections.append(ablation_section(data, ablation, baseline, by, seed=seed))
    sections.append(aj_section(data))
    sections.append(aj_breakdown_section(data))
    if data.chapter_grades:
        sections.append(content_scales_section(data, by, seed=seed))
    sections.append(failures_section(data, by))
    sections.append(grading_health_section(data))
    return sections


def _figures(section: Section) -> list[tuple[str, str]]:
    """``(caption, svg)`` of each of the section's plots (the web app draws the same charts)."""
    # a plot shows the table of the same slug, and takes its title
    titles = {t.slug: t.title for t in section.tables}
    figs: list[tuple[str, str]] = []
    for slug, payload in section.plots.items():
        title = titles.get(slug, slug)
        if slug.startswith("leaderboard_") and isinstance(payload, list):
            rows: list[LeaderboardRow] = payload
            chart = forest(
                [(r.group, r.mean, r.ci[0], r.ci[1]) for r in rows],
                axis="mean panel score (95% bootstrap CI)",
            )
            figs.append((title, chart))
        elif isinstance(payload, PanelAgreement):
            figs.append((title, kappa_heatmap(payload, title=title)))
        elif isinstance(payload, EloResult):
            figs.append((f"Arena: {payload.n_votes} votes", elo_forest(payload)))
        elif slug == "aj_f1" and isinstance(payload, tuple):
            subdomains, f1 = payload
            series = [
                (f"{model} ({'agent' if kind == 'agent' else 'llm'})", values)
                for (model, kind), values in sorted(f1.items())
            ]
            chart = grouped_bars([*subdomains, "overall"], series, axis="F1 (%)")
            figs.append(("Judge F1 against labels", chart))
    return figs


def write_report(
    data: ReportData,
    directory: Path,
    *,
    by: Sequence[str] = ("harness", "model"),
    ablation: str | None = None,
    baseline: str | None = None,
    seed: int = 0,
    notes: Sequence[str] | None = None,
) -> ReportFiles:
    """Write ``report.md``, ``report.html`` (plots inline as SVG) and one CSV per table.

    ``notes`` go at the top (e.g. that a model stub gave every answer).
    """
    directory.mkdir(parents=True, exist_ok=True)
    sections = build_sections(data, by=by, ablation=ablation, baseline=baseline, seed=seed)
    counts = (
        f"Runs: {len(data.runs)} · grades used: {len(data.grade_columns)} of "
        f"{len(data.all_grade_columns)} "
        f"stored · votes: {len(data.votes)} · verdicts: {data.verdict_count} · "
        f"labels: {len(data.labels)}"
    )
    excluded = data.excluded.notes()
    banner = list(notes or [])
    unconfined = sum(1 for r in data.runs.values() if r.metadata.get("unsandboxed"))
    if unconfined:
        banner.append(
            f"{unconfined} of {len(data.runs)} runs ran without a sandbox "
            "(--unsafe-no-sandbox): their agents' commands were not confined, so their "
            "workspaces and results may reflect access to this machine."
        )
    md = [
        "# lhbench report",
        "",
        *[f"> **{n}**\n" for n in banner],
        counts,
        "",
        *[f"- {n}" for n in excluded],
        "",
    ]
    body = [
        "<h1>lhbench report</h1>",
        *[f"<p class='banner'>{html.escape(n)}</p>" for n in banner],
        f"<p>{html.escape(counts)}</p>",
        *[f"<p class='note'>{html.escape(n)}</p>" for n in excluded],
    ]
    csvs = []
    for sec in sections:
        md.append(f"## {sec.title}\n")
        body.append(f"<h2>{html.escape(sec.title)}</h2>")
        notes = [n for n in sec.notes if n not in excluded]
        md.extend(f"_{n}_\n" for n in notes)
        body.extend(f"<p class='note'>{html.escape(n)}</p>" for n in notes)
        if sec.empty:
            md.append(f"{sec.empty}\n")
            body.append(f"<p class='empty'>{html.escape(sec.empty)}</p>")
            continue
        for table in sec.tables:
            md.append(table.to_markdown())
            body.append(table.to_html())
            path = directory / f"{table.slug}.csv"
            path.write_text(table.to_csv(), encoding="utf-8")
            csvs.append(path)
        for caption, svg in _figures(sec):
            body.append(f"<figure>{svg}<figcaption>{html.escape(caption)}</figcaption></figure>")
    md_path = directory / "report.md"
    md_path.write_text("\n".join(md), encoding="utf-8")
    html_path = directory / "report.html"
    html_path.write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>lhbench report</title>"
        f"<style>{_CSS}</style></head><body>{''.join(body)}</body></html>",
        encoding="utf-8",
    )
    return ReportFiles(directory=directory, markdown=md_path, html=html_path, csv=csvs)
