"""The judges page's Agent-as-a-Judge part: the report's own tables, laid out for reading.

Every figure comes from ``lhbench.reporting.aj_section`` and ``aj_breakdown_section`` (the
same functions ``lhbench report`` calls); this module only picks cells out of their
tables by column name and groups rows for display. Tables the breakdown adds later (an
ablation over a new judge setting) appear under the ablations without a change here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lhbench.reporting import ReportData, Section, Table, aj_section
from lhbench.reporting.aj_breakdown import aj_breakdown_section
from lhbench.reporting.tables import Cell

__all__ = ["AjView", "aj_view"]

# what the AJ-Bench paper calls each metric, in the breakdown's column order
METRICS = (("f1", "F1"), ("precision", "P"), ("recall", "R"), ("fpr", "FPR"), ("fnr", "FNR"))
_DOMAINS = "aj_domains"
_MODES = ("aj_failure_mode_counts", "aj_failure_modes_by_subdomain")


@dataclass(frozen=True)
class Estimate:
    """A metric in % with its t-interval over repeats (NaN where undefined)."""

    value: Cell
    lo: Cell
    hi: Cell


@dataclass(frozen=True)
class Overall:
    """One judge's overall F1: the mean of its subdomain F1 scores (from ``aj_f1``)."""

    model: str
    agentic: str
    settings: str
    overall: Estimate
    pooled: Cell
    repeats: Cell
    n: Cell


@dataclass(frozen=True)
class DomainRow:
    """One domain (``subdomain == '(domain)'``) or subdomain row of ``aj_domains``."""

    domain: str
    subdomain: str
    metrics: list[Estimate]
    repeats: Cell
    n: Cell

    @property
    def whole_domain(self) -> bool:
        """The row pools every item of the domain."""
        return self.subdomain == "(domain)"


@dataclass
class JudgeRows:
    """The ``aj_domains`` rows of one judge configuration (model, agentic, its settings)."""

    model: str
    agentic: str
    budget: Cell
    settings: str
    rows: list[DomainRow] = field(default_factory=list)


@dataclass
class AjView:
    """What the template shows; ``empty`` (with no tables) when no verdict has a label."""

    title: str
    empty: str | None
    overall: list[Overall] = field(default_factory=list)
    overall_notes: list[str] = field(default_factory=list)
    f1_table: Table | None = None
    domains_title: str = ""
    domains_notes: list[str] = field(default_factory=list)
    judges: list[JudgeRows] = field(default_factory=list)
    failure_modes: list[Table] = field(default_factory=list)
    ablations: list[Table] = field(default_factory=list)
    more: list[Table] = field(default_factory=list)
    metrics: tuple[tuple[str, str], ...] = METRICS


def _cells(t: Table, row: list[Cell]) -> dict[str, Cell]:
    return dict(zip(t.columns, row, strict=True))


def _str(c: Cell) -> str:
    return "" if c is None else str(c)


def aj_view(data: ReportData) -> AjView:
    """The AJ meta-evaluation of ``data`` as the report computes it, grouped for the page."""
    main: Section = aj_section(data)
    breakdown: Section = aj_breakdown_section(data)
    view = AjView(title=main.title, empty=main.empty)
    if main.empty:
        return view
    by_slug = {t.slug: t for t in main.tables}
    f1 = by_slug.get("aj_f1")
    if f1 is not None:
        view.f1_table = f1
        view.overall_notes = list(f1.notes)
        for row in f1.rows:
            c = _cells(f1, row)
            if c["agentic"] == "improvement":
                continue
            view.overall.append(
                Overall(
                    model=_str(c["judge model"]),
                    agentic=_str(c["agentic"]),
                    settings=_str(c.get("judge settings")),
                    overall=Estimate(c["overall"], c["ci_low"], c["ci_high"]),
                    pooled=c["pooled F1"],
                    repeats=c["repeats"],
                    n=c["n"],
                )
            )
    view.more = [t for t in main.tables if t.slug != "aj_f1"]
    for t in breakdown.tables:
        if t.slug == _DOMAINS:
            view.domains_title, view.domains_notes = t.title, list(t.notes)
            groups: dict[tuple[str, str, str, str], JudgeRows] = {}
            for row in t.rows:
                c = _cells(t, row)
                key = (
                    _str(c["judge model"]),
                    _str(c["agentic"]),
                    _str(c["tool budget"]),
                    _str(c["judge settings"]),
                )
                if key not in groups:
                    groups[key] = JudgeRows(key[0], key[1], c["tool budget"], key[3])
                    view.judges.append(groups[key])
                groups[key].rows.append(
                    DomainRow(
                        domain=_str(c["domain"]),
                        subdomain=_str(c["subdomain"]),
                        metrics=[
                            Estimate(c[m], c[f"{m}_ci_low"], c[f"{m}_ci_high"]) for m, _ in METRICS
                        ],
                        repeats=c["repeats"],
                        n=c["n"],
                    )
                )
        elif t.slug in _MODES:
            view.failure_modes.append(t)
        else:
            view.ablations.append(t)
    return view
