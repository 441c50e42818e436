import pytest
from pydantic import ValidationError

from lhbench.schema import Dimension, DimensionScore, Rubric, Scale, Tier


def dim(
    i: str, w: float, scale: str = "1-5", anchors: dict[int, str] | None = None
) -> dict[str, object]:
    levels = Scale(scale).levels
    return {
        "id": i,
        "name": i.title(),
        "weight": w,
        "description": "d",
        "scale": scale,
        "anchors": anchors if anchors is not None else {lv: f"level {lv}" for lv in levels},
    }


def test_tier_weights_must_sum_to_one() -> None:
    with pytest.raises(ValidationError, match=r"sum to 0\.9; expected 1"):
        Tier.model_validate({"kind": "process", "dimensions": [dim("a", 0.5), dim("b", 0.4)]})
    # within the 1e-6 tolerance passes; outside it fails
    Tier.model_validate({"kind": "process", "dimensions": [dim("a", 0.5), dim("b", 0.5000005)]})
    with pytest.raises(ValidationError):
        Tier.model_validate({"kind": "process", "dimensions": [dim("a", 0.5), dim("b", 0.500002)]})


def test_every_level_needs_an_anchor() -> None:
    with pytest.raises(ValidationError, match=r"level\(s\) 3 have no anchor"):
        Dimension.model_validate(dim("a", 1.0, anchors={1: "x", 2: "y", 4: "z", 5: "w"}))
    with pytest.raises(ValidationError, match="outside scale 0-2"):
        Dimension.model_validate(dim("a", 1.0, "0-2", anchors={0: "x", 1: "y", 2: "z", 3: "w"}))
    with pytest.raises(ValidationError, match="empty"):
        Dimension.model_validate(dim("a", 1.0, "binary", anchors={0: "no", 1: "  "}))


def test_duplicate_dimension_ids_rejected() -> None:
    with pytest.raises(ValidationError, match="duplicate dimension id"):
        Tier.model_validate({"kind": "output", "dimensions": [dim("a", 0.5), dim("a", 0.5)]})


def test_tier_score_skips_unscorable_dimensions() -> None:
    tier = Tier.model_validate(
        {
            "kind": "process",
            "dimensions": [dim("a", 0.3), dim("b", 0.25), dim("c", 0.25), dim("d", 0.2)],
        }
    )
    assert tier.score({"a": 4, "b": 3, "c": 5, "d": 2}) == pytest.approx(
        0.3 * 4 + 0.25 * 3 + 0.25 * 5 + 0.2 * 2
    )
    # d unscorable: it leaves the denominator rather than counting as zero
    assert tier.score({"a": 4, "b": 3, "c": 5, "d": None}) == pytest.approx(
        (0.3 * 4 + 0.25 * 3 + 0.25 * 5) / 0.8
    )
    assert tier.score({"a": None}) is None
    with pytest.raises(ValueError, match="outside scale"):
        tier.score({"a": 6})


def test_scores_must_lie_inside_the_scale() -> None:
    DimensionScore(dimension_id="a", scale=Scale.ZERO_TO_TWO, score=0)
    with pytest.raises(ValidationError, match="outside scale 0-2"):
        DimensionScore(dimension_id="a", scale=Scale.ZERO_TO_TWO, score=3)
    with pytest.raises(ValidationError, match="outside scale 1-5"):
        DimensionScore(dimension_id="a", scale=Scale.ONE_TO_FIVE, score=0)
    with pytest.raises(ValidationError, match="unscorable_reason"):
        DimensionScore(dimension_id="a", scale=Scale.BINARY, score=None)


def test_rubric_version_and_family() -> None:
    r = Rubric.model_validate(
        {
            "id": "r",
            "version": 1.2,
            "title": "R",
            "tiers": [{"kind": "process", "dimensions": [dim("a", 1.0)]}],
        }
    )
    assert r.version == "1.2"
    assert r.family == "r"
    with pytest.raises(ValidationError, match="appear more than once"):
        Rubric.model_validate(
            {
                "id": "r",
                "version": "1",
                "title": "R",
                "tiers": [
                    {"kind": "process", "dimensions": [dim("a", 1.0)]},
                    {"kind": "process", "dimensions": [dim("b", 1.0)]},
                ],
            }
        )


def test_a_tier_mixing_scales_normalises_each_dimension_to_its_scale() -> None:
    # the bundled sample output tier: a binary dimension beside two 0-2 ones
    from lhbench.packs import bundled_pack_dirs, load_pack

    pack = load_pack(next(d for d in bundled_pack_dirs() if d.name == "lhbench-samples"))
    tier = next(r for r in pack.rubrics if r.id == "samples-output").tier("output")
    assert tier.mixed_scales and tier.score_range == (0, 1)
    assert tier.scale_label == "0–1 (dimensions on 0-2, binary, each normalised to its scale)"
    top = {"deliverable": 1, "correctness": 2, "clarity": 2}
    assert tier.score(top) == pytest.approx(1.0)  # raw levels gave 1.8 of a "0-2" scale
    assert tier.score({"deliverable": 0, "correctness": 0, "clarity": 0}) == 0.0
    # the binary dimension pulls with its whole weight (raw levels gave it half)
    assert tier.score({"deliverable": 1, "correctness": 0, "clarity": 0}) == pytest.approx(0.2)
    assert tier.score({"deliverable": 0, "correctness": 1, "clarity": 2}) == pytest.approx(
        0.5 * 0.5 + 0.3 * 1.0
    )
    # unscorable still leaves the denominator
    assert tier.score({"deliverable": None, "correctness": 2, "clarity": 1}) == pytest.approx(
        (0.5 * 1.0 + 0.3 * 0.5) / 0.8
    )
    # a 1-5 beside a 0-2: (s - 1)/4 and s/2
    both = Tier.model_validate(
        {"kind": "output", "dimensions": [dim("a", 0.5), dim("b", 0.5, "0-2")]}
    )
    assert both.score({"a": 3, "b": 1}) == pytest.approx(0.5 * 0.5 + 0.5 * 0.5)


def test_a_tier_on_one_scale_keeps_its_scale_and_its_scores() -> None:
    tier = Tier.model_validate({"kind": "process", "dimensions": [dim("a", 0.6), dim("b", 0.4)]})
    assert not tier.mixed_scales and tier.score_range == (1, 5) and tier.scale_label == "1–5"
    assert tier.score({"a": 5, "b": 5}) == 5.0
    assert tier.score({"a": 4, "b": 2}) == 0.6 * 4 + 0.4 * 2  # exactly Σ wᵢ·sᵢ, as stored
    two = Tier.model_validate({"kind": "output", "dimensions": [dim("a", 1.0, "0-2")]})
    assert two.scale_label == "0–2" and two.score({"a": 2}) == 2.0
