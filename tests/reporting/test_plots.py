"""Figures draw labels from data as the characters they hold: never mathtext, never markup."""

from __future__ import annotations

from collections.abc import Iterator

import matplotlib
import pytest

from lhbench.reporting.plots import aj_f1_svg, elo_svg, kappa_heatmap_svg, leaderboard_svg
from lhbench.stats import PanelAgreement, bradley_terry_elo

NAMES = ["$\\frac{a}{$ broken", "cost $5 to $10", "<script>alert(1)</script> & co"]


@pytest.fixture(params=["defaults", "after rcdefaults"])
def reset(request: pytest.FixtureRequest) -> Iterator[None]:
    # a library that resets matplotlib's settings must not bring mathtext back
    saved = matplotlib.rcParams.copy()
    if request.param == "after rcdefaults":
        matplotlib.rcdefaults()
    yield
    matplotlib.rcParams.update(saved)


def _escaped(name: str) -> str:
    return name.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def test_leaderboard_and_elo_labels_are_literal(reset: None) -> None:
    svg = leaderboard_svg(NAMES[1], NAMES, [1.0, 2.0, 3.0], [(0.5, 1.5)] * 3)
    for name in NAMES:
        assert _escaped(name) in svg
    assert "<script>" not in svg
    votes = [(NAMES[0], NAMES[1], "a"), (NAMES[1], NAMES[2], "a"), (NAMES[2], NAMES[0], "b")] * 3
    svg = elo_svg(bradley_terry_elo(votes, n_bootstrap=20))
    for name in NAMES:
        assert _escaped(name) in svg


def test_kappa_and_f1_labels_are_literal(reset: None) -> None:
    agree = PanelAgreement(
        judges=NAMES[:2],
        pairwise_kappa={(NAMES[0], NAMES[1]): 0.5},
        mean_kappa=0.5,
        dimension_kappa={},
        alpha=0.4,
        mean_variance=0.1,
        n_runs=3,
        n_ratings=9,
    )
    svg = kappa_heatmap_svg("$x^2$ tier", agree)
    assert _escaped(NAMES[0]) in svg and "$x^2$ tier" in svg
    svg = aj_f1_svg(["$sub$"], {(NAMES[2], "agent"): [50.0, 50.0]})
    assert "$sub$" in svg and _escaped(NAMES[2]) in svg
