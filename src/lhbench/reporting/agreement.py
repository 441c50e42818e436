"""Judge agreement (LH-Bench Table 8): pairwise κ, Krippendorff's α, cross-judge variance."""

from __future__ import annotations

import math

from lhbench.judges import TierKey
from lhbench.reporting.data import ReportData
from lhbench.reporting.leaderboard import tier_agreement
from lhbench.reporting.tables import Cell, Section, Table
from lhbench.stats import PanelAgreement

__all__ = ["agreement_section"]


def agreement_section(data: ReportData) -> tuple[Section, dict[TierKey, PanelAgreement]]:
    """Judge agreement per rubric version (LH-Bench Table 8) with pairwise κ matrices."""
    sec = Section("Judge agreement")
    results: dict[TierKey, PanelAgreement] = {}
    keys = list(data.columns_by_tier)
    normalised_keys = []
    for key in keys:
        agree, normalised = tier_agreement(data, key)
        if normalised:
            normalised_keys.append(key.title)
        if len(agree.judges) >= 2:
            results[key] = agree
    if not results:
        sec.empty = "No tier was graded by two or more judges: agreement needs a panel."
        return sec, results
    summary = Table(
        slug="judge_agreement",
        title="Inter-judge agreement by rubric version (κ: quadratic-weighted Cohen's kappa)",
        columns=[
            "rubric",
            "version",
            "tier",
            "author",
            "judges",
            "mean pairwise κ",
            "κ pairs",
            "undefined κ pairs",
            "α (ordinal)",
            "mean variance",
            "runs",
            "units",
            "ratings",
        ],
        notes=[
            "runs: runs at least one judge scored on the tier; units: (run, dimension) pairs "
            "at least one judge scored; ratings: judge scores counted, one per judge × run × "
            "dimension (first repeat only; failed grades and unscorable dimensions left out), "
            "so J judges scoring every unit give ratings = J × units. LH-Bench §8.6's "
            "'92 runs, 360 ratings' (under 92 × 4 rubrics = 368) counts units, not ratings.",
            "mean pairwise κ: mean over judge pairs of quadratic-weighted Cohen's κ on the "
            "units both judges scored, over the pairs where κ is defined; κ pairs: judge "
            "pairs; undefined κ pairs: pairs left out of the mean (no unit scored by both, "
            "or both judges gave one and the same level throughout, κ = 0/0); "
            "α: Krippendorff's α (ordinal) over all judges and units; mean variance: "
            "population variance across judges of a unit's scores, "
            "averaged over units two or more judges scored.",
        ],
    )
    if normalised_keys:
        summary.notes.append(
            f"{', '.join(normalised_keys)}: the tier mixes scales, so κ, α and variance "
            "compare scores normalised to their own scale, (s − low) / (high − low)."
        )
    for key, agree in results.items():
        rubric = data.rubric_for(key.rubric_id, key.version)
        summary.rows.append(
            [
                key[0],
                key[1],
                key[2],
                rubric.author.value if rubric else None,
                len(agree.judges),
                agree.mean_kappa,
                agree.n_pairs,
                agree.undefined_pairs,
                agree.alpha,
                agree.mean_variance,
                agree.n_runs,
                agree.n_units,
                agree.n_ratings,
            ]
        )
        matrix = Table(
            slug=f"kappa_matrix_{key.unique_slug(keys)}",
            title=f"Pairwise κ, {key.title}",
            columns=["judge", *agree.judges],
        )
        for j1 in agree.judges:
            row: list[Cell] = [j1]
            for j2 in agree.judges:
                if j1 == j2:
                    row.append(1.0)
                else:
                    row.append(agree.pairwise_kappa.get((min(j1, j2), max(j1, j2)), math.nan))
            matrix.rows.append(row)
        sec.tables.append(matrix)
        sec.plots[matrix.slug] = agree
    sec.tables.insert(0, summary)
    return sec, results
