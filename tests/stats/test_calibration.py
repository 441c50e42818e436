"""Choosing the pass threshold that best reproduces reference labels."""

from __future__ import annotations

import pytest

from lhbench.stats.calibration import calibrate_threshold


def test_a_separable_set_gets_the_cut_in_the_middle_of_the_widest_gap() -> None:
    cal = calibrate_threshold([0.1, 0.2, 0.7, 0.9, None], [False, False, True, True, True])
    assert cal.threshold == pytest.approx(0.45)
    assert (cal.accuracy, cal.youden, cal.n, cal.excluded) == (1.0, 1.0, 4, 1)
    assert cal.gap == (0.2, 0.7)


def test_youden_beats_calling_everything_the_majority_class() -> None:
    # 6 passes, 3 fails: "all pass" has accuracy 0.67 but J = 0; a real cut has J > 0
    scores = [0.37, 0.52, 0.0, 0.0, 0.36, 0.0, 0.35, 0.68, 0.0]
    labels = [True, True, True, True, True, True, False, False, False]
    cal = calibrate_threshold(scores, labels)
    assert cal.youden > 0 and cal.threshold == pytest.approx(0.355)
    assert cal.accuracy == pytest.approx(5 / 9)


def test_one_class_cannot_calibrate() -> None:
    with pytest.raises(ValueError, match="needs both"):
        calibrate_threshold([0.1, 0.2], [True, True])
