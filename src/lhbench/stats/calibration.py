"""Choosing a pass threshold on a score so that it agrees best with binary reference labels.

Every cut between two adjacent distinct scores (and below the lowest, above the highest)
is a candidate; a run passes when its score is at least the cut. The chosen cut maximises
Youden's J (sensitivity + specificity − 1, which a cut that calls every run the majority
class cannot win, unlike raw accuracy); ties go to the higher accuracy, then to the cut
with the widest gap around it (the middle of the largest empty interval between
scores, so the threshold sits as far as possible from every calibration run), then to
the lower cut. Scores of None (not measurable) are left out and counted.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["ThresholdCalibration", "calibrate_threshold"]


@dataclass(frozen=True)
class ThresholdCalibration:
    """The chosen cut and how it does on the calibration runs."""

    threshold: float
    n: int
    excluded: int
    accuracy: float
    youden: float
    sensitivity: float
    specificity: float
    gap: tuple[float, float]  # the scores either side of the cut


def calibrate_threshold(
    scores: Sequence[float | None], labels: Sequence[bool]
) -> ThresholdCalibration:
    """The cut on ``scores`` (pass: score ≥ cut) that best reproduces ``labels``.

    Raises:
        ValueError: lengths differ, or no scored run carries both labels.
    """
    if len(scores) != len(labels):
        raise ValueError(f"{len(scores)} scores and {len(labels)} labels; need one of each per run")
    pairs = [(float(s), bool(y)) for s, y in zip(scores, labels, strict=True) if s is not None]
    excluded = len(scores) - len(pairs)
    pos = sum(1 for _s, y in pairs if y)
    neg = len(pairs) - pos
    if not pos or not neg:
        raise ValueError(
            f"{pos} passing and {neg} failing scored runs: a threshold needs both to calibrate"
        )
    values = sorted({s for s, _y in pairs})
    # (cut, score just below, score just above)
    cuts = [(values[0] - 1e-9, -math.inf, values[0])]
    cuts += [((a + b) / 2, a, b) for a, b in itertools.pairwise(values)]
    cuts.append((values[-1] + 1e-9, values[-1], math.inf))
    best: tuple[float, float, float, float] | None = None
    chosen: ThresholdCalibration | None = None
    for cut, lo, hi in cuts:
        tp = sum(1 for s, y in pairs if y and s >= cut)
        tn = sum(1 for s, y in pairs if not y and s < cut)
        sens, spec = tp / pos, tn / neg
        acc = (tp + tn) / len(pairs)
        j = sens + spec - 1
        width = (hi - lo) if math.isfinite(hi - lo) else 0.0
        key = (round(j, 12), round(acc, 12), width, -cut)
        if best is None or key > best:
            best = key
            chosen = ThresholdCalibration(
                threshold=cut,
                n=len(pairs),
                excluded=excluded,
                accuracy=acc,
                youden=j,
                sensitivity=sens,
                specificity=spec,
                gap=(lo, hi),
            )
    assert chosen is not None
    return chosen
