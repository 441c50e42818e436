"""The judge-agreement table defines its counts (runs, units, ratings) beside them."""

from __future__ import annotations

from lhbench.reporting import ReportData
from lhbench.reporting.agreement import agreement_section
from tests.factories import make_grade, make_run


def test_ratings_are_defined_and_units_counted_apart() -> None:
    runs = [make_run("r1"), make_run("r2")]
    grades = [
        make_grade("r1", "openai:gpt-5.2", (4, 3, 5, 2)),
        make_grade("r1", "anthropic:sonnet", (4, 4, 5, 2)),
        make_grade("r2", "openai:gpt-5.2", (3, 3, 4, 2)),
        make_grade("r2", "anthropic:sonnet", (3, 2, 4)),  # this judge left one dimension out
    ]
    sec, _ = agreement_section(ReportData.build(runs, grades=grades))
    summary = sec.tables[0]
    row = dict(zip(summary.columns, summary.rows[0], strict=True))
    # 2 runs x 4 dimensions = 8 units; 4 + 4 + 4 + 3 = 15 judge scores
    assert (row["runs"], row["units"], row["ratings"]) == (2, 8, 15)
    notes = " ".join(summary.notes)
    assert "ratings: judge scores counted, one per judge × run × dimension" in notes
    assert "units: (run, dimension) pairs" in notes
    assert "counts units, not ratings" in notes
