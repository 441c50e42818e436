"""What "pass" means for a Figma-to-code run: LH-Bench's quality ≥ 4 of 5, as a threshold.

LH-Bench's experts pass a run whose quality they rate 4 or 5 of 5 (Table 17). lhbench's
stand-in is deterministic: the run's **fidelity** is the mean, over the frames the ground
truth can measure, of each frame's aggregate (:meth:`FrameScores.aggregate
<lhbench.envs.figma.metrics.FrameScores.aggregate>`: text recall, drift-corrected
position, colour, typography, asset coverage and banded edge F1, renormalised over the
measures taken; a blank, leaking or unbuilt frame is 0). A run **passes** when it built,
leaks no ground truth, and its fidelity is at least its mode's threshold
(:data:`PASS_THRESHOLD` without the Figma file, calibrated; :data:`PASS_THRESHOLD_DESIGN`
with it, not yet calibrated: the two fidelities are on different scales). A run the
ground truth cannot measure at all (no Figma file and no ground-truth image for any
frame) is undecided, never a pass or a fail.

The threshold was calibrated on LH-Bench's own human outcomes: the public runs of the
Table 17 cells where the experts were unanimous (see ``docs/validation.md``, section
"Figma"), choosing the cut that maximises agreement (ties: Youden's J, then the widest
gap; :func:`lhbench.stats.calibration.calibrate_threshold`).

"Built and deployed" (strict serving works, every frame's route renders, nothing leaks)
is a separate label, ``figma-deploy``: it says the app runs, not that it is right.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lhbench.envs.figma.checks import FrameCheck

__all__ = [
    "DEPLOY_DEFINITION",
    "DEPLOY_SOURCE",
    "PASS_DEFINITION",
    "PASS_THRESHOLD",
    "PASS_THRESHOLD_DESIGN",
    "Fidelity",
    "frame_fidelity",
]

#: Image-only mode (no Figma file: fidelity is banded edge F1, gated frames 0): calibrated
#: on the unanimous Table 17 cells (docs/validation.md, "Figma").
PASS_THRESHOLD = 0.354
#: Design mode (the Figma file's measures take part): the scale differs (text, position,
#: colour and type measures run near 1 on a faithful page), so the image-only cut does not
#: carry over. No public run has its Figma file, so this cut is NOT calibrated: it is the
#: midpoint of the 0..1 scale, to be calibrated when rated runs with design JSON exist.
PASS_THRESHOLD_DESIGN = 0.5
#: The label source prefix of the built-and-deployed label (never the quality pass).
DEPLOY_SOURCE = "figma-deploy"

PASS_DEFINITION = (
    "Figma-to-code pass (LH-Bench: expert quality ≥ 4 of 5): built, no ground-truth leak, "
    "and fidelity ≥ the mode's threshold, where fidelity is the mean over frames with "
    "ground-truth data of 0.25·text recall + 0.15·position + 0.15·colour + 0.15·typography "
    "+ 0.10·assets + 0.20·band edge F1 (skipped measures left out, weights renormalised; "
    f"blank or leaking frames 0). Threshold: {PASS_THRESHOLD:.3f} in image-only mode (no "
    "Figma file; calibrated on LH-Bench Table 17's unanimous cells, docs/validation.md), "
    f"{PASS_THRESHOLD_DESIGN:.3f} with the Figma file (not calibrated: no rated public run "
    "has one). Built & deployed alone is the separate figma-deploy label."
)
DEPLOY_DEFINITION = (
    "figma-deploy: the app built, its strict index and assets load, every frame's route "
    "renders and nothing leaks; says the app runs, not that it matches the design"
)


@dataclass(frozen=True)
class Fidelity:
    """A run's fidelity, the frames it is over, and the frames left out (with why)."""

    score: float | None
    frames_scored: int
    frames: int
    excluded: list[str] = field(default_factory=list)
    image_only: bool = True  # no frame had a design measure (no Figma file)

    @property
    def threshold(self) -> float:
        """The pass cut for this run's mode (image-only, or with the Figma file)."""
        return PASS_THRESHOLD if self.image_only else PASS_THRESHOLD_DESIGN

    def describe(self, threshold: float | None = None) -> str:
        """``fidelity 0.620 ≥ 0.500 (design) over 3 of 4 frames`` (or why there is none)."""
        if self.score is None:
            return f"fidelity not measurable: no ground-truth data for any of {self.frames} frames"
        cut = self.threshold if threshold is None else threshold
        op = "≥" if self.score >= cut else "<"
        mode = "image-only" if self.image_only else "design"
        out = f"fidelity {self.score:.3f} {op} {cut:.3f} ({mode}) over {self.frames_scored}"
        out += f" of {self.frames} frames"
        if self.excluded:
            out += f" (no ground-truth data: {', '.join(self.excluded[:5])})"
        return out


def frame_fidelity(frames: Sequence[FrameCheck]) -> Fidelity:
    """The mean frame aggregate over frames that have any measure; the others named."""
    got: list[float] = []
    excluded: list[str] = []
    image_only = all(
        "text_recall" in f.scores.skipped and "no Figma" in f.scores.skipped["text_recall"]
        for f in frames
    )
    for f in frames:
        agg = f.scores.aggregate()
        if agg is None:
            excluded.append(f.name)
        else:
            got.append(agg)
    return Fidelity(
        score=sum(got) / len(got) if got else None,
        frames_scored=len(got),
        frames=len(frames),
        excluded=excluded,
        image_only=image_only,
    )
