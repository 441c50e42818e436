"""What every programmatic check grades with: a share as a level, who graded, the Grade."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from lhbench.schema import (
    DimensionScore,
    Grade,
    JudgeIdentity,
    JudgeKind,
    Rubric,
    TierKind,
    grade_key,
)

__all__ = ["measured_grade", "programmatic_identity", "share_level"]

# a measured share below each edge gets that level; 0.95 and above is a 5
_EDGES = ((1, 0.2), (2, 0.5), (3, 0.75), (4, 0.95))


def share_level(value: float | None) -> int | None:
    """A 1–5 level for a share: <0.2, <0.5, <0.75, <0.95, else 5 (None stays None)."""
    if value is None:
        return None
    for lvl, edge in _EDGES:
        if value < edge:
            return lvl
    return 5


def programmatic_identity(name: str, version: str, settings: dict[str, Any]) -> JudgeIdentity:
    """Who graded: the checks ``name`` (``lhbench.<name>``), at ``version``, with ``settings``."""
    return JudgeIdentity(
        kind=JudgeKind.PROGRAMMATIC,
        model=f"lhbench.{name}",
        family="programmatic",
        prompt_version=version,
        settings=settings,
    )


def measured_grade(
    run_id: str,
    rubric: Rubric,
    values: Mapping[str, tuple[float | None, str]],
    *,
    judge: JudgeIdentity,
    binary_cut: float,
    raw_output: str,
    repeat: int = 0,
    latency_s: float | None = None,
    evidence_chars: int = 3000,
    unmeasured: str = "not measured",
) -> Grade:
    """The output-tier grade of measured shares: each dimension's value as its level.

    A 1–5 dimension takes :func:`share_level`; a two-level one its high level at
    ``binary_cut`` or above; a dimension with no value is unscorable, saying why.

    Args:
        run_id: The run graded.
        rubric: The rubric whose output tier is graded.
        values: dimension id -> (share in [0, 1] or None, evidence).
        judge: The checks' identity (part of the grade's key).
        binary_cut: The share at which a two-level dimension is met.
        raw_output: The checks' report as JSON (kept with the grade, cut at 200 kB).
        repeat: The repeat number (part of the key).
        latency_s: How long the checks took.
        evidence_chars: Evidence kept per dimension.
        unmeasured: What an unscorable dimension's reason starts with.
    """
    tier = rubric.tier(TierKind.OUTPUT)
    scores = []
    for d in tier.dimensions:
        value, evidence = values.get(d.id, (None, "not measured by the checks"))
        lvl = share_level(value)
        if lvl is not None and d.scale.value != "1-5":
            lvl = d.scale.high if (value or 0) >= binary_cut else d.scale.low
        scores.append(
            DimensionScore(
                dimension_id=d.id,
                scale=d.scale,
                score=lvl,
                matched_level=d.anchors[lvl] if lvl is not None else None,
                evidence=(f"{value:.3f}: " if value is not None else "")
                + evidence[:evidence_chars],
                unscorable_reason=None if lvl is not None else f"{unmeasured}: {evidence}"[:500],
            )
        )
    return Grade(
        id=f"grade-{uuid.uuid4().hex}",
        run_id=run_id,
        rubric_id=rubric.id,
        rubric_version=rubric.version,
        rubric_hash=rubric.content_hash,
        tier=TierKind.OUTPUT,
        judge=judge,
        scores=scores,
        tier_score=tier.score({s.dimension_id: s.score for s in scores}),
        repeat=repeat,
        raw_output=raw_output[:200_000],
        latency_s=latency_s,
        key=grade_key(run_id, judge.key, rubric.content_hash, TierKind.OUTPUT.value, repeat),
    )
