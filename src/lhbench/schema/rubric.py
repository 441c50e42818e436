"""Rubrics: tiers of weighted dimensions, each scored on an anchored scale.

A tier's score is the weighted sum of its dimension scores (weights sum to 1), on the tier's
scale: the scale its dimensions share, or 0-1 when they are on different scales, each
dimension then normalised to its own scale first (see :meth:`Tier.score`). The panel score
is the mean over judges, with the cross-judge population variance kept.
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Literal

from pydantic import Field, model_validator

from lhbench.schema.base import Schema, VersionLabel

__all__ = [
    "MIXED_SCALE_RULE",
    "WEIGHT_TOLERANCE",
    "AuthorKind",
    "Dimension",
    "Rubric",
    "Scale",
    "Tier",
    "TierKind",
]

WEIGHT_TOLERANCE = 1e-6
MIXED_SCALE_RULE = (
    "a tier whose dimensions are on different scales is scored 0-1: each dimension's score "
    "s is normalised to its own scale, (s - low) / (high - low), before weighting"
)


class Scale(StrEnum):
    """The scales a dimension can be scored on."""

    ONE_TO_FIVE = "1-5"
    ZERO_TO_TWO = "0-2"
    BINARY = "binary"

    @property
    def levels(self) -> tuple[int, ...]:
        """Every score a judge may give on this scale, lowest first."""
        return {
            Scale.ONE_TO_FIVE: (1, 2, 3, 4, 5),
            Scale.ZERO_TO_TWO: (0, 1, 2),
            Scale.BINARY: (0, 1),
        }[self]

    @property
    def low(self) -> int:
        """The lowest level."""
        return self.levels[0]

    @property
    def high(self) -> int:
        """The highest level."""
        return self.levels[-1]


class TierKind(StrEnum):
    """What a tier grades: the process (transcript), the output (artifacts), or behaviour."""

    PROCESS = "process"
    OUTPUT = "output"
    BEHAVIOR = "behavior"


class AuthorKind(StrEnum):
    """Who wrote a rubric: a domain expert or an LLM (LH-Bench compares the two)."""

    EXPERT = "expert"
    LLM = "llm"


class Dimension(Schema):
    """One scored criterion of a tier, with an anchor text for every level of its scale."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_\-]*$")
    name: str = Field(min_length=1)
    weight: float = Field(gt=0, le=1)
    description: str = Field(min_length=1, description="What the dimension measures.")
    evidence: list[str] = Field(
        default_factory=list, description="Observable evidence a judge should look for."
    )
    scale: Scale = Scale.ONE_TO_FIVE
    anchors: dict[int, str] = Field(description="Level -> what that level looks like.")

    @model_validator(mode="after")
    def _anchors_cover_scale(self) -> Dimension:
        levels = set(self.scale.levels)
        missing = sorted(levels - set(self.anchors))
        extra = sorted(set(self.anchors) - levels)
        if missing:
            raise ValueError(
                f"dimension '{self.id}': scale {self.scale.value} level(s) "
                f"{', '.join(map(str, missing))} have no anchor; every level needs one"
            )
        if extra:
            raise ValueError(
                f"dimension '{self.id}': anchor(s) for level(s) {', '.join(map(str, extra))} "
                f"are outside scale {self.scale.value} (levels {list(self.scale.levels)})"
            )
        empty = [lvl for lvl, text in self.anchors.items() if not text.strip()]
        if empty:
            raise ValueError(f"dimension '{self.id}': anchor for level {empty[0]} is empty")
        return self

    def check_score(self, score: int) -> None:
        """Raise ValueError unless ``score`` is a level of this dimension's scale."""
        if score not in self.scale.levels:
            raise ValueError(
                f"score {score} for '{self.id}' is outside scale {self.scale.value} "
                f"(levels {list(self.scale.levels)})"
            )


