"""What every programmatic check grades with: a share as a 1–5 level, and who graded."""

from __future__ import annotations

from typing import Any

from lhbench.schema import JudgeIdentity, JudgeKind

__all__ = ["programmatic_identity", "share_level"]

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
