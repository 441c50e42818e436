"""The small table and section types every report section returns (Markdown, CSV, HTML)."""

from __future__ import annotations

import csv
import html
import io
import math
from dataclasses import dataclass, field

__all__ = ["Cell", "Section", "Table", "fmt"]

Cell = str | int | float | None


def fmt(value: Cell, digits: int = 2) -> str:
    """A cell as text: floats rounded, NaN and None as 'n/a'."""
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


@dataclass
class Table:
    """Rows of cells under named columns, with a slug for its CSV file and footnotes."""

    slug: str
    title: str
    columns: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    digits: int = 2

    def to_markdown(self) -> str:
        """A GitHub-flavoured Markdown table with its title and notes."""
        out = [f"**{self.title}**", ""]
        out.append("| " + " | ".join(self.columns) + " |")
        out.append("|" + "|".join("---" for _ in self.columns) + "|")
        for row in self.rows:
            out.append("| " + " | ".join(fmt(c, self.digits) for c in row) + " |")
        out.extend(f"\n_{n}_" for n in self.notes)
        return "\n".join(out) + "\n"

    def to_csv(self) -> str:
        """CSV with full-precision numbers (NaN and None left empty)."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(self.columns)
        for row in self.rows:
            writer.writerow(
                [
                    ""
                    if c is None or (isinstance(c, float) and math.isnan(c))
                    else repr(c)
                    if isinstance(c, float)
                    else c
                    for c in row
                ]
            )
        return buf.getvalue()

    def to_html(self) -> str:
        """An HTML table with a caption."""
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(fmt(c, self.digits))}</td>" for c in row) + "</tr>"
            for row in self.rows
        )
        notes = "".join(f"<p class='note'>{html.escape(n)}</p>" for n in self.notes)
        return (
            f"<table id='{html.escape(self.slug)}'><caption>{html.escape(self.title)}</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{notes}"
        )


@dataclass
class Section:
    """A titled part of the report: tables, plot data, notes, and a line when it has no data."""

    title: str
    tables: list[Table] = field(default_factory=list)
    empty: str | None = None
    plots: dict[str, object] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