class Tier(Schema):
    """A group of dimensions whose weights sum to 1, scored from one kind of evidence."""

    kind: TierKind
    enabled: bool = Field(default=True, description="Optional tiers (behaviour) start disabled.")
    evidence_source: Literal["trajectory", "artifacts"] = "trajectory"
    dimensions: list[Dimension] = Field(min_length=1)

    @model_validator(mode="after")
    def _weights_and_ids(self) -> Tier:
        ids = [d.id for d in self.dimensions]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate dimension id(s) {', '.join(dupes)} in tier {self.kind}")
        total = math.fsum(d.weight for d in self.dimensions)
        if abs(total - 1.0) > WEIGHT_TOLERANCE:
            raise ValueError(
                f"weights in tier '{self.kind}' sum to {total:.6g}; "
                f"expected 1 (±{WEIGHT_TOLERANCE})"
            )
        return self

    def dimension(self, dimension_id: str) -> Dimension:
        """The dimension with this id (KeyError if there is none)."""
        for d in self.dimensions:
            if d.id == dimension_id:
                return d
        raise KeyError(dimension_id)

    @property
    def mixed_scales(self) -> bool:
        """Whether the dimensions are on more than one scale."""
        return len({d.scale for d in self.dimensions}) > 1

    @property
    def score_range(self) -> tuple[int, int]:
        """The lowest and highest tier score: the shared scale's, or (0, 1) when mixed."""
        if self.mixed_scales:
            return (0, 1)
        scale = self.dimensions[0].scale
        return (scale.low, scale.high)

    @property
    def scale_label(self) -> str:
        """The tier's scale as a report states it, e.g. ``1–5`` or ``0–1 (normalised)``."""
        low, high = self.score_range
        if self.mixed_scales:
            scales = ", ".join(sorted({d.scale.value for d in self.dimensions}))
            return f"{low}–{high} (dimensions on {scales}, each normalised to its scale)"
        return f"{low}–{high}"

    def score(self, scores: dict[str, int | None]) -> float | None:
        """Weighted tier score over the dimensions that were scored, on the tier's scale.

        Dimensions on one scale: S = Σ wᵢ·sᵢ / Σ wᵢ (LH-Bench's Σ wᵢ·sᵢ, weights summing to
        1), on that scale. Dimensions on different scales (``0-2`` and ``binary``, say): a
        raw sum would give a binary dimension half the pull of a 0-2 one and cap the tier
        below its top, so each score is first normalised to its own scale, nᵢ = (sᵢ −
        lowᵢ) / (highᵢ − lowᵢ), and S = Σ wᵢ·nᵢ / Σ wᵢ on 0-1 (:data:`MIXED_SCALE_RULE`).

        Unscorable dimensions (``None``) leave the denominator, so they neither count as
        zero nor inflate the score. Returns None when nothing was scored.
        """
        mixed = self.mixed_scales
        num = 0.0
        den = 0.0
        for d in self.dimensions:
            s = scores.get(d.id)
            if s is None:
                continue
            d.check_score(s)
            value = (s - d.scale.low) / (d.scale.high - d.scale.low) if mixed else s
            num += d.weight * value
            den += d.weight
        return None if den == 0 else num / den


class Rubric(Schema):
    """A versioned rubric: one or more tiers.

    Rubrics sharing a ``family`` are versions of one another (LH-Bench compares v1.1,
    LLM-authored, with v1.2, expert-authored, on the same runs).
    """

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.\-]*$")
    version: VersionLabel
    family: str = Field(default="", description="Defaults to the rubric id.")
    title: str = Field(min_length=1)
    author: AuthorKind = AuthorKind.EXPERT
    description: str = ""
    tiers: list[Tier] = Field(min_length=1)
    content_hash: str = Field(default="", description="Set by the pack loader.")

    @model_validator(mode="before")
    @classmethod
    def _family_defaults_to_id(cls, data: object) -> object:
        if isinstance(data, dict) and not data.get("family") and isinstance(data.get("id"), str):
            data = {**data, "family": data["id"]}
        return data

    @model_validator(mode="after")
    def _unique_tiers(self) -> Rubric:
        kinds = [t.kind for t in self.tiers]
        dupes = sorted({k.value for k in kinds if kinds.count(k) > 1})
        if dupes:
            raise ValueError(f"tier kind(s) {', '.join(dupes)} appear more than once")
        return self

    def tier(self, kind: TierKind | str) -> Tier:
        """The tier of this kind (KeyError if the rubric has none)."""
        for t in self.tiers:
            if t.kind == kind:
                return t
        raise KeyError(str(kind))
