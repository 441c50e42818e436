"""Stored tier scores of tiers that mix scales, recomputed with each dimension normalised.

A tier whose dimensions are on different scales (``0-2`` and ``binary``, say) used to be
scored Σ wᵢ·sᵢ over raw levels: a binary dimension pulled half as hard as a 0-2 one and the
tier topped out below its scale (1.8 of "0-2" for the bundled sample rubric). It is now scored
on 0-1 with each score normalised to its own scale first (``lhbench.schema.MIXED_SCALE_RULE``).

This recomputes, from each stored grade's own dimension scores and its rubric's weights,
the ``tier_score`` of every ok grade of such a tier (column and document alike). No model is
asked, and nothing else changes: the rubric's content, hence every grade's identity, is the
same, so a recompute is exact where regrading would only repeat the judges' answers. Tiers
on one scale are untouched. A grade whose rubric content is not stored is left as it was.

Revision ID: 0015
Revises: the newest revision below 0015 present
Create Date: 2026-11-27 05:00:00
"""

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import op
from pydantic import ValidationError
from sqlalchemy.dialects.postgresql import JSONB

from lhbench.schema import Rubric, Tier

revision: str = "0015"
# other work in progress may add revisions below 0015: follow the newest one present
down_revision: str | None = max(
    p.name[:4] for p in Path(__file__).parent.glob("00[0-9][0-9]_*.py") if p.name[:4] < "0015"
)
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def _mixed_tiers(bind: sa.Connection) -> dict[tuple[str, str], Tier]:
    """(rubric content hash, tier kind) -> tier, for every stored tier that mixes scales."""
    rubrics = sa.table(
        "rubrics", sa.column("content_hash", sa.String), sa.column("document", _JSON)
    )
    out: dict[tuple[str, str], Tier] = {}
    for content_hash, document in bind.execute(
        sa.select(rubrics.c.content_hash, rubrics.c.document)
    ):
        try:
            rubric = Rubric.model_validate(document)
        except ValidationError:
            continue
        for tier in rubric.tiers:
            if tier.mixed_scales:
                out[(content_hash, tier.kind.value)] = tier
    return out


def _rescore(score: Callable[[Tier, dict[str, Any]], float | None]) -> None:
    bind = op.get_bind()
    grades = sa.table(
        "grades",
        sa.column("id", sa.String),
        sa.column("rubric_hash", sa.String),
        sa.column("tier", sa.String),
        sa.column("status", sa.String),
        sa.column("tier_score", sa.Float),
        sa.column("document", _JSON),
    )
    for (content_hash, kind), tier in _mixed_tiers(bind).items():
        rows = bind.execute(
            sa.select(grades.c.id, grades.c.document).where(
                grades.c.rubric_hash == content_hash,
                grades.c.tier == kind,
                grades.c.status == "ok",
            )
        ).all()
        for grade_id, document in rows:
            scores = {s["dimension_id"]: s["score"] for s in document.get("scores", [])}
            try:
                value = score(tier, scores)
            except (KeyError, TypeError, ValueError):
                continue  # scores that do not fit the tier: left as they were
            bind.execute(
                sa.update(grades)
                .where(grades.c.id == grade_id)
                .values(tier_score=value, document={**document, "tier_score": value})
            )


def _raw(tier: Tier, scores: dict[str, Any]) -> float | None:
    """The score before this revision: Σ wᵢ·sᵢ / Σ wᵢ over raw levels (for downgrade)."""
    pairs = [(d.weight, scores[d.id]) for d in tier.dimensions if scores.get(d.id) is not None]
    total = sum(w for w, _ in pairs)
    return sum(w * s for w, s in pairs) / total if total else None


def upgrade() -> None:
    _rescore(lambda tier, scores: tier.score(scores))


def downgrade() -> None:
    _rescore(_raw)
