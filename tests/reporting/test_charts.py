"""The charts the report and the web app share: labels drawn as they are, honest geometry."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from lhbench.reporting import (
    elo_forest,
    forest,
    grouped_bars,
    heatmap,
    kappa_heatmap,
)
from lhbench.stats import PanelAgreement, bradley_terry_elo

SVG = "{http://www.w3.org/2000/svg}"
NAMES = ["$\\frac{a}{$ broken", "cost $5 to $10", "<script>alert(1)</script> & co"]


def parse(svg: str) -> ET.Element:
    """The chart as XML (it must be well formed: no label can end an element or attribute)."""
    text = str(svg).replace("<svg ", f'<svg xmlns="{SVG[1:-1]}" ', 1)
    return ET.fromstring(text)


def texts(root: ET.Element) -> set[str]:
    """Every text and tooltip drawn, as the characters a reader sees."""
    return {t.text or "" for t in root.iter(f"{SVG}text")} | {
        t.text or "" for t in root.iter(f"{SVG}title")
    }


def agreement(judges: list[str], kappa: dict[tuple[str, str], float]) -> PanelAgreement:
    return PanelAgreement(
        judges=judges,
        pairwise_kappa=kappa,
        mean_kappa=0.5,
        dimension_kappa={},
        alpha=0.4,
        mean_variance=0.1,
        n_runs=3,
        n_ratings=9,
    )


def test_labels_from_data_are_drawn_as_their_characters() -> None:
    charts = [
        forest([(n, 1.0 + i, 0.5 + i, 1.5 + i) for i, n in enumerate(NAMES)], axis=NAMES[1]),
        heatmap(NAMES, [[1.0, 0.2, 0.1], [0.2, 1.0, 0.3], [0.1, 0.3, 1.0]], title=NAMES[0]),
        grouped_bars(NAMES, [(n, [10.0, 20.0, 30.0]) for n in NAMES], axis="F1 (%)"),
    ]
    votes = [(NAMES[0], NAMES[1], "a"), (NAMES[1], NAMES[2], "a"), (NAMES[2], NAMES[0], "b")] * 3
    charts.append(elo_forest(bradley_terry_elo(votes, n_bootstrap=20)))
    for svg in charts:
        assert "<script>" not in svg
        drawn = texts(parse(svg))
        # a whole label, or the start of a shortened one with the whole in its tooltip
        for name in NAMES:
            assert name in drawn or any(t.endswith("…") and name.startswith(t[:-1]) for t in drawn)
            assert any(name in t for t in drawn), name


def test_grouped_bars_heights_follow_the_values() -> None:
    svg = grouped_bars(
        ["files", "sql", "overall"],
        [("judge (agent)", [50.0, 25.0, math.nan]), ("judge (llm)", [100.0, 150.0, 0.0])],
        axis="F1 (%)",
    )
    root = parse(svg)
    bars = {
        (r.find(f"{SVG}title").text or ""): float(r.get("height", "nan"))  # type: ignore[union-attr]
        for r in root.iter(f"{SVG}rect")
        if r.find(f"{SVG}title") is not None
    }
    full = bars["judge (llm) · files: 100.0"]
    assert full > 0
    assert bars["judge (agent) · files: 50.0"] == full / 2
    assert bars["judge (agent) · sql: 25.0"] == full / 4
    assert bars["judge (llm) · sql: 150.0"] == full  # clipped to the axis' top
    assert bars["judge (llm) · overall: 0.0"] == 0.0
    # a missing value has no bar and says so
    assert not any(k.startswith("judge (agent) · overall") for k in bars)
    assert "n/a" in texts(root)
    # the legend names every series
    assert {"judge (agent)", "judge (llm)"} <= texts(root)
    assert grouped_bars([], [("a", [])], axis="x") == ""


def test_kappa_heatmap_fills_both_halves_whatever_order_a_pair_is_keyed_in() -> None:
    svg = kappa_heatmap(agreement(["b", "a", "c"], {("b", "a"): 0.42}), title="tier")
    root = parse(svg)
    # row by row, after the column heads and each row's label (J1 …)
    cells = [t.text for t in root.iter(f"{SVG}text") if not (t.text or "").startswith("J")]
    assert cells == ["1.00", "0.42", "n/a", "0.42", "1.00", "n/a", "n/a", "n/a", "1.00"]
    assert root.get("aria-label") == "tier"


def test_forest_leaves_out_a_missing_point_estimate() -> None:
    root = parse(forest([("a", 1.0, 0.5, 1.5), ("b", math.nan, math.nan, math.nan)], axis="x"))
    assert len(list(root.iter(f"{SVG}circle"))) == 1
    assert all("nan" not in (c.get("cx") or "") for c in root.iter(f"{SVG}circle"))
