"""Strings as integer codes: the sorted distinct values and each value's index among them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["sorted_codes"]


def sorted_codes(values: Sequence[str], dtype: Any) -> tuple[list[str], NDArray[Any]]:
    """What ``np.unique(values, return_inverse=True)`` gives for strings.

    Without sorting an object array (a Python comparison per step: 0.1 s for 40,000 run
    ids, 10 ms this way).
    """
    import numpy as np  # lazily: the store's imports stay free of numpy (`lhbench --help`)

    distinct = sorted(set(values))
    index = {v: i for i, v in enumerate(distinct)}
    return distinct, np.fromiter(map(index.__getitem__, values), dtype=dtype, count=len(values))
